/**
 * The dense kernels on flat Float64Array (./denseKernels.ts): the TypeScript backend's, and the
 * native backend's for calls too small to pay for the addon's entry. Loops run along rows (the
 * storage order), four rows fused per pass where a row is reused, so each pass loads and stores the
 * row it updates once per four multiply-adds. The factorizations (QR, bidiagonalization, envelope
 * LU) are in ./typescriptFactorizations.ts.
 */
import { runSync } from '../cooperative.js';
import { projectionRows, type DenseKernels } from './denseKernels.js';
import { accumulateRowCombination, fusedRowPass, multiplyRows } from './rowKernels.js';
import {
  bidiagonalizeWork,
  formQWork,
  householderFactorWork,
  luWork,
  thinQrWork,
  triangularFactorWork,
  WORK_PER_YIELD,
} from './typescriptFactorizations.js';
import {
  packedCombineRowBlock,
  packedGemm,
  packedMultiplyByTransposeRows,
  packedProductsOn,
  packedSubtractProductRows,
  WASM_MADDS_PER_CALL,
  wasmKrylovStorage,
  wasmNorm,
  wasmProjectOut,
  wasmRecurrenceStep,
  wasmScaledCopy,
} from './wasmDenseKernels.js';
/** Inner-dimension tile of the product loop: the 8 row segments of a 4 x 4 register block stay in L1 cache. */
const TILE = 512;

/**
 * Rows [rowStart, rowEnd) of C = X Y^T: every entry is a dot product of two contiguous rows. A 4 x 4
 * register block reads 8 rows once per 16 products; the inner dimension is tiled so the 8 row
 * segments stay in L1 cache.
 */
export const multiplyByTransposeRowsLoop: DenseKernels['multiplyByTransposeRows'] = (
  x,
  y,
  len,
  rowStart,
  rowEnd,
  cols,
  out,
  outStride,
  outRowOffset = 0,
) => {
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
};

/** Row-major C = alpha op(A) B + beta C, op(A) m x kk (A stored kk x m when transposed), B kk x n, C m x n. */
export const gemmLoop: DenseKernels['gemm'] = (transA, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc) => {
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
};

/** Rows [rowStart, rowEnd) of W -= C Q; four rows of Q per pass: one load and store of W's row per four multiply-adds. */
export const subtractProductRowsLoop: DenseKernels['subtractProductRows'] = (c, q, w, k, len, rowStart, rowEnd) => {
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
};

/**
 * y = M^T (M x), one pass over M (`t`: M x): the row kernels' fused pass on their TypeScript blocks of 4 and 8 rows
 * (../linalg/rowKernels.ts), whose dot products keep several sums apart: 2-3x the rate of a row at a time (400 x 4000:
 * 1.8 ms).
 */
function normalProduct(m: Float64Array, rows: number, cols: number, x: Float64Array, y: Float64Array, t: Float64Array): void {
  y.fill(0, 0, cols);
  fusedRowPass(null, m, rows, cols, new Int32Array(rows), new Int32Array(rows).fill(cols), x, new Float64Array(rows), t, 0, 1, y);
}

/** y_i += G x_j (row dots) and y_j += G^T x_i (row axpys), one pass over G. */
export const addBlockAndTransposeProduct: DenseKernels['addBlockAndTransposeProduct'] = (g, start, pi, pj, x, oi, oj, y) => {
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
};

/** DenseKernels.recurrenceStep: alpha_j = v_j . w, then w -= alpha_j v_j + beta v_{j-1}; returns alpha_j. */
export function recurrenceStep(basis: Float64Array, n: number, j: number, beta: number, w: Float64Array): number {
  const offset = j * n;
  let alpha = 0;
  for (let r = 0; r < n; r++) alpha += basis[offset + r] * w[r];
  if (j > 0 && beta !== 0) {
    const previous = offset - n;
    for (let r = 0; r < n; r++) w[r] -= alpha * basis[offset + r] + beta * basis[previous + r];
  } else for (let r = 0; r < n; r++) w[r] -= alpha * basis[offset + r];
  return alpha;
}

/** DenseKernels.norm: |x[0 .. n)|_2. */
export function norm(x: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += x[i] * x[i];
  return Math.sqrt(s);
}

/** DenseKernels.krylovStorage in ordinary arrays: the native kernels', and the TypeScript ones' when WebAssembly declines. */
export function plainKrylovStorage(vectors: number, n: number): { basis: Float64Array; w: Float64Array } {
  return { basis: new Float64Array(vectors * n), w: new Float64Array(n) };
}

/** DenseKernels.scaledCopy: y = s x over n entries. */
export function scaledCopy(x: Float64Array, n: number, s: number, y: Float64Array): void {
  for (let i = 0; i < n; i++) y[i] = x[i] * s;
}

/** DenseKernels.projectOut: h = V w, then w -= V^T h; four basis vectors per pass over w, so w is loaded and stored once per four. */
export function projectOut(basis: Float64Array, n: number, count: number, w: Float64Array, h: Float64Array, skipBelow = 0): boolean {
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
  const { first, end, all } = projectionRows(h, count, skipBelow);
  i = first;
  for (; i + 4 <= end; i += 4) {
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
  for (; i < end; i++) {
    const off = i * n;
    const c = h[i];
    for (let r = 0; r < n; r++) w[r] -= c * basis[off + r];
  }
  return all;
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
export const combineRowBlock: DenseKernels['combineRowBlock'] = (k, kept, size, basis, n, r0, len, out) => {
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
};

/**
 * Right-hand sides from which solveRTransposedBlock goes by blocks of TRIANGULAR_BLOCK rows: the updates between the
 * diagonal blocks are then one product each (the packed WebAssembly kernel), where the loop below does axpys of w
 * entries: the Gram blocks from the rows' Gram matrix (../analysis/gramBlocks.ts, w = p = 400: 45 pairs of n = 4000,
 * m = 10 took ~4 s in the loop). Fewer (vectors, the block runs' K <= 64) keep the loop and its rounding. A diagonal
 * block's substitution stays in the loop, TRIANGULAR_BLOCK / p of the work. 16 rows against 64: the partition advice's
 * solves (p = 200 by w = 2000, dense n = 2000, m = 10) spent 0.94 s in the loop, 0.46 s now (CPU profiles), and the
 * TypeScript advice went 8.1-8.2 -> 6.1-6.4 s (bench/denseAdvise.ts typescript --n 2000); n = 1000 and 4000 within
 * the noise.
 */
const BLOCKED_SOLVE_MIN_COLUMNS = 128;
const TRIANGULAR_BLOCK = 16;

/** Row-major S = R^{-T} S in place (R p x p upper triangular, S p x w): forward substitution on w columns at once. */
function solveRTransposedBlock(r: Float64Array, p: number, s: Float64Array, w: number): void {
  if (w >= BLOCKED_SOLVE_MIN_COLUMNS && p > TRIANGULAR_BLOCK) {
    for (let i0 = 0; i0 < p; i0 += TRIANGULAR_BLOCK) {
      const i1 = Math.min(p, i0 + TRIANGULAR_BLOCK);
      // S_I -= R[0:i0, I]^T S[0:i0, :], then the diagonal block's substitution.
      if (i0 > 0) gemm(true, i1 - i0, w, i0, -1, r.subarray(i0), p, s, w, 1, s.subarray(i0 * w), w);
      solveRTransposedRows(r, p, s, w, i0, i1);
    }
    return;
  }
  solveRTransposedRows(r, p, s, w, 0, p);
}

/** Rows [i0, i1) of the forward substitution of solveRTransposedBlock, with the rows above i0 already eliminated. */
function solveRTransposedRows(r: Float64Array, p: number, s: Float64Array, w: number, i0: number, i1: number): void {
  for (let i = i0; i < i1; i++) {
    const si = i * w;
    // Row i of R^T is column i of R: R[l, i] for l <= i.
    for (let l = i0; l < i; l++) {
      const coef = r[l * p + i];
      if (coef === 0) continue;
      const sl = l * w;
      for (let j = 0; j < w; j++) s[si + j] -= coef * s[sl + j];
    }
    const d = r[i * p + i];
    for (let j = 0; j < w; j++) s[si + j] /= d;
  }
}

/** Row-major S = R^{-1} S in place (R p x p upper triangular, S p x w): back substitution on w columns at once. */
function solveRBlock(r: Float64Array, p: number, s: Float64Array, w: number): void {
  for (let i = p - 1; i >= 0; i--) {
    const si = i * w;
    for (let l = i + 1; l < p; l++) {
      const coef = r[i * p + l];
      if (coef === 0) continue;
      const sl = l * w;
      for (let j = 0; j < w; j++) s[si + j] -= coef * s[sl + j];
    }
    const d = r[i * p + i];
    for (let j = 0; j < w; j++) s[si + j] /= d;
  }
}

/** The products go to the packed WebAssembly SIMD kernel (./wasmDenseKernels.ts) first, to the loops when it declines. */
const multiplyByTransposeRows: DenseKernels['multiplyByTransposeRows'] = (...product) => {
  if (!packedMultiplyByTransposeRows(...product)) multiplyByTransposeRowsLoop(...product);
};
const gemm: DenseKernels['gemm'] = (...product) => {
  if (!vectorProduct(...product) && !packedGemm(...product)) gemmLoop(...product);
};

/**
 * op(A) b for one contiguous column b and A's rows contiguous, beta = 0: the row kernels' TypeScript blocks of 4 and 8
 * rows (../linalg/rowKernels.ts: dot products with several sums apart, or combinations of rows), ~2.5x the loop's rate
 * on a 400 x 4000 A. false: not such a product.
 */
const vectorProduct = (...[transA, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc]: Parameters<DenseKernels['gemm']>): boolean => {
  if (n !== 1 || ldb !== 1 || ldc !== 1 || beta !== 0 || lda !== (transA ? m : kk) || m * kk < VECTOR_PRODUCT_MIN_ENTRIES) return false;
  const rows = transA ? kk : m;
  const start = new Int32Array(rows);
  const end = new Int32Array(rows).fill(lda);
  if (transA) {
    c.fill(0, 0, m);
    accumulateRowCombination(null, a, kk, m, start, end, b, 0, alpha, c);
    return true;
  }
  multiplyRows(null, a, m, kk, start, end, b, c);
  if (alpha !== 1) for (let i = 0; i < m; i++) c[i] *= alpha;
  return true;
};
/** Entries of A from which vectorProduct takes a one-column product (below, the loop's setup costs less). */
const VECTOR_PRODUCT_MIN_ENTRIES = 4096;
const subtractProductRows: DenseKernels['subtractProductRows'] = (...product) => {
  if (!packedSubtractProductRows(...product)) subtractProductRowsLoop(...product);
};

export const TYPESCRIPT_DENSE_KERNELS: DenseKernels = {
  backend: 'typescript',
  multiplyByTransposeRows,
  // WORK_PER_YIELD multiply-adds on the loops, WASM_MADDS_PER_CALL on the packed kernel (a few ms either
  // way between two yields), in whole 4-row register blocks where a row is short enough.
  productRows(maddsPerRow) {
    const rows = Math.floor((packedProductsOn() ? WASM_MADDS_PER_CALL : WORK_PER_YIELD) / Math.max(1, maddsPerRow));
    return rows >= 4 ? rows - (rows % 4) : Math.max(1, rows);
  },
  gemm,
  subtractProductRows,
  normalProduct,
  addBlockAndTransposeProduct,
  krylovStorage: (vectors, n) => wasmKrylovStorage(vectors, n) ?? plainKrylovStorage(vectors, n),
  recurrenceStep: (basis, n, j, beta, w) => wasmRecurrenceStep(basis, n, j, beta, w) ?? recurrenceStep(basis, n, j, beta, w),
  norm: (x, n) => wasmNorm(x, n) ?? norm(x, n),
  scaledCopy(x, n, s, y) {
    if (!wasmScaledCopy(x, n, s, y)) scaledCopy(x, n, s, y);
  },
  projectOut: (basis, n, count, w, h, skipBelow = 0) =>
    wasmProjectOut(basis, n, count, w, h, skipBelow) ?? projectOut(basis, n, count, w, h, skipBelow),
  combineRows,
  combineRowBlock(...block) {
    if (!packedCombineRowBlock(...block)) combineRowBlock(...block);
  },
  solveRTransposedBlock,
  solveRBlock,
  thinQrWork: (w, p, c) => thinQrWork(w, p, c, TYPESCRIPT_DENSE_KERNELS),
  householderFactorWork: (w, p, c) => householderFactorWork(w, p, c, TYPESCRIPT_DENSE_KERNELS),
  formQWork: (reflectors) => formQWork(TYPESCRIPT_DENSE_KERNELS, reflectors),
  orthonormalizeRows(a, row, p, n) {
    a.set(runSync(thinQrWork(a.slice(row * n, (row + p) * n), p, n, TYPESCRIPT_DENSE_KERNELS)).q, row * n);
  },
  *bidiagonalOfColumnsWork(columns, p, c) {
    const r = yield* triangularFactorWork(columns, p, c, TYPESCRIPT_DENSE_KERNELS);
    return yield* bidiagonalizeWork(r, p);
  },
  bidiagonalOfSquare(matrix, n, d, e) {
    const bidiagonal = runSync(TYPESCRIPT_DENSE_KERNELS.bidiagonalOfColumnsWork(matrix, n, n));
    d.set(bidiagonal.d);
    e.set(bidiagonal.e);
  },
  *luWork(lu, n) {
    return { ...(yield* luWork(lu, n, TYPESCRIPT_DENSE_KERNELS)), solvesWith: TYPESCRIPT_DENSE_KERNELS };
  },
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
