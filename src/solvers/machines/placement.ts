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
 *  - the analysis' sparse LU of A (`currentThreadSparseLuWork`): CHOLMOD's Cholesky of a symmetric positive
 *    definite A (as L and U) or UMFPACK (./nativeLu.ts) on the native backend when the addon has its sparse
 *    part, else the TypeScript LU (its own Cholesky route or its pivoting LU), and its solves with it
 *    (`currentThreadLuSolves`) in the addon or in TypeScript; its products with A^T A
 *    (`currentThreadNormalOperator`) on the fused CSR pass of the backend (addon, WebAssembly or loop).
 * Each choice reads a member of the run's kernels (../linalg/kernels.ts: rows, csr, sparse, wasmArena, ...), never the
 * backend's name; the machines' passes (./machine.ts, ./csrMachine.ts) call these kernels and never ask which backend is active.
 */
import { SingularMatrixError } from '../errors.js';
import type { BackendName, NativeSparse } from '../linalg/backend.js';
import { nativeCsrGradient, typescriptCsrGradient, type CsrGradientKernel, type CsrRows } from '../linalg/csrKernels.js';
import {
  blockConsensusLoop,
  nativeBlockStepKernel,
  nativeCsrBlock,
  type BlockConsensus,
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
import { choleskyUpperInPlace } from '../linalg/cholesky.js';
import { solveRTransposed } from '../linalg/householderQr.js';
import { runKernelsOf, selectedKernels } from '../linalg/kernels.js';
import type { CsrMatrix } from '../sparse/csr.js';
import {
  analysisFor,
  analyzeCholesky,
  factorCholesky,
  factorCholeskyDensely,
  keptPivotsFactor,
  type KeptPivots,
  solveCholesky,
  solveLower,
  solveUpper,
  type CholeskyAnalysis,
  type CholeskyFactor,
  type CholeskySymbolic,
} from '../sparse/sparseCholesky.js';
import { factorGramNative, NativeGramSolver } from './nativeGram.js';
import { factorLuNative } from './nativeLu.js';
import { positiveDefiniteLuWork } from '../sparse/positiveDefiniteLu.js';
import { sparseLuWork, typescriptLuSolves, type LuSolves, type SparseLuFactorization } from '../sparse/sparseLu.js';
import type { Work } from '../cooperative.js';
import type { SymmetricOperator } from '../eigen/lanczos.js';
import type { RowKernels } from '../linalg/wasmRowKernels.js';
import { ArenaStaging, attachArena, WasmArena, wasmKernelsEnabled } from '../linalg/wasmRowKernels.js';
import type { ThreadContext } from '../parallel/protocol.js';
import type { MachineStorage } from './storage.js';
import { stepLayout, type SupportOf } from './stepRules.js';

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
  return { ...placement, arena: gradientChunks && gradientChunksInArena() };
}

/** Whether a gradient pass's CSR chunks run in a WebAssembly arena (the TypeScript backend with its kernels), which copies them in. */
export function gradientChunksInArena(): boolean {
  return selectedKernels().wasmArena && wasmKernelsEnabled();
}

/**
 * Where a gradient pass in an arena makes its CSR chunks' new arrays: the run's arena before it is laid out, which
 * then copies in only what is not there yet. That is the system's staging memory when its setup put the machines'
 * values there (`machineValueStaging`: nothing copied at the run's start), else a new one (the values copied in: at
 * n = 10^6, 40 of 78 MB). Null outside an arena.
 */
export function gradientChunkStaging(system: { readonly arenaStaging?: ArenaStaging | null }): ArenaStaging | null {
  if (!gradientChunksInArena()) return null;
  return system.arenaStaging ?? ArenaStaging.create();
}

/**
 * Where a sparse setup puts its machines' values: in a memory that a gradient run's arena takes as it is
 * (`gradientChunkStaging`) on the TypeScript backend with its kernels, for a setup on threads (a system whose runs
 * take threads too); null (their own arrays) elsewhere.
 */
export function machineValueStaging(onThreads: boolean): ArenaStaging | null {
  return onThreads && gradientChunksInArena() ? ArenaStaging.create() : null;
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

/** The last analysis of a run of TypeScript Gram factorizations (one setup's, on one thread), for the next G with its pattern. */
export interface GramAnalysisReuse {
  last: CholeskyAnalysis | null;
}

/**
 * How the current backend factors Gram matrices: CHOLMOD on the native backend with the addon's sparse part, else
 * TypeScript, which with `reuse` takes the last analysis again for a G of its pattern (../sparse/sparseCholesky.ts
 * analysisFor: the same factor, without its ordering and pattern computed again).
 */
export function gramFactorizer(reuse?: GramAnalysisReuse): GramFactorizer {
  const sparse = currentNativeSparse();
  if (sparse !== null) return (g) => factorGramNative(sparse, g);
  const kernels = selectedKernels();
  return (g) => {
    const analysis = analysisFor(g, reuse?.last ?? null);
    if (reuse !== undefined) reuse.last = analysis;
    return factorFills(analysis)
      ? factorCholeskyDensely(g, analysis, (a, n) => choleskyUpperInPlace(kernels, a, n))
      : factorCholesky(g, analysis);
  };
}

/** gramFactorizer()'s factor of g, or null when g is not numerically positive definite (SingularMatrixError). */
export function gramFactorOrNull(g: CsrMatrix): CholeskyFactor | null {
  try {
    return gramFactorizer()(g);
  } catch (error) {
    if (error instanceof SingularMatrixError) return null;
    throw error;
  }
}

/** keptGramFactor's answer: KeptPivots, with `kept` null where every row and column of g is kept (g_K = g). */
export type KeptGramFactor = Omit<KeptPivots, 'kept'> & { readonly kept: Int32Array | null };

/**
 * The Cholesky factor of g for solves, or, where g is not numerically positive definite, that of g_K, the rows and
 * columns K its pivot-dropping factorization keeps (../sparse/sparseCholesky.ts FactorOptions.dropped, keptPivotsFactor:
 * read off that factorization); null when g_K's pivots fail. On the native backend CHOLMOD first, the dropping
 * factorization only where it refuses g (CHOLMOD has none); on the TypeScript one the dropping factorization at once,
 * whose factor is g's when it drops nothing. It runs by blocks on the current kernels where its factor fills (as
 * gramFactorizer's TypeScript one), else up-looking.
 */
export function keptGramFactor(g: CsrMatrix): KeptGramFactor | null {
  if (currentNativeSparse() !== null) {
    const factor = gramFactorOrNull(g);
    if (factor !== null) return { kept: null, gram: g, factor };
  }
  const analysis = analyzeCholesky(g);
  const dropped = new Uint8Array(g.rows);
  const kernels = selectedKernels();
  const factor = factorFills(analysis)
    ? factorCholeskyDensely(g, analysis, (a, n, marks) => choleskyUpperInPlace(kernels, a, n, marks), { dropped })
    : factorCholesky(g, analysis, { dropped });
  if (!dropped.includes(1)) return { kept: null, gram: g, factor };
  try {
    return keptPivotsFactor(g, factor, dropped);
  } catch (error) {
    if (error instanceof SingularMatrixError) return null;
    throw error;
  }
}

/** Order from which a TypeScript Gram factorization may run densely (below it the up-looking one is as quick). */
const DENSE_CHOLESKY_MIN_N = 256;
/** Largest order factored densely: its n x n copy, 288 MiB at 6,144. */
const DENSE_CHOLESKY_MAX_N = 6144;

/** Whether a factor fills at least half of its lower triangle (../sparse/sparseCholesky.ts factorCholeskyDensely then pays). */
function factorFills(analysis: CholeskyAnalysis): boolean {
  const { n, nnzL } = analysis;
  return n >= DENSE_CHOLESKY_MIN_N && n <= DENSE_CHOLESKY_MAX_N && nnzL >= (n * (n + 1)) / 4;
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
   * The block methods' and the gradient methods' step phase over the machines' supports (../linalg/blockKernels.ts
   * BlockStepKernel): the addon's on the native backend, the arena's WebAssembly one when the supports (strip, cols,
   * colsOffset) are in the arena, else null (./stepRules.ts's loops; all three give the same bits).
   */
  blockStep(n: number, K: number, strip: Int32Array, cols: Int32Array, colsOffset: Int32Array): BlockStepKernel | null;
  /** APC's and MLM's bookkeeping after a machine's block pass: the arena's WebAssembly one, else the TypeScript loop (the same bits). */
  readonly blockConsensus: BlockConsensus;
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
 * The sparse LU of a square A (the analysis' shift-invert solves) on the current backend. A symmetric positive
 * definite A by Cholesky (../sparse/positiveDefiniteLu.ts), any other by LU with pivoting: on the native backend,
 * when the addon has its sparse part, CHOLMOD or UMFPACK, else ../sparse/sparseLu.ts (its own Cholesky or its
 * left-looking LU). The native calls do not yield (bench/sparseLuProfile.ts: seconds at n = 10^6).
 */
export function* currentThreadSparseLuWork(a: CsrMatrix): Work<SparseLuFactorization> {
  const sparse = currentNativeSparse();
  if (sparse === null) return yield* sparseLuWork(a);
  yield undefined;
  // As sparseLuWork does: a symmetric positive definite A by Cholesky (CHOLMOD here), UMFPACK otherwise.
  return (yield* positiveDefiniteLuWork(a, (g) => factorGramNative(sparse, g))) ?? factorLuNative(sparse, a);
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

/** A one-vector step (K = 1) on the calling thread, with the arrays it must run on. */
export interface CurrentThreadStep {
  readonly kernel: BlockStepKernel;
  /** x at 0, the carried vector at 2n (inputLength long). */
  readonly input: Float64Array;
  /** The machines' terms, back to back (outputLength long). */
  readonly output: Float64Array;
}

/**
 * The step of ./stepRules.ts (the gradient methods' on one vector) over `machines`' supports on the calling thread
 * with the current backend's kernel, and zeroed arrays for it: the addon's step, else the WebAssembly one on an arena
 * of its own that holds the supports and both arrays; null: the TypeScript loops (stepRows).
 */
export function currentThreadStep(
  n: number,
  machines: readonly SupportOf[],
  inputLength: number,
  outputLength: number,
): CurrentThreadStep | null {
  const kernels = selectedKernels();
  const layout = stepLayout(machines);
  const native = nativeBlockStepKernel(kernels.blockStep, n, 1, layout.strip, layout.cols, layout.colsOffset);
  if (native !== null) return { kernel: native, input: new Float64Array(inputLength), output: new Float64Array(outputLength) };
  if (!kernels.wasmArena) return null;
  const arrays = { ...layout, input: new Float64Array(inputLength), output: new Float64Array(outputLength) };
  const arena = WasmArena.forSpec(arrays, 0, 1, 0);
  if (arena === null) return null;
  const copy = arena.copyInto(arrays) as typeof arrays;
  const kernel = attachArena(arena.layout, 0).blockStep(n, 1, copy.strip, copy.cols, copy.colsOffset);
  return kernel === null ? null : { kernel, input: copy.input, output: copy.output };
}

/**
 * The fused CSR pass for the calling thread on the current backend (see currentThreadNormalOperator). On the
 * WebAssembly kernels the rows are copied into an arena, unless they are in `staging` (then the arena takes them there).
 */
export function currentThreadCsrGradient(rows: CsrRows, staging: ArenaStaging | null = null): CsrGradientKernel {
  const kernels = selectedKernels();
  if (kernels.csr !== null) return nativeCsrGradient(kernels.csr, rows);
  if (kernels.wasmArena) {
    const arena = WasmArena.forSpec(rows, 0, 1, rows.c, 0, staging);
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
    blockStep: (n, K, strip, cols, colsOffset) =>
      nativeBlockStepKernel(kernels.blockStep, n, K, strip, cols, colsOffset) ?? arena?.blockStep(n, K, strip, cols, colsOffset) ?? null,
    blockConsensus: arena?.blockConsensus ?? blockConsensusLoop,
  };
}
