/**
 * METIS's partition of a sparse bench problem's row graph, raw and polished by the multilevel partitioner's k-way FM
 * passes (as the partition advisor lists it, src/solvers/partitioning/advisor.ts polishedMetisPartition): for each,
 * the edge cut, kappa(S) = lambda_max(S) / lambda_min(S) as the advisor computes them (its bounds pass through the LU
 * of A, its exact pass), and lambda_max(S)'s Lanczos products. Native backend only (METIS is the addon's).
 *
 *   node --import tsx bench/metisPolish.ts <sparse.json>
 */
import { readFileSync } from 'node:fs';
import { runSync } from '../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { sparseKappaSBoundsWork, sparseLuContextWork } from '../src/solvers/analysis/sparseAnalysis.js';
import { sparseLambdaMaxSAndAnglesWork } from '../src/solvers/analysis/sparseAnalysisTasks.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { metisPartition } from '../src/solvers/partitioning/metis.js';
import { DEFAULT_IMBALANCE, edgeCut, machineSizeBounds, refineKway } from '../src/solvers/partitioning/multilevel.js';
import { rowGraph } from '../src/solvers/partitioning/rowGraph.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { selectBackend } from './backends.js';
import type { SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

const [path] = process.argv.slice(2);
if (!path) throw new Error('usage: metisPolish.ts <sparse.json>');
selectBackend('native');
const spec = JSON.parse(readFileSync(path, 'utf8')) as SparseProblemFile;
const { A } = readSparseProblemArrays(spec);
const kernels = selectedKernels();
const { metis } = kernels;
if (metis === null) throw new Error('the native addon was built without METIS');
const graph = rowGraph(kernels, A);
const { lo, hi } = machineSizeBounds(graph.n, spec.m, DEFAULT_IMBALANCE);
const raw = metisPartition(metis, graph, spec.m, DEFAULT_IMBALANCE);
const polished = raw.slice();
refineKway(graph, polished, spec.m, lo, hi);
const lu = runSync(sparseLuContextWork(A));
for (const [partition, assignment] of [
  ['metis', raw],
  ['metis, polished', polished],
] as const) {
  const system = buildDistributedSystem(createProblem({ A, partition: partitionFromAssignment(assignment, spec.m) }), kernels);
  const { lambdaMinS } = runSync(sparseKappaSBoundsWork(kernels, system.A, system.partition.rowsOf, lu));
  const { lambdaMaxS } = runSync(sparseLambdaMaxSAndAnglesWork(kernels, system, false));
  if (lambdaMinS === null || lambdaMaxS === null) throw new Error(`${partition}: S is the identity or had by reflection here`);
  console.log(
    JSON.stringify({
      partition,
      edgeCut: edgeCut(graph, assignment),
      kappaS: lambdaMaxS.value / lambdaMinS.value,
      lambdaMaxS: lambdaMaxS.value,
      lanczosProducts: lambdaMaxS.iterations,
    }),
  );
}
