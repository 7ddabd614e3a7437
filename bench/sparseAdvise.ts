/**
 * An advise job's work on a sparse 2-D Poisson system as computeJob runs it, the sparse counterpart of
 * ./denseAdvise.ts: the setup and analysis of the given strips, then adviseWork given that analysis' kappa(S) and
 * theta_H, each part's wall and CPU seconds (process.cpuUsage: all threads), the advise job over the analyze job (each
 * with its setup; issue 25's scale target), and the candidates (a bracketed candidate's kappa(S) bounds in brackets).
 * `--given random`: the given partition is a seeded random one (as of rows in an arbitrary order), not the grid's strips,
 * whose analysis is the cheapest there is (lambda_max(S) by reflection). Run alone:
 *
 *   node --import tsx bench/sparseAdvise.ts <typescript|native> [--side 300] [--m 36] [--given strips|random]
 */
import { parseArgs } from 'node:util';
import { analyzeWork } from '../src/solvers/analysis/analyze.js';
import { currentCalibration } from '../src/solvers/analysis/calibration.js';
import { buildDistributedSystem, createProblem } from '../src/solvers/index.js';
import { adviseWork, luHandOver } from '../src/solvers/partitioning/advisor.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { timedAsJob } from './asJob.js';
import { selectBackend } from './backends.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    side: { type: 'string', default: '300' },
    m: { type: 'string', default: '36' },
    given: { type: 'string', default: 'strips' },
  },
});
const backend = positionals[0];
if (backend !== 'typescript' && backend !== 'native') throw new Error('usage: sparseAdvise.ts <typescript|native> [--side K] [--m M]');
selectBackend(backend);
const side = Number(values.side);
const m = Number(values.m);
if (values.given !== 'strips' && values.given !== 'random') throw new Error('--given is strips or random');

const round = (x: number): number => Math.round(x * 100) / 100;
const calibration = currentCalibration();
const problem = createProblem({
  A: poisson2d(side),
  partition: values.given === 'random' ? { family: 'random', seed: 1, machines: m } : { machines: m },
});
const setupStart = performance.now();
const system = buildDistributedSystem(problem);
const setup = (performance.now() - setupStart) / 1e3;
// The analysis hands its LU of A to the advice, as computeJob has it (AnalyzeOptions.keepLu, AdviseOptions.takeLu).
const handOver = luHandOver();
let handed = false;
const analysis = await timedAsJob(analyzeWork(system, { keepLu: (context) => (handOver.keepLu(context), (handed = true)) }));
const advice = await timedAsJob(
  adviseWork(problem, {
    calibration,
    tolerance: analysis.value.recommendation.tolerance,
    given: { system, spectrum: { kappaS: analysis.value.conditioning.kappaS, thetaH: analysis.value.heterogeneity.thetaH } },
    takeLu: handOver.takeLu,
  }),
);
console.log(
  JSON.stringify({
    backend,
    n: side * side,
    m,
    given: values.given,
    setupSeconds: round(setup),
    luHandedOver: handed,
    analysis: { wall: round(analysis.wall), cpu: round(analysis.cpu) },
    advice: { wall: round(advice.wall), cpu: round(advice.cpu) },
    adviseJobOverAnalyzeJob: round((setup + analysis.wall + advice.wall) / (setup + analysis.wall)),
    best: advice.value.best,
    candidates: advice.value.candidates.map(({ strategy, kappaS, kappaSBounds }) => [
      strategy,
      kappaS?.toPrecision(4) ?? `[${kappaSBounds?.lower.toPrecision(3)}, ${kappaSBounds?.upper?.toPrecision(3) ?? '-'}]`,
    ]),
  }),
);
