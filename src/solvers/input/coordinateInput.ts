/**
 * Coordinate inputs (COO triplets, Matrix Market coordinate text) -> CSR, never anything dense: the
 * sparse counterpart of ./buildMatrix.ts for the inputs that list their entries. Checked as the
 * matrix upload (POST /v1/matrices) checks a file, before and while anything is allocated:
 * - n above limits.maxN or more than limits.maxNnz entries: ProblemTooLargeError (413), from the
 *   declared size (COO rows and entry count, the Matrix Market size line) before the CSR exists;
 * - a wide shape (rows < cols): NotSquareError; an index out of range: DimensionMismatchError (COO, naming
 *   the entry) or MatrixMarketSyntaxError (naming the line);
 * - the same (i, j) given twice: COO triplets are summed (the COO convention, as SciPy's coo_matrix,
 *   and what the service has always documented; a sum that overflows is a NonFiniteValueError naming
 *   the entry); Matrix Market text is a file that assigns each entry once, so a repeated line is a
 *   MatrixMarketSyntaxError naming both lines (symmetric storage: (i, j) and (j, i) are one entry);
 * - NaN / Infinity: NonFiniteValueError naming "matrix entry (i, j)"; a complex field or hermitian
 *   symmetry: UnsupportedMatrixError naming the field.
 * The Matrix Market array format is dense by nature: isCoordinateInput says false and ./matrixMarket.ts
 * reads it.
 */
import { NonFiniteValueError, ProblemTooLargeError } from '../errors.js';
import { csrFromCoo, type CsrMatrix } from '../sparse/csr.js';
import { MatrixMarketStreamReader, type SparseInputLimits } from '../sparse/matrixMarketStream.js';
import { checkCooEntriesArray, cooEntry, cooSize, matrixEntryName } from './entries.js';
import { parseBanner } from '../sparse/matrixMarketGrammar.js';
import type { MatrixInput } from './types.js';

export type CoordinateInput = Extract<MatrixInput, { format: 'coo' | 'matrix-market' }>;

/** True for COO triplets and for Matrix Market text in coordinate format (its banner says so; a malformed banner throws its error). */
export function isCoordinateInput(input: MatrixInput): input is CoordinateInput {
  if (input.format === 'coo') return true;
  if (input.format !== 'matrix-market') return false;
  return parseBanner(firstLine(input.data)).format === 'coordinate';
}

/** The CSR matrix of a coordinate input (rows sorted, columns ascending, explicit zeros kept). */
export function buildCsrMatrix(input: CoordinateInput, limits: SparseInputLimits = {}): CsrMatrix {
  if (input.format === 'coo') return csrFromCooInput(input.rows, input.cols, input.entries, limits);
  const reader = new MatrixMarketStreamReader(limits);
  reader.push(input.data);
  return reader.finish();
}

function firstLine(text: string): string {
  if (typeof text !== 'string') return '';
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const end = text.indexOf('\n', start);
  return text.slice(start, end === -1 ? text.length : end);
}

function csrFromCooInput(rows: number, cols: number, entries: unknown[], limits: SparseInputLimits): CsrMatrix {
  const size = cooSize(rows, cols);
  const n = size.rows;
  if (limits.maxN !== undefined && n > limits.maxN) {
    throw new ProblemTooLargeError(`The COO matrix has n = ${n}; at most n = ${limits.maxN} is accepted.`, { n, maxN: limits.maxN });
  }
  checkCooEntriesArray(entries);
  const count = entries.length;
  if (limits.maxNnz !== undefined && count > limits.maxNnz) {
    throw new ProblemTooLargeError(`The COO matrix lists ${count} entries; at most ${limits.maxNnz} are accepted.`, {
      nnz: count,
      maxNnz: limits.maxNnz,
    });
  }
  const rowIdx = new Int32Array(count);
  const colIdx = new Int32Array(count);
  const values = new Float64Array(count);
  for (let k = 0; k < count; k++) [rowIdx[k], colIdx[k], values[k]] = cooEntry(entries[k], size.rows, size.cols, k);
  const A = csrFromCoo(size.rows, size.cols, rowIdx, colIdx, values, { duplicates: 'sum' });
  checkCsrFinite(A);
  return A;
}

/** Summed duplicates can overflow: name the first entry that did. */
function checkCsrFinite(A: CsrMatrix): void {
  for (let i = 0; i < A.rows; i++) {
    for (let k = A.rowPtr[i]; k < A.rowPtr[i + 1]; k++) {
      if (!Number.isFinite(A.values[k])) throw new NonFiniteValueError(matrixEntryName(i, A.colIdx[k]), A.values[k]);
    }
  }
}
