/**
 * MatrixInput (dense rows, COO triplets, Matrix Market text, generator spec) -> square DenseMatrix.
 * Entry values go through entryToNumber: finite numbers only; "NaN"/"Infinity" strings and
 * non-finite numbers raise NonFiniteValueError naming "matrix entry (i, j)" (0-based); other strings,
 * numeric ones included, raise InvalidEntryError.
 */
import { DimensionMismatchError, InvalidEntryError, InvalidParameterError, NotSquareError } from '../errors.js';
import type { DenseMatrix } from '../matrix.js';
import { checkAllFinite, checkDenseSize, describeValue, entryToNumber, matrixEntryName } from './entries.js';
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

/** Dense row-major rows; all rows must have the length of row 0, and there must be as many rows. */
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
  const n = rows.length;
  if (cols !== n) throw new NotSquareError(n, cols, 'rectangular dense matrix');
  checkDenseSize(n, limits, 'dense matrix');
  const data = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const row = rows[i];
    const off = i * n;
    for (let j = 0; j < n; j++) data[off + j] = entryToNumber(row[j], matrixEntryName(i, j));
  }
  return { rows: n, cols: n, data };
}

/** COO triplets [i, j, v], 0-based; duplicated coordinates are summed. */
function denseFromCoo(rows: number, cols: number, entries: [number, number, EntryValue][], limits: InputLimits | undefined): DenseMatrix {
  for (const [name, value] of [
    ['rows', rows],
    ['cols', cols],
  ] as const) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      throw new InvalidParameterError(`coo ${name} must be an integer >= 1; got ${describeValue(value)}.`, { parameter: name });
    }
  }
  if (rows !== cols) throw new NotSquareError(rows, cols, 'rectangular COO matrix');
  const n = rows;
  checkDenseSize(n, limits, 'COO matrix');
  if (!Array.isArray(entries))
    throw new InvalidParameterError(`coo entries must be an array of [i, j, value]; got ${describeValue(entries)}.`, {
      parameter: 'entries',
    });
  const data = new Float64Array(n * n);
  for (let k = 0; k < entries.length; k++) {
    const entry = entries[k];
    if (!Array.isArray(entry) || entry.length !== 3) {
      throw new InvalidEntryError(
        `COO entry ${k} is ${describeValue(entry)}${Array.isArray(entry) ? ` of length ${entry.length}` : ''}; each entry must be [i, j, value].`,
        {
          entry: k,
        },
      );
    }
    const i = cooIndex(entry[0], n, 'row', k);
    const j = cooIndex(entry[1], n, 'column', k);
    data[i * n + j] += entryToNumber(entry[2], matrixEntryName(i, j));
  }
  const matrix = { rows: n, cols: n, data };
  checkAllFinite(matrix); // summed duplicates can overflow
  return matrix;
}

function cooIndex(value: unknown, n: number, what: 'row' | 'column', entry: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new InvalidEntryError(`COO entry ${entry} has ${what} index ${describeValue(value)}; indices must be 0-based integers.`, {
      entry,
    });
  }
  if (value < 0 || value >= n) {
    throw new DimensionMismatchError(`COO entry ${entry} has ${what} index ${value}, outside 0..${n - 1} (indices are 0-based).`, {
      entry,
      [what]: value,
      n,
    });
  }
  return value;
}
