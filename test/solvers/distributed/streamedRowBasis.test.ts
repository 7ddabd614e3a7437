/**
 * The streamed row basis of a CSR machine (src/solvers/distributed/streamedRowBasis.ts) over many blocks of rows, against a
 * closed form: rows s_k e_j(k) (one nonzero each, 1,000 rows on 10 columns, so rank 10 and 25 blocks of 40 rows), whose
 * local least-squares solution is x_j = sum s_k b_k / sum s_k^2 over the rows on column j; b_S' = s_k x_j(k) on the kept
 * rows. With two nonzeros a row (a chain over the columns) against x_0 from the normal equations solved densely.
 */
import { expect, it } from 'vitest';
import { runSync } from '../../../src/solvers/cooperative.js';
import { streamedRowBasisWork } from '../../../src/solvers/distributed/streamedRowBasis.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { csrFromCoo } from '../../../src/solvers/sparse/csr.js';
import { describeEachBackend } from '../../support/backends.js';

const p = 1000;
const c = 10;
const scale = (k: number): number => 1 + (k % 7) / 3;
const label = (k: number): number => Math.sin(k + 1);

describeEachBackend('streamed row basis', () => {
  it("rows on one column each: the first row of each column kept, b_S' from the closed form", () => {
    const column = (k: number): number => (k * 3) % c;
    const rows = Array.from({ length: p }, (_, k) => k);
    const a = csrFromCoo(p, c, rows, rows.map(column), rows.map(scale));
    const b = Float64Array.from(rows, label);
    const { rows: kept, rhs } = runSync(streamedRowBasisWork(selectedKernels(), a, b));
    // Row k is the first on its column for k < 10 (3k mod 10 runs over every column).
    expect(Array.from(kept)).toEqual(Array.from({ length: c }, (_, k) => k));
    const x = new Float64Array(c);
    const norm = new Float64Array(c);
    for (const k of rows) {
      x[column(k)] += scale(k) * label(k);
      norm[column(k)] += scale(k) ** 2;
    }
    kept.forEach((k, t) => expect(Math.abs(rhs[t] - (scale(k) * x[column(k)]) / norm[column(k)])).toBeLessThan(1e-14));
  });

  it("rows on two columns each: b_S' = A_S x_0, x_0 from the normal equations", () => {
    const rowIdx: number[] = [];
    const colIdx: number[] = [];
    const values: number[] = [];
    for (let k = 0; k < p; k++) {
      const j = k % c;
      rowIdx.push(k, k);
      colIdx.push(j, (j + 1) % c);
      values.push(scale(k), -0.5 * scale(k + 3));
    }
    const a = csrFromCoo(p, c, rowIdx, colIdx, values);
    const b = Float64Array.from({ length: p }, (_, k) => label(k));
    const { rows: kept, rhs } = runSync(streamedRowBasisWork(selectedKernels(), a, b));
    expect(kept.length).toBe(c);
    // A^T A x = A^T b (10 x 10, well conditioned here) by Gaussian elimination with partial pivoting.
    const g = Array.from({ length: c }, () => new Float64Array(c + 1));
    for (let k = 0; k < p; k++)
      for (let e = a.rowPtr[k]; e < a.rowPtr[k + 1]; e++) {
        for (let f = a.rowPtr[k]; f < a.rowPtr[k + 1]; f++) g[a.colIdx[e]][a.colIdx[f]] += a.values[e] * a.values[f];
        g[a.colIdx[e]][c] += a.values[e] * b[k];
      }
    for (let i = 0; i < c; i++) {
      let pivot = i;
      for (let r = i + 1; r < c; r++) if (Math.abs(g[r][i]) > Math.abs(g[pivot][i])) pivot = r;
      [g[i], g[pivot]] = [g[pivot], g[i]];
      for (let r = i + 1; r < c; r++) {
        const f = g[r][i] / g[i][i];
        for (let t = i; t <= c; t++) g[r][t] -= f * g[i][t];
      }
    }
    const x = new Float64Array(c);
    for (let i = c - 1; i >= 0; i--) {
      let s = g[i][c];
      for (let t = i + 1; t < c; t++) s -= g[i][t] * x[t];
      x[i] = s / g[i][i];
    }
    kept.forEach((k, t) => {
      let expected = 0;
      for (let e = a.rowPtr[k]; e < a.rowPtr[k + 1]; e++) expected += a.values[e] * x[a.colIdx[e]];
      expect(Math.abs(rhs[t] - expected)).toBeLessThan(1e-12);
    });
  });
});
