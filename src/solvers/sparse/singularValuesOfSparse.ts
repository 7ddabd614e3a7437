/**
 * Extreme singular values of a square sparse A and the quantities of docs/SPEC.md "Building blocks"
 * that come from them, without forming anything dense (n may be 10^6):
 *   kappa(A^T A) = (sigma_max / sigma_min)^2, L = lambda_max(A^T A) = sigma_max^2, mu = sigma_min^2.
 * - L: thick-restart Lanczos (../eigen/lanczos.ts) on A^T A applied as A^T (A v), one pass over
 *   the rows per product (y = sum_k a_k (a_k . v)); A^T A is never formed.
 * - mu: Lanczos on (A^T A)^{-1} = A^{-1} A^{-T} applied through the sparse LU of A (x = A^{-1} (A^{-T} v),
 *   shift-invert at 0), so sigma_min keeps its relative accuracy (about kappa(A) eps, from the
 *   solves) where the smallest Ritz value of A^T A itself would be known only to eps L.
 * Each estimate carries its method and the Ritz-residual bound of ../eigen/lanczos.ts; for a
 * singular value sigma = sqrt(lambda) the eigenvalue's relative bound b gives
 * |sigma_hat - sigma| = |lambda_hat - lambda| / (sigma_hat + sigma) <= b sigma, so b is kept.
 * The bounds cover the Krylov iteration; the rounding of the solves (about kappa(A) eps relative on
 * mu, as for ARPACK's shift-invert through SciPy's splu) is not included.
 */
import { runSync, type Work } from '../cooperative.js';
import { selectedKernels } from '../linalg/kernels.js';
import { SingularMatrixError } from '../errors.js';
import type { CsrMatrix } from './csr.js';
import { sparseLuWork, typescriptLuSolves, type LuSolves, type SparseLuFactorization, type SparseLuOptions } from './sparseLu.js';
import {
  KrylovWorkspace,
  largestEigenvalueWork,
  smallestEigenvalueByInverseWork,
  type LargestEigenvalueOptions,
  type SpectralMethod,
  type SymmetricOperator,
} from '../eigen/lanczos.js';

/** A derived estimate: its value, how it was obtained and a relative error bound. */
export interface SpectralEstimate {
  value: number;
  method: SpectralMethod;
  /** |value - exact| <= relativeErrorBound * |exact| (Krylov error; see the module comment). */
  relativeErrorBound: number;
  /** Operator applications (of both runs for a ratio). */
  iterations: number;
  converged: boolean;
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

/** v -> A^T (A v) in one pass over the rows of A (square or not: size = cols). */
export function normalOperatorOfSparse(a: CsrMatrix): SymmetricOperator {
  const { rows, rowPtr, colIdx, values } = a;
  return {
    size: a.cols,
    apply(x, y) {
      y.fill(0, 0, a.cols);
      for (let i = 0; i < rows; i++) {
        const end = rowPtr[i + 1];
        let s = 0;
        for (let p = rowPtr[i]; p < end; p++) s += values[p] * x[colIdx[p]];
        if (s === 0) continue;
        for (let p = rowPtr[i]; p < end; p++) y[colIdx[p]] += values[p] * s;
      }
    },
  };
}

/** v -> (A^T A)^{-1} v = A^{-1} (A^{-T} v) through a sparse LU of A (its solves: the TypeScript ones unless given). */
export function inverseNormalOperatorOfSparse(f: SparseLuFactorization, solves: LuSolves = typescriptLuSolves(f)): SymmetricOperator {
  const t = new Float64Array(f.n);
  return {
    size: f.n,
    apply(x, y) {
      solves.solveTransposed(x, t);
      solves.solve(t, y);
    },
  };
}

/** The estimate of sqrt(lambda) from one of lambda (same relative bound, see the module comment). */
export function squareRootEstimate(e: SpectralEstimate): SpectralEstimate {
  return { ...e, value: Math.sqrt(e.value) };
}

/**
 * numerator / denominator, with relative bounds b1, b2: the quotient lies within a factor
 * [(1 - b1) / (1 + b2), (1 + b1) / (1 - b2)] of the exact one, so its relative bound is
 * (b1 + b2) / (1 - b2) (infinite when b2 >= 1).
 */
export function ratioEstimate(numerator: SpectralEstimate, denominator: SpectralEstimate): SpectralEstimate {
  const b1 = numerator.relativeErrorBound;
  const b2 = denominator.relativeErrorBound;
  return {
    value: numerator.value / denominator.value,
    method: 'ratio',
    relativeErrorBound: b2 < 1 ? (b1 + b2) / (1 - b2) : Infinity,
    iterations: numerator.iterations + denominator.iterations,
    converged: numerator.converged && denominator.converged,
  };
}

export function fromEigenvalue(e: {
  value: number;
  method: SpectralMethod;
  relativeErrorBound: number;
  iterations: number;
  converged: boolean;
}): SpectralEstimate {
  return { value: e.value, method: e.method, relativeErrorBound: e.relativeErrorBound, iterations: e.iterations, converged: e.converged };
}

function singularError(sigmaMax: number, sigmaMin: number, n: number): SingularMatrixError {
  const condition = sigmaMin > 0 && Number.isFinite(sigmaMin) ? sigmaMax / sigmaMin : Infinity;
  const shown = Number.isFinite(condition) ? condition.toExponential(2) : 'infinite';
  return new SingularMatrixError(
    `The matrix is numerically singular: its estimated condition number sigma_max / sigma_min is ${shown}, ` +
      `beyond 1 / (n eps) = ${(1 / (n * Number.EPSILON)).toExponential(2)} (NumPy's matrix_rank tolerance), ` +
      'so the system has no unique solution to working precision.',
    { conditionNumber: Number.isFinite(condition) ? condition : null, sigmaMax, sigmaMin },
  );
}

/**
 * sigma_max, sigma_min, L, mu and kappa(A^T A) of a square sparse A. Throws SingularMatrixError when
 * the LU finds A singular or when sigma_min <= n eps sigma_max (as the dense path does).
 */
export function* sparseMatrixConditioningWork(a: CsrMatrix, options: SparseConditioningOptions = {}): Work<SparseMatrixConditioning> {
  const n = a.rows;
  const workspace = options.workspace ?? new KrylovWorkspace();
  const top = yield* largestEigenvalueWork(options.normalOperator ?? normalOperatorOfSparse(a), options.lanczos, workspace);
  const L = fromEigenvalue(top);
  yield { phase: 'conditioning', fraction: 0.3 };
  const f = options.factorization ?? (yield* sparseLuWork(a, options.lu));
  yield { phase: 'conditioning', fraction: 0.5 };
  const solves = options.factorization !== undefined ? options.luSolves : undefined;
  const bottom = yield* smallestEigenvalueByInverseWork(inverseNormalOperatorOfSparse(f, solves), options.lanczos, workspace);
  return conditioningOfEnds(n, L, fromEigenvalue(bottom));
}

/**
 * sigma_max, sigma_min and kappa(A^T A) of an n x n A from L and mu (computed together or apart). Throws
 * SingularMatrixError when sigma_min <= n eps sigma_max (as the dense path does).
 */
export function conditioningOfEnds(n: number, L: SpectralEstimate, mu: SpectralEstimate): SparseMatrixConditioning {
  const sigmaMax = squareRootEstimate(L);
  const sigmaMin = squareRootEstimate(mu);
  if (!(sigmaMin.value > n * Number.EPSILON * sigmaMax.value)) throw singularError(sigmaMax.value, sigmaMin.value, n);
  return { sigmaMax, sigmaMin, L, mu, kappaAtA: ratioEstimate(L, mu) };
}

export function sparseMatrixConditioning(a: CsrMatrix, options: SparseConditioningOptions = {}): SparseMatrixConditioning {
  return runSync(
    sparseMatrixConditioningWork(a, {
      ...options,
      lanczos: { arpack: selectedKernels().arpack, dense: selectedKernels().dense, ...options.lanczos },
    }),
  );
}
