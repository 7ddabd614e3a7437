/**
 * The coupling route's parts (../../../src/solvers/sparse/couplingBlock.ts), on boxes of the 2-D Poisson matrix:
 *  - Z = L^{-1} P E on its support equals the full triangular solves with the identity's columns (zero off the
 *    support), on the TypeScript factor and on CHOLMOD's (which may leave out zero entries, so its supernodes are
 *    checked entry by entry);
 *  - C^T C's top eigenpair and its second eigenvalue equal those of C = B_a^{-1} A_a A_b^T B_b^{-T} formed densely
 *    (ml-matrix's SVD), by the Lanczos run on T and by the dense eigendecomposition it falls back to.
 */
import { Matrix, SingularValueDecomposition } from 'ml-matrix';
import { describe, expect, it } from 'vitest';
import { runSync } from '../../../src/solvers/cooperative.js';
import { KrylovWorkspace } from '../../../src/solvers/eigen/lanczos.js';
import { nativeSparse } from '../../../src/solvers/linalg/backend.js';
import { factorGramNative } from '../../../src/solvers/machines/nativeGram.js';
import {
  couplingTopWork,
  factorColumnsSupport,
  inverseFactorColumns,
  type CouplingBlock,
  type GramFactorValues,
} from '../../../src/solvers/sparse/couplingBlock.js';
import { selectRows, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import { factorCholesky, solveLower, type CholeskyFactor } from '../../../src/solvers/sparse/sparseCholesky.js';

/** Rows of the k x k grid's box [x0, x0 + w) x [y0, y0 + h), ascending (row x k + y). */
function box(k: number, x0: number, y0: number, w: number, h: number): Int32Array {
  const rows: number[] = [];
  for (let x = x0; x < x0 + w; x++) for (let y = y0; y < y0 + h; y++) rows.push(x * k + y);
  return Int32Array.from(rows).sort();
}

/** Local indices of `rows` whose row of A shares a column with a row of `other`. */
function couplingRows(a: CsrMatrix, rows: Int32Array, other: Int32Array): Int32Array {
  const columns = new Set<number>();
  for (const r of other) for (let p = a.rowPtr[r]; p < a.rowPtr[r + 1]; p++) columns.add(a.colIdx[p]);
  const out: number[] = [];
  rows.forEach((r, k) => {
    for (let p = a.rowPtr[r]; p < a.rowPtr[r + 1]; p++) if (columns.has(a.colIdx[p])) return void out.push(k);
  });
  return Int32Array.from(out);
}

/** Dense A_x A_y^T (rows of x by rows of y). */
function crossGram(a: CsrMatrix, x: Int32Array, y: Int32Array): Float64Array {
  const out = new Float64Array(x.length * y.length);
  const dense = new Float64Array(a.cols);
  y.forEach((ry, j) => {
    for (let p = a.rowPtr[ry]; p < a.rowPtr[ry + 1]; p++) dense[a.colIdx[p]] = a.values[p];
    x.forEach((rx, i) => {
      let acc = 0;
      for (let p = a.rowPtr[rx]; p < a.rowPtr[rx + 1]; p++) acc += a.values[p] * dense[a.colIdx[p]];
      out[i * y.length + j] = acc;
    });
    for (let p = a.rowPtr[ry]; p < a.rowPtr[ry + 1]; p++) dense[a.colIdx[p]] = 0;
  });
  return out;
}

const withWork = (f: GramFactorValues): CholeskyFactor => ({ ...f, work: new Float64Array(f.symbolic.n) });

/** Whether some four consecutive support rows form a supernode (the sweep's grouped path runs on them). */
function hasSupernodeOfFour(f: GramFactorValues, rows: Int32Array): boolean {
  const { colPtr, rowIdx } = f.symbolic;
  const below = (j: number): number[] => Array.from(rowIdx.subarray(colPtr[j] + 1, colPtr[j + 1]));
  for (let s = 0; s + 4 <= rows.length; s++) {
    const j = rows[s];
    if (rows[s + 3] !== j + 3) continue;
    const tail = below(j + 3).join();
    if ([0, 1, 2].every((c) => below(j + c).join() === [...Array.from({ length: 3 - c }, (_, d) => j + c + d + 1), ...below(j + 3)].join()))
      if (tail.length > 0) return true;
  }
  return false;
}

const K = 30;
const A = poisson2d(K);
// Two boxes of 15 x 15 side by side.
const BOX_A = box(K, 0, 0, 15, 15);
const BOX_B = box(K, 15, 0, 15, 15);

describe('the coupling route', () => {
  const factorOf = (rows: Int32Array): CholeskyFactor => factorCholesky(gramMatrix(selectRows(A, rows)));
  const sparse = nativeSparse();
  const factorsByName: [string, (rows: Int32Array) => GramFactorValues][] = [['TypeScript', factorOf]];
  if (sparse !== null) factorsByName.push(['CHOLMOD', (rows) => factorGramNative(sparse, gramMatrix(selectRows(A, rows)))]);

  for (const [name, factor] of factorsByName) {
    it(`solves with the identity's columns on their support alone, as the full solves do (${name} factor)`, () => {
      const f = factor(BOX_A);
      const local = couplingRows(A, BOX_A, BOX_B);
      expect(local.length).toBeGreaterThan(20);
      const support = factorColumnsSupport(f, local, local.length);
      expect(support.rows.length).toBeLessThan(f.symbolic.n);
      expect(hasSupernodeOfFour(f, support.rows)).toBe(true);
      const { z, first, last } = inverseFactorColumns(f, support, local, local.length);
      const position = new Map(Array.from(support.rows, (row, s) => [row, s]));
      const e = new Float64Array(f.symbolic.n);
      const full = new Float64Array(f.symbolic.n);
      for (let t = 0; t < local.length; t++) {
        e.fill(0);
        e[local[t]] = 1;
        solveLower(withWork(f), e, full);
        for (let row = 0; row < f.symbolic.n; row++) {
          const s = position.get(row);
          const value = s === undefined ? 0 : z[s * local.length + t];
          expect(Math.abs(value - full[row])).toBeLessThanOrEqual(1e-14 * Math.max(1, Math.abs(full[row])));
          if (s !== undefined && (t < first[s] || t > last[s])) expect(value).toBe(0);
          if (s === undefined) expect(full[row]).toBe(0);
        }
      }
    });
  }

  it("gives C^T C's top eigenpair and second eigenvalue, by Lanczos on T and by its dense fallback", () => {
    const fa = factorOf(BOX_A);
    const fb = factorOf(BOX_B);
    const localA = couplingRows(A, BOX_A, BOX_B);
    const localB = couplingRows(A, BOX_B, BOX_A);
    // C = B_a^{-1} (A_a A_b^T) B_b^{-T} formed densely: B_a^{-1} on the columns of A_a A_b^T, then B_b^{-1} on the rows.
    const pa = BOX_A.length;
    const pb = BOX_B.length;
    const cross = crossGram(A, BOX_A, BOX_B);
    const left = new Float64Array(pa * pb);
    const column = new Float64Array(pa);
    for (let j = 0; j < pb; j++) {
      for (let i = 0; i < pa; i++) column[i] = cross[i * pb + j];
      solveLower(fa, column, column);
      for (let i = 0; i < pa; i++) left[i * pb + j] = column[i];
    }
    const c = new Matrix(pa, pb);
    const row = new Float64Array(pb);
    for (let i = 0; i < pa; i++) {
      row.set(left.subarray(i * pb, (i + 1) * pb));
      solveLower(fb, row, row);
      for (let j = 0; j < pb; j++) c.set(i, j, row[j]);
    }
    const svd = new SingularValueDecomposition(c);
    const [sigma1, sigma2] = svd.diagonal;
    const v1 = svd.rightSingularVectors.getColumn(0);

    const blockEntries = crossGram(
      A,
      Int32Array.from(localA, (k) => BOX_A[k]),
      Int32Array.from(localB, (k) => BOX_B[k]),
    );
    const nonzero = Array.from(blockEntries.keys()).filter((q) => blockEntries[q] !== 0);
    const f: CouplingBlock = {
      ka: localA.length,
      kb: localB.length,
      row: Int32Array.from(nonzero, (q) => Math.floor(q / localB.length)),
      col: Int32Array.from(nonzero, (q) => q % localB.length),
      value: Float64Array.from(nonzero, (q) => blockEntries[q]),
    };
    const supportA = factorColumnsSupport(fa, localA, localA.length);
    const supportB = factorColumnsSupport(fb, localB, localB.length);
    for (const convergedWhen of [(_: number, residual: number) => residual < 1e-13, () => false]) {
      const y = new Float64Array(pb);
      const top = runSync(couplingTopWork(fa, supportA, localA, fb, supportB, localB, f, y, convergedWhen, new KrylovWorkspace()));
      expect(top).not.toBeNull();
      expect(Math.abs(top!.lambda1 - sigma1 ** 2)).toBeLessThan(1e-13);
      expect(Math.abs(top!.lambda2 - sigma2 ** 2)).toBeLessThan(1e-8);
      let dot = 0;
      for (let j = 0; j < pb; j++) dot += y[j] * v1[j];
      expect(Math.abs(Math.abs(dot) - 1)).toBeLessThan(1e-10);
    }
  });
});
