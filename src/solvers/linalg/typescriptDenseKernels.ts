/**
 * The dense kernels on flat Float64Array (./denseKernels.ts): the TypeScript backend's, and the
 * native backend's for calls too small to pay for the addon's entry. Loops run along rows (the
 * storage order), four rows fused per pass where a row is reused, so each pass loads and stores the
 * row it updates once per four multiply-adds.
 */
import { runSync, type Work } from '../cooperative.js';
import { norm2 } from '../matrix.js';
import type { Bidiagonal, DenseKernels, LuFactors } from './denseKernels.js';

/** Multiply-adds between two yields (a few milliseconds). */
export const WORK_PER_YIELD = 1_000_000;
/** Inner-dimension tile of the product loop: the 8 row segments of a 4 x 4 register block stay in L1 cache. */
const TILE = 512;
/** Columns eliminated per panel of the envelope LU: the rows below are swept once per panel, not once per column. */
const PANEL = 8;
/** Trailing rows of the envelope LU updated between two yields. */
const ROWS_PER_SLICE = 128;

/**
 * Rows [rowStart, rowEnd) of C = X Y^T: every entry is a dot product of two contiguous rows. A 4 x 4
 * register block reads 8 rows once per 16 products; the inner dimension is tiled so the 8 row
 * segments stay in L1 cache.
 */
export function multiplyByTransposeRowsLoop(
  x: Float64Array,
  y: Float64Array,
  len: number,
  rowStart: number,
  rowEnd: number,
  cols: number,
  out: Float64Array,
  outStride: number,
  outRowOffset: number,
): void {
  for (let i = rowStart; i < rowEnd; i++) out.fill(0, (i - outRowOffset) * outStride, (i - outRowOffset) * outStride + cols);
  for (let t0 = 0; t0 < len; t0 += TILE) {
    const t1 = Math.min(len, t0 + TILE);
    let i = rowStart;
    for (; i + 4 <= rowEnd; i += 4) {
      const x0 = i * len;
      const x1 = x0 + len;
      const x2 = x1 + len;
      const x3 = x2 + len;
      const o0 = (i - outRowOffset) * outStride;
      const o1 = o0 + outStride;
      const o2 = o1 + outStride;
      const o3 = o2 + outStride;
      let j = 0;
      for (; j + 4 <= cols; j += 4) {
        const y0 = j * len;
        const y1 = y0 + len;
        const y2 = y1 + len;
        const y3 = y2 + len;
        let c00 = 0,
          c01 = 0,
          c02 = 0,
          c03 = 0;
        let c10 = 0,
          c11 = 0,
          c12 = 0,
          c13 = 0;
        let c20 = 0,
          c21 = 0,
          c22 = 0,
          c23 = 0;
        let c30 = 0,
          c31 = 0,
          c32 = 0,
          c33 = 0;
        for (let t = t0; t < t1; t++) {
          const a0 = x[x0 + t],
            a1 = x[x1 + t],
            a2 = x[x2 + t],
            a3 = x[x3 + t];
          const b0 = y[y0 + t],
            b1 = y[y1 + t],
            b2 = y[y2 + t],
            b3 = y[y3 + t];
          c00 += a0 * b0;
          c01 += a0 * b1;
          c02 += a0 * b2;
          c03 += a0 * b3;
          c10 += a1 * b0;
          c11 += a1 * b1;
          c12 += a1 * b2;
          c13 += a1 * b3;
          c20 += a2 * b0;
          c21 += a2 * b1;
          c22 += a2 * b2;
          c23 += a2 * b3;
          c30 += a3 * b0;
          c31 += a3 * b1;
          c32 += a3 * b2;
          c33 += a3 * b3;
        }
        out[o0 + j] += c00;
        out[o0 + j + 1] += c01;
        out[o0 + j + 2] += c02;
        out[o0 + j + 3] += c03;
        out[o1 + j] += c10;
        out[o1 + j + 1] += c11;
        out[o1 + j + 2] += c12;
        out[o1 + j + 3] += c13;
        out[o2 + j] += c20;
        out[o2 + j + 1] += c21;
        out[o2 + j + 2] += c22;
        out[o2 + j + 3] += c23;
        out[o3 + j] += c30;
        out[o3 + j + 1] += c31;
        out[o3 + j + 2] += c32;
        out[o3 + j + 3] += c33;
      }
      for (; j < cols; j++) {
        const y0 = j * len;
        let c0 = 0,
          c1 = 0,
          c2 = 0,
          c3 = 0;
        for (let t = t0; t < t1; t++) {
          const b = y[y0 + t];
          c0 += x[x0 + t] * b;
          c1 += x[x1 + t] * b;
          c2 += x[x2 + t] * b;
          c3 += x[x3 + t] * b;
        }
        out[o0 + j] += c0;
        out[o1 + j] += c1;
        out[o2 + j] += c2;
        out[o3 + j] += c3;
      }
    }
    for (; i < rowEnd; i++) {
      const x0 = i * len;
      const o0 = (i - outRowOffset) * outStride;
      for (let j = 0; j < cols; j++) {
        const y0 = j * len;
        let s = 0;
        for (let t = t0; t < t1; t++) s += x[x0 + t] * y[y0 + t];
        out[o0 + j] += s;
      }
    }
  }
}

/** Row-major C = alpha op(A) B + beta C, op(A) m x kk (A stored kk x m when transposed), B kk x n, C m x n. */
function gemm(
  transA: boolean,
  m: number,
  n: number,
  kk: number,
  alpha: number,
  a: Float64Array,
  lda: number,
  b: Float64Array,
  ldb: number,
  beta: number,
  c: Float64Array,
  ldc: number,
): void {
  if (m === 0 || n === 0) return;
  for (let i = 0; i < m; i++) {
    const ci = i * ldc;
    if (beta === 0) c.fill(0, ci, ci + n);
    else if (beta !== 1) for (let j = 0; j < n; j++) c[ci + j] *= beta;
  }
  if (transA) {
    // C[i, :] += alpha A[l, i] B[l, :]: row l of A and of B read once.
    for (let l = 0; l < kk; l++) {
      const al = l * lda;
      const bl = l * ldb;
      for (let i = 0; i < m; i++) {
        const s = alpha * a[al + i];
        if (s === 0) continue;
        const ci = i * ldc;
        for (let j = 0; j < n; j++) c[ci + j] += s * b[bl + j];
      }
    }
    return;
  }
  for (let i = 0; i < m; i++) {
    const ai = i * lda;
    const ci = i * ldc;
    for (let l = 0; l < kk; l++) {
      const s = alpha * a[ai + l];
      if (s === 0) continue;
      const bl = l * ldb;
      for (let j = 0; j < n; j++) c[ci + j] += s * b[bl + j];
    }
  }
}

/** Rows [rowStart, rowEnd) of W -= C Q; four rows of Q per pass: one load and store of W's row per four multiply-adds. */
function subtractProductRows(
  c: Float64Array,
  q: Float64Array,
  w: Float64Array,
  k: number,
  len: number,
  rowStart: number,
  rowEnd: number,
): void {
  for (let row = rowStart; row < rowEnd; row++) {
    const wr = row * len;
    const cr = row * k;
    let l = 0;
    for (; l + 4 <= k; l += 4) {
      const c0 = c[cr + l],
        c1 = c[cr + l + 1],
        c2 = c[cr + l + 2],
        c3 = c[cr + l + 3];
      const o0 = l * len,
        o1 = o0 + len,
        o2 = o1 + len,
        o3 = o2 + len;
      for (let t = 0; t < len; t++) w[wr + t] -= c0 * q[o0 + t] + c1 * q[o1 + t] + c2 * q[o2 + t] + c3 * q[o3 + t];
    }
    for (; l < k; l++) {
      const c0 = c[cr + l];
      const o0 = l * len;
      for (let t = 0; t < len; t++) w[wr + t] -= c0 * q[o0 + t];
    }
  }
}

/** y = M^T (M x), one pass over M: each row's dot with x, then that row times the dot. */
function normalProduct(m: Float64Array, rows: number, cols: number, x: Float64Array, y: Float64Array): void {
  y.fill(0, 0, cols);
  for (let i = 0; i < rows; i++) {
    const off = i * cols;
    let s = 0;
    for (let j = 0; j < cols; j++) s += m[off + j] * x[j];
    if (s === 0) continue;
    for (let j = 0; j < cols; j++) y[j] += m[off + j] * s;
  }
}

/** y_i += G x_j (row dots) and y_j += G^T x_i (row axpys), one pass over G. */
export function addBlockAndTransposeProduct(
  g: Float64Array,
  start: number,
  pi: number,
  pj: number,
  x: Float64Array,
  oi: number,
  oj: number,
  y: Float64Array,
): void {
  for (let r = 0; r < pi; r++) {
    const gr = start + r * pj;
    const xi = x[oi + r];
    let s = 0;
    for (let t = 0; t < pj; t++) {
      const v = g[gr + t];
      s += v * x[oj + t];
      y[oj + t] += v * xi;
    }
    y[oi + r] += s;
  }
}

/** h = V w, then w -= V^T h; four basis vectors per pass over w, so w is loaded and stored once per four. */
export function projectOut(basis: Float64Array, n: number, count: number, w: Float64Array, h: Float64Array): void {
  let i = 0;
  for (; i + 4 <= count; i += 4) {
    const o0 = i * n;
    const o1 = o0 + n;
    const o2 = o1 + n;
    const o3 = o2 + n;
    let d0 = 0;
    let d1 = 0;
    let d2 = 0;
    let d3 = 0;
    for (let r = 0; r < n; r++) {
      const wr = w[r];
      d0 += basis[o0 + r] * wr;
      d1 += basis[o1 + r] * wr;
      d2 += basis[o2 + r] * wr;
      d3 += basis[o3 + r] * wr;
    }
    h[i] = d0;
    h[i + 1] = d1;
    h[i + 2] = d2;
    h[i + 3] = d3;
  }
  for (; i < count; i++) {
    const off = i * n;
    let d = 0;
    for (let r = 0; r < n; r++) d += basis[off + r] * w[r];
    h[i] = d;
  }
  i = 0;
  for (; i + 4 <= count; i += 4) {
    const o0 = i * n;
    const o1 = o0 + n;
    const o2 = o1 + n;
    const o3 = o2 + n;
    const c0 = h[i];
    const c1 = h[i + 1];
    const c2 = h[i + 2];
    const c3 = h[i + 3];
    for (let r = 0; r < n; r++) w[r] -= c0 * basis[o0 + r] + c1 * basis[o1 + r] + c2 * basis[o2 + r] + c3 * basis[o3 + r];
  }
  for (; i < count; i++) {
    const off = i * n;
    const c = h[i];
    for (let r = 0; r < n; r++) w[r] -= c * basis[off + r];
  }
}

/** y = V^T h: the rows of V times their coefficients, row by row. */
export function combineRows(basis: Float64Array, n: number, count: number, h: Float64Array, y: Float64Array): void {
  y.fill(0, 0, n);
  for (let i = 0; i < count; i++) {
    const c = h[i];
    if (c === 0) continue;
    const off = i * n;
    for (let r = 0; r < n; r++) y[r] += c * basis[off + r];
  }
}

/** out = K V[:, r0 .. r0 + len): four basis rows per pass over a kept vector's block, so it is loaded and stored once per four. */
export function combineRowBlock(
  k: Float64Array,
  kept: number,
  size: number,
  basis: Float64Array,
  n: number,
  r0: number,
  len: number,
  out: Float64Array,
): void {
  out.fill(0, 0, kept * len);
  for (let a = 0; a < kept; a++) {
    const dst = a * len;
    const coefficients = a * size;
    let i = 0;
    for (; i + 4 <= size; i += 4) {
      const c0 = k[coefficients + i];
      const c1 = k[coefficients + i + 1];
      const c2 = k[coefficients + i + 2];
      const c3 = k[coefficients + i + 3];
      const o0 = i * n + r0;
      const o1 = o0 + n;
      const o2 = o1 + n;
      const o3 = o2 + n;
      for (let r = 0; r < len; r++) out[dst + r] += c0 * basis[o0 + r] + c1 * basis[o1 + r] + c2 * basis[o2 + r] + c3 * basis[o3 + r];
    }
    for (; i < size; i++) {
      const c = k[coefficients + i];
      const off = i * n + r0;
      for (let r = 0; r < len; r++) out[dst + r] += c * basis[off + r];
    }
  }
}

/** Row-major S = R^{-T} S in place (R p x p upper triangular, S p x w): forward substitution on w columns at once. */
function solveRTransposedBlock(r: Float64Array, p: number, s: Float64Array, w: number): void {
  for (let i = 0; i < p; i++) {
    const si = i * w;
    // Row i of R^T is column i of R: R[l, i] for l <= i.
    for (let l = 0; l < i; l++) {
      const coef = r[l * p + i];
      if (coef === 0) continue;
      const sl = l * w;
      for (let j = 0; j < w; j++) s[si + j] -= coef * s[sl + j];
    }
    const d = r[i * p + i];
    for (let j = 0; j < w; j++) s[si + j] /= d;
  }
}

/**
 * Householder thin QR of M = A^T, w[j * c + i] = M[i][j]: because A is stored by rows, the columns
 * of M are contiguous and every reflector and update runs over contiguous memory. Householder (not
 * Gram-Schmidt) keeps Q orthonormal to machine precision, which the principal angles need down to
 * 1e-7 rad and below.
 */
function* thinQrWork(w: Float64Array, p: number, c: number): Work<{ q: Float64Array; r: Float64Array }> {
  const beta = new Float64Array(p); // H_k = I - beta_k v_k v_k^T, v_k stored in w[k*c + k .. k*c + c)
  const r = new Float64Array(p * p);

  for (let k = 0; k < p; k++) {
    const vk = k * c;
    const sigma = norm2(w, vk + k, c - k);
    const x0 = w[vk + k];
    // alpha = -sign(x0) |x|: the reflector maps x to alpha e_1 without cancellation.
    const alpha = x0 >= 0 ? -sigma : sigma;
    if (sigma === 0) {
      beta[k] = 0;
      r[k * p + k] = 0;
    } else {
      w[vk + k] = x0 - alpha;
      let vv = 0;
      for (let i = k; i < c; i++) vv += w[vk + i] * w[vk + i];
      beta[k] = 2 / vv;
      r[k * p + k] = alpha;
      for (let j = k + 1; j < p; j++) {
        const cj = j * c;
        let s = 0;
        for (let i = k; i < c; i++) s += w[vk + i] * w[cj + i];
        s *= beta[k];
        for (let i = k; i < c; i++) w[cj + i] -= s * w[vk + i];
      }
    }
    for (let j = k + 1; j < p; j++) r[k * p + j] = w[j * c + k];
    yield undefined;
  }

  // Q_i = H_0 H_1 ... H_{p-1} [I_p; 0]: column k is e_k with H_k ... H_0 applied in that order
  // (H_j with j > k leaves e_k unchanged because v_j vanishes above index j).
  const q = new Float64Array(p * c);
  for (let k = 0; k < p; k++) {
    const qk = k * c;
    q[qk + k] = 1;
    for (let j = k; j >= 0; j--) {
      if (beta[j] === 0) continue;
      const vj = j * c;
      let s = 0;
      for (let i = j; i < c; i++) s += w[vj + i] * q[qk + i];
      s *= beta[j];
      for (let i = j; i < c; i++) q[qk + i] -= s * w[vj + i];
    }
    yield undefined;
  }
  return { q, r };
}

/**
 * R (p x p, row-major, upper triangular) of the thin QR of the c x p matrix M whose columns are the
 * p rows of `columns` (p x c, row-major, p <= c). Reflectors run over contiguous memory; Q is not
 * formed. `columns` is overwritten.
 */
export function* triangularFactorWork(columns: Float64Array, p: number, c: number): Work<Float64Array> {
  if (p > c) throw new RangeError(`triangularFactor needs p <= c, got p=${p}, c=${c}`);
  const w = columns;
  const r = new Float64Array(p * p);
  let pending = 0;
  for (let k = 0; k < p; k++) {
    const vk = k * c;
    const sigma = norm2(w, vk + k, c - k);
    const x0 = w[vk + k];
    const alpha = x0 >= 0 ? -sigma : sigma;
    r[k * p + k] = alpha;
    if (sigma !== 0) {
      w[vk + k] = x0 - alpha;
      // v^T v = 2 sigma (sigma + |x0|) exactly in exact arithmetic, without a second pass.
      const beta = 1 / (sigma * (sigma + Math.abs(x0)));
      for (let j = k + 1; j < p; j++) {
        const cj = j * c;
        let s = 0;
        for (let i = k; i < c; i++) s += w[vk + i] * w[cj + i];
        s *= beta;
        if (s === 0) continue;
        for (let i = k; i < c; i++) w[cj + i] -= s * w[vk + i];
      }
    }
    for (let j = k + 1; j < p; j++) r[k * p + j] = w[j * c + k];
    pending += (c - k) * (p - k);
    if (pending >= WORK_PER_YIELD) {
      pending = 0;
      yield undefined;
    }
  }
  return r;
}

/**
 * Upper bidiagonal form of a square row-major matrix (overwritten): diagonal d, superdiagonal e.
 * Left reflectors act on columns, right reflectors on rows; both updates run along rows.
 */
export function* bidiagonalizeWork(b: Float64Array, q: number): Work<Bidiagonal> {
  const d = new Float64Array(q);
  const e = new Float64Array(Math.max(q - 1, 0));
  const v = new Float64Array(q);
  const acc = new Float64Array(q);
  let pending = 0;
  for (let k = 0; k < q; k++) {
    // Left reflector zeroing B[k+1.., k].
    let scale = 0;
    for (let i = k; i < q; i++) scale = Math.max(scale, Math.abs(b[i * q + k]));
    if (scale === 0) {
      d[k] = 0;
    } else {
      let ss = 0;
      for (let i = k; i < q; i++) {
        const t = b[i * q + k] / scale;
        v[i] = b[i * q + k];
        ss += t * t;
      }
      const sigma = scale * Math.sqrt(ss);
      const x0 = v[k];
      const alpha = x0 >= 0 ? -sigma : sigma;
      v[k] = x0 - alpha;
      const beta = 1 / (sigma * (sigma + Math.abs(x0)));
      d[k] = alpha;
      if (k + 1 < q) {
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
      }
    }
    if (k + 1 >= q) break;
    // Right reflector zeroing B[k, k+2..].
    const rk = k * q;
    const sigmaR = norm2(b, rk + k + 1, q - k - 1);
    if (sigmaR === 0) {
      e[k] = 0;
    } else {
      const y0 = b[rk + k + 1];
      const alphaR = y0 >= 0 ? -sigmaR : sigmaR;
      for (let j = k + 1; j < q; j++) v[j] = b[rk + j];
      v[k + 1] = y0 - alphaR;
      const betaR = 1 / (sigmaR * (sigmaR + Math.abs(y0)));
      e[k] = alphaR;
      for (let i = k + 1; i < q; i++) {
        const ri = i * q;
        let s = 0;
        for (let j = k + 1; j < q; j++) s += b[ri + j] * v[j];
        s *= betaR;
        if (s === 0) continue;
        for (let j = k + 1; j < q; j++) b[ri + j] -= s * v[j];
      }
    }
    pending += 2 * (q - k) * (q - k);
    if (pending >= WORK_PER_YIELD) {
      pending = 0;
      yield undefined;
    }
  }
  return { d, e };
}

/**
 * The envelope LU: row-major, right-looking, in panels of PANEL columns: within a panel only the
 * panel's columns are updated eagerly; each row's remainder then gets one fused rank-PANEL update
 * (contiguous, four pivot rows per pass), so the trailing matrix is swept once per panel instead of
 * once per column. Zero multipliers are skipped and each row's last nonzero column is tracked, so
 * banded and sparse matrices cost a small fraction of the dense 2n^3/3, and so do their solves.
 */
export function* envelopeLuWork(lu: Float64Array, n: number): Work<LuFactors> {
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
  return { n, lu, perm, lowerStart, upperEnd: rowEnd, zeroPivotColumn, factoredBy: 'typescript', solvesWith: TYPESCRIPT_DENSE_KERNELS };
}

export const TYPESCRIPT_DENSE_KERNELS: DenseKernels = {
  backend: 'typescript',
  multiplyByTransposeRows: multiplyByTransposeRowsLoop,
  // WORK_PER_YIELD multiply-adds, in whole 4-row register blocks where a row is short enough.
  productRows(maddsPerRow) {
    const rows = Math.floor(WORK_PER_YIELD / Math.max(1, maddsPerRow));
    return rows >= 4 ? rows - (rows % 4) : Math.max(1, rows);
  },
  gemm,
  subtractProductRows,
  normalProduct,
  addBlockAndTransposeProduct,
  projectOut,
  combineRows,
  combineRowBlock,
  solveRTransposedBlock,
  thinQrWork,
  orthonormalizeRows(a, row, p, n) {
    a.set(runSync(thinQrWork(a.slice(row * n, (row + p) * n), p, n)).q, row * n);
  },
  *bidiagonalOfColumnsWork(columns, p, c) {
    const r = yield* triangularFactorWork(columns, p, c);
    return yield* bidiagonalizeWork(r, p);
  },
  bidiagonalOfSquare(matrix, n, d, e) {
    const bidiagonal = runSync(TYPESCRIPT_DENSE_KERNELS.bidiagonalOfColumnsWork(matrix, n, n));
    d.set(bidiagonal.d);
    e.set(bidiagonal.e);
  },
  luWork: envelopeLuWork,
  luSolveInPlace(f, y) {
    const { n, lu, lowerStart, upperEnd } = f;
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
  },
  luSolveTransposedInPlace(f, z) {
    const { n, lu, lowerStart, upperEnd } = f;
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
  },
};
