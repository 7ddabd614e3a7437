/**
 * Measurement (not a test): the sparse analysis of the paper's Example 1 (test/solvers/analysis/sparseExamples.ts) at a
 * given n, with its time and the process's peak memory, and APC's one iteration.
 *
 *   npx tsx bench/blockDiagonalAnalysis.ts [n = 1000000] [blockSize = 5] [m = 40]
 */
import { analyze, spectralDataOf } from '../src/solvers/analysis/analyze.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { runAlgorithm } from '../src/solvers/runner/runAlgorithm.js';
import { permutedBlockDiagonal } from '../test/solvers/analysis/sparseExamples.js';

const [n = 1_000_000, blockSize = 5, m = 40] = process.argv.slice(2).map(Number);
let peak = 0;
const sample = (): void => {
  peak = Math.max(peak, process.memoryUsage().rss);
};
const sampler = setInterval(sample, 50);

const t0 = performance.now();
const { A, partition } = permutedBlockDiagonal(n, blockSize, m, 11);
const t1 = performance.now();
const system = buildDistributedSystem(createProblem({ A, partition }));
sample();
const t2 = performance.now();
const analysis = analyze(system);
sample();
const t3 = performance.now();
const apc = runAlgorithm(system, 'apc', spectralDataOf(analysis), { tolerance: 1e-10, maxIterations: 1 });
sample();
clearInterval(sampler);
const { conditioning: c, heterogeneity: h } = analysis;
console.log(
  JSON.stringify(
    {
      n,
      blockSize,
      m,
      nnz: A.values.length,
      seconds: { generate: ((t1 - t0) / 1000).toFixed(2), system: ((t2 - t1) / 1000).toFixed(2), analysis: ((t3 - t2) / 1000).toFixed(2) },
      peakRssMiB: Math.round(peak / 2 ** 20),
      kappaS: c.kappaS,
      thetaH: h.thetaH,
      thetaHIsHalfPi: h.thetaH === Math.PI / 2,
      kappaAtA: c.kappaAtA,
      kappaAtAEstimate: c.estimates?.kappaAtA,
      apc: { status: apc.status, iterations: apc.iterations, relativeError: apc.relativeError },
    },
    null,
    2,
  ),
);
