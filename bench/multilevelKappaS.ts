/**
 * Edge cut against kappa(S): each run of the multilevel partitioner's two schemes (RUNS runs of recursive bisection,
 * then RUNS k-way runs, from one random stream as multilevelPartition draws them below KWAY_ONLY_VERTICES), with its
 * edge cut and the kappa(S) an analysis gives its partition, on the row graphs of Poisson grids. The advisor ranks
 * the runs by edge cut and its candidates by kappa(S). Run alone:
 *
 *   node --import tsx bench/multilevelKappaS.ts <typescript|native> [--grids 150:16,200:20] [--seeds 1]
 */
import { parseArgs } from 'node:util';
import { partitionKappaSWork } from '../src/solvers/analysis/analyze.js';
import { runSync } from '../src/solvers/cooperative.js';
import { buildDistributedSystem, createProblem } from '../src/solvers/index.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { edgeCut, machineSizeBounds, multilevelKway, recursiveBisection, RUNS } from '../src/solvers/partitioning/multilevel.js';
import { rowGraph } from '../src/solvers/partitioning/rowGraph.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { SeededRandom } from '../src/solvers/random.js';
import { sparseLuContextWork } from '../src/solvers/analysis/sparseAnalysis.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { selectBackend } from './backends.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { grids: { type: 'string', default: '150:16,200:20' }, seeds: { type: 'string', default: '1' } },
});
const backend = positionals[0];
if (backend !== 'typescript' && backend !== 'native') throw new Error('usage: multilevelKappaS.ts <typescript|native> [--grids K:M,...]');
selectBackend(backend);
const kernels = selectedKernels();
for (const grid of values.grids.split(',')) {
  const [side, m] = grid.split(':').map(Number);
  const A = poisson2d(side);
  const g = rowGraph(kernels, A);
  const lu = runSync(sparseLuContextWork(A));
  const { lo, hi } = machineSizeBounds(g.n, m, 0.1);
  const kappaS = (assignment: Int32Array): number =>
    runSync(
      partitionKappaSWork(kernels, buildDistributedSystem(createProblem({ A, partition: partitionFromAssignment(assignment, m) })), { lu }),
    );
  for (const seed of values.seeds.split(',').map(Number)) {
    const random = new SeededRandom(seed);
    const runs: { scheme: string; assignment: Int32Array | null }[] = [];
    for (let run = 0; run < RUNS; run++) runs.push({ scheme: 'recursive bisection', assignment: recursiveBisection(g, m, lo, hi, random) });
    for (let run = 0; run < RUNS; run++) runs.push({ scheme: 'k-way', assignment: multilevelKway(g, m, lo, hi, random) });
    for (const { scheme, assignment } of runs) {
      if (assignment === null) continue;
      console.log(
        `${side} x ${side} in ${m}, seed ${seed}, ${scheme}: edge cut ${edgeCut(g, assignment).toFixed(1)}, kappa(S) ${kappaS(assignment).toPrecision(4)}`,
      );
    }
  }
}
