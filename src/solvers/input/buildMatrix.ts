/**
 * MatrixInput (dense rows, COO triplets, Matrix Market text, generator spec) -> square or tall DenseMatrix.
 * Entry values go through entryToNumber: finite numbers only; "NaN"/"Infinity" strings and
 * non-finite numbers raise NonFiniteValueError naming "matrix entry (i, j)" (0-based); other strings,
 * numeric ones included, raise InvalidEntryError.
 */
import { DimensionMismatchError, InvalidParameterError, NotSquareError } from '../errors.js';
import type { DenseMatrix } from '../matrix.js';
import {
  checkAllFinite,
  checkCooEntriesArray,
  checkDenseSize,
  cooEntry,
  cooSize,
  describeValue,
  entryToNumber,
  matrixEntryName,
} from './entries.js';
import { generateMatrix } from './generators.js';
import { parseMatrixMarket } from './matrixMarket.js';
import { MATRIX_FORMATS, type EntryValue, type InputLimits, type MatrixInput } from './types.js';

export { MATRIX_FORMATS };

export function buildMatrix(input: MatrixInput, limits?: InputLimits): DenseMatrix {
  if (input === null || typeof input !== 'object')
    throw new InvalidParameterError(`A matrix input must be an object; got ${describeValue(input)}.`);
  switch (input.format) {
    case 'dense':
      return denseFromRows(input.data, limits);
    case 'coo':
      return denseFromCoo(input.rows, input.cols, input.entries, limits);
    case 'matrix-market':
      return parseMatrixMarket(input.data, limits);
    case 'generator': {
      const { format: _format, ...spec } = input;
      return generateMatrix(spec, limits);
    }
    case 'stored':
      throw new InvalidParameterError(`A stored matrix ('${input.id}') is read by the service that stores it, not built from the input.`, {
        parameter: 'format',
      });
    default: {
      const format = (input as { format?: unknown }).format;
      throw new InvalidParameterError(
        `Unknown matrix format ${typeof format === 'string' ? JSON.stringify(format) : describeValue(format)}; expected one of ${MATRIX_FORMATS.join(', ')}.`,
        {
          parameter: 'format',
        },
      );
    }
  }
}

/** Dense row-major rows; all rows must have the length of row 0, and there must be at least as many rows. */
function denseFromRows(rows: EntryValue[][], limits: InputLimits | undefined): DenseMatrix {
  if (!Array.isArray(rows))
    throw new InvalidParameterError(`dense data must be an array of rows; got ${describeValue(rows)}.`, { parameter: 'data' });
  if (rows.length === 0) throw new DimensionMismatchError('The dense matrix has no rows; a system needs at least one.', { rows: 0 });
  for (let i = 0; i < rows.length; i++) {
    if (!Array.isArray(rows[i]))
      throw new DimensionMismatchError(`Row ${i} of the dense matrix is ${describeValue(rows[i])}, not an array of entries.`, { row: i });
  }
  const cols = rows[0].length;
  for (let i = 1; i < rows.length; i++) {
    if (rows[i].length !== cols) {
      throw new DimensionMismatchError(
        `Row ${i} of the dense matrix has ${rows[i].length} entries but row 0 has ${cols}; every row must have the same length.`,
        {
          row: i,
          length: rows[i].length,
          expected: cols,
        },
      );
    }
  }
  const N = rows.length;
  if (cols === 0)
    throw new DimensionMismatchError(`The dense matrix has no columns (${N} x 0); a system needs at least one unknown.`, {
      rows: N,
      cols: 0,
    });
  // Tall (N > n): a least-squares system; wide: no unique solution.
  if (cols > N) throw new NotSquareError(N, cols, 'wide dense matrix (fewer rows than columns)');
  checkDenseSize(N, limits, 'dense matrix');
  const data = new Float64Array(N * cols);
  for (let i = 0; i < N; i++) {
    const row = rows[i];
    const off = i * cols;
    for (let j = 0; j < cols; j++) data[off + j] = entryToNumber(row[j], matrixEntryName(i, j));
  }
  return { rows: N, cols, data };
}

/** COO triplets [i, j, v], 0-based; duplicated coordinates are summed. */
function denseFromCoo(rows: number, cols: number, entries: [number, number, EntryValue][], limits: InputLimits | undefined): DenseMatrix {
  const size = cooSize(rows, cols);
  const n = size.cols;
  checkDenseSize(size.rows, limits, 'COO matrix');
  checkCooEntriesArray(entries);
  const data = new Float64Array(size.rows * n);
  for (let k = 0; k < entries.length; k++) {
    const [i, j, value] = cooEntry(entries[k], size.rows, n, k);
    data[i * n + j] += value;
  }
  const matrix = { rows: size.rows, cols: n, data };
  checkAllFinite(matrix); // summed duplicates can overflow
  return matrix;
}
