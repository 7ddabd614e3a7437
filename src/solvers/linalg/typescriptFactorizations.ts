// Past 500 lines: the Householder QR, the bidiagonalization and both LUs share their column helpers (dot, norms, pivoting, elimination) and yield rule.
/**
 * The TypeScript dense kernels' factorizations (./typescriptDenseKernels.ts): Householder QR and
 * bidiagonalization, and the envelope LU, on flat row-major Float64Array. They yield (undefined) every
 * few milliseconds of work so the event loop keeps control.
 */
import type { Work } from '../cooperative.js';
import { norm2 } from '../matrix.js';
import type { Bidiagonal, DenseKernels, HouseholderReflectors, LuFactors } from './denseKernels.js';
import { householderBidiagonalWork } from './bidiagonalReflectors.js';
import { wasmBidiagonalizeWork } from './wasmDenseKernels.js';
import { wasmKernelsEnabled } from './wasmRowKernels.js';

/** Multiply-adds between two yields (a few milliseconds). */
export const WORK_PER_YIELD = 1_000_000;
/** Columns eliminated per panel of the envelope LU: the rows below are swept once per panel, not once per column. */
const PANEL = 8;
/** Trailing rows of the envelope LU updated between two yields. */
const ROWS_PER_SLICE = 128;

/** Order from which the bidiagonalization's passes run in WebAssembly (below, four calls per column cost more than the loops). */
const MIN_WASM_BIDIAGONAL = 16;
/** Householder reflectors per block of the blocked QR (compact WY: each block's trailing update and Q are two gemm). */
const QR_BLOCK = 32;
/** Reflectors per inner block of a QR block: the unblocked part of the work shrinks to QR_INNER / QR_BLOCK of the panel's. */
const QR_INNER = 4;
/** Columns eliminated per block of the dense LU (the trailing update is one rank-LU_BLOCK gemm). */
const LU_BLOCK = 128;
/** Columns (rows) the dense LU's panel (triangular solve) leaves to the loops; wider ones go by halves and gemm. */
const LU_LEAF = 8;
/**
 * The products the blocked factorizations run on: the kernel set's own, looked up at each call, so
 * they are as fast as its gemm; `productRows` sizes the slices between two yields.
 */
export type FactorizationProducts = Pick<DenseKernels, 'gemm' | 'productRows' | 'multiplyByTransposeRows'>;

/** x[xo ..) . y[yo ..) over `len` entries, four partial sums (the loop runs at the adds' throughput, not their latency). */
function dot(x: Float64Array, xo: number, y: Float64Array, yo: number, len: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 4 <= len; i += 4) {
    s0 += x[xo + i] * y[yo + i];
    s1 += x[xo + i + 1] * y[yo + i + 1];
    s2 += x[xo + i + 2] * y[yo + i + 2];
    s3 += x[xo + i + 3] * y[yo + i + 3];
  }
  for (; i < len; i++) s0 += x[xo + i] * y[yo + i];
  return s0 + s1 + s2 + s3;
}

/**
 * |x[offset .. offset + len)|: the plain sum of squares when it is safely inside the range of doubles,
 * else the scaled norm2 (no overflow or underflow).
 */
function columnNorm(x: Float64Array, offset: number, len: number): number {
  const ss = dot(x, offset, x, offset, len);
  return ss > 1e-280 && ss < 1e280 ? Math.sqrt(ss) : norm2(x, offset, len);
}

/**
 * One block of reflectors (rows k0 .. k0 + kb of w, entries from column k0 on) in the two layouts
 * the products need, zero above each reflector's first entry: vr (kb x len, row-major) and its
 * transpose vc (len x kb).
 */
function reflectorBlock(w: Float64Array, c: number, k0: number, kb: number, vr: Float64Array, vc: Float64Array): void {
  const len = c - k0;
  vr.fill(0, 0, kb * len);
  for (let i = 0; i < kb; i++) {
    const src = (k0 + i) * c + k0;
    vr.set(w.subarray(src + i, src + len), i * len + i);
  }
  for (let r = 0; r < len; r++) for (let i = 0; i < kb; i++) vc[r * kb + i] = vr[i * len + r];
}

/**
 * The upper triangular T (kb x kb) with H_k0 ... H_(k0+kb-1) = I - V T V^T (LAPACK's dlarft, forward:
 * T[0:i, i] = -beta_i T[0:i, 0:i] V[:, 0:i]^T v_i), from the Gram matrix V^T V of the block's vr.
 */
function triangularFactorOfBlock(
  products: FactorizationProducts,
  vr: Float64Array,
  len: number,
  kb: number,
  beta: Float64Array,
  k0: number,
  t: Float64Array,
): void {
  products.multiplyByTransposeRows(vr, vr, len, 0, kb, kb, t, kb);
  for (let i = 0; i < kb; i++) {
    const b = beta[k0 + i];
    for (let l = i + 1; l < kb; l++) t[l * kb + i] = 0;
    t[i * kb + i] = b;
    // Column i holds z = V[:, 0:i]^T v_i above the diagonal; T upper triangular: row l uses z[l..i).
    for (let l = 0; l < i; l++) {
      let s = 0;
      for (let j = l; j < i; j++) s += t[l * kb + j] * t[j * kb + i];
      t[l * kb + i] = -b * s;
    }
  }
}

/**
 * target[rowStart .. rowEnd, k0 ..] -= (target[.., k0 ..] V) T' V^T, T' = T or T^T: a block of reflectors
 * applied from the right to the rows of `target` (row length c), i.e. from the left to the columns
 * they store. Three gemm by row slices: X = target V (vc), X T' (tt), target -= (X T') V^T (vr).
 */
function* applyReflectorBlockWork(
  products: FactorizationProducts,
  target: Float64Array,
  rowStart: number,
  rowEnd: number,
  c: number,
  k0: number,
  kb: number,
  vr: Float64Array,
  vc: Float64Array,
  tt: Float64Array,
  x: Float64Array,
  y: Float64Array,
): Work<void> {
  const len = c - k0;
  const step = products.productRows(2 * kb * len);
  for (let r0 = rowStart; r0 < rowEnd; r0 += step) {
    const rows = Math.min(step, rowEnd - r0);
    const rowsOfTarget = target.subarray(r0 * c + k0);
    products.gemm(false, rows, kb, len, 1, rowsOfTarget, c, vc, kb, 0, x, kb);
    products.gemm(false, rows, kb, kb, 1, x, kb, tt, kb, 0, y, kb);
    products.gemm(false, rows, len, kb, -1, y, kb, vr, len, 1, rowsOfTarget, c);
    yield undefined;
  }
}

/** The layout of blockedHouseholderWork's reflectors (HouseholderReflectors.layout). */
const BLOCK_REFLECTORS = Symbol('TypeScript block reflectors');

/**
 * Householder QR of M = A^T, w[j * c + i] = M[i][j] (p x c, p <= c; overwritten by the reflectors,
 * v_k in w[k * c + k ..]): blocked, QR_BLOCK reflectors at a time. Within a block each reflector
 * updates only the block's columns (contiguous rows of w); the block then updates the trailing
 * columns at once in compact WY form (I - V T V^T, by gemm); formQWork forms Q the same way, last
 * block first. Householder (not Gram-Schmidt) keeps Q orthonormal to machine precision, which the
 * principal angles need down to 1e-7 rad and below. R (p x p, upper triangular); with
 * `keepReflectors`, the reflectors and every block's T for formQWork.
 */
function* blockedHouseholderWork(
  products: FactorizationProducts,
  w: Float64Array,
  p: number,
  c: number,
  keepReflectors: boolean,
): Work<{ r: Float64Array; reflectors: HouseholderReflectors | null }> {
  const beta = new Float64Array(p); // H_k = I - beta_k v_k v_k^T
  const r = new Float64Array(p * p);
  const block = Math.min(QR_BLOCK, Math.max(p, 1));
  const vr = new Float64Array(block * c);
  const vc = new Float64Array(block * c);
  // The T of every block, kept for forming Q.
  const blocks = Math.ceil(p / block);
  const ts = new Float64Array(blocks * block * block);
  const innerVr = new Float64Array(QR_INNER * c);
  const innerVc = new Float64Array(QR_INNER * c);
  const innerT = new Float64Array(QR_INNER * QR_INNER);
  const x = new Float64Array(p * block);
  const y = new Float64Array(p * block);
  let pending = 0;

  for (let k0 = 0; k0 < p; k0 += block) {
    const k1 = Math.min(p, k0 + block);
    const kb = k1 - k0;
    // The block's own columns, QR_INNER reflectors at a time: each applies to the rest of its inner
    // block directly, the inner block to the rest of the block by gemm.
    for (let i0 = k0; i0 < k1; i0 += QR_INNER) {
      const i1 = Math.min(k1, i0 + QR_INNER);
      for (let k = i0; k < i1; k++) {
        const vk = k * c;
        const sigma = columnNorm(w, vk + k, c - k);
        const x0 = w[vk + k];
        // alpha = -sign(x0) |x|: the reflector maps x to alpha e_1 without cancellation.
        const alpha = x0 >= 0 ? -sigma : sigma;
        r[k * p + k] = alpha;
        if (sigma === 0) continue;
        w[vk + k] = x0 - alpha;
        // v^T v = (x0 - alpha)^2 + sigma^2 - x0^2 = 2 sigma (sigma + |x0|).
        const b = (beta[k] = 1 / (sigma * (sigma + Math.abs(x0))));
        for (let j = k + 1; j < i1; j++) {
          const cj = j * c;
          const s = b * dot(w, vk + k, w, cj + k, c - k);
          for (let i = k; i < c; i++) w[cj + i] -= s * w[vk + i];
        }
        pending += (c - k) * (i1 - k);
        if (pending >= WORK_PER_YIELD) {
          pending = 0;
          yield undefined;
        }
      }
      if (i1 < k1) {
        reflectorBlock(w, c, i0, i1 - i0, innerVr, innerVc);
        triangularFactorOfBlock(products, innerVr, c - i0, i1 - i0, beta, i0, innerT);
        yield* applyReflectorBlockWork(products, w, i1, k1, c, i0, i1 - i0, innerVr, innerVc, innerT, x, y);
      }
    }
    if (k1 < p || keepReflectors) {
      reflectorBlock(w, c, k0, kb, vr, vc);
      const t = ts.subarray((k0 / block) * block * block);
      triangularFactorOfBlock(products, vr, c - k0, kb, beta, k0, t);
      if (k1 < p) yield* applyReflectorBlockWork(products, w, k1, p, c, k0, kb, vr, vc, t, x, y);
    }
    for (let k = k0; k < k1; k++) for (let j = k + 1; j < p; j++) r[k * p + j] = w[j * c + k];
  }
  return { r, reflectors: keepReflectors ? { layout: BLOCK_REFLECTORS, p, c, w, t: ts, block } : null };
}

/**
 * Q of blockedHouseholderWork's reflectors (p x c, row k = the k-th column of Q), bit for bit what thinQrWork returns:
 * Q = B_0 B_1 ... [I_p; 0], B_b = I - V T V^T the b-th block, applied last block first.
 */
export function* formQWork(products: FactorizationProducts, reflectors: HouseholderReflectors): Work<Float64Array> {
  if (reflectors.layout !== BLOCK_REFLECTORS)
    throw new RangeError(`formQWork reads its own reflectors (blocks of QR_BLOCK), got ${String(reflectors.layout.description)}`);
  const { p, c, w, t: ts, block } = reflectors;
  const blocks = Math.ceil(p / block);
  const vr = new Float64Array(block * c);
  const vc = new Float64Array(block * c);
  const tt = new Float64Array(block * block);
  const x = new Float64Array(p * block);
  const y = new Float64Array(p * block);
  // Row j of q (column j of Q) is touched by blocks starting at or before j only, so block b updates rows k0 ...
  const q = new Float64Array(p * c);
  for (let k = 0; k < p; k++) q[k * c + k] = 1;
  for (let k0 = (blocks - 1) * block; k0 >= 0; k0 -= block) {
    const kb = Math.min(p, k0 + block) - k0;
    reflectorBlock(w, c, k0, kb, vr, vc);
    const t = ts.subarray((k0 / block) * block * block);
    for (let i = 0; i < kb; i++) for (let j = 0; j < kb; j++) tt[i * kb + j] = t[j * kb + i];
    yield* applyReflectorBlockWork(products, q, k0, p, c, k0, kb, vr, vc, tt, x, y);
  }
  return q;
}

/**
 * Householder thin QR of M = A^T, w[j * c + i] = M[i][j]: because A is stored by rows, the columns
 * of M are contiguous and every reflector and update runs over contiguous memory. Blocked
 * (blockedHouseholderWork), the O(p^2 c) part in `products.gemm`.
 */
export function* thinQrWork(
  w: Float64Array,
  p: number,
  c: number,
  products: FactorizationProducts,
): Work<{ q: Float64Array; r: Float64Array }> {
  const { r, reflectors } = yield* householderFactorWork(w, p, c, products);
  return { q: yield* formQWork(products, reflectors), r };
}

/** thinQrWork's first half: R, and the reflectors formQWork forms its Q from (`w` becomes them). */
export function* householderFactorWork(
  w: Float64Array,
  p: number,
  c: number,
  products: FactorizationProducts,
): Work<{ r: Float64Array; reflectors: HouseholderReflectors }> {
  const { r, reflectors } = yield* blockedHouseholderWork(products, w, p, c, true);
  return { r, reflectors: reflectors! };
}

/**
 * R (p x p, row-major, upper triangular) of the thin QR of the c x p matrix M whose columns are the
 * p rows of `columns` (p x c, row-major, p <= c). Q is not formed. `columns` is overwritten.
 */
export function* triangularFactorWork(columns: Float64Array, p: number, c: number, products: FactorizationProducts): Work<Float64Array> {
  if (p > c) throw new RangeError(`triangularFactor needs p <= c, got p=${p}, c=${c}`);
  return (yield* blockedHouseholderWork(products, columns, p, c, false)).r;
}

/**
 * Upper bidiagonal form of a square row-major matrix (its contents undefined after): diagonal d,
 * superdiagonal e. Left reflectors act on columns, right reflectors on rows; both updates run along
 * rows. From order MIN_WASM_BIDIAGONAL on, the passes run in WebAssembly (wasmBidiagonalizeWork).
 */
export function* bidiagonalizeWork(b: Float64Array, q: number): Work<Bidiagonal> {
  if (q >= MIN_WASM_BIDIAGONAL && wasmKernelsEnabled()) {
    const bidiagonal = yield* wasmBidiagonalizeWork(b, q);
    if (bidiagonal !== null) return bidiagonal;
  }
  return yield* bidiagonalizeLoopWork(b, q);
}

/** bidiagonalizeWork on the plain loops (`b` overwritten). */
export function bidiagonalizeLoopWork(b: Float64Array, q: number): Work<Bidiagonal> {
  // v offset by k (left) or k + 1 (right), so v[i] is entry i.
  const v = new Float64Array(q);
  const acc = new Float64Array(q);
  return householderBidiagonalWork(
    q,
    {
      b,
      v,
      leftAt: (k) => k,
      rightAt: (k) => k + 1,
      left(k, beta) {
        acc.fill(0, k + 1, q);
        for (let i = k; i < q; i++) {
          const vi = v[i];
          if (vi === 0) continue;
          const ri = i * q;
          for (let j = k + 1; j < q; j++) acc[j] += vi * b[ri + j];
        }
        for (let i = k; i < q; i++) {
          const f = beta * v[i];
          if (f === 0) continue;
          const ri = i * q;
          for (let j = k + 1; j < q; j++) b[ri + j] -= f * acc[j];
        }
      },
      right(k, beta) {
        for (let i = k + 1; i < q; i++) {
          const ri = i * q;
          let s = 0;
          for (let j = k + 1; j < q; j++) s += b[ri + j] * v[j];
          s *= beta;
          if (s === 0) continue;
          for (let j = k + 1; j < q; j++) b[ri + j] -= s * v[j];
        }
      },
    },
    2 * WORK_PER_YIELD,
  );
}

/** The row i >= c with the largest |lu[i, c]| (the first of equals; c when the column is zero there). */
function largestInColumn(lu: Float64Array, n: number, c: number): number {
  let row = c;
  let largest = 0;
  for (let i = c; i < n; i++) {
    const v = Math.abs(lu[i * n + c]);
    if (v > largest) {
      largest = v;
      row = i;
    }
  }
  return row;
}

/**
 * Below the pivot lu[c, c]: the multipliers L[i, c] into column c and each row i > c minus L[i, c] times the
 * pivot row on columns (c, end); rows with a zero entry skipped. With `rowEnd`, each updated row's
 * envelope end grows to `end`.
 */
function eliminateColumn(lu: Float64Array, n: number, c: number, end: number, rowEnd: Int32Array | null): void {
  const rc = c * n;
  const pivot = lu[rc + c];
  for (let i = c + 1; i < n; i++) {
    const ri = i * n;
    const aic = lu[ri + c];
    if (aic === 0) continue;
    const l = aic / pivot;
    lu[ri + c] = l;
    for (let j = c + 1; j < end; j++) lu[ri + j] -= l * lu[rc + j];
    if (rowEnd !== null && rowEnd[i] < end) rowEnd[i] = end;
  }
}

/** Interchanges rows a and b of the n-column `lu` and entries a and b of `perm`. */
function interchangeRows(lu: Float64Array, n: number, a: number, b: number, perm: Int32Array, swap: Float64Array): void {
  const oa = a * n;
  const ob = b * n;
  swap.set(lu.subarray(oa, oa + n));
  lu.copyWithin(oa, ob, ob + n);
  lu.set(swap, ob);
  const t = perm[a];
  perm[a] = perm[b];
  perm[b] = t;
}

/**
 * The envelope LU: row-major, right-looking, in panels of PANEL columns: within a panel only the
 * panel's columns are updated eagerly; each row's remainder then gets one fused rank-PANEL update
 * (contiguous, four pivot rows per pass), so the trailing matrix is swept once per panel instead of
 * once per column. Zero multipliers are skipped and each row's last nonzero column is tracked, so
 * banded and sparse matrices cost a small fraction of the dense 2n^3/3, and so do their solves.
 */
export function* envelopeLuWork(lu: Float64Array, n: number): Work<Omit<LuFactors, 'solvesWith'>> {
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
      const pivotRow = largestInColumn(lu, n, c);
      const pivotAbs = Math.abs(lu[pivotRow * n + c]);
      if (pivotRow !== c) {
        interchangeRows(lu, n, c, pivotRow, perm, swap);
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
      eliminateColumn(lu, n, c, Math.min(k1, rowEnd[c]), rowEnd);
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
  return { n, lu, perm, lowerStart, upperEnd: rowEnd, zeroPivotColumn, factoredBy: 'typescript' };
}

/**
 * A matrix is factored by the dense blocked LU when at least this fraction of its entries is nonzero
 * and its row envelopes (first to last nonzero of each row) cover at least ENVELOPE_DENSE_FRACTION of
 * it; otherwise by the envelope LU, whose cost follows the nonzero profile (sherman5, 0.2 % nonzero
 * with bandwidth 1106 and envelopes over 19 % of the matrix; a band of any density).
 */
const DENSE_MIN_DENSITY = 0.05;
const ENVELOPE_DENSE_FRACTION = 0.5;

/**
 * P A = L U with partial pivoting, in place on the row-major n x n `lu`: the envelope LU for sparse
 * profiles, the blocked one (blockedLuWork) for dense matrices when the products run on the
 * WebAssembly kernels. On the plain loops the envelope LU stays: its fused row updates (four pivot
 * rows per pass over a row) beat the loop gemm's one multiply-add per load and store of C (measured
 * at n = 2000: 1.6 s against 3.3 s for the blocked LU on that gemm).
 */
export function* luWork(lu: Float64Array, n: number, products: FactorizationProducts): Work<Omit<LuFactors, 'solvesWith'>> {
  let nonzeros = 0;
  let envelope = 0;
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    let first = -1;
    let last = -1;
    for (let j = 0; j < n; j++) {
      if (lu[ri + j] === 0) continue;
      nonzeros++;
      if (first < 0) first = j;
      last = j;
    }
    if (first >= 0) envelope += last - first + 1;
    if ((i & 127) === 127) yield undefined;
  }
  const sparseProfile = nonzeros < DENSE_MIN_DENSITY * n * n || envelope < ENVELOPE_DENSE_FRACTION * n * n;
  if (sparseProfile || !wasmKernelsEnabled()) return yield* envelopeLuWork(lu, n);
  const { perm, zeroPivotColumn } = yield* blockedLuWork(lu, n, products);
  // The solves skip what lies outside each row's nonzeros (little on a dense matrix, all of it on a triangular one).
  const lowerStart = new Int32Array(n);
  const upperEnd = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    let j = 0;
    while (j < i && lu[ri + j] === 0) j++;
    lowerStart[i] = j;
    let end = n;
    while (end > i + 1 && lu[ri + end - 1] === 0) end--;
    upperEnd[i] = end;
    if ((i & 127) === 127) yield undefined;
  }
  return { n, lu, perm, lowerStart, upperEnd, zeroPivotColumn, factoredBy: 'typescript' };
}

/**
 * Right-looking blocked LU with partial pivoting (LAPACK's dgetrf), row-major, LU_BLOCK columns at
 * a time: the block's columns are factored by recursive halving (dgetrf2: the left half, U12 of the
 * right half, its rank-update by gemm, the right half; whole rows interchanged), then
 * U12 = L11^{-1} A12 by the same halving (lowerSolve) and the trailing A22 -= L21 U12 by gemm, in row
 * slices. The n^3 / 3 multiply-adds are nearly all in the gemm; the loops keep LU_LEAF columns.
 */
function* blockedLuWork(lu: Float64Array, n: number, products: FactorizationProducts): Work<{ perm: Int32Array; zeroPivotColumn: number }> {
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  const state = { zeroPivotColumn: -1, pending: 0 };
  const swap = new Float64Array(n);
  for (let k0 = 0; k0 < n; k0 += LU_BLOCK) {
    const k1 = Math.min(n, k0 + LU_BLOCK);
    const kb = k1 - k0;
    yield* panelLuWork(lu, n, k0, k1, perm, swap, products, state);
    if (k1 === n) break;
    lowerSolve(lu, n, k0, k1, k1, n, products);
    yield undefined;
    const rest = n - k1;
    const step = products.productRows(rest * kb);
    const u12 = lu.subarray(k0 * n + k1);
    for (let i0 = k1; i0 < n; i0 += step) {
      products.gemm(false, Math.min(step, n - i0), rest, kb, -1, lu.subarray(i0 * n + k0), n, u12, n, 1, lu.subarray(i0 * n + k1), n);
      yield undefined;
    }
  }
  return { perm, zeroPivotColumn: state.zeroPivotColumn };
}

/**
 * LU with partial pivoting of columns [c0, c1) of rows [c0, n) (the columns right of c1 are not
 * touched but for the row interchanges): up to LU_LEAF columns column by column, wider ones by
 * halves, the right half brought up to date by lowerSolve and one gemm.
 */
function* panelLuWork(
  lu: Float64Array,
  n: number,
  c0: number,
  c1: number,
  perm: Int32Array,
  swap: Float64Array,
  products: FactorizationProducts,
  state: { zeroPivotColumn: number; pending: number },
): Work<void> {
  if (c1 - c0 > LU_LEAF) {
    const h = c0 + (((c1 - c0) >> 1) & ~3 || (c1 - c0) >> 1);
    yield* panelLuWork(lu, n, c0, h, perm, swap, products, state);
    lowerSolve(lu, n, c0, h, h, c1, products);
    products.gemm(false, n - h, c1 - h, h - c0, -1, lu.subarray(h * n + c0), n, lu.subarray(c0 * n + h), n, 1, lu.subarray(h * n + h), n);
    yield* panelLuWork(lu, n, h, c1, perm, swap, products, state);
    return;
  }
  for (let c = c0; c < c1; c++) {
    const pivotRow = largestInColumn(lu, n, c);
    const pivotAbs = Math.abs(lu[pivotRow * n + c]);
    if (pivotRow !== c) interchangeRows(lu, n, c, pivotRow, perm, swap);
    if (pivotAbs === 0) {
      // The column is zero from row c down: nothing to eliminate, the matrix is singular.
      if (state.zeroPivotColumn < 0) state.zeroPivotColumn = c;
      continue;
    }
    eliminateColumn(lu, n, c, c1, null);
    state.pending += (n - c) * (c1 - c);
    if (state.pending >= WORK_PER_YIELD) {
      state.pending = 0;
      yield undefined;
    }
  }
}

/**
 * Rows [r0, r1) x columns [j0, j1) of `lu` := L^{-1} of themselves, L the unit lower triangle of
 * lu[r0..r1, r0..r1): up to LU_LEAF rows by the loop (row i minus L[i, t] times the rows t < i,
 * four at a time), more by halves, the lower half updated by gemm in between.
 */
function lowerSolve(lu: Float64Array, n: number, r0: number, r1: number, j0: number, j1: number, products: FactorizationProducts): void {
  if (r1 - r0 > LU_LEAF) {
    const h = r0 + (((r1 - r0) >> 1) & ~3 || (r1 - r0) >> 1);
    lowerSolve(lu, n, r0, h, j0, j1, products);
    products.gemm(
      false,
      r1 - h,
      j1 - j0,
      h - r0,
      -1,
      lu.subarray(h * n + r0),
      n,
      lu.subarray(r0 * n + j0),
      n,
      1,
      lu.subarray(h * n + j0),
      n,
    );
    lowerSolve(lu, n, h, r1, j0, j1, products);
    return;
  }
  for (let i = r0 + 1; i < r1; i++) {
    const ri = i * n;
    let t = r0;
    for (; t + 4 <= i; t += 4) {
      const c0 = lu[ri + t],
        c1 = lu[ri + t + 1],
        c2 = lu[ri + t + 2],
        c3 = lu[ri + t + 3];
      const s0 = t * n,
        s1 = s0 + n,
        s2 = s1 + n,
        s3 = s2 + n;
      for (let j = j0; j < j1; j++) lu[ri + j] -= c0 * lu[s0 + j] + c1 * lu[s1 + j] + c2 * lu[s2 + j] + c3 * lu[s3 + j];
    }
    for (; t < i; t++) {
      const c0 = lu[ri + t];
      if (c0 === 0) continue;
      const s0 = t * n;
      for (let j = j0; j < j1; j++) lu[ri + j] -= c0 * lu[s0 + j];
    }
  }
}
