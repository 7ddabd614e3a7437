/**
 * Where a solver run's passes execute, decided once per run, here and nowhere else:
 *  - the backend (TypeScript or native) is the one selected when the run starts (useBackend);
 *    every thread of the run takes it;
 *  - dense data on the TypeScript backend goes into a WebAssembly arena, where the row kernels run
 *    in WebAssembly SIMD (unless they are off or unavailable: ../linalg/wasmRowKernels.ts); sparse
 *    data has no vector kernels and stays in plain (shared) memory;
 *  - each thread then takes its kernels from that decision (`passKernels`): the native addon's row
 *    kernels and dtrsv, or the WebAssembly kernels on the run's arena (or plain TypeScript loops)
 *    and the TypeScript triangular solve; likewise the fused CSR gradient pass (the addon's, the
 *    WebAssembly one, or the TypeScript loop: the same sums to the bit, ../linalg/csrKernels.ts),
 *    for which the gradient pass's CSR chunks go into an arena too (`fleetPlacement`); and the block
 *    passes' products over several right-hand sides (dgemm and the addon's CSR block sweep, or the
 *    WebAssembly block kernels, or the TypeScript loops: ../linalg/blockKernels.ts), whose data,
 *    dense or CSR, goes into an arena on the TypeScript backend (`blockPlacement`).
 *  - sparse machines' Gram matrices G_i = A_i A_i^T are factored by `gramFactorizer()`: CHOLMOD
 *    (./nativeGram.ts) on the native backend when the addon has its sparse part, else the
 *    TypeScript sparse Cholesky; a thread's solves with them go through `gramSolver` of its
 *    kernels (the addon's triangular solves, or ../sparse/sparseCholesky.ts solveCholesky), and the
 *    main thread's (setup, analysis) through `currentThreadGramSolver`;
 *  - the analysis' sparse LU of A (`currentThreadSparseLuWork`): UMFPACK (./nativeLu.ts) on the native
 *    backend when the addon has its sparse part, else the TypeScript LU, and its solves with it
 *    (`currentThreadLuSolves`) in the addon or in TypeScript; its products with A^T A
 *    (`currentThreadNormalOperator`) on the fused CSR pass of the backend (addon, WebAssembly or loop).
 * Each choice reads a member of the run's kernels (../linalg/kernels.ts: rows, csr, sparse, wasmArena, ...), never the
 * backend's name; the machines' passes (./machine.ts, ./csrMachine.ts) call these kernels and never ask which backend is active.
 */
import type { BackendName, NativeSparse } from '../linalg/backend.js';
import {
  csrAddTranspose,
  csrRowProducts,
  nativeCsrGradient,
  typescriptCsrGradient,
  type CsrGradientKernel,
  type CsrRows,
} from '../linalg/csrKernels.js';
import {
  nativeBlockStepKernel,
  nativeCsrBlock,
  type BlockStepKernel,
  type DenseBlockTerm,
  nativeGramBlockSolver,
  typescriptCsrBlock,
  typescriptGramBlockSolver,
  type BlockProduct,
  type CholeskyBlockFactor,
  type CsrBlockKernel,
  type CsrBlockRows,
  type GramBlockSolver,
} from '../linalg/blockKernels.js';
import { solveRTransposed } from '../linalg/householderQr.js';
import { runKernelsOf, selectedKernels, type Kernels } from '../linalg/kernels.js';
import type { CsrMatrix } from '../sparse/csr.js';
import {
  factorCholesky,
  solveCholesky,
  solveLower,
  solveUpper,
  type CholeskyFactor,
  type CholeskySymbolic,
} from '../sparse/sparseCholesky.js';
import { factorGramNative, NativeGramSolver } from './nativeGram.js';
import { factorLuNative } from './nativeLu.js';
import { sparseLuWork, typescriptLuSolves, type LuSolves, type SparseLuFactorization } from '../sparse/sparseLu.js';
import type { Work } from '../cooperative.js';
import type { SymmetricOperator } from '../eigen/lanczos.js';
import type { RowKernels } from '../linalg/wasmRowKernels.js';
import { attachArena, WasmArena, wasmKernelsEnabled } from '../linalg/wasmRowKernels.js';
import type { ThreadContext } from '../parallel/protocol.js';
import { lastThreadStartSeconds } from '../parallel/engine.js';
import type { MachineStorage } from './storage.js';
import { fusedRowPass } from '../linalg/rowKernels.js';

export interface Placement {
  readonly backend: BackendName;
  /** Whether the run's data goes into a WebAssembly arena. */
  readonly arena: boolean;
}

/** The placement of a run over machines of this storage kind, from the current backend selection. */
export function choosePlacement(storage: 'dense' | 'csr'): Placement {
  const kernels = selectedKernels();
  return { backend: kernels.backend, arena: storage === 'dense' && kernels.wasmArena && wasmKernelsEnabled() };
}

/**
 * The placement of a fleet over these machines: as choosePlacement, and CSR chunks of the gradient
 * pass (no Gram factor) go into a WebAssembly arena too on the TypeScript backend, where their
 * fused pass runs in WebAssembly (../linalg/csrKernels.ts); CSR machines of the projection passes
 * have no WebAssembly kernel and stay in plain memory (an arena would only copy them).
 */
export function fleetPlacement(machines: readonly MachineStorage[]): Placement {
  if (machines.some((machine) => machine.storage === 'dense')) return choosePlacement('dense');
  const placement = choosePlacement('csr');
  const gradientChunks = machines.length > 0 && machines.every((machine) => machine.storage === 'csr' && machine.gram === null);
  return { ...placement, arena: gradientChunks && selectedKernels().wasmArena && wasmKernelsEnabled() };
}

/** The placement of a block run over several right-hand sides: in an arena on the TypeScript backend, dense or CSR (the block kernels serve both). */
export function blockPlacement(): Placement {
  const kernels = selectedKernels();
  return { backend: kernels.backend, arena: kernels.wasmArena && wasmKernelsEnabled() };
}

/** The factorization of a machine's Gram matrix (full symmetric pattern, ../sparse/gram.ts): SingularMatrixError when rank-deficient. */
export type GramFactorizer = (g: CsrMatrix) => CholeskyFactor;

/** The addon's sparse part (CHOLMOD, UMFPACK) when the current backend is the native one and has it, else null. */
function currentNativeSparse(): NativeSparse | null {
  return selectedKernels().sparse;
}

/** How the current backend factors Gram matrices: CHOLMOD on the native backend with the addon's sparse part, else TypeScript. */
export function gramFactorizer(): GramFactorizer {
  const sparse = currentNativeSparse();
  return sparse === null ? (g) => factorCholesky(g) : (g) => factorGramNative(sparse, g);
}

/** Repeated solves with one machine's factor, B B^T = G (B = P^T L), on one thread. */
export interface GramSolver {
  /** x = G^{-1} b (b and x may be the same array). */
  solve(b: Float64Array, x: Float64Array): void;
  /** y = B^{-1} b = L^{-1} P b. */
  solveLower(b: Float64Array, y: Float64Array): void;
  /** x = B^{-T} y = P^T L^{-T} y. */
  solveUpper(y: Float64Array, x: Float64Array): void;
  /** Lets go of the factor now rather than when collected (no solves after). */
  release(): void;
}

/** A machine's Gram factor as its storage carries it (without a work vector). */
export interface StoredGramFactor {
  readonly symbolic: CholeskySymbolic;
  readonly values: Float64Array;
}

/** The kernels one thread's passes run on. */
export interface PassKernels {
  /** Vector kernels for dense rows (see ../linalg/rowKernels.ts), or null: the TypeScript loops do every row. */
  readonly rows: RowKernels | null;
  /** out[0..p) = R^{-T} rhs[0..p) (forward substitution; R p x p upper triangular, row-major). */
  solveRTransposed(r: Float64Array, p: number, rhs: Float64Array, out: Float64Array): void;
  /** This thread's solver with a sparse machine's Gram factor. */
  gramSolver(factor: StoredGramFactor): GramSolver;
  /** The gradient methods' fused pass over a chunk of CSR rows (the addon's, the arena's WebAssembly one, or the TypeScript loop). */
  csrGradient(rows: CsrRows): CsrGradientKernel;
  /**
   * The block passes' dense product (../linalg/blockKernels.ts): dgemm, the arena's WebAssembly one
   * (its blocks in the arena: the thread's `workspace` and the engine's vectors), or the TypeScript loop.
   */
  readonly blockProduct: BlockProduct;
  /** The block passes' dense pass in one sweep over a machine's rows (the addon's), else null: three blockProduct calls. */
  readonly denseBlockTerm: DenseBlockTerm | null;
  /** The block passes' CSR sweep over w columns bound to a chunk of rows: the addon's, the arena's WebAssembly one, or the TypeScript loop. */
  csrBlock(rows: CsrBlockRows): CsrBlockKernel;
  /**
   * This thread's block solves with a sparse machine's Gram factor (B = G_i^{-1} B for w columns at once):
   * CHOLMOD's on the native backend with the addon's sparse part, the arena's WebAssembly one (`work`,
   * n w entries, in the arena), else the TypeScript loop (the last two: solveCholesky's bits on each column).
   */
  gramBlockSolver(factor: StoredGramFactor, work: Float64Array): GramBlockSolver;
  /**
   * The block methods' step phase over the machines' supports (../linalg/blockKernels.ts BlockStepKernel):
   * the addon's on the native backend, else null (the TypeScript loop of ./blockShard.ts, the same bits).
   */
  blockStep(n: number, K: number, strip: Int32Array, cols: Int32Array, colsOffset: Int32Array): BlockStepKernel | null;
}

/** The factor's arrays as the block solves read them. */
function blockFactor(factor: StoredGramFactor): CholeskyBlockFactor {
  const { n, colPtr, rowIdx, ordering } = factor.symbolic;
  return { n, colPtr, rowIdx, values: factor.values, perm: ordering.perm };
}

/** TypeScript solves, with this thread's own work vector. */
function typescriptGramSolver(stored: StoredGramFactor): GramSolver {
  const factor: CholeskyFactor = { ...stored, work: new Float64Array(stored.symbolic.n) };
  return {
    solve(b, x) {
      solveCholesky(factor, b, x);
    },
    solveLower(b, y) {
      solveLower(factor, b, y);
    },
    solveUpper(y, x) {
      solveUpper(factor, y, x);
    },
    // Plain arrays: the collector frees them.
    release() {},
  };
}

/**
 * A solver with a machine's Gram factor for the calling thread, on the current backend (the addon's
 * triangular solves, ~3-4x the TypeScript loops' speed, else those): what the setup's condition
 * estimate and the analysis' scaled Gram operators solve with, outside the solver threads.
 */
export function currentThreadGramSolver(factor: StoredGramFactor): GramSolver {
  return gramSolverWith(currentNativeSparse())(factor);
}

/** Gram solvers on the addon's triangular solves when its sparse part is given, else on the TypeScript ones. */
function gramSolverWith(sparse: NativeSparse | null): (factor: StoredGramFactor) => GramSolver {
  return sparse === null ? typescriptGramSolver : (factor) => new NativeGramSolver(sparse, factor);
}

/**
 * The sparse LU of a square A (the analysis' shift-invert solves) on the current backend: UMFPACK on the
 * native backend when the addon has its sparse part (7-10x faster than the TypeScript left-looking LU on
 * 2-D grids, the same fill), else ../sparse/sparseLu.ts. The native call does not yield (about a second
 * per 100,000 rows of such a grid).
 */
export function* currentThreadSparseLuWork(a: CsrMatrix): Work<SparseLuFactorization> {
  const sparse = currentNativeSparse();
  if (sparse === null) return yield* sparseLuWork(a);
  yield undefined;
  return factorLuNative(sparse, a);
}

/**
 * Solves with an LU of A on the calling thread: the addon's on the native backend (sparseLuSolve's
 * operations in C, the same bits; ~3x faster at n = 10^6, where the analysis' shift-invert runs
 * apply them ~80 times to a factor of 89 million nonzeros), else the TypeScript ones.
 */
export function currentThreadLuSolves(f: SparseLuFactorization): LuSolves {
  const sparse = currentNativeSparse();
  if (sparse === null) return typescriptLuSolves(f);
  const handle = sparse.luSolver(f.n, f.lColPtr, f.lRowIdx, f.lValues, f.uColPtr, f.uRowIdx, f.uValues, f.rowPivot, f.columnOrder);
  return {
    solve: (b, x) => sparse.luSolve(handle, b, x, false),
    solveTransposed: (b, x) => sparse.luSolve(handle, b, x, true),
  };
}

/**
 * v -> A^T (A v) on the calling thread, one fused pass over A's rows (the gradient pass with b = 0):
 * the addon's kernel on the native backend, the WebAssembly one on the TypeScript backend (A copied
 * once into an arena of its own; the vectors go through the arena's slot), else the TypeScript loop.
 * At n = 10^6, where lambda_max(A^T A) takes thousands of products, the addon's pass is 5x the plain
 * loop's speed. All add the same products in the same order as
 * ../sparse/normalOperators.ts normalOperatorOfSparse, so the products, and every estimate
 * made from them, are the same to the bit on each.
 */
export function currentThreadNormalOperator(a: CsrMatrix): SymmetricOperator {
  const rows: CsrRows = { p: a.rows, c: a.cols, rowPtr: a.rowPtr, colIdx: a.colIdx, values: a.values, b: new Float64Array(a.rows) };
  const kernel = currentThreadCsrGradient(rows);
  return {
    size: a.cols,
    apply(x, y) {
      kernel.run(x, 0, y, 0);
    },
  };
}

/** The fused CSR pass for the calling thread on the current backend (see currentThreadNormalOperator). */
function currentThreadCsrGradient(rows: CsrRows): CsrGradientKernel {
  const kernels = selectedKernels();
  if (kernels.csr !== null) return nativeCsrGradient(kernels.csr, rows);
  if (kernels.wasmArena) {
    const arena = WasmArena.forSpec(rows, 0, 1, rows.c);
    if (arena !== null) return attachArena(arena.layout, 0).csrGradient(arena.copyInto(rows) as CsrRows);
  }
  return typescriptCsrGradient(rows);
}

const typescriptSolve = (r: Float64Array, p: number, rhs: Float64Array, out: Float64Array): void => {
  solveRTransposed(r, p, rhs, out, 0);
};

/**
 * The kernels of a thread of a run: the run's kernels' native parts where it has them, else this thread's
 * WebAssembly kernels on the run's arena (none on the native backend), else the TypeScript loops.
 */
export function passKernels(context: ThreadContext): PassKernels {
  const kernels = runKernelsOf(context.backend);
  const { csr, sparse, dense } = kernels;
  const arena = context.arenaKernels;
  return {
    rows: kernels.rows ?? arena,
    solveRTransposed: kernels.solveRTransposed ?? typescriptSolve,
    gramSolver: gramSolverWith(sparse),
    csrGradient:
      csr !== null ? (rows) => nativeCsrGradient(csr, rows) : arena !== null ? (rows) => arena.csrGradient(rows) : typescriptCsrGradient,
    blockProduct: arena !== null ? arena.blockProduct : dense.gemm.bind(dense),
    denseBlockTerm: kernels.denseBlockTerm,
    csrBlock: (rows) => nativeCsrBlock(csr, rows) ?? (arena !== null ? arena.csrBlock(rows) : typescriptCsrBlock(rows)),
    gramBlockSolver: (factor, work) =>
      nativeGramBlockSolver(sparse, blockFactor(factor)) ??
      (arena !== null ? arena.gramBlockSolver(blockFactor(factor), work) : typescriptGramBlockSolver(blockFactor(factor), work)),
    blockStep: (n, K, strip, cols, colsOffset) => nativeBlockStepKernel(kernels.blockStep, n, K, strip, cols, colsOffset),
  };
}

/** How long a calibration stands before it is measured again (the host's load can change). */
export const CALIBRATION_REFRESH_SECONDS = 600;

export interface CalibrationClock {
  /** Milliseconds, monotonic (performance.now). */
  now(): number;
  /** Wall-clock ISO time, for `measuredAt`. */
  iso(): string;
}

const systemClock: CalibrationClock = { now: () => performance.now(), iso: () => new Date().toISOString() };

function medianSeconds(clock: CalibrationClock, repeats: number, body: () => void): number {
  body(); // warm-up: compilation, page faults
  const samples: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = clock.now();
    body();
    samples.push((clock.now() - t0) / 1000);
  }
  samples.sort((a, b) => a - b);
  return Math.max(samples[samples.length >> 1], 1e-9);
}

/** Kernel throughputs measured on the backend a job runs on (measureCalibration). */
export interface Calibration {
  backend: 'typescript' | 'native';
  /** The dense row kernels' fused pass (dot + axpy per entry) on a block larger than the last-level cache, flops per second. */
  flopsPerSecond: number;
  /** The same pass on a block that stays in the last-level cache (inCacheBytes), flops per second. */
  flopsPerSecondInCache: number;
  /** The CSR gradient pass out of cache, bytes of the matrix (12 per stored entry) per second. */
  bytesPerSecond: number;
  /** The same pass on a matrix of inCacheBytes, bytes per second. */
  bytesPerSecondInCache: number;
  /**
   * The CSR projections' plain loops over A_i (A_i v, then A_i^T y: ./csrMachine.ts, TypeScript on every backend)
   * out of cache, bytes of the matrix (12 per stored entry, each loop) per second.
   */
  csrLoopBytesPerSecond: number;
  csrLoopBytesPerSecondInCache: number;
  /**
   * Solves with a Gram factor L_i (forward then backward sweep) by the kernel the machines use (the addon's on the
   * native backend, the TypeScript loops otherwise) out of cache, bytes of the factor (12 per entry, each sweep) per second.
   */
  factorBytesPerSecond: number;
  factorBytesPerSecondInCache: number;
  /** Size of the in-cache blocks; the out-of-cache ones are outOfCacheBytes. A working set between the two is priced in between. */
  inCacheBytes: number;
  outOfCacheBytes: number;
  /** A plain loop over n-long vectors (APC's x_i update, the taskmaster's sums), bytes per second. */
  vectorBytesPerSecond: number;
  /** Fixed cost of one chunk's pass (a kernel call on a tiny block, averaged over many), seconds. */
  perMachineOverheadSeconds: number;
  /** A threaded run's start: its worker threads started, the data copied into shared memory (the last such start in this process, else a default). */
  threadStartSeconds: number;
  /** One phase's hand-over to the worker threads and barrier, per iteration of a threaded run (not measured: a documented constant). */
  phaseSyncSeconds: number;
  /** The runner's own work per iteration: the residual and consensus measures, the trace, the stopping tests (a documented constant). */
  runnerIterationSeconds: number;
  /** When measured (ISO 8601); measured once per worker process and refreshed after refreshAfterSeconds or on a backend change. */
  measuredAt: string;
  refreshAfterSeconds: number;
}

/**
 * A threaded run's start before any has been measured in this process: starting a worker and loading
 * the solver modules in it took ~40-60 ms compiled and ~150-250 ms from the TypeScript sources (tsx)
 * on the 2-core host (../parallel/threads.ts).
 */
export const DEFAULT_THREAD_START_SECONDS = import.meta.url.endsWith('.ts') ? 0.15 : 0.05;
/**
 * One phase of a threaded iteration beyond the chunks' own work: the generation bump, the workers
 * waking from their spin or futex wait, the barrier and the calling thread's reduction start. A few
 * microseconds on an idle machine, tens once other processes hold the cores; measured on the 2-core
 * host from runs with and without threads (bench/timeToSolution.ts).
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

/** The fused dense pass of the current backend (the addon's, WebAssembly's on an arena, or TypeScript's) on p x c rows. */
function denseRowPassTimer(kernels: Kernels, p: number, c: number): { pass: () => void; tiny: () => void } {
  const a = new Float64Array(p * c);
  for (let k = 0; k < a.length; k++) a[k] = ((k * 7919) % 1000) / 1000 - 0.5;
  const dense = {
    a,
    start: new Int32Array(p),
    end: new Int32Array(p).fill(c),
    v: new Float64Array(c).fill(0.5),
    bias: new Float64Array(p),
    dots: new Float64Array(p),
    y: new Float64Array(c),
  };
  let rows = kernels.rows;
  let d = dense;
  if (kernels.wasmArena) {
    const arena = WasmArena.forSpec(dense, 0, 1, c);
    if (arena !== null) {
      rows = attachArena(arena.layout, 0);
      d = arena.copyInto(dense) as typeof dense;
    }
  }
  // One row of 8 entries (its own extent): what a call costs beyond its entries.
  const tinyStart = new Int32Array(1);
  const tinyEnd = Int32Array.of(8);
  return {
    pass: () => fusedRowPass(rows, d.a, p, c, d.start, d.end, d.v, d.bias, d.dots, 0, 1, d.y),
    tiny: () => fusedRowPass(rows, d.a, 1, 8, tinyStart, tinyEnd, d.v, d.bias, d.dots, 0, 1, d.y),
  };
}

/** A banded CSR block of `rows` rows, 5 entries a row (columns r - 2 .. r + 2, clamped), and vectors of its length. */
interface BandedBlock {
  readonly rows: number;
  readonly rowPtr: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
  readonly v: Float64Array;
  readonly y: Float64Array;
}

const BAND = 5;

function bandedBlock(rows: number): BandedBlock {
  const rowPtr = new Int32Array(rows + 1);
  for (let k = 0; k <= rows; k++) rowPtr[k] = k * BAND;
  const colIdx = new Int32Array(rows * BAND);
  for (let e = 0; e < colIdx.length; e++) colIdx[e] = Math.min(rows - 1, Math.max(0, Math.floor(e / BAND) + (e % BAND) - 2));
  return {
    rows,
    rowPtr,
    colIdx,
    values: new Float64Array(rows * BAND).fill(0.25),
    v: new Float64Array(rows).fill(1),
    y: new Float64Array(rows),
  };
}

/** The fused CSR gradient pass of the current backend (5 entries a row) on the block. */
function csrPassTimer(block: BandedBlock): () => void {
  const { rows, rowPtr, colIdx, values, v, y } = block;
  const kernel = currentThreadCsrGradient({ p: rows, c: rows, rowPtr, colIdx, values, b: y });
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
 * The calling thread's Gram solver (the machines' kernel), both sweeps, with a banded factor of 5 entries a
 * column (the diagonal and 4 below it) written over the block's arrays (which the other timers no longer
 * read): the calibration's memory is what a job's process keeps, so no second block is allocated.
 */
function gramSolveTimer(block: BandedBlock): () => void {
  const { rows, rowPtr: colPtr, colIdx: rowIdx, values, v } = block;
  for (let j = 0; j < rows; j++) colPtr[j + 1] = colPtr[j] + Math.min(BAND, rows - j);
  for (let j = 0; j < rows; j++)
    for (let q = colPtr[j]; q < colPtr[j + 1]; q++) {
      rowIdx[q] = j + q - colPtr[j];
      values[q] = q === colPtr[j] ? 2 : -0.1;
    }
  const nnz = colPtr[rows];
  const perm = Int32Array.from({ length: rows }, (_, k) => k);
  const parent = Int32Array.from({ length: rows }, (_, k) => (k + 1 < rows ? k + 1 : -1));
  const symbolic: CholeskySymbolic = {
    n: rows,
    ordering: { perm, inverse: perm },
    parent,
    colPtr,
    rowIdx: rowIdx.subarray(0, nnz),
    nnzL: nnz,
    flops: 0,
  };
  const solver = currentThreadGramSolver({ symbolic, values: values.subarray(0, nnz) });
  v.fill(1);
  return () => solver.solve(v, v);
}

/**
 * The time-to-solution model's throughputs (../analysis/timeToSolution.ts), measured on the kernels
 * the iterations use on the current backend, each the median of `repeats` timings after a warm-up:
 * the dense fused row pass (the addon's, WebAssembly or TypeScript) and the CSR gradient pass
 * (5 entries a row) each on a block of 8 MB, which stays in the last-level cache (32 MB here) as the
 * bench's problems' matrices do, and on one of 40 MB, which does not (the addon's dense pass runs
 * ~2x faster in cache, WebAssembly's ~1.4x, the CSR passes ~1.2x); the same for the CSR projections'
 * plain loops over A_i and for solves with a banded factor on the machines' Gram solver (its speed is
 * neither the gradient kernel's nor the loops': the addon's solves ~4x the loops, the TypeScript ones
 * ~1.5-2x); a plain loop over 250,000-long
 * vectors (APC's x_i update); and 1000 fused passes over one row of 8 (a chunk's fixed cost).
 * The out-of-cache blocks with fewer samples (they vary less). About 1-1.5 s in all on a quiet 2-core machine, once per process (currentCalibration).
 */
export function measureCalibration(clock: CalibrationClock = systemClock, repeats = 7): Calibration {
  const kernels = selectedKernels();
  const { backend } = kernels;
  const c = 1024;
  const small = denseRowPassTimer(kernels, IN_CACHE_BYTES / 8 / c, c);
  const denseInCache = medianSeconds(clock, repeats, small.pass);
  const calls = 1000;
  const tiny =
    medianSeconds(clock, repeats, () => {
      for (let k = 0; k < calls; k++) small.tiny();
    }) / calls;
  // The out-of-cache blocks take ~5x as long a pass and vary less: fewer samples keep the calibration short (it is
  // synchronous, and a job's process cannot notice anything else meanwhile, its parent's death included).
  const largeRepeats = Math.max(3, repeats >> 1);
  const denseOut = medianSeconds(clock, largeRepeats, denseRowPassTimer(kernels, OUT_OF_CACHE_BYTES / 8 / c, c).pass);
  // Rows whose arrays together hold the block's bytes (the vectors stream with the matrix): a job's worker
  // process keeps what calibration allocated, so it allocates no more than the dense block.
  const csrSmallRows = Math.floor(IN_CACHE_BYTES / CSR_CALIBRATION_ROW_BYTES);
  const csrLargeRows = Math.floor(OUT_OF_CACHE_BYTES / CSR_CALIBRATION_ROW_BYTES);
  // One block per size serves the gradient pass, then the loops, then (rewritten in place) the factor.
  const csrSmall = bandedBlock(csrSmallRows);
  const csrInCache = medianSeconds(clock, repeats, csrPassTimer(csrSmall));
  const loopsInCache = medianSeconds(clock, repeats, csrLoopsTimer(csrSmall));
  const solveInCache = medianSeconds(clock, repeats, gramSolveTimer(csrSmall));
  const csrLarge = bandedBlock(csrLargeRows);
  const csrOut = medianSeconds(clock, largeRepeats, csrPassTimer(csrLarge));
  const loopsOut = medianSeconds(clock, largeRepeats, csrLoopsTimer(csrLarge));
  const solveOut = medianSeconds(clock, largeRepeats, gramSolveTimer(csrLarge));
  // A loop or a sweep reads each of its 5 entries a row (12 bytes) once; the factor's last 4 columns are shorter.
  const factorBytes = (rows: number): number => 2 * 12 * (5 * rows - 10);

  // Vectors: APC's update of x_i, 3 vectors of 8 bytes an entry.
  const n = 250_000;
  const xbar = new Float64Array(n).fill(1);
  const local = new Float64Array(n);
  let sink = 0;
  // Twice the repeats: a short loop (~0.3 ms), the noisiest timing on a shared host.
  const vectorSeconds = medianSeconds(clock, 2 * repeats + 1, () => {
    let d2 = 0;
    for (let j = 0; j < n; j++) {
      const diff = xbar[j] - local[j];
      d2 += diff * diff;
      local[j] += 0.5 * diff;
    }
    sink += d2;
  });
  if (Number.isNaN(sink)) throw new Error('calibration: not a number');

  return {
    backend,
    flopsPerSecond: (4 * OUT_OF_CACHE_BYTES) / 8 / denseOut,
    flopsPerSecondInCache: (4 * IN_CACHE_BYTES) / 8 / denseInCache,
    bytesPerSecond: (12 * 5 * csrLargeRows) / csrOut,
    bytesPerSecondInCache: (12 * 5 * csrSmallRows) / csrInCache,
    csrLoopBytesPerSecond: (2 * 12 * 5 * csrLargeRows) / loopsOut,
    csrLoopBytesPerSecondInCache: (2 * 12 * 5 * csrSmallRows) / loopsInCache,
    factorBytesPerSecond: factorBytes(csrLargeRows) / solveOut,
    factorBytesPerSecondInCache: factorBytes(csrSmallRows) / solveInCache,
    inCacheBytes: IN_CACHE_BYTES,
    outOfCacheBytes: OUT_OF_CACHE_BYTES,
    vectorBytesPerSecond: (24 * n) / vectorSeconds,
    perMachineOverheadSeconds: tiny,
    threadStartSeconds: lastThreadStartSeconds() ?? DEFAULT_THREAD_START_SECONDS,
    phaseSyncSeconds: PHASE_SYNC_SECONDS,
    runnerIterationSeconds: RUNNER_ITERATION_SECONDS,
    measuredAt: clock.iso(),
    refreshAfterSeconds: CALIBRATION_REFRESH_SECONDS,
  };
}

let cachedCalibration: { calibration: Calibration; at: number } | null = null;

/** The calibration of this process' current backend: measured on first use, again after CALIBRATION_REFRESH_SECONDS or a backend change (the threads' start: the engine's latest). */
export function currentCalibration(clock: CalibrationClock = systemClock): Calibration {
  const cached = cachedCalibration;
  if (
    cached !== null &&
    cached.calibration.backend === selectedKernels().backend &&
    clock.now() - cached.at < CALIBRATION_REFRESH_SECONDS * 1000
  ) {
    // The threads' start is the engine's latest measurement, not the one at calibration time.
    return { ...cached.calibration, threadStartSeconds: lastThreadStartSeconds() ?? cached.calibration.threadStartSeconds };
  }
  const calibration = measureCalibration(clock);
  cachedCalibration = { calibration, at: clock.now() };
  return calibration;
}
