/**
 * The Gram product's one-pass form and the symmetric-pattern fast paths of the sparse setup:
 *  - gramMatrix equals, bit for bit, a plain reference (each pair of rows merged over their shared
 *    columns, ascending), on random matrices, a machine's strip of the Poisson matrix (columns taken
 *    on the range they span) and rows spread over a million columns (taken on their support);
 *  - isSortedSymmetricPattern agrees with a dense check on random patterns (symmetric, one entry
 *    missing, a row out of order, a duplicate);
 *  - symmetricPattern's fast path (a sorted symmetric pattern only loses its diagonal) equals the
 *    general path (taken on the upper triangle alone, whose A + A^T is the same pattern);
 *  - the symbolic analysis (each row's reach computed once) gives exactly the pattern of L that a
 *    dense boolean elimination of P G P^T gives, column by column.
 */
import { describe, expect, it } from 'vitest';
import { csrFromCoo, selectRows, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import { isSortedSymmetricPattern, symmetricPattern } from '../../../src/solvers/sparse/ordering.js';
import { analyzeCholesky } from '../../../src/solvers/sparse/sparseCholesky.js';
import { randomSparse, rowRange } from './support.js';

/** A A^T by merging each pair of (sorted) rows: G[r][c] = sum over shared k ascending of a_rk a_ck; stored where they share a column. */
function referenceGram(a: CsrMatrix): CsrMatrix {
  const rows: number[] = [];
  const cols: number[] = [];
  const vals: number[] = [];
  for (let r = 0; r < a.rows; r++) {
    for (let c = 0; c < a.rows; c++) {
      let p = a.rowPtr[r];
      let q = a.rowPtr[c];
      let s = 0;
      let shared = false;
      while (p < a.rowPtr[r + 1] && q < a.rowPtr[c + 1]) {
        if (a.colIdx[p] < a.colIdx[q]) p++;
        else if (a.colIdx[p] > a.colIdx[q]) q++;
        else {
          s = shared ? s + a.values[p] * a.values[q] : a.values[p] * a.values[q];
          shared = true;
          p++;
          q++;
        }
      }
      if (shared) {
        rows.push(r);
        cols.push(c);
        vals.push(s);
      }
    }
  }
  const rowPtr = new Int32Array(a.rows + 1);
  for (const r of rows) rowPtr[r + 1]++;
  for (let r = 0; r < a.rows; r++) rowPtr[r + 1] += rowPtr[r];
  return { rows: a.rows, cols: a.rows, rowPtr, colIdx: Int32Array.from(cols), values: Float64Array.from(vals) };
}

function expectSameCsr(actual: CsrMatrix, expected: CsrMatrix, label: string): void {
  expect(actual.rows, label).toBe(expected.rows);
  expect(Array.from(actual.rowPtr), label).toEqual(Array.from(expected.rowPtr));
  expect(Array.from(actual.colIdx), label).toEqual(Array.from(expected.colIdx));
  expect(Array.from(actual.values), label).toEqual(Array.from(expected.values)); // bit for bit
}

/** Whether (i, j) stored implies (j, i) stored, each row strictly ascending: the dense definition. */
function denseSortedSymmetric(a: CsrMatrix): boolean {
  const n = a.rows;
  const stored = new Uint8Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let q = a.rowPtr[i]; q < a.rowPtr[i + 1]; q++) {
      if (q > a.rowPtr[i] && a.colIdx[q] <= a.colIdx[q - 1]) return false;
      stored[i * n + a.colIdx[q]] = 1;
    }
  }
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (stored[i * n + j] !== stored[j * n + i]) return false;
  return true;
}

function upperTriangle(a: CsrMatrix): CsrMatrix {
  const r: number[] = [];
  const c: number[] = [];
  const v: number[] = [];
  for (let i = 0; i < a.rows; i++) {
    for (let q = a.rowPtr[i]; q < a.rowPtr[i + 1]; q++) {
      if (a.colIdx[q] >= i) {
        r.push(i);
        c.push(a.colIdx[q]);
        v.push(a.values[q]);
      }
    }
  }
  return csrFromCoo(a.rows, a.cols, r, c, v);
}

describe('gramMatrix (one pass, sorted by a transpose)', () => {
  for (const [rows, cols, density, seed] of [
    [30, 40, 0.1, 11],
    [50, 20, 0.3, 12],
    [25, 200, 0.02, 13],
    [8, 8, 1, 14],
  ] as const) {
    it(`equals the row-pair merge bit for bit (${rows} x ${cols}, density ${density})`, () => {
      const { csr } = randomSparse(rows, cols, density, seed);
      expectSameCsr(gramMatrix(csr), referenceGram(csr), `${rows} x ${cols}`);
    });
  }

  it('a strip of the Poisson matrix (a narrow column range) and rows spread over 10^6 columns (their support)', () => {
    const strip = selectRows(poisson2d(30), rowRange(300, 420));
    expectSameCsr(gramMatrix(strip), referenceGram(strip), 'poisson strip');
    const spread = csrFromCoo(4, 1_000_000, [0, 0, 1, 1, 2, 3, 3], [3, 999_999, 3, 500_000, 500_000, 7, 999_999], [1, 2, 3, 4, 5, 6, 7]);
    expectSameCsr(gramMatrix(spread), referenceGram(spread), 'spread');
  });

  it('rows whose bound exceeds the first buffer (a dense column shared by every row) grow it', () => {
    const n = 300;
    const r: number[] = [];
    const c: number[] = [];
    const v: number[] = [];
    for (let i = 0; i < n; i++) {
      r.push(i, i);
      c.push(0, i + 1);
      v.push(1 + i / n, 2);
    }
    const a = csrFromCoo(n, n + 1, r, c, v);
    const g = gramMatrix(a);
    expect(g.rowPtr[n]).toBe(n * n);
    expectSameCsr(g, referenceGram(a), 'dense column');
  });
});

describe('symmetric patterns', () => {
  it('isSortedSymmetricPattern agrees with the dense check', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const { csr } = randomSparse(15, 15, 0.2, seed);
      const g = gramMatrix(csr);
      expect(isSortedSymmetricPattern(g)).toBe(true);
      expect(denseSortedSymmetric(g)).toBe(true);
      expect(isSortedSymmetricPattern(csr)).toBe(denseSortedSymmetric(csr));
      // One off-diagonal entry moved to another column: no longer symmetric.
      const q = g.rowPtr[1];
      if (g.rowPtr[2] - q >= 2 && g.colIdx[q] !== 1) {
        const moved = { ...g, colIdx: g.colIdx.slice() };
        moved.colIdx[q] = g.colIdx[q + 1] - 1 > g.colIdx[q] ? g.colIdx[q] + 1 : g.colIdx[q];
        expect(isSortedSymmetricPattern(moved)).toBe(denseSortedSymmetric(moved));
      }
    }
    // A symmetric pattern with a row out of order, and one with a duplicate: both refused.
    const unsorted: CsrMatrix = {
      rows: 2,
      cols: 2,
      rowPtr: Int32Array.from([0, 2, 4]),
      colIdx: Int32Array.from([1, 0, 0, 1]),
      values: new Float64Array(4),
    };
    expect(isSortedSymmetricPattern(unsorted)).toBe(false);
    const duplicate: CsrMatrix = {
      rows: 2,
      cols: 2,
      rowPtr: Int32Array.from([0, 2, 4]),
      colIdx: Int32Array.from([1, 1, 0, 0]),
      values: new Float64Array(4),
    };
    expect(isSortedSymmetricPattern(duplicate)).toBe(false);
  });

  it("symmetricPattern's fast path equals the general one", () => {
    for (const a of [gramMatrix(selectRows(poisson2d(9), rowRange(0, 50))), gramMatrix(randomSparse(40, 30, 0.1, 5).csr)]) {
      const fast = symmetricPattern(a);
      const upper = upperTriangle(a);
      expect(isSortedSymmetricPattern(upper)).toBe(false);
      const general = symmetricPattern(upper);
      expect(Array.from(fast.ptr)).toEqual(Array.from(general.ptr));
      expect(Array.from(fast.idx)).toEqual(Array.from(general.idx));
    }
  });
});

describe('symbolic analysis', () => {
  it('the pattern of L equals a dense boolean elimination of P G P^T', () => {
    const cases = [
      gramMatrix(selectRows(poisson2d(10), rowRange(10, 70))),
      gramMatrix(randomSparse(45, 60, 0.06, 21).csr),
      gramMatrix(randomSparse(30, 30, 0.15, 22).csr),
    ];
    for (const g of cases) {
      const n = g.rows;
      const analysis = analyzeCholesky(g);
      const { perm, inverse } = analysis.ordering;
      const filled = new Uint8Array(n * n);
      for (let i = 0; i < n; i++) for (let q = g.rowPtr[i]; q < g.rowPtr[i + 1]; q++) filled[inverse[i] * n + inverse[g.colIdx[q]]] = 1;
      // Eliminating k joins every pair of its later neighbours.
      for (let k = 0; k < n; k++) {
        for (let i = k + 1; i < n; i++) {
          if (filled[i * n + k] === 0) continue;
          for (let j = k + 1; j < n; j++) if (filled[j * n + k] === 1) filled[i * n + j] = filled[j * n + i] = 1;
        }
      }
      expect(perm.length).toBe(n);
      for (let j = 0; j < n; j++) {
        const expected = [j];
        for (let i = j + 1; i < n; i++) if (filled[i * n + j] === 1) expected.push(i);
        expect(Array.from(analysis.rowIdx.subarray(analysis.colPtr[j], analysis.colPtr[j + 1])), `column ${j}`).toEqual(expected);
      }
    }
  });
});
