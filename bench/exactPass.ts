/**
 * The partition advisor's exact pass on one candidate of a sparse bench problem, timed alone: lambda_max(S)'s Lanczos
 * run beside the candidate's pairs' principal angles on one task pool (sparseLambdaMaxSAndAnglesWork, as
 * src/solvers/partitioning/advisor.ts runs it for its first contender), on the candidate's system built first. Prints
 * wall and CPU seconds, lambda_max(S) with its Lanczos products, and theta_H (issue 25).
 *
 *   node --import tsx bench/exactPass.ts <sparse.json> [typescript|native] [--strategy metis]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { candidateAssignments } from '../src/solvers/partitioning/advisor.js';
import { sparseLambdaMaxSAndAnglesWork } from '../src/solvers/analysis/sparseAnalysisTasks.js';
import { runCooperatively } from '../src/solvers/cooperative.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { selectBackend } from './backends.js';
import type { SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';
const { positionals, values: args } = parseArgs({ allowPositionals: true, options: { strategy: { type: 'string', default: 'metis' } } });
const [path, backend = 'native'] = positionals;
if (!path || (backend !== 'typescript' && backend !== 'native'))
  throw new Error('usage: exactPass.ts <sparse.json> [typescript|native] [--strategy metis]');
selectBackend(backend);
const spec = JSON.parse(readFileSync(path, 'utf8')) as SparseProblemFile;
const { A, assignment } = readSparseProblemArrays(spec);
const problem = createProblem({ A, partition: partitionFromAssignment(assignment, spec.m) });
const kernels = selectedKernels();
const candidate = candidateAssignments(problem, { kernels }).find(({ strategy }) => strategy === args.strategy);
if (candidate === undefined) throw new Error(`no candidate ${args.strategy} here`);
const system = buildDistributedSystem({ ...problem, partition: partitionFromAssignment(candidate.assignment, spec.m) }, kernels);
const t0 = performance.now();
const c0 = process.cpuUsage();
// As a job drives it: the work returns to the event loop every 20 ms.
const { lambdaMaxS, angles } = await runCooperatively(sparseLambdaMaxSAndAnglesWork(kernels, system, true), {
  sliceMs: 20,
  progressIntervalMs: 1000,
  onProgress: () => undefined,
});
const cpu = process.cpuUsage(c0);
console.log(
  JSON.stringify({
    strategy: args.strategy,
    backend,
    wallSeconds: Math.round(performance.now() - t0) / 1e3,
    cpuSeconds: Math.round((cpu.user + cpu.system) / 1e3) / 1e3,
    lambdaMaxS: lambdaMaxS?.value ?? null,
    lanczosProducts: lambdaMaxS?.iterations ?? null,
    thetaH: angles?.thetaH ?? null,
  }),
);
