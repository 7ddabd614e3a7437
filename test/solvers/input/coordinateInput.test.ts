import { describe, expect, it } from 'vitest';
import { NonFiniteValueError } from '../../../src/solvers/errors.js';
import { buildMatrix } from '../../../src/solvers/input/buildMatrix.js';
import { buildCsrMatrix } from '../../../src/solvers/input/coordinateInput.js';
import { csrToDense } from '../../../src/solvers/sparse/csr.js';

describe('coordinate inputs to CSR', () => {
  it('sums duplicated COO triplets as the dense reader does', () => {
    const input = {
      format: 'coo' as const,
      rows: 3,
      cols: 3,
      entries: [
        [2, 2, 1],
        [0, 1, 2.5],
        [1, 1, 4],
        [0, 1, -0.5],
        [0, 0, 3],
        [0, 1, 1],
      ] as [number, number, number][],
    };
    const csr = buildCsrMatrix(input);
    expect(Array.from(csr.rowPtr)).toEqual([0, 2, 3, 4]);
    expect(Array.from(csr.values)).toEqual([3, 3, 4, 1]);
    expect(Array.from(csrToDense(csr).data)).toEqual(Array.from(buildMatrix(input).data));
  });

  it('names the entry whose duplicates overflow when summed', () => {
    const input = {
      format: 'coo' as const,
      rows: 2,
      cols: 2,
      entries: [
        [0, 0, 1],
        [1, 0, 1e308],
        [1, 1, 1],
        [1, 0, 1e308],
      ] as [number, number, number][],
    };
    expect(() => buildCsrMatrix(input)).toThrow(NonFiniteValueError);
    expect(() => buildCsrMatrix(input)).toThrow(/matrix entry \(1, 0\)/);
  });

  it('refuses a Matrix Market line repeated, naming both lines', () => {
    const data = '%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n1 1 2\n';
    expect(() => buildCsrMatrix({ format: 'matrix-market', data })).toThrow(/line/);
  });
});
