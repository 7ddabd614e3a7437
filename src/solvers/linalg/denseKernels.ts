/**
 * The dense kernels the numerics run on: every operation below is one method here, with two
 * implementations, ./typescriptDenseKernels.ts (loops on flat Float64Array) and
 * ./nativeDenseKernels.ts (the addon's OpenBLAS + LAPACK). ./kernels.ts picks one set with the
 * backend; the routines (products, QR, LU, singular values, Lanczos, the analysis and the studies'
 * metrics) are written once against this interface and never ask which set they were given.
 *
 * All matrices are row-major. A native method may hand a call too small to pay for the addon's
 * entry to the TypeScript loop (the thresholds live beside the wrappers).
 */
import type { BackendName } from './backend.js';
import type { Work } from '../cooperative.js';

/** An upper bidiagonal matrix: diagonal d, superdiagonal e. */
export interface Bidiagonal {
  d: Float64Array;
  e: Float64Array;
}

/** P A = L U, the layout of ./lu.ts. */
export interface LuFactors {
  readonly n: number;
  /** Row-major n x n: strictly lower part = L (unit diagonal implied), upper part = U. */
  readonly lu: Float64Array;
  /** Row i of P A is row perm[i] of A. */
  readonly perm: Int32Array;
  /** First column of row i of L that may be nonzero (i when the row of L is empty). */
  readonly lowerStart: Int32Array;
  /** One past the last column of row i of U that may be nonzero. */
  readonly upperEnd: Int32Array;
  /** First column whose pivot was exactly zero (the matrix is singular), or -1. */
  readonly zeroPivotColumn: number;
  /** Who factored it: 'native' factorizations are dense (envelopes 0 and n). */
  readonly factoredBy: BackendName;
  /** The kernels its triangular solves run on: the factoring kernels' for a 'native' factorization, else the TypeScript ones. */
  readonly solvesWith: DenseKernels;
}

/**
 * projectOut's rows: with skipBelow > 0, h_i is set to 0 where |h_i| <= skipBelow (that row is not
 * projected out). Returns the rows [first, end) from the first row left to the last (all of them when
 * skipBelow <= 0; first = end when none is left), which the pass then reads.
 */
export function projectionRows(h: Float64Array, count: number, skipBelow: number): { first: number; end: number; all: boolean } {
  if (!(skipBelow > 0)) return { first: 0, end: count, all: true };
  let first = 0;
  let end = 0;
  let rows = 0;
  for (let i = 0; i < count; i++)
    if (Math.abs(h[i]) <= skipBelow) h[i] = 0;
    else {
      if (rows++ === 0) first = i;
      end = i + 1;
    }
  return { first, end, all: rows === count };
}

/**
 * What a Householder QR leaves for forming Q later (DenseKernels.householderFactorWork, formQWork): the reflectors in
 * `w` (p x c, as the factorization overwrote it) and each block's T of I - V T V^T, in the layout of the backend that
 * made them, which alone reads them.
 */
export interface HouseholderReflectors {
  /** The layout's token, which the kernels that made them check before reading them. */
  readonly layout: symbol;
  readonly p: number;
  readonly c: number;
  readonly w: Float64Array;
  readonly t: Float64Array;
  /** Reflectors per block. */
  readonly block: number;
}

export interface DenseKernels {
  readonly backend: BackendName;
  /**
   * Rows [rowStart, rowEnd) of C = X Y^T (X rows x len, Y cols x len) into `out` (row i of C at
   * out[(i - outRowOffset) * outStride], outRowOffset 0 when absent), columns [0, cols); overwritten in that range.
   */
  multiplyByTransposeRows(
    x: Float64Array,
    y: Float64Array,
    len: number,
    rowStart: number,
    rowEnd: number,
    cols: number,
    out: Float64Array,
    outStride: number,
    outRowOffset?: number,
  ): void;
  /** Rows of a product whose rows cost `maddsPerRow` multiply-adds each that one call should take. */
  productRows(maddsPerRow: number): number;
  /** Row-major C = alpha op(A) B + beta C, op(A) m x kk (A stored kk x m when transposed), B kk x n, C m x n. */
  gemm(
    transA: boolean,
    m: number,
    n: number,
    kk: number,
    alpha: number,
    a: Float64Array,
    lda: number,
    b: Float64Array,
    ldb: number,
    beta: number,
    c: Float64Array,
    ldc: number,
  ): void;
  /** Rows [rowStart, rowEnd) of W -= C Q: C rows of length k (at row * k), Q k x len, W rows of length len. */
  subtractProductRows(c: Float64Array, q: Float64Array, w: Float64Array, k: number, len: number, rowStart: number, rowEnd: number): void;
  /** y = M^T (M x) for M rows x cols (`t`: scratch of length rows). */
  normalProduct(m: Float64Array, rows: number, cols: number, x: Float64Array, y: Float64Array, t: Float64Array): void;
  /** y[oi..] += G x[oj..] and y[oj..] += G^T x[oi..] for the pi x pj block G at g[start..]. */
  addBlockAndTransposeProduct(
    g: Float64Array,
    start: number,
    pi: number,
    pj: number,
    x: Float64Array,
    oi: number,
    oj: number,
    y: Float64Array,
  ): void;
  /**
   * Room for a Krylov basis V (`vectors` x n, by rows) and the vector w its passes work on, where
   * projectOut runs fastest on them: ordinary arrays natively; on the TypeScript backend, from
   * 65,536 entries, a WebAssembly memory of their own, where projectOut is the SIMD kernels in place.
   */
  krylovStorage(vectors: number, n: number): { basis: Float64Array; w: Float64Array };
  /**
   * The Lanczos three-term recurrence on w = Op v_j (v_j: row j of V, n long): alpha_j = v_j . w, then
   * w -= alpha_j v_j + beta v_{j-1} (v_{j-1} not read when j = 0 or beta = 0); returns alpha_j.
   */
  recurrenceStep(basis: Float64Array, n: number, j: number, beta: number, w: Float64Array): number;
  /** |x[0 .. n)|_2 (a plain sum of squares: the Krylov vectors it measures are of moderate size). */
  norm(x: Float64Array, n: number): number;
  /** y[0 .. n) = s x[0 .. n) (each entry one product, the same bits everywhere). */
  scaledCopy(x: Float64Array, n: number, s: number, y: Float64Array): void;
  /**
   * One classical Gram-Schmidt pass against rows 0..count-1 of V (count x n): h = V w, then w -= V^T h.
   * With skipBelow > 0, only the rows with |h_i| > skipBelow are projected out, the others' h_i set
   * to 0, and the second pass reads only the rows from the first such row to the last
   * (projectionRows). Returns whether every row was projected out.
   */
  projectOut(basis: Float64Array, n: number, count: number, w: Float64Array, h: Float64Array, skipBelow?: number): boolean;
  /** y = V^T h over rows 0..count-1 of V (count x n). */
  combineRows(basis: Float64Array, n: number, count: number, h: Float64Array, y: Float64Array): void;
  /** out (kept x len) = K V[:, r0 .. r0 + len): K kept x size, V size x n. */
  combineRowBlock(
    k: Float64Array,
    kept: number,
    size: number,
    basis: Float64Array,
    n: number,
    r0: number,
    len: number,
    out: Float64Array,
  ): void;
  /** Row-major S = R^{-T} S in place (R p x p upper triangular, S p x w). */
  solveRTransposedBlock(r: Float64Array, p: number, s: Float64Array, w: number): void;
  /** Row-major S = R^{-1} S in place (R p x p upper triangular, S p x w). */
  solveRBlock(r: Float64Array, p: number, s: Float64Array, w: number): void;
  /**
   * Thin QR of M = A^T, `w` holding the p rows of A (p x c, p <= c; overwritten): q (p x c) has
   * orthonormal rows spanning A's rows, r (p x p, upper triangular) with A^T = Q R.
   */
  thinQrWork(w: Float64Array, p: number, c: number): Work<{ q: Float64Array; r: Float64Array }>;
  /**
   * thinQrWork in two halves: its r, and the reflectors (`w` becomes them) from which formQWork forms its q later, each
   * bit for bit thinQrWork's. The first half is about half the work.
   */
  householderFactorWork(w: Float64Array, p: number, c: number): Work<{ r: Float64Array; reflectors: HouseholderReflectors }>;
  formQWork(reflectors: HouseholderReflectors): Work<Float64Array>;
  /** Rows [row, row + p) of the n-column `a` (p <= n) replaced in place by the q of their thin QR (`tau`: scratch of length p). */
  orthonormalizeRows(a: Float64Array, row: number, p: number, n: number, tau: Float64Array): void;
  /** A bidiagonal with the singular values of the c x p matrix whose columns are the p rows of `columns` (p x c, p <= c; overwritten). */
  bidiagonalOfColumnsWork(columns: Float64Array, p: number, c: number): Work<Bidiagonal>;
  /** The same for a square n x n matrix (destroyed), at once, into d (n) and e (n - 1): for the studies' many small matrices. */
  bidiagonalOfSquare(matrix: Float64Array, n: number, d: Float64Array, e: Float64Array): void;
  /** P A = L U with partial pivoting, in place on the row-major n x n `lu`. */
  luWork(lu: Float64Array, n: number): Work<LuFactors>;
  /** y = A^{-1} y in place, P b already gathered into y (`f.solvesWith` is these kernels). */
  luSolveInPlace(f: LuFactors, y: Float64Array): void;
  /** z = P A^{-T} z in place, before the scatter by perm (`f.solvesWith` is these kernels). */
  luSolveTransposedInPlace(f: LuFactors, z: Float64Array): void;
}
