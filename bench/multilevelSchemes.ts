/**
 * The multilevel partitioner's two schemes side by side (src/solvers/partitioning/multilevel.ts): the least edge cut of
 * RUNS runs of recursive bisection against that of RUNS k-way runs, from one random stream as multilevelPartition
 * draws them, each with its seconds, on the row graphs of Poisson and convection-diffusion grids and of
 * ../shared/matrices (graphs too dense for k-way refinement are skipped). What KWAY_ONLY_VERTICES is set from. Run alone:
 *
 *   node --import tsx bench/multilevelSchemes.ts [--grids 100:16,150:16,200:20,150:50,200:100] [--matrices /work/shared/matrices]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseMatrixMarket } from '../src/solvers/input/matrixMarket.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import type { CsrMatrix, DenseMatrix } from '../src/solvers/matrix.js';
import {
  edgeCut,
  kwayRefinable,
  machineSizeBounds,
  multilevelKway,
  recursiveBisection,
  RUNS,
} from '../src/solvers/partitioning/multilevel.js';
import { rowGraph } from '../src/solvers/partitioning/rowGraph.js';
import { SeededRandom } from '../src/solvers/random.js';
import { convectionDiffusion2d, poisson2d } from '../src/solvers/sparse/generators.js';

const { values } = parseArgs({
  options: {
    grids: { type: 'string', default: '100:16,150:16,200:20,150:50,200:100' },
    matrices: { type: 'string', default: join(import.meta.dirname, '../../shared/matrices') },
  },
});

const cases: { name: string; A: DenseMatrix | CsrMatrix; parts: number[] }[] = [];
for (const grid of values.grids.split(',')) {
  const [side, m] = grid.split(':').map(Number);
  cases.push({ name: `poisson ${side} x ${side}`, A: poisson2d(side), parts: [m] });
}
cases.push({ name: 'convection-diffusion 150 x 150', A: convectionDiffusion2d(150, 10), parts: [4, 8, 16] });
for (const file of readdirSync(values.matrices)
  .filter((f) => f.endsWith('.mtx'))
  .sort()) {
  try {
    cases.push({ name: file, A: parseMatrixMarket(readFileSync(join(values.matrices, file), 'utf8')), parts: [4, 8, 16] });
  } catch (error) {
    console.log(`${file}: skipped (${(error as Error).message})`);
  }
}

const best = (cuts: number[]): string => (Math.min(...cuts) === Infinity ? 'none within the balance' : Math.min(...cuts).toPrecision(4));
for (const { name, A, parts } of cases) {
  const g = rowGraph(selectedKernels(), A);
  if (!kwayRefinable(g)) {
    console.log(`${name}: row graph too dense for k-way refinement, skipped`);
    continue;
  }
  for (const m of parts) {
    if (g.n < 4 * m) continue;
    const { lo, hi } = machineSizeBounds(g.n, m, 0.1);
    const random = new SeededRandom(1);
    let t0 = performance.now();
    const bisection: number[] = [];
    for (let run = 0; run < RUNS; run++) bisection.push(edgeCut(g, recursiveBisection(g, m, lo, hi, random)));
    const bisectionSeconds = (performance.now() - t0) / 1e3;
    t0 = performance.now();
    const kway: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const assignment = multilevelKway(g, m, lo, hi, random);
      kway.push(assignment === null ? Infinity : edgeCut(g, assignment));
    }
    const kwaySeconds = (performance.now() - t0) / 1e3;
    const winner = Math.min(...bisection) < Math.min(...kway) ? 'recursive bisection' : 'k-way';
    console.log(
      `${name} (${g.n} rows) in ${m}: recursive bisection ${best(bisection)} in ${bisectionSeconds.toFixed(2)} s, ` +
        `k-way ${best(kway)} in ${kwaySeconds.toFixed(2)} s; least cut: ${winner}`,
    );
  }
}
