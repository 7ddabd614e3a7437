import { expect, it } from 'vitest';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { multiplyByTransposeRows } from '../../../src/solvers/linalg/products.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { describeEachBackend } from '../../support/backends.js';

describeEachBackend('X Y^T kernel', (backend) => {
  for (const [rows, cols, len] of [
    [1, 1, 1],
    [5, 3, 7],
    [9, 13, 600],
    [16, 8, 1100],
  ] as const) {
    it(`matches the naive product (${rows} x ${len}) (${cols} x ${len})^T, any row range`, () => {
      const rng = new SeededRandom(rows + cols + len);
      const x = rng.fillSigned(new Float64Array(rows * len));
      const y = rng.fillSigned(new Float64Array(cols * len));
      const out = new Float64Array(rows * cols).fill(NaN);
      multiplyByTransposeRows(selectedKernels(), x, y, len, 0, rows, cols, out, cols);
      const part = new Float64Array(2 * cols).fill(NaN);
      const r0 = Math.min(1, rows - 1);
      const r1 = Math.min(rows, r0 + 2);
      multiplyByTransposeRows(selectedKernels(), x, y, len, r0, r1, cols, part, cols, r0);
      for (let i = 0; i < rows; i++)
        for (let j = 0; j < cols; j++) {
          let s = 0;
          for (let t = 0; t < len; t++) s += x[i * len + t] * y[j * len + t];
          expect(Math.abs(out[i * cols + j] - s)).toBeLessThan(1e-13 * Math.sqrt(len));
          // The TypeScript kernel computes each entry the same way whatever the row range; dgemm's
          // blocking (and FMA) may differ with the shape, within the rounding of the sum.
          if (i >= r0 && i < r1) {
            if (backend === 'typescript') expect(part[(i - r0) * cols + j]).toBe(out[i * cols + j]);
            else expect(Math.abs(part[(i - r0) * cols + j] - out[i * cols + j])).toBeLessThan(1e-13 * Math.sqrt(len));
          }
        }
    });
  }
});
