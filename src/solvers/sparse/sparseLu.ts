/**
 * Sparse LU factorization with threshold partial pivoting, P A Q = L U, for the sparse path's
 * smallest singular values and eigenvalues (shift-invert at 0: x = A^{-1} A^{-T} v by two solves).
 *
 * Left-looking Gilbert-Peierls, as CSparse's cs_lu (Davis, "Direct Methods for Sparse Linear
 * Systems", SIAM 2006, ch. 6): column k of L and U is the solution of a sparse triangular system
 * L x = A(:, q_k) whose nonzero pattern is found first by a depth-first search in the graph of L
 * (cs_reach), so the work is proportional to the flops, not to n per column. The pivot is the
 * largest candidate of the column (partial pivoting); with `pivotThreshold` tau < 1 the diagonal
 * entry A(q_k, q_k) is preferred when |x_diag| >= tau max |x_i| (threshold pivoting: entries of L
 * stay at most 1 / tau in magnitude), which keeps a symmetric fill-reducing order intact.
 *
 * A symmetric matrix with a positive diagonal is first factored by sparse Cholesky under the default
 * strategy (./positiveDefiniteLu.ts: the same fill for half the flops), and by the LU below when a
 * Cholesky pivot fails (A not numerically positive definite).
 *
 * Column ordering Q (fill reduction): approximate minimum degree on the pattern of A + A^T (the
 * "symmetric" strategy, for patterns that are mostly symmetric with a zero-free diagonal, with
 * diagonal preference) or of A^T A (the "unsymmetric" strategy, with plain partial pivoting; for
 * any row permutation P the pattern of L + U is contained in that of the Cholesky factor of
 * Q^T A^T A Q, George & Ng), chosen automatically as UMFPACK does, or given by the caller.
 *
 * Singularity: a column with no candidate pivot left (structurally singular) or whose largest
 * candidate is at most n eps times the largest entry of that column of A (the column is a linear
 * combination of the previous ones to working precision) raises SingularMatrixError. Near-singular
 * matrices can pass (LU pivots are no rank test); sigma_min from the solves then tells.
 *
 * A factorization computed elsewhere (the native backend's UMFPACK, native/src/lu_native.c) is adopted
 * by `adoptLu(A, parts)`: the layout is checked and its pivots pass the same numerical-singularity
 * test, here on |U(k, k)| (UMFPACK's threshold pivoting keeps it within 10x of the largest candidate).
 *
 * Storage: L (unit diagonal, stored first in each column) and U (diagonal stored last) in
 * compressed columns of the permuted matrix; grown by doubling. Memory O(nnz(L) + nnz(U) + n).
 * Solves with A and A^T write into caller buffers and allocate nothing.
 */
import { runSync, type Work } from '../cooperative.js';
import { DimensionMismatchError, NotSquareError, SingularMatrixError } from '../errors.js';
import type { ExternalLu, LuFactorArrays } from '../linalg/backend.js';
import { transpose, type CsrMatrix } from './csr.js';
import { approximateMinimumDegree, type SymmetricPattern } from './ordering.js';
import { positiveDefiniteLuWork } from './positiveDefiniteLu.js';

/** The factor arrays' layout is the native backend's (../linalg/backend.ts, below this folder). */
export type { ExternalLu, LuFactorArrays } from '../linalg/backend.js';

export type ColumnOrderingStrategy = 'auto' | 'symmetric' | 'unsymmetric' | 'natural';

export interface SparseLuOptions {
  /** Fill-reducing column order. Default 'auto'. */
  ordering?: ColumnOrderingStrategy;
  /** A column permutation to use instead (new-to-old: column k of A Q is column q[k] of A). */
  columnPermutation?: Int32Array;
  /**
   * Diagonal preference threshold tau in (0, 1]: 1 is partial pivoting. Default: 0.1 with the
   * symmetric strategy, 1 otherwise.
   */
  pivotThreshold?: number;
}

export interface SparseLuFactorization extends LuFactorArrays {
  readonly n: number;
  /**
   * The ordering strategy used ('given' for a caller's permutation; 'cholesky' for a symmetric positive definite A
   * factored by ./positiveDefiniteLu.ts: the symmetric strategy's order, every pivot on the diagonal).
   */
  readonly ordering: ColumnOrderingStrategy | 'given' | 'cholesky';
  /** tau of the factorization; 0 for 'cholesky' (no threshold: entries of L are not bounded by 1 / tau there, nor needed to be). */
  readonly pivotThreshold: number;
}

/** Columns factored between two yields. */
const COLUMNS_PER_SLICE = 64;

/** Compressed sparse columns of A (row indices ascending): A^T in CSR, read by columns. */
interface Csc {
  readonly n: number;
  readonly colPtr: Int32Array;
  readonly rowIdx: Int32Array;
  readonly values: Float64Array;
}

function cscOf(a: CsrMatrix): Csc {
  const t = transpose(a);
  return { n: a.cols, colPtr: t.rowPtr, rowIdx: t.colIdx, values: t.values };
}

/**
 * Fraction of off-diagonal entries (i, j) whose mirror (j, i) is also stored, and whether every
 * diagonal entry is stored and nonzero: UMFPACK's test for the symmetric strategy.
 */
export function patternSymmetry(a: CsrMatrix): { symmetry: number; zeroFreeDiagonal: boolean } {
  const n = a.rows;
  const { rowPtr, colIdx, values } = a;
  let offDiagonal = 0;
  let matched = 0;
  let zeroFreeDiagonal = true;
  for (let i = 0; i < n; i++) {
    let diagonal = false;
    for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
      const j = colIdx[p];
      if (j === i) {
        diagonal = values[p] !== 0;
        continue;
      }
      offDiagonal++;
      // Binary search for (j, i) in row j.
      let lo = rowPtr[j];
      let hi = rowPtr[j + 1] - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const c = colIdx[mid];
        if (c === i) {
          matched++;
          break;
        }
        if (c < i) lo = mid + 1;
        else hi = mid - 1;
      }
    }
    if (!diagonal) zeroFreeDiagonal = false;
  }
  return { symmetry: offDiagonal === 0 ? 1 : matched / offDiagonal, zeroFreeDiagonal };
}

/**
 * Pattern of A^T A without the diagonal (columns i, j adjacent when some row holds both), as
 * CSparse's cs_amd with order 2: rows with more than max(16, 10 sqrt(n)) entries are left out, so
 * one dense row does not make A^T A dense (their columns are then ordered as if that row were absent).
 */
function normalPattern(a: CsrMatrix, csc: Csc): SymmetricPattern {
  const n = a.cols;
  const dense = Math.max(16, Math.floor(10 * Math.sqrt(n)));
  const rowLength = (i: number): number => a.rowPtr[i + 1] - a.rowPtr[i];
  const ptr = new Int32Array(n + 1);
  const mark = new Int32Array(n).fill(-1);
  const countOrFill = (fill: Int32Array | null): void => {
    mark.fill(-1);
    for (let j = 0; j < n; j++) {
      let q = fill ? ptr[j] : 0;
      mark[j] = j;
      for (let p = csc.colPtr[j]; p < csc.colPtr[j + 1]; p++) {
        const i = csc.rowIdx[p];
        if (rowLength(i) > dense) continue;
        for (let t = a.rowPtr[i]; t < a.rowPtr[i + 1]; t++) {
          const k = a.colIdx[t];
          if (mark[k] !== j) {
            mark[k] = j;
            if (fill) fill[q] = k;
            q++;
          }
        }
      }
      if (fill) fill.subarray(ptr[j], q).sort();
      else ptr[j + 1] = ptr[j] + q;
    }
  };
  countOrFill(null);
  const idx = new Int32Array(ptr[n]);
  countOrFill(idx);
  return { n, ptr, idx };
}

/** The column order and the pivot threshold for `a` under `options`. */
function planFactorization(
  a: CsrMatrix,
  csc: Csc,
  options: SparseLuOptions,
): { q: Int32Array; ordering: SparseLuFactorization['ordering']; tau: number } {
  const n = a.rows;
  if (options.columnPermutation) {
    if (options.columnPermutation.length !== n)
      throw new RangeError(`columnPermutation has length ${options.columnPermutation.length}, expected ${n}`);
    return { q: options.columnPermutation, ordering: 'given', tau: options.pivotThreshold ?? 1 };
  }
  let strategy = options.ordering ?? 'auto';
  if (strategy === 'auto') {
    // UMFPACK's rule: a mostly symmetric pattern with a zero-free diagonal keeps a symmetric order.
    const { symmetry, zeroFreeDiagonal } = patternSymmetry(a);
    strategy = symmetry >= 0.5 && zeroFreeDiagonal ? 'symmetric' : 'unsymmetric';
  }
  if (strategy === 'natural')
    return { q: Int32Array.from({ length: n }, (_, k) => k), ordering: 'natural', tau: options.pivotThreshold ?? 1 };
  if (strategy === 'symmetric') {
    return { q: approximateMinimumDegree(a).perm, ordering: 'symmetric', tau: options.pivotThreshold ?? 0.1 };
  }
  return { q: approximateMinimumDegree(normalPattern(a, csc)).perm, ordering: 'unsymmetric', tau: options.pivotThreshold ?? 1 };
}

/** Growable L or U storage. */
class ColumnStore {
  idx: Int32Array;
  val: Float64Array;
  size = 0;
  constructor(capacity: number) {
    this.idx = new Int32Array(capacity);
    this.val = new Float64Array(capacity);
  }
  /** Room for `extra` more entries. */
  reserve(extra: number): void {
    if (this.size + extra <= this.idx.length) return;
    const capacity = Math.max(2 * this.idx.length, this.size + extra);
    const idx = new Int32Array(capacity);
    idx.set(this.idx.subarray(0, this.size));
    const val = new Float64Array(capacity);
    val.set(this.val.subarray(0, this.size));
    this.idx = idx;
    this.val = val;
  }
}

export function* sparseLuWork(a: CsrMatrix, options: SparseLuOptions = {}): Work<SparseLuFactorization> {
  const n = a.rows;
  if (a.cols !== n) throw new NotSquareError(a.rows, a.cols);
  const pivotThreshold = options.pivotThreshold;
  if (pivotThreshold !== undefined && !(pivotThreshold > 0 && pivotThreshold <= 1)) {
    throw new RangeError(`pivotThreshold must lie in (0, 1], got ${pivotThreshold}`);
  }
  // The default strategy tries Cholesky first on a symmetric matrix with a positive diagonal (./positiveDefiniteLu.ts).
  const automatic = (options.ordering ?? 'auto') === 'auto' && !options.columnPermutation && pivotThreshold === undefined;
  if (automatic) {
    const lu = yield* positiveDefiniteLuWork(a);
    if (lu !== null) return lu;
  }
  const csc = cscOf(a);
  yield undefined;
  const { q, ordering, tau } = planFactorization(a, csc, options);
  yield undefined;
  const { colPtr: aPtr, rowIdx: aIdx, values: aVal } = csc;

  const nnzA = aPtr[n];
  const lPtr = new Int32Array(n + 1);
  const uPtr = new Int32Array(n + 1);
  const L = new ColumnStore(4 * nnzA + n);
  const U = new ColumnStore(4 * nnzA + n);
  const pinv = new Int32Array(n).fill(-1);
  const x = new Float64Array(n);
  // xi[top..n) = the reach (topological order); xi[n..2n) = the DFS's position stack.
  const xi = new Int32Array(2 * n);
  const visited = new Int32Array(n).fill(-1);

  for (let k = 0; k < n; k++) {
    lPtr[k] = L.size;
    uPtr[k] = U.size;
    L.reserve(n);
    U.reserve(n);
    const Li = L.idx;
    const Lx = L.val;
    const col = q[k];

    // Reach of A(:, col) in the graph of L (columns 0..k-1, row indices still original): the DFS
    // enters node i through column pinv[i] of L when row i is already pivotal.
    let top = n;
    let columnMax = 0;
    for (let p = aPtr[col]; p < aPtr[col + 1]; p++) {
      columnMax = Math.max(columnMax, Math.abs(aVal[p]));
      const start = aIdx[p];
      if (visited[start] === k) continue;
      let head = 0;
      xi[0] = start;
      while (head >= 0) {
        const j = xi[head];
        const jnew = pinv[j];
        if (visited[j] !== k) {
          visited[j] = k;
          xi[n + head] = jnew < 0 ? 0 : lPtr[jnew];
        }
        let done = true;
        const end = jnew < 0 ? 0 : lPtr[jnew + 1];
        for (let p2 = xi[n + head]; p2 < end; p2++) {
          const i = Li[p2];
          if (visited[i] === k) continue;
          xi[n + head] = p2;
          xi[++head] = i;
          done = false;
          break;
        }
        if (done) {
          head--;
          xi[--top] = j;
        }
      }
    }

    // Numeric: x = L \ A(:, col) over the reach, in topological order.
    for (let p = top; p < n; p++) x[xi[p]] = 0;
    for (let p = aPtr[col]; p < aPtr[col + 1]; p++) x[aIdx[p]] = aVal[p];
    for (let px = top; px < n; px++) {
      const j = xi[px];
      const jnew = pinv[j];
      if (jnew < 0) continue;
      const xj = x[j];
      if (xj === 0) continue;
      // L(jnew, jnew) = 1 is stored first: skip it.
      for (let p = lPtr[jnew] + 1; p < lPtr[jnew + 1]; p++) x[Li[p]] -= Lx[p] * xj;
    }

    // Pivot: the largest candidate (rows not yet pivotal); U(:, k) gets the pivotal rows.
    let ipiv = -1;
    let largest = -1;
    const Ui = U.idx;
    const Ux = U.val;
    for (let p = top; p < n; p++) {
      const i = xi[p];
      if (pinv[i] < 0) {
        const t = Math.abs(x[i]);
        if (t > largest) {
          largest = t;
          ipiv = i;
        }
      } else {
        Ui[U.size] = pinv[i];
        Ux[U.size++] = x[i];
      }
    }
    if (ipiv === -1 || !(largest > n * Number.EPSILON * columnMax)) {
      throw new SingularMatrixError(
        ipiv === -1 || largest === 0
          ? `The matrix is singular: column ${col} is a linear combination of the columns eliminated before it (no nonzero pivot left).`
          : `The matrix is numerically singular: column ${col} has no pivot above ${n} eps times its largest entry ` +
              `(largest candidate ${largest.toExponential(3)}, column scale ${columnMax.toExponential(3)}).`,
        { column: col, step: k, pivot: Math.max(largest, 0), columnScale: columnMax },
      );
    }
    // Diagonal preference: A(col, col) when within the threshold of the largest candidate.
    if (tau < 1 && pinv[col] < 0 && Math.abs(x[col]) >= tau * largest) ipiv = col;

    const pivot = x[ipiv];
    Ui[U.size] = k;
    Ux[U.size++] = pivot;
    pinv[ipiv] = k;
    Li[L.size] = ipiv;
    Lx[L.size++] = 1;
    for (let p = top; p < n; p++) {
      const i = xi[p];
      if (pinv[i] < 0) {
        Li[L.size] = i;
        Lx[L.size++] = x[i] / pivot;
      }
      x[i] = 0;
    }
    if ((k + 1) % COLUMNS_PER_SLICE === 0) yield undefined;
  }
  lPtr[n] = L.size;
  uPtr[n] = U.size;
  // L's row indices in pivot order.
  const lRowIdx = L.idx.slice(0, L.size);
  for (let p = 0; p < lRowIdx.length; p++) lRowIdx[p] = pinv[lRowIdx[p]];
  return {
    n,
    lColPtr: lPtr,
    lRowIdx,
    lValues: L.val.slice(0, L.size),
    uColPtr: uPtr,
    uRowIdx: U.idx.slice(0, U.size),
    uValues: U.val.slice(0, U.size),
    rowPivot: pinv,
    columnOrder: q,
    ordering,
    pivotThreshold: tau,
  };
}

/** Threshold of UMFPACK's diagonal preference and partial pivoting as lu_native.c sets them. */
const EXTERNAL_PIVOT_THRESHOLD = 0.1;

function isPermutation(p: Int32Array, n: number): boolean {
  if (p.length !== n) return false;
  const seen = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    const v = p[k];
    if (!(v >= 0 && v < n) || seen[v] === 1) return false;
    seen[v] = 1;
  }
  return true;
}

/** Column pointers n + 1 from 0, nondecreasing, within `length` entries. */
function isColumnPointers(ptr: Int32Array, n: number, length: number): boolean {
  if (ptr.length !== n + 1 || ptr[0] !== 0 || ptr[n] > length) return false;
  for (let k = 0; k < n; k++) if (ptr[k + 1] < ptr[k]) return false;
  return true;
}

/**
 * An external P A Q = L U as a SparseLuFactorization (module comment): the permutations, L's unit
 * diagonal first and U's diagonal last in each column are checked (DimensionMismatchError when
 * malformed), and a pivot at most n eps times the largest entry of its column of A raises the
 * SingularMatrixError sparseLuWork raises.
 */
export function adoptLu(a: CsrMatrix, external: ExternalLu): SparseLuFactorization {
  const n = a.rows;
  if (a.cols !== n) throw new NotSquareError(a.rows, a.cols);
  if (external.singular) {
    throw new SingularMatrixError('The matrix is singular: the sparse LU met a zero pivot (no nonzero pivot left in a column).', {});
  }
  const malformed = (why: string): DimensionMismatchError =>
    new DimensionMismatchError(`The external LU factorization is malformed: ${why}.`);
  const { lColPtr, lRowIdx, lValues, uColPtr, uRowIdx, uValues, rowPivot, columnOrder } = external;
  if (!isPermutation(rowPivot, n) || !isPermutation(columnOrder, n)) throw malformed('a permutation is not one of 0 .. n - 1');
  if (!isColumnPointers(lColPtr, n, Math.min(lRowIdx.length, lValues.length))) throw malformed("L's column pointers");
  if (!isColumnPointers(uColPtr, n, Math.min(uRowIdx.length, uValues.length))) throw malformed("U's column pointers");
  for (let k = 0; k < n; k++) {
    const l0 = lColPtr[k];
    if (l0 === lColPtr[k + 1] || lRowIdx[l0] !== k || lValues[l0] !== 1)
      throw malformed(`column ${k} of L does not start with its unit diagonal`);
    for (let p = l0 + 1; p < lColPtr[k + 1]; p++) if (!(lRowIdx[p] > k && lRowIdx[p] < n)) throw malformed(`column ${k} of L`);
    const last = uColPtr[k + 1] - 1;
    if (last < uColPtr[k] || uRowIdx[last] !== k) throw malformed(`column ${k} of U does not end with its diagonal`);
    for (let p = uColPtr[k]; p < last; p++) if (!(uRowIdx[p] >= 0 && uRowIdx[p] < k)) throw malformed(`column ${k} of U`);
  }
  // The pivot test of sparseLuWork, on the pivot itself.
  const columnMax = new Float64Array(n);
  const { rowPtr, colIdx, values } = a;
  for (let p = 0; p < rowPtr[n]; p++) columnMax[colIdx[p]] = Math.max(columnMax[colIdx[p]], Math.abs(values[p]));
  for (let k = 0; k < n; k++) {
    const col = columnOrder[k];
    const pivot = Math.abs(uValues[uColPtr[k + 1] - 1]);
    if (!(pivot > n * Number.EPSILON * columnMax[col])) {
      throw new SingularMatrixError(
        pivot === 0
          ? `The matrix is singular: column ${col} is a linear combination of the columns eliminated before it (no nonzero pivot left).`
          : `The matrix is numerically singular: column ${col} has no pivot above ${n} eps times its largest entry ` +
              `(pivot ${pivot.toExponential(3)}, column scale ${columnMax[col].toExponential(3)}).`,
        { column: col, step: k, pivot, columnScale: columnMax[col] },
      );
    }
  }
  return {
    n,
    lColPtr,
    lRowIdx,
    lValues,
    uColPtr,
    uRowIdx,
    uValues,
    rowPivot,
    columnOrder,
    ordering: external.strategy,
    pivotThreshold: EXTERNAL_PIVOT_THRESHOLD,
  };
}

export function sparseLu(a: CsrMatrix, options: SparseLuOptions = {}): SparseLuFactorization {
  return runSync(sparseLuWork(a, options));
}

/** Stored entries of L plus U (both diagonals counted once each). */
export function factorNonzeros(f: SparseLuFactorization): number {
  return f.lColPtr[f.n] + f.uColPtr[f.n];
}

/** Repeated solves with one LU factorization on one thread (b and x may be the same array). */
export interface LuSolves {
  /** x = A^{-1} b. */
  solve(b: Float64Array, x: Float64Array): void;
  /** x = A^{-T} b. */
  solveTransposed(b: Float64Array, x: Float64Array): void;
}

/** The solves below, with a work vector of their own. */
export function typescriptLuSolves(f: SparseLuFactorization): LuSolves {
  const work = new Float64Array(f.n);
  return {
    solve: (b, x) => sparseLuSolve(f, b, x, work),
    solveTransposed: (b, x) => sparseLuSolveTransposed(f, b, x, work),
  };
}

/**
 * x = A^{-1} b. `work` (length n) is scratch; x may be b (b is read before x is written), never work.
 * A = P^T L U Q^T: y = P b, L z = y, U w = z, x = Q w.
 */
export function sparseLuSolve(f: SparseLuFactorization, b: Float64Array, x: Float64Array, work: Float64Array): void {
  const { n, lColPtr, lRowIdx, lValues, uColPtr, uRowIdx, uValues, rowPivot, columnOrder } = f;
  const y = work;
  for (let i = 0; i < n; i++) y[rowPivot[i]] = b[i];
  for (let j = 0; j < n; j++) {
    const yj = y[j];
    if (yj === 0) continue;
    for (let p = lColPtr[j] + 1; p < lColPtr[j + 1]; p++) y[lRowIdx[p]] -= lValues[p] * yj;
  }
  for (let j = n - 1; j >= 0; j--) {
    const last = uColPtr[j + 1] - 1;
    const yj = (y[j] /= uValues[last]);
    if (yj === 0) continue;
    for (let p = uColPtr[j]; p < last; p++) y[uRowIdx[p]] -= uValues[p] * yj;
  }
  for (let k = 0; k < n; k++) x[columnOrder[k]] = y[k];
}

/**
 * x = A^{-T} b, same buffers rules as sparseLuSolve.
 * A^T = Q U^T L^T P: U^T z = Q^T b, L^T w = z, x = P^T w.
 */
export function sparseLuSolveTransposed(f: SparseLuFactorization, b: Float64Array, x: Float64Array, work: Float64Array): void {
  const { n, lColPtr, lRowIdx, lValues, uColPtr, uRowIdx, uValues, rowPivot, columnOrder } = f;
  const z = work;
  for (let k = 0; k < n; k++) z[k] = b[columnOrder[k]];
  for (let j = 0; j < n; j++) {
    const last = uColPtr[j + 1] - 1;
    let s = z[j];
    for (let p = uColPtr[j]; p < last; p++) s -= uValues[p] * z[uRowIdx[p]];
    z[j] = s / uValues[last];
  }
  for (let j = n - 1; j >= 0; j--) {
    let s = z[j];
    for (let p = lColPtr[j] + 1; p < lColPtr[j + 1]; p++) s -= lValues[p] * z[lRowIdx[p]];
    z[j] = s;
  }
  for (let i = 0; i < n; i++) x[i] = z[rowPivot[i]];
}
