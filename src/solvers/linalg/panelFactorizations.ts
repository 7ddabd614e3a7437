/**
 * LAPACK's blocked factorizations (native backend), driven panel by panel from here instead of one
 * dgetrf / dgeqrf / dgebrd call: every native call is sized to at most NATIVE_MADDS_PER_CALL
 * multiply-adds (one panel, or one slice of a trailing update), and the generators yield between
 * calls. A single dgetrf at n = 3312 holds the thread ~0.6 s, a dgeqrf ~1.5 s, a dgebrd at 1656 ~1.6 s;
 * sliced, the event loop gets control every few milliseconds and the total time is the same.
 *
 * The algorithms are LAPACK's own right-looking ones (dgetrf, dgeqrt + dorgqr, dgebrd), with the
 * same panel kernels (dgetrf on the panel, the recursive dgeqrt3, dlabrd) and BLAS-3 trailing updates.
 * `maddsPerCall` (default NATIVE_MADDS_PER_CALL) sizes the slices; tests shrink it to exercise them.
 */
import type { Work } from '../cooperative.js';
import { NATIVE_MADDS_PER_CALL, type NativeBlas } from './backend.js';
import type { HouseholderReflectors } from './denseKernels.js';

/** The layout of panelQrWork's reflectors (HouseholderReflectors.layout). */
const PANEL_REFLECTORS = Symbol('LAPACK panel reflectors');
/** Householder reflectors per block (LAPACK's dgeqrf block size; dgeqrt3 panels of 32 measured fastest). */
const QR_PANEL = 32;
/** Columns eliminated per LU panel. */
const LU_PANEL = 64;
/** dgebrd's crossover: below this order the rest is reduced by one (unblocked) dgebrd call. */
const BIDIAGONAL_CROSSOVER = 128;
const BIDIAGONAL_PANEL_MAX = 32;
/**
 * dlabrd is memory-bound (two matrix-vector products over the trailing matrix per column, about ten
 * times slower per multiply-add than dgemm), so its panel gets a tenth of the budget.
 */
const BIDIAGONAL_PANEL_SHARE = 0.1;
/** dlarfb copies and multiplies by T besides its two dgemm: half the budget. */
const REFLECTOR_BLOCK_SHARE = 0.5;

export interface PanelQr {
  /** R (p x p, row-major, upper triangular). */
  r: Float64Array;
  /** Q (p x c row-major, i.e. c x p column-major) when requested. */
  q: Float64Array | null;
}

/**
 * Thin QR of the c x p column-major matrix M stored in `w` (leading dimension c), i.e. of the
 * transpose of the row-major p x c array (p <= c): M = Q R. `w` is overwritten by the reflectors.
 * This is the layout of householderQr.ts (rows of A_i in, orthonormal rows of Q_i^T out).
 */
export function* panelQrWork(
  blas: NativeBlas,
  w: Float64Array,
  p: number,
  c: number,
  wantQ: boolean,
  maddsPerCall = NATIVE_MADDS_PER_CALL,
): Work<PanelQr> {
  const { r, reflectors } = yield* panelHouseholderFactorWork(blas, w, p, c, maddsPerCall);
  return { r, q: wantQ ? yield* panelFormQWork(blas, reflectors, maddsPerCall) : null };
}

/** panelQrWork's first half: R, and the reflectors (`w` and the panels' T) panelFormQWork forms Q from. */
export function* panelHouseholderFactorWork(
  blas: NativeBlas,
  w: Float64Array,
  p: number,
  c: number,
  maddsPerCall = NATIVE_MADDS_PER_CALL,
): Work<{ r: Float64Array; reflectors: HouseholderReflectors }> {
  if (p > c) throw new RangeError(`panel QR needs p <= c, got p=${p}, c=${c}`);
  const budget = REFLECTOR_BLOCK_SHARE * maddsPerCall;
  const panels = Math.ceil(p / QR_PANEL);
  const tBlock = QR_PANEL * QR_PANEL;
  const t = new Float64Array(panels * tBlock);
  for (let b = 0; b < panels; b++) {
    const k0 = b * QR_PANEL;
    const kb = Math.min(QR_PANEL, p - k0);
    const rows = c - k0;
    const v = k0 * c + k0;
    blas.dgeqrt3(rows, kb, w, v, c, t, b * tBlock, QR_PANEL);
    yield undefined;
    // H_b^T on the trailing columns: ~2 rows kb multiply-adds per column.
    const chunk = Math.max(8, Math.floor(budget / (2 * rows * kb)));
    for (let j0 = k0 + kb; j0 < p; j0 += chunk) {
      blas.dlarfb(true, rows, Math.min(chunk, p - j0), kb, w, v, c, t, b * tBlock, QR_PANEL, w, j0 * c + k0, c);
      yield undefined;
    }
  }
  const r = new Float64Array(p * p);
  for (let j = 0; j < p; j++) {
    for (let k = 0; k <= j; k++) r[k * p + j] = w[j * c + k];
    if ((j & 255) === 255) yield undefined;
  }
  return { r, reflectors: { layout: PANEL_REFLECTORS, p, c, w, t, block: QR_PANEL } };
}

/**
 * Q of panelQrWork's reflectors (`w` and the panels' T), bit for bit what panelQrWork returns with wantQ:
 * Q = H_0 ... H_{panels-1} [I_p; 0], by column slices. Block b acts on rows >= k0(b) only, so a slice of columns
 * [j0, j1) needs the blocks starting below j1, applied last to first.
 */
export function* panelFormQWork(
  blas: NativeBlas,
  reflectors: HouseholderReflectors,
  maddsPerCall = NATIVE_MADDS_PER_CALL,
): Work<Float64Array> {
  if (reflectors.layout !== PANEL_REFLECTORS)
    throw new RangeError(`panelFormQWork reads its own reflectors (LAPACK's panels), got ${String(reflectors.layout.description)}`);
  const { p, c, w, t } = reflectors;
  const budget = REFLECTOR_BLOCK_SHARE * maddsPerCall;
  const tBlock = QR_PANEL * QR_PANEL;
  const q = new Float64Array(p * c);
  const chunk = Math.max(8, Math.floor(budget / (2 * c * QR_PANEL)));
  for (let j0 = 0; j0 < p; j0 += chunk) {
    const j1 = Math.min(p, j0 + chunk);
    for (let j = j0; j < j1; j++) q[j * c + j] = 1;
    for (let b = Math.floor((j1 - 1) / QR_PANEL); b >= 0; b--) {
      const k0 = b * QR_PANEL;
      const kb = Math.min(QR_PANEL, p - k0);
      blas.dlarfb(false, c - k0, j1 - j0, kb, w, k0 * c + k0, c, t, b * tBlock, QR_PANEL, q, j0 * c + k0, c);
      yield undefined;
    }
  }
  return q;
}

export interface PanelLu {
  /** Row i of P A is row perm[i] of A. */
  perm: Int32Array;
  /** First column whose pivot was exactly zero, or -1. */
  zeroPivotColumn: number;
}

/**
 * P A = L U with partial pivoting, in place on the row-major n x n `lu` (unit lower L below the
 * diagonal, U on and above): dgetrf on each n x LU_PANEL panel, the panel's row interchanges
 * applied to the other columns, dtrsm for the U block row, dgemm for the trailing matrix by row slices.
 */
export function* panelLuWork(blas: NativeBlas, lu: Float64Array, n: number, maddsPerCall = NATIVE_MADDS_PER_CALL): Work<PanelLu> {
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  if ((n * n * n) / 3 <= 2 * maddsPerCall) {
    // One call up to n ~ 1140 (~35 ms at n = 1000): OpenBLAS's recursive parallel dgetrf beats the
    // panels there (~60 ms at n = 1000); beyond, the panels cost the same as one call.
    const ipiv = new Int32Array(n);
    const info = blas.dgetrf(n, n, lu, 0, n, ipiv, 0);
    for (let i = 0; i < n; i++) {
      const r = ipiv[i] - 1;
      const tp = perm[i];
      perm[i] = perm[r];
      perm[r] = tp;
    }
    yield undefined;
    return { perm, zeroPivotColumn: info > 0 ? info - 1 : -1 };
  }
  const ipiv = new Int32Array(LU_PANEL);
  const swap = new Float64Array(n);
  let zeroPivotColumn = -1;
  for (let k0 = 0; k0 < n; k0 += LU_PANEL) {
    const kb = Math.min(LU_PANEL, n - k0);
    const info = blas.dgetrf(n - k0, kb, lu, k0 * n + k0, n, ipiv, 0);
    if (info > 0 && zeroPivotColumn < 0) zeroPivotColumn = k0 + info - 1;
    const rest = n - k0 - kb;
    for (let t = 0; t < kb; t++) {
      const r1 = k0 + t;
      const r2 = k0 + ipiv[t] - 1;
      if (r1 === r2) continue;
      const o1 = r1 * n;
      const o2 = r2 * n;
      // The panel's own columns were interchanged by dgetrf; here the columns left and right of it.
      swap.set(lu.subarray(o1, o1 + k0));
      lu.copyWithin(o1, o2, o2 + k0);
      lu.set(swap.subarray(0, k0), o2);
      swap.set(lu.subarray(o1 + k0 + kb, o1 + n));
      lu.copyWithin(o1 + k0 + kb, o2 + k0 + kb, o2 + n);
      lu.set(swap.subarray(0, rest), o2 + k0 + kb);
      const tp = perm[r1];
      perm[r1] = perm[r2];
      perm[r2] = tp;
    }
    yield undefined;
    if (rest === 0) continue;
    blas.dtrsm(true, false, false, true, kb, rest, 1, lu, k0 * n + k0, n, lu, k0 * n + k0 + kb, n);
    const rowsPerCall = Math.max(8, Math.floor(maddsPerCall / (rest * kb)));
    for (let i0 = k0 + kb; i0 < n; i0 += rowsPerCall) {
      const rows = Math.min(rowsPerCall, n - i0);
      blas.dgemm(false, false, rows, rest, kb, -1, lu, i0 * n + k0, n, lu, k0 * n + k0 + kb, n, 1, lu, i0 * n + k0 + kb, n);
      yield undefined;
    }
  }
  return { perm, zeroPivotColumn };
}

/**
 * Column-major C (m x n, ldc) = alpha op(A) op(B) + beta C through the row-major dgemm: the
 * row-major view of column-major storage is the transpose, and C^T = op(B)^T op(A)^T.
 */
function dgemmColumnMajor(
  blas: NativeBlas,
  transA: boolean,
  transB: boolean,
  m: number,
  n: number,
  k: number,
  alpha: number,
  a: Float64Array,
  aOffset: number,
  lda: number,
  b: Float64Array,
  bOffset: number,
  ldb: number,
  beta: number,
  c: Float64Array,
  cOffset: number,
  ldc: number,
): void {
  blas.dgemm(transB, transA, n, m, k, alpha, b, bOffset, ldb, a, aOffset, lda, beta, c, cOffset, ldc);
}

/**
 * Upper bidiagonal form (d: q, e: q - 1) of the column-major q x q matrix `a` (overwritten; the
 * reflectors are not kept): LAPACK's dgebrd loop, dlabrd on each panel and the two dgemm of the
 * trailing update A22 -= V Y2^T + X2 U by column slices, one dgebrd call for the last
 * BIDIAGONAL_CROSSOVER columns. Householder steps are normwise backward stable, as the TypeScript
 * bidiagonalization (singularValues.ts) is.
 */
export function* panelBidiagonalWork(
  blas: NativeBlas,
  a: Float64Array,
  q: number,
  maddsPerCall = NATIVE_MADDS_PER_CALL,
): Work<{ d: Float64Array; e: Float64Array }> {
  const d = new Float64Array(q);
  const e = new Float64Array(Math.max(q - 1, 0));
  // dlabrd writes nb entries of e; the last panel is never the end of the matrix (crossover), but
  // keep a full-length scratch so that every write stays in bounds.
  const eAll = new Float64Array(q);
  const tauq = new Float64Array(q);
  const taup = new Float64Array(q);
  const x = new Float64Array(q * BIDIAGONAL_PANEL_MAX);
  const y = new Float64Array(q * BIDIAGONAL_PANEL_MAX);
  let i = 0;
  while (q - i > BIDIAGONAL_CROSSOVER) {
    const rem = q - i;
    const nb = Math.max(8, Math.min(BIDIAGONAL_PANEL_MAX, Math.floor((BIDIAGONAL_PANEL_SHARE * maddsPerCall) / (2 * rem * rem))));
    const corner = i * q + i;
    blas.dlabrd(rem, rem, nb, a, corner, q, d, i, eAll, i, tauq, i, taup, i, x, 0, rem, y, 0, rem);
    yield undefined;
    // A(i+nb:, j0:j1) -= V Y(j0-i : j1-i, :)^T + X(nb:, :) A(i:i+nb, j0:j1). dlabrd left the unit
    // entries of V and U in A, as these products need; the columns of the panel are not used again.
    const trailing = rem - nb;
    const cols = Math.max(8, Math.floor(maddsPerCall / (2 * trailing * nb)));
    for (let j0 = i + nb; j0 < q; j0 += cols) {
      const width = Math.min(cols, q - j0);
      const target = j0 * q + i + nb;
      dgemmColumnMajor(blas, false, true, trailing, width, nb, -1, a, corner + nb, q, y, j0 - i, rem, 1, a, target, q);
      dgemmColumnMajor(blas, false, false, trailing, width, nb, -1, x, nb, rem, a, j0 * q + i, q, 1, a, target, q);
      yield undefined;
    }
    i += nb;
  }
  if (q - i > 0) blas.dgebrd(q - i, q - i, a, i * q + i, q, d, i, eAll, i);
  e.set(eAll.subarray(0, Math.max(q - 1, 0)));
  return { d, e };
}
