/**
 * Test support for the threaded engine: random systems big enough to split, their spectral data
 * (independent of src/, with ml-matrix), and a scope that forces threads on small problems.
 */
import { afterAll, beforeAll } from 'vitest';
import { Matrix, SingularValueDecomposition } from 'ml-matrix';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';
import type { DenseSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { activeBackend, useBackend, type BackendName } from '../../../src/solvers/linalg/backend.js';
import { useWasmKernels, wasmKernelsEnabled, wasmKernelsUnavailableReason } from '../../../src/solvers/linalg/wasmRowKernels.js';
import { setParallelMinWork, setSolverThreads } from '../../../src/solvers/parallel/threads.js';
import {
  machineRows,
  orthonormalRowBasis,
  randomCase,
  symmetricEigenvalues,
  systemFromRows,
  type RandomCase,
} from '../algorithms/support.js';

export interface TestSystem {
  readonly label: string;
  readonly system: DenseSystem;
  readonly spectral: SpectralData;
}

export function spectralOf(c: RandomCase): SpectralData {
  const n = c.rows.length;
  let S = Matrix.zeros(n, n);
  for (const Q of machineRows(c).map(orthonormalRowBasis)) S = S.add(Q.mmul(Q.transpose()));
  const evS = symmetricEigenvalues(S);
  const sv = new SingularValueDecomposition(new Matrix(c.rows)).diagonal;
  return { m: c.m, lambdaMinS: evS[0], lambdaMaxS: evS[n - 1], L: sv[0] ** 2, mu: sv[n - 1] ** 2 };
}

/**
 * Random systems (random non-contiguous partitions): dense rows (every support full), nearly
 * block-orthogonal rows with exact zeros (partial supports, ragged extents), and a single machine.
 */
export function testSystems(): TestSystem[] {
  const cases: [string, RandomCase][] = [
    ['dense n = 90, m = 5', randomCase(90, 5, 11, 1)],
    ['sparse supports n = 80, m = 4', randomCase(80, 4, 12, 0)],
    ['dense n = 60, m = 1', randomCase(60, 1, 13, 1)],
    // Chunks large enough (>= 1024 entries) for the native backend's C row kernels, and several per machine.
    ['dense n = 300, m = 3', randomCase(300, 3, 14, 1)],
  ];
  return cases.map(([label, c]) => ({ label, system: systemFromRows(c.rows, c.assignment), spectral: spectralOf(c) }));
}

/**
 * A diagonally dominant Gaussian matrix (kappa(A) ~ 2) on a random partition: every algorithm
 * converges in tens to hundreds of iterations, so full runs stay short even when threads are forced
 * on a problem this small (each iteration is then mostly synchronisation).
 */
export function wellConditionedSystem(n: number, m: number, seed: number): TestSystem {
  const base = randomCase(n, m, seed, 1);
  const shift = 3 * Math.sqrt(n);
  const rows = base.rows.map((row, i) => row.map((v, j) => (i === j ? v + shift : v)));
  const c: RandomCase = { rows, assignment: base.assignment, m };
  return { label: `diagonally dominant n = ${n}, m = ${m}`, system: systemFromRows(rows, c.assignment), spectral: spectralOf(c) };
}

/**
 * Within a describe: `backend` (the TypeScript one with or without its WebAssembly kernels),
 * `threads` threads and no work threshold, restored afterwards.
 */
export function forceThreads(
  threads: number,
  backendForRuns: BackendName = 'typescript',
  wasm = wasmKernelsUnavailableReason() === '',
): void {
  let backend: BackendName;
  let wasmBefore: boolean;
  let minWork: number;
  beforeAll(() => {
    backend = activeBackend();
    wasmBefore = wasmKernelsEnabled();
    useBackend(backendForRuns);
    useWasmKernels(wasm);
    setSolverThreads(threads);
    minWork = setParallelMinWork(0);
  });
  afterAll(() => {
    useBackend(backend);
    useWasmKernels(wasmBefore);
    setSolverThreads('auto');
    setParallelMinWork(minWork);
  });
}

/** Resolves once every worker thread started by solver runs has exited (or rejects after `timeoutMs`). */
export async function allWorkersExited(running: () => number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (running() > 0) {
    if (Date.now() > deadline) throw new Error(`${running()} solver worker threads still running after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
