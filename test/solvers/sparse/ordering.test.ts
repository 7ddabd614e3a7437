import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DimensionMismatchError } from '../../../src/solvers/errors.js';
import { csrFromCoo, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import {
  approximateMinimumDegree,
  identityOrdering,
  invertPermutation,
  symmetricPattern,
  type Ordering,
} from '../../../src/solvers/sparse/ordering.js';
import { analyzeCholesky } from '../../../src/solvers/sparse/sparseCholesky.js';
import { thrown } from '../../support/thrown.js';

function expectPermutation({ perm, inverse }: Ordering, n: number): void {
  expect(perm.length).toBe(n);
  const seen = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    expect(perm[k]).toBeGreaterThanOrEqual(0);
    expect(perm[k]).toBeLessThan(n);
    expect(seen[perm[k]]).toBe(0);
    seen[perm[k]] = 1;
    expect(inverse[perm[k]]).toBe(k);
  }
}

/** The symmetric pattern of the (i, j) pairs, their mirrors and the diagonal (mod n); values 1. */
function patternFrom(n: number, pairs: [number, number][]): CsrMatrix {
  const rows = pairs.flatMap(([i, j]) => [i % n, j % n]);
  const cols = pairs.flatMap(([i, j]) => [j % n, i % n]);
  for (let i = 0; i < n; i++) {
    rows.push(i);
    cols.push(i);
  }
  return csrFromCoo(n, n, rows, cols, new Float64Array(rows.length).fill(1));
}

/**
 * nnz(L), diagonal included, of P A P^T by eliminating vertices one by one: each vertex's later
 * neighbours become a clique (passed on to the first of them, its elimination-tree parent).
 */
function eliminationFill(a: CsrMatrix, perm: Int32Array): number {
  const n = a.rows;
  const inverse = invertPermutation(perm);
  const later: Set<number>[] = Array.from({ length: n }, () => new Set<number>());
  for (let i = 0; i < n; i++) {
    for (let q = a.rowPtr[i]; q < a.rowPtr[i + 1]; q++) {
      const [u, v] = [inverse[i], inverse[a.colIdx[q]]];
      if (u < v) later[u].add(v);
      if (v < u) later[v].add(u);
    }
  }
  let nnz = n;
  for (let k = 0; k < n; k++) {
    nnz += later[k].size;
    if (later[k].size === 0) continue;
    const parent = Math.min(...later[k]);
    for (const j of later[k]) if (j !== parent) later[parent].add(j);
  }
  return nnz;
}

describe('symmetricPattern', () => {
  it('is the pattern of A + A^T without the diagonal, sorted and duplicate-free', () => {
    const a = csrFromCoo(4, 4, [0, 0, 1, 2, 3, 3], [0, 2, 2, 0, 1, 3], [1, 1, 1, 1, 1, 1]);
    const { n, ptr, idx } = symmetricPattern(a);
    expect(n).toBe(4);
    const lists = [0, 1, 2, 3].map((i) => Array.from(idx.subarray(ptr[i], ptr[i + 1])));
    expect(lists).toEqual([[2], [2, 3], [0, 1], [1]]);
    expect(thrown(() => symmetricPattern(csrFromCoo(2, 3, [0], [0], [1])))).toBeInstanceOf(DimensionMismatchError);
  });
});

describe('approximateMinimumDegree', () => {
  it('returns a permutation and its inverse for any pattern (property: dense rows, isolated and disconnected nodes)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 300 }),
        fc.integer({ min: 0, max: 3 }),
        (n, pairs, denseRows) => {
          // A few rows connected to everything: they exceed the dense threshold when n is large enough.
          for (let d = 0; d < denseRows; d++) for (let j = 0; j < n; j++) pairs.push([d * 7, j]);
          const a = patternFrom(n, pairs);
          const ordering = approximateMinimumDegree(a);
          expectPermutation(ordering, n);
          // The symbolic analysis under that ordering counts the fill of plain graph elimination.
          expect(analyzeCholesky(a, { ordering }).nnzL).toBe(eliminationFill(a, ordering.perm));
        },
      ),
      { numRuns: 200, seed: 11 },
    );
  });

  it('orders dense rows last', () => {
    // An arrow: node 0 connected to all 199 others, which form a path. Node 0 goes last; the fill is then nil.
    const n = 200;
    const pairs: [number, number][] = [];
    for (let j = 1; j < n; j++) pairs.push([0, j]);
    for (let j = 1; j < n - 1; j++) pairs.push([j, j + 1]);
    const a = patternFrom(n, pairs);
    const ordering = approximateMinimumDegree(a);
    expect(ordering.perm[n - 1]).toBe(0);
    expect(analyzeCholesky(a, { ordering }).nnzL).toBe(n + (n - 1) + (n - 2)); // diagonal, the arrow, the path
  });

  it('on a tree (a path, a star) it finds an ordering without fill', () => {
    const n = 50;
    const path = patternFrom(
      n,
      Array.from({ length: n - 1 }, (_, k) => [k, k + 1]),
    );
    expect(analyzeCholesky(path, { ordering: approximateMinimumDegree(path) }).nnzL).toBe(2 * n - 1);
    const star = patternFrom(
      n,
      Array.from({ length: n - 1 }, (_, k) => [0, k + 1]),
    );
    expect(analyzeCholesky(star, { ordering: approximateMinimumDegree(star) }).nnzL).toBe(2 * n - 1);
    // The centre first would fill the whole triangle.
    expect(analyzeCholesky(star, { ordering: 'natural' }).nnzL).toBe((n * (n + 1)) / 2);
  });

  it('cuts the fill of a 2-D Poisson matrix well below the band ordering (k = 40)', () => {
    const a = poisson2d(40);
    const amd = analyzeCholesky(a, { ordering: approximateMinimumDegree(a) }).nnzL;
    const natural = analyzeCholesky(a, { ordering: identityOrdering(a.rows) }).nnzL;
    // Band ordering: about n k; minimum degree on a grid: O(n log n) in practice.
    expect(natural).toBeGreaterThan(1600 * 40 * 0.95);
    expect(amd).toBeLessThan(0.5 * natural);
  });

  it('invertPermutation and identityOrdering', () => {
    expect(Array.from(invertPermutation(new Int32Array([2, 0, 1])))).toEqual([1, 2, 0]);
    expectPermutation(identityOrdering(5), 5);
    expectPermutation(approximateMinimumDegree(csrFromCoo(0, 0, [], [], [])), 0);
  });
});
