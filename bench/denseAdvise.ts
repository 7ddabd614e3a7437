/**
 * An advise job's work on a dense system at the service's largest dense size, as computeJob runs it: the analysis of
 * the given (contiguous) partition, then adviseWork given that analysis' kappa(S), theta_H and (native) its
 * factorization A = D M. Prints each part's wall
 * and CPU seconds (process.cpuUsage: all threads), the advice over the analysis (issue 25's scale target: within 2x
 * one analysis), the advise job over the analyze job (each with its setup, the machines' QR), and the candidates. Run
 * alone.
 *
 *   node --import tsx bench/denseAdvise.ts <typescript|native> [--n 4000] [--m 10] [--generator gaussian|structured-gaussian]
 *     [--refinement-tries 8]   (the advise job's options.refinementTries; 0: no refinement)
 */
import { parseArgs } from 'node:util';
import { analyzeWork } from '../src/solvers/analysis/analyze.js';
import { currentCalibration } from '../src/solvers/analysis/calibration.js';
import { buildDistributedSystem, createProblem, generateMatrix } from '../src/solvers/index.js';
import { adviseWork, luHandOver } from '../src/solvers/partitioning/advisor.js';
import { timedAsJob } from './asJob.js';
import { selectBackend } from './backends.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    n: { type: 'string', default: '4000' },
    m: { type: 'string', default: '10' },
    generator: { type: 'string', default: 'gaussian' },
    'refinement-tries': { type: 'string' },
  },
});
const backend = positionals[0];
if (backend !== 'typescript' && backend !== 'native') throw new Error('usage: denseAdvise.ts <typescript|native> [--n N] [--m M]');
selectBackend(backend);
const n = Number(values.n);
const m = Number(values.m);
const A =
  values.generator === 'structured-gaussian'
    ? generateMatrix({ generator: 'structured-gaussian', n, blockSize: n / m, sigma: 0.1, seed: 1 })
    : generateMatrix({ generator: 'gaussian', n, mean: 1, std: 1, seed: 1 });
const problem = createProblem({ A, partition: { machines: m } });

const calibration = currentCalibration();
const setupStart = performance.now();
const system = buildDistributedSystem(problem);
const setup = (performance.now() - setupStart) / 1e3;
// As computeJob hands it over: the analysis' factorization of A (native: made on this thread) to the advice.
const handOver = luHandOver();
const analysis = await timedAsJob(analyzeWork(system, { keepFactored: handOver.keepFactored }));
const advice = await timedAsJob(
  adviseWork(problem, {
    calibration,
    tolerance: analysis.value.recommendation.tolerance,
    given: {
      system,
      spectrum: { kappaS: analysis.value.conditioning.kappaS, thetaH: analysis.value.heterogeneity.thetaH },
      kappaAtA: analysis.value.conditioning.kappaAtA,
    },
    takeFactored: handOver.takeFactored,
    refinementTries: values['refinement-tries'] === undefined ? undefined : Number(values['refinement-tries']),
  }),
);
const round = (x: number): number => Math.round(x * 100) / 100;
console.log(
  JSON.stringify({
    backend,
    n,
    m,
    generator: values.generator,
    setupSeconds: round(setup),
    analysis: { wall: round(analysis.wall), cpu: round(analysis.cpu) },
    advice: { wall: round(advice.wall), cpu: round(advice.cpu) },
    adviceOverAnalysis: round(advice.wall / analysis.wall),
    adviseJobOverAnalysis: round((analysis.wall + advice.wall) / analysis.wall),
    // Both jobs with their setup (the machines' QR), as a client waits for each: analyze = setup + analysis.
    adviseJobOverAnalyzeJob: round((setup + analysis.wall + advice.wall) / (setup + analysis.wall)),
    best: advice.value.best,
    candidates: advice.value.candidates.map(({ strategy, kappaS, thetaH }) => ({ strategy, kappaS, thetaH })),
  }),
);
