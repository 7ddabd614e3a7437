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
const n = Number(process.argv[2] ?? 30000),
  m = Number(process.argv[3] ?? 16),
  seed = Number(process.argv[4] ?? 1);
const rng = new SeededRandom(seed);
const xs = Float64Array.from({ length: n }, () => rng.nextDouble()),
  ys = Float64Array.from({ length: n }, () => rng.nextDouble());
const r = Math.sqrt(8 / (Math.PI * n));
const cells = Math.floor(1 / r);
const grid = new Map<number, number[]>();
for (let i = 0; i < n; i++) {
  const k = Math.min(cells - 1, Math.floor(xs[i] * cells)) * cells + Math.min(cells - 1, Math.floor(ys[i] * cells));
  (grid.get(k) ?? grid.set(k, []).get(k)!).push(i);
}
const rows: number[] = [],
  cols: number[] = [],
  vals: number[] = [];
const deg = new Float64Array(n);
for (let i = 0; i < n; i++) {
  const cx = Math.min(cells - 1, Math.floor(xs[i] * cells)),
    cy = Math.min(cells - 1, Math.floor(ys[i] * cells));
  for (let dx = -1; dx <= 1; dx++)
    for (let dy = -1; dy <= 1; dy++)
      for (const j of grid.get((cx + dx) * cells + cy + dy) ?? []) {
        if (j === i || cx + dx < 0 || cy + dy < 0 || cx + dx >= cells || cy + dy >= cells) continue;
        const d2 = (xs[i] - xs[j]) ** 2 + (ys[i] - ys[j]) ** 2;
        if (d2 < r * r) {
          rows.push(i);
          cols.push(j);
          vals.push(-1);
          deg[i]++;
        }
      }
}
for (let i = 0; i < n; i++) {
  rows.push(i);
  cols.push(i);
  vals.push(deg[i] + 0.1);
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
      c.kappaS?.toPrecision(4) ?? `[${c.kappaSBounds?.lower.toPrecision(4)}, ${c.kappaSBounds?.upper.toPrecision(3)}]`,
    ]),
  }),
);
