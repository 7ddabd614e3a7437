/** A machine's rows of a dense A: their column support and their copy on it. */
import { describe, expect, it } from 'vitest';
import { copyRowsOnColumns, denseColumnSupport, fromRows } from '../../src/solvers/matrix.js';

describe('matrix', () => {
  const A = fromRows([
    [1, 0, 2, 0],
    [0, 0, 3, 0],
    [4, 5, 6, 7],
    [0, 0, 0, 8],
  ]);

  it('denseColumnSupport lists the columns some given row uses, ascending', () => {
    expect(Array.from(denseColumnSupport(A, [0, 1]))).toEqual([0, 2]);
    expect(Array.from(denseColumnSupport(A, [3, 1]))).toEqual([2, 3]);
    expect(Array.from(denseColumnSupport(A, [1, 2]))).toEqual([0, 1, 2, 3]);
  });

  it('copyRowsOnColumns copies the given rows, in their order, at the given columns', () => {
    const rows = Int32Array.from([3, 0]);
    const cols = denseColumnSupport(A, rows);
    // Rows 3 and 0 use columns 0, 2 and 3.
    expect(Array.from(cols)).toEqual([0, 2, 3]);
    expect(Array.from(copyRowsOnColumns(A, rows, cols, new Float64Array(6)))).toEqual([0, 0, 8, 1, 2, 0]);
  });

  it('copyRowsOnColumns fills only rows k0..k1 when given a slice, and copies whole rows at every column', () => {
    const rows = Int32Array.from([2, 0, 3]);
    const cols = Int32Array.from([0, 1, 2, 3]);
    const out = new Float64Array(12).fill(-1);
    copyRowsOnColumns(A, rows, cols, out, 1, 2);
    expect(Array.from(out)).toEqual([-1, -1, -1, -1, 1, 0, 2, 0, -1, -1, -1, -1]);
    copyRowsOnColumns(A, rows, cols, out, 0, 1);
    copyRowsOnColumns(A, rows, cols, out, 2, 3);
    expect(Array.from(out)).toEqual([4, 5, 6, 7, 1, 0, 2, 0, 0, 0, 0, 8]);
  });
});
