/**
 * The TypeScript side of one sparse benchmark problem, in its own process (so its peak RSS is this
 * problem's): reads the CSR arrays bench/sparseProblems.ts wrote, selects a backend, times through
 * the library API on CSR storage (never densified) and prints one SparseSideReport JSON on stdout:
 *  - setup: the partition and each machine's sparse Cholesky of A_i A_i^T (createProblem +
 *    buildDistributedSystem), best of `expensiveRepeats`;
 *  - analysis: the whole analysis (when the problem file asks for it);
 *  - one D-HBM and one APC iteration: after `iterationWarmup` untimed steps, the best of `iterationRepeats`.
 *
 *   node --import tsx --expose-gc bench/sparseStages.ts <sparse.json> <typescript|native>
 */
import { readFileSync } from 'node:fs';
import {
  activeBackend,
  algorithms,
  analyze,
  buildDistributedSystem,
  createProblem,
  partitionFromAssignment,
  spectralDataOf,
  type DistributedSystem,
  type SpectralData,
} from '../src/solvers/index.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { selectBackend } from './backends.js';
import { readSparseProblemArrays, timed } from './stageIo.js';
import type { SparseSideReport, SparseStageName } from './common.js';
import type { SparseProblemFile } from './sparseProblems.js';

/** Best single-step time (seconds) and the threads the method iterated on. */
function bestStep(system: DistributedSystem, id: 'apc' | 'dhbm', spectral: SpectralData, spec: SparseProblemFile): [number, number] {
  const algorithm = algorithms[id];
  const method = algorithm.create(system, algorithm.optimal(spectral).parameters);
  try {
    // At least iterationWarmup steps, and on small problems enough more (0.1 s of them, at most 1000) for V8 to
    // have optimized the step: 3 steps of 6 us left 1138_bus's D-HBM in unoptimized code in some processes
    // (best of 20: 46 us instead of 6 us, depending on whether the background compile had finished).
    const warmUntil = performance.now() + 100;
    for (let k = 0; k < spec.iterationWarmup || (k < 1000 && performance.now() < warmUntil); k++) method.step();
    return [timed(() => method.step(), spec.iterationRepeats)[0], method.threads ?? 1];
  } finally {
    method.dispose?.();
  }
}

function main(): void {
  const [problemPath, backendArg] = process.argv.slice(2);
  if (!problemPath || (backendArg !== 'typescript' && backendArg !== 'native')) {
    throw new Error('usage: sparseStages.ts <sparse.json> <typescript|native>');
  }
  const spec = JSON.parse(readFileSync(problemPath, 'utf8')) as SparseProblemFile;
  const selected = selectBackend(backendArg);
  const { m } = spec;
  const baselineRssBytes = process.memoryUsage.rss();
  const { A, assignment } = readSparseProblemArrays(spec);

  // Warm-up (JIT, first-call costs): setup, analysis and a few steps of a small sparse system.
  const warm = buildDistributedSystem(createProblem({ A: poisson2d(20), partition: { machines: 4 } }));
  const warmSpectral = spectralDataOf(analyze(warm));
  bestStep(warm, 'apc', warmSpectral, { ...spec, iterationRepeats: 2 });
  bestStep(warm, 'dhbm', warmSpectral, { ...spec, iterationRepeats: 2 });

  const stages: Partial<Record<SparseStageName, number>> = {};
  const partition = partitionFromAssignment(assignment, m);
  let system!: DistributedSystem;
  (globalThis as { gc?: () => void }).gc?.();
  [stages.setup, system] = timed(() => buildDistributedSystem(createProblem({ A, partition })), spec.expensiveRepeats);

  let values: SparseSideReport['values'] = null;
  // Without the analysis, the iterations run on fixed parameters: their cost does not depend on them.
  let spectral: SpectralData = { m, lambdaMinS: 0.1, lambdaMaxS: 2, mu: 1e-4, L: 8 };
  if (spec.analysis) {
    const [seconds, analysis] = timed(() => analyze(system), spec.expensiveRepeats);
    stages.analysis = seconds;
    spectral = spectralDataOf(analysis);
    const c = analysis.conditioning;
    values = {
      kappaS: c.kappaS,
      lambdaMinS: c.lambdaMinS,
      lambdaMaxS: c.lambdaMaxS,
      kappaAtA: c.kappaAtA,
      thetaH: analysis.heterogeneity.thetaH,
    };
  }
  const [dhbm, dhbmThreads] = bestStep(system, 'dhbm', spectral, spec);
  const [apc, apcThreads] = bestStep(system, 'apc', spectral, spec);
  stages.dhbmIteration = dhbm;
  stages.apcIteration = apc;

  const report: SparseSideReport = {
    side: backendArg,
    environment: {
      node: process.version,
      backend: activeBackend(),
      storage: system.storage,
      threads: selected.threads,
      apcThreads,
      dhbmThreads,
      blas: selected.blas,
    },
    stages,
    values,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    baselineRssBytes,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main();
