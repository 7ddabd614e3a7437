/**
 * Condition numbers that set the optimal rates (SPEC "Building blocks"):
 *  - kappa(A^T A) = (sigma_max(A) / sigma_min(A))^2, L = sigma_max^2, mu = sigma_min^2;
 *  - kappa(S) = lambda_max(S) / lambda_min(S), S = sum_i Q_i Q_i^T = Q Q^T.
 * Neither A^T A nor S is formed: lambda_max comes from Lanczos on x -> A^T (A x) and on the Gram
 * matrix G = Q^T Q (same nonzero spectrum as S, blocks shared with the principal angles);
 * lambda_min from Lanczos on the inverses (A^T A)^{-1} = A^{-1} A^{-T} and, with M = Q^T,
 * S^{-1} = (M^T M)^{-1} = M^{-1} M^{-T}, through LU factorizations of A and M. Working with A and Q
 * unsquared, sigma_min keeps its relative accuracy (~kappa(A) eps, ~kappa(Q) eps) when kappa(S) ~ 1e14,
 * where an eigensolver on the formed S knows lambda_min only to eps * lambda_max (a few % there).
 *
 * The Lanczos runs stop on the residual bound (lanczos.ts) or after MAX_*_LANCZOS_ITERATIONS steps;
 * every fixture converges in at most ~210 steps.
 */
import { runSync, type Work } from '../cooperative.js';
import type { DenseSystem } from '../distributed/distributedSystem.js';
import { SingularMatrixError } from '../errors.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { lanczosWork, type LanczosResult, type SymmetricOperator } from '../eigen/lanczos.js';
import { luSolve, luSolveTransposed, luWork, type LuFactorization } from '../linalg/lu.js';
import { singularValueRangeWork } from '../linalg/singularValues.js';
import type { DenseMatrix } from '../matrix.js';
import { gramIsIdentity, gramOperator, type GramBlocks } from './gramBlocks.js';

export interface MatrixConditioning {
  sigmaMax: number;
  sigmaMin: number;
  /** (sigma_max / sigma_min)^2. */
  kappaAtA: number;
  /** lambda_max(A^T A) = sigma_max^2. */
  L: number;
  /** lambda_min(A^T A) = sigma_min^2. */
  mu: number;
  lanczosIterations: { largest: number; smallest: number };
}

export interface SConditioning {
  lambdaMinS: number;
  lambdaMaxS: number;
  kappaS: number;
  lanczosIterations: { largest: number; smallest: number };
}

/** Longest Lanczos run on the inverse operators (each step costs four triangular solves). */
const MAX_INVERSE_LANCZOS_ITERATIONS = 600;
const MAX_FORWARD_LANCZOS_ITERATIONS = 600;

/**
 * x -> A^T (A x) in one pass over the rows: y = sum_k a_k (a_k . x). Sparse rows when A is sparse;
 * dense with the addon's kernels: two dgemv (t = A x, y = A^T t).
 */
export function* normalOperatorWork(kernels: Kernels, a: DenseMatrix): Work<SymmetricOperator> {
  const n = a.cols;
  const rows = a.rows;
  const data = a.data;
  let nnz = 0;
  for (let i = 0; i < rows; i++) {
    const off = i * n;
    for (let j = 0; j < n; j++) if (data[off + j] !== 0) nnz++;
    if ((i & 127) === 127) yield undefined;
  }
  if (nnz <= data.length / 4) {
    const rowPtr = new Int32Array(rows + 1);
    const colIdx = new Int32Array(nnz);
    const values = new Float64Array(nnz);
    for (let i = 0, p = 0; i < rows; i++) {
      for (let j = 0; j < n; j++) {
        const v = data[i * n + j];
        if (v !== 0) {
          colIdx[p] = j;
          values[p++] = v;
        }
      }
      rowPtr[i + 1] = p;
      if ((i & 127) === 127) yield undefined;
    }
    return {
      size: n,
      apply(x, y) {
        y.fill(0);
        for (let i = 0; i < rows; i++) {
          let s = 0;
          const end = rowPtr[i + 1];
          for (let p = rowPtr[i]; p < end; p++) s += values[p] * x[colIdx[p]];
          if (s === 0) continue;
          for (let p = rowPtr[i]; p < end; p++) y[colIdx[p]] += values[p] * s;
        }
      },
    };
  }
  const t = new Float64Array(rows);
  const dense = kernels.dense;
  return {
    size: n,
    apply(x, y) {
      dense.normalProduct(data, rows, n, x, y, t);
    },
  };
}

/** x -> (M^T M)^{-1} x = M^{-1} (M^{-T} x) through an LU factorization of M. */
export function inverseNormalOperatorOf(f: LuFactorization): SymmetricOperator {
  const t = new Float64Array(f.n);
  const work = new Float64Array(f.n);
  return {
    size: f.n,
    apply(x, y) {
      luSolveTransposed(f, x, t, work);
      luSolve(f, t, y, work);
    },
  };
}

function singularError(what: string, sigmaMax: number, sigmaMin: number, n: number): SingularMatrixError {
  const condition = sigmaMin > 0 && Number.isFinite(sigmaMin) ? sigmaMax / sigmaMin : Infinity;
  const shown = Number.isFinite(condition) ? condition.toExponential(2) : 'infinite';
  return new SingularMatrixError(
    `The ${what} is numerically singular: its estimated condition number sigma_max / sigma_min is ${shown}, ` +
      `beyond 1 / (n eps) = ${(1 / (n * Number.EPSILON)).toExponential(2)} (NumPy's matrix_rank tolerance), ` +
      'so the system has no unique solution to working precision.',
    { conditionNumber: Number.isFinite(condition) ? condition : null, sigmaMax, sigmaMin },
  );
}

function* inverseLargestWork(kernels: Kernels, f: LuFactorization): Work<LanczosResult> {
  return yield* lanczosWork(kernels, inverseNormalOperatorOf(f), { which: 'largest', maxIterations: MAX_INVERSE_LANCZOS_ITERATIONS });
}

/**
 * sigma_max, sigma_min and kappa(A^T A) of a square matrix. Throws SingularMatrixError on an
 * exactly zero pivot or when sigma_min <= n eps sigma_max.
 */
export function* matrixConditioningWork(kernels: Kernels, a: DenseMatrix): Work<MatrixConditioning> {
  if (a.rows > a.cols) return yield* tallMatrixConditioningWork(kernels, a);
  const n = a.rows;
  const forward = yield* lanczosWork(kernels, yield* normalOperatorWork(kernels, a), {
    which: 'largest',
    maxIterations: MAX_FORWARD_LANCZOS_ITERATIONS,
  });
  const L = forward.largest;
  const sigmaMax = Math.sqrt(L);
  yield { phase: 'conditioning', fraction: 0.1 };
  const f = yield* luWork(kernels, a);
  if (f.zeroPivotColumn >= 0) throw singularError('matrix', sigmaMax, 0, n);
  yield { phase: 'conditioning', fraction: 0.6 };
  const inverse = yield* inverseLargestWork(kernels, f);
  const mu = 1 / inverse.largest;
  const sigmaMin = Math.sqrt(mu);
  if (!(sigmaMin > n * Number.EPSILON * sigmaMax)) throw singularError('matrix', sigmaMax, sigmaMin, n);
  return {
    sigmaMax,
    sigmaMin,
    kappaAtA: L * inverse.largest,
    L,
    mu,
    lanczosIterations: { largest: forward.iterations, smallest: inverse.iterations },
  };
}

/**
 * A tall A (N > n): its singular values by Householder QR and bidiagonalization
 * (../linalg/singularValues.ts, backward stable: each to a few eps sigma_max), sigma_min the n-th.
 * Full column rank is required as sigma_min > N eps sigma_max.
 */
function* tallMatrixConditioningWork(kernels: Kernels, a: DenseMatrix): Work<MatrixConditioning> {
  const { largest: sigmaMax, smallest: sigmaMin } = yield* singularValueRangeWork(kernels, a.data, a.rows, a.cols);
  if (!(sigmaMin > a.rows * Number.EPSILON * sigmaMax)) throw singularError('matrix', sigmaMax, sigmaMin, a.rows);
  const L = sigmaMax * sigmaMax;
  const mu = sigmaMin * sigmaMin;
  return { sigmaMax, sigmaMin, kappaAtA: L / mu, L, mu, lanczosIterations: { largest: 0, smallest: 0 } };
}

export function computeMatrixConditioning(a: DenseMatrix, kernels: Kernels = selectedKernels()): MatrixConditioning {
  return runSync(matrixConditioningWork(kernels, a));
}

/** Q^T (N x n, row-major): row offsets[i] + k is the k-th basis vector of R(A_i), on C_i (zero for a dependent row). */
export function* assembleBasisRowsWork(system: DenseSystem, offsets: readonly number[]): Work<DenseMatrix> {
  const n = system.n;
  const rows = system.A.rows;
  const data = new Float64Array(rows * n);
  yield undefined;
  for (const machine of system.machines) {
    const { p, c, q, cols } = machine;
    const base = offsets[machine.index];
    for (let k = 0; k < p; k++) {
      const row = (base + k) * n;
      const src = k * c;
      for (let t = 0; t < c; t++) data[row + cols[t]] = q[src + t];
      if ((k & 127) === 127) yield undefined;
    }
  }
  return { rows, cols: n, data };
}

/**
 * lambda_max(S) by Lanczos on G = Q^T Q; lambda_min(S) = sigma_min(Q)^2 by Lanczos on
 * (Q Q^T)^{-1} through the LU of Q^T. All off-diagonal blocks zero: S = I (Proposition 1).
 */
export function* sConditioningWork(kernels: Kernels, system: DenseSystem, gram: GramBlocks): Work<SConditioning> {
  if (gramIsIdentity(gram)) return S_IDENTITY;
  if (system.A.rows > system.n) return yield* tallSConditioningWork(kernels, system, gram.offsets);
  const upper = yield* sLargestWork(kernels, gram);
  yield { phase: 'conditioning', fraction: 0.1 };
  const lower = yield* sSmallestWork(kernels, system, gram.offsets);
  if (lower === null) throw singularBasesError(upper.largest, system.n);
  return sConditioningFrom(upper, lower);
}

/**
 * S = Q Q^T on a tall system (n x n still; Q is n x N, with a zero column per dependent row): its
 * eigenvalues are the squared singular values of Q^T, the n-th the smallest, by the same
 * bidiagonalization as kappa(A^T A) (absolute accuracy a few eps lambda_max(S), lambda_max(S) <= m).
 */
function* tallSConditioningWork(kernels: Kernels, system: DenseSystem, offsets: readonly number[]): Work<SConditioning> {
  const basisRows = yield* assembleBasisRowsWork(system, offsets);
  const { largest, smallest } = yield* singularValueRangeWork(kernels, basisRows.data, basisRows.rows, basisRows.cols);
  const lambdaMaxS = largest * largest;
  const lambdaMinS = smallest * smallest;
  if (!(smallest > system.A.rows * Number.EPSILON * largest)) throw singularBasesError(lambdaMaxS, system.A.rows);
  return { lambdaMinS, lambdaMaxS, kappaS: lambdaMaxS / lambdaMinS, lanczosIterations: { largest: 0, smallest: 0 } };
}

/** kappa(S) = 1: every off-diagonal Gram block is zero (Proposition 1). */
export const S_IDENTITY: SConditioning = { lambdaMinS: 1, lambdaMaxS: 1, kappaS: 1, lanczosIterations: { largest: 0, smallest: 0 } };

/** lambda_max(S) = lambda_max(G): Lanczos on the Gram blocks. */
export function* sLargestWork(kernels: Kernels, gram: GramBlocks): Work<LanczosResult> {
  return yield* lanczosWork(kernels, gramOperator(kernels, gram), { which: 'largest', maxIterations: MAX_FORWARD_LANCZOS_ITERATIONS });
}

/**
 * 1 / lambda_min(S) = lambda_max((Q Q^T)^{-1}) through the LU of Q^T (rows placed at `offsets`);
 * null when the LU meets an exactly zero pivot (the caller throws singularBasesError, which names
 * lambda_max(S): the split analysis computes the two ends on different workers).
 */
export function* sSmallestWork(kernels: Kernels, system: DenseSystem, offsets: readonly number[]): Work<LanczosResult | null> {
  const basisRows = yield* assembleBasisRowsWork(system, offsets);
  const f = yield* luWork(kernels, basisRows, { inPlace: true });
  if (f.zeroPivotColumn >= 0) return null;
  yield { phase: 'conditioning', fraction: 0.6 };
  // Q^T = M: eigenvalues of S = Q Q^T = M^T M, and (M^T M)^{-1} = M^{-1} M^{-T}.
  return yield* inverseLargestWork(kernels, f);
}

export function singularBasesError(lambdaMaxS: number, n: number): SingularMatrixError {
  return singularError("matrix of all machines' bases Q", Math.sqrt(lambdaMaxS), 0, n);
}

/** What kappa(S) takes of a Lanczos run (the split analysis ships only these between workers). */
export type LanczosEnd = Pick<LanczosResult, 'largest' | 'iterations'>;

/** kappa(S) and its extreme eigenvalues from the two Lanczos runs. */
export function sConditioningFrom(upper: LanczosEnd, inverse: LanczosEnd): SConditioning {
  const lambdaMaxS = upper.largest;
  return {
    lambdaMinS: 1 / inverse.largest,
    lambdaMaxS,
    kappaS: lambdaMaxS * inverse.largest,
    lanczosIterations: { largest: upper.iterations, smallest: inverse.iterations },
  };
}

export function computeSConditioning(system: DenseSystem, gram: GramBlocks, kernels: Kernels = selectedKernels()): SConditioning {
  return runSync(sConditioningWork(kernels, system, gram));
}
