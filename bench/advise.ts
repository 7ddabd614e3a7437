/**
 * What an advise job costs per candidate on one sparse benchmark problem (bench/sparseProblems.ts) and one
 * backend: the row graph, each candidate's assignment (RCM, multilevel, METIS), then per candidate its
 * setup (the machines' Gram factorizations), its overlapping pairs, lambda_min(S) and lambda_max(S)
 * (kappa(S)) and its principal angles (theta_H), each with wall and CPU seconds (process.cpuUsage, all
 * threads: the host is shared), and last the whole adviseWork as the job runs it (the given partition's
 * spectrum passed in, as the job passes the analysis'). Prints one JSON line.
 *
 *   node --import tsx bench/advise.ts <sparse.json> <typescript|native> [--parts-only | --whole-only] [--no-angles]
 *     [--candidates=contiguous,round-robin,...]
 */
import { readFileSync } from 'node:fs';
import { buildDistributedSystem, createProblem, partitionFromAssignment } from '../src/solvers/index.js';
import { runSync } from '../src/solvers/cooperative.js';
import { adviseWork, candidateAssignments } from '../src/solvers/partitioning/advisor.js';
import {
  sparseAnglesOfPartitionWork,
  sparseLuContextWork,
  sparseSOfPartitionWork,
  type SparseLuContext,
} from '../src/solvers/analysis/sparseAnalysis.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { currentCalibration } from '../src/solvers/analysis/calibration.js';
import { machineColumnSlots, overlappingMachinePairs, overlapTwoColouring } from '../src/solvers/sparse/spectrumOfS.js';
import { selectBackend } from './backends.js';
import type { SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

/** Wall and CPU seconds (this process, all threads) of fn. */
function timed<T>(fn: () => T): { wall: number; cpu: number; value: T } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = fn();
  const wall = (performance.now() - t0) / 1e3;
  const c1 = process.cpuUsage(c0);
  return { wall: round(wall), cpu: round((c1.user + c1.system) / 1e6), value };
}
const round = (x: number): number => Math.round(x * 1000) / 1000;

function main(): void {
  const [problemPath, backendArg, ...rest] = process.argv.slice(2);
  const flags = new Set(rest);
  if (!problemPath || (backendArg !== 'typescript' && backendArg !== 'native'))
    throw new Error('usage: advise.ts <sparse.json> <typescript|native> [--parts-only | --whole-only] [--no-angles] [--candidates=a,b]');
  const spec = JSON.parse(readFileSync(problemPath, 'utf8')) as SparseProblemFile;
  const backend = selectBackend(backendArg);
  const { A, assignment } = readSparseProblemArrays(spec);
  const problem = createProblem({ A, partition: partitionFromAssignment(assignment, spec.m) });
  const kernels = selectedKernels();
  const out: Record<string, unknown> = { problem: spec.name, backend };
  const log = (name: string, value: unknown): void => {
    out[name] = value;
    process.stderr.write(`${name}: ${JSON.stringify(value)}\n`);
  };
  const chosen = rest
    .find((flag) => flag.startsWith('--candidates='))
    ?.slice('--candidates='.length)
    .split(',');
  // Let go before the whole advice (below): the job's analysis keeps no LU for its rest, and adviseWork makes its own
  // (held here, it added ~1 GiB to the peak at n = 10^6).
  let luContext: SparseLuContext | null = (() => {
    const lu = timed(() => runSync(sparseLuContextWork(A)));
    log('lu', { wall: lu.wall, cpu: lu.cpu });
    return lu.value;
  })();
  if (!flags.has('--whole-only')) {
    const candidates = timed(() => candidateAssignments(problem, { kernels }));
    log('assignments', { wall: candidates.wall, cpu: candidates.cpu });
    for (const { strategy, assignment: candidate } of candidates.value) {
      if (chosen !== undefined && !chosen.includes(strategy)) continue;
      const setup = timed(() => buildDistributedSystem({ ...problem, partition: partitionFromAssignment(candidate, spec.m) }));
      const system = setup.value;
      const slots = machineColumnSlots(A, system.partition.rowsOf);
      const pairs = overlappingMachinePairs(slots);
      let gramNonzeros = 0;
      for (const machine of system.machines) gramNonzeros += machine.gram.values.length;
      const row: Record<string, unknown> = {
        setup: { wall: setup.wall, cpu: setup.cpu },
        overlappingPairs: pairs.length / 2,
        bipartite: overlapTwoColouring(slots, pairs) !== null,
        gramFactorNonzeros: gramNonzeros,
        largestSupport: Math.max(...system.machines.map((machine) => machine.cols.length)),
      };
      const s = timed(() => runSync(sparseSOfPartitionWork(kernels, system, luContext!)));
      row.kappaS = {
        wall: s.wall,
        cpu: s.cpu,
        value: s.value.kappaS.value,
        lambdaMax: s.value.lambdaMaxS.method,
        products: s.value.lambdaMaxS.iterations,
      };
      if (!flags.has('--no-angles')) {
        const angles = timed(() => runSync(sparseAnglesOfPartitionWork(kernels, system)));
        row.angles = { wall: angles.wall, cpu: angles.cpu, thetaH: angles.value.thetaH };
      }
      log(strategy, row);
    }
  }
  if (!flags.has('--parts-only')) {
    // The job's analysis gives the given partition's spectrum: computed here as it computes it.
    const given = buildDistributedSystem(problem);
    const givenS = runSync(sparseSOfPartitionWork(kernels, given, luContext));
    luContext = null;
    const angles = runSync(sparseAnglesOfPartitionWork(kernels, given));
    const whole = timed(() =>
      runSync(
        adviseWork(problem, {
          kernels,
          calibration: currentCalibration(),
          given: { system: given, spectrum: { kappaS: givenS.kappaS.value, thetaH: angles.thetaH } },
        }),
      ),
    );
    log('advise', {
      wall: whole.wall,
      cpu: whole.cpu,
      best: whole.value.best,
      candidates: whole.value.candidates.map(({ strategy, kappaS, thetaH }) => ({ strategy, kappaS, thetaH })),
    });
  }
  log('peakRssMiB', Math.round(process.resourceUsage().maxRSS / 1024));
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main();
