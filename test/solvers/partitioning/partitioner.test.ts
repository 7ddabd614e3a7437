/**
 * The row graph, reverse Cuthill-McKee and the multilevel partitioner (src/solvers/partitioning):
 * balance within the imbalance, disconnected components recovered whole, a large grid cut near its boxes' cut, and
 * the k-way refinement (never a larger cut; a part outside the balance evened out).
 */
import { describe, expect, it } from 'vitest';
import { fromRows } from '../../../src/solvers/matrix.js';
import {
  balanceParts,
  coarsen,
  edgeCut,
  kwayRefinable,
  machineSizeBounds,
  multilevelPartition,
  refineKway,
} from '../../../src/solvers/partitioning/multilevel.js';
import { contiguousInOrder, reverseCuthillMcKee } from '../../../src/solvers/partitioning/orderings.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { DENSE_ROW_NEIGHBOURS, rowGraph, rowGraphAndGram } from '../../../src/solvers/partitioning/rowGraph.js';
import { generateMatrix } from '../../../src/solvers/input/generators.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { shuffleCsr, shuffledBlockDiagonal } from './cases.js';

const sizesOf = (assignment: Int32Array, m: number): number[] => {
  const sizes = new Array<number>(m).fill(0);
  for (const machine of assignment) sizes[machine]++;
  return sizes;
};

describe('row graph', () => {
  it('joins rows sharing a column with |a_i . a_j| / (|a_i| |a_j|), dense and CSR alike', () => {
    const a = fromRows([
      [3, 4, 0],
      [0, 1, 0],
      [0, 0, 2],
    ]);
    const g = rowGraph(selectedKernels(), a);
    expect(Array.from(g.idx.subarray(g.ptr[0], g.ptr[1]))).toEqual([1]);
    expect(g.weight[g.ptr[0]]).toBeCloseTo(4 / 5, 15);
    expect(g.ptr[3] - g.ptr[2]).toBe(0);
    const sparse = rowGraph(selectedKernels(), poisson2d(5));
    const dense = rowGraph(selectedKernels(), {
      rows: 25,
      cols: 25,
      data: (() => {
        const p = poisson2d(5);
        const data = new Float64Array(625);
        for (let i = 0; i < 25; i++) for (let q = p.rowPtr[i]; q < p.rowPtr[i + 1]; q++) data[i * 25 + p.colIdx[q]] = p.values[q];
        return data;
      })(),
    });
    expect(Array.from(dense.ptr)).toEqual(Array.from(sparse.ptr));
    expect(Array.from(dense.idx)).toEqual(Array.from(sparse.idx));
    for (let q = 0; q < sparse.weight.length; q++) expect(dense.weight[q]).toBeCloseTo(sparse.weight[q], 14);
  });

  it("keeps each dense row's DENSE_ROW_NEIGHBOURS heaviest couplings, symmetrized, with their cosines", () => {
    // Every two rows of a dense Gaussian matrix share a column: the full row graph is complete.
    const n = 150;
    const a = generateMatrix({ generator: 'gaussian', n, mean: 0, std: 1, seed: 4 });
    const g = rowGraph(selectedKernels(), a);
    const cosine = (i: number, j: number): number => {
      let ij = 0;
      let ii = 0;
      let jj = 0;
      for (let t = 0; t < n; t++) {
        ij += a.data[i * n + t] * a.data[j * n + t];
        ii += a.data[i * n + t] ** 2;
        jj += a.data[j * n + t] ** 2;
      }
      return Math.abs(ij) / Math.sqrt(ii * jj);
    };
    // Row i's heaviest DENSE_ROW_NEIGHBOURS others, by the reference cosines (ties to the lower index).
    const heaviest = (i: number): Set<number> =>
      new Set(
        Array.from({ length: n }, (_, j) => j)
          .filter((j) => j !== i)
          .sort((x, y) => cosine(i, y) - cosine(i, x) || x - y)
          .slice(0, DENSE_ROW_NEIGHBOURS),
      );
    const kept = Array.from({ length: n }, (_, i) => heaviest(i));
    for (let i = 0; i < n; i++) {
      const neighbours = Array.from(g.idx.subarray(g.ptr[i], g.ptr[i + 1]));
      // Ascending, no repeats, no self-loop; exactly the union of i's choices and the rows that chose i.
      expect(neighbours).toEqual([...neighbours].sort((x, y) => x - y));
      const expected = Array.from({ length: n }, (_, j) => j).filter((j) => kept[i].has(j) || kept[j].has(i));
      expect(neighbours).toEqual(expected);
      for (let q = g.ptr[i]; q < g.ptr[i + 1]; q++) {
        const j = g.idx[q];
        expect(g.weight[q]).toBeCloseTo(cosine(i, j), 13);
        // The same weight stored both ways.
        const back = Array.from(g.idx.subarray(g.ptr[j], g.ptr[j + 1])).indexOf(i);
        expect(g.weight[g.ptr[j] + back]).toBe(g.weight[q]);
      }
    }
    expect(g.ptr[n]).toBeLessThan(n * (n - 1));
  });
});

describe('reverse Cuthill-McKee', () => {
  it('gives a shuffled Poisson matrix back a bandwidth of the order of k', () => {
    const k = 20;
    const random = new SeededRandom(3);
    const shuffled = shuffleCsr(poisson2d(k), random.permutation(k * k), random.permutation(k * k));
    const g = rowGraph(selectedKernels(), shuffled);
    const order = reverseCuthillMcKee(g);
    expect(Array.from(order).sort((x, y) => x - y)).toEqual(Array.from({ length: k * k }, (_, i) => i));
    const position = new Int32Array(k * k);
    order.forEach((row, p) => (position[row] = p));
    let bandwidth = 0;
    for (let v = 0; v < g.n; v++)
      for (let q = g.ptr[v]; q < g.ptr[v + 1]; q++) bandwidth = Math.max(bandwidth, Math.abs(position[v] - position[g.idx[q]]));
    // Rows of the row graph (A A^T: neighbours up to distance 2 on the grid) span about 2k levels.
    expect(bandwidth).toBeLessThanOrEqual(4 * k);
    expect(sizesOf(contiguousInOrder(order, 7), 7)).toEqual([58, 57, 57, 57, 57, 57, 57]);
  });
});

describe('multilevel partitioner', () => {
  it('keeps every part within (1 +/- imbalance) n/m', () => {
    const g = rowGraph(selectedKernels(), poisson2d(30));
    for (const [m, imbalance] of [
      [8, 0.1],
      [5, 0.02],
      [13, 0.3],
      [3, 0],
    ] as const) {
      const { lo, hi } = machineSizeBounds(g.n, m, imbalance);
      const sizes = sizesOf(multilevelPartition(g, m, { imbalance }), m);
      expect(sizes.reduce((s, x) => s + x, 0)).toBe(900);
      for (const size of sizes) {
        expect(size).toBeGreaterThanOrEqual(lo);
        expect(size).toBeLessThanOrEqual(hi);
      }
    }
    expect(machineSizeBounds(900, 8, 0.1)).toEqual({ lo: 102, hi: 123 });
    expect(machineSizeBounds(10, 3, 0)).toEqual({ lo: 3, hi: 4 });
  });

  it('partitions a grid above 100,000 rows within the balance, cutting at most 1.2x what its square boxes cut', () => {
    // 320 x 320 grid, 16 parts: the 4 x 4 boxes of 80 x 80 grid points are the natural partition.
    const k = 320;
    const g = rowGraph(selectedKernels(), poisson2d(k));
    const boxes = new Int32Array(g.n);
    for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) boxes[i * k + j] = 4 * Math.floor(i / 80) + Math.floor(j / 80);
    for (const imbalance of [0.1, 0]) {
      const assignment = multilevelPartition(g, 16, { imbalance });
      const { lo, hi } = machineSizeBounds(g.n, 16, imbalance);
      for (const size of sizesOf(assignment, 16)) {
        expect(size).toBeGreaterThanOrEqual(lo);
        expect(size).toBeLessThanOrEqual(hi);
      }
      // Imbalance 0 leaves no slack to coarsen or refine with: the graph is bisected recursively, as below 100,000
      // rows, and only the balance is asked of it.
      if (imbalance > 0) expect(edgeCut(g, assignment)).toBeLessThanOrEqual(1.2 * edgeCut(g, boxes));
    }
  });

  it('refines k ways without raising the cut, and evens out parts outside the balance', () => {
    const g = rowGraph(selectedKernels(), poisson2d(30));
    const m = 6;
    const { lo, hi } = machineSizeBounds(g.n, m, 0.1);
    // Balanced at random: refinement lowers the cut and keeps every part within [lo, hi].
    const random = new SeededRandom(3);
    const shuffled = new Int32Array(g.n);
    random.permutation(g.n).forEach((v, k) => (shuffled[v] = k % m));
    const before = edgeCut(g, shuffled);
    refineKway(g, shuffled, m, lo, hi);
    expect(edgeCut(g, shuffled)).toBeLessThan(before);
    for (const size of sizesOf(shuffled, m)) {
      expect(size).toBeGreaterThanOrEqual(lo);
      expect(size).toBeLessThanOrEqual(hi);
    }
    // Strips of 150 rows with 40 rows of strip 0 given to strip 1: 110 < lo and 190 > hi, then within both.
    const strips = new Int32Array(g.n);
    for (let v = 0; v < g.n; v++) strips[v] = Math.floor(v / 150);
    for (let v = 110; v < 150; v++) strips[v] = 1;
    expect(sizesOf(strips, m).slice(0, 2)).toEqual([110, 190]);
    refineKway(g, strips, m, lo, hi);
    for (const size of sizesOf(strips, m)) {
      expect(size).toBeGreaterThanOrEqual(lo);
      expect(size).toBeLessThanOrEqual(hi);
    }
  });

  it('balanceParts evens out parts outside the balance with the moves of least cut, and moves nothing else', () => {
    const n = 200;
    const data = new SeededRandom(5).fillNormal(new Float64Array(n * n));
    const g = rowGraph(selectedKernels(), { rows: n, cols: n, data });
    const m = 4;
    const { lo, hi } = machineSizeBounds(n, m, 0.1);
    expect([lo, hi]).toEqual([45, 55]);
    // Parts of 40, 60, 50, 50: 5 rows must leave part 1 and 5 reach part 0.
    const start = new Int32Array(n);
    for (let v = 0; v < n; v++) start[v] = v < 40 ? 0 : v < 100 ? 1 : v < 150 ? 2 : 3;
    const part = Int32Array.from(start);
    balanceParts(g, part, m, lo, hi);
    expect(sizesOf(part, m)).toEqual([45, 55, 50, 50]);
    const moved = [...part.keys()].filter((v) => part[v] !== start[v]);
    expect(moved.length).toBe(5);
    // Each move was the best single one at its turn: moved back, none lowers the cut.
    for (const v of moved) {
      expect(start[v]).toBe(1);
      expect(part[v]).toBe(0);
    }
    const cut = edgeCut(g, part);
    for (let v = 40; v < 100; v++) {
      if (part[v] !== 1) continue;
      // Any other row of part 1 in place of a moved one cuts at least as much.
      const swapped = Int32Array.from(part);
      swapped[v] = 0;
      swapped[moved[moved.length - 1]] = 1;
      expect(edgeCut(g, swapped)).toBeGreaterThanOrEqual(cut - 1e-12);
    }
    // Within the balance already: nothing moves.
    const balanced = Int32Array.from(part);
    balanceParts(g, balanced, m, lo, hi);
    expect(balanced).toEqual(part);
    // A part above hi alone (50, 60, 45, 45) gives its rows to the parts with room.
    const heavy = new Int32Array(n);
    for (let v = 0; v < n; v++) heavy[v] = v < 50 ? 0 : v < 110 ? 1 : v < 155 ? 2 : 3;
    balanceParts(g, heavy, m, lo, hi);
    const sizes = sizesOf(heavy, m);
    expect(sizes[1]).toBe(55);
    for (const size of sizes) expect(size >= lo && size <= hi).toBe(true);
  });

  it("leaves a dense matrix's row graph to recursive bisection alone, within the balance", () => {
    // Every pair of a dense matrix's rows shares a column; each row keeps its DENSE_ROW_NEIGHBOURS heaviest couplings,
    // the graph symmetrized: an average degree above the k-way passes' limit.
    const n = 200;
    const data = new SeededRandom(5).fillNormal(new Float64Array(n * n));
    const g = rowGraph(selectedKernels(), { rows: n, cols: n, data });
    expect(g.ptr[g.n]).toBeGreaterThan(DENSE_ROW_NEIGHBOURS * n);
    expect(g.ptr[g.n]).toBeLessThan(n * (n - 1));
    expect(kwayRefinable(g)).toBe(false);
    expect(kwayRefinable(rowGraph(selectedKernels(), poisson2d(30)))).toBe(true);
    const { lo, hi } = machineSizeBounds(n, 7, 0.1);
    for (const size of sizesOf(multilevelPartition(g, 7), 7)) {
      expect(size).toBeGreaterThanOrEqual(lo);
      expect(size).toBeLessThanOrEqual(hi);
    }
  });

  it("keeps a dense matrix's row Gram matrix beside the same row graph: rowNorms and the normalized products, symmetric", () => {
    const n = 90;
    const cols = 70;
    const data = new SeededRandom(6).fillNormal(new Float64Array(n * cols));
    for (let k = 0; k < data.length; k++) data[k] += 0.5;
    const a = { rows: n, cols, data };
    const { graph, gram } = rowGraphAndGram(selectedKernels(), a);
    expect(graph).toEqual(rowGraph(selectedKernels(), a));
    for (let i = 0; i < n; i++) {
      const row = (k: number): Float64Array => data.subarray(k * cols, (k + 1) * cols);
      const norm = Math.sqrt(row(i).reduce((s, v) => s + v * v, 0));
      expect(Math.abs(gram.rowNorms[i] - norm)).toBeLessThan(1e-14 * norm);
      for (let j = 0; j < n; j++) {
        const product = row(i).reduce((s, v, t) => s + v * row(j)[t], 0);
        expect(Math.abs(gram.rowNorms[i] * gram.normalized[i * n + j] * gram.rowNorms[j] - product)).toBeLessThan(1e-12 * norm * norm);
        expect(gram.normalized[i * n + j]).toBe(gram.normalized[j * n + i]);
      }
    }
  });

  it('recovers disconnected components whole (a shuffled block-diagonal matrix: no edge cut)', () => {
    const { A } = shuffledBlockDiagonal(12, 100);
    const g = rowGraph(selectedKernels(), A);
    const assignment = multilevelPartition(g, 12);
    let cut = 0;
    for (let v = 0; v < g.n; v++) for (let q = g.ptr[v]; q < g.ptr[v + 1]; q++) if (assignment[v] !== assignment[g.idx[q]]) cut++;
    expect(cut).toBe(0);
    expect(sizesOf(assignment, 12)).toEqual(new Array(12).fill(100));
  });

  it("coarsens by matching neighbours: each coarse vertex one vertex or two joined by an edge, its edges the sums of its members' (no loops)", () => {
    // The row graph of a shuffled grid: rows far apart in memory, and a weight cap that leaves some vertices unmatched.
    const g = rowGraph(
      selectedKernels(),
      shuffleCsr(poisson2d(24), new SeededRandom(5).permutation(576), new SeededRandom(6).permutation(576)),
    );
    for (const cap of [2, 3]) {
      const { coarse, map } = coarsen(
        { ...g, vertexWeight: g.vertexWeight.map((w, v) => (v % 7 === 0 ? 2 : w)) },
        cap,
        new SeededRandom(3),
      );
      const members: number[][] = Array.from({ length: coarse.n }, () => []);
      for (let v = 0; v < g.n; v++) members[map[v]].push(v);
      const fineEdges = new Map<number, number>();
      for (let v = 0; v < g.n; v++) for (let q = g.ptr[v]; q < g.ptr[v + 1]; q++) fineEdges.set(v * g.n + g.idx[q], g.weight[q]);
      let pairs = 0;
      for (let c = 0; c < coarse.n; c++) {
        const [v, w] = members[c];
        expect(members[c].length === 1 || members[c].length === 2).toBe(true);
        const weightOf = (u: number): number => (u % 7 === 0 ? 2 : g.vertexWeight[u]);
        expect(coarse.vertexWeight[c]).toBe(members[c].reduce((sum, u) => sum + weightOf(u), 0));
        expect(coarse.vertexWeight[c]).toBeLessThanOrEqual(Math.max(cap, weightOf(v)));
        if (w !== undefined) {
          pairs++;
          expect(fineEdges.has(v * g.n + w)).toBe(true);
        }
      }
      expect(pairs).toBeGreaterThan(g.n / 4);
      // Each coarse edge (c, d), once in c's list, weighs the sum of the fine edges between c's members and d's.
      const sums = new Map<number, number>();
      for (const [key, weight] of fineEdges) {
        const c = map[Math.floor(key / g.n)];
        const d = map[key % g.n];
        if (c !== d) sums.set(c * coarse.n + d, (sums.get(c * coarse.n + d) ?? 0) + weight);
      }
      let edges = 0;
      for (let c = 0; c < coarse.n; c++) {
        const seen = new Set<number>();
        for (let q = coarse.ptr[c]; q < coarse.ptr[c + 1]; q++) {
          const d = coarse.idx[q];
          expect(d).not.toBe(c);
          expect(seen.has(d)).toBe(false);
          seen.add(d);
          expect(coarse.weight[q]).toBeCloseTo(sums.get(c * coarse.n + d) ?? NaN, 12);
          edges++;
        }
      }
      expect(edges).toBe(sums.size);
      expect(coarse.idx.length).toBe(edges);
      expect(coarse.weight.length).toBe(edges);
    }
  });
});
