// Past 500 lines: most of it is the addon's binding types, one documented declaration per native function.
/**
 * The two numerical backends and the switch between them:
 *  - 'typescript': the kernels written in this directory, always present;
 *  - 'native': OpenBLAS + LAPACKE through the small N-API addon in native/ (built at install time
 *    when the system has libopenblas-dev and liblapacke-dev, see scripts/buildNative.mjs).
 * ./kernels.ts reads the selection (`activeBackend()`) and hands the numerics the chosen `Kernels`;
 * the TypeScript path stays the reference and the fallback. The selection is module state, so it is
 * per process (per worker thread); 'auto' (the initial setting) means native when it loads.
 *
 * Conventions of the binding (`NativeBlas`): every array argument is a Float64Array (Int32Array
 * for pivots) plus an element offset; calls run in place on that memory and check every extent
 * (RangeError rather than an out-of-bounds access). BLAS calls and dgetrf/dgetrs are row-major;
 * the Householder and bidiagonal routines are column-major as in LAPACK (the column-major view of
 * a row-major p x c array is the c x p transpose: dgeqrf(c, p, rowsOfA, 0, c, ...) factors A_i^T).
 * Each call runs to completion on the calling thread: callers keep single calls short (see
 * NATIVE_MADDS_PER_CALL) and yield between them.
 *
 * The addon has parts (`parts()`): always 'dense' (the above), 'sparse' when it was built with
 * CHOLMOD (`NativeSparse`, see native/src/sparse_native.c; `nativeSparse()` is that part or null)
 * 'arpack' when it was built with ARPACK (`NativeArpack`, native/src/arpack_native.c), 'metis' when it was
 * built with METIS (`NativeMetis`, native/src/metis_native.c) and 'spqr' when it was built with SuiteSparseQR
 * (`NativeSpqr`, native/src/spqr_native.c).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type BackendName = 'typescript' | 'native';

/** The three row kernels, as the native addon (NativeBlas below) and the WebAssembly module (./wasmRowKernels.ts) provide them. */
export interface RowKernels {
  /** out[k] = X[k] . v, k < rows; X row-major with leading dimension ld from element xOffset. */
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
  ): void;
  /** y += scale sum_k w[k] X[k]. */
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
  ): void;
  /** Each row read once: dots[k] = X[k] . v - bias[k], then y += scale dots[k] X[k]. */
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
  ): void;
}

/** The arrays of P A Q = L U, wherever it was computed (../sparse/sparseLu.ts, the addon's UMFPACK, or a Cholesky factor's, ../sparse/positiveDefiniteLu.ts). */
export interface LuFactorArrays {
  /** Unit lower triangular L by columns, row indices in pivot order; L(k, k) = 1 stored first. */
  readonly lColPtr: Int32Array;
  readonly lRowIdx: Int32Array;
  readonly lValues: Float64Array;
  /** Upper triangular U by columns, row indices in pivot order; U(k, k) stored last. */
  readonly uColPtr: Int32Array;
  readonly uRowIdx: Int32Array;
  readonly uValues: Float64Array;
  /** Row permutation, old-to-new: row i of A is row rowPivot[i] of P A. */
  readonly rowPivot: Int32Array;
  /** Column permutation, new-to-old: column k of A Q is column columnOrder[k] of A. */
  readonly columnOrder: Int32Array;
}

/** A factorization P A Q = L U computed elsewhere (UMFPACK, native/src/lu_native.c), in the same layout. */
export interface ExternalLu extends LuFactorArrays {
  /** A zero pivot was met (the arrays are then not a factorization). */
  readonly singular: boolean;
  readonly strategy: 'symmetric' | 'unsymmetric';
}

export interface NativeBlas extends RowKernels {
  /** Row-major y = alpha op(A) x + beta y, A is m x n with leading dimension lda starting at element aOffset. */
  dgemv(
    trans: boolean,
    m: number,
    n: number,
    alpha: number,
    a: Float64Array,
    aOffset: number,
    lda: number,
    x: Float64Array,
    xOffset: number,
    beta: number,
    y: Float64Array,
    yOffset: number,
  ): void;
  // rowsDot, rowsCombine, rowsFused (RowKernels): the addon's own single-threaded C kernels, not BLAS (the solvers'
  // engine threads them); written arrays must not overlap read ones (RangeError).
  /** Row-major C = alpha op(A) op(B) + beta C; op(A) m x k, op(B) k x n, C m x n. */
  dgemm(
    transA: boolean,
    transB: boolean,
    m: number,
    n: number,
    k: number,
    alpha: number,
    a: Float64Array,
    aOffset: number,
    lda: number,
    b: Float64Array,
    bOffset: number,
    ldb: number,
    beta: number,
    c: Float64Array,
    cOffset: number,
    ldc: number,
  ): void;
  /**
   * The block form of rowsFused over w columns (every block from its array's start, row-major): dots = X V - bias
   * (rows x w), y += scale X^T dots (cols x w), each row of X read once. Absent from an addon built before it.
   */
  rowsFusedBlock?(
    rows: number,
    cols: number,
    w: number,
    scale: number,
    x: Float64Array,
    ld: number,
    v: Float64Array,
    bias: Float64Array,
    dots: Float64Array,
    y: Float64Array,
  ): void;
  /** Row-major B = alpha op(A) B, A m x m triangular (non-unit diagonal), B m x n, both from their arrays' start. Absent from an older addon. */
  dtrmm?(
    upper: boolean,
    trans: boolean,
    m: number,
    n: number,
    alpha: number,
    a: Float64Array,
    lda: number,
    b: Float64Array,
    ldb: number,
  ): void;
  /** Row-major x = op(A)^{-1} x for triangular n x n A (upper or lower; unit diagonal not read when unitDiagonal). */
  dtrsv(
    upper: boolean,
    trans: boolean,
    unitDiagonal: boolean,
    n: number,
    a: Float64Array,
    aOffset: number,
    lda: number,
    x: Float64Array,
    xOffset: number,
  ): void;
  /** Row-major B = alpha op(A)^{-1} B (leftSide) or alpha B op(A)^{-1}; B m x n, A triangular. */
  dtrsm(
    leftSide: boolean,
    upper: boolean,
    trans: boolean,
    unitDiagonal: boolean,
    m: number,
    n: number,
    alpha: number,
    a: Float64Array,
    aOffset: number,
    lda: number,
    b: Float64Array,
    bOffset: number,
    ldb: number,
  ): void;
  /**
   * Row-major P A = L U (partial pivoting) of an m x n matrix, in place; returns LAPACK's info (> 0: first exactly
   * zero pivot, 1-based). ipiv (min(m, n) entries, 1-based): row i was interchanged with row ipiv[i] - 1.
   * LAPACKE factors a transposed copy: meant for panels, not for a whole large matrix in one call.
   */
  dgetrf(m: number, n: number, a: Float64Array, aOffset: number, lda: number, ipiv: Int32Array, ipivOffset: number): number;
  /** Row-major solve op(A) X = B in place (B n x nrhs) with dgetrf's factors and pivots; A is not copied. */
  dgetrs(
    trans: boolean,
    n: number,
    nrhs: number,
    a: Float64Array,
    aOffset: number,
    lda: number,
    ipiv: Int32Array,
    ipivOffset: number,
    b: Float64Array,
    bOffset: number,
    ldb: number,
  ): number;
  /** Column-major Householder QR of the m x n matrix: R on and above the diagonal, reflectors below, tau (min(m, n)). */
  dgeqrf(m: number, n: number, a: Float64Array, aOffset: number, lda: number, tau: Float64Array, tauOffset: number): number;
  /** Column-major: overwrite dgeqrf's output with the first n columns of Q (k reflectors, m >= n >= k). */
  dorgqr(m: number, n: number, k: number, a: Float64Array, aOffset: number, lda: number, tau: Float64Array, tauOffset: number): number;
  /**
   * Column-major recursive QR (m >= n, all BLAS-3): R on and above the diagonal, reflectors V below, and the n x n
   * upper triangular T with H_0 ... H_{n-1} = I - V T V^T (what dlarfb applies).
   */
  dgeqrt3(m: number, n: number, a: Float64Array, aOffset: number, lda: number, t: Float64Array, tOffset: number, ldt: number): number;
  /** Column-major C = H C (or H^T C when transpose), H = I - V T V^T (from dgeqrt3); C m x n, V m x k (only its unit lower trapezoid is read). */
  dlarfb(
    transpose: boolean,
    m: number,
    n: number,
    k: number,
    v: Float64Array,
    vOffset: number,
    ldv: number,
    t: Float64Array,
    tOffset: number,
    ldt: number,
    c: Float64Array,
    cOffset: number,
    ldc: number,
  ): void;
  /**
   * Column-major, m >= n: reduce the first nb rows and columns to upper bidiagonal form (d, e, tauq, taup: nb each) and
   * return X (m x nb) and Y (n x nb) for the trailing update A22 -= V Y2^T + X2 U (one panel of LAPACK's dgebrd).
   */
  dlabrd(
    m: number,
    n: number,
    nb: number,
    a: Float64Array,
    aOffset: number,
    lda: number,
    d: Float64Array,
    dOffset: number,
    e: Float64Array,
    eOffset: number,
    tauq: Float64Array,
    tauqOffset: number,
    taup: Float64Array,
    taupOffset: number,
    x: Float64Array,
    xOffset: number,
    ldx: number,
    y: Float64Array,
    yOffset: number,
    ldy: number,
  ): void;
  /** Column-major, m >= n: upper bidiagonal form (diagonal d: n, superdiagonal e: n - 1) in one call; a is destroyed. */
  dgebrd(
    m: number,
    n: number,
    a: Float64Array,
    aOffset: number,
    lda: number,
    d: Float64Array,
    dOffset: number,
    e: Float64Array,
    eOffset: number,
  ): number;
  /** Column-major: all min(m, n) singular values, descending, in one call (LAPACK dgesdd without vectors); a is destroyed. */
  dgesddValues(m: number, n: number, a: Float64Array, aOffset: number, lda: number, s: Float64Array, sOffset: number): number;
  /** OpenBLAS threads for the following calls (process-wide; OPENBLAS_NUM_THREADS sets the initial count). */
  setThreads(count: number): void;
  threads(): number;
  /** OpenBLAS's build description and the CPU kernel it selected. */
  config(): string;
  /** The parts built in, comma-separated: 'dense', or 'dense,sparse' (with NativeSparse's functions). */
  parts(): string;
  /** glibc's malloc_trim(0): whether free pages went back to the system (false off glibc). Absent from an older addon. */
  trimHeap?(): boolean;
}

/** L of P G P^T = L L^T as plain arrays (columns of L: diagonal first, rows ascending), from CHOLMOD. */
export interface NativeCholeskyParts {
  /** P: row/column k of P G P^T is row/column perm[k] of G. */
  readonly perm: Int32Array;
  readonly colPtr: Int32Array;
  readonly rowIdx: Int32Array;
  readonly values: Float64Array;
  /** n when the factorization succeeded; else the column where a pivot was not positive (L is then empty). */
  readonly minor: number;
}

/** A factor checked once by the addon, for repeated solves (released by its finalizer when unreachable). */
export type NativeSolverHandle = object & { readonly __nativeCholeskySolver: unique symbol };

/** An LU factor checked once by the addon, for repeated solves (released by its finalizer when unreachable). */
export type NativeLuSolverHandle = object & { readonly __nativeLuSolver: unique symbol };

/** The addon's sparse part (CHOLMOD, UMFPACK), present when `parts()` includes 'sparse'. */
export interface NativeSparse {
  /**
   * P G P^T = L L^T for the symmetric positive definite n x n G in CSR with its full symmetric pattern (CHOLMOD's
   * AMD ordering; supernodal where it pays, returned in simplicial form). Nothing of CHOLMOD outlives the call.
   */
  cholmodFactor(n: number, rowPtr: Int32Array, colIdx: Int32Array, values: Float64Array): NativeCholeskyParts;
  /** A solve handle over a factor's arrays (checked here once: RangeError for a malformed factor). */
  choleskySolver(n: number, colPtr: Int32Array, rowIdx: Int32Array, values: Float64Array, perm: Int32Array): NativeSolverHandle;
  /** x[xOffset ..] = G^{-1} b[bOffset ..] (two triangular solves; b and x may be the same array). */
  choleskySolve(handle: NativeSolverHandle, b: Float64Array, bOffset: number, x: Float64Array, xOffset: number): void;
  /** y[yOffset ..] = B^{-1} b[bOffset ..] = L^{-1} P b (B = P^T L, B B^T = G; b and y may be the same array). */
  choleskySolveLower(handle: NativeSolverHandle, b: Float64Array, bOffset: number, y: Float64Array, yOffset: number): void;
  /** x[xOffset ..] = B^{-T} y[yOffset ..] = P^T L^{-T} y (y and x may be the same array). */
  choleskySolveUpper(handle: NativeSolverHandle, y: Float64Array, yOffset: number, x: Float64Array, xOffset: number): void;
  /** b[0 .. n w) = G^{-1} b for w right-hand sides at once (row-major n x w), L read once for all. Absent from an addon built before it. */
  choleskySolveBlock?(handle: NativeSolverHandle, b: Float64Array, w: number): void;
  /**
   * Lets go of a solve handle's arrays now rather than at its finalizer (which Node runs on a later turn of the
   * event loop: a synchronous loop making a factor a step would keep them all). The handle refuses solves after.
   */
  choleskyRelease(handle: NativeSolverHandle): void;
  /**
   * P A Q = L U of the square n x n A given in compressed columns (row indices ascending) by UMFPACK (no row
   * scaling, its automatic strategy and orderings). Nothing of UMFPACK outlives the call.
   */
  umfpackLu(n: number, colPtr: Int32Array, rowIdx: Int32Array, values: Float64Array): ExternalLu;
  /** A solve handle over the arrays of an LU in ExternalLu's layout (checked here once: RangeError for a malformed one). */
  luSolver(
    n: number,
    lColPtr: Int32Array,
    lRowIdx: Int32Array,
    lValues: Float64Array,
    uColPtr: Int32Array,
    uRowIdx: Int32Array,
    uValues: Float64Array,
    rowPivot: Int32Array,
    columnOrder: Int32Array,
  ): NativeLuSolverHandle;
  /** x = A^{-1} b, or A^{-T} b when transposed: ../sparse/sparseLu.ts sparseLuSolve's operations (b and x may be the same array). */
  luSolve(handle: NativeLuSolverHandle, b: Float64Array, x: Float64Array, transposed: boolean): void;
  /** UMFPACK's version. */
  umfpackConfig(): string;
  /** CHOLMOD's and SuiteSparse's versions. */
  sparseConfig(): string;
  /** CHOLMOD objects left allocated after the factorizations so far (0 unless something leaks). */
  sparseLiveBlocks(): number;
}

/** A run of ARPACK (one at a time per process: ARPACK keeps its state in process-wide variables). */
export type NativeArpackHandle = object & { readonly __nativeArpackRun: unique symbol };

/** The addon's ARPACK part (implicitly restarted Lanczos, dsaupd / dseupd), present when `parts()` includes 'arpack'. */
export interface NativeArpack {
  /**
   * Starts the search for the nev largest eigenvalues of a symmetric n x n operator (ncv Lanczos vectors,
   * nev < ncv <= n; ARPACK's test |r| <= tol |theta|; at most maxRestarts restarts; start vector `start`).
   * Null when another ARPACK run of this process is in progress.
   */
  arpackStart(n: number, nev: number, ncv: number, tol: number, maxRestarts: number, start: Float64Array): NativeArpackHandle | null;
  /** True when ARPACK wrote x and asks for y = Op x (read at the next step); false when the iteration ended. */
  arpackStep(handle: NativeArpackHandle, x: Float64Array, y: Float64Array): boolean;
  /** The converged Ritz values (ascending) and unit vectors (vector k at k n), and the counts; ends the run. */
  arpackFinish(
    handle: NativeArpackHandle,
    values: Float64Array,
    vectors: Float64Array,
  ): { readonly converged: number; readonly restarts: number; readonly products: number };
  /** Ends a run without its results (also done by the handle's finalizer). */
  arpackRelease(handle: NativeArpackHandle): void;
}

/** The addon's METIS part (native/src/metis_native.c), present when `parts()` includes 'metis'. */
export interface NativeMetis {
  /**
   * part[v] in [0, nparts) of each vertex of an undirected graph (compressed rows, each edge both ways, no
   * self-loops; positive integer edge weights aligned with idx), minimizing the edge cut by
   * METIS_PartGraphKway with parts of weight at most (1 + imbalance) n / nparts (METIS's ufactor).
   */
  metisPartGraphKway(ptr: Int32Array, idx: Int32Array, edgeWeight: Int32Array, nparts: number, imbalance: number, seed: number): Int32Array;
  /** METIS's version. */
  metisConfig(): string;
}

/** What spqrRowBasis finds of a machine's rows (see NativeSpqr). */
export interface NativeRowBasis {
  /** The rank SuiteSparseQR detected (live columns of the QR of the row-scaled A_i^T). */
  readonly rank: number;
  /** The independent rows (local indices, in the pivot order E): rank of them. */
  readonly rows: Int32Array;
  /** b_S' = A_S A_i^+ b_i, aligned with rows. */
  readonly rhs: Float64Array;
  /** The tolerance SuiteSparseQR used (the one given). */
  readonly tolUsed: number;
  /** Whether the second QR (of R^T, for x_0) ran densely (LAPACK's dgeqrf: R at least a quarter full), else by SuiteSparseQR. */
  readonly denseSolve: boolean;
}

/** The addon's SuiteSparseQR part (native/src/spqr_native.c), present when `parts()` includes 'spqr'. */
export interface NativeSpqr {
  /**
   * The rows of the p x c block A_i (compressed rows, column indices below c, no empty row) that span its row space,
   * by SuiteSparseQR of A_i^T with its rows scaled to unit norm (a row is dependent when what is left of it after the
   * rows pivoted before it is at most tol of its norm), and b_S' = A_S x_0, x_0 = A_i^+ b_i the minimum-norm local
   * least-squares solution (a second QR, of the p x rank R^T: dense when R is at least a quarter full, so that its dense
   * copy takes at most twice R's memory). Nothing p x c is formed from A_i itself.
   */
  spqrRowBasis(
    p: number,
    c: number,
    rowPtr: Int32Array,
    colIdx: Int32Array,
    values: Float64Array,
    b: Float64Array,
    tol: number,
  ): NativeRowBasis;
  /** SuiteSparseQR's version. */
  spqrConfig(): string;
}

/** A chunk of CSR rows checked once by the addon (see native/src/csr_kernels.c), released by its finalizer. */
export type NativeCsrRowsHandle = object & { readonly __nativeCsrRows: unique symbol };

/** The addon's CSR kernels (native/src/csr_kernels.c); an addon built before them lacks these (nativeCsr() is then null). */
export interface NativeCsr {
  /** A handle over a chunk's rows (rows x cols, column indices below cols) and b, checked here once: RangeError when malformed. */
  csrRows(rows: number, cols: number, rowPtr: Int32Array, colIdx: Int32Array, values: Float64Array, b: Float64Array): NativeCsrRowsHandle;
  /** term[termOffset .. + cols) = A^T (A x - b) with x read from xOffset; returns |A x - b|^2 (the TypeScript loop's sums, to the bit). */
  csrFusedGradient(handle: NativeCsrRowsHandle, x: Float64Array, xOffset: number, term: Float64Array, termOffset: number): number;
  /**
   * Over w right-hand sides (row-major blocks, entry (j, c) at j w + c): r = A X - B (rows x w, B given
   * here, the handle's b unused), residual2[c] += |r_c|^2, and g += A^T r (cols x w) unless g is null;
   * each stored entry read once for the w columns; x null: g += A^T r alone, r given. Absent from an addon
   * built before it.
   */
  csrBlockGradient?(
    handle: NativeCsrRowsHandle,
    w: number,
    x: Float64Array | null,
    b: Float64Array,
    r: Float64Array,
    g: Float64Array | null,
    residual2: Float64Array,
  ): void;
  /**
   * The gradient methods' block term in one sweep: g = A^T (A X - B) (cols x w, written whole, no r kept) and
   * residual2[c] += |r_c|^2, csrBlockGradient's sums on a zeroed g to the bit. Absent from an addon built before it.
   */
  csrBlockTerm?(handle: NativeCsrRowsHandle, w: number, x: Float64Array, b: Float64Array, g: Float64Array, residual2: Float64Array): void;
}

/** The machines' supports as the addon's block step reads them (native/src/block_step.c), checked and copied once. */
export type NativeBlockLayoutHandle = object & { readonly __nativeBlockLayout: unique symbol };

/** The addon's block step phase (native/src/block_step.c); an addon built before it lacks these (nativeBlockStep() is then null). */
export interface NativeBlockStep {
  /**
   * Machine i's support: cols[colsOffset[i] .. colsOffset[i + 1]) (ascending, below n), or the consecutive
   * columns from strip[i] when strip[i] >= 0; its term c_i x w, the terms one after another (c_i K each).
   */
  blockStepLayout(n: number, K: number, strip: Int32Array, cols: Int32Array, colsOffset: Int32Array): NativeBlockLayoutHandle;
  /**
   * Rows [first, end) of the n x w blocks in input (X at 0, the carried block at 2 n K): the terms at
   * output[summed ..) summed in machine order, then the rule's update (0 consensus, 1 DGD, 2 Cimmino, 3 D-HBM,
   * 4 D-NAG: src/solvers/machines/blockShard.ts's BlockStepRule), the TypeScript loop's operations to the bit.
   */
  blockStep(
    layout: NativeBlockLayoutHandle,
    rule: number,
    alpha: number,
    beta: number,
    w: number,
    first: number,
    end: number,
    input: Float64Array,
    output: Float64Array,
    summed: number,
  ): void;
}

/** Which parts of the addon are loaded: none when it is not built. */
export interface NativeParts {
  readonly dense: boolean;
  readonly sparse: boolean;
  readonly arpack: boolean;
  readonly metis: boolean;
  readonly spqr: boolean;
}

/**
 * Multiply-adds (flops / 2) one native call may do: ~10-25 ms at the 20-50 GFlop/s OpenBLAS reaches on
 * one or two cores, so a sliced factorization returns to the event loop well within 100 ms.
 */
export const NATIVE_MADDS_PER_CALL = 2.5e8;

const ADDON_FILE = join('native', 'build', 'Release', 'linalg_native.node');
/** Path to the addon file, or 'off' to behave as if it were not built. */
export const NATIVE_ADDON_ENV = 'LINALG_NATIVE_ADDON';

const REQUIRED_FUNCTIONS: readonly (keyof NativeBlas)[] = [
  'dgemv',
  'rowsDot',
  'rowsCombine',
  'rowsFused',
  'dgemm',
  'dtrsv',
  'dtrsm',
  'dgetrf',
  'dgetrs',
  'dgeqrf',
  'dorgqr',
  'dgeqrt3',
  'dlarfb',
  'dlabrd',
  'dgebrd',
  'dgesddValues',
  'setThreads',
  'threads',
  'config',
  'parts',
];

const SPARSE_FUNCTIONS: readonly (keyof NativeSparse)[] = [
  'cholmodFactor',
  'choleskySolver',
  'choleskySolve',
  'choleskySolveLower',
  'choleskySolveUpper',
  'choleskyRelease',
  'umfpackLu',
  'luSolver',
  'luSolve',
  'umfpackConfig',
  'sparseConfig',
  'sparseLiveBlocks',
];

let loaded: { blas: NativeBlas | null; reason: string } | undefined;
let active: BackendName | undefined;

/** native/build/Release/linalg_native.node above this module: src/solvers/linalg (tsx, tests) or dist/src/solvers/linalg. */
function addonCandidates(): string[] {
  const override = process.env[NATIVE_ADDON_ENV];
  if (override) return [override];
  const out: string[] = [];
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 6; up++) {
    out.push(join(dir, ADDON_FILE));
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return out;
}

function load(): { blas: NativeBlas | null; reason: string } {
  if (process.env[NATIVE_ADDON_ENV] === 'off') return { blas: null, reason: `${NATIVE_ADDON_ENV}=off` };
  const file = addonCandidates().find((candidate) => existsSync(candidate));
  if (!file) return { blas: null, reason: `the addon is not built (no ${ADDON_FILE}; see scripts/buildNative.mjs)` };
  try {
    const addon = createRequire(import.meta.url)(file) as Partial<NativeBlas>;
    const absent = REQUIRED_FUNCTIONS.filter((name) => typeof addon[name] !== 'function');
    if (absent.length > 0)
      return { blas: null, reason: `${file} is stale (lacks ${absent.join(', ')}); rebuild it with npm run build:native` };
    return { blas: addon as NativeBlas, reason: '' };
  } catch (error) {
    return { blas: null, reason: `${file} cannot be loaded: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The loaded addon, or null when it is not built or cannot be loaded (never throws). */
export function nativeBlas(): NativeBlas | null {
  loaded ??= load();
  return loaded.blas;
}

/** Why nativeBlas() is null ('' when it is not). */
export function nativeUnavailableReason(): string {
  loaded ??= load();
  return loaded.reason;
}

/**
 * Gives the C heap's free pages back to the system (the addon's trimHeap: glibc's malloc_trim, every arena), whichever
 * backend is selected: Node allocates typed arrays there too, and freed blocks otherwise stay resident. False when
 * nothing went back or the addon is absent. For a caller that has just let go of a large part of what it held.
 */
export function trimNativeHeap(): boolean {
  return nativeBlas()?.trimHeap?.() ?? false;
}

/**
 * What the caller let go of given back to the system: a full collection when the process exposes one (node
 * --expose-gc, as a job's process runs), then the C heap's free pages (trimNativeHeap), where the typed arrays were.
 */
export function giveMemoryBack(): void {
  (globalThis as { gc?: () => void }).gc?.();
  trimNativeHeap();
}

export function activeBackend(): BackendName {
  active ??= nativeBlas() ? 'native' : 'typescript';
  return active;
}

/** Select the backend of this process; 'auto' = native when available. 'native' when unavailable throws. */
export function useBackend(name: BackendName | 'auto'): BackendName {
  if (name === 'native' && !nativeBlas()) {
    throw new Error(`The native numerical backend is not available: ${nativeUnavailableReason()}. Use 'typescript' or 'auto'.`);
  }
  if (name !== 'auto' && name !== 'native' && name !== 'typescript') throw new Error(`Unknown numerical backend '${String(name)}'`);
  active = name === 'auto' ? (nativeBlas() ? 'native' : 'typescript') : name;
  return active;
}

/** The addon's sparse part (CHOLMOD), or null when the addon is not loaded or was built without it (never throws). */
export function nativeSparse(): NativeSparse | null {
  const blas = nativeBlas();
  if (blas === null || !blas.parts().split(',').includes('sparse')) return null;
  const addon = blas as unknown as Partial<NativeSparse>;
  return SPARSE_FUNCTIONS.every((name) => typeof addon[name] === 'function') ? (addon as NativeSparse) : null;
}

const ARPACK_FUNCTIONS: readonly (keyof NativeArpack)[] = ['arpackStart', 'arpackStep', 'arpackFinish', 'arpackRelease'];

/** The addon's ARPACK part, or null when the addon is not loaded or was built without it (never throws). */
export function nativeArpack(): NativeArpack | null {
  const blas = nativeBlas();
  if (blas === null || !blas.parts().split(',').includes('arpack')) return null;
  const addon = blas as unknown as Partial<NativeArpack>;
  return ARPACK_FUNCTIONS.every((name) => typeof addon[name] === 'function') ? (addon as NativeArpack) : null;
}

/** The addon's METIS part, or null when the addon is not loaded or was built without it (never throws). */
export function nativeMetis(): NativeMetis | null {
  const blas = nativeBlas();
  if (blas === null || !blas.parts().split(',').includes('metis')) return null;
  const addon = blas as unknown as Partial<NativeMetis>;
  return typeof addon.metisPartGraphKway === 'function' && typeof addon.metisConfig === 'function' ? (addon as NativeMetis) : null;
}

/** The addon's SuiteSparseQR part, or null when the addon is not loaded or was built without it (never throws). */
export function nativeSpqr(): NativeSpqr | null {
  const blas = nativeBlas();
  if (blas === null || !blas.parts().split(',').includes('spqr')) return null;
  const addon = blas as unknown as Partial<NativeSpqr>;
  return typeof addon.spqrRowBasis === 'function' && typeof addon.spqrConfig === 'function' ? (addon as NativeSpqr) : null;
}

/** The addon's CSR kernels, or null when the addon is not loaded or predates them (never throws). */
export function nativeCsr(): NativeCsr | null {
  const addon = nativeBlas() as unknown as Partial<NativeCsr> | null;
  return addon !== null && typeof addon.csrRows === 'function' && typeof addon.csrFusedGradient === 'function'
    ? (addon as NativeCsr)
    : null;
}

/** The addon's block step, or null when the addon is not loaded or predates it (never throws). */
export function nativeBlockStep(): NativeBlockStep | null {
  const addon = nativeBlas() as unknown as Partial<NativeBlockStep> | null;
  return addon !== null && typeof addon.blockStepLayout === 'function' && typeof addon.blockStep === 'function'
    ? (addon as NativeBlockStep)
    : null;
}

/** The parts of the addon this process can use. */
export function nativeParts(): NativeParts {
  return {
    dense: nativeBlas() !== null,
    sparse: nativeSparse() !== null,
    arpack: nativeArpack() !== null,
    metis: nativeMetis() !== null,
    spqr: nativeSpqr() !== null,
  };
}
