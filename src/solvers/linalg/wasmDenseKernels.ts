/**
 * The TypeScript backend's dense products in WebAssembly SIMD: gemm, multiplyByTransposeRows and
 * subtractProductRows of ./typescriptDenseKernels.ts on packed panels (GotoBLAS's layout): the
 * operands are packed from their Float64Arrays straight into this thread's WebAssembly memory, op(A)
 * in slivers of 4 rows by KC_DEPTH, B in slivers of 4 columns, and ./wasm/rowKernels.wat's
 * packedProduct streams them through a 4 x 4 register tile. Packing touches each entry of A and B
 * once and C twice (in and out) per call, O(mk + kn + mn) against the product's O(mnk).
 *
 * ./typescriptDenseKernels.ts calls these first; a call too small to pay for the packing, or made
 * while the WebAssembly kernels are off (LINALG_WASM=off, useWasmKernels(false), no SIMD), returns
 * false and runs the loops.
 */
import type { Work } from '../cooperative.js';
import { householderBidiagonalWork } from './bidiagonalReflectors.js';
import { projectionRows, type Bidiagonal, type DenseKernels } from './denseKernels.js';
import { denseProductsOn, type DenseProducts, wasmKernelsEnabled } from './wasmRowKernels.js';

/** Depth of a packed panel: a 4 x KC_DEPTH sliver of A and of B (8 KiB each) stay in L1 cache. */
const KC_DEPTH = 256;
/** Rows of A packed at once (MC_ROWS x KC_DEPTH, 128 KiB: L2 cache), passed by every sliver of B. */
const MC_ROWS = 64;
/** Most entries of C staged at once (32 MiB); taller products go by row blocks. */
const C_BLOCK_ENTRIES = 1 << 22;
/** Rows shorter than this are copied entry by entry (a subarray costs about as much as 30 entries). */
const SHORT_ROW = 32;
/**
 * Below this many multiply-adds the loops are faster (measured: the packed path wins from 8 x 8 x 8 on,
 * 2x at 16 x 16 x 16, 7x at 32 x 32 x 32; the loops run ~0.6 G multiply-adds/s).
 */
const MIN_MADDS = 512;
/**
 * multiplyByTransposeRows packs when a row of C costs this many multiply-adds, whatever the rows: an
 * entry's value depends on its row and column only (each is one lane's sum, in order, over panels of
 * KC_DEPTH), so a row range gives the bits of the whole product, as the loop's does.
 */
const MIN_ROW_MADDS = 512;
/** Multiply-adds per call of a sliced product (productRows): 2-5 ms at the kernel's 5-12 GFlop/s, between two yields. */
export const WASM_MADDS_PER_CALL = 2.5e7;
const PAGE_BYTES = 65_536;
/** Largest memory this thread's products may use (1 GiB): a larger product runs the loops. */
const MAX_PAGES = 16_384;

interface Workspace {
  readonly memory: WebAssembly.Memory;
  readonly product: DenseProducts['packedProduct'];
  /** ./wasm/rowKernels.wat's blockProduct on operands in this memory. */
  readonly block: DenseProducts['blockProduct'];
  heap: Float64Array;
}

/** A memory of its own with the module instantiated on it; null when WebAssembly is unavailable. */
function newWorkspace(): Workspace | null {
  const memory = new WebAssembly.Memory({ initial: 1, maximum: MAX_PAGES, shared: true });
  const products = denseProductsOn(memory);
  if (products === null) return null;
  return { memory, product: products.packedProduct, block: products.blockProduct, heap: new Float64Array(memory.buffer) };
}

/** Grows `ws` to hold `doubles` entries; false when that is more than MAX_PAGES. */
function fits(ws: Workspace, doubles: number): boolean {
  const pages = Math.ceil((8 * doubles) / PAGE_BYTES);
  if (pages > MAX_PAGES) return false;
  const have = ws.memory.buffer.byteLength / PAGE_BYTES;
  if (pages > have) {
    (ws.memory as WebAssembly.Memory & { grow(delta: number): number }).grow(pages - have);
    ws.heap = new Float64Array(ws.memory.buffer);
  }
  return true;
}

let workspace: Workspace | null | undefined;

/** This thread's memory for the products (which never yield while they use it), grown to hold `doubles` entries; null when WebAssembly is unavailable or the size too large. */
function heapOf(doubles: number): Workspace | null {
  if (workspace === undefined) workspace = newWorkspace();
  return workspace !== null && fits(workspace, doubles) ? workspace : null;
}

/**
 * C = alpha A B + beta C with A(i, l) = a[aOff + i aRow + l aCol], B(l, j) = b[bOff + l bRow + j bCol],
 * C(i, j) = c[cOff + i ldc + j]: every product below is this one with its strides. False (nothing
 * done) when the memory cannot be had.
 */
function packedProduct(
  m: number,
  n: number,
  k: number,
  alpha: number,
  a: Float64Array,
  aOff: number,
  aRow: number,
  aCol: number,
  b: Float64Array,
  bOff: number,
  bRow: number,
  bCol: number,
  beta: number,
  c: Float64Array,
  cOff: number,
  ldc: number,
): boolean {
  const np = (n + 3) & ~3;
  // Rows of A as copied: a multiple of 8 entries plus 4, so that rows are not a power of two apart in the caches.
  const lda = ((k + 7) & ~7) + 4;
  const blockRows = Math.max(MC_ROWS, Math.floor(C_BLOCK_ENTRIES / np / MC_ROWS) * MC_ROWS);
  const cRows = Math.min(blockRows, (m + 3) & ~3);
  // Layout (doubles): alpha B packed (k x np: panels of KC_DEPTH rows), MC_ROWS rows of A, the block of C (cRows x np).
  const bpAt = 0;
  const aAt = bpAt + k * np;
  const cAt = aAt + MC_ROWS * lda;
  const ws = heapOf(cAt + cRows * np);
  if (ws === null) return false;
  const heap = ws.heap;
  for (let l0 = 0; l0 < k; l0 += KC_DEPTH)
    packB(heap, bpAt + l0 * np, alpha, b, bOff + l0 * bRow, bRow, bCol, Math.min(KC_DEPTH, k - l0), n);
  for (let i0 = 0; i0 < m; i0 += blockRows) {
    const rows = Math.min(blockRows, m - i0);
    // The block of C, times beta (beta 0: not read), zero in the padding; rows copied whole when beta is 1.
    for (let i = 0; i < rows; i++) {
      const src = cOff + (i0 + i) * ldc;
      const dst = cAt + i * np;
      if (beta === 0) heap.fill(0, dst, dst + np);
      else {
        if (beta === 1 && n >= SHORT_ROW) heap.set(c.subarray(src, src + n), dst);
        else for (let j = 0; j < n; j++) heap[dst + j] = beta * c[src + j];
        heap.fill(0, dst + n, dst + np);
      }
    }
    heap.fill(0, cAt + rows * np, cAt + ((rows + 3) & ~3) * np);
    for (let ic = 0; ic < rows; ic += MC_ROWS) {
      const mc = Math.min(MC_ROWS, rows - ic);
      const mp = (mc + 3) & ~3;
      copyA(heap, aAt, lda, a, aOff + (i0 + ic) * aRow, aRow, aCol, mc, k);
      for (let l0 = 0; l0 < k; l0 += KC_DEPTH)
        ws.product(mp, np, Math.min(KC_DEPTH, k - l0), 8 * (aAt + l0), lda, 8 * (bpAt + l0 * np), 8 * (cAt + ic * np), np);
    }
    for (let i = 0; i < rows; i++) {
      const src = cAt + i * np;
      const dst = cOff + (i0 + i) * ldc;
      if (n >= SHORT_ROW) c.set(heap.subarray(src, src + n), dst);
      else for (let j = 0; j < n; j++) c[dst + j] = heap[src + j];
    }
  }
  return true;
}

/**
 * alpha B's rows [0, kc) from b[off] (B(l, j) = b[off + l bRow + j bCol]) into slivers of 4 columns at
 * `at`: entry (l, j) of sliver s at s 4 kc + 4 l + (j mod 4), zero past column n. Runs of entries that
 * are contiguous in b are read in order: along B's rows when bCol is 1, down its columns otherwise.
 */
function packB(
  heap: Float64Array,
  at: number,
  alpha: number,
  b: Float64Array,
  off: number,
  bRow: number,
  bCol: number,
  kc: number,
  n: number,
): void {
  const n4 = n & ~3;
  const sliverStep = 4 * kc;
  if (bCol === 1) {
    for (let l = 0; l < kc; l++) {
      const src = off + l * bRow;
      let dst = at + 4 * l;
      for (let j = 0; j < n4; j += 4, dst += sliverStep) {
        heap[dst] = alpha * b[src + j];
        heap[dst + 1] = alpha * b[src + j + 1];
        heap[dst + 2] = alpha * b[src + j + 2];
        heap[dst + 3] = alpha * b[src + j + 3];
      }
      for (let r = 0; r < 4 && n4 < n; r++) heap[dst + r] = n4 + r < n ? alpha * b[src + n4 + r] : 0;
    }
    return;
  }
  const np = (n + 3) & ~3;
  for (let j = 0; j < np; j++) {
    const sliver = at + (j >> 2) * sliverStep + (j & 3);
    if (j >= n) {
      for (let l = 0; l < kc; l++) heap[sliver + 4 * l] = 0;
      continue;
    }
    let src = off + j * bCol;
    for (let l = 0; l < kc; l++, src += bRow) heap[sliver + 4 * l] = alpha * b[src];
  }
}

/**
 * A's rows [0, mc) x [0, k) from a[off] (A(i, l) = a[off + i aRow + l aCol]) row-major at `at` (rows
 * lda apart), rows mc .. to the next multiple of 4 zero: a row of A itself is one copy; A^T (aRow 1)
 * is read along the rows of its storage.
 */
function copyA(
  heap: Float64Array,
  at: number,
  lda: number,
  a: Float64Array,
  off: number,
  aRow: number,
  aCol: number,
  mc: number,
  k: number,
): void {
  if (aCol === 1 && k >= SHORT_ROW) for (let i = 0; i < mc; i++) heap.set(a.subarray(off + i * aRow, off + i * aRow + k), at + i * lda);
  else if (aCol === 1)
    for (let i = 0; i < mc; i++) for (let l = 0, src = off + i * aRow, dst = at + i * lda; l < k; l++) heap[dst + l] = a[src + l];
  else
    for (let l = 0; l < k; l++) {
      const src = off + l * aCol;
      for (let i = 0, dst = at + l; i < mc; i++, dst += lda) heap[dst] = a[src + i * aRow];
    }
  for (let i = mc; i < ((mc + 3) & ~3); i++) heap.fill(0, at + i * lda, at + i * lda + k);
}

/** Whether a product of m x n x k multiply-adds runs here: large enough, and the WebAssembly kernels on. */
function worthPacking(m: number, n: number, k: number): boolean {
  return m > 0 && n > 0 && k > 0 && m * n * k >= MIN_MADDS && wasmKernelsEnabled();
}

/** Whether sliced products should take WASM_MADDS_PER_CALL per call (the kernels are on). */
export function packedProductsOn(): boolean {
  return wasmKernelsEnabled();
}

/** DenseKernels.gemm here; false: not done (too small, kernels off), run the loop. */
export function packedGemm(...[transA, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc]: Parameters<DenseKernels['gemm']>): boolean {
  return worthPacking(m, n, kk) && packedProduct(m, n, kk, alpha, a, 0, transA ? 1 : lda, transA ? lda : 1, b, 0, ldb, 1, beta, c, 0, ldc);
}

/** DenseKernels.multiplyByTransposeRows here (C = X Y^T: A(i, l) = X[rowStart + i, l], B(l, j) = Y[j, l]); false: run the loop. */
export function packedMultiplyByTransposeRows(
  ...[x, y, len, rowStart, rowEnd, cols, out, outStride, outRowOffset = 0]: Parameters<DenseKernels['multiplyByTransposeRows']>
): boolean {
  const rows = rowEnd - rowStart;
  return (
    rows > 0 &&
    cols * len >= MIN_ROW_MADDS &&
    wasmKernelsEnabled() &&
    packedProduct(rows, cols, len, 1, x, rowStart * len, len, 1, y, 0, 1, len, 0, out, (rowStart - outRowOffset) * outStride, outStride)
  );
}

/** DenseKernels.subtractProductRows here (W -= C Q: A(i, l) = C[rowStart + i, l], B = Q); false: run the loop. */
export function packedSubtractProductRows(
  ...[c, q, w, k, len, rowStart, rowEnd]: Parameters<DenseKernels['subtractProductRows']>
): boolean {
  const rows = rowEnd - rowStart;
  return worthPacking(rows, len, k) && packedProduct(rows, len, k, -1, c, rowStart * k, k, 1, q, 0, len, 1, 1, w, rowStart * len, len);
}

/** Multiply-adds of the bidiagonalization's passes between two yields (a few ms at their 2-4 G/s). */
const BIDIAGONAL_MADDS_PER_YIELD = 8_000_000;
/**
 * Memories of finished bidiagonalizations, kept for the next: each run holds its own for its whole
 * length, across its yields, while other work may run on the thread and use the products' memory.
 */
const spareWorkspaces: Workspace[] = [];
/** A memory larger than this (order ~2000) is dropped after its run: a shared memory never shrinks. */
const MAX_SPARE_BYTES = 32 * 1024 * 1024;

/**
 * Upper bidiagonal form (d, e) of the square row-major q x q matrix `b` (bidiagonalizeWork of
 * ./typescriptFactorizations.ts, the same reflectors), with the O(q^3) passes in WebAssembly
 * SIMD: per column, the left reflector's v^T B and rank-1 update, and the right reflector's B v and
 * rank-1 update, each one blockProduct over the trailing matrix, which stays in this run's memory.
 * `b` is left as it was. Null (nothing done) when WebAssembly or the memory is unavailable.
 */
export function* wasmBidiagonalizeWork(b: Float64Array, q: number): Work<Bidiagonal | null> {
  const ws = spareWorkspaces.pop() ?? newWorkspace();
  const vAt = q * q;
  const accAt = vAt + q;
  const sAt = accAt + q;
  if (ws === null || !fits(ws, sAt + q)) return null;
  try {
    const heap = ws.heap;
    heap.set(b.subarray(0, q * q));
    // Each reflector's v at vAt.
    return yield* householderBidiagonalWork(
      q,
      {
        b: heap,
        v: heap,
        leftAt: () => vAt,
        rightAt: () => vAt,
        left(k, beta) {
          const rows = q - k;
          const cols = q - k - 1;
          const trailing = 8 * (k * q + k + 1);
          // acc = v^T B[k.., k+1..]; B[k.., k+1..] -= beta v acc.
          ws.block(1, cols, rows, 1, 8 * vAt, 1, 1, trailing, q, 0, 8 * accAt, cols);
          ws.block(rows, cols, 1, -beta, 8 * vAt, 1, 1, 8 * accAt, cols, 1, trailing, q);
        },
        right(k, beta) {
          const cols = q - k - 1;
          const below = 8 * ((k + 1) * q + k + 1);
          // s = B[k+1.., k+1..] v; B[k+1.., k+1..] -= beta s v^T.
          ws.block(cols, 1, cols, 1, below, q, 1, 8 * vAt, 1, 0, 8 * sAt, 1);
          ws.block(cols, cols, 1, -beta, 8 * sAt, 1, 1, 8 * vAt, cols, 1, below, q);
        },
      },
      BIDIAGONAL_MADDS_PER_YIELD,
    );
  } finally {
    if (spareWorkspaces.length < 2 && ws.memory.buffer.byteLength <= MAX_SPARE_BYTES) spareWorkspaces.push(ws);
  }
}

/** DenseKernels.combineRowBlock here (out = K V[:, r0 .. r0 + len): A = K, B(l, j) = V[l, r0 + j]); false: run the loop. */
export function packedCombineRowBlock(...[k, kept, size, basis, n, r0, len, out]: Parameters<DenseKernels['combineRowBlock']>): boolean {
  return worthPacking(kept, len, size) && packedProduct(kept, len, size, 1, k, 0, size, 1, basis, r0, n, 1, 0, out, 0, len);
}

/**
 * Below this many entries a Krylov basis stays in an ordinary array: in cache the loops are nearly as
 * fast, and a memory and an instance of its own cost ~0.5-1 ms more than an array (measured at
 * 128 x 1000 and 41 x 5000 entries).
 */
const MIN_BASIS_ENTRIES = 1 << 16;
/** Largest Krylov storage in a memory (the kernels' byte offsets are 32-bit); beyond it, ordinary arrays and the loops. */
const MAX_BASIS_BYTES = 2 ** 31;

/** A Krylov basis's memory: the kernels instantiated on it, and where projectOut stages h (room for `hCapacity` entries). */
interface BasisMemory {
  readonly rows: DenseProducts;
  readonly hAt: number;
  readonly hCapacity: number;
  readonly heap: Float64Array;
}

/** The memories of this thread's Krylov storages, by their buffer (a basis or w is found by its own `.buffer`). */
const basisMemories = new WeakMap<ArrayBufferLike, BasisMemory>();

/**
 * DenseKernels.krylovStorage here: the basis (vectors x n) and w (n) at the start of a shared
 * WebAssembly memory of their own, then room for h, so that projectOut runs rowsDot and basisCombine
 * on them in place (no copy). Null when the kernels are off, the basis is small, or the memory cannot be had.
 */
export function wasmKrylovStorage(vectors: number, n: number): { basis: Float64Array; w: Float64Array } | null {
  const entries = vectors * n;
  if (entries < MIN_BASIS_ENTRIES || !wasmKernelsEnabled()) return null;
  // w and h start on 16-byte boundaries, as the basis does (the kernels load two entries at a time).
  const wAt = 16 * Math.ceil((8 * entries) / 16);
  const hAt = wAt + 16 * Math.ceil((8 * n) / 16);
  const bytes = hAt + 8 * vectors;
  if (bytes > MAX_BASIS_BYTES) return null;
  const pages = Math.ceil(bytes / PAGE_BYTES);
  let memory: WebAssembly.Memory;
  try {
    memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  } catch {
    return null;
  }
  const rows = denseProductsOn(memory);
  if (rows === null) return null;
  const buffer = memory.buffer;
  basisMemories.set(buffer, { rows, hAt, hCapacity: vectors, heap: new Float64Array(buffer) });
  return { basis: new Float64Array(buffer, 0, entries), w: new Float64Array(buffer, wAt, n) };
}

/**
 * DenseKernels.projectOut here (h = V w, then w -= V^T h on the rows projectionRows leaves), when V
 * and w are one Krylov storage's (wasmKrylovStorage); null: run the loop. The kernels sum each dot in
 * two lanes, so h and w agree with the loop's to rounding, not bit for bit.
 */
export function wasmProjectOut(
  basis: Float64Array,
  n: number,
  count: number,
  w: Float64Array,
  h: Float64Array,
  skipBelow: number,
): boolean | null {
  const memory = basisMemories.get(basis.buffer);
  // In place only: the kernels would read and write whatever lies at a wrong offset, so the extents are checked.
  if (memory === undefined || w.buffer !== basis.buffer || count < 1 || count > memory.hCapacity) return null;
  if (count * n > basis.length || n > w.length) return null;
  memory.rows.rowsDot(count, n, basis.byteOffset, n, w.byteOffset, memory.hAt);
  const at = memory.hAt / 8;
  h.set(memory.heap.subarray(at, at + count));
  const { first, end, all } = projectionRows(h, count, skipBelow);
  if (end === first) return all;
  if (!all) memory.heap.set(h.subarray(first, end), at + first);
  memory.rows.basisCombine(end - first, n, -1, basis.byteOffset + 8 * first * n, n, memory.hAt + 8 * first, w.byteOffset);
  return all;
}

/** DenseKernels.recurrenceStep here (rowsDot for alpha_j, basisCombine for the update), on a Krylov storage's V and w; null: run the loop. */
export function wasmRecurrenceStep(basis: Float64Array, n: number, j: number, beta: number, w: Float64Array): number | null {
  const memory = basisMemories.get(basis.buffer);
  if (memory === undefined || w.buffer !== basis.buffer || memory.hCapacity < 2 || (j + 1) * n > basis.length || n > w.length) return null;
  const at = memory.hAt / 8;
  const row = basis.byteOffset + 8 * j * n;
  memory.rows.rowsDot(1, n, row, n, w.byteOffset, memory.hAt);
  const alpha = memory.heap[at];
  // w -= beta v_{j-1} + alpha v_j: the two rows from v_{j-1}, with coefficients (beta, alpha) at hAt.
  if (j > 0 && beta !== 0) {
    memory.heap[at] = beta;
    memory.heap[at + 1] = alpha;
    memory.rows.basisCombine(2, n, -1, row - 8 * n, n, memory.hAt, w.byteOffset);
  } else memory.rows.basisCombine(1, n, -1, row, n, memory.hAt, w.byteOffset);
  return alpha;
}

/** DenseKernels.norm here (rowsDot of x with itself), on a Krylov storage's vector; null: run the loop. */
export function wasmNorm(x: Float64Array, n: number): number | null {
  const memory = basisMemories.get(x.buffer);
  if (memory === undefined || n > x.length) return null;
  memory.rows.rowsDot(1, n, x.byteOffset, n, x.byteOffset, memory.hAt);
  return Math.sqrt(memory.heap[memory.hAt / 8]);
}

/** DenseKernels.scaledCopy here (blockProduct: y = s 1 x, beta 0), when x and y are one Krylov storage's; false: run the loop. */
export function wasmScaledCopy(x: Float64Array, n: number, s: number, y: Float64Array): boolean {
  const memory = basisMemories.get(x.buffer);
  if (memory === undefined || y.buffer !== x.buffer || n > x.length || n > y.length) return false;
  memory.heap[memory.hAt / 8] = 1;
  memory.rows.blockProduct(1, n, 1, s, memory.hAt, 1, 1, x.byteOffset, n, 0, y.byteOffset, n);
  return true;
}
