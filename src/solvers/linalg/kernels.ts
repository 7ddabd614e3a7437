/**
 * The kernels the numerics run on, chosen once: this is the only file of src/solvers (with
 * ./backend.ts, which loads the addon) that asks which backend is selected. Everything below the
 * entry points (analyzeWork, the studies' samplers, the partition advisor, a solver run's
 * placement) takes a `Kernels` and never asks again, so which path runs is visible at the call.
 *
 * Two sets:
 *  - TypeScript: the dense loops of ./typescriptDenseKernels.ts, whose large products run on the packed
 *    WebAssembly SIMD kernel of ./wasmDenseKernels.ts, every optional part null (and, in solver runs,
 *    the WebAssembly row kernels of ./wasmRowKernels.ts, attached by ../machines/placement.ts);
 *  - native: the addon's OpenBLAS + LAPACK behind the same dense interface (./nativeDenseKernels.ts),
 *    and its row, CSR and sparse-factor kernels, ARPACK, METIS and SuiteSparseQR when it was built with them.
 * The solver runs' kernels (../machines/placement.ts passKernels) and the sparse analysis' factor solves
 * read the members below (`rows`, `csr`, `sparse`, `wasmArena`, ...), never the backend's name: a test of
 * `backend` against a name happens in this file only (test/architecture.test.ts).
 * The routines call `dense` (./denseKernels.ts) and never test which set it is: only the kernel files
 * (this one, ./backend.ts, ./denseKernels.ts, ./typescriptDenseKernels.ts, ./typescriptFactorizations.ts,
 * ./nativeDenseKernels.ts, ./panelFactorizations.ts) read `blas` (test/architecture.test.ts).
 * One algorithm per metric on both, the sets differing in kernels and in the tiles those kernels
 * like (`productTile`). One choice of algorithm is made here, one line per set (`largeEigensolver`, below).
 */
import {
  activeBackend,
  NATIVE_MADDS_PER_CALL,
  nativeArpack,
  nativeBlas,
  nativeBlockStep,
  nativeCsr,
  nativeMetis,
  nativeSparse,
  nativeSpqr,
  nativeUnavailableReason,
  type BackendName,
  type NativeArpack,
  type NativeBlas,
  type NativeBlockStep,
  type NativeCsr,
  type NativeMetis,
  type NativeSparse,
  type NativeSpqr,
  type RowKernels,
} from './backend.js';
import { nativeDenseBlockTerm, type DenseBlockTerm } from './blockKernels.js';
import type { DenseKernels } from './denseKernels.js';
import { nativeDenseKernelsOf } from './nativeDenseKernels.js';
import { TYPESCRIPT_DENSE_KERNELS } from './typescriptDenseKernels.js';
import { packedProductsOn } from './wasmDenseKernels.js';

/** OpenBLAS's own thread count (process-wide). */
export interface BlasThreads {
  threads(): number;
  setThreads(threads: number): void;
}

/**
 * Holds OpenBLAS to one thread while the caller's own threads call BLAS (a block pass's dtrmm, the
 * sparse analysis' tasks): each solver thread running a threaded BLAS would put ~2x the cores' threads
 * to spin against each other (measured ~10x slower per iteration on 2 cores). Returns the release
 * (idempotent), which restores the count held before unless someone set another meanwhile.
 */
export function holdBlasToOneThread(blas: BlasThreads | null): () => void {
  const before = blas?.threads() ?? 1;
  if (blas === null || before <= 1) return () => undefined;
  blas.setThreads(1);
  let held = true;
  return () => {
    if (held && blas.threads() === 1) blas.setThreads(before);
    held = false;
  };
}

/** Rows and columns of C = X Y^T that one product call should produce (X, Y row-major with rows of length len). */
export interface ProductTile {
  readonly rows: number;
  readonly cols: number;
}

export interface Kernels {
  readonly backend: BackendName;
  /** The dense kernels every routine calls: gemm, gemv, QR, bidiagonalization, triangular solves, LU. */
  readonly dense: DenseKernels;
  /** The addon's BLAS and LAPACK under `dense` (null: the TypeScript loops); read by the kernel files only. */
  readonly blas: NativeBlas | null;
  /** ARPACK behind the Lanczos operator interface (../eigen/lanczos.ts); null: the TypeScript Lanczos. */
  readonly arpack: NativeArpack | null;
  /** The graph partitioner METIS (../partitioning/advisor.ts); null: the TypeScript multilevel partitioner. */
  readonly metis: NativeMetis | null;
  /**
   * SuiteSparseQR: the independent rows of a CSR machine whose rows are dependent (../distributed/sparseSystem.ts);
   * null: the streamed row basis of ../distributed/streamedRowBasis.ts, or the pivot-dropping sparse Cholesky of
   * ../sparse/droppingCholesky.ts for a large basis.
   */
  readonly spqr: NativeSpqr | null;
  /** The addon's row kernels of the solver runs' dense passes (../linalg/rowKernels.ts); null: WebAssembly on an arena (`wasmArena`) or the TypeScript loops. */
  readonly rows: RowKernels | null;
  /**
   * out[0..p) = R^{-T} rhs[0..p) (R p x p upper triangular, row-major) for the dense projection passes: the addon's dtrsv;
   * null: the TypeScript forward substitution (./householderQr.ts solveRTransposed).
   */
  readonly solveRTransposed: ((r: Float64Array, p: number, rhs: Float64Array, out: Float64Array) => void) | null;
  /** The addon's CSR kernels: the fused gradient pass (./csrKernels.ts) and the block sweep (./blockKernels.ts); null: WebAssembly or TypeScript. */
  readonly csr: NativeCsr | null;
  /**
   * The addon's sparse factorizations and their solves: CHOLMOD for the machines' Gram matrices G_i = A_i A_i^T
   * (../machines/nativeGram.ts), UMFPACK for the analysis' LU of A (../machines/nativeLu.ts); null: the TypeScript
   * sparse Cholesky and LU (../sparse/sparseCholesky.ts, ../sparse/sparseLu.ts).
   */
  readonly sparse: NativeSparse | null;
  /** The addon's step phase of a block run (native/src/block_step.c: the machines' terms summed, then the method's update); null: the TypeScript loop. */
  readonly blockStep: NativeBlockStep | null;
  /** The addon's one-sweep term of a dense machine for a block of columns (./blockKernels.ts nativeDenseBlockTerm); null: the block products. */
  readonly denseBlockTerm: DenseBlockTerm | null;
  /** Whether a solver run's data goes into a WebAssembly arena, where its row, CSR and block kernels run (./wasmRowKernels.ts, when enabled). */
  readonly wasmArena: boolean;
  /** OpenBLAS's own thread count, held to 1 while solver threads run BLAS themselves (holdBlasToOneThread); null: no BLAS. */
  readonly blasThreads: BlasThreads | null;
  /**
   * Whether the dense analysis spreads its tasks over threads (../analysis/denseAnalysisTasks.ts): the TypeScript loops
   * run on one core each; the addon's LAPACK and BLAS calls already run on OpenBLAS's threads.
   */
  readonly threadedDenseAnalysis: boolean;
  /** The tile of a scan over C = X X^T of n rows of length len (../analysis/localAngles.ts). */
  productTile(n: number, len: number): ProductTile;
  /**
   * Which eigensolver finds the extreme eigenvalues of the large operators (L, mu, S's ends, ../eigen/lanczos.ts
   * largestEigenvalueWork): the thick-restart Lanczos on `dense`, or ARPACK (`arpack`) with the thick restart as its
   * fallback. The thick restart on both sets: on the native kernels it took about half ARPACK's CPU for L and 6 solve
   * pairs against 42 for mu (Poisson n = 250,000, bench/sparseAnalysisProfile.ts); the tall analysis' L, mu and S's
   * ends 21 s of CPU against 78 s (a 45,000 x 22,500 CSR, 8 machines, bench/tallEigensolver.ts), at n = 10,000 7 s
   * against 25 s, mu in 11 solve pairs against 42 and lambda_min(S) in 12 conjugate-gradient solves against 82, every
   * value within both bounds. ARPACK stays behind the same interface for a caller that passes it (../eigen/lanczos.ts).
   */
  readonly largeEigensolver: 'thick-restart' | 'arpack';
}

/** Rows per panel and columns per chunk of the TypeScript product loop: a 4 x 4 register block over L1-sized tiles. */
const TYPESCRIPT_TILE: ProductTile = { rows: 8, cols: 512 };
/** The same for the packed WebAssembly product (./wasmDenseKernels.ts): each packed entry serves 64 or 256 tiles' worth of products. */
const PACKED_TILE: ProductTile = { rows: 64, cols: 256 };

export const TYPESCRIPT_KERNELS: Kernels = {
  backend: 'typescript',
  dense: TYPESCRIPT_DENSE_KERNELS,
  blas: null,
  arpack: null,
  metis: null,
  spqr: null,
  rows: null,
  solveRTransposed: null,
  csr: null,
  sparse: null,
  blockStep: null,
  denseBlockTerm: null,
  wasmArena: true,
  blasThreads: null,
  threadedDenseAnalysis: true,
  productTile: () => (packedProductsOn() ? PACKED_TILE : TYPESCRIPT_TILE),
  largeEigensolver: 'thick-restart',
};

function nativeKernelsOf(blas: NativeBlas): Kernels {
  return {
    backend: 'native',
    dense: nativeDenseKernelsOf(blas),
    blas,
    arpack: nativeArpack(),
    metis: nativeMetis(),
    spqr: nativeSpqr(),
    rows: blas,
    solveRTransposed(r, p, rhs, out) {
      out.set(rhs.subarray(0, p));
      blas.dtrsv(true, true, false, p, r, 0, p, out, 0);
    },
    csr: nativeCsr(),
    sparse: nativeSparse(),
    blockStep: nativeBlockStep(),
    denseBlockTerm: nativeDenseBlockTerm(blas),
    wasmArena: false,
    blasThreads: blas,
    threadedDenseAnalysis: false,
    // Whole rows of C, as many as one call of NATIVE_MADDS_PER_CALL multiply-adds holds (8 to 256): one dgemm per panel.
    productTile: (n, len) => ({ rows: Math.max(8, Math.min(256, Math.floor(NATIVE_MADDS_PER_CALL / Math.max(1, n * len)))), cols: n }),
    largeEigensolver: 'thick-restart',
  };
}

let native: Kernels | undefined;

/** The kernels of a backend ('native' when the addon is not loaded: the TypeScript ones). */
export function kernelsOf(backend: BackendName): Kernels {
  if (backend === 'typescript') return TYPESCRIPT_KERNELS;
  const blas = nativeBlas();
  if (blas === null) return TYPESCRIPT_KERNELS;
  native ??= nativeKernelsOf(blas);
  return native;
}

/** The kernels of a solver run's backend on one of its threads: kernelsOf, but a native run that cannot load the addon throws. */
export function runKernelsOf(backend: BackendName): Kernels {
  const kernels = kernelsOf(backend);
  if (kernels.backend !== backend) throw new Error(`A solver run on the native backend cannot load it: ${nativeUnavailableReason()}`);
  return kernels;
}

/** The kernels of the backend this process selected (../linalg/backend.ts useBackend): what the outermost entry points default to. */
export function selectedKernels(): Kernels {
  return kernelsOf(activeBackend());
}
