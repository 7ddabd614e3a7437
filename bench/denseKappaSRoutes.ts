/**
 * lambda_max(S) of a dense system two ways (src/solvers/analysis/kappaS.ts): by Lanczos on the Gram blocks G_ij = Q_i^T
 * Q_j (what the analysis builds for its angles), and by Lanczos on S through the machines' bases (what the partition
 * advisor's candidates use). Prints each route's seconds, its Lanczos iterations and the two values. Run alone.
 *
 *   node --import tsx bench/denseKappaSRoutes.ts <typescript|native> [--n 4000] [--m 10]
 */
import { parseArgs } from 'node:util';
import { gramBlocksWork, gramOperator } from '../src/solvers/analysis/gramBlocks.js';
import { basesSOperator } from '../src/solvers/analysis/kappaS.js';
import { MAX_FORWARD_LANCZOS_ITERATIONS } from '../src/solvers/analysis/conditioning.js';
import { runSync } from '../src/solvers/cooperative.js';
import { lanczosWork } from '../src/solvers/eigen/lanczos.js';
import { buildDistributedSystem, createProblem, generateMatrix } from '../src/solvers/index.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { selectBackend } from './backends.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { n: { type: 'string', default: '4000' }, m: { type: 'string', default: '10' } },
});
const backend = positionals[0];
if (backend !== 'typescript' && backend !== 'native') throw new Error('usage: denseKappaSRoutes.ts <typescript|native> [--n N] [--m M]');
selectBackend(backend);
const n = Number(values.n);
const A = generateMatrix({ generator: 'gaussian', n, mean: 1, std: 1, seed: 1 });
const system = buildDistributedSystem(createProblem({ A, partition: { machines: Number(values.m) } }));
const kernels = selectedKernels();
const options = { which: 'largest' as const, maxIterations: MAX_FORWARD_LANCZOS_ITERATIONS };
const seconds = (since: number): number => Math.round(performance.now() - since) / 1e3;

let start = performance.now();
const gram = runSync(gramBlocksWork(kernels, system.machines));
const gramSeconds = seconds(start);
start = performance.now();
const fromGram = runSync(lanczosWork(kernels, gramOperator(kernels, gram), options));
const gramLanczosSeconds = seconds(start);
start = performance.now();
const fromBases = runSync(lanczosWork(kernels, basesSOperator(kernels, system.machines, n), options));
const basesSeconds = seconds(start);
console.log(
  JSON.stringify({
    backend,
    n,
    gram: { blocksSeconds: gramSeconds, lanczosSeconds: gramLanczosSeconds, iterations: fromGram.iterations, lambdaMaxS: fromGram.largest },
    bases: { lanczosSeconds: basesSeconds, iterations: fromBases.iterations, lambdaMaxS: fromBases.largest },
    relativeDifference: Math.abs(fromGram.largest - fromBases.largest) / fromGram.largest,
  }),
);
