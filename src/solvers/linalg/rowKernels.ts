/**
 * The products every iteration is made of, on a machine's rows X (p x c, row-major, e.g. A_i or
 * Q_i^T restricted to its column support): X v (a dot product per row), X^T w (a combination of
 * the rows), and the fused pass that does both with each row read once (d_k = x_k . v - bias_k,
 * then y += scale d_k x_k: the gradient methods' A_i^T (A_i x - b_i), APC's Q_i (Q_i^T xbar - qtx0)).
 * Each row k is read only over its nonzero extent [start[k], end[k]) (see DenseMachineData): skipping
 * exact zeros changes no result and makes banded and sparse data cheap.
 *
 * TypeScript path: rows are taken eight (or four) at a time over the columns they share, so that
 * each load of v (or load and store of y) serves eight rows and the eight dot products are eight
 * independent accumulators (a single running sum is bound by the latency of one addition per
 * element; measured at n = 2000, the fused pass goes from ~11 ms row by row to ~4.7 ms). The ragged
 * ends of the rows' extents, and rows that share too few columns with their neighbours (sparse
 * rows), go row by row. (Eight rows: eight accumulators still fit the registers V8 allocates;
 * measured 8 > 10 > 6, 12, 16 > 4 rows.)
 * Index sums are written `(o + t) | 0` (every offset is below 2^31): V8 then adds without an
 * overflow check per access (measured ~5-7% on the 8-row blocks).
 * Results equal the row-by-row sums up to rounding (the order of the additions differs).
 *
 * Vector paths: runs of rows that are dense over the union of their extents go to the vector kernels
 * the caller passes (`vectorKernels`; null: the TypeScript loops do every row) on that union (the
 * exact zeros inside it add exact zeros); the rest takes the TypeScript loops. The caller chooses
 * the kernels once per run and thread (../machines/placement.ts):
 *  - native backend: the addon's row kernels, the same blocks in C with four-lane vectors
 *    (native/src/row_kernels.c);
 *  - TypeScript backend, for matrices in a solver run's WebAssembly arena (see ./wasmRowKernels.ts):
 *    the same blocks in WebAssembly SIMD, two lanes (their calls refuse a matrix outside the arena).
 * Both are single-threaded like this file, so the engine threads every path alike; the fused one
 * reads each row once where two dgemv calls would read it twice.
 */
import { WasmRowKernels, type RowKernels } from './wasmRowKernels.js';

/** A block whose rows share fewer columns than this goes row by row. */
const MIN_SHARED_WIDTH = 16;
/**
 * Fewest entries (rows x union width) worth a vector call: the N-API crossing costs well under a
 * microsecond, the TypeScript loops ~1 ns per entry (n = 250, m = 50, native D-HBM: 126 -> 39
 * microseconds per iteration from 4096 to 1024).
 */
const VECTOR_MIN_ENTRIES = 1024;
/**
 * A run of rows goes to the vector kernels when rows x union width is at most this times its
 * nonzero extents: they do an entry several times faster than the TypeScript loops, so reading
 * zeros inside the union still pays up to here (sherman5, m = 8: APC 1.5 -> 1.0 ms, D-HBM 1.2 ->
 * 0.6 ms from 1.5 to 4, measured with dgemv). The WebAssembly kernels are ~2.4x the loops, the C
 * ones ~3.3x: hence 2 for the former.
 */
const NATIVE_MAX_FILL = 4;
const WASM_MAX_FILL = 2;
/** Rows per vector call when a whole matrix is not dense enough for one. */
const VECTOR_RUN_ROWS = 64;

/** Union extent [span[0], span[1]) of the rows last tested by `denseRun` (module scratch, no allocation). */
const span = new Int32Array(2);

/** The vector kernels for rows of c columns, or null: the TypeScript loops then do all the rows. */
function usableKernels(kernels: RowKernels | null, c: number): RowKernels | null {
  return kernels instanceof WasmRowKernels && c > kernels.maxCols ? null : kernels;
}

/** Whether rows [k0, k1) are dense enough over the union of their extents for one call of `kernels`; sets `span`. */
function denseRun(kernels: RowKernels, start: Int32Array, end: Int32Array, k0: number, k1: number): boolean {
  let lo = Infinity;
  let hi = -Infinity;
  let entries = 0;
  for (let k = k0; k < k1; k++) {
    const s = start[k];
    const e = end[k];
    if (e <= s) continue;
    if (s < lo) lo = s;
    if (e > hi) hi = e;
    entries += e - s;
  }
  if (entries === 0) return false;
  span[0] = lo;
  span[1] = hi;
  const area = (k1 - k0) * (hi - lo);
  const maxFill = kernels instanceof WasmRowKernels ? WASM_MAX_FILL : NATIVE_MAX_FILL;
  return area >= VECTOR_MIN_ENTRIES && area <= maxFill * entries;
}

// ---------------------------------------------------------------------------------------------
// Single rows and blocks of 8 and 4 rows over a shared column range [lo, hi).

/** sum over t in [from, to) of x[off + t] v[t]. */
function rangeDot(x: Float64Array, off: number, from: number, to: number, v: Float64Array): number {
  let s = 0;
  for (let t = from; t < to; t++) s += x[off + t] * v[t];
  return s;
}

/** y[yOffset + t] += coef x[off + t] for t in [from, to). */
function rangeAxpy(coef: number, x: Float64Array, off: number, from: number, to: number, y: Float64Array, yOffset: number): void {
  const shift = off - yOffset;
  for (let t = from + yOffset, e = to + yOffset; t < e; t++) y[t] += coef * x[shift + t];
}

/** out[at + j] = sum over t in [lo, hi) of x[o + j c + t] v[t], j < 8. */
function dots8(x: Float64Array, o: number, c: number, lo: number, hi: number, v: Float64Array, out: Float64Array, at: number): void {
  const o1 = o + c;
  const o2 = o1 + c;
  const o3 = o2 + c;
  const o4 = o3 + c;
  const o5 = o4 + c;
  const o6 = o5 + c;
  const o7 = o6 + c;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let s4 = 0;
  let s5 = 0;
  let s6 = 0;
  let s7 = 0;
  for (let t = lo; t < hi; t = (t + 1) | 0) {
    const vt = v[t];
    s0 += x[(o + t) | 0] * vt;
    s1 += x[(o1 + t) | 0] * vt;
    s2 += x[(o2 + t) | 0] * vt;
    s3 += x[(o3 + t) | 0] * vt;
    s4 += x[(o4 + t) | 0] * vt;
    s5 += x[(o5 + t) | 0] * vt;
    s6 += x[(o6 + t) | 0] * vt;
    s7 += x[(o7 + t) | 0] * vt;
  }
  out[at] = s0;
  out[at + 1] = s1;
  out[at + 2] = s2;
  out[at + 3] = s3;
  out[at + 4] = s4;
  out[at + 5] = s5;
  out[at + 6] = s6;
  out[at + 7] = s7;
}

/** y[yOffset + t] += scale sum_j w[at + j] x[o + j c + t] for t in [lo, hi), j < 8. */
function combine8(
  x: Float64Array,
  o: number,
  c: number,
  lo: number,
  hi: number,
  w: Float64Array,
  at: number,
  scale: number,
  y: Float64Array,
  yOffset: number,
): void {
  const c0 = scale * w[at];
  const c1 = scale * w[at + 1];
  const c2 = scale * w[at + 2];
  const c3 = scale * w[at + 3];
  const c4 = scale * w[at + 4];
  const c5 = scale * w[at + 5];
  const c6 = scale * w[at + 6];
  const c7 = scale * w[at + 7];
  const o0 = o - yOffset;
  const o1 = o0 + c;
  const o2 = o1 + c;
  const o3 = o2 + c;
  const o4 = o3 + c;
  const o5 = o4 + c;
  const o6 = o5 + c;
  const o7 = o6 + c;
  for (let t = lo + yOffset, e = hi + yOffset; t < e; t = (t + 1) | 0) {
    y[t] +=
      c0 * x[(o0 + t) | 0] +
      c1 * x[(o1 + t) | 0] +
      c2 * x[(o2 + t) | 0] +
      c3 * x[(o3 + t) | 0] +
      c4 * x[(o4 + t) | 0] +
      c5 * x[(o5 + t) | 0] +
      c6 * x[(o6 + t) | 0] +
      c7 * x[(o7 + t) | 0];
  }
}

function dots4(x: Float64Array, o: number, c: number, lo: number, hi: number, v: Float64Array, out: Float64Array, at: number): void {
  const o1 = o + c;
  const o2 = o1 + c;
  const o3 = o2 + c;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let t = lo; t < hi; t = (t + 1) | 0) {
    const vt = v[t];
    s0 += x[(o + t) | 0] * vt;
    s1 += x[(o1 + t) | 0] * vt;
    s2 += x[(o2 + t) | 0] * vt;
    s3 += x[(o3 + t) | 0] * vt;
  }
  out[at] = s0;
  out[at + 1] = s1;
  out[at + 2] = s2;
  out[at + 3] = s3;
}

function combine4(
  x: Float64Array,
  o: number,
  c: number,
  lo: number,
  hi: number,
  w: Float64Array,
  at: number,
  scale: number,
  y: Float64Array,
  yOffset: number,
): void {
  const c0 = scale * w[at];
  const c1 = scale * w[at + 1];
  const c2 = scale * w[at + 2];
  const c3 = scale * w[at + 3];
  const o0 = o - yOffset;
  const o1 = o0 + c;
  const o2 = o1 + c;
  const o3 = o2 + c;
  for (let t = lo + yOffset, e = hi + yOffset; t < e; t = (t + 1) | 0)
    y[t] += c0 * x[(o0 + t) | 0] + c1 * x[(o1 + t) | 0] + c2 * x[(o2 + t) | 0] + c3 * x[(o3 + t) | 0];
}

/** Columns shared by the block `blockAt` chose: [shared[0], shared[1]) (module scratch, no allocation). */
const shared = new Int32Array(2);

/** Largest start and smallest end of rows [k, k + rows): the width of the columns they all cover; sets `shared`. */
function sharedExtent(start: Int32Array, end: Int32Array, k: number, rows: number): number {
  let lo = start[k];
  let hi = end[k];
  for (let j = 1; j < rows; j++) {
    const s = start[k + j];
    const e = end[k + j];
    if (s > lo) lo = s;
    if (e < hi) hi = e;
  }
  shared[0] = lo;
  shared[1] = hi;
  return hi - lo;
}

/**
 * How many rows from k (before k1) to take together: 8 or 4 when they share at least
 * MIN_SHARED_WIDTH columns (then `shared` holds those columns), else 1. Greedy, so a row that
 * breaks a block is taken alone and blocks resume right after it; a row too short to share that
 * many columns is taken alone at once (sparse rows cost no block test).
 */
function blockAt(start: Int32Array, end: Int32Array, k: number, k1: number): number {
  if (end[k] - start[k] < MIN_SHARED_WIDTH) return 1;
  if (k + 8 <= k1 && sharedExtent(start, end, k, 8) >= MIN_SHARED_WIDTH) return 8;
  if (k + 4 <= k1 && sharedExtent(start, end, k, 4) >= MIN_SHARED_WIDTH) return 4;
  return 1;
}

// ---------------------------------------------------------------------------------------------
// TypeScript paths over rows [k0, k1).

function multiplyRowsRange(
  x: Float64Array,
  c: number,
  start: Int32Array,
  end: Int32Array,
  v: Float64Array,
  out: Float64Array,
  outOffset: number,
  k0: number,
  k1: number,
): void {
  for (let k = k0; k < k1;) {
    const rows = blockAt(start, end, k, k1);
    if (rows === 1) {
      out[outOffset + k] = rangeDot(x, k * c, start[k], end[k], v);
      k++;
      continue;
    }
    const lo = shared[0];
    const hi = shared[1];
    if (rows === 8) dots8(x, k * c, c, lo, hi, v, out, outOffset + k);
    else dots4(x, k * c, c, lo, hi, v, out, outOffset + k);
    // The ragged ends of the rows' extents.
    for (let j = k; j < k + rows; j++) {
      if (start[j] < lo) out[outOffset + j] += rangeDot(x, j * c, start[j], lo, v);
      if (end[j] > hi) out[outOffset + j] += rangeDot(x, j * c, hi, end[j], v);
    }
    k += rows;
  }
}

function accumulateRange(
  x: Float64Array,
  c: number,
  start: Int32Array,
  end: Int32Array,
  w: Float64Array,
  wOffset: number,
  scale: number,
  y: Float64Array,
  yOffset: number,
  k0: number,
  k1: number,
): void {
  for (let k = k0; k < k1;) {
    const rows = blockAt(start, end, k, k1);
    if (rows === 1) {
      rangeAxpy(scale * w[wOffset + k], x, k * c, start[k], end[k], y, yOffset);
      k++;
      continue;
    }
    const lo = shared[0];
    const hi = shared[1];
    if (rows === 8) combine8(x, k * c, c, lo, hi, w, wOffset + k, scale, y, yOffset);
    else combine4(x, k * c, c, lo, hi, w, wOffset + k, scale, y, yOffset);
    for (let j = k; j < k + rows; j++) {
      const coef = scale * w[wOffset + j];
      if (start[j] < lo) rangeAxpy(coef, x, j * c, start[j], lo, y, yOffset);
      if (end[j] > hi) rangeAxpy(coef, x, j * c, hi, end[j], y, yOffset);
    }
    k += rows;
  }
}

function fusedRange(
  x: Float64Array,
  c: number,
  start: Int32Array,
  end: Int32Array,
  v: Float64Array,
  bias: Float64Array,
  dots: Float64Array,
  dotsOffset: number,
  scale: number,
  y: Float64Array,
  yOffset: number,
  k0: number,
  k1: number,
): void {
  for (let k = k0; k < k1;) {
    const rows = blockAt(start, end, k, k1);
    if (rows === 1) {
      const d = rangeDot(x, k * c, start[k], end[k], v) - bias[k];
      dots[dotsOffset + k] = d;
      rangeAxpy(scale * d, x, k * c, start[k], end[k], y, yOffset);
      k++;
      continue;
    }
    const lo = shared[0];
    const hi = shared[1];
    // All the block's dot products first (each is needed whole before its row's update) ...
    if (rows === 8) dots8(x, k * c, c, lo, hi, v, dots, dotsOffset + k);
    else dots4(x, k * c, c, lo, hi, v, dots, dotsOffset + k);
    for (let j = k; j < k + rows; j++) {
      let d = dots[dotsOffset + j];
      if (start[j] < lo) d += rangeDot(x, j * c, start[j], lo, v);
      if (end[j] > hi) d += rangeDot(x, j * c, hi, end[j], v);
      dots[dotsOffset + j] = d - bias[j];
    }
    // ... then the block's update, while its rows are still in cache.
    if (rows === 8) combine8(x, k * c, c, lo, hi, dots, dotsOffset + k, scale, y, yOffset);
    else combine4(x, k * c, c, lo, hi, dots, dotsOffset + k, scale, y, yOffset);
    for (let j = k; j < k + rows; j++) {
      const coef = scale * dots[dotsOffset + j];
      if (start[j] < lo) rangeAxpy(coef, x, j * c, start[j], lo, y, yOffset);
      if (end[j] > hi) rangeAxpy(coef, x, j * c, hi, end[j], y, yOffset);
    }
    k += rows;
  }
}

// ---------------------------------------------------------------------------------------------
// Public kernels: vector kernels on runs where dense, TypeScript blocks elsewhere.

/** out[outOffset + k] = sum_t X[k][t] v[t] for k < p. */
export function multiplyRows(
  vectorKernels: RowKernels | null,
  x: Float64Array,
  p: number,
  c: number,
  start: Int32Array,
  end: Int32Array,
  v: Float64Array,
  out: Float64Array,
  outOffset = 0,
): void {
  const kernels = p * c < VECTOR_MIN_ENTRIES ? null : usableKernels(vectorKernels, c);
  if (kernels === null) {
    multiplyRowsRange(x, c, start, end, v, out, outOffset, 0, p);
    return;
  }
  const runRows = denseRun(kernels, start, end, 0, p) ? p : VECTOR_RUN_ROWS;
  for (let k0 = 0; k0 < p; k0 += runRows) {
    const k1 = Math.min(p, k0 + runRows);
    if (runRows === p || denseRun(kernels, start, end, k0, k1)) vectorMultiply(kernels, x, c, k0, k1, v, out, outOffset);
    else multiplyRowsRange(x, c, start, end, v, out, outOffset, k0, k1);
  }
}

/** y[yOffset + t] += scale * sum_k w[wOffset + k] X[k][t] for t < c. */
export function accumulateRowCombination(
  vectorKernels: RowKernels | null,
  x: Float64Array,
  p: number,
  c: number,
  start: Int32Array,
  end: Int32Array,
  w: Float64Array,
  wOffset: number,
  scale: number,
  y: Float64Array,
  yOffset = 0,
): void {
  const kernels = p * c < VECTOR_MIN_ENTRIES ? null : usableKernels(vectorKernels, c);
  if (kernels === null) {
    accumulateRange(x, c, start, end, w, wOffset, scale, y, yOffset, 0, p);
    return;
  }
  const runRows = denseRun(kernels, start, end, 0, p) ? p : VECTOR_RUN_ROWS;
  for (let k0 = 0; k0 < p; k0 += runRows) {
    const k1 = Math.min(p, k0 + runRows);
    if (runRows === p || denseRun(kernels, start, end, k0, k1)) vectorCombine(kernels, x, c, k0, k1, w, wOffset, scale, y, yOffset);
    else accumulateRange(x, c, start, end, w, wOffset, scale, y, yOffset, k0, k1);
  }
}

/**
 * The fused pass, each row read once: for k < p,
 *   dots[dotsOffset + k] = sum_t X[k][t] v[t] - bias[k],   then   y[yOffset + t] += scale dots[dotsOffset + k] X[k][t].
 * With bias = b_i, scale = 1 it gives the residual A_i x - b_i and the gradient term A_i^T (A_i x - b_i);
 * with bias = qtx0, scale = -gamma, APC's w_i = Q_i^T xbar - qtx0 and x_i -= gamma Q_i w_i.
 */
export function fusedRowPass(
  vectorKernels: RowKernels | null,
  x: Float64Array,
  p: number,
  c: number,
  start: Int32Array,
  end: Int32Array,
  v: Float64Array,
  bias: Float64Array,
  dots: Float64Array,
  dotsOffset: number,
  scale: number,
  y: Float64Array,
  yOffset = 0,
): void {
  const kernels = p * c < VECTOR_MIN_ENTRIES ? null : usableKernels(vectorKernels, c);
  if (kernels === null) {
    fusedRange(x, c, start, end, v, bias, dots, dotsOffset, scale, y, yOffset, 0, p);
    return;
  }
  const runRows = denseRun(kernels, start, end, 0, p) ? p : VECTOR_RUN_ROWS;
  for (let k0 = 0; k0 < p; k0 += runRows) {
    const k1 = Math.min(p, k0 + runRows);
    if (runRows === p || denseRun(kernels, start, end, k0, k1)) {
      const lo = span[0];
      kernels.rowsFused(k1 - k0, span[1] - lo, scale, x, k0 * c + lo, c, v, lo, bias, k0, dots, dotsOffset + k0, y, yOffset + lo);
    } else {
      fusedRange(x, c, start, end, v, bias, dots, dotsOffset, scale, y, yOffset, k0, k1);
    }
  }
}

/** out[outOffset + k] = X[k] . v for k in [k0, k1), over the union extent `span` set by denseRun. */
function vectorMultiply(
  kernels: RowKernels,
  x: Float64Array,
  c: number,
  k0: number,
  k1: number,
  v: Float64Array,
  out: Float64Array,
  outOffset: number,
): void {
  const lo = span[0];
  kernels.rowsDot(k1 - k0, span[1] - lo, x, k0 * c + lo, c, v, lo, out, outOffset + k0);
}

/** y[yOffset + t] += scale sum_{k in [k0, k1)} w[wOffset + k] X[k][t], over the union extent `span`. */
function vectorCombine(
  kernels: RowKernels,
  x: Float64Array,
  c: number,
  k0: number,
  k1: number,
  w: Float64Array,
  wOffset: number,
  scale: number,
  y: Float64Array,
  yOffset: number,
): void {
  const lo = span[0];
  kernels.rowsCombine(k1 - k0, span[1] - lo, scale, x, k0 * c + lo, c, w, wOffset + k0, y, yOffset + lo);
}
