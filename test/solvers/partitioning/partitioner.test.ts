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
  DEFAULT_IMBALANCE,
  DENSE_ONE_RUN_VERTICES,
  machineSizeBounds,
  multilevelKway,
  multilevelPartition,
  KWAY_ONLY_VERTICES,
  ONE_RUN_VERTICES,
  RUNS,
  recursiveBisection,
  refineKway,
} from '../../../src/solvers/partitioning/multilevel.js';
import { contiguousInOrder, reverseCuthillMcKee } from '../../../src/solvers/partitioning/orderings.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { ROW_GRAPH_PRODUCTS_PER_ENTRY, ROW_NEIGHBOURS, rowGraph, rowGraphAndGram } from '../../../src/solvers/partitioning/rowGraph.js';
import { generateMatrix } from '../../../src/solvers/input/generators.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { csrFromDense } from '../../../src/solvers/sparse/csr.js';
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

  it('leaves out of a CSR row graph the columns shared by so many rows that their products exceed the budget (an intercept)', () => {
    // 600 rows in 30 blocks of 20, each block on its own 2 columns, plus an intercept column shared by every row:
    // 600^2 products against 64 per entry (600 x 3 entries), so the intercept joins nothing; the blocks' columns do.
    const rows = 600;
    const rng = new SeededRandom(3);
    const data = new Float64Array(rows * 61);
    for (let r = 0; r < rows; r++) {
      const block = Math.floor(r / 20);
      data[r * 61 + 2 * block] = 1 + rng.nextDouble();
      data[r * 61 + 2 * block + 1] = rng.nextDouble() - 0.5;
      data[r * 61 + 60] = 1;
    }
    const a = csrFromDense({ rows, cols: 61, data });
    expect(rows * rows).toBeGreaterThan(ROW_GRAPH_PRODUCTS_PER_ENTRY * a.rowPtr[rows]);
    const g = rowGraph(selectedKernels(), a);
    for (let r = 0; r < rows; r++) {
      const block = Math.floor(r / 20);
      const neighbours = Array.from(g.idx.subarray(g.ptr[r], g.ptr[r + 1]));
      expect(neighbours).toEqual(Array.from({ length: 20 }, (_, k) => 20 * block + k).filter((j) => j !== r));
      // The weights are the block columns' products over the whole rows' norms (the intercept's 1 included).
      for (let q = g.ptr[r]; q < g.ptr[r + 1]; q++) {
        const j = g.idx[q];
        const [x, y] = [r * 61 + 2 * block, j * 61 + 2 * block];
        const dot = data[x] * data[y] + data[x + 1] * data[y + 1];
        const norm = (z: number) => Math.hypot(data[z], data[z + 1], 1);
        expect(g.weight[q]).toBeCloseTo(Math.abs(dot) / (norm(x) * norm(y)), 14);
      }
    }
    // Without the intercept's budget trouble (the same blocks alone) the graph is the same.
    const alone = csrFromDense({
      rows,
      cols: 60,
      data: Float64Array.from({ length: rows * 60 }, (_, k) => data[Math.floor(k / 60) * 61 + (k % 60)]),
    });
    const g0 = rowGraph(selectedKernels(), alone);
    expect(Array.from(g0.ptr)).toEqual(Array.from(g.ptr));
    expect(Array.from(g0.idx)).toEqual(Array.from(g.idx));
  });

  for (const storage of ['dense', 'CSR'] as const) {
    it(`keeps each row's ROW_NEIGHBOURS heaviest couplings, symmetrized, with their cosines (${storage})`, () => {
      // Every two rows of a dense Gaussian matrix share a column: the full row graph is complete. As CSR, a 600 x 120
      // matrix with 6 nonzeros a row (each column shared by ~30 rows, within the products' budget): ~180 neighbours a
      // row, capped alike (a tall regression's rows share their columns with thousands of others).
      const rng = new SeededRandom(4);
      const a =
        storage === 'dense'
          ? generateMatrix({ generator: 'gaussian', n: 150, mean: 0, std: 1, seed: 4 })
          : (() => {
              const data = new Float64Array(600 * 120);
              for (let r = 0; r < 600; r++)
                for (let t = 0; t < 6; t++) data[r * 120 + Math.floor(rng.nextDouble() * 120)] = rng.nextDouble() - 0.5;
              return { rows: 600, cols: 120, data };
            })();
      const n = a.rows;
      const cols = a.cols;
      const csr = csrFromDense(a);
      if (storage === 'CSR') {
        let products = 0;
        const counts = new Array<number>(cols).fill(0);
        for (let p = 0; p < csr.rowPtr[n]; p++) counts[csr.colIdx[p]]++;
        for (const c of counts) products += c * c;
        expect(products).toBeLessThanOrEqual(ROW_GRAPH_PRODUCTS_PER_ENTRY * csr.rowPtr[n]);
      }
      const g = rowGraph(selectedKernels(), storage === 'dense' ? a : csr);
      const cosines = new Float64Array(n * n);
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n; j++) {
          let ij = 0;
          let ii = 0;
          let jj = 0;
          for (let t = 0; t < cols; t++) {
            ij += a.data[i * cols + t] * a.data[j * cols + t];
            ii += a.data[i * cols + t] ** 2;
            jj += a.data[j * cols + t] ** 2;
          }
          cosines[i * n + j] = Math.abs(ij) / Math.sqrt(ii * jj);
        }
      const cosine = (i: number, j: number): number => cosines[i * n + j];
      // Row i's heaviest ROW_NEIGHBOURS others, by the reference cosines (ties to the lower index).
      const heaviest = (i: number): Set<number> =>
        new Set(
          Array.from({ length: n }, (_, j) => j)
            .filter((j) => j !== i && cosine(i, j) > 0)
            .sort((x, y) => cosine(i, y) - cosine(i, x) || x - y)
            .slice(0, ROW_NEIGHBOURS),
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
  }
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

  it('makes k-way runs only above KWAY_ONLY_VERTICES rows (recursive bisection cut more there), the least cut kept', () => {
    const g = rowGraph(selectedKernels(), poisson2d(Math.ceil(Math.sqrt(KWAY_ONLY_VERTICES + 1))));
    const { lo, hi } = machineSizeBounds(g.n, 16, DEFAULT_IMBALANCE);
    const random = new SeededRandom(3);
    const runs = Array.from({ length: RUNS }, () => multilevelKway(g, 16, lo, hi, random)!);
    const cuts = runs.map((assignment) => edgeCut(g, assignment));
    expect(multilevelPartition(g, 16, { seed: 3 })).toEqual(runs[cuts.indexOf(Math.min(...cuts))]);
  });

  it("makes one run of recursive bisection on a dense matrix's row graph from DENSE_ONE_RUN_VERTICES rows (the runs' cuts say nothing of kappa(S) there)", () => {
    const A = generateMatrix({ generator: 'gaussian', n: DENSE_ONE_RUN_VERTICES, mean: 1, std: 1, seed: 1 });
    const g = rowGraph(selectedKernels(), A);
    expect(kwayRefinable(g)).toBe(false);
    const { lo, hi } = machineSizeBounds(g.n, 10, DEFAULT_IMBALANCE);
    expect(multilevelPartition(g, 10, { seed: 1 })).toEqual(recursiveBisection(g, 10, lo, hi, new SeededRandom(1)));
  });

  it('makes one k-way run above ONE_RUN_VERTICES rows (the runs below cost ~10x it for a like cut)', () => {
    const g = rowGraph(selectedKernels(), poisson2d(Math.ceil(Math.sqrt(ONE_RUN_VERTICES + 1))));
    const { lo, hi } = machineSizeBounds(g.n, 16, DEFAULT_IMBALANCE);
    expect(multilevelPartition(g, 16, { seed: 3 })).toEqual(multilevelKway(g, 16, lo, hi, new SeededRandom(3)));
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
      // Imbalance 0 leaves no slack to coarsen or refine with: the graph is bisected recursively, as below
      // ONE_RUN_VERTICES rows, and only the balance is asked of it.
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

  it('balanceParts moves the rows without couplings first, cutting nothing (a tall regression whose dense columns are left out)', () => {
    // 400 rows: 0..99 coupled in pairs (2k, 2k + 1 share a column), 100..399 alone in their columns except one dense
    // column, which the row graph leaves out. Parts of 60, 40, 250, 50 (bounds [90, 110]).
    const rows = 400;
    const data = new Float64Array(rows * 502);
    for (let r = 0; r < rows; r++) {
      data[r * 502 + (r < 100 ? Math.floor(r / 2) : r + 100)] = 1 + r / rows;
      data[r * 502 + 501] = 1;
    }
    const g = rowGraph(selectedKernels(), csrFromDense({ rows, cols: 502, data }));
    for (let r = 100; r < rows; r++) expect(g.ptr[r + 1] - g.ptr[r]).toBe(0);
    const m = 4;
    const { lo, hi } = machineSizeBounds(rows, m, 0.1);
    const start = new Int32Array(rows);
    for (let v = 0; v < rows; v++) start[v] = v < 60 ? 0 : v < 100 ? 1 : v < 350 ? 2 : 3;
    const part = Int32Array.from(start);
    const cut = edgeCut(g, part);
    balanceParts(g, part, m, lo, hi);
    for (const size of sizesOf(part, m)) expect(size >= lo && size <= hi).toBe(true);
    // Only rows without couplings moved: the cut is what it was.
    for (let v = 0; v < rows; v++) if (part[v] !== start[v]) expect(v).toBeGreaterThanOrEqual(100);
    expect(edgeCut(g, part)).toBe(cut);
  });

  it("leaves a dense matrix's row graph to recursive bisection alone, within the balance", () => {
    // Every pair of a dense matrix's rows shares a column; each row keeps its ROW_NEIGHBOURS heaviest couplings,
    // the graph symmetrized: an average degree above the k-way passes' limit.
    const n = 200;
    const data = new SeededRandom(5).fillNormal(new Float64Array(n * n));
    const g = rowGraph(selectedKernels(), { rows: n, cols: n, data });
    expect(g.ptr[g.n]).toBeGreaterThan(ROW_NEIGHBOURS * n);
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
