/**
 * Checks shared by the input builders: one entry value, the size of a matrix before it is allocated.
 */
import {
  DimensionMismatchError,
  InvalidEntryError,
  InvalidParameterError,
  NonFiniteValueError,
  NotSquareError,
  ProblemTooLargeError,
} from '../errors.js';
import { matrixEntryName, type DenseMatrix } from '../matrix.js';
import type { EntryValue, InputLimits } from './types.js';

export { matrixEntryName } from '../matrix.js';

/**
 * Without a configured maxN, still refuse dense matrices whose storage alone would exceed 8 GiB
 * (2^30 doubles): allocating them would only fail later with an opaque RangeError.
 */
const MAX_DENSE_ENTRIES = 2 ** 30;

/** "NaN", "Infinity", "-Infinity", "inf", "+inf", "nan"... in any case, surrounding spaces ignored. */
const NON_FINITE_STRING = /^\s*[+-]?(nan|inf|infinity)\s*$/i;

/**
 * The number an entry stands for. Finite numbers pass. Non-finite numbers and the strings
 * "NaN"/"Infinity"/"inf"... raise NonFiniteValueError naming `where`. Any other string, numeric
 * ones like "1.5" included, raises InvalidEntryError: JSON has numbers for numbers, and strings are
 * only recognised so that NaN/Infinity (which JSON cannot carry) get a message naming the entry.
 */
export function entryToNumber(value: unknown, where: string): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new NonFiniteValueError(where, value);
    return value;
  }
  if (typeof value === 'string') {
    if (NON_FINITE_STRING.test(value)) throw new NonFiniteValueError(where, value.trim());
    throw new InvalidEntryError(
      `${where} is the string ${JSON.stringify(value)}; entries must be JSON numbers (strings are only recognised to name NaN or Infinity).`,
      { where, value },
    );
  }
  throw new InvalidEntryError(`${where} is ${describeValue(value)}; entries must be finite real numbers.`, {
    where,
    value: describeValue(value),
  });
}

/** Convert a whole vector of entries, naming offenders `${name}[k]`. */
export function entriesToVector(values: ArrayLike<EntryValue>, name: string): Float64Array {
  const out = new Float64Array(values.length);
  for (let k = 0; k < values.length; k++) out[k] = entryToNumber(values[k], `${name}[${k}]`);
  return out;
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  return typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * Refuse an n x n dense matrix before allocating it: n above limits.maxN, or storage beyond
 * MAX_DENSE_ENTRIES when no limit is configured.
 */
export function checkDenseSize(n: number, limits: InputLimits | undefined, what = 'matrix'): void {
  const maxN = limits?.maxN;
  if (maxN !== undefined && n > maxN) {
    throw new ProblemTooLargeError(`The ${what} has n = ${n}; at most n = ${maxN} is accepted (dense storage grows as n^2).`, { n, maxN });
  }
  if (n * n > MAX_DENSE_ENTRIES) {
    throw new ProblemTooLargeError(
      `The ${what} has n = ${n}; a dense ${n} x ${n} matrix would need ${((n * n * 8) / 2 ** 30).toFixed(1)} GiB.`,
      { n },
    );
  }
}

/**
 * Raise NonFiniteValueError for the first non-finite entry (row-major order). Needed after summing
 * duplicated COO / Matrix Market coordinates, whose sum can overflow, and for matrices built elsewhere.
 */
export function checkAllFinite(a: DenseMatrix): void {
  const { cols, data } = a;
  for (let k = 0; k < data.length; k++) {
    if (!Number.isFinite(data[k])) {
      const i = Math.floor(k / cols);
      throw new NonFiniteValueError(matrixEntryName(i, k - i * cols), data[k]);
    }
  }
}

/** A COO input's `rows` and `cols`: integers >= 1 (InvalidParameterError), rows >= cols (NotSquareError: a wide matrix). */
export function cooSize(rows: unknown, cols: unknown): { rows: number; cols: number } {
  for (const [name, value] of [
    ['rows', rows],
    ['cols', cols],
  ] as const) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      throw new InvalidParameterError(`coo ${name} must be an integer >= 1; got ${describeValue(value)}.`, { parameter: name });
    }
  }
  if ((rows as number) < (cols as number))
    throw new NotSquareError(rows as number, cols as number, 'wide COO matrix (fewer rows than columns)');
  return { rows: rows as number, cols: cols as number };
}

export function checkCooEntriesArray(entries: unknown): asserts entries is unknown[] {
  if (!Array.isArray(entries))
    throw new InvalidParameterError(`coo entries must be an array of [i, j, value]; got ${describeValue(entries)}.`, {
      parameter: 'entries',
    });
}

/**
 * COO entry k of an n x n matrix as [i, j, value]: InvalidEntryError for a malformed triplet or a
 * non-integer index, DimensionMismatchError for an index outside 0..n-1, entryToNumber's errors
 * (naming "matrix entry (i, j)") for the value.
 */
export function cooEntry(entry: unknown, rows: number, cols: number, k: number): [number, number, number] {
  if (!Array.isArray(entry) || entry.length !== 3) {
    throw new InvalidEntryError(
      `COO entry ${k} is ${describeValue(entry)}${Array.isArray(entry) ? ` of length ${entry.length}` : ''}; each entry must be [i, j, value].`,
      { entry: k },
    );
  }
  const [row, column, value] = entry as [unknown, unknown, unknown];
  const i = cooIndex(row, rows, 'row', k);
  const j = cooIndex(column, cols, 'column', k);
  return [i, j, entryToNumber(value, matrixEntryName(i, j))];
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
