/**
 * The two ways a CSR machine's independent rows and b_S' = A_S A_i^+ b_i are found (without a dense block):
 * the pivot-dropping Cholesky of A_i A_i^T (src/solvers/sparse/droppingCholesky.ts) and the addon's
 * SuiteSparseQR (native/src/spqr_native.c), on blocks whose answers are known in closed form, and their
 * documented thresholds: a row whose part outside the span of the others is 4e-10 of its norm is independent
 * for SuiteSparseQR (RANK_TOLERANCE 1e-10, the dense path's test) and dependent for the Cholesky (pivot
 * sin^2 = 1.7e-19 below 16 c u), one of 4e-7 independent for both, one of 4e-13 dependent for both.
 */
import { describe, expect, it } from 'vitest';
import { RANK_TOLERANCE } from '../../../src/solvers/distributed/rowSpace.js';
import { nativeSpqr } from '../../../src/solvers/linalg/backend.js';
import { csrFromDense, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { gramRowBasis } from '../../../src/solvers/sparse/droppingCholesky.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import { fromRows } from '../../../src/solvers/matrix.js';

interface RowBasis {
  readonly rows: ArrayLike<number>;
  readonly rhs: ArrayLike<number>;
}

const spqr = nativeSpqr();
const METHODS: readonly { readonly label: string; readonly skip: boolean; readonly basis: (a: CsrMatrix, b: Float64Array) => RowBasis }[] =
  [
    { label: 'pivot-dropping Cholesky', skip: false, basis: (a, b) => gramRowBasis(gramMatrix(a), b) },
    {
      label: `SuiteSparseQR${spqr === null ? ' [SKIPPED: the addon has no SuiteSparseQR part]' : ''}`,
      skip: spqr === null && !process.env.CI,
      basis: (a, b) => spqr!.spqrRowBasis(a.rows, a.cols, a.rowPtr, a.colIdx, a.values, b, RANK_TOLERANCE),
    },
  ];

const csr = (rows: number[][]): CsrMatrix => csrFromDense(fromRows(rows));

for (const method of METHODS) {
  describe.skipIf(method.skip)(method.label, () => {
    it('inconsistent dependent rows: b_S is A_S x_LS (x_LS = (1.6, 2.2) of x1 = 1, x2 = 2, x1 + x2 = 4, x1 = 2)', () => {
      const rows = [
        [1, 0],
        [0, 1],
        [1, 1],
        [1, 0],
      ];
      const { rows: kept, rhs } = method.basis(csr(rows), Float64Array.from([1, 2, 4, 2]));
      expect(kept.length).toBe(2);
      for (let t = 0; t < kept.length; t++) {
        const [u, v] = rows[kept[t]];
        expect(Math.abs(rhs[t] - (1.6 * u + 2.2 * v))).toBeLessThan(1e-14);
      }
    });

    it('consistent labels are kept as they are', () => {
      const rows = [
        [2, 0, 1],
        [0, 1, 1],
        [4, 0, 2],
        [2, 1, 2],
      ];
      const x = [0.5, -1, 3];
      const b = Float64Array.from(rows, (row) => row.reduce((s, v, j) => s + v * x[j], 0));
      const { rows: kept, rhs } = method.basis(csr(rows), b);
      expect(kept.length).toBe(2);
      for (let t = 0; t < kept.length; t++) expect(Math.abs(rhs[t] - b[kept[t]])).toBeLessThan(1e-13);
    });

    it('its threshold: r3 = r1 + r2 + eps e3', () => {
      const rankWith = (eps: number): number =>
        method.basis(
          csr([
            [1, 1, 0],
            [0, 1, 1],
            [1, 2, 1 + eps],
          ]),
          Float64Array.from([1, 2, 3]),
        ).rows.length;
      const native = method.label.startsWith('SuiteSparseQR');
      expect([rankWith(1e-12), rankWith(1e-9), rankWith(1e-6)]).toEqual([2, native ? 3 : 2, 3]);
    });
  });
}

describe.skipIf(spqr === null)('spqrRowBasis checks its arguments', () => {
  it('a column index past c is a RangeError', () => {
    const a = csr([[1, 1]]);
    expect(() => spqr!.spqrRowBasis(1, 1, a.rowPtr, a.colIdx, a.values, Float64Array.from([1]), RANK_TOLERANCE)).toThrow(RangeError);
  });
});
