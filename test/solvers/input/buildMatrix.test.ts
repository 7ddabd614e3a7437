import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DimensionMismatchError,
  InvalidEntryError,
  InvalidParameterError,
  NonFiniteValueError,
  NotSquareError,
  ProblemTooLargeError,
  UnsupportedMatrixError,
} from '../../../src/solvers/errors.js';
import { buildMatrix } from '../../../src/solvers/input/buildMatrix.js';
import { generateMatrix } from '../../../src/solvers/input/generators.js';
import type { EntryValue, MatrixInput } from '../../../src/solvers/input/types.js';
import { toRows } from '../../../src/solvers/matrix.js';
import { MATRICES_DIR } from '../../support/sharedData.js';
import { thrown } from '../../support/thrown.js';

// Inputs arrive from JSON, so the tests also feed values the types exclude.
const dense = (data: unknown[][]): MatrixInput => ({ format: 'dense', data: data as EntryValue[][] });
const coo = (rows: number, cols: number, entries: unknown[]): MatrixInput => ({
  format: 'coo',
  rows,
  cols,
  entries: entries as [number, number, EntryValue][],
});

describe('buildMatrix: dense', () => {
  it('builds a row-major matrix', () => {
    const a = buildMatrix(
      dense([
        [1, 2],
        [3, 4],
      ]),
    );
    expect(a.rows).toBe(2);
    expect(a.cols).toBe(2);
    expect(Array.from(a.data)).toEqual([1, 2, 3, 4]);
  });

  it('ragged rows: DimensionMismatchError naming the row', () => {
    const error = thrown(() =>
      buildMatrix(
        dense([
          [1, 2, 3],
          [4, 5, 6],
          [7, 8],
        ]),
      ),
    );
    expect(error).toBeInstanceOf(DimensionMismatchError);
    expect(error.message).toMatch(/Row 2 .* 2 entries but row 0 has 3/);
    expect((error as DimensionMismatchError).details).toMatchObject({ row: 2 });
  });

  it('wide: NotSquareError with rows x cols (tall is accepted)', () => {
    const error = thrown(() =>
      buildMatrix(
        dense([
          [1, 2, 3],
          [4, 5, 6],
        ]),
      ),
    );
    expect(error).toBeInstanceOf(NotSquareError);
    expect(error.message).toMatch(/2 x 3/);
    expect(error.message).toMatch(/wide/);
    expect(
      buildMatrix(
        dense([
          [1, 2],
          [3, 4],
          [5, 6],
        ]),
      ),
    ).toMatchObject({ rows: 3, cols: 2 });
  });

  it('no rows, or a row that is not an array', () => {
    expect(() => buildMatrix(dense([]))).toThrow(DimensionMismatchError);
    expect(() => buildMatrix(dense([[1], 2 as unknown as unknown[]]))).toThrow(/Row 1/);
  });

  it('NaN and Infinity, as numbers or as strings in any case, are named as matrix entries', () => {
    const cases: [unknown, string][] = [
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      [Number.NEGATIVE_INFINITY, '-Infinity'],
      ['NaN', 'NaN'],
      ['nan', 'nan'],
      ['Infinity', 'Infinity'],
      ['-Infinity', '-Infinity'],
      ['inf', 'inf'],
      ['+inf', '+inf'],
      ['INFINITY', 'INFINITY'],
    ];
    for (const [value, shown] of cases) {
      const error = thrown(() =>
        buildMatrix(
          dense([
            [1, 2],
            [3, value],
          ]),
        ),
      );
      expect(error, String(value)).toBeInstanceOf(NonFiniteValueError);
      expect(error.message).toBe(`matrix entry (1, 1) is ${shown}; every entry must be a finite real number.`);
      expect((error as NonFiniteValueError).code).toBe('non-finite-value');
    }
  });

  it('strings that are not NaN/Infinity (numeric ones included) and non-numbers are rejected naming the entry', () => {
    for (const value of ['1.5', 'abc', '', null, true, [1]]) {
      const error = thrown(() =>
        buildMatrix(
          dense([
            [value, 2],
            [3, 4],
          ]),
        ),
      );
      expect(error, String(value)).toBeInstanceOf(InvalidEntryError);
      expect(error.message).toMatch(/^matrix entry \(0, 0\) is /);
    }
    expect(
      thrown(() =>
        buildMatrix(
          dense([
            [1, 2],
            ['1.5', 4],
          ]),
        ),
      ).message,
    ).toMatch(/matrix entry \(1, 0\) is the string "1.5"; entries must be JSON numbers/);
  });

  it('checks n against limits.maxN', () => {
    const rows = Array.from({ length: 5 }, () => [1, 2, 3, 4, 5]);
    expect(() => buildMatrix(dense(rows), { maxN: 4 })).toThrow(ProblemTooLargeError);
    expect(buildMatrix(dense(rows), { maxN: 5 }).rows).toBe(5);
  });
});

describe('buildMatrix: coo', () => {
  it('0-based triplets, duplicates summed, the rest zero', () => {
    const a = buildMatrix(
      coo(3, 3, [
        [0, 0, 1],
        [2, 1, 4],
        [0, 0, 2.5],
        [1, 2, -1],
      ]),
    );
    expect(toRows(a)).toEqual([
      [3.5, 0, 0],
      [0, 0, -1],
      [0, 4, 0],
    ]);
  });

  it('wide: NotSquareError (tall is accepted)', () => {
    const error = thrown(() => buildMatrix(coo(2, 3, [[0, 0, 1]])));
    expect(error).toBeInstanceOf(NotSquareError);
    expect(error.message).toMatch(/2 x 3/);
    expect(buildMatrix(coo(3, 2, [[2, 1, 5]]))).toEqual({ rows: 3, cols: 2, data: Float64Array.from([0, 0, 0, 0, 0, 5]) });
  });

  it('indices out of range or not integers, malformed triplets', () => {
    const outOfRange = thrown(() =>
      buildMatrix(
        coo(2, 2, [
          [0, 0, 1],
          [1, 2, 1],
        ]),
      ),
    );
    expect(outOfRange).toBeInstanceOf(DimensionMismatchError);
    expect(outOfRange.message).toMatch(/COO entry 1 has column index 2, outside 0\.\.1/);
    expect(() => buildMatrix(coo(2, 2, [[-1, 0, 1]]))).toThrow(/row index -1/);
    expect(() => buildMatrix(coo(2, 2, [[0.5, 0, 1]]))).toThrow(InvalidEntryError);
    expect(() => buildMatrix(coo(2, 2, [[0, 0]]))).toThrow(/COO entry 0 .*length 2/);
    expect(() => buildMatrix(coo(2, 2, [null]))).toThrow(InvalidEntryError);
  });

  it('non-finite values name the entry; a duplicate sum that overflows is caught too', () => {
    const error = thrown(() =>
      buildMatrix(
        coo(3, 3, [
          [0, 0, 1],
          [2, 1, 'Infinity'],
        ]),
      ),
    );
    expect(error).toBeInstanceOf(NonFiniteValueError);
    expect(error.message).toMatch(/^matrix entry \(2, 1\) is Infinity/);
    const overflow = thrown(() =>
      buildMatrix(
        coo(2, 2, [
          [1, 0, 1e308],
          [1, 0, 1e308],
        ]),
      ),
    );
    expect(overflow).toBeInstanceOf(NonFiniteValueError);
    expect(overflow.message).toMatch(/matrix entry \(1, 0\)/);
  });

  it('rows/cols must be positive integers; n is checked against maxN before allocating', () => {
    expect(() => buildMatrix(coo(0, 0, []))).toThrow(InvalidParameterError);
    expect(() => buildMatrix(coo(2.5, 2.5, []))).toThrow(/rows must be an integer/);
    expect(() => buildMatrix(coo(1_000_000, 1_000_000, []), { maxN: 4000 })).toThrow(ProblemTooLargeError);
  });
});

describe('buildMatrix: matrix-market and generator', () => {
  it('parses Matrix Market text and rejects qc324 (complex)', () => {
    const a = buildMatrix({ format: 'matrix-market', data: '%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 2\n2 1 -1\n' });
    expect(toRows(a)).toEqual([
      [2, -1],
      [-1, 0],
    ]);
    const qc324 = readFileSync(join(MATRICES_DIR, 'qc324.mtx'), 'utf8');
    expect(() => buildMatrix({ format: 'matrix-market', data: qc324 })).toThrow(UnsupportedMatrixError);
  });

  it('runs the generator with the same result as generateMatrix', () => {
    const a = buildMatrix({ format: 'generator', generator: 'structured-gaussian', n: 12, blockSize: 4, sigma: 0.5, seed: 3 });
    const b = generateMatrix({ generator: 'structured-gaussian', n: 12, blockSize: 4, sigma: 0.5, seed: 3 });
    expect(Array.from(a.data)).toEqual(Array.from(b.data));
  });

  it('unknown formats are rejected', () => {
    expect(() => buildMatrix({ format: 'csr' } as unknown as MatrixInput)).toThrow(/Unknown matrix format "csr"/);
  });
});
