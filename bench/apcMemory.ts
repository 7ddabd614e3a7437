/**
 * Measurement (not a test): peak memory of an APC solve on CSR storage, the 2-D Poisson matrix
 * (k x k grid, n = k^2) in m contiguous strips, stage by stage: the matrix, the distributed system
 * (each machine's CSR rows and the Cholesky factor of A_i A_i^T), the method's state, the
 * iterations. Peak resident memory is the kernel's (getrusage maxRSS), so it includes every thread.
 * The analysis is not run (its memory is measured by bench/blockDiagonalAnalysis.ts); APC runs
 * with given parameters.
 *
 *   npx tsx bench/apcMemory.ts [k = 1000] [m = 100] [iterations = 20] [threads]
 *
 * With more than one solver thread the engine shares one copy of the machines' data (CSR rows and
 * Gram factors) with its workers (src/solvers/parallel/engine.ts): `threads = 1` shows the
 * memory without it.
 */
import type { SpectralData } from '../src/solvers/algorithms/types.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { setSolverThreads, solverThreads } from '../src/solvers/parallel/threads.js';
import { runAlgorithm } from '../src/solvers/runner/runAlgorithm.js';
import { nnzOf } from '../src/solvers/sparse/csr.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';

const [k = 1000, m = 100, iterations = 20, threads] = process.argv.slice(2).map(Number);
if (threads !== undefined) setSolverThreads(threads);
const MiB = 2 ** 20;
const peakMiB = (): number => Math.round((process.resourceUsage().maxRSS * 1024) / MiB);
const rssMiB = (): number => Math.round(process.memoryUsage().rss / MiB);
const stages: Record<string, { seconds: string; rssMiB: number; peakMiB: number }> = {};
let last = performance.now();
const stage = (name: string): void => {
  const now = performance.now();
  stages[name] = { seconds: ((now - last) / 1000).toFixed(2), rssMiB: rssMiB(), peakMiB: peakMiB() };
  last = now;
};

stage('start');
const A = poisson2d(k);
const n = A.rows;
stage('matrix');
const system = buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
stage('system');
// Parameters given (the analysis is not part of this measurement); the spectral data only feed the reported rate.
const spectral: SpectralData = { m, lambdaMinS: 1e-3, lambdaMaxS: 2, mu: 1e-5, L: 64 };
const run = runAlgorithm(system, 'apc', spectral, { tolerance: 1e-300, maxIterations: iterations, parameters: { gamma: 1, eta: 1.5 } });
stage('apc');
const bytes = (array: { byteLength: number }): number => array.byteLength;
console.log(
  JSON.stringify(
    {
      n,
      m,
      threads: solverThreads(),
      nnz: nnzOf(A),
      csrMiB: Math.round((bytes(A.rowPtr) + bytes(A.colIdx) + bytes(A.values)) / MiB),
      oneVectorPerMachineMiB: Math.round((8 * m * n) / MiB),
      iterations: run.iterations,
      relativeResidual: run.relativeResidual,
      secondsPerIteration: (Number(stages.apc.seconds) / Math.max(1, run.iterations)).toFixed(3),
      stages,
      peakMiB: peakMiB(),
    },
    null,
    2,
  ),
);
