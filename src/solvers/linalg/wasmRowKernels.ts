// Past 500 lines: one arena (layout, staging, per-thread instantiation) under every row, CSR and block kernel that reads it.
/**
 * The TypeScript backend's WebAssembly SIMD row kernels (./wasm/rowKernels.wat): rowsDot,
 * rowsCombine and rowsFused with the native addon's signatures (typed arrays plus element offsets),
 * the CSR gradient pass, and the block kernels of the passes over several right-hand sides
 * (./blockKernels.ts: blockProduct, csrBlock, whose blocks live in a thread's `workspace`),
 * for matrices that live in a `WasmArena`, the linear memory a solver run copies its machines' data
 * into (see ../parallel/engine.ts). One arena per run, shared by the run's threads; each thread
 * instantiates the module on it (`attachArena`) with a scratch slot of its own.
 *
 * A WebAssembly function reads only its own memory: the matrix must be in the arena (a call with
 * one outside it throws), while a vector argument that is elsewhere (a shard's scratch) is
 * copied into the thread's slot and back, O(rows + cols) against the call's O(rows x cols).
 * Rows go in batches of ROW_BATCH (a multiple of the kernels' 8-row block) when their vectors are
 * staged, so staging never changes a result.
 *
 * Switch: on by default wherever WebAssembly SIMD and shared memory run (Node >= 16.4);
 * LINALG_WASM=off, or useWasmKernels(false), keeps the plain TypeScript loops.
 */
import { isTypedArray, mapLeaves } from '../mapLeaves.js';
import type { RowKernels } from './backend.js';
import {
  gramBlockWorkLength,
  withTerm,
  type BlockConsensus,
  type BlockProduct,
  type BlockStepKernel,
  type CholeskyBlockFactor,
  type CsrBlockKernel,
  type CsrBlockRows,
  type GramBlockSolver,
} from './blockKernels.js';
import { checkCsrRows, type CsrGradientKernel, type CsrRows } from './csrKernels.js';
import { ROW_KERNELS_WASM_BASE64 } from './wasm/rowKernelsModule.js';

export type { RowKernels } from './backend.js';

/** Set to 'off' to keep the TypeScript backend on its plain loops. */
export const WASM_KERNELS_ENV = 'LINALG_WASM';
/** Rows per kernel call when a call's row vectors are staged (a multiple of the kernels' 8-row blocks). */
export const ROW_BATCH = 256;
const PAGE_BYTES = 65_536;
/** Entries of a slot's step sums (32 KB, in L1): the step phase sums this many entries of G at a time (blockStep). */
const STEP_SUMS = 4096;
/** Largest arena: offsets are 32-bit; beyond this a run keeps the plain loops. */
const MAX_ARENA_BYTES = 2 ** 31;

interface KernelExports {
  rowsDot: (rows: number, cols: number, x: number, ld: number, v: number, out: number) => void;
  rowsCombine(rows: number, cols: number, scale: number, x: number, ld: number, w: number, y: number): void;
  basisCombine: (rows: number, cols: number, scale: number, x: number, ld: number, w: number, y: number) => void;
  rowsFused(rows: number, cols: number, scale: number, x: number, ld: number, v: number, bias: number, dots: number, y: number): void;
  csrGradient(rows: number, cols: number, rowPtr: number, colIdx: number, values: number, x: number, b: number, term: number): number;
  blockProduct: (
    m: number,
    n: number,
    kk: number,
    alpha: number,
    a: number,
    aRow: number,
    aStep: number,
    x: number,
    ldx: number,
    beta: number,
    c: number,
    ldc: number,
  ) => void;
  choleskySolveBlock(n: number, w: number, colPtr: number, rowIdx: number, lValues: number, perm: number, b: number, z: number): void;
  csrBlockGradient(
    rows: number,
    w: number,
    rowPtr: number,
    colIdx: number,
    values: number,
    x: number,
    b: number,
    r: number,
    g: number,
    residual2: number,
    mode: number,
  ): void;
  packedProduct: (mp: number, np: number, kc: number, ap: number, lda: number, bp: number, c: number, ldc: number) => void;
  blockConsensus(
    c: number,
    w: number,
    x: number,
    y: number,
    first: number,
    cols: number,
    d: number,
    term: number,
    gamma: number,
    near: number,
    inside: number,
    withInside: number,
  ): void;
  blockStep(
    rule: number,
    alpha: number,
    beta: number,
    m: number,
    K: number,
    w: number,
    first: number,
    end: number,
    x: number,
    carried: number,
    terms: number,
    strip: number,
    cols: number,
    colsOffset: number,
    sums: number,
    tileRows: number,
  ): void;
}

/** csrBlockGradient's mode bits: R = A X - B (else R given), and G += A^T R. */
const CSR_BLOCK_RESIDUAL = 1;
const CSR_BLOCK_ACCUMULATE = 2;

let compiled: { module: WebAssembly.Module | null; reason: string } | undefined;
let enabled: boolean | undefined;

function compile(): { module: WebAssembly.Module | null; reason: string } {
  if (process.env[WASM_KERNELS_ENV] === 'off') return { module: null, reason: `${WASM_KERNELS_ENV}=off` };
  try {
    const bytes = Buffer.from(ROW_KERNELS_WASM_BASE64, 'base64');
    if (!WebAssembly.validate(bytes)) return { module: null, reason: 'this runtime lacks WebAssembly SIMD or shared memory' };
    return { module: new WebAssembly.Module(bytes), reason: '' };
  } catch (error) {
    return { module: null, reason: `WebAssembly is unavailable: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function kernelModule(): WebAssembly.Module | null {
  compiled ??= compile();
  return compiled.module;
}

/** Why the WebAssembly kernels cannot run here ('' when they can). */
export function wasmKernelsUnavailableReason(): string {
  compiled ??= compile();
  return compiled.reason;
}

/** Whether new solver runs of the TypeScript backend on this thread copy their data into an arena and use these kernels. */
export function wasmKernelsEnabled(): boolean {
  enabled ??= kernelModule() !== null;
  return enabled;
}

/** Turns the WebAssembly kernels on or off for later runs on this thread; on when unavailable throws. Returns the setting. */
export function useWasmKernels(on: boolean): boolean {
  if (on && kernelModule() === null) throw new Error(`The WebAssembly row kernels are unavailable: ${wasmKernelsUnavailableReason()}.`);
  enabled = on;
  return on;
}

/** What another thread needs to attach to an arena. */
export interface ArenaLayout {
  readonly memory: WebAssembly.Memory;
  /** Byte offset of slot 0 of the threads' scratch; slot s is at scratchOffset + s slotBytes. */
  readonly scratchOffset: number;
  readonly slotBytes: number;
  /** Longest vector a slot stages (the run's n). */
  readonly maxCols: number;
  /** Entries of a slot's work space after its staging vectors (a shard's own work blocks, ./blockKernels.ts). */
  readonly workEntries: number;
}

/** Marks a typed array described by its place in an arena (posted to workers instead of the array). */
interface ArenaView {
  readonly arenaView: 'Float64Array' | 'Int32Array';
  readonly byteOffset: number;
  readonly length: number;
}

function isArenaView(value: unknown): value is ArenaView {
  return value !== null && typeof value === 'object' && typeof (value as ArenaView).arenaView === 'string';
}

/**
 * Size of a value's typed arrays, each rounded up to 16 bytes (what `copyInto` will allocate), those already staged in
 * the arena's memory left out; Infinity when one cannot go in an arena.
 */
function typedBytes(value: unknown, staged: ArenaStaging | null): number {
  let bytes = 0;
  mapLeaves(value, isTypedArray, (view) => {
    if (staged?.holds(view)) return view;
    bytes += view instanceof Float64Array || view instanceof Int32Array ? align16(view.byteLength) : Infinity;
    return view;
  });
  return bytes;
}

function align16(bytes: number): number {
  return Math.ceil(bytes / 16) * 16;
}

/**
 * Arrays made in a run's arena before the run lays the arena out, so that the arena neither copies them nor touches
 * their pages a second time (a fresh page's first touch costs ~2.7 ms per MB on the hosts measured:
 * docs/operations.md): a large sparse system's machines' values, written there by its setup (on any thread: a region is
 * reserved here, filled through `memory` by whichever thread builds the machine, and viewed here), and a gradient
 * pass's chunk arrays (local column indices, row pointers and b); the run's arena (`WasmArena.forSpec(..., staging)`)
 * is then this memory, grown, and copies in only what was made elsewhere. Regions are reserved from the end; a run
 * hands its own back when it ends (`release`), and the next one reuses their pages, zeroed. A grown shared memory has
 * a new buffer object: arrays made before stay on theirs, which `holds` still recognizes.
 */
export class ArenaStaging {
  readonly memory: WebAssembly.Memory;
  /** Bytes reserved so far, from 0. */
  private used = 0;
  /** Bytes ever reserved: a region below this may hold what an earlier run left there. */
  private dirty = 0;
  /** Every buffer object of the memory that arrays were made on (the current one last). */
  private readonly buffers: SharedArrayBuffer[];
  /** Regions handed back [mark, top) while a later one was still held. */
  private readonly released: [number, number][] = [];

  private constructor(memory: WebAssembly.Memory) {
    this.memory = memory;
    this.buffers = [memory.buffer as SharedArrayBuffer];
  }

  /** An empty staging memory (it grows as regions are reserved); null when the kernels are off or the memory cannot be had. */
  static create(): ArenaStaging | null {
    if (!wasmKernelsEnabled()) return null;
    try {
      return new ArenaStaging(new WebAssembly.Memory({ initial: 1, maximum: MAX_ARENA_BYTES / PAGE_BYTES, shared: true }));
    } catch {
      return null;
    }
  }

  /** Bytes reserved so far: where the next region begins. */
  get end(): number {
    return this.used;
  }

  /** Reserves `bytes` (rounded up to 16) at the end, zeroed, growing the memory (at least doubling it) when it has no room; returns its byte offset. */
  reserve(bytes: number): number {
    const byteOffset = this.used;
    const end = byteOffset + align16(bytes);
    if (end > MAX_ARENA_BYTES) throw new Error('ArenaStaging: beyond the largest arena.');
    const have = this.buffers[this.buffers.length - 1].byteLength;
    if (end > have) this.grow(Math.min(MAX_ARENA_BYTES, Math.max(end, 2 * have)));
    if (byteOffset < this.dirty) new Uint8Array(this.current(), byteOffset, Math.min(end, this.dirty) - byteOffset).fill(0);
    this.used = end;
    this.dirty = Math.max(this.dirty, end);
    return byteOffset;
  }

  /** `length` entries at `byteOffset` (in a reserved region, whichever thread filled it), viewed on the current buffer object. */
  view<T extends Float64Array | Int32Array>(
    Construct: new (buffer: ArrayBufferLike, byteOffset: number, length: number) => T,
    byteOffset: number,
    length: number,
  ): T {
    return new Construct(this.current(), byteOffset, length);
  }

  /** A zeroed array of `length` entries in a region of its own. */
  allocate<T extends Float64Array | Int32Array>(
    Construct: new (buffer: ArrayBufferLike, byteOffset: number, length: number) => T,
    bytesPerElement: number,
    length: number,
  ): T {
    return this.view(Construct, this.reserve(length * bytesPerElement), length);
  }

  /** Whether `view` was made on this memory here. */
  holds(view: ArrayBufferView): boolean {
    return this.buffers.includes(view.buffer as SharedArrayBuffer);
  }

  /**
   * Hands back the regions reserved from `mark` to `top` (a run's, at its end). While a later region is still held they
   * wait: they go when every region after them has gone too (runs on one system may end in any order).
   */
  release(mark: number, top: number): void {
    if (!(mark <= top && top <= this.used)) return;
    this.released.push([mark, top]);
    for (
      let at = this.released.findIndex(([, end]) => end === this.used);
      at >= 0;
      at = this.released.findIndex(([, end]) => end === this.used)
    ) {
      this.used = this.released[at][0];
      this.released.splice(at, 1);
    }
  }

  /** The memory grown to at least `bytes` (never shrunk). */
  private grow(bytes: number): void {
    const have = this.memory.buffer.byteLength;
    // Memory.prototype.grow (in every runtime with WebAssembly; missing from the TypeScript lib this project compiles with).
    if (bytes > have) (this.memory as WebAssembly.Memory & { grow(pages: number): number }).grow(Math.ceil((bytes - have) / PAGE_BYTES));
    const buffer = this.memory.buffer as SharedArrayBuffer;
    if (!this.buffers.includes(buffer)) this.buffers.push(buffer);
  }

  private current(): SharedArrayBuffer {
    return this.buffers[this.buffers.length - 1];
  }
}

/**
 * One solver run's linear memory: its data (a deep copy of a shard spec, arrays staged in it left in place, then the
 * engine's input, output and scalars), then one scratch slot per thread. Its size is fixed once laid out (the kernels
 * find the arena's arrays by its buffer object, which a growth would replace).
 */
export class WasmArena {
  readonly layout: ArenaLayout;
  private readonly buffer: SharedArrayBuffer;
  private next: number;
  private readonly staged: ArenaStaging | null;

  private constructor(layout: ArenaLayout, next: number, staged: ArenaStaging | null) {
    this.layout = layout;
    this.buffer = layout.memory.buffer as SharedArrayBuffer;
    this.next = next;
    this.staged = staged;
  }

  /**
   * An arena for `spec`'s typed arrays plus `extraBytes`, with `threads` scratch slots for vectors
   * of up to `maxCols` entries and `workEntries` more of work space each; null when the kernels are
   * off or unavailable, or the memory cannot be had (the run then keeps the plain loops). With `staging`,
   * the arena is its memory, grown, and the spec's arrays made there stay where they are.
   */
  static forSpec(
    spec: unknown,
    extraBytes: number,
    threads: number,
    maxCols: number,
    workEntries = 0,
    staging: ArenaStaging | null = null,
  ): WasmArena | null {
    if (!wasmKernelsEnabled()) return null;
    const slotBytes = align16(8 * (2 * maxCols + 2 * ROW_BATCH + STEP_SUMS + workEntries));
    const first = staging?.end ?? 0;
    const scratchOffset = first + typedBytes(spec, staging) + align16(extraBytes);
    const bytes = scratchOffset + threads * slotBytes;
    if (!(bytes <= MAX_ARENA_BYTES)) return null;
    let memory: WebAssembly.Memory;
    try {
      if (staging === null) {
        const pages = Math.max(1, Math.ceil(bytes / PAGE_BYTES));
        memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
      } else {
        // The arena's own region, reserved in the staging memory (zeroed, its end the memory's at least).
        staging.reserve(bytes - first);
        memory = staging.memory;
      }
    } catch {
      return null;
    }
    return new WasmArena({ memory, scratchOffset, slotBytes, maxCols, workEntries }, first, staging);
  }

  /** A zeroed array of `length` entries in the arena. */
  allocate<T extends Float64Array | Int32Array>(
    Construct: new (buffer: ArrayBufferLike, byteOffset: number, length: number) => T,
    bytesPerElement: number,
    length: number,
  ): T {
    const byteOffset = this.next;
    this.next += align16(length * bytesPerElement);
    if (this.next > this.layout.scratchOffset) throw new Error('WasmArena: allocation beyond the space reserved for the data.');
    return new Construct(this.buffer, byteOffset, length);
  }

  /** A deep copy of `value` whose typed arrays (Float64Array, Int32Array) live in the arena: those staged in it are not copied, only viewed on its buffer. */
  copyInto(value: unknown): unknown {
    return mapLeaves(value, isTypedArray, (view) => {
      if (!(view instanceof Float64Array || view instanceof Int32Array))
        throw new Error(`WasmArena: cannot hold a ${view.constructor.name}.`);
      if (this.staged?.holds(view)) {
        const Construct = view.constructor as new (buffer: ArrayBufferLike, byteOffset: number, length: number) => typeof view;
        return new Construct(this.buffer, view.byteOffset, view.length);
      }
      const copy = view instanceof Float64Array ? this.allocate(Float64Array, 8, view.length) : this.allocate(Int32Array, 4, view.length);
      copy.set(view);
      return copy;
    });
  }

  /** `value` (made by copyInto) with its arrays replaced by their places, for posting to a worker. */
  describe(value: unknown): unknown {
    return mapLeaves(value, isTypedArray, (view): ArenaView => {
      if (!(view instanceof Float64Array || view instanceof Int32Array) || view.buffer !== this.buffer)
        throw new Error('WasmArena: this array is not in the arena.');
      return { arenaView: view instanceof Float64Array ? 'Float64Array' : 'Int32Array', byteOffset: view.byteOffset, length: view.length };
    });
  }
}

/** The arrays of a described value, rebuilt on an arena's memory in this thread. */
export function reviveArenaViews(value: unknown, memory: WebAssembly.Memory): unknown {
  return mapLeaves(value, isArenaView, (view) =>
    view.arenaView === 'Float64Array'
      ? new Float64Array(memory.buffer, view.byteOffset, view.length)
      : new Int32Array(memory.buffer, view.byteOffset, view.length),
  );
}

/**
 * Instantiates the kernels on an arena in this thread, with scratch slot `slot` (one per thread of
 * the run); returns them.
 */
export function attachArena(layout: ArenaLayout, slot: number): WasmRowKernels {
  const module = kernelModule();
  if (module === null) throw new Error(`The WebAssembly row kernels are unavailable: ${wasmKernelsUnavailableReason()}.`);
  const instance = new WebAssembly.Instance(module, { env: { memory: layout.memory } });
  return new WasmRowKernels(instance.exports as unknown as KernelExports, layout, slot);
}

/**
 * The module's packedProduct and blockProduct (C = alpha op(A) X + beta C, strided), and rowsDot and
 * basisCombine (out = X v; y += scale X^T w): addresses in bytes, strides in entries.
 */
export type DenseProducts = Pick<KernelExports, 'packedProduct' | 'blockProduct' | 'rowsDot' | 'basisCombine'>;

/** The products of the dense kernels (./wasmDenseKernels.ts) on `memory`, in this thread; null when the kernels are unavailable. */
export function denseProductsOn(memory: WebAssembly.Memory): DenseProducts | null {
  const module = kernelModule();
  if (module === null) return null;
  const exports = new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as KernelExports;
  return {
    packedProduct: exports.packedProduct,
    blockProduct: exports.blockProduct,
    rowsDot: exports.rowsDot,
    basisCombine: exports.basisCombine,
  };
}

/** a[offset .. offset + length) must exist: in the arena, an access past an array would touch other data silently. */
function checkVector(a: Float64Array, offset: number, length: number): void {
  if (offset < 0 || offset + length > a.length)
    throw new RangeError(`WebAssembly row kernels: ${length} entries from ${offset} exceed a vector of ${a.length}.`);
}

/** The supports as the addon's blockStepLayout checks them: the WebAssembly step would touch other data silently. */
function checkStepLayout(n: number, strip: Int32Array, cols: Int32Array, colsOffset: Int32Array): void {
  const m = strip.length;
  if (colsOffset.length !== m + 1 || colsOffset[0] !== 0)
    throw new RangeError('WebAssembly step: colsOffset must have m + 1 entries from 0.');
  for (let i = 0; i < m; i++) {
    const from = colsOffset[i];
    const to = colsOffset[i + 1];
    if (to < from || to > cols.length) throw new RangeError('WebAssembly step: colsOffset decreases or runs past cols.');
    if (strip[i] >= 0) {
      if (strip[i] + (to - from) > n) throw new RangeError('WebAssembly step: a strip runs past n.');
    } else
      for (let t = from; t < to; t++)
        if (!(cols[t] >= 0 && cols[t] < n) || (t > from && cols[t] <= cols[t - 1]))
          throw new RangeError('WebAssembly step: a support is not ascending in [0, n).');
  }
}

/** A row-major block (rows x cols, leading dimension ld) must lie within its array: the kernel would touch other data silently. */
function checkBlock(name: string, a: Float64Array, rows: number, cols: number, ld: number): void {
  if (rows > 0 && cols > 0 && (ld < cols || (rows - 1) * ld + cols > a.length))
    throw new RangeError(`WebAssembly block product: ${name}, ${rows} x ${cols} (ld ${ld}), exceeds its ${a.length} elements.`);
}

/**
 * The row kernels on one arena, in one thread. Written arrays must not overlap read ones (the
 * callers' never do; unlike the native bindings this is not checked).
 */
export class WasmRowKernels implements RowKernels {
  /** Longest row (columns) a call may have: what a scratch slot stages. */
  readonly maxCols: number;
  private readonly k: KernelExports;
  private readonly buffer: ArrayBufferLike;
  private readonly vStage: Float64Array;
  private readonly yStage: Float64Array;
  private readonly rowsIn: Float64Array;
  private readonly rowsOut: Float64Array;
  private readonly stepSums: Float64Array;
  /** This thread's work space in the arena (layout.workEntries long), for arrays the block kernels write. */
  readonly workspace: Float64Array;

  constructor(exports: KernelExports, layout: ArenaLayout, slot: number) {
    this.k = exports;
    this.maxCols = layout.maxCols;
    this.buffer = layout.memory.buffer;
    let at = layout.scratchOffset + slot * layout.slotBytes;
    const take = (length: number): Float64Array => {
      const view = new Float64Array(this.buffer, at, length);
      at += 8 * length;
      return view;
    };
    this.vStage = take(layout.maxCols);
    this.yStage = take(layout.maxCols);
    this.rowsIn = take(ROW_BATCH);
    this.rowsOut = take(ROW_BATCH);
    this.stepSums = take(STEP_SUMS);
    this.workspace = take(layout.workEntries);
  }

  rowsDot(
    rows: number,
    cols: number,
    x: Float64Array,
    xOffset: number,
    ld: number,
    v: Float64Array,
    vOffset: number,
    out: Float64Array,
    outOffset: number,
  ): void {
    this.checkMatrix(rows, cols, x, xOffset, ld);
    const vp = this.stageIn(v, vOffset, cols, this.vStage);
    checkVector(out, outOffset, rows);
    if (this.inArena(out)) {
      this.k.rowsDot(rows, cols, this.at(x, xOffset), ld, vp, this.at(out, outOffset));
      return;
    }
    for (let k0 = 0; k0 < rows; k0 += ROW_BATCH) {
      const batch = Math.min(ROW_BATCH, rows - k0);
      this.k.rowsDot(batch, cols, this.at(x, xOffset + k0 * ld), ld, vp, this.rowsOut.byteOffset);
      out.set(this.rowsOut.subarray(0, batch), outOffset + k0);
    }
  }

  rowsCombine(
    rows: number,
    cols: number,
    scale: number,
    x: Float64Array,
    xOffset: number,
    ld: number,
    w: Float64Array,
    wOffset: number,
    y: Float64Array,
    yOffset: number,
  ): void {
    this.checkMatrix(rows, cols, x, xOffset, ld);
    const yp = this.stageIn(y, yOffset, cols, this.yStage);
    checkVector(w, wOffset, rows);
    if (this.inArena(w)) {
      this.k.rowsCombine(rows, cols, scale, this.at(x, xOffset), ld, this.at(w, wOffset), yp);
    } else {
      for (let k0 = 0; k0 < rows; k0 += ROW_BATCH) {
        const batch = Math.min(ROW_BATCH, rows - k0);
        this.rowsIn.set(w.subarray(wOffset + k0, wOffset + k0 + batch));
        this.k.rowsCombine(batch, cols, scale, this.at(x, xOffset + k0 * ld), ld, this.rowsIn.byteOffset, yp);
      }
    }
    this.stageOut(y, yOffset, cols);
  }

  rowsFused(
    rows: number,
    cols: number,
    scale: number,
    x: Float64Array,
    xOffset: number,
    ld: number,
    v: Float64Array,
    vOffset: number,
    bias: Float64Array,
    biasOffset: number,
    dots: Float64Array,
    dotsOffset: number,
    y: Float64Array,
    yOffset: number,
  ): void {
    this.checkMatrix(rows, cols, x, xOffset, ld);
    const vp = this.stageIn(v, vOffset, cols, this.vStage);
    const yp = this.stageIn(y, yOffset, cols, this.yStage);
    checkVector(bias, biasOffset, rows);
    checkVector(dots, dotsOffset, rows);
    if (this.inArena(bias) && this.inArena(dots)) {
      this.k.rowsFused(rows, cols, scale, this.at(x, xOffset), ld, vp, this.at(bias, biasOffset), this.at(dots, dotsOffset), yp);
    } else {
      for (let k0 = 0; k0 < rows; k0 += ROW_BATCH) {
        const batch = Math.min(ROW_BATCH, rows - k0);
        this.rowsIn.set(bias.subarray(biasOffset + k0, biasOffset + k0 + batch));
        this.k.rowsFused(batch, cols, scale, this.at(x, xOffset + k0 * ld), ld, vp, this.rowsIn.byteOffset, this.rowsOut.byteOffset, yp);
        dots.set(this.rowsOut.subarray(0, batch), dotsOffset + k0);
      }
    }
    this.stageOut(y, yOffset, cols);
  }

  /**
   * The gradient methods' fused pass over a chunk of CSR rows (../linalg/csrKernels.ts), bound to the
   * chunk: its arrays must be in the arena, and are checked here once (a column index out of range
   * would make the kernel touch other data silently). x and term are staged through this thread's
   * slot when they are elsewhere.
   */
  csrGradient(rows: CsrRows): CsrGradientKernel {
    const { p, c, rowPtr, colIdx, values, b } = rows;
    if (![rowPtr, colIdx, values, b].every((a) => a.buffer === this.buffer))
      throw new RangeError('WebAssembly CSR kernel: the chunk is not in this arena.');
    if (c > this.maxCols) throw new RangeError(`WebAssembly CSR kernel: ${c} columns exceed the ${this.maxCols} a scratch slot stages.`);
    checkCsrRows(rows);
    const exports = this.k;
    const rowPtrAt = rowPtr.byteOffset;
    const colIdxAt = colIdx.byteOffset;
    const valuesAt = values.byteOffset;
    const bAt = b.byteOffset;
    return {
      run: (x, xOffset, term, termOffset) => {
        const xp = this.stageIn(x, xOffset, c, this.vStage);
        checkVector(term, termOffset, c);
        const inPlace = this.inArena(term);
        const residual2 = exports.csrGradient(
          p,
          c,
          rowPtrAt,
          colIdxAt,
          valuesAt,
          xp,
          bAt,
          inPlace ? this.at(term, termOffset) : this.yStage.byteOffset,
        );
        if (!inPlace) term.set(this.yStage.subarray(0, c), termOffset);
        return residual2;
      },
    };
  }

  /**
   * The block product of ./blockKernels.ts (BlockProduct) in WebAssembly SIMD: every array must be
   * in the arena (nothing is staged: the blocks are the caller's, ./blockKernels.ts), and hold what
   * is read or written.
   */
  readonly blockProduct: BlockProduct = (transA, m, n, kk, alpha, a, lda, x, ldx, beta, c, ldc) => {
    if (m <= 0 || n <= 0) return;
    if (!(this.inArena(a) && this.inArena(x) && this.inArena(c)))
      throw new RangeError('WebAssembly block product: a block is not in this arena.');
    const aRows = transA ? kk : m;
    const aCols = transA ? m : kk;
    if (kk > 0) {
      checkBlock('A', a, aRows, aCols, lda);
      checkBlock('X', x, kk, n, ldx);
    }
    checkBlock('C', c, m, n, ldc);
    this.k.blockProduct(m, n, kk, alpha, a.byteOffset, transA ? 1 : lda, transA ? lda : 1, x.byteOffset, ldx, beta, c.byteOffset, ldc);
  };

  /**
   * The CSR block sweep of ./blockKernels.ts bound to a chunk of rows in the arena (checked here
   * once); the blocks of each call must be in the arena too.
   */
  csrBlock(rows: CsrBlockRows): CsrBlockKernel {
    const { p, c, rowPtr, colIdx, values } = rows;
    if (![rowPtr, colIdx, values].every((a) => a.buffer === this.buffer))
      throw new RangeError('WebAssembly CSR block kernel: the chunk is not in this arena.');
    checkCsrRows({ ...rows, b: new Float64Array(p) });
    const exports = this.k;
    const rowPtrAt = rowPtr.byteOffset;
    const colIdxAt = colIdx.byteOffset;
    const valuesAt = values.byteOffset;
    return withTerm(c, (w, x, b, r, g, residual2) => {
      if (p === 0 || w <= 0) return;
      const blocks = [b, r, residual2, ...(x === null ? [] : [x]), ...(g === null ? [] : [g])];
      if (!blocks.every((a) => this.inArena(a))) throw new RangeError('WebAssembly CSR block kernel: a block is not in this arena.');
      if (
        r.length < p * w ||
        residual2.length < w ||
        (x !== null && (x.length < c * w || b.length < p * w)) ||
        (g !== null && g.length < c * w)
      )
        throw new RangeError(`WebAssembly CSR block kernel: a block is too short for ${p} x ${c} rows on ${w} columns.`);
      const mode = (x !== null ? CSR_BLOCK_RESIDUAL : 0) | (g !== null ? CSR_BLOCK_ACCUMULATE : 0);
      exports.csrBlockGradient(
        p,
        w,
        rowPtrAt,
        colIdxAt,
        valuesAt,
        x?.byteOffset ?? 0,
        b.byteOffset,
        r.byteOffset,
        g?.byteOffset ?? 0,
        residual2.byteOffset,
        mode,
      );
    });
  }

  /** Each support list's rows past its last (its largest entry + 1), checked once: blockConsensus reads rows by it. */
  private readonly supportEnds = new WeakMap<Int32Array, number>();

  /**
   * APC's and MLM's bookkeeping after a machine's block pass (./blockKernels.ts BlockConsensus) in WebAssembly SIMD:
   * every block in the arena, the support list too when the rows are listed (first < 0).
   */
  readonly blockConsensus: BlockConsensus = (c, w, x, y, first, cols, d, term, gamma, near, inside) => {
    if (w <= 0) return;
    if (c <= 0) {
      near.fill(0, 0, w);
      inside?.fill(0, 0, w);
      return;
    }
    const blocks = [x, y, d, term, near, ...(inside === null ? [] : [inside])];
    if (!blocks.every((a) => this.inArena(a)) || (first < 0 && cols.buffer !== this.buffer))
      throw new RangeError('WebAssembly consensus: a block is not in this arena.');
    let rowsEnd = first + c;
    if (first < 0) {
      rowsEnd = this.supportEnds.get(cols) ?? -1;
      if (rowsEnd < 0) {
        if (cols.length < c) throw new RangeError(`WebAssembly consensus: the support lists ${cols.length} rows, not ${c}.`);
        rowsEnd = 0;
        for (let t = 0; t < cols.length; t++) {
          if (!(cols[t] >= 0)) throw new RangeError(`WebAssembly consensus: support row ${cols[t]} is negative.`);
          rowsEnd = Math.max(rowsEnd, cols[t] + 1);
        }
        this.supportEnds.set(cols, rowsEnd);
      }
    }
    if (
      rowsEnd * w > Math.min(x.length, y.length) ||
      c * w > Math.min(d.length, term.length) ||
      w > near.length ||
      (inside !== null && w > inside.length)
    )
      throw new RangeError(`WebAssembly consensus: a block is too short for ${c} rows (to row ${rowsEnd}) on ${w} columns.`);
    this.k.blockConsensus(
      c,
      w,
      x.byteOffset,
      y.byteOffset,
      first,
      first < 0 ? cols.byteOffset : 0,
      d.byteOffset,
      term.byteOffset,
      gamma,
      near.byteOffset,
      inside === null ? near.byteOffset : inside.byteOffset,
      inside === null ? 0 : 1,
    );
  };

  /**
   * The step phase of ../machines/stepRules.ts (the addon's blockStep's arguments, ./blockKernels.ts BlockStepKernel)
   * on machines' supports held in the arena (strip, cols, colsOffset: ../machines/stepRules.ts stepLayout, checked
   * here once), or null when they are elsewhere: the caller keeps its TypeScript loops. Each call's input and output
   * must be in the arena too. G is summed STEP_SUMS entries at a time in this thread's slot.
   */
  blockStep(n: number, K: number, strip: Int32Array, cols: Int32Array, colsOffset: Int32Array): BlockStepKernel | null {
    if (![strip, cols, colsOffset].every((a) => a.buffer === this.buffer)) return null;
    checkStepLayout(n, strip, cols, colsOffset);
    const m = strip.length;
    const termsLength = colsOffset[m] * K;
    const exports = this.k;
    const sums = this.stepSums.byteOffset;
    return {
      run: (rule, alpha, beta, w, first, end, input, output, summed) => {
        if (!(Number.isInteger(rule) && rule >= 0 && rule <= 4)) throw new RangeError(`WebAssembly step: no rule ${rule}.`);
        if (!(w >= 0 && w <= K && w <= STEP_SUMS)) throw new RangeError(`WebAssembly step: w = ${w} exceeds the layout's K = ${K}.`);
        if (!(first >= 0 && first <= end && end <= n))
          throw new RangeError(`WebAssembly step: rows [${first}, ${end}) are not within [0, ${n}).`);
        if (!this.inArena(input) || !this.inArena(output)) throw new RangeError('WebAssembly step: input or output is not in this arena.');
        const carries = rule === 0 || rule === 3 || rule === 4;
        if (input.length < (carries ? 3 : 2) * n * K) throw new RangeError('WebAssembly step: input is shorter than its blocks.');
        if (!(summed >= 0 && summed + termsLength <= output.length))
          throw new RangeError('WebAssembly step: output is shorter than summed + the terms.');
        if (input.byteOffset < output.byteOffset + output.byteLength && output.byteOffset < input.byteOffset + input.byteLength)
          throw new RangeError('WebAssembly step: input overlaps output.');
        if (w === 0 || first === end) return;
        exports.blockStep(
          rule,
          alpha,
          beta,
          m,
          K,
          w,
          first,
          end,
          input.byteOffset,
          input.byteOffset + 16 * n * K,
          this.at(output, summed),
          strip.byteOffset,
          cols.byteOffset,
          colsOffset.byteOffset,
          sums,
          Math.max(1, Math.floor(STEP_SUMS / w)),
        );
      },
    };
  }

  /**
   * Block solves with a sparse Cholesky factor in the arena (./blockKernels.ts GramBlockSolver), its
   * indices checked here once; `work` (gramBlockWorkLength entries for the widest block) and each block in the arena too.
   */
  gramBlockSolver(factor: CholeskyBlockFactor, work: Float64Array): GramBlockSolver {
    const { n, colPtr, rowIdx, values, perm } = factor;
    if (![colPtr, rowIdx, values, perm].every((a) => a.buffer === this.buffer) || !this.inArena(work))
      throw new RangeError('WebAssembly block solve: the factor or its work block is not in this arena.');
    if (colPtr.length < n + 1 || perm.length < n || colPtr[n] > rowIdx.length || colPtr[n] > values.length)
      throw new RangeError(`WebAssembly block solve: the factor's arrays do not hold ${n} columns.`);
    for (let j = 0; j < n; j++) {
      if (!(colPtr[j] >= 0 && colPtr[j] < colPtr[j + 1]))
        throw new RangeError(`WebAssembly block solve: column ${j} of L has no diagonal.`);
      if (!(perm[j] >= 0 && perm[j] < n)) throw new RangeError(`WebAssembly block solve: perm[${j}] = ${perm[j]} is not below ${n}.`);
    }
    for (let q = 0; q < colPtr[n]; q++)
      if (!(rowIdx[q] >= 0 && rowIdx[q] < n)) throw new RangeError(`WebAssembly block solve: row index ${rowIdx[q]} is not below ${n}.`);
    const exports = this.k;
    return {
      solve: (b, w) => {
        if (n === 0 || w <= 0) return;
        if (!this.inArena(b) || b.length < n * w || work.length < gramBlockWorkLength(n, w))
          throw new RangeError(`WebAssembly block solve: the block (${n} x ${w}) or its work space is not in this arena or too short.`);
        exports.choleskySolveBlock(
          n,
          w,
          colPtr.byteOffset,
          rowIdx.byteOffset,
          values.byteOffset,
          perm.byteOffset,
          b.byteOffset,
          work.byteOffset,
        );
      },
    };
  }

  private inArena(a: Float64Array): boolean {
    return a.buffer === this.buffer;
  }

  /** Byte address of a[offset] in the arena. */
  private at(a: Float64Array, offset: number): number {
    return a.byteOffset + 8 * offset;
  }

  /** The matrix must be in the arena and hold every row read (a WebAssembly access beyond it would read other data silently). */
  private checkMatrix(rows: number, cols: number, x: Float64Array, xOffset: number, ld: number): void {
    if (!this.inArena(x)) throw new RangeError('WebAssembly row kernels: the matrix is not in this arena.');
    if (cols > this.maxCols)
      throw new RangeError(`WebAssembly row kernels: ${cols} columns exceed the ${this.maxCols} a scratch slot stages.`);
    if (rows > 0 && cols > 0 && (xOffset < 0 || ld < cols || xOffset + (rows - 1) * ld + cols > x.length)) {
      throw new RangeError(
        `WebAssembly row kernels: ${rows} x ${cols} rows (ld ${ld}) from element ${xOffset} exceed the matrix's ${x.length} elements.`,
      );
    }
  }

  /** Address of a[offset .. offset + length): the array itself when it is in the arena, else a copy in `stage`. */
  private stageIn(a: Float64Array, offset: number, length: number, stage: Float64Array): number {
    checkVector(a, offset, length);
    if (this.inArena(a)) return this.at(a, offset);
    stage.set(a.subarray(offset, offset + length));
    return stage.byteOffset;
  }

  /** Copies a staged y back (nothing to do when y is in the arena). */
  private stageOut(y: Float64Array, offset: number, length: number): void {
    if (!this.inArena(y)) y.set(this.yStage.subarray(0, length), offset);
  }
}
