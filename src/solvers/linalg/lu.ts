/**
 * LU factorization with partial pivoting, P A = L U, for the condition numbers of the analysis:
 * sigma_min(A) and sigma_min(Q) come from Lanczos on (A^T A)^{-1} = A^{-1} A^{-T}, applied with
 * the triangular solves below, so A^T A is never formed (squaring would lose half the digits when
 * kappa(A^T A) reaches 1e16).
 *
 * The factorization is the kernels' luWork. The TypeScript kernels' is an envelope LU (row-major,
 * right-looking, by panels; zero multipliers skipped and each row's last nonzero column tracked), so
 * banded and sparse matrices (sherman5: ~6 nonzeros per row) cost a small fraction of the dense
 * 2n^3/3, and the same envelopes make the triangular solves cheap. The addon's factors dense
 * matrices by LAPACK's blocked algorithm (by panels, panelFactorizations.ts) into the same layout,
 * solved with two dtrsv calls, and sparse ones (under 5 % nonzeros) by the envelope LU, whose cost
 * follows the nonzero profile (nativeDenseKernels.ts). The factorization names the kernels its
 * solves run on (`solvesWith`).
 */
import { runSync, type Work } from '../cooperative.js';
import type { DenseMatrix } from '../matrix.js';
import type { LuFactors } from './denseKernels.js';
import { selectedKernels, type Kernels } from './kernels.js';

export type LuFactorization = LuFactors;

export interface LuOptions {
  /** Factor the given storage in place instead of a copy. */
  inPlace?: boolean;
}

/** Rows copied between two yields. */
const ROWS_PER_SLICE = 128;

export function* luWork(kernels: Kernels, a: DenseMatrix, options: LuOptions = {}): Work<LuFactorization> {
  const n = a.rows;
  if (a.cols !== n) throw new RangeError(`LU needs a square matrix, got ${a.rows} x ${a.cols}`);
  let lu: Float64Array;
  if (options.inPlace) lu = a.data;
  else {
    // Copied in row slices: an 88 MB copy at n = 3312 would otherwise hold the thread ~40 ms.
    lu = new Float64Array(n * n);
    for (let i = 0; i < n; i += ROWS_PER_SLICE) {
      lu.set(a.data.subarray(i * n, Math.min(n, i + ROWS_PER_SLICE) * n), i * n);
      yield undefined;
    }
  }
  return yield* kernels.dense.luWork(lu, n);
}

export function luFactor(a: DenseMatrix, options: LuOptions = {}, kernels: Kernels = selectedKernels()): LuFactorization {
  return runSync(luWork(kernels, a, options));
}

/** Solve A x = b (x may alias b). */
export function luSolve(
  f: LuFactorization,
  b: Float64Array,
  x: Float64Array = new Float64Array(f.n),
  work: Float64Array = new Float64Array(f.n),
): Float64Array {
  const { n, perm } = f;
  const y = work;
  for (let i = 0; i < n; i++) y[i] = b[perm[i]];
  f.solvesWith.luSolveInPlace(f, y);
  x.set(y.subarray(0, n));
  return x;
}

/** Solve A^T x = b (x may alias b): A^T = U^T L^T P, both triangular solves run along rows. */
export function luSolveTransposed(
  f: LuFactorization,
  b: Float64Array,
  x: Float64Array = new Float64Array(f.n),
  work: Float64Array = new Float64Array(f.n),
): Float64Array {
  const { n, perm } = f;
  const z = work;
  z.set(b.subarray(0, n));
  f.solvesWith.luSolveTransposedInPlace(f, z);
  for (let i = 0; i < n; i++) x[perm[i]] = z[i];
  return x;
}
