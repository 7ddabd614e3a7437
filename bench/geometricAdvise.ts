/**
 * The advice on an unstructured sparse matrix: the Laplacian of a random geometric graph (n points uniform in the unit
 * square, joined within the radius that gives ~8 neighbours) plus 0.1 I, its rows in the points' random order, on m
 * machines, no analysis given (the given partition's kappa(S) computed by the advice). What it shows: the multilevel
 * partitioner beside METIS (native, up to MULTILEVEL_BESIDE_METIS_MAX_ROWS rows) against METIS's partition, the
 * advice's seconds and each candidate's kappa(S) (bounds in brackets when bracketed). Run alone:
 *
 *   node --import tsx bench/geometricAdvise.ts [n = 30000] [m = 16] [seed = 1]
 */
import { adviseWork } from '../src/solvers/partitioning/advisor.js';
import { createProblem } from '../src/solvers/index.js';
import { csrFromCoo } from '../src/solvers/sparse/csr.js';
import { runSync } from '../src/solvers/cooperative.js';
import { SeededRandom } from '../src/solvers/random.js';
import { selectBackend } from './backends.js';
selectBackend('native');

const [n = 30000, m = 16, seed = 1] = process.argv.slice(2).map(Number);
const rng = new SeededRandom(seed);
const xs = Float64Array.from({ length: n }, () => rng.nextDouble());
const ys = Float64Array.from({ length: n }, () => rng.nextDouble());
// Points within r of each other are joined; cells of side >= r, so a point's neighbours are in its cell and the 8 around.
const r = Math.sqrt(8 / (Math.PI * n));
const cells = Math.floor(1 / r);
const cellOf = (coordinate: number): number => Math.min(cells - 1, Math.floor(coordinate * cells));
const grid = new Map<number, number[]>();
for (let i = 0; i < n; i++) {
  const k = cellOf(xs[i]) * cells + cellOf(ys[i]);
  (grid.get(k) ?? grid.set(k, []).get(k)!).push(i);
}
const rows: number[] = [];
const cols: number[] = [];
const vals: number[] = [];
const degree = new Float64Array(n);
for (let i = 0; i < n; i++) {
  const [cx, cy] = [cellOf(xs[i]), cellOf(ys[i])];
  for (let x = Math.max(0, cx - 1); x <= Math.min(cells - 1, cx + 1); x++)
    for (let y = Math.max(0, cy - 1); y <= Math.min(cells - 1, cy + 1); y++)
      for (const j of grid.get(x * cells + y) ?? []) {
        if (j === i || (xs[i] - xs[j]) ** 2 + (ys[i] - ys[j]) ** 2 >= r * r) continue;
        rows.push(i);
        cols.push(j);
        vals.push(-1);
        degree[i]++;
      }
}
for (let i = 0; i < n; i++) {
  rows.push(i);
  cols.push(i);
  vals.push(degree[i] + 0.1);
}
const A = csrFromCoo(n, n, Int32Array.from(rows), Int32Array.from(cols), Float64Array.from(vals));
const t = performance.now();
const advice = runSync(adviseWork(createProblem({ A, partition: { machines: m } })));
console.log(
  JSON.stringify({
    n,
    m,
    seed,
    nnz: vals.length,
    seconds: ((performance.now() - t) / 1e3).toFixed(2),
    best: advice.best,
    c: advice.candidates.map((c) => [
      c.strategy,
      c.kappaS?.toPrecision(4) ?? `[${c.kappaSBounds?.lower.toPrecision(4)}, ${c.kappaSBounds?.upper?.toPrecision(3) ?? '-'}]`,
    ]),
  }),
);
