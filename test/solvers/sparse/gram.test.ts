import { describe, expect, it } from 'vitest';
import { checkCsr, columnSupport, csrFromCoo, csrToDense, nnzOf, restrictColumns, selectRows } from '../../../src/solvers/sparse/csr.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import { SPARSE_REFERENCE, randomSparse, referenceMatrix, rowRange } from './support.js';

describe('gramMatrix', () => {
  for (const [rows, cols, density, seed] of [
    [1, 1, 1, 1],
    [12, 30, 0.15, 2],
    [40, 25, 0.08, 3],
    [20, 20, 0, 4],
  ]) {
    it(`equals the dense A A^T, exactly symmetric, full sorted pattern (${rows} x ${cols}, density ${density})`, () => {
      const { dense, csr } = randomSparse(rows, cols, density, seed);
      const g = gramMatrix(csr);
      checkCsr(g);
      expect([g.rows, g.cols]).toEqual([rows, rows]);
      const gDense = csrToDense(g).data;
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < rows; c++) {
          let s = 0;
          let touches = false;
          for (let k = 0; k < cols; k++) {
            s += dense.data[r * cols + k] * dense.data[c * cols + k];
            touches ||= dense.data[r * cols + k] !== 0 && dense.data[c * cols + k] !== 0;
          }
          expect(gDense[r * rows + c]).toBeCloseTo(s, 14);
          expect(gDense[r * rows + c]).toBe(gDense[c * rows + r]); // bit for bit
          // Stored exactly where two rows share a column (the structural pattern).
          let stored = false;
          for (let q = g.rowPtr[r]; q < g.rowPtr[r + 1]; q++) stored ||= g.colIdx[q] === c;
          expect(stored).toBe(touches);
        }
      }
    });
  }

  it('a few rows of a matrix with 10^6 columns: the same Gram as on their column support', () => {
    const wide = csrFromCoo(3, 1_000_000, [0, 0, 1, 2, 2], [999_999, 7, 7, 500_000, 999_999], [1, 2, 3, 4, 5]);
    const g = gramMatrix(wide);
    checkCsr(g);
    expect(Array.from(csrToDense(g).data)).toEqual([5, 6, 5, 6, 9, 0, 5, 0, 41]);
    expect(Array.from(csrToDense(gramMatrix(restrictColumns(wide, columnSupport(wide)))).data)).toEqual(Array.from(csrToDense(g).data));
  });

  it('keeps positions whose products cancel (structural pattern, as a symbolic analysis needs)', () => {
    // Rows (1, 1) and (1, -1) are orthogonal: G[0][1] = 0 is still stored.
    const a = {
      rows: 2,
      cols: 2,
      rowPtr: new Int32Array([0, 2, 4]),
      colIdx: new Int32Array([0, 1, 0, 1]),
      values: new Float64Array([1, 1, 1, -1]),
    };
    const g = gramMatrix(a);
    expect(nnzOf(g)).toBe(4);
    expect(Array.from(g.values)).toEqual([2, 0, 0, 2]);
  });

  describe('SciPy reference: nnz, trace and Frobenius norm of each machine block', () => {
    for (const c of SPARSE_REFERENCE.gram) {
      it(c.label, () => {
        const a = referenceMatrix(c.source);
        for (const block of c.blocks) {
          const g = gramMatrix(selectRows(a, rowRange(block.rows[0], block.rows[1])));
          expect(nnzOf(g)).toBe(block.nnz);
          let trace = 0;
          let squares = 0;
          for (let r = 0; r < g.rows; r++) {
            for (let q = g.rowPtr[r]; q < g.rowPtr[r + 1]; q++) {
              if (g.colIdx[q] === r) trace += g.values[q];
              squares += g.values[q] ** 2;
            }
          }
          expect(Math.abs(trace - block.trace)).toBeLessThanOrEqual(1e-13 * block.trace);
          expect(Math.abs(Math.sqrt(squares) - block.frobenius)).toBeLessThanOrEqual(1e-13 * block.frobenius);
        }
      });
    }
  });
});
