/**
 * Compressed sparse row storage, the sparse path's one matrix type (as SciPy's csr_matrix):
 * row k's entries are colIdx / values[rowPtr[k] .. rowPtr[k + 1]), column indices strictly
 * ascending within a row (no duplicates). Explicit zeros are kept when the input stores them
 * (a Matrix Market entry "3 4 0", duplicates that cancel), as SciPy keeps them; the functions
 * here never drop or invent entries except `csrFromDense`, which stores the nonzeros only.
 * Int32 indices: nnz is limited far below 2^31 by the callers' limits (maxNnz).
 *
 * Everything works on flat typed arrays in O(nnz + rows + cols) time and memory; nothing here is
 * quadratic in the dimensions except the dense conversions, meant for tests and small inputs.
 */
import { DimensionMismatchError, InvalidEntryError, NonFiniteValueError } from '../errors.js';
import { matrixEntryName, norm2, type CsrMatrix, type DenseMatrix } from '../matrix.js';

/** The type lives with DenseMatrix (../matrix.ts), below every folder; the functions on it are here. */
export type { CsrMatrix } from '../matrix.js';

export function nnzOf(a: CsrMatrix): number {
  return a.rowPtr[a.rows];
}

/** What `csrFromCoo` does with two triplets at the same (i, j). */
export type DuplicatePolicy =
  /** Add them up, as the API's COO input and SciPy's tocsr() do. */
  | 'sum'
  /** Raise InvalidEntryError naming the entry and both triplets. */
  | 'reject';

/**
 * CSR from COO triplets (0-based): entry k is (rowIdx[k], colIdx[k], values[k]), k < count
 * (default: values.length). Any order is accepted. Duplicates follow `duplicates` ('sum' adds them
 * in input order). Errors: an index outside the shape (DimensionMismatchError naming the triplet),
 * a non-finite value or sum (NonFiniteValueError naming "matrix entry (i, j)"), a duplicate under
 * 'reject' (InvalidEntryError, details { row, column, entries: [first, second] }).
 *
 * Two stable counting sorts (by column, then by row) put the triplets in (row, column) order without
 * comparisons, so duplicates end up adjacent and in input order: O(nnz + rows + cols).
 */
export function csrFromCoo(
  rows: number,
  cols: number,
  rowIdx: ArrayLike<number>,
  colIdx: ArrayLike<number>,
  values: ArrayLike<number>,
  options: { duplicates?: DuplicatePolicy; count?: number } = {},
): CsrMatrix {
  const duplicates = options.duplicates ?? 'sum';
  const count = options.count ?? values.length;
  checkShape(rows, cols);
  for (let k = 0; k < count; k++) {
    const i = rowIdx[k];
    const j = colIdx[k];
    if (!(Number.isInteger(i) && i >= 0 && i < rows) || !(Number.isInteger(j) && j >= 0 && j < cols)) {
      throw new DimensionMismatchError(`COO entry ${k} is at (${i}, ${j}), outside the ${rows} x ${cols} matrix (indices are 0-based).`, {
        entry: k,
        row: i,
        column: j,
        rows,
        cols,
      });
    }
    if (!Number.isFinite(values[k])) throw new NonFiniteValueError(matrixEntryName(i, j), values[k]);
  }

  // byColumn: triplet numbers sorted by column (stable); byRow: those sorted by row (stable), i.e. by (row, column).
  const colCount = new Int32Array(cols + 1);
  for (let k = 0; k < count; k++) colCount[colIdx[k] + 1]++;
  for (let j = 0; j < cols; j++) colCount[j + 1] += colCount[j];
  const byColumn = new Int32Array(count);
  for (let k = 0; k < count; k++) byColumn[colCount[colIdx[k]]++] = k;
  const rowStart = new Int32Array(rows + 1);
  for (let k = 0; k < count; k++) rowStart[rowIdx[k] + 1]++;
  for (let i = 0; i < rows; i++) rowStart[i + 1] += rowStart[i];
  const next = rowStart.slice(0, rows);
  const byRow = new Int32Array(count);
  for (let t = 0; t < count; t++) {
    const k = byColumn[t];
    byRow[next[rowIdx[k]]++] = k;
  }

  // Merge adjacent duplicates while copying out.
  const rowPtr = new Int32Array(rows + 1);
  const outCols = new Int32Array(count);
  const outValues = new Float64Array(count);
  let nnz = 0;
  for (let i = 0; i < rows; i++) {
    const rowFirst = nnz;
    for (let t = rowStart[i]; t < rowStart[i + 1]; t++) {
      const k = byRow[t];
      const j = colIdx[k];
      if (nnz > rowFirst && outCols[nnz - 1] === j) {
        if (duplicates === 'reject') {
          const first = byRow[t - 1];
          throw new InvalidEntryError(
            `${matrixEntryName(i, j)} is given twice (COO entries ${Math.min(first, k)} and ${Math.max(first, k)}); ` +
              'each (row, column) may appear once.',
            { row: i, column: j, entries: [Math.min(first, k), Math.max(first, k)] },
          );
        }
        outValues[nnz - 1] += values[k];
        if (!Number.isFinite(outValues[nnz - 1])) throw new NonFiniteValueError(matrixEntryName(i, j), outValues[nnz - 1]);
      } else {
        outCols[nnz] = j;
        outValues[nnz] = values[k];
        nnz++;
      }
    }
    rowPtr[i + 1] = nnz;
  }
  return {
    rows,
    cols,
    rowPtr,
    colIdx: nnz === count ? outCols : outCols.slice(0, nnz),
    values: nnz === count ? outValues : outValues.slice(0, nnz),
  };
}

/** A^T in CSR (equivalently, A in compressed sparse columns); columns come out sorted. O(nnz + rows + cols). */
export function transpose(a: CsrMatrix): CsrMatrix {
  const { rows, cols, rowPtr, colIdx, values } = a;
  const nnz = rowPtr[rows];
  const tPtr = new Int32Array(cols + 1);
  for (let p = 0; p < nnz; p++) tPtr[colIdx[p] + 1]++;
  for (let j = 0; j < cols; j++) tPtr[j + 1] += tPtr[j];
  const next = tPtr.slice(0, cols);
  const tIdx = new Int32Array(nnz);
  const tValues = new Float64Array(nnz);
  for (let i = 0; i < rows; i++) {
    for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
      const q = next[colIdx[p]]++;
      tIdx[q] = i;
      tValues[q] = values[p];
    }
  }
  return { rows: cols, cols: rows, rowPtr: tPtr, colIdx: tIdx, values: tValues };
}

/** y = A x (y of length rows, overwritten; allocated when not given). */
export function multiply(a: CsrMatrix, x: Float64Array, y: Float64Array = new Float64Array(a.rows)): Float64Array {
  const { rows, rowPtr, colIdx, values } = a;
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) s += values[p] * x[colIdx[p]];
    y[i] = s;
  }
  return y;
}

/** y = A^T x (y of length cols, overwritten; allocated when not given), by scattering each row. */
export function multiplyTransposed(a: CsrMatrix, x: Float64Array, y: Float64Array = new Float64Array(a.cols)): Float64Array {
  const { rows, rowPtr, colIdx, values } = a;
  y.fill(0, 0, a.cols);
  for (let i = 0; i < rows; i++) {
    const xi = x[i];
    if (xi === 0) continue;
    for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) y[colIdx[p]] += values[p] * xi;
  }
  return y;
}

/** Makes zeroed typed arrays in memory of its own (a WebAssembly arena's before its run: ../linalg/wasmRowKernels.ts ArenaStaging). */
export interface TypedArrayAllocator {
  allocate<T extends Float64Array | Int32Array>(
    Construct: new (buffer: ArrayBufferLike, byteOffset: number, length: number) => T,
    bytesPerElement: number,
    length: number,
  ): T;
}

/** Where new arrays are made: plain memory (false), shared memory (true: solver threads then read them without a copy), or an allocator's. */
export type ArrayPlace = boolean | TypedArrayAllocator;

/** A zeroed array of `length` entries, made where `place` says. */
export function zeroedArray(Construct: Int32ArrayConstructor, length: number, place: ArrayPlace): Int32Array;
export function zeroedArray(Construct: Float64ArrayConstructor, length: number, place: ArrayPlace): Float64Array;
export function zeroedArray(
  Construct: Int32ArrayConstructor | Float64ArrayConstructor,
  length: number,
  place: ArrayPlace,
): Int32Array | Float64Array {
  if (place === false) return new Construct(length);
  if (place !== true) return Construct === Int32Array ? place.allocate(Int32Array, 4, length) : place.allocate(Float64Array, 8, length);
  const buffer = new SharedArrayBuffer(length * Construct.BYTES_PER_ELEMENT);
  return Construct === Int32Array ? new Int32Array(buffer) : new Float64Array(buffer);
}

/**
 * The rows `rowList` of A (e.g. one machine's rows, global indices ascending), as a
 * rowList.length x cols CSR matrix over the same (global) columns, made where `place` says (shared memory: threads
 * read it), its values where `valuesPlace` says.
 */
export function selectRows(a: CsrMatrix, rowList: Int32Array, place: ArrayPlace = false, valuesPlace: ArrayPlace = place): CsrMatrix {
  const { rows, rowPtr, colIdx, values } = a;
  const p = rowList.length;
  const subPtr = zeroedArray(Int32Array, p + 1, place);
  for (let k = 0; k < p; k++) {
    const i = rowList[k];
    if (!(i >= 0 && i < rows) || (k > 0 && i <= rowList[k - 1])) {
      throw new DimensionMismatchError(`Row list entry ${k} is ${i}: rows must be ascending, distinct and within 0..${rows - 1}.`, {
        entry: k,
        row: i,
        rows,
      });
    }
    subPtr[k + 1] = subPtr[k] + rowPtr[i + 1] - rowPtr[i];
  }
  const subCols = zeroedArray(Int32Array, subPtr[p], place);
  const subValues = zeroedArray(Float64Array, subPtr[p], valuesPlace);
  for (let k = 0; k < p; k++) {
    const i = rowList[k];
    subCols.set(colIdx.subarray(rowPtr[i], rowPtr[i + 1]), subPtr[k]);
    subValues.set(values.subarray(rowPtr[i], rowPtr[i + 1]), subPtr[k]);
  }
  return { rows: p, cols: a.cols, rowPtr: subPtr, colIdx: subCols, values: subValues };
}

/**
 * A's entries in the columns `columnList` (ascending), renumbered 0..columnList.length - 1; the entries in other
 * columns are left out (restrictColumns, by contrast, requires every entry within its list).
 */
export function selectColumns(a: CsrMatrix, columnList: Int32Array): CsrMatrix {
  const place = new Int32Array(a.cols).fill(-1);
  columnList.forEach((j, t) => (place[j] = t));
  const rowPtr = new Int32Array(a.rows + 1);
  for (let i = 0; i < a.rows; i++) {
    let count = 0;
    for (let e = a.rowPtr[i]; e < a.rowPtr[i + 1]; e++) if (place[a.colIdx[e]] >= 0) count++;
    rowPtr[i + 1] = rowPtr[i] + count;
  }
  const colIdx = new Int32Array(rowPtr[a.rows]);
  const values = new Float64Array(rowPtr[a.rows]);
  for (let i = 0, q = 0; i < a.rows; i++) {
    for (let e = a.rowPtr[i]; e < a.rowPtr[i + 1]; e++) {
      if (place[a.colIdx[e]] < 0) continue;
      colIdx[q] = place[a.colIdx[e]];
      values[q++] = a.values[e];
    }
  }
  return { rows: a.rows, cols: columnList.length, rowPtr, colIdx, values };
}

/**
 * A work array indexed by column (a marker or a map) over the span of the columns touched pays off
 * while that span is not much wider than the entries touched; beyond that, sorting and binary search
 * keep the cost independent of the width. Either way m machines of a matrix with 10^6 columns do not
 * cost m * 10^6 (a strip of a banded matrix spans a few of its own widths).
 */
const WIDE = 8;

/**
 * The columns in which the rows `rowList` (all rows when omitted) have a stored entry, ascending.
 * O(entries of those rows + span) with a marker over the span of their columns when that span is at
 * most 8 x entries, otherwise O(entries log entries) by sorting them.
 */
export function columnSupport(a: CsrMatrix, rowList?: Int32Array): Int32Array {
  const { rowPtr, colIdx } = a;
  const count = rowList === undefined ? a.rows : rowList.length;
  let entries = 0;
  let first = a.cols;
  let last = -1;
  for (let k = 0; k < count; k++) {
    const i = rowList === undefined ? k : rowList[k];
    for (let q = rowPtr[i]; q < rowPtr[i + 1]; q++) {
      const c = colIdx[q];
      if (c < first) first = c;
      if (c > last) last = c;
    }
    entries += rowPtr[i + 1] - rowPtr[i];
  }
  if (entries === 0) return new Int32Array(0);
  const span = last - first + 1;
  if (span <= WIDE * entries) {
    const seen = new Uint8Array(span);
    let found = 0;
    for (let k = 0; k < count; k++) {
      const i = rowList === undefined ? k : rowList[k];
      for (let q = rowPtr[i]; q < rowPtr[i + 1]; q++) {
        const t = colIdx[q] - first;
        if (seen[t] === 0) {
          seen[t] = 1;
          found++;
        }
      }
    }
    const support = new Int32Array(found);
    for (let j = 0, t = 0; t < found; j++) if (seen[j] === 1) support[t++] = first + j;
    return support;
  }
  const all = new Int32Array(entries);
  for (let k = 0, t = 0; k < count; k++) {
    const i = rowList === undefined ? k : rowList[k];
    all.set(colIdx.subarray(rowPtr[i], rowPtr[i + 1]), t);
    t += rowPtr[i + 1] - rowPtr[i];
  }
  all.sort();
  let found = 0;
  for (let t = 0; t < entries; t++) if (t === 0 || all[t] !== all[t - 1]) all[found++] = all[t];
  return all.slice(0, found);
}

/**
 * A restricted to the columns `support` (ascending, e.g. columnSupport(a)) and renumbered to
 * 0..support.length - 1: the machine-local form of A_i on its column support, in arrays of its own. Every stored
 * entry of A must lie in a listed column (DimensionMismatchError otherwise).
 */
export function restrictColumns(a: CsrMatrix, support: Int32Array): CsrMatrix {
  return { rows: a.rows, cols: support.length, rowPtr: a.rowPtr.slice(), colIdx: localColumnIndices(a, support), values: a.values.slice() };
}

/**
 * The column indices of A's stored entries renumbered to their places in `support` (ascending): restrictColumns'
 * colIdx alone, for a caller that keeps A's own rowPtr and values (a run's chunks: nothing of A copied), written into
 * `out` when given (shared memory, for threads). A map over the span of `support` when that span is not much wider
 * than the entries, binary search in `support` otherwise; DimensionMismatchError for an entry outside it.
 */
export function localColumnIndices(a: CsrMatrix, support: Int32Array, out?: Int32Array): Int32Array {
  const nnz = nnzOf(a);
  const localCols = out ?? new Int32Array(nnz);
  const missing = (column: number): never => {
    throw new DimensionMismatchError(`Column ${column} holds an entry but is not in the column support.`, { column });
  };
  const first = support.length > 0 ? support[0] : 0;
  const span = support.length > 0 ? support[support.length - 1] - first + 1 : 0;
  if (span <= WIDE * (nnz + support.length)) {
    const local = new Int32Array(span).fill(-1);
    for (let t = 0; t < support.length; t++) local[support[t] - first] = t;
    for (let q = 0; q < nnz; q++) {
      const offset = a.colIdx[q] - first;
      const t = offset >= 0 && offset < span ? local[offset] : -1;
      if (t < 0) missing(a.colIdx[q]);
      localCols[q] = t;
    }
  } else {
    for (let q = 0; q < nnz; q++) {
      const column = a.colIdx[q];
      let lo = 0;
      let hi = support.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (support[mid] < column) lo = mid + 1;
        else hi = mid;
      }
      if (support[lo] !== column) missing(column);
      localCols[q] = lo;
    }
  }
  return localCols;
}

/** Frobenius norm, overflow- and underflow-safe (as norm2). */
export function frobeniusNorm(a: CsrMatrix): number {
  return norm2(a.values, 0, nnzOf(a));
}

/** Euclidean norm of each row (out of length rows, overwritten; allocated when not given). */
export function rowNorms(a: CsrMatrix, out: Float64Array = new Float64Array(a.rows)): Float64Array {
  const { rows, rowPtr, values } = a;
  for (let i = 0; i < rows; i++) out[i] = norm2(values, rowPtr[i], rowPtr[i + 1] - rowPtr[i]);
  return out;
}

/** The dense rows x cols matrix (tests and small inputs only: rows * cols doubles). */
export function csrToDense(a: CsrMatrix): DenseMatrix {
  const { rows, cols, rowPtr, colIdx, values } = a;
  const data = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) data[i * cols + colIdx[p]] = values[p];
  return { rows, cols, data };
}

/** The nonzero entries of a dense matrix (exact zeros are not stored). Two passes, no over-allocation. */
export function csrFromDense(d: DenseMatrix): CsrMatrix {
  const { rows, cols, data } = d;
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) {
    let c = 0;
    for (let j = 0; j < cols; j++) if (data[i * cols + j] !== 0) c++;
    rowPtr[i + 1] = rowPtr[i] + c;
  }
  const colIdx = new Int32Array(rowPtr[rows]);
  const values = new Float64Array(rowPtr[rows]);
  let q = 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const v = data[i * cols + j];
      if (v !== 0) {
        colIdx[q] = j;
        values[q++] = v;
      }
    }
  }
  return { rows, cols, rowPtr, colIdx, values };
}

/**
 * Throws DimensionMismatchError unless `a` is a well-formed CsrMatrix: array lengths, rowPtr
 * non-decreasing from 0, column indices in range and strictly ascending within each row. For
 * matrices built outside this module (tests, deserialized job data).
 */
export function checkCsr(a: CsrMatrix): void {
  const { rows, cols, rowPtr, colIdx, values } = a;
  const fail = (what: string): never => {
    throw new DimensionMismatchError(`Malformed CSR matrix (${rows} x ${cols}): ${what}.`, { rows, cols });
  };
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 0 || cols < 0) fail('the shape must be non-negative integers');
  if (rowPtr.length !== rows + 1 || rowPtr[0] !== 0) fail('rowPtr must have rows + 1 entries starting at 0');
  const nnz = rowPtr[rows];
  if (colIdx.length !== nnz || values.length !== nnz) fail(`colIdx and values must have rowPtr[rows] = ${nnz} entries`);
  for (let i = 0; i < rows; i++) if (rowPtr[i + 1] < rowPtr[i]) fail(`rowPtr decreases at row ${i}`);
  for (let i = 0; i < rows; i++) {
    for (let p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
      const j = colIdx[p];
      if (j < 0 || j >= cols) fail(`row ${i} has column index ${j}`);
      if (p > rowPtr[i] && j <= colIdx[p - 1]) fail(`row ${i}'s column indices are not strictly ascending`);
    }
  }
}

function checkShape(rows: number, cols: number): void {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 0 || cols < 0 || rows >= 2 ** 31 || cols >= 2 ** 31) {
    throw new DimensionMismatchError(`A ${rows} x ${cols} sparse matrix needs integer dimensions in 0..2^31 - 1.`, { rows, cols });
  }
}
