/**
 * LU factorization with partial pivoting, P A = L U, for the condition numbers of the analysis:
 * sigma_min(A) and sigma_min(Q) come from Lanczos on (A^T A)^{-1} = A^{-1} A^{-T}, applied with
 * the triangular solves below, so A^T A is never formed (squaring would lose half the digits when
 * kappa(A^T A) reaches 1e16).
 *
 * Row-major, right-looking, in panels of PANEL columns: within a panel only the panel's columns
 * are updated eagerly; each row's remainder then gets one fused rank-PANEL update (contiguous,
 * four pivot rows per pass), so the trailing matrix is swept once per panel instead of once per
 * column. Zero multipliers are skipped and each row's last nonzero column is tracked, so banded and
 * sparse matrices (sherman5: ~6 nonzeros per row) cost a small fraction of the dense 2n^3/3. The
 * same envelopes make the triangular solves cheap.
 *
 * With the addon's kernels, dense matrices are factored by LAPACK's blocked algorithm (by panels,
 * panelFactorizations.ts) into the same layout, and solved with two dtrsv calls; sparse ones (under
 * NATIVE_MIN_DENSITY nonzeros) keep the envelope code above, whose cost follows the nonzero profile:
 * banded matrices (olm1000: bandwidth 3) factor in O(n), where any dense factorization costs n^3 / 3.
 */
import { runSync, type Work } from '../cooperative.js';
import type { DenseMatrix } from '../matrix.js';
import type { BackendName, NativeBlas } from './backend.js';
import { selectedKernels, type Kernels } from './kernels.js';
import { panelLuWork } from './panelFactorizations.js';

export interface LuFactorization {
  readonly n: number;
  /** Row-major n x n: strictly lower part = L (unit diagonal implied), upper part = U. */
  readonly lu: Float64Array;
  /** Row i of P A is row perm[i] of A. */
  readonly perm: Int32Array;
  /** First column of row i of L that may be nonzero (i when the row of L is empty). */
  readonly lowerStart: Int32Array;
  /** One past the last column of row i of U that may be nonzero. */
  readonly upperEnd: Int32Array;
  /** First column whose pivot was exactly zero (the matrix is singular), or -1. */
  readonly zeroPivotColumn: number;
  /** Who factored it: 'native' factorizations are dense (envelopes 0 and n). */
  readonly factoredBy: BackendName;
  /** The BLAS its triangular solves run on (dtrsv): the factoring kernels' for a 'native' factorization, else null (the loops). */
  readonly solvesWith: NativeBlas | null;
}

export interface LuOptions {
  /** Factor the given storage in place instead of a copy. */
  inPlace?: boolean;
}

/** Columns eliminated per panel: the rows below are swept once per panel, not once per column. */
const PANEL = 8;
/** Trailing rows updated between two yields. */
const ROWS_PER_SLICE = 128;
/**
 * Fraction of nonzero entries from which the native dense factorization is used. Below it the
 * envelope code is at least as fast (sherman5, 0.2 % nonzero but bandwidth 1106: ~0.6 s either way).
 */
const NATIVE_MIN_DENSITY = 0.05;

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
  const blas = kernels.blas;
  if (blas) {
    let nonzeros = 0;
    for (let i = 0; i < n; i++) {
      const off = i * n;
      for (let j = 0; j < n; j++) if (lu[off + j] !== 0) nonzeros++;
      if ((i & 127) === 127) yield undefined;
    }
    if (nonzeros >= NATIVE_MIN_DENSITY * n * n) {
      const { perm, zeroPivotColumn } = yield* panelLuWork(blas, lu, n);
      const lowerStart = new Int32Array(n);
      const upperEnd = new Int32Array(n).fill(n);
      return { n, lu, perm, lowerStart, upperEnd, zeroPivotColumn, factoredBy: 'native', solvesWith: blas };
    }
  }
  const perm = new Int32Array(n);
  // rowEnd[i]: one past the last column of row i that may be nonzero.
  const rowEnd = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    perm[i] = i;
    let end = 0;
    for (let j = n - 1; j >= 0; j--) {
      if (lu[i * n + j] !== 0) {
        end = j + 1;
        break;
      }
    }
    rowEnd[i] = end;
    if ((i & 127) === 127) yield undefined;
  }
  let zeroPivotColumn = -1;
  const swap = new Float64Array(n);
  const coef = new Float64Array(PANEL);
  const src = new Int32Array(PANEL);

  /**
   * Row i, columns [from, ...): subtract sum_t L[i, t] U[t, :] over the pivot rows t in [t0, t1)
   * (delayed rank-(t1 - t0) update; zero multipliers are skipped, four rows fused per pass).
   */
  const delayedUpdate = (i: number, t0: number, t1: number, from: number): void => {
    const ri = i * n;
    let count = 0;
    let end = 0;
    for (let t = t0; t < t1; t++) {
      const l = lu[ri + t];
      if (l === 0) continue;
      coef[count] = l;
      src[count++] = t * n;
      if (rowEnd[t] > end) end = rowEnd[t];
    }
    if (count === 0 || end <= from) return;
    let g = 0;
    for (; g + 4 <= count; g += 4) {
      const c0 = coef[g],
        c1 = coef[g + 1],
        c2 = coef[g + 2],
        c3 = coef[g + 3];
      const s0 = src[g],
        s1 = src[g + 1],
        s2 = src[g + 2],
        s3 = src[g + 3];
      for (let j = from; j < end; j++) lu[ri + j] -= c0 * lu[s0 + j] + c1 * lu[s1 + j] + c2 * lu[s2 + j] + c3 * lu[s3 + j];
    }
    if (g + 2 <= count) {
      const c0 = coef[g],
        c1 = coef[g + 1];
      const s0 = src[g],
        s1 = src[g + 1];
      for (let j = from; j < end; j++) lu[ri + j] -= c0 * lu[s0 + j] + c1 * lu[s1 + j];
      g += 2;
    }
    if (g < count) {
      const c0 = coef[g];
      const s0 = src[g];
      for (let j = from; j < end; j++) lu[ri + j] -= c0 * lu[s0 + j];
    }
    if (rowEnd[i] < end) rowEnd[i] = end;
  };

  for (let k0 = 0; k0 < n; k0 += PANEL) {
    const k1 = Math.min(n, k0 + PANEL);
    // Panel: columns [k0, k1) of every row below are kept current; the rest of each row is updated
    // once, after the panel (or when the row becomes a pivot row).
    for (let c = k0; c < k1; c++) {
      let pivotRow = c;
      let pivotAbs = 0;
      for (let i = c; i < n; i++) {
        const v = Math.abs(lu[i * n + c]);
        if (v > pivotAbs) {
          pivotAbs = v;
          pivotRow = i;
        }
      }
      if (pivotRow !== c) {
        const oc = c * n;
        const op = pivotRow * n;
        swap.set(lu.subarray(oc, oc + n));
        lu.copyWithin(oc, op, op + n);
        lu.set(swap, op);
        const tp = perm[c];
        perm[c] = perm[pivotRow];
        perm[pivotRow] = tp;
        const te = rowEnd[c];
        rowEnd[c] = rowEnd[pivotRow];
        rowEnd[pivotRow] = te;
      }
      delayedUpdate(c, k0, c, k1);
      if (pivotAbs === 0) {
        // The column is zero from row c down: nothing to eliminate, the matrix is singular.
        if (zeroPivotColumn < 0) zeroPivotColumn = c;
        continue;
      }
      const rc = c * n;
      const pivot = lu[rc + c];
      const panelEnd = Math.min(k1, rowEnd[c]);
      for (let i = c + 1; i < n; i++) {
        const ri = i * n;
        const aic = lu[ri + c];
        if (aic === 0) continue;
        const l = aic / pivot;
        lu[ri + c] = l;
        for (let j = c + 1; j < panelEnd; j++) lu[ri + j] -= l * lu[rc + j];
        if (rowEnd[i] < panelEnd) rowEnd[i] = panelEnd;
      }
    }
    for (let i = k1; i < n; i++) {
      delayedUpdate(i, k0, k1, k1);
      if ((i - k1) % ROWS_PER_SLICE === ROWS_PER_SLICE - 1) yield undefined;
    }
    yield undefined;
  }

  const lowerStart = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    let j = 0;
    while (j < i && lu[ri + j] === 0) j++;
    lowerStart[i] = j;
    if ((i & 127) === 127) yield undefined;
  }
  for (let i = 0; i < n; i++) if (rowEnd[i] < i + 1) rowEnd[i] = i + 1;
  return { n, lu, perm, lowerStart, upperEnd: rowEnd, zeroPivotColumn, factoredBy: 'typescript', solvesWith: null };
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
  const { n, lu, perm, lowerStart, upperEnd } = f;
  const y = work;
  for (let i = 0; i < n; i++) y[i] = b[perm[i]];
  const blas = f.solvesWith;
  if (blas) {
    blas.dtrsv(false, false, true, n, lu, 0, n, y, 0);
    blas.dtrsv(true, false, false, n, lu, 0, n, y, 0);
    x.set(y.subarray(0, n));
    return x;
  }
  // L y = P b, L unit lower triangular.
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    let s = y[i];
    for (let j = lowerStart[i]; j < i; j++) s -= lu[ri + j] * y[j];
    y[i] = s;
  }
  // U x = y.
  for (let i = n - 1; i >= 0; i--) {
    const ri = i * n;
    let s = y[i];
    const end = upperEnd[i];
    for (let j = i + 1; j < end; j++) s -= lu[ri + j] * y[j];
    y[i] = s / lu[ri + i];
  }
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
  const { n, lu, perm, lowerStart, upperEnd } = f;
  const z = work;
  z.set(b.subarray(0, n));
  const blas = f.solvesWith;
  if (blas) {
    blas.dtrsv(true, true, false, n, lu, 0, n, z, 0);
    blas.dtrsv(false, true, true, n, lu, 0, n, z, 0);
    for (let i = 0; i < n; i++) x[perm[i]] = z[i];
    return x;
  }
  // U^T z = b: forward, column i of U^T is row i of U.
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    const zi = z[i] / lu[ri + i];
    z[i] = zi;
    if (zi === 0) continue;
    const end = upperEnd[i];
    for (let j = i + 1; j < end; j++) z[j] -= lu[ri + j] * zi;
  }
  // L^T w = z: backward, column i of L^T is row i of L.
  for (let i = n - 1; i >= 0; i--) {
    const ri = i * n;
    const wi = z[i];
    if (wi === 0) continue;
    for (let j = lowerStart[i]; j < i; j++) z[j] -= lu[ri + j] * wi;
  }
  for (let i = 0; i < n; i++) x[perm[i]] = z[i];
  return x;
}
