/**
 * The condition number of A^T A that sets the optimal rates with kappa(S) (./kappaS.ts; SPEC "Building
 * blocks"): kappa(A^T A) = (sigma_max(A) / sigma_min(A))^2, L = sigma_max^2, mu = sigma_min^2, for both
 * storages (dense: matrixConditioningWork; CSR, n up to 10^6: sparseMatrixConditioningWork).
 * A^T A is not formed: lambda_max comes from Lanczos on x -> A^T (A x), lambda_min from Lanczos on the
 * inverse (A^T A)^{-1} = A^{-1} A^{-T} through the LU of A (shift-invert at 0). Working with A unsquared,
 * sigma_min keeps its relative accuracy (~kappa(A) eps, from the solves), where an eigensolver on the
 * formed A^T A knows lambda_min only to eps * lambda_max.
 *
 * A square A with the machines' QR factors at hand (A_i^T = Q_i R_i, the analysis) needs no LU of its own:
 * with its rows grouped by machine, A = D M, D = diag(R_1^T, ..., R_m^T), M = Q^T (row offsets[i] + k
 * the k-th basis vector of R(A_i)), so (A^T A)^{-1} = M^{-1} D^{-1} D^{-T} M^{-T} through the LU of M,
 * which kappa(S) factors anyway (./kappaS.ts), and the machines' triangular R_i (sum p_i^2 per solve
 * against n^2). Normwise backward stable as the LU of A: (D + dD)(M + dM) with |dD| <= eps |D| and
 * |D| = max_i |A_i| <= |A|, |dM| <= eps |M| and |M| = sqrt(lambda_max(S)) <= sqrt(m).
 *
 * The dense Lanczos runs stop on the residual bound (lanczos.ts) or after MAX_*_LANCZOS_ITERATIONS steps;
 * every fixture converges in at most ~210 steps. The CSR ones carry their method and the Ritz-residual
 * bound of ../eigen/lanczos.ts (a singular value keeps its eigenvalue's relative bound); the bounds cover
 * the Krylov iteration, not the rounding of the solves (about kappa(A) eps relative on mu, as for ARPACK's
 * shift-invert through SciPy's splu).
 */
import { runSync, type Work } from '../cooperative.js';
import { SingularMatrixError } from '../errors.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import {
  eigensolverOptionsOf,
  KrylovWorkspace,
  lanczosWork,
  largestEigenvalueWork,
  smallestEigenvalueByInverseWork,
  type LanczosResult,
  type LargestEigenvalueOptions,
  type SymmetricOperator,
} from '../eigen/lanczos.js';
import { conditionNumberEstimate, spectralEstimateOf, squareRootEstimate, type SpectralEstimate } from '../eigen/eigenvalueEstimate.js';
import { luSolve, luSolveTransposed, luWork, type LuFactorization } from '../linalg/lu.js';
import { solveRInPlace, solveRTransposed } from '../linalg/householderQr.js';
import type { DenseMachineData } from '../distributed/distributedSystem.js';
import { singularValueRangeWork } from '../linalg/singularValues.js';
import type { DenseMatrix } from '../matrix.js';
import type { CsrMatrix } from '../sparse/csr.js';
import { inverseNormalOperatorOfSparse, normalOperatorOfSparse } from '../sparse/normalOperators.js';
import { sparseLuWork, type LuSolves, type SparseLuFactorization, type SparseLuOptions } from '../sparse/sparseLu.js';

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

/** Longest Lanczos run on the inverse operators (each step costs four triangular solves). */
const MAX_INVERSE_LANCZOS_ITERATIONS = 600;
/** Longest Lanczos run on a forward operator (A^T A here, the Gram matrix in ./kappaS.ts). */
export const MAX_FORWARD_LANCZOS_ITERATIONS = 600;

/**
 * x -> A^T (A x) in one pass over the rows: y = sum_k a_k (a_k . x). Sparse rows (normalOperatorOfSparse) when A is sparse;
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
    return normalOperatorOfSparse({ rows, cols: n, rowPtr, colIdx, values });
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

/** A square A as D M (module comment): the LU of M = Q^T and each machine's R_i with its row offset in M. */
export interface FactoredMatrix {
  readonly basisLu: LuFactorization;
  readonly machines: readonly DenseMachineData[];
  readonly offsets: readonly number[];
}

/** x -> (A^T A)^{-1} x = M^{-1} D^{-1} D^{-T} M^{-T} x for A = D M (module comment). */
function inverseNormalOfFactoredOperator({ basisLu, machines, offsets }: FactoredMatrix): SymmetricOperator {
  const n = basisLu.n;
  const t = new Float64Array(n);
  const work = new Float64Array(n);
  const block = new Float64Array(Math.max(1, ...machines.map((machine) => machine.p)));
  return {
    size: n,
    apply(x, y) {
      luSolveTransposed(basisLu, x, t, work);
      for (const { r, p, index } of machines) {
        const offset = offsets[index];
        // D^{-T}: R_i u_i = t_i; then D^{-1}: R_i^T v_i = u_i.
        solveRInPlace(r, p, t, offset);
        solveRTransposed(r, p, t, block, offset);
        t.set(block.subarray(0, p), offset);
      }
      luSolve(basisLu, t, y, work);
    },
  };
}

/** SingularMatrixError for a matrix (`what`) whose sigma_min is zero or below n eps sigma_max. */
export function singularError(what: string, sigmaMax: number, sigmaMin: number, n: number): SingularMatrixError {
  const condition = sigmaMin > 0 && Number.isFinite(sigmaMin) ? sigmaMax / sigmaMin : Infinity;
  const shown = Number.isFinite(condition) ? condition.toExponential(2) : 'infinite';
  return new SingularMatrixError(
    `The ${what} is numerically singular: its estimated condition number sigma_max / sigma_min is ${shown}, ` +
      `beyond 1 / (n eps) = ${(1 / (n * Number.EPSILON)).toExponential(2)} (NumPy's matrix_rank tolerance), ` +
      'so the system has no unique solution to working precision.',
    { conditionNumber: Number.isFinite(condition) ? condition : null, sigmaMax, sigmaMin },
  );
}

/** lambda_max((M^T M)^{-1}) by Lanczos through the LU of M. */
export function* inverseLargestWork(kernels: Kernels, f: LuFactorization): Work<LanczosResult> {
  return yield* largestOfInverseWork(kernels, inverseNormalOperatorOf(f));
}

/** lambda_max of an inverse operator (its products solves), by the dense Lanczos run of at most MAX_INVERSE_LANCZOS_ITERATIONS steps. */
export function* largestOfInverseWork(
  kernels: Kernels,
  inverse: SymmetricOperator,
  startVector?: Float64Array,
  valueTolerance?: number,
  ritzVector?: Float64Array,
): Work<LanczosResult> {
  return yield* lanczosWork(kernels, inverse, {
    which: 'largest',
    maxIterations: MAX_INVERSE_LANCZOS_ITERATIONS,
    startVector,
    valueTolerance,
    ritzVector,
  });
}

/**
 * sigma_max, sigma_min and kappa(A^T A) of a square matrix, through its own LU or, given `factored`,
 * through the LU of M in A = D M (module comment). Throws SingularMatrixError on an exactly zero
 * pivot or when sigma_min <= n eps sigma_max.
 */
export function* matrixConditioningWork(kernels: Kernels, a: DenseMatrix, factored?: FactoredMatrix): Work<MatrixConditioning> {
  if (a.rows > a.cols) return yield* tallMatrixConditioningWork(kernels, a);
  const n = a.rows;
  const forward = yield* lanczosWork(kernels, yield* normalOperatorWork(kernels, a), {
    which: 'largest',
    maxIterations: MAX_FORWARD_LANCZOS_ITERATIONS,
  });
  const L = forward.largest;
  const sigmaMax = Math.sqrt(L);
  yield { phase: 'conditioning', fraction: 0.1 };
  const f = factored?.basisLu ?? (yield* luWork(kernels, a));
  if (f.zeroPivotColumn >= 0) throw singularError('matrix', sigmaMax, 0, n);
  yield { phase: 'conditioning', fraction: 0.6 };
  const inverse = yield* largestOfInverseWork(kernels, factored ? inverseNormalOfFactoredOperator(factored) : inverseNormalOperatorOf(f));
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

export interface SparseMatrixConditioning {
  sigmaMax: SpectralEstimate;
  sigmaMin: SpectralEstimate;
  /** lambda_max(A^T A) = sigma_max^2. */
  L: SpectralEstimate;
  /** lambda_min(A^T A) = sigma_min^2. */
  mu: SpectralEstimate;
  /** (sigma_max / sigma_min)^2 = L / mu. */
  kappaAtA: SpectralEstimate;
}

export interface SparseConditioningOptions {
  lanczos?: LargestEigenvalueOptions;
  lu?: SparseLuOptions;
  /** A factorization of A to reuse (the S operator's inverse needs the same one). */
  factorization?: SparseLuFactorization;
  /** Solves with `factorization` (e.g. the addon's, the same operations); default the TypeScript ones. */
  luSolves?: LuSolves;
  /** A^T A as the caller applies it (e.g. on a compiled kernel with the same sums); default normalOperatorOfSparse(A). */
  normalOperator?: SymmetricOperator;
  workspace?: KrylovWorkspace;
}

/**
 * sigma_max, sigma_min, L, mu and kappa(A^T A) of a square CSR A (thick-restart Lanczos on A^T A and on
 * its inverse through one sparse LU). Throws SingularMatrixError when the LU finds A singular or when
 * sigma_min <= n eps sigma_max (as the dense path does).
 */
export function* sparseMatrixConditioningWork(a: CsrMatrix, options: SparseConditioningOptions = {}): Work<SparseMatrixConditioning> {
  const n = a.rows;
  const workspace = options.workspace ?? new KrylovWorkspace();
  const top = yield* largestEigenvalueWork(options.normalOperator ?? normalOperatorOfSparse(a), options.lanczos, workspace);
  const L = spectralEstimateOf(top);
  yield { phase: 'conditioning', fraction: 0.3 };
  const f = options.factorization ?? (yield* sparseLuWork(a, options.lu));
  yield { phase: 'conditioning', fraction: 0.5 };
  const solves = options.factorization !== undefined ? options.luSolves : undefined;
  const bottom = yield* smallestEigenvalueByInverseWork(inverseNormalOperatorOfSparse(f, solves), options.lanczos, workspace);
  return conditioningOfEnds(n, L, spectralEstimateOf(bottom));
}

/**
 * sigma_max, sigma_min and kappa(A^T A) of an n x n A from L and mu (computed together or apart). Throws
 * SingularMatrixError when sigma_min <= n eps sigma_max (as the dense path does).
 */
export function conditioningOfEnds(n: number, L: SpectralEstimate, mu: SpectralEstimate): SparseMatrixConditioning {
  const sigmaMax = squareRootEstimate(L);
  const sigmaMin = squareRootEstimate(mu);
  if (!(sigmaMin.value > n * Number.EPSILON * sigmaMax.value)) throw singularError('matrix', sigmaMax.value, sigmaMin.value, n);
  return { sigmaMax, sigmaMin, L, mu, kappaAtA: conditionNumberEstimate(L, mu) };
}

export function sparseMatrixConditioning(a: CsrMatrix, options: SparseConditioningOptions = {}): SparseMatrixConditioning {
  return runSync(
    sparseMatrixConditioningWork(a, {
      ...options,
      lanczos: { ...eigensolverOptionsOf(selectedKernels()), ...options.lanczos },
    }),
  );
}
