import { describe, expect, it } from 'vitest';
import {
  DimensionMismatchError,
  InvalidEntryError,
  InvalidPartitionError,
  NonFiniteValueError,
  NotSquareError,
  ProblemTooLargeError,
  SingularMatrixError,
  TooManyMachinesError,
  ZeroRowError,
} from '../../../src/solvers/errors.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { buildPartition } from '../../../src/solvers/input/partition.js';
import type { EntryValue } from '../../../src/solvers/input/types.js';
import { fromRows, type DenseMatrix } from '../../../src/solvers/matrix.js';
import { csrFromCoo } from '../../../src/solvers/sparse/csr.js';
import { thrown } from '../../support/thrown.js';

const A3 = fromRows([
  [2, -1, 0],
  [-1, 2, -1],
  [0.5, -1, 3],
]);

describe('createProblem', () => {
  it('without rhs: b = A * ones (the row sums) and xTrue = ones', () => {
    const problem = createProblem({ A: A3, partition: { machines: 2 } });
    expect(problem.n).toBe(3);
    expect(problem.A).toBe(A3);
    expect(Array.from(problem.b)).toEqual([1, 0, 2.5]);
    expect(Array.from(problem.xTrue!)).toEqual([1, 1, 1]);
    expect(problem.partition.m).toBe(2);
    expect(problem.partition.sizes).toEqual([2, 1]);
    expect(createProblem({ A: A3, rhs: null, partition: { machines: 1 } }).xTrue).not.toBeNull();
  });

  it('with rhs: b = rhs and xTrue = null; any partition form works', () => {
    const problem = createProblem({ A: A3, rhs: [1, 2, 3], partition: { assignment: [1, 0, 1] } });
    expect(problem.b).toBeInstanceOf(Float64Array);
    expect(Array.from(problem.b)).toEqual([1, 2, 3]);
    expect(problem.xTrue).toBeNull();
    expect(Array.from(problem.partition.rowsOf[1])).toEqual([0, 2]);
    expect(Array.from(createProblem({ A: A3, rhs: new Float64Array([4, 5, 6]), partition: { groups: [[2], [0, 1]] } }).b)).toEqual([
      4, 5, 6,
    ]);
  });

  it('rhs of the wrong length: DimensionMismatchError', () => {
    const error = thrown(() => createProblem({ A: A3, rhs: [1, 2], partition: { machines: 1 } }));
    expect(error).toBeInstanceOf(DimensionMismatchError);
    expect(error.message).toMatch(/rhs has 2 entries but the matrix has n = 3/);
  });

  it('NaN / Infinity in rhs are named rhs[k]; other strings too', () => {
    const cases: [EntryValue, string][] = [
      [Number.NaN, 'NaN'],
      ['Infinity', 'Infinity'],
      ['-inf', '-inf'],
    ];
    for (const [value, shown] of cases) {
      const error = thrown(() => createProblem({ A: A3, rhs: [1, value, 3], partition: { machines: 1 } }));
      expect(error).toBeInstanceOf(NonFiniteValueError);
      expect(error.message).toBe(`rhs[1] is ${shown}; every entry must be a finite real number.`);
    }
    expect(thrown(() => createProblem({ A: A3, rhs: [1, 2, 'x'], partition: { machines: 1 } }))).toBeInstanceOf(InvalidEntryError);
  });

  it('NaN / Infinity in A are named by the first offending (i, j)', () => {
    const A = fromRows([
      [1, 2, 3],
      [4, 5, Number.POSITIVE_INFINITY],
      [Number.NaN, 8, 9],
    ]);
    const error = thrown(() => createProblem({ A, partition: { machines: 1 } }));
    expect(error).toBeInstanceOf(NonFiniteValueError);
    expect(error.message).toMatch(/^matrix entry \(1, 2\) is Infinity/);
  });

  it('non-square, empty, inconsistent storage, too large', () => {
    const rect: DenseMatrix = { rows: 2, cols: 3, data: new Float64Array(6).fill(1) };
    const error = thrown(() => createProblem({ A: rect, partition: { machines: 1 } }));
    expect(error).toBeInstanceOf(NotSquareError);
    expect(error.message).toMatch(/2 x 3/);
    expect(() => createProblem({ A: { rows: 0, cols: 0, data: new Float64Array(0) }, partition: { machines: 1 } })).toThrow(
      DimensionMismatchError,
    );
    expect(() => createProblem({ A: { rows: 2, cols: 2, data: new Float64Array(3) }, partition: { machines: 1 } })).toThrow(
      /holds 3 values/,
    );
    expect(() => createProblem({ A: A3, partition: { machines: 1 }, limits: { maxN: 2 } })).toThrow(ProblemTooLargeError);
  });

  it('a zero row or column is reported as singular, naming it', () => {
    const zeroRow = fromRows([
      [1, 2],
      [0, 0],
    ]);
    const rowError = thrown(() => createProblem({ A: zeroRow, partition: { machines: 1 } }));
    expect(rowError).toBeInstanceOf(SingularMatrixError);
    expect(rowError.message).toMatch(/Row 1 of A is entirely zero/);
    const zeroColumn = fromRows([
      [1, 0],
      [2, 0],
    ]);
    expect(() => createProblem({ A: zeroColumn, partition: { machines: 1 } })).toThrow(/Column 1 of A is entirely zero, so A is singular/);
  });

  it('a zero row of a tall A is not called singular: A = [[1, 0], [0, 0], [0, 1]] has full column rank', () => {
    const rows = [
      [1, 0],
      [0, 0],
      [0, 1],
    ];
    for (const A of [fromRows(rows), csrFromCoo(3, 2, [0, 2], [0, 1], [1, 1])]) {
      const error = thrown(() => createProblem({ A, partition: { machines: 1 } }));
      expect(error).toBeInstanceOf(ZeroRowError);
      expect(error).not.toBeInstanceOf(SingularMatrixError);
      expect(error.message).toMatch(/^Row 1 of A is entirely zero: its equation reads 0 = b\[1\]/);
      expect(error.message).not.toMatch(/singular/);
      expect((error as ZeroRowError).details).toEqual({ row: 1 });
    }
    // A zero column of a tall A: x_j is undetermined (no full column rank), said as such.
    const zeroColumn = fromRows([
      [1, 0],
      [2, 0],
      [3, 0],
    ]);
    expect(() => createProblem({ A: zeroColumn, partition: { machines: 1 } })).toThrow(
      /Column 1 of A is entirely zero, so A does not have full column rank and x\[1\] is undetermined/,
    );
  });

  it('the partition is built against n; a ready Partition is accepted after its length is checked', () => {
    expect(() => createProblem({ A: A3, partition: { machines: 4 } })).toThrow(TooManyMachinesError);
    expect(() => createProblem({ A: A3, partition: { machines: 3 }, limits: { maxMachines: 2 } })).toThrow(TooManyMachinesError);
    const ready = buildPartition({ assignment: [0, 1, 0] }, 3);
    expect(createProblem({ A: A3, partition: ready }).partition).toBe(ready);
    const wrongLength = buildPartition({ machines: 2 }, 4);
    const error = thrown(() => createProblem({ A: A3, partition: wrongLength }));
    expect(error).toBeInstanceOf(InvalidPartitionError);
    expect(error.message).toMatch(/assigns 4 rows but the matrix has n = 3/);
  });
});
