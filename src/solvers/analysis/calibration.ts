/**
 * The time-to-solution model's calibration (../analysis/timeToSolution.ts): the throughputs of the
 * kernels the iterations use, measured on the backend a job runs on, once per process and again after
 * CALIBRATION_REFRESH_SECONDS (currentCalibration), with the kernels ../machines/placement.ts picks for the
 * calling thread; and what the threaded runs of this process measured of their own start, phases and the threads'
 * slowdown side by side (../parallel/engine.ts).
 */
import { ALGORITHM_IDS, type AlgorithmId } from '../algorithms/registry.js';
import type { SpectralData } from '../algorithms/types.js';
import { buildDistributedSystem, type DistributedSystem } from '../distributed/distributedSystem.js';
import { createProblem } from '../input/createProblem.js';
import { generateMatrix } from '../input/generators.js';
import { csrAddTranspose, csrRowProducts } from '../linalg/csrKernels.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { accumulateRowCombination, fusedRowPass, multiplyRows } from '../linalg/rowKernels.js';
import { giveMemoryBack } from '../linalg/backend.js';
import { ArenaStaging, attachArena, WasmArena } from '../linalg/wasmRowKernels.js';
import { supportConsensusSums } from '../machines/csrConsensusPass.js';
import { currentThreadCsrGradient, currentThreadGramSolver, currentThreadStep, passKernels } from '../machines/placement.js';
import { applyStepRule, STEP_RULE_CODE, stepRows } from '../machines/stepRules.js';
import { lastPhaseSyncSeconds, lastThreadSlowdown, lastThreadStartSeconds } from '../parallel/engine.js';
import { setParallelMinWork } from '../parallel/threads.js';
import { runAlgorithmWork } from '../runner/runAlgorithm.js';
import type { CholeskySymbolic } from '../sparse/sparseCholesky.js';
import { poisson2d } from '../sparse/generators.js';
import { analyze, spectralDataOf } from './analyze.js';
import { iterationCost, secondsHere, systemCost } from './timeToSolution.js';
import type { Calibration, FixedCost, IterationOverheads } from './types.js';

export type { Calibration, FixedCost, IterationOverheads } from './types.js';

/** The column list of a strip the consensus loop is timed on: not read (its columns are first + t). */
const NO_COLUMNS = new Int32Array(0);

/** How long a calibration stands before it is measured again (the host's load can change). */
export const CALIBRATION_REFRESH_SECONDS = 600;

export interface CalibrationClock {
  /** Milliseconds, monotonic (performance.now). */
  now(): number;
  /** Wall-clock ISO time, for `measuredAt`. */
  iso(): string;
}

export const systemClock: CalibrationClock = { now: () => performance.now(), iso: () => new Date().toISOString() };

/**
 * Warm-up before a timing: at least WARM_UP_CALLS calls and WARM_UP_MS of them (at most WARM_UP_MAX_CALLS).
 * One call was not enough: a process' first calibration read the TypeScript loops ~2.5x and the addon's
 * dense pass ~1.5x slower than its later ones (the loops not yet optimized, fresh pages), and a worker
 * process prices its jobs by its first calibration for CALIBRATION_REFRESH_SECONDS.
 */
const WARM_UP_CALLS = 3;
const WARM_UP_MS = 30;
const WARM_UP_MAX_CALLS = 40;

export function medianSeconds(clock: CalibrationClock, repeats: number, body: () => void): number {
  const warmUpFrom = clock.now();
  for (let calls = 0; calls < WARM_UP_MAX_CALLS; calls++) {
    body();
    if (calls + 1 >= WARM_UP_CALLS && clock.now() - warmUpFrom >= WARM_UP_MS) break;
  }
  const samples: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = clock.now();
    body();
    samples.push((clock.now() - t0) / 1000);
  }
  samples.sort((a, b) => a - b);
  return Math.max(samples[samples.length >> 1], 1e-9);
}

/**
 * A threaded run's start before any has been measured in this process: starting a worker and loading
 * the solver modules in it took ~40-60 ms compiled and ~150-250 ms from the TypeScript sources (tsx)
 * on the 2-core host (../parallel/threads.ts).
 */
export const DEFAULT_THREAD_START_SECONDS = import.meta.url.endsWith('.ts') ? 0.15 : 0.05;
/**
 * One phase of a threaded iteration beyond the chunks' own work (the generation bump, the workers
 * waking from their spin or futex wait, the barrier) before any threaded run of this process has
 * measured it (../parallel/engine.ts lastPhaseSyncSeconds): a few microseconds on an idle machine,
 * 20-80 once other processes hold the cores or the cores are virtual ones (the 2-core host).
 */
export const PHASE_SYNC_SECONDS = 20e-6;

/**
 * The runner's work per iteration beyond the passes (../runner/runAlgorithm.ts: measures, trace record,
 * stopping tests, the yield): what makes a small run's iteration (n = 900) ~3-5 microseconds slower
 * than its passes, measured with bench/timeToSolution.ts.
 */
export const RUNNER_ITERATION_SECONDS = 3e-6;

const IN_CACHE_BYTES = 8 * 2 ** 20;
const OUT_OF_CACHE_BYTES = 40 * 2 ** 20;
/** Bytes a CSR calibration row holds: 5 values and column indices, its row pointer, b, x and the term. */
const CSR_CALIBRATION_ROW_BYTES = 5 * 12 + 4 + 3 * 8;

/** Rows of the calibration's triangle R (upper triangular, row-major, R^T's rows k.. of row k): a machine's p. */
const TRIANGLE_ROWS = 128;

/**
 * Where the calibration's blocks take turns (measureCalibration): OUT_OF_CACHE_BYTES, in a WebAssembly staging memory
 * when the backend's kernels run in arenas (the arenas then take the blocks where they are: `staging`), so that no block
 * is ever held twice.
 */
interface BlockBuffer {
  readonly bytes: Uint8Array;
  readonly staging: ArenaStaging | null;
}

function blockBuffer(kernels: Kernels): BlockBuffer {
  const staging = kernels.wasmArena ? ArenaStaging.create() : null;
  if (staging === null) return { bytes: new Uint8Array(OUT_OF_CACHE_BYTES), staging };
  const region = staging.view(Float64Array, staging.reserve(OUT_OF_CACHE_BYTES), OUT_OF_CACHE_BYTES / 8);
  return { bytes: new Uint8Array(region.buffer, region.byteOffset, OUT_OF_CACHE_BYTES), staging };
}

/** `length` entries of `Construct` at `byteOffset` of a block buffer. */
function blockView<T>(
  buffer: BlockBuffer,
  Construct: new (buffer: ArrayBufferLike, byteOffset: number, length: number) => T,
  byteOffset: number,
  length: number,
): T {
  return new Construct(buffer.bytes.buffer, buffer.bytes.byteOffset + byteOffset, length);
}

/**
 * The dense passes of the current backend (the addon's, WebAssembly's on an arena, or TypeScript's) on p x c rows:
 * the fused pass (the gradient methods', APC's), the two product passes apart (Cimmino's A_i x and Q_i w), one row
 * of 8 entries (a call's fixed cost), and the passes over a machine's triangle R (Cimmino's R^{-T} r, APC's R^T w).
 * The block in `buffer` when given (see BlockBuffer), else in an array of its own.
 */
export function denseRowPassTimer(
  kernels: Kernels,
  p: number,
  c: number,
  buffer: BlockBuffer | null = null,
): { pass: () => void; products: () => void; tiny: () => void; triangle: () => void } {
  const a = buffer === null ? new Float64Array(p * c) : blockView(buffer, Float64Array, 0, p * c);
  for (let k = 0; k < a.length; k++) a[k] = ((k * 7919) % 1000) / 1000 - 0.5;
  const q = TRIANGLE_ROWS;
  // A well-conditioned triangle: 2 on the diagonal, off-diagonal entries summing to less than 1 a row.
  const r = new Float64Array(q * q);
  for (let i = 0; i < q; i++) for (let j = i; j < q; j++) r[i * q + j] = i === j ? 2 : 1 / (2 * q);
  const dense = {
    a,
    start: new Int32Array(p),
    end: new Int32Array(p).fill(c),
    v: new Float64Array(c).fill(0.5),
    bias: new Float64Array(p),
    dots: new Float64Array(p),
    y: new Float64Array(c),
    r,
    rStart: Int32Array.from({ length: q }, (_, k) => k),
    rEnd: new Int32Array(q).fill(q),
    rhs: new Float64Array(q).fill(1),
    solved: new Float64Array(q),
  };
  let arenaKernels = null;
  let d = dense;
  if (kernels.wasmArena) {
    const arena = WasmArena.forSpec(dense, 0, 1, c, 0, buffer?.staging ?? null);
    if (arena !== null) {
      arenaKernels = attachArena(arena.layout, 0);
      d = arena.copyInto(dense) as typeof dense;
    }
  }
  // The kernels a run's machines take on this thread (../machines/placement.ts).
  const machineKernels = passKernels({ backend: kernels.backend, arenaKernels });
  const rows = machineKernels.rows;
  // One row of 8 entries (its own extent): what a call costs beyond its entries.
  const tinyStart = new Int32Array(1);
  const tinyEnd = Int32Array.of(8);
  return {
    pass: () => fusedRowPass(rows, d.a, p, c, d.start, d.end, d.v, d.bias, d.dots, 0, 1, d.y),
    products: () => {
      multiplyRows(rows, d.a, p, c, d.start, d.end, d.v, d.dots, 0);
      accumulateRowCombination(rows, d.a, p, c, d.start, d.end, d.dots, 0, 1e-9, d.y);
    },
    tiny: () => fusedRowPass(rows, d.a, 1, 8, tinyStart, tinyEnd, d.v, d.bias, d.dots, 0, 1, d.y),
    triangle: () => {
      machineKernels.solveRTransposed(d.r, q, d.rhs, d.solved);
      accumulateRowCombination(rows, d.r, q, q, d.rStart, d.rEnd, d.solved, 0, 1e-9, d.rhs);
      d.rhs.fill(1);
    },
  };
}

/** Columns of the calibration's dense blocks (rows: the block's bytes over 8 c). */
const DENSE_CALIBRATION_COLUMNS = 1024;

/** Calls of a triangle's passes, and of the one-row pass, a timing takes (each call lasts microseconds). */
const TRIANGLE_CALLS = 16;
const TINY_CALLS = 1000;

/**
 * Seconds of the in-cache dense timings (a block of IN_CACHE_BYTES, garbage when this returns): the fused pass, the
 * product passes, a triangle's passes and a call of the one-row pass. A triangle's passes take tens of microseconds:
 * timed 16 at a time (one at a time, the TypeScript loops' first calibration in a process read 1.3-3.6 ns an entry).
 */
function denseInCacheSeconds(
  kernels: Kernels,
  clock: CalibrationClock,
  repeats: number,
  buffer: BlockBuffer,
): { pass: number; products: number; triangle: number; tiny: number } {
  const small = denseRowPassTimer(kernels, IN_CACHE_BYTES / 8 / DENSE_CALIBRATION_COLUMNS, DENSE_CALIBRATION_COLUMNS, buffer);
  const batch =
    (calls: number, body: () => void): (() => void) =>
    () => {
      for (let k = 0; k < calls; k++) body();
    };
  return {
    pass: medianSeconds(clock, repeats, small.pass),
    products: medianSeconds(clock, repeats, small.products),
    triangle: medianSeconds(clock, repeats, batch(TRIANGLE_CALLS, small.triangle)) / TRIANGLE_CALLS,
    tiny: medianSeconds(clock, repeats, batch(TINY_CALLS, small.tiny)) / TINY_CALLS,
  };
}

/**
 * A banded CSR block of `rows` rows, 5 entries a row (columns r - 2 .. r + 2, clamped), and vectors of its length, in
 * `buffer` (its first CSR_CALIBRATION_ROW_BYTES rows bytes, whatever they held).
 */
interface BandedBlock {
  readonly rows: number;
  readonly rowPtr: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
  readonly v: Float64Array;
  readonly y: Float64Array;
  /** The staging memory the arrays are in, if any (see BlockBuffer). */
  readonly staging: ArenaStaging | null;
}

const BAND = 5;

function bandedBlock(rows: number, buffer: BlockBuffer): BandedBlock {
  // The doubles first (8-byte aligned), then the indices.
  let at = 0;
  const take = <T>(Construct: new (buffer: ArrayBufferLike, byteOffset: number, length: number) => T, bytes: number, length: number): T => {
    const view = blockView(buffer, Construct, at, length);
    at += bytes * length;
    return view;
  };
  const values = take(Float64Array, 8, rows * BAND).fill(0.25);
  const v = take(Float64Array, 8, rows).fill(1);
  const y = take(Float64Array, 8, rows).fill(0);
  const colIdx = take(Int32Array, 4, rows * BAND);
  const rowPtr = take(Int32Array, 4, rows + 1);
  for (let k = 0; k <= rows; k++) rowPtr[k] = k * BAND;
  for (let e = 0; e < colIdx.length; e++) colIdx[e] = Math.min(rows - 1, Math.max(0, Math.floor(e / BAND) + (e % BAND) - 2));
  return { rows, rowPtr, colIdx, values, v, y, staging: buffer.staging };
}

/** The fused CSR gradient pass of the current backend (5 entries a row) on the block. */
function csrPassTimer(block: BandedBlock): () => void {
  const { rows, rowPtr, colIdx, values, v, y } = block;
  const kernel = currentThreadCsrGradient({ p: rows, c: rows, rowPtr, colIdx, values, b: y }, block.staging);
  const term = new Float64Array(rows);
  return () => kernel.run(v, 0, term, 0);
}

/** The CSR projections' loops A_i v and A_i^T y (./csrMachine.ts) on the block. */
function csrLoopsTimer(block: BandedBlock): () => void {
  const { rows, rowPtr, colIdx, values, v, y } = block;
  const a = { p: rows, rowPtr, colIdx, values };
  return () => {
    csrRowProducts(a, v, null, y);
    csrAddTranspose(a, y, 0, -1e-3, v, 0, null);
  };
}

/**
 * Entries a column of the calibration's two banded factors: the shortest columns a factor has (a CSR block's
 * own band) and columns as long as the machines' factors of 2-D grids' strips have (~20) and longer. A sweep's
 * time is a cost per column (its loop's start, the diagonal) plus one per entry: the two bands separate them
 * (priced by the 5-entry band alone, a factor of 20 entries a column cost 2.7x its measured solve native, 1.3x
 * TypeScript).
 */
const FACTOR_BANDS = [5, 40] as const;

/** A banded factor's nonzeros: `band` entries a column (the diagonal and band - 1 below it), the last columns shorter. */
function bandedFactorNnz(rows: number, band: number): number {
  return band * rows - (band * (band - 1)) / 2;
}

/**
 * The calling thread's Gram solver (the machines' kernel), both sweeps, with a banded factor of `band` entries
 * a column on as many rows as the block's arrays hold (its 5 entries a row), written over the block's arrays
 * (which the other timers no longer read): the calibration's memory is what a job's process keeps, so no
 * second block is allocated. Each solve reads the same right-hand side (in place, repeated solves would shrink
 * it towards subnormal numbers). The off-diagonal entries sum to a fifth of the diagonal, so L is far from singular.
 */
function gramSolveTimer(block: BandedBlock, band: number): { time: () => void; rows: number } {
  const { rowPtr: colPtr, colIdx: rowIdx, values, v, y } = block;
  const rows = Math.floor((block.rows * BAND) / band);
  colPtr[0] = 0;
  for (let j = 0; j < rows; j++) colPtr[j + 1] = colPtr[j] + Math.min(band, rows - j);
  const off = -0.4 / (band - 1);
  for (let j = 0; j < rows; j++)
    for (let q = colPtr[j]; q < colPtr[j + 1]; q++) {
      rowIdx[q] = j + q - colPtr[j];
      values[q] = q === colPtr[j] ? 2 : off;
    }
  const nnz = colPtr[rows];
  const perm = Int32Array.from({ length: rows }, (_, k) => k);
  const parent = Int32Array.from({ length: rows }, (_, k) => (k + 1 < rows ? k + 1 : -1));
  const symbolic: CholeskySymbolic = {
    n: rows,
    ordering: { perm, inverse: perm },
    parent,
    colPtr: colPtr.subarray(0, rows + 1),
    rowIdx: rowIdx.subarray(0, nnz),
    nnzL: nnz,
    flops: 0,
  };
  const solver = currentThreadGramSolver({ symbolic, values: values.subarray(0, nnz) });
  const b = v.subarray(0, rows).fill(1);
  const x = y.subarray(0, rows);
  return { time: () => solver.solve(b, x), rows };
}

/**
 * The factor solves' two costs from timings of both bands (in cache) and of the long band out of cache:
 * seconds per column of a sweep, and bytes of the factor (12 an entry, each sweep) per second in and out of
 * cache. A fit whose column cost comes out negative (timing noise) prices entries alone, by the long band.
 */
export function factorSolveRates(
  inCache: readonly { rows: number; band: number; seconds: number }[],
  outOfCache: { rows: number; band: number; seconds: number },
): { factorColumnSeconds: number; factorBytesPerSecondInCache: number; factorBytesPerSecond: number } {
  const columns = (t: { rows: number }): number => 2 * t.rows;
  const bytes = (t: { rows: number; band: number }): number => 2 * 12 * bandedFactorNnz(t.rows, t.band);
  const [short, long] = inCache;
  const det = columns(short) * bytes(long) - columns(long) * bytes(short);
  let perColumn = det > 0 ? (short.seconds * bytes(long) - long.seconds * bytes(short)) / det : 0;
  if (!(perColumn > 0)) perColumn = 0;
  const perByte = (t: { rows: number; band: number; seconds: number }): number =>
    Math.max(t.seconds - columns(t) * perColumn, 0.25 * t.seconds) / bytes(t);
  return {
    factorColumnSeconds: perColumn,
    factorBytesPerSecondInCache: 1 / perByte(long),
    factorBytesPerSecond: 1 / perByte(outOfCache),
  };
}

/** Entries of the calibration's vectors (APC's x_i update, D-HBM's, the taskmaster's loops). */
const VECTOR_ENTRIES = 250_000;

/**
 * Seconds of the vector loops over VECTOR_ENTRIES entries: D-HBM's update, the gradient methods' step and the CSR
 * consensus taskmaster's loop (their arrays garbage when this returns).
 */
function vectorSeconds(clock: CalibrationClock, repeats: number): { update: number; step: number; consensus: number } {
  const n = VECTOR_ENTRIES;
  // Vectors: D-HBM's update in TypeScript (../machines/stepRules.ts applyStepRule), 5 vectors of 8 bytes an entry
  // (z, g, x read; z, x written), g = 1 so that z stays normal. The loop is a module's function: the same loop
  // written in this closure ran 3-6x slower in every calibration after a process's first (V8 deoptimized the
  // closure, whose captured sum changed type), so a worker's prices changed at its first refresh.
  const xbar = new Float64Array(n).fill(1);
  const local = new Float64Array(n);
  const momentum = new Float64Array(n);
  // Twice the repeats: a short loop (~0.3 ms), the noisiest timing on a shared host.
  const updateSeconds = medianSeconds(clock, 2 * repeats + 1, () => applyStepRule('dhbm', 1e-3, 0.5, 0, local, momentum, 0, xbar, 0, n));
  // The gradient methods' step as a range of its phase runs it (../machines/machineShard.ts STEP_PHASE): one term of
  // n summed from 0 and D-HBM's update, in the layout (x, a gap, z) the addon's step reads; on the native backend the
  // addon's step, on the TypeScript one the WebAssembly step (its arrays in an arena of their own), else stepRows'
  // loops. Priced per byte as the model counts them: 16 an entry of a term, 40 of x.
  const whole = [{ c: n, full: true, cols: NO_COLUMNS }];
  const step = currentThreadStep(n, whole, 3 * n, n);
  const blocks = step?.input ?? new Float64Array(3 * n);
  const term = step?.output ?? new Float64Array(n);
  term.fill(1);
  const stepSums = step === null ? new Float64Array(n) : new Float64Array(0);
  const outputOffset = Int32Array.of(0, n);
  const rule = { rule: 'dhbm', alpha: 1e-3, beta: 0.5 } as const;
  const stepSeconds = medianSeconds(clock, 2 * repeats + 1, () => {
    if (step !== null) step.kernel.run(STEP_RULE_CODE.dhbm, rule.alpha, rule.beta, 1, 0, n, blocks, term, 0);
    else stepRows(whole, outputOffset, 0, rule, n, 1, 1, 0, n, blocks, term, stepSums);
  });
  let sink = local[0] + blocks[0];
  // The CSR consensus taskmaster's measure-and-advance loop itself (../machines/csrConsensusPass.ts
  // supportConsensusSums) on one support of n consecutive columns (a strip, as contiguous machines' supports
  // are, read without the column list; the taskmaster's n-long loop reads as contiguously): per entry
  // e = xbar - y, e^2 added in double-double (a dependent chain, ~2x a streaming loop's time here),
  // (e - D)^2 added and D stepped.
  const offsets = new Float64Array(n);
  const terms = new Float64Array(n).fill(0.5);
  const sums = new Float64Array(3);
  const consensusSeconds = medianSeconds(clock, 2 * repeats + 1, () => {
    supportConsensusSums(xbar, local, offsets, terms, 0, n, 0, NO_COLUMNS, 0.5, 0.5, sums);
    sink += sums[0] + sums[1] + sums[2];
  });
  if (Number.isNaN(sink)) throw new Error('calibration: not a number');
  return { update: updateSeconds, step: stepSeconds, consensus: consensusSeconds };
}

/**
 * The time-to-solution model's throughputs (../analysis/timeToSolution.ts), measured on the kernels
 * the iterations use on the current backend, each the median of `repeats` timings after a warm-up. First the vectors:
 * a plain loop over 250,000-long vectors (APC's x_i update), the gradient methods' step and the CSR consensus
 * taskmaster's loop over as many entries (vectorSeconds). Then, on blocks that take turns in one buffer of 40 MB:
 * the dense fused row pass (the addon's, WebAssembly or TypeScript), the dense product passes apart (Cimmino's)
 * and the CSR gradient pass (5 entries a row) each on a block of 8 MB, which stays in the last-level cache (32 MB here) as the
 * bench's problems' matrices do, and on one of 40 MB, which does not (the addon's dense pass runs
 * ~2x faster in cache, WebAssembly's ~1.4x, the CSR passes ~1.2x); the same for the CSR projections'
 * plain loops over A_i; solves with banded factors of 5 and 40 entries a column on the machines' Gram
 * solver in cache, and of 40 out of cache (factorSolveRates: a cost per column and one per entry; their
 * speed is neither the gradient kernel's nor the loops');
 * a solve with R^T and R^T w on a triangle of 128 rows (in cache); 1000 fused passes over one row of 8 (a chunk's
 * fixed cost); the in-cache dense timings again (the faster of the two kept); then each
 * algorithm's fixed costs per iteration on tiny systems (measureOverheads).
 * The out-of-cache blocks with fewer samples (they vary less). About 1.4-1.5 s in all native, 1.9-2.1 s TypeScript, on the 2-core machine, once per process (currentCalibration).
 */
export function measureCalibration(clock: CalibrationClock = systemClock, repeats = 7): Calibration {
  const kernels = selectedKernels();
  const { backend } = kernels;
  const c = DENSE_CALIBRATION_COLUMNS;
  // The vectors first, let go of before the blocks.
  const vectors = vectorSeconds(clock, repeats);
  giveMemoryBack();
  // One buffer holds each block in turn, in cache and out: what the calibration holds at once is what a job's process
  // must have room for below JOB_MEMORY_LIMIT_MB beside the job (a fresh process calibrates at its first analysis). The
  // addon's CSR handles keep their arrays until the event loop turns, after the calibration: blocks of their own would
  // have added up (../../jobs/computeJob.ts processCalibration lets go of the buffer then).
  const large = blockBuffer(kernels);
  const firstInCache = denseInCacheSeconds(kernels, clock, repeats, large);
  // The out-of-cache blocks take ~5x as long a pass and vary less: fewer samples keep the calibration short (it is
  // synchronous, and a job's process cannot notice anything else meanwhile, its parent's death included).
  const largeRepeats = Math.max(3, repeats >> 1);
  const [denseOut, productsOut] = ((timer) => [
    medianSeconds(clock, largeRepeats, timer.pass),
    medianSeconds(clock, largeRepeats, timer.products),
  ])(denseRowPassTimer(kernels, OUT_OF_CACHE_BYTES / 8 / c, c, large));
  // Rows whose arrays together hold the block's bytes (the vectors stream with the matrix).
  const csrSmallRows = Math.floor(IN_CACHE_BYTES / CSR_CALIBRATION_ROW_BYTES);
  const csrLargeRows = Math.floor(OUT_OF_CACHE_BYTES / CSR_CALIBRATION_ROW_BYTES);
  // One block per size serves the gradient pass, then the loops, then (rewritten in place) the factor; both in the
  // large buffer, one after the other.
  const csrSmall = bandedBlock(csrSmallRows, large);
  const csrInCache = medianSeconds(clock, repeats, csrPassTimer(csrSmall));
  const loopsInCache = medianSeconds(clock, repeats, csrLoopsTimer(csrSmall));
  const solvesInCache = FACTOR_BANDS.map((band) => {
    const timer = gramSolveTimer(csrSmall, band);
    return { rows: timer.rows, band, seconds: medianSeconds(clock, repeats, timer.time) };
  });
  const csrLarge = bandedBlock(csrLargeRows, large);
  const csrOut = medianSeconds(clock, largeRepeats, csrPassTimer(csrLarge));
  const loopsOut = medianSeconds(clock, largeRepeats, csrLoopsTimer(csrLarge));
  const longBand = FACTOR_BANDS[FACTOR_BANDS.length - 1];
  const solveOutTimer = gramSolveTimer(csrLarge, longBand);
  const factor = factorSolveRates(solvesInCache, {
    rows: solveOutTimer.rows,
    band: longBand,
    seconds: medianSeconds(clock, largeRepeats, solveOutTimer.time),
  });
  // The CSR passes' terms (~4 MB) let go of before the tiny systems' runs below.
  giveMemoryBack();

  // The in-cache dense timings again, the faster of the two kept: the first runs on code the engine may still be
  // optimizing (WebAssembly tiers up in the background) or meets another process's burst. One TypeScript calibration
  // in ten read the fused pass at 3.4 GFLOP/s where the others read 7.6-8.7 (bench/calibrationRepeats.ts --processes).
  const againInCache = denseInCacheSeconds(kernels, clock, repeats, large);
  const denseInCache = Math.min(firstInCache.pass, againInCache.pass);
  const productsInCache = Math.min(firstInCache.products, againInCache.products);
  const triangleSeconds = Math.min(firstInCache.triangle, againInCache.triangle);
  const tiny = Math.min(firstInCache.tiny, againInCache.tiny);

  const rates: Calibration = {
    backend,
    flopsPerSecond: (4 * OUT_OF_CACHE_BYTES) / 8 / denseOut,
    flopsPerSecondInCache: (4 * IN_CACHE_BYTES) / 8 / denseInCache,
    // Two passes of 2 flops an entry.
    productFlopsPerSecond: (4 * OUT_OF_CACHE_BYTES) / 8 / productsOut,
    productFlopsPerSecondInCache: (4 * IN_CACHE_BYTES) / 8 / productsInCache,
    // The solve and the combination: each reads the triangle's q (q + 1) / 2 entries once.
    triangleEntrySeconds: triangleSeconds / (TRIANGLE_ROWS * (TRIANGLE_ROWS + 1)),
    bytesPerSecond: (12 * 5 * csrLargeRows) / csrOut,
    bytesPerSecondInCache: (12 * 5 * csrSmallRows) / csrInCache,
    csrLoopBytesPerSecond: (2 * 12 * 5 * csrLargeRows) / loopsOut,
    csrLoopBytesPerSecondInCache: (2 * 12 * 5 * csrSmallRows) / loopsInCache,
    ...factor,
    inCacheBytes: IN_CACHE_BYTES,
    outOfCacheBytes: OUT_OF_CACHE_BYTES,
    vectorBytesPerSecond: (40 * VECTOR_ENTRIES) / vectors.update,
    stepBytesPerSecond: (56 * VECTOR_ENTRIES) / vectors.step,
    consensusEntrySeconds: vectors.consensus / VECTOR_ENTRIES,
    perMachineOverheadSeconds: tiny,
    threadStartSeconds: lastThreadStartSeconds() ?? DEFAULT_THREAD_START_SECONDS,
    phaseSyncSeconds: lastPhaseSyncSeconds() ?? PHASE_SYNC_SECONDS,
    threadSlowdown: threadSlowdowns({ dense: 1, csr: 1 }),
    runnerIterationSeconds: RUNNER_ITERATION_SECONDS,
    overheads: null,
    measuredAt: clock.iso(),
    refreshAfterSeconds: CALIBRATION_REFRESH_SECONDS,
  };
  return { ...rates, overheads: measureOverheads(clock, rates) };
}

/** Iterations each tiny run is timed over (after its first), and the machine counts the fixed costs are fitted on. */
const OVERHEAD_ITERATIONS = 300;
const OVERHEAD_MACHINES = [2, 8] as const;

/** The tiny systems: 16 unknowns, a Gaussian matrix (dense) or the 4 x 4 grid's Laplacian (CSR), on m machines. */
function tinySystem(storage: 'dense' | 'csr', m: number): DistributedSystem {
  const A = storage === 'dense' ? generateMatrix({ generator: 'gaussian', n: 16, mean: 0, std: 1, seed: 11 }) : poisson2d(4);
  return buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
}

/** Seconds per iteration of a run of OVERHEAD_ITERATIONS iterations, between its first yield and its last (one a iteration). */
function timedIteration(clock: CalibrationClock, system: DistributedSystem, id: AlgorithmId, spectral: SpectralData): number {
  const options = { tolerance: 1e-300, maxIterations: OVERHEAD_ITERATIONS + 1, stopOnStagnation: false, divergenceTolerance: 1e300 };
  const work = runAlgorithmWork(system, id, spectral, options);
  let first = 0;
  let last = 0;
  let yields = 0;
  for (let step = work.next(); !step.done; step = work.next()) {
    last = clock.now();
    if (yields++ === 0) first = last;
  }
  return yields > 1 ? (last - first) / 1000 / (yields - 1) : 0;
}

/** A tiny system with what pricing and running its iterations need. */
interface TinyRun {
  system: DistributedSystem;
  spectral: SpectralData;
  cost: ReturnType<typeof systemCost>;
}

/**
 * Each algorithm's fixed costs per iteration on each storage (see Calibration.overheads): every algorithm runs
 * OVERHEAD_ITERATIONS iterations on a tiny system of 2 machines and of 8, on one thread (too small for more, whatever
 * the work threshold), once untimed on every system (the warm-up), then three times (the fastest); each run's seconds
 * per iteration less what the kernels' rates price (secondsHere without a runner constant) is the fixed cost at that
 * machine count, and the two give a line in m (clamped at 0). ~0.4 s in a process's first calibration (the warm-up runs cold code), ~0.1 s after.
 *
 * The warm-up is a whole pass, not a first run of each algorithm: the runner's and the methods' code is shared, and
 * V8 optimizes it over many calls of all of them. Without it a process's first calibration (the one a worker prices
 * its jobs by for CALIBRATION_REFRESH_SECONDS) measured dense APC's fixed cost at 11-22 us an iteration where its
 * later ones measured 0.6-1.8 (bench/calibrationRepeats.ts --processes), and priced a one-thread n = 200 APC
 * iteration at 1.3-1.4x its measured time.
 */
export function measureOverheads(clock: CalibrationClock, rates: Calibration): IterationOverheads {
  // One thread whatever the work threshold is: a caller's threshold of 0 would start worker threads for each of the
  // ~100 tiny runs (~0.5 s each under tsx: a 50-60 s calibration), and price their start as a fixed cost.
  const threshold = setParallelMinWork(Number.MAX_VALUE);
  try {
    return fixedCostsPerIteration(clock, rates);
  } finally {
    setParallelMinWork(threshold);
  }
}

function fixedCostsPerIteration(clock: CalibrationClock, rates: Calibration): IterationOverheads {
  const kernelsOnly: Calibration = { ...rates, runnerIterationSeconds: 0, overheads: null };
  const tiny = (storage: 'dense' | 'csr', m: number): TinyRun => {
    const system = tinySystem(storage, m);
    return { system, spectral: spectralDataOf(analyze(system)), cost: systemCost(system) };
  };
  const [fewMachines, manyMachines] = OVERHEAD_MACHINES;
  const runs = {
    dense: [tiny('dense', fewMachines), tiny('dense', manyMachines)],
    csr: [tiny('csr', fewMachines), tiny('csr', manyMachines)],
  };
  for (const run of [...runs.dense, ...runs.csr]) for (const id of ALGORITHM_IDS) timedIteration(clock, run.system, id, run.spectral);
  /** Each algorithm's seconds per iteration beyond the kernels' price on a tiny system. */
  const beyondKernels = ({ system, spectral, cost }: TinyRun): Record<AlgorithmId, number> => {
    const out = {} as Record<AlgorithmId, number>;
    for (const id of ALGORITHM_IDS) {
      // The fastest of three runs: a run of a few milliseconds can meet a collection, or lose its core.
      let perIteration = Infinity;
      for (let run = 0; run < 3; run++) perIteration = Math.min(perIteration, timedIteration(clock, system, id, spectral));
      out[id] = Math.max(0, perIteration - secondsHere(iterationCost(id, cost), kernelsOnly, 1));
    }
    return out;
  };
  /** The line through the fixed costs at the two machine counts, for every algorithm. */
  const fitted = (storage: 'dense' | 'csr'): Record<AlgorithmId, FixedCost> => {
    const [few, many] = runs[storage].map(beyondKernels);
    const out = {} as Record<AlgorithmId, FixedCost>;
    for (const id of ALGORITHM_IDS) {
      const perMachine = Math.max(0, (many[id] - few[id]) / (manyMachines - fewMachines));
      out[id] = { perIteration: Math.max(0, few[id] - perMachine * fewMachines), perMachine };
    }
    return out;
  };
  const dense = fitted('dense');
  const csr = fitted('csr');
  const out = {} as IterationOverheads;
  for (const id of ALGORITHM_IDS) out[id] = { dense: dense[id], csr: csr[id] };
  return out;
}

/** The threads' slowdown on each storage as this process's threaded runs last measured it, else `otherwise`'s. */
function threadSlowdowns(otherwise: Calibration['threadSlowdown']): Calibration['threadSlowdown'] {
  return { dense: lastThreadSlowdown('dense') ?? otherwise.dense, csr: lastThreadSlowdown('csr') ?? otherwise.csr };
}

let cachedCalibration: { calibration: Calibration; at: number } | null = null;

/** Whether currentCalibration would measure (none yet, or it is older than CALIBRATION_REFRESH_SECONDS, or of another backend). */
export function calibrationDue(clock: CalibrationClock = systemClock): boolean {
  const cached = cachedCalibration;
  return (
    cached === null ||
    cached.calibration.backend !== selectedKernels().backend ||
    clock.now() - cached.at >= CALIBRATION_REFRESH_SECONDS * 1000
  );
}

/** The calibration of this process' current backend: measured on first use, again after CALIBRATION_REFRESH_SECONDS or a backend change (the threads' start: the engine's latest). */
export function currentCalibration(clock: CalibrationClock = systemClock): Calibration {
  const cached = cachedCalibration;
  if (cached !== null && !calibrationDue(clock)) {
    // The threads' start, phases and slowdown are the engine's latest measurements, not those at calibration time.
    return {
      ...cached.calibration,
      threadStartSeconds: lastThreadStartSeconds() ?? cached.calibration.threadStartSeconds,
      phaseSyncSeconds: lastPhaseSyncSeconds() ?? cached.calibration.phaseSyncSeconds,
      threadSlowdown: threadSlowdowns(cached.calibration.threadSlowdown),
    };
  }
  const calibration = measureCalibration(clock);
  cachedCalibration = { calibration, at: clock.now() };
  return calibration;
}
