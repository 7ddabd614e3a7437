/**
 * Sparse Cholesky factorization of a symmetric positive definite matrix G (in practice a machine's
 * Gram matrix A_i A_i^T from gram.ts): P G P^T = L L^T with a fill-reducing permutation P
 * (ordering.ts), L lower triangular stored by columns.
 *
 * Two phases, so that one analysis serves every factorization of the same pattern:
 * - `analyzeCholesky(G)`: ordering, elimination tree, column counts and the whole pattern of L
 *   (row indices), plus the map from G's stored entries to the lower triangle of P G P^T.
 * - `factorCholesky(G, symbolic)`: the numeric values, up-looking (row k of L from a sparse
 *   triangular solve with the rows before it, whose pattern is the reach of row k of the lower
 *   triangle in the elimination tree), as in Davis, "Direct Methods for Sparse Linear Systems"
 *   (SIAM 2006), chapter 4. `refactorCholesky` redoes it in place for new values.
 *
 * Input: G square CSR with its FULL symmetric pattern (both triangles, as gramMatrix returns; checked,
 * DimensionMismatchError otherwise); only the entries that land in the lower triangle of P G P^T are
 * read, so G's values must be symmetric (not checked).
 *
 * Pivots: the k-th pivot d_k (the diagonal of L, squared, before its square root) is compared with
 * the diagonal entry it started from, G_kk (rows and columns in the permuted order). For a Gram
 * matrix, d_k / G_kk = sin^2 of the angle between row k and the span of the rows eliminated before
 * it. It must exceed `relativePivotTolerance`, by default 16 c_k u, with c_k the number of terms
 * summed into d_k (the entries of row k of L, diagonal included) and u = 2^-53 the unit roundoff: the
 * factorization's rounding error in d_k is at most about c_k u G_kk (the diagonal of |L| |L^T| is
 * G_kk), and G's own entries carry rounding errors of the same order from their computation, hence
 * the margin: a smaller pivot cannot be told from zero. Otherwise SingularMatrixError, details
 * { row, pivot, diagonal, relativePivot }, `row` in G's own (unpermuted) numbering: a caller that
 * factors a machine's Gram matrix re-throws it with { ...details, machine, row: <global row> }.
 * Rows of a machine closer than ~1e-7 rad to dependent are therefore refused here, where the dense
 * path's Householder QR (which does not square the condition number) still accepts them.
 *
 * A factor computed elsewhere (the native backend's CHOLMOD, ../machines/nativeGram.ts) is adopted by
 * `adoptCholesky(G, parts)`: its structure is checked, its own analysis stands (nothing is analyzed
 * again), and its pivots pass the same test, so it is a CholeskyFactor like any other.
 *
 * Solves: `solveCholesky(factor, b, x)` gives x = G^{-1} b, and the two halves are exposed for
 * operators built from the factor B = P^T L (B B^T = G): `solveLower` (y = B^{-1} b = L^{-1} P b)
 * and `solveUpper` (x = B^{-T} y = P^T L^{-T} y). All write into caller buffers; the factor holds
 * its own work vector, so no solve allocates (not reentrant: one factor, one solve at a time, which
 * is what one JavaScript thread gives).
 */
import { runSync, type Work } from '../cooperative.js';
import { DimensionMismatchError, SingularMatrixError } from '../errors.js';
import { selectColumns, selectRows, type CsrMatrix } from './csr.js';
import { approximateMinimumDegree, identityOrdering, isSortedSymmetricPattern, type Ordering } from './ordering.js';

const UNIT_ROUNDOFF = Number.EPSILON / 2;

/** What the solves with a factor need: the ordering and the pattern of L (what a machine's storage carries to its threads). */
export interface CholeskySymbolic {
  readonly n: number;
  /** P: row/column k of P G P^T is row/column perm[k] of G. */
  readonly ordering: Ordering;
  /** Elimination tree of P G P^T: parent[k] (new numbering), -1 at a root. */
  readonly parent: Int32Array;
  /** L by columns: column j is rowIdx / values[colPtr[j] .. colPtr[j + 1]), the diagonal first, rows ascending. */
  readonly colPtr: Int32Array;
  readonly rowIdx: Int32Array;
  /** nnz(L), diagonal included. */
  readonly nnzL: number;
  /** Multiply-adds of one numeric factorization (sum over columns of the squared off-diagonal counts, plus n). */
  readonly flops: number;
}

/** The symbolic analysis of G: the factor's symbolic part and what a numeric factorization reads of G. */
export interface CholeskyAnalysis extends CholeskySymbolic {
  /**
   * Lower triangle of P G P^T by rows: row k holds the entries (k, lowerIdx[q]) with lowerIdx[q] <= k,
   * whose values are G.values[lowerSource[q]]. Row order within a row is arbitrary.
   */
  readonly lowerPtr: Int32Array;
  readonly lowerIdx: Int32Array;
  readonly lowerSource: Int32Array;
  /** G's pattern as analyzed, to check that a factorization gets the same one. */
  readonly patternRowPtr: Int32Array;
  readonly patternColIdx: Int32Array;
}

export interface CholeskyFactor {
  readonly symbolic: CholeskySymbolic;
  /** L's values in the layout of symbolic.colPtr / rowIdx. */
  readonly values: Float64Array;
  /** Work vector of length n for the solves. */
  readonly work: Float64Array;
  /**
   * The analysis a refactorization reads (factors computed here; absent on an adopted factor). Kept
   * apart from `symbolic` so that a machine's storage, which carries `symbolic` and `values` to the
   * solver threads, does not copy it.
   */
  readonly analysis?: CholeskyAnalysis;
}

export interface CholeskyOptions {
  /** The fill-reducing ordering: AMD (default), natural (none), or a given one. */
  ordering?: 'amd' | 'natural' | Ordering;
}

export interface FactorOptions {
  /** Smallest accepted d_k / G_kk; default 16 c_k u (see the file comment). */
  relativePivotTolerance?: number;
  /**
   * When given (n entries, zero): a pivot below the tolerance does not throw but drops its row and column, marked 1
   * here (permuted numbering): column k of L is then zero, diagonal included, and the later rows are eliminated
   * against the kept ones only. For a Gram matrix, the dropped rows of A are those within the tolerance of the span
   * of the kept rows pivoted before them (./droppingCholesky.ts). Such a factor is not for solves.
   */
  dropped?: Uint8Array;
}

/** Symbolic analysis of a symmetric G (full pattern): ordering, elimination tree, pattern of L. */
export function analyzeCholesky(g: CsrMatrix, options: CholeskyOptions = {}): CholeskyAnalysis {
  const n = g.rows;
  if (g.cols !== n) throw new DimensionMismatchError(`Cholesky needs a square matrix; this one is ${g.rows} x ${g.cols}.`);
  checkSymmetricPattern(g);
  const choice = options.ordering ?? 'amd';
  const ordering = choice === 'amd' ? approximateMinimumDegree(g) : choice === 'natural' ? identityOrdering(n) : choice;
  if (ordering.perm.length !== n)
    throw new DimensionMismatchError(`The ordering has ${ordering.perm.length} entries for a ${n} x ${n} matrix.`);
  const lower = lowerTriangle(g, ordering);
  const parent = eliminationTree(n, lower.lowerPtr, lower.lowerIdx);
  const { colPtr, rowIdx, flops } = patternOfL(n, lower.lowerPtr, lower.lowerIdx, parent);
  return {
    n,
    ordering,
    parent,
    colPtr,
    rowIdx,
    nnzL: colPtr[n],
    flops,
    ...lower,
    patternRowPtr: g.rowPtr.slice(),
    patternColIdx: g.colIdx.slice(),
  };
}

/** Lower triangle of C = P G P^T by rows, with each entry's position in G.values. */
function lowerTriangle(g: CsrMatrix, { perm, inverse }: Ordering): { lowerPtr: Int32Array; lowerIdx: Int32Array; lowerSource: Int32Array } {
  const n = g.rows;
  const { rowPtr, colIdx } = g;
  const lowerPtr = new Int32Array(n + 1);
  for (let k = 0; k < n; k++) {
    const r = perm[k];
    let count = 0;
    for (let q = rowPtr[r]; q < rowPtr[r + 1]; q++) if (inverse[colIdx[q]] <= k) count++;
    lowerPtr[k + 1] = lowerPtr[k] + count;
  }
  const lowerIdx = new Int32Array(lowerPtr[n]);
  const lowerSource = new Int32Array(lowerPtr[n]);
  for (let k = 0, t = 0; k < n; k++) {
    const r = perm[k];
    for (let q = rowPtr[r]; q < rowPtr[r + 1]; q++) {
      const j = inverse[colIdx[q]];
      if (j <= k) {
        lowerIdx[t] = j;
        lowerSource[t++] = q;
      }
    }
  }
  return { lowerPtr, lowerIdx, lowerSource };
}

/** Elimination tree (Liu): row k's entries j < k climb, with path compression, to their root, which becomes a child of k. */
function eliminationTree(n: number, lowerPtr: Int32Array, lowerIdx: Int32Array): Int32Array {
  const parent = new Int32Array(n).fill(-1);
  const ancestor = new Int32Array(n).fill(-1);
  for (let k = 0; k < n; k++) {
    for (let q = lowerPtr[k]; q < lowerPtr[k + 1]; q++) {
      let j = lowerIdx[q];
      while (j !== -1 && j < k) {
        const up = ancestor[j];
        ancestor[j] = k;
        if (up === -1) parent[j] = k;
        j = up;
      }
    }
  }
  return parent;
}

/**
 * Column counts and row indices of L from its row patterns (row k of L = the reach of row k's
 * entries in the tree), each reach computed once: kept in a growing buffer while the counts
 * accumulate, then dealt out to the columns (rows ascending, since k ascends; diagonal first).
 */
function patternOfL(
  n: number,
  lowerPtr: Int32Array,
  lowerIdx: Int32Array,
  parent: Int32Array,
): { colPtr: Int32Array; rowIdx: Int32Array; flops: number } {
  const mark = new Int32Array(n).fill(-1);
  const stack = new Int32Array(n);
  const colCount = new Int32Array(n).fill(1);
  const rowPtr = new Int32Array(n + 1);
  let rows = new Int32Array(Math.max(16, 2 * lowerPtr[n]));
  for (let k = 0; k < n; k++) {
    const top = rowReach(k, lowerPtr, lowerIdx, parent, mark, stack);
    const start = rowPtr[k];
    const length = n - top;
    if (start + length > rows.length) {
      const grown = new Int32Array(Math.max(2 * rows.length, start + length));
      grown.set(rows.subarray(0, start));
      rows = grown;
    }
    for (let t = top; t < n; t++) {
      const j = stack[t];
      rows[start + t - top] = j;
      colCount[j]++;
    }
    rowPtr[k + 1] = start + length;
  }
  const colPtr = new Int32Array(n + 1);
  let flops = 0;
  for (let j = 0; j < n; j++) {
    colPtr[j + 1] = colPtr[j] + colCount[j];
    flops += (colCount[j] - 1) * (colCount[j] - 1) + 1;
  }
  const rowIdx = new Int32Array(colPtr[n]);
  const next = colPtr.slice(0, n);
  for (let k = 0; k < n; k++) {
    rowIdx[next[k]++] = k; // the diagonal, first in its column
    for (let q = rowPtr[k]; q < rowPtr[k + 1]; q++) rowIdx[next[rows[q]]++] = k;
  }
  return { colPtr, rowIdx, flops };
}

/**
 * The columns j < k with L[k][j] != 0, in topological order (descendants before ancestors in the
 * elimination tree), left in stack[top .. n); returns top. mark[] is stamped with k.
 */
function rowReach(k: number, lowerPtr: Int32Array, lowerIdx: Int32Array, parent: Int32Array, mark: Int32Array, stack: Int32Array): number {
  const n = stack.length;
  let top = n;
  mark[k] = k;
  for (let q = lowerPtr[k]; q < lowerPtr[k + 1]; q++) {
    let j = lowerIdx[q];
    if (j >= k) continue;
    // Climb to a marked node, recording the path at the bottom of the stack, then move it to the top reversed.
    let length = 0;
    while (mark[j] !== k) {
      stack[length++] = j;
      mark[j] = k;
      j = parent[j];
    }
    while (length > 0) stack[--top] = stack[--length];
  }
  return top;
}

/** Numeric factorization of G with the pattern analyzed in `symbolic` (analyzed here when not given). */
export function factorCholesky(g: CsrMatrix, analysis: CholeskyAnalysis = analyzeCholesky(g), options: FactorOptions = {}): CholeskyFactor {
  const { n, ordering, parent, colPtr, rowIdx, nnzL, flops } = analysis;
  const symbolic: CholeskySymbolic = { n, ordering, parent, colPtr, rowIdx, nnzL, flops };
  const factor: CholeskyFactor = { symbolic, values: new Float64Array(nnzL), work: new Float64Array(n), analysis };
  refactorCholesky(factor, g, options);
  return factor;
}

/** Recompute `factor`'s values, in place, for a matrix with the pattern it was analyzed for. */
export function refactorCholesky(factor: CholeskyFactor, g: CsrMatrix, options: FactorOptions = {}): void {
  runSync(refactorCholeskyWork(factor, g, options));
}

/** Multiply-adds between two yields of refactorCholeskyWork (~10 ms here). */
const UPDATES_PER_SLICE = 1 << 22;

/** refactorCholesky as cooperative work: it yields every UPDATES_PER_SLICE multiply-adds or so. */
export function* refactorCholeskyWork(factor: CholeskyFactor, g: CsrMatrix, options: FactorOptions = {}): Work<void> {
  const s = factor.analysis;
  if (s === undefined) throw new DimensionMismatchError('This factor was computed elsewhere and carries no analysis to refactor with.');
  const { n, colPtr, rowIdx, lowerPtr, lowerIdx, lowerSource, parent } = s;
  checkSamePattern(s, g);
  const gValues = g.values;
  const lValues = factor.values;
  const x = factor.work;
  x.fill(0);
  const next = new Int32Array(n);
  const mark = new Int32Array(n).fill(-1);
  const stack = new Int32Array(n);
  const tolerance = options.relativePivotTolerance;
  const dropped = options.dropped;
  let sliceUpdates = 0;
  for (let k = 0; k < n; k++) {
    if (sliceUpdates > UPDATES_PER_SLICE) {
      sliceUpdates = 0;
      yield undefined;
    }
    const top = rowReach(k, lowerPtr, lowerIdx, parent, mark, stack);
    for (let q = lowerPtr[k]; q < lowerPtr[k + 1]; q++) x[lowerIdx[q]] = gValues[lowerSource[q]];
    const diagonal = x[k];
    let d = diagonal;
    x[k] = 0;
    // Row k of L: solve L[0..k)[0..k) l = C[k][0..k) over the reach, column by column.
    for (let t = top; t < n; t++) {
      const j = stack[t];
      const jStart = colPtr[j];
      const droppedColumn = dropped !== undefined && dropped[j] === 1;
      const lkj = droppedColumn ? 0 : x[j] / lValues[jStart];
      x[j] = 0;
      // Column j holds next[j] entries so far (rows < k); row k's goes right after them. A dropped
      // column is zero: skipping its update keeps a rank-r factor of a p x p Gram matrix at O(r p^2).
      const filled = jStart + next[j];
      if (!droppedColumn) for (let q = jStart + 1; q <= filled; q++) x[rowIdx[q]] -= lValues[q] * lkj;
      sliceUpdates += next[j] + 1;
      d -= lkj * lkj;
      lValues[filled + 1] = lkj;
      next[j]++;
    }
    const limit = (tolerance ?? 16 * (n - top + 1) * UNIT_ROUNDOFF) * diagonal;
    if (dropped !== undefined && diagonal > 0 && !(d > limit)) {
      dropped[k] = 1;
      lValues[colPtr[k]] = 0;
      continue;
    }
    if (!(d > limit) || !(diagonal > 0)) throw notPositiveDefinite(s.ordering.perm[k], d, diagonal);
    lValues[colPtr[k]] = Math.sqrt(d);
  }
}

/**
 * G's factor computed densely, for a G whose factor fills most of its triangle (the normal matrix A_i^T A_i of random
 * sparse rows: 3,000 x 3,000 took 14.9 s up-looking and 3.2 s by blocks on the TypeScript backend): P G P^T (the
 * analysis' ordering) copied into an n x n array, factored by `denseFactor` (upper R with G = R^T R, e.g.
 * ../linalg/cholesky.ts choleskyUpperInPlace on the backend's kernels, which it hands `options.dropped` to), L = R^T read
 * into the analysis' pattern (the entries outside it are exact zeros) and every pivot held to refactorCholesky's test
 * (adoptCholesky); with `options.dropped`, the dropping factorization's factor as it stands (not for solves). A
 * nonpositive pivot throws SingularMatrixError as refactorCholesky does (its row and pivot as the blocks met it).
 */
export function factorCholeskyDensely(
  g: CsrMatrix,
  analysis: CholeskyAnalysis,
  denseFactor: (a: Float64Array, n: number, dropped?: Uint8Array) => boolean,
  options: FactorOptions = {},
): CholeskyFactor {
  const { n, lowerPtr, lowerIdx, lowerSource, colPtr, rowIdx, ordering, parent, nnzL, flops } = analysis;
  checkSamePattern(analysis, g);
  // Row k's lower entries (k, j <= k) of P G P^T go to the upper triangle's (j, k), which is all denseFactor reads.
  const dense = new Float64Array(n * n);
  for (let k = 0; k < n; k++) for (let q = lowerPtr[k]; q < lowerPtr[k + 1]; q++) dense[lowerIdx[q] * n + k] = g.values[lowerSource[q]];
  if (!denseFactor(dense, n, options.dropped)) {
    // The rows before the failed pivot hold R's positive diagonal, that row its pivot (its diagonal entry as factored).
    let k = 0;
    while (k < n - 1 && dense[k * n + k] > 0) k++;
    const row = ordering.perm[k];
    throw notPositiveDefinite(row, dense[k * n + k], diagonalEntry(g, row));
  }
  const values = new Float64Array(nnzL);
  for (let j = 0; j < n; j++) for (let q = colPtr[j]; q < colPtr[j + 1]; q++) values[q] = dense[j * n + rowIdx[q]];
  if (options.dropped !== undefined) {
    return { symbolic: { n, ordering, parent, colPtr, rowIdx, nnzL, flops }, values, work: new Float64Array(n), analysis };
  }
  return adoptCholesky(g, { perm: ordering.perm, colPtr, rowIdx, values, minor: n }, options);
}

/** The kept rows and columns K of G (original numbering, ascending), G_K (G's submatrix on them) and G_K's factor. */
export interface KeptPivots {
  readonly kept: Int32Array;
  readonly gram: CsrMatrix;
  readonly factor: CholeskyFactor;
}

/**
 * What a pivot-dropping factorization of G (FactorOptions.dropped) leaves (KeptPivots): the factor of G_K is read off
 * that factorization, which eliminated every kept row against the kept columns only: its kept columns without the
 * dropped rows, in the induced order, every pivot held to refactorCholesky's test (adoptCholesky; SingularMatrixError
 * as there).
 */
export function keptPivotsFactor(g: CsrMatrix, factor: CholeskyFactor, dropped: Uint8Array): KeptPivots {
  const { n, ordering, colPtr, rowIdx } = factor.symbolic;
  const perm = ordering.perm;
  const kept = Int32Array.from(perm.filter((_, k) => dropped[k] === 0)).sort();
  const place = new Int32Array(n).fill(-1);
  kept.forEach((original, t) => (place[original] = t));
  const gram = selectColumns(selectRows(g, kept), kept);
  const r = kept.length;
  // Pivot k (kept) is pivot order[k] of G_K; its column keeps the kept rows.
  const order = new Int32Array(n).fill(-1);
  const keptPerm = new Int32Array(r);
  for (let k = 0, t = 0; k < n; k++) {
    if (dropped[k] === 1) continue;
    order[k] = t;
    keptPerm[t++] = place[perm[k]];
  }
  const lPtr = new Int32Array(r + 1);
  const lRows: number[] = [];
  const lValues: number[] = [];
  for (let k = 0; k < n; k++) {
    if (dropped[k] === 1) continue;
    for (let q = colPtr[k]; q < colPtr[k + 1]; q++) {
      if (dropped[rowIdx[q]] === 1) continue;
      lRows.push(order[rowIdx[q]]);
      lValues.push(factor.values[q]);
    }
    lPtr[order[k] + 1] = lRows.length;
  }
  const external = { perm: keptPerm, colPtr: lPtr, rowIdx: Int32Array.from(lRows), values: Float64Array.from(lValues), minor: r };
  return { kept, gram, factor: adoptCholesky(gram, external) };
}

/** G[row][row] (zero when not stored). */
function diagonalEntry(g: CsrMatrix, row: number): number {
  for (let q = g.rowPtr[row]; q < g.rowPtr[row + 1]; q++) if (g.colIdx[q] === row) return g.values[q];
  return 0;
}

/** The error of a pivot d of G's row `row` (its diagonal entry `diagonal`) that cannot be told from zero. */
function notPositiveDefinite(row: number, d: number, diagonal: number): SingularMatrixError {
  const relativePivot = diagonal > 0 ? d / diagonal : d;
  return new SingularMatrixError(
    `The symmetric matrix is not numerically positive definite: pivot ${d.toPrecision(3)} of row ${row} against its ` +
      `diagonal ${diagonal.toPrecision(3)} (for a Gram matrix A A^T: row ${row} of A is numerically a linear combination ` +
      'of the other rows).',
    { row, pivot: d, diagonal, relativePivot },
  );
}

/** A factor P G P^T = L L^T computed elsewhere: the ordering, and L by columns (diagonal first, rows ascending). */
export interface ExternalCholesky {
  readonly perm: Int32Array;
  readonly colPtr: Int32Array;
  readonly rowIdx: Int32Array;
  readonly values: Float64Array;
  /** n when the factorization succeeded; else the column whose pivot was not positive (L is then not read). */
  readonly minor: number;
}

/**
 * The CholeskyFactor of G from an external factorization with the ordering `external.perm`, taken as
 * it is: its own symbolic analysis stands (none is redone here), its structure is checked in
 * O(nnz(L)) (perm a permutation; each column starts with its diagonal, then rows strictly ascending
 * below n), the elimination tree is read off L (the parent of column j is its first row below the
 * diagonal), and every pivot is held to the test of refactorCholesky: SingularMatrixError with the
 * same details. The external L may leave out entries that are zero (as CHOLMOD's after its
 * supernodal amalgamation's explicit zeros are dropped): the solves never need them.
 * A failed external factorization (minor < n) is that error at column minor, pivot 0.
 */
export function adoptCholesky(g: CsrMatrix, external: ExternalCholesky, options: FactorOptions = {}): CholeskyFactor {
  const n = g.rows;
  const { perm, colPtr } = external;
  if (perm.length !== n) throw new DimensionMismatchError(`The external factor is for ${perm.length} rows, G has ${n}.`);
  const diagonal = new Float64Array(n);
  for (let row = 0; row < n; row++)
    for (let q = g.rowPtr[row]; q < g.rowPtr[row + 1]; q++) if (g.colIdx[q] === row) diagonal[row] = g.values[q];
  if (external.minor < n) {
    const row = perm[external.minor];
    throw notPositiveDefinite(row, 0, diagonal[row]);
  }
  const malformed = (why: string): DimensionMismatchError => new DimensionMismatchError(`The external factor is malformed: ${why}.`);
  const inverse = new Int32Array(n).fill(-1);
  for (let k = 0; k < n; k++) {
    const old = perm[k];
    if (!(old >= 0 && old < n) || inverse[old] !== -1) throw malformed('perm is not a permutation');
    inverse[old] = k;
  }
  if (colPtr.length !== n + 1 || colPtr[0] !== 0) throw malformed('the column pointers are not n + 1 from 0');
  const nnzL = colPtr[n];
  if (!(external.rowIdx.length >= nnzL && external.values.length >= nnzL)) throw malformed('the column pointers run past its arrays');
  const rowIdx = external.rowIdx.length === nnzL ? external.rowIdx : external.rowIdx.slice(0, nnzL);
  const values = external.values.length === nnzL ? external.values : external.values.slice(0, nnzL);
  const parent = new Int32Array(n);
  const rowCount = new Int32Array(n);
  let flops = 0;
  for (let j = 0; j < n; j++) {
    const start = colPtr[j];
    const end = colPtr[j + 1];
    if (!(end > start && end <= nnzL) || rowIdx[start] !== j) throw malformed(`column ${j} does not start with its diagonal`);
    let previous = j;
    for (let q = start; q < end; q++) {
      const row = rowIdx[q];
      if (q > start && !(row > previous && row < n))
        throw malformed(`the rows of column ${j} are not ascending below the diagonal within n`);
      previous = row;
      rowCount[row]++;
    }
    parent[j] = end - start > 1 ? rowIdx[start + 1] : -1;
    flops += (end - start - 1) * (end - start - 1) + 1;
  }
  const tolerance = options.relativePivotTolerance;
  for (let k = 0; k < n; k++) {
    const lkk = values[colPtr[k]];
    const d = lkk * lkk;
    const gkk = diagonal[perm[k]];
    const limit = (tolerance ?? 16 * rowCount[k] * UNIT_ROUNDOFF) * gkk;
    if (!(d > limit) || !(gkk > 0) || !(lkk > 0)) throw notPositiveDefinite(perm[k], d, gkk);
  }
  const symbolic: CholeskySymbolic = { n, ordering: { perm, inverse }, parent, colPtr, rowIdx, nnzL, flops };
  return { symbolic, values, work: new Float64Array(n) };
}

/** The pattern must be symmetric (both triangles stored) with sorted rows, as gramMatrix returns: O(nnz), no transpose. */
function checkSymmetricPattern(g: CsrMatrix): void {
  if (!isSortedSymmetricPattern(g)) {
    throw new DimensionMismatchError(
      'Cholesky needs the full symmetric pattern (both triangles stored, each row sorted, as gramMatrix returns); ' +
        'this matrix has an entry (i, j) without (j, i), or a row out of order.',
    );
  }
}

function checkSamePattern(s: CholeskyAnalysis, g: CsrMatrix): void {
  if (!hasAnalyzedPattern(s, g))
    throw new DimensionMismatchError('The matrix does not have the sparsity pattern the Cholesky analysis was done for.');
}

/** Whether G's pattern is the one `s` was analyzed for (its rows' pointers and columns, entry for entry). */
export function hasAnalyzedPattern(s: CholeskyAnalysis, g: CsrMatrix): boolean {
  const { patternRowPtr, patternColIdx } = s;
  const nnz = patternRowPtr[s.n];
  let same = g.rows === s.n && g.cols === s.n && g.rowPtr.length === patternRowPtr.length && g.rowPtr[g.rows] === nnz;
  for (let i = 0; same && i < patternRowPtr.length; i++) same = g.rowPtr[i] === patternRowPtr[i];
  for (let q = 0; same && q < nnz; q++) same = g.colIdx[q] === patternColIdx[q];
  return same;
}

/**
 * The analysis of G reusing `previous` when G has the pattern it was analyzed for (a copy of its arrays: each
 * factor owns its own), else a new one. The analysis depends on the pattern alone, so the factor is the same, bit
 * for bit. The machines of a grid's or a banded matrix's contiguous partition often share one pattern: the
 * ordering and L's pattern were ~30% of a TypeScript setup at Poisson n = 10^6, m = 100 (docs/performance.md).
 */
export function analysisFor(g: CsrMatrix, previous: CholeskyAnalysis | null): CholeskyAnalysis {
  if (previous === null || !hasAnalyzedPattern(previous, g)) return analyzeCholesky(g);
  return {
    n: previous.n,
    ordering: { perm: previous.ordering.perm.slice(), inverse: previous.ordering.inverse.slice() },
    parent: previous.parent.slice(),
    colPtr: previous.colPtr.slice(),
    rowIdx: previous.rowIdx.slice(),
    nnzL: previous.nnzL,
    flops: previous.flops,
    lowerPtr: previous.lowerPtr.slice(),
    lowerIdx: previous.lowerIdx.slice(),
    lowerSource: previous.lowerSource.slice(),
    patternRowPtr: previous.patternRowPtr.slice(),
    patternColIdx: previous.patternColIdx.slice(),
  };
}

/** z <- L^{-1} z in place (column-oriented forward substitution). */
function forwardSweep(factor: CholeskyFactor, z: Float64Array): void {
  const { n, colPtr, rowIdx } = factor.symbolic;
  const lValues = factor.values;
  for (let j = 0; j < n; j++) {
    const start = colPtr[j];
    const end = colPtr[j + 1];
    const zj = z[j] / lValues[start];
    z[j] = zj;
    if (zj !== 0) for (let q = start + 1; q < end; q++) z[rowIdx[q]] -= lValues[q] * zj;
  }
}

/**
 * z <- L^{-T} z in place (row-oriented backward substitution over L's columns): z_j = (z_j - sum_r L_rj z_r) / L_jj.
 * The sum in four partial sums (s_k over the column's below-diagonal entries k, k + 4, ... of its first 4 floor(c/4),
 * s_0 then adding the rest), ((s_0 + s_1) + (s_2 + s_3)): one running sum made each step wait for the last addition
 * (native, Poisson 200 x 200 in 4 x 5 boxes, ~41 entries a column: 115 us a sweep, against 80 us so; bench/gramSweeps.ts). The addon's sweeps
 * and the block solves (../linalg/blockKernels.ts, the WebAssembly one) add in this order too: the same bits.
 */
function backwardSweep(factor: CholeskyFactor, z: Float64Array): void {
  const { n, colPtr, rowIdx } = factor.symbolic;
  const lValues = factor.values;
  for (let j = n - 1; j >= 0; j--) {
    const start = colPtr[j];
    const end = colPtr[j + 1];
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let q = start + 1;
    for (; q + 4 <= end; q += 4) {
      s0 += lValues[q] * z[rowIdx[q]];
      s1 += lValues[q + 1] * z[rowIdx[q + 1]];
      s2 += lValues[q + 2] * z[rowIdx[q + 2]];
      s3 += lValues[q + 3] * z[rowIdx[q + 3]];
    }
    for (; q < end; q++) s0 += lValues[q] * z[rowIdx[q]];
    z[j] = (z[j] - (s0 + s1 + (s2 + s3))) / lValues[start];
  }
}

/** out = B u = P^T L u (B = P^T L, B B^T = G): the factor as an operator. u and out may be the same array. */
export function multiplyLower(factor: CholeskyFactor, u: Float64Array, out: Float64Array): Float64Array {
  const { n, colPtr, rowIdx, ordering } = factor.symbolic;
  const lValues = factor.values;
  const z = factor.work;
  z.set(u.subarray(0, n));
  // Columns descending: z[j] is still u's entry when column j is reached (later columns touch only rows > j).
  for (let j = n - 1; j >= 0; j--) {
    const start = colPtr[j];
    const zj = z[j];
    if (zj !== 0) for (let q = start + 1; q < colPtr[j + 1]; q++) z[rowIdx[q]] += lValues[q] * zj;
    z[j] = lValues[start] * zj;
  }
  const perm = ordering.perm;
  for (let k = 0; k < n; k++) out[perm[k]] = z[k];
  return out;
}

/** out = B^T y = L^T P y (B = P^T L, B B^T = G). y and out may be the same array. */
export function multiplyUpper(factor: CholeskyFactor, y: Float64Array, out: Float64Array): Float64Array {
  const { n, colPtr, rowIdx, ordering } = factor.symbolic;
  const lValues = factor.values;
  const z = factor.work;
  const perm = ordering.perm;
  for (let k = 0; k < n; k++) z[k] = y[perm[k]];
  // Columns ascending: the rows below j still hold P y's entries.
  for (let j = 0; j < n; j++) {
    const start = colPtr[j];
    let s = lValues[start] * z[j];
    for (let q = start + 1; q < colPtr[j + 1]; q++) s += lValues[q] * z[rowIdx[q]];
    z[j] = s;
  }
  out.set(z.subarray(0, n));
  return out;
}

/** y = B^{-1} b = L^{-1} P b (B = P^T L, B B^T = G). b and y may be the same array. */
export function solveLower(factor: CholeskyFactor, b: Float64Array, y: Float64Array): Float64Array {
  const { n, ordering } = factor.symbolic;
  const z = factor.work;
  const perm = ordering.perm;
  for (let k = 0; k < n; k++) z[k] = b[perm[k]];
  forwardSweep(factor, z);
  y.set(z.subarray(0, n));
  return y;
}

/** x = B^{-T} y = P^T L^{-T} y (B = P^T L, B B^T = G). y and x may be the same array. */
export function solveUpper(factor: CholeskyFactor, y: Float64Array, x: Float64Array): Float64Array {
  const { n, ordering } = factor.symbolic;
  const z = factor.work;
  z.set(y.subarray(0, n));
  backwardSweep(factor, z);
  const perm = ordering.perm;
  for (let k = 0; k < n; k++) x[perm[k]] = z[k];
  return x;
}

/** x = G^{-1} b. b and x may be the same array. No allocation. */
export function solveCholesky(factor: CholeskyFactor, b: Float64Array, x: Float64Array): Float64Array {
  const { n, ordering } = factor.symbolic;
  const z = factor.work;
  const perm = ordering.perm;
  for (let k = 0; k < n; k++) z[k] = b[perm[k]];
  forwardSweep(factor, z);
  backwardSweep(factor, z);
  for (let k = 0; k < n; k++) x[perm[k]] = z[k];
  return x;
}
