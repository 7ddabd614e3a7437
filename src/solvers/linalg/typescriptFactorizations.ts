/**
 * The TypeScript dense kernels' factorizations (./typescriptDenseKernels.ts): Householder QR and
 * bidiagonalization, and the envelope LU, on flat row-major Float64Array. They yield (undefined) every
 * few milliseconds of work so the event loop keeps control.
 */
import type { Work } from '../cooperative.js';
import { norm2 } from '../matrix.js';
import type { Bidiagonal, LuFactors } from './denseKernels.js';

/** Multiply-adds between two yields (a few milliseconds). */
export const WORK_PER_YIELD = 1_000_000;
/** Columns eliminated per panel of the envelope LU: the rows below are swept once per panel, not once per column. */
const PANEL = 8;
/** Trailing rows of the envelope LU updated between two yields. */
const ROWS_PER_SLICE = 128;

/**
 * Householder thin QR of M = A^T, w[j * c + i] = M[i][j]: because A is stored by rows, the columns
 * of M are contiguous and every reflector and update runs over contiguous memory. Householder (not
 * Gram-Schmidt) keeps Q orthonormal to machine precision, which the principal angles need down to
 * 1e-7 rad and below.
 */
export function* thinQrWork(w: Float64Array, p: number, c: number): Work<{ q: Float64Array; r: Float64Array }> {
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
  return { n, lu, perm, lowerStart, upperEnd: rowEnd, zeroPivotColumn, factoredBy: 'typescript' };
}
