/**
 * Measurement (not a test): the sparse path on each backend for the 2-D Poisson matrix in m
 * contiguous strips: the setup (partition + each machine's Gram factor: TypeScript's sparse
 * Cholesky or CHOLMOD) and one APC iteration (median of `iterations` steps after one warm-up), on
 * one thread and on the default thread count.
 *
 *   npx tsx bench/nativeSparse.ts [k = 500 (n = k^2 = 250,000)] [m = 100] [iterations = 20]
 */
import { algorithms } from '../src/solvers/algorithms/registry.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { nativeSparse, useBackend, type BackendName } from '../src/solvers/linalg/backend.js';
import { setSolverThreads } from '../src/solvers/parallel/threads.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';

const [k = 500, m = 100, iterations = 20] = process.argv.slice(2).map(Number);
const A = poisson2d(k);
const n = A.rows;
const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];

const backends: BackendName[] = nativeSparse() === null ? ['typescript'] : ['typescript', 'native'];
const rows: Record<string, unknown>[] = [];
for (const backend of backends) {
  useBackend(backend);
  const t0 = performance.now();
  const system = buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
  const setupMs = performance.now() - t0;
  if (system.storage !== 'csr') throw new Error('expected CSR storage');
  let nnzL = 0;
  for (const machine of system.machines) nnzL += machine.gram.symbolic.nnzL;
  for (const threads of [1, 'auto'] as const) {
    setSolverThreads(threads);
    // Gamma and eta of a typical run; the cost of an iteration does not depend on them.
    const apc = algorithms.apc.create(system, { gamma: 1.2, eta: 1.5 });
    try {
      apc.step();
      const times: number[] = [];
      for (let t = 0; t < iterations; t++) {
        const start = performance.now();
        apc.step();
        times.push(performance.now() - start);
      }
      rows.push({ backend, threads, n, m, nnzL, setupMs: Math.round(setupMs), apcIterationMs: Number(median(times).toFixed(3)) });
    } finally {
      apc.dispose?.();
    }
  }
}
console.table(rows);
