/**
 * The TypeScript side of one benchmark problem, in its own process (so its peak RSS is this
 * problem's): reads the problem.json, matrix and assignment bench/run.ts wrote, selects a backend,
 * times every stage through the library API (no HTTP) and prints one SideReport JSON on stdout.
 *
 *   node --import tsx bench/stages.ts <problem.json> <typescript|native>
 *
 * Same policy as bench/reference.py: one warm-up of setup + analysis on a 64 x 64 Gaussian system,
 * a streaming pass over A (best of `streamRepeats`), the expensive stages best of `expensiveRepeats`,
 * single iterations after untimed warm-up steps (`iterationWarmup`, `iterationWarmupSeconds`) the
 * best of `iterationRepeats`, full solves capped by iterations and wall clock.
 */
import { readFileSync } from 'node:fs';
import {
  algorithms,
  analyze,
  analyzeWork,
  buildDistributedSystem,
  createProblem,
  generateMatrix,
  partitionFromAssignment,
  runAlgorithmWork,
  spectralDataOf,
  type Analysis,
  type DenseSystem,
  type RunResult,
  type SpectralData,
} from '../src/solvers/index.js';
import { useWasmKernels, wasmKernelsEnabled, wasmKernelsUnavailableReason } from '../src/solvers/index.js';
import { selectBackend } from './backends.js';
import { readRaw, timed } from './stageIo.js';
import type { AnalysisPhases, AnalysisValues, ProblemFile, SideReport, SolveReport, SolveStop, StageName } from './common.js';

/** One read of every entry: eight independent accumulators so the adds do not serialize. */
function streamSum(data: Float64Array): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let s4 = 0;
  let s5 = 0;
  let s6 = 0;
  let s7 = 0;
  const len = data.length;
  const main = len - (len % 8);
  for (let k = 0; k < main; k += 8) {
    s0 += data[k];
    s1 += data[k + 1];
    s2 += data[k + 2];
    s3 += data[k + 3];
    s4 += data[k + 4];
    s5 += data[k + 5];
    s6 += data[k + 6];
    s7 += data[k + 7];
  }
  for (let k = main; k < len; k++) s0 += data[k];
  return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
}

/**
 * analyze(), driven here (as runSync does) to time its phases from the progress it yields:
 * conditioning (kappa(A^T A)), gram-blocks + principal-angles, conditioning again (kappa(S)), local-angles.
 */
function analyzeByPhase(system: DenseSystem): [Analysis, AnalysisPhases] {
  const phases: AnalysisPhases = { kappaAtA: 0, principalAngles: 0, kappaS: 0, localAngles: 0 };
  const phaseOf = (name: string, seen: Set<string>): keyof AnalysisPhases | null => {
    if (name === 'conditioning') return seen.has('principal-angles') ? 'kappaS' : 'kappaAtA';
    if (name === 'gram-blocks' || name === 'principal-angles') return 'principalAngles';
    if (name === 'local-angles') return 'localAngles';
    return null;
  };
  const seen = new Set<string>();
  const work = analyzeWork(system);
  let current: keyof AnalysisPhases | null = null;
  let since = performance.now();
  for (;;) {
    const step = work.next();
    const now = performance.now();
    if (current) phases[current] += (now - since) / 1e3;
    since = now;
    if (step.done) return [step.value, phases];
    if (step.value) {
      seen.add(step.value.phase);
      current = phaseOf(step.value.phase, seen) ?? current;
    }
  }
}

function valuesOf(a: Analysis): AnalysisValues {
  const { heterogeneity: h, conditioning: c, rates } = a;
  return {
    thetaH: h.thetaH,
    phiMin: h.phiMin,
    rowNormRatio: h.rowNormRatio,
    theorem4KappaALowerBound: a.bounds.theorem4KappaALowerBound,
    kappaS: c.kappaS,
    lambdaMinS: c.lambdaMinS,
    lambdaMaxS: c.lambdaMaxS,
    kappaAtA: c.kappaAtA,
    apc: { rate: rates.apc.rate, gamma: rates.apc.parameters.gamma, eta: rates.apc.parameters.eta },
    dhbm: { rate: rates.dhbm.rate, alpha: rates.dhbm.parameters.alpha, beta: rates.dhbm.parameters.beta },
  };
}

/** Best single-step time (seconds) and the threads the method iterated on. */
function bestStep(system: DenseSystem, id: 'apc' | 'dhbm', spectral: SpectralData, spec: ProblemFile): [number, number] {
  const algorithm = algorithms[id];
  const method = algorithm.create(system, algorithm.optimal(spectral).parameters);
  try {
    // The warm-up steps also absorb a threaded run's start (its worker threads).
    const warmUntil = performance.now() + spec.iterationWarmupSeconds * 1e3;
    for (let k = 0; k < spec.iterationWarmup || performance.now() < warmUntil; k++) method.step();
    return [timed(() => method.step(), spec.iterationRepeats)[0], method.threads ?? 1];
  } finally {
    method.dispose?.();
  }
}

const STOP_OF_STATUS: Record<RunResult['status'], SolveStop> = {
  converged: 'converged',
  'max-iterations': 'max-iterations',
  'max-wall-time': 'budget',
  cancelled: 'budget',
  diverged: 'diverged',
  'non-finite': 'diverged',
  stagnated: 'max-iterations',
};

/**
 * A full solve through the service's runner (runAlgorithmWork: creation, iterations, trace,
 * divergence checks, final residual). The runner is driven here so the wall-clock budget can be
 * checked between iterations; running out of it aborts the run (status 'cancelled' = 'budget').
 */
function solve(system: DenseSystem, id: 'apc' | 'dhbm', spectral: SpectralData, spec: ProblemFile): SolveReport {
  const controller = new AbortController();
  const t0 = performance.now();
  const deadline = t0 + spec.solveBudgetSeconds * 1e3;
  const work = runAlgorithmWork(system, id, spectral, {
    tolerance: spec.tolerance,
    maxIterations: spec.maxSolveIterations,
    signal: controller.signal,
  });
  let step = work.next();
  while (!step.done) {
    if (performance.now() > deadline) controller.abort();
    step = work.next();
  }
  const seconds = (performance.now() - t0) / 1e3;
  const run = step.value;
  return { iterations: run.iterations, relativeResidual: run.relativeResidual, stop: STOP_OF_STATUS[run.status], seconds };
}

function main(): void {
  const [problemPath, backendArg] = process.argv.slice(2);
  if (!problemPath || (backendArg !== 'typescript' && backendArg !== 'native')) {
    throw new Error('usage: stages.ts <problem.json> <typescript|native>');
  }
  const spec = JSON.parse(readFileSync(problemPath, 'utf8')) as ProblemFile;
  const selected = selectBackend(backendArg);
  const { n, m } = spec;
  const baselineRssBytes = process.memoryUsage.rss();
  const A = { rows: n, cols: n, data: readRaw(spec.matrixFile, new Float64Array(n * n)) };
  const assignment = readRaw(spec.assignmentFile, new Int32Array(n));

  // Warm-up (JIT, first-call costs), as reference.py does: setup + analysis of a small system.
  analyze(
    buildDistributedSystem(
      createProblem({ A: generateMatrix({ generator: 'gaussian', n: 64, mean: 1, seed: 1 }), partition: { machines: 4 } }),
    ),
  );

  const stages = {} as Record<StageName, number>;
  // The streaming pass first, on the freshly read matrix (reference.py measures at the same point).
  streamSum(A.data.subarray(0, Math.min(A.data.length, 1 << 16)));
  stages.streamMatrix = timed(() => streamSum(A.data), spec.streamRepeats)[0];

  const problem = createProblem({ A, partition: partitionFromAssignment(assignment, m) });
  const [setupTime, system] = timed(() => buildDistributedSystem(problem), spec.expensiveRepeats);
  stages.setup = setupTime;
  // What the analysis holds beyond its inputs: the RSS high-water mark after it minus the RSS just
  // before it (garbage collected first when --expose-gc is on). Conservative: a higher peak reached
  // during setup would be charged to the analysis.
  (globalThis as { gc?: () => void }).gc?.();
  const rssBeforeAnalysis = process.memoryUsage.rss();
  let analysisTime = Infinity;
  let analysis!: Analysis;
  let analysisPhases!: AnalysisPhases;
  for (let r = 0; r < spec.expensiveRepeats; r++) {
    const t0 = performance.now();
    const [result, phases] = analyzeByPhase(system);
    const t = (performance.now() - t0) / 1e3;
    if (t < analysisTime) [analysisTime, analysis, analysisPhases] = [t, result, phases];
  }
  stages.analysis = analysisTime;
  const analysisPeakRss = process.resourceUsage().maxRSS * 1024;

  const spectral = spectralDataOf(analysis);
  const [apcTime, apcThreads] = bestStep(system, 'apc', spectral, spec);
  const [dhbmTime, dhbmThreads] = bestStep(system, 'dhbm', spectral, spec);
  stages.apcIteration = apcTime;
  stages.dhbmIteration = dhbmTime;
  // The TypeScript backend's iterations once more on its plain loops (no WebAssembly), for the record.
  let plainLoops: SideReport['plainLoops'];
  if (selected.backend === 'typescript' && wasmKernelsEnabled()) {
    useWasmKernels(false);
    plainLoops = { apcIteration: bestStep(system, 'apc', spectral, spec)[0], dhbmIteration: bestStep(system, 'dhbm', spectral, spec)[0] };
    useWasmKernels(true);
  }
  const apcSolve = solve(system, 'apc', spectral, spec);
  stages.apcSolve = apcSolve.seconds;
  const dhbmSolve = solve(system, 'dhbm', spectral, spec);
  stages.dhbmSolve = dhbmSolve.seconds;

  const report: SideReport = {
    side: backendArg,
    environment: {
      node: process.version,
      backend: selected.backend,
      rowKernels:
        selected.backend === 'native'
          ? 'C (addon)'
          : wasmKernelsEnabled()
            ? 'WebAssembly SIMD'
            : `plain TypeScript loops (${wasmKernelsUnavailableReason()})`,
      threads: selected.threads,
      apcThreads,
      dhbmThreads,
      blas: selected.blas,
    },
    stages,
    analysisPhases,
    stream: { sum8: stages.streamMatrix },
    values: valuesOf(analysis),
    apcSolve,
    dhbmSolve,
    plainLoops,
    // maxRSS is in kilobytes.
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    baselineRssBytes,
    analysisGrowthBytes: Math.max(0, analysisPeakRss - rssBeforeAnalysis),
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main();
