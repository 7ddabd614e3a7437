/**
 * The multilevel partitioner's runs (src/solvers/partitioning/multilevel.ts), RUNS runs of recursive bisection then
 * RUNS k-way runs from one random stream (as multilevelPartition drew them below KWAY_ONLY_VERTICES; a row graph too
 * dense for k-way passes gets the bisections alone), on the row graphs of Poisson grids (`--grids side:m`), of a
 * convection-diffusion grid, of dense Gaussian matrices (`--dense n:m`, entries N(1, 1) as the paper's) and of the
 * Matrix Market files in `--matrices`. What KWAY_ONLY_VERTICES and DENSE_ONE_RUN_VERTICES are set from. Run alone:
 *
 *   node --import tsx bench/multilevelSchemes.ts <typescript|native> [--grids 100:16,150:16,200:20,150:50,200:100] [--dense ''] [--seeds 1]
 *       each scheme's least edge cut of its runs, with its seconds;
 *   node --import tsx bench/multilevelSchemes.ts <typescript|native> --kappa [--grids 150:16,200:20] [--dense 1000:10,2000:50] [--matrices ''] [--seeds 1,2]
 *       every run's edge cut and the kappa(S) an analysis gives its partition (what the advisor ranks candidates by;
 *       the runs are ranked by edge cut).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { partitionKappaSWork } from '../src/solvers/analysis/analyze.js';
import { sparseLuContextWork } from '../src/solvers/analysis/sparseAnalysis.js';
import { runSync } from '../src/solvers/cooperative.js';
import { buildDistributedSystem, createProblem, generateMatrix } from '../src/solvers/index.js';
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
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { SeededRandom } from '../src/solvers/random.js';
import { convectionDiffusion2d, poisson2d } from '../src/solvers/sparse/generators.js';
import { selectBackend } from './backends.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    kappa: { type: 'boolean', default: false },
    grids: { type: 'string' },
    dense: { type: 'string' },
    matrices: { type: 'string' },
    seeds: { type: 'string' },
  },
});
const backend = positionals[0];
if (backend !== 'typescript' && backend !== 'native')
  throw new Error(
    'usage: multilevelSchemes.ts <typescript|native> [--kappa] [--grids K:M,...] [--dense N:M,...] [--matrices DIR] [--seeds S,...]',
  );
selectBackend(backend);
const kernels = selectedKernels();
const withKappa = values.kappa;
const grids = values.grids ?? (withKappa ? '150:16,200:20' : '100:16,150:16,200:20,150:50,200:100');
const dense = values.dense ?? (withKappa ? '1000:10,2000:50' : '');
const matrices = values.matrices ?? (withKappa ? '' : join(import.meta.dirname, '../../shared/matrices'));
const seeds = (values.seeds ?? (withKappa ? '1,2' : '1')).split(',').map(Number);

const pairs = (list: string): number[][] => (list === '' ? [] : list.split(',').map((pair) => pair.split(':').map(Number)));
const cases: { name: string; A: DenseMatrix | CsrMatrix; parts: number[] }[] = [
  ...pairs(grids).map(([side, m]) => ({ name: `poisson ${side} x ${side}`, A: poisson2d(side), parts: [m] })),
  ...(withKappa ? [] : [{ name: 'convection-diffusion 150 x 150', A: convectionDiffusion2d(150, 10), parts: [4, 8, 16] }]),
  ...pairs(dense).map(([n, m]) => ({
    name: `gaussian ${n} x ${n}`,
    A: generateMatrix({ generator: 'gaussian', n, mean: 1, std: 1, seed: 1 }),
    parts: [m],
  })),
];
for (const file of matrices === ''
  ? []
  : readdirSync(matrices)
      .filter((f) => f.endsWith('.mtx'))
      .sort()) {
  try {
    cases.push({ name: file, A: parseMatrixMarket(readFileSync(join(matrices, file), 'utf8')), parts: [4, 8, 16] });
  } catch (error) {
    console.log(`${file}: skipped (${(error as Error).message})`);
  }
}

/** One stream's runs: RUNS of recursive bisection, then (where the graph allows k-way passes) RUNS k-way, timed by scheme. */
function runsOf(g: ReturnType<typeof rowGraph>, m: number, seed: number) {
  const { lo, hi } = machineSizeBounds(g.n, m, 0.1);
  const random = new SeededRandom(seed);
  const schemes: { scheme: string; assignments: (Int32Array | null)[]; seconds: number }[] = [];
  let t0 = performance.now();
  const bisections = Array.from({ length: RUNS }, () => recursiveBisection(g, m, lo, hi, random));
  schemes.push({ scheme: 'recursive bisection', assignments: bisections, seconds: (performance.now() - t0) / 1e3 });
  if (kwayRefinable(g)) {
    t0 = performance.now();
    const kway = Array.from({ length: RUNS }, () => multilevelKway(g, m, lo, hi, random));
    schemes.push({ scheme: 'k-way', assignments: kway, seconds: (performance.now() - t0) / 1e3 });
  }
  return schemes;
}

for (const { name, A, parts } of cases) {
  const g = rowGraph(kernels, A);
  if (!withKappa && !kwayRefinable(g)) {
    console.log(`${name}: row graph too dense for k-way passes, skipped`);
    continue;
  }
  const lu = withKappa && 'rowPtr' in A ? runSync(sparseLuContextWork(A)) : undefined;
  for (const m of parts) {
    if (g.n < 4 * m) continue;
    const kappaS = (assignment: Int32Array): number =>
      runSync(
        partitionKappaSWork(kernels, buildDistributedSystem(createProblem({ A, partition: partitionFromAssignment(assignment, m) })), {
          lu,
        }),
      );
    for (const seed of seeds) {
      const schemes = runsOf(g, m, seed);
      if (withKappa) {
        for (const { scheme, assignments } of schemes)
          for (const assignment of assignments)
            if (assignment !== null)
              console.log(
                `${name} in ${m}, seed ${seed}, ${scheme}: edge cut ${edgeCut(g, assignment).toFixed(2)}, kappa(S) ${kappaS(assignment).toPrecision(4)}`,
              );
        continue;
      }
      const least = schemes.map(({ assignments }) => Math.min(...assignments.map((a) => (a === null ? Infinity : edgeCut(g, a)))));
      const text = schemes.map(
        ({ scheme, seconds }, k) =>
          `${scheme} ${least[k] === Infinity ? 'none within the balance' : least[k].toPrecision(4)} in ${seconds.toFixed(2)} s`,
      );
      const winner = least[0] < least[1] ? 'recursive bisection' : 'k-way';
      console.log(`${name} (${g.n} rows) in ${m}, seed ${seed}: ${text.join(', ')}; least cut: ${winner}`);
    }
  }
}
