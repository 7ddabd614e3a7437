/**
 * Runs on worker threads (threads forced on small problems by a zero work threshold): exactly the
 * iterates of one thread, on either backend (the TypeScript one with and without its WebAssembly
 * kernels), for every algorithm and every layout (dense,
 * partial supports, one machine cut into row ranges); the runner releases the threads
 * however a run ends (converged, cancelled either way, diverged, abandoned, failed); no thread
 * outlives its run. No timing is asserted.
 */
import { describe, expect, it } from 'vitest';
import { ALGORITHM_IDS, algorithms, type AlgorithmId } from '../../../src/solvers/algorithms/registry.js';
import { gradientRowChunks } from '../../../src/solvers/machines/gradientPass.js';
import type { IterativeMethod, Parameters } from '../../../src/solvers/algorithms/types.js';
import { runCooperatively } from '../../../src/solvers/cooperative.js';
import { activeSolverWorkers, runningSolverWorkers } from '../../../src/solvers/parallel/engine.js';
import { setSolverThreads } from '../../../src/solvers/parallel/threads.js';
import { runAlgorithm, runAlgorithmWork } from '../../../src/solvers/runner/runAlgorithm.js';
import { KERNEL_SETS, kernelSetSkipReason } from '../../support/backends.js';
import { allWorkersExited, forceThreads, testSystems, wellConditionedSystem, type TestSystem } from './support.js';

const systems = testSystems();

function create(t: TestSystem, id: AlgorithmId, threads: number, parameters?: Parameters): IterativeMethod {
  setSolverThreads(threads);
  try {
    return algorithms[id].create(t.system, parameters ?? algorithms[id].optimal(t.spectral).parameters);
  } finally {
    setSolverThreads(2);
  }
}

for (const set of KERNEL_SETS) {
  const skipReason = kernelSetSkipReason(set);
  describe.skipIf(skipReason !== '')(`threaded iterations, ${set.label}${skipReason ? ` [${skipReason}]` : ''}`, () => {
    forceThreads(2, set.backend, set.wasm);

    for (const t of systems) {
      for (const id of ALGORITHM_IDS) {
        it(`${id}, ${t.label}: exactly the iterates, residuals and consensus distances of one thread`, () => {
          const single = create(t, id, 1);
          const threaded = create(t, id, 2);
          try {
            expect(single.threads).toBe(1);
            // Projection methods' chunks are machines (one machine: nothing to share); gradient methods' are row ranges.
            const projection = algorithms[id].family === 'projection';
            expect(threaded.threads).toBe(Math.min(2, projection ? t.system.m : gradientRowChunks(t.system).ranges.length));
            for (let k = 0; k <= 30; k++) {
              if (k > 0) {
                single.step();
                threaded.step();
              }
              // The chunks' outputs are reduced in chunk order whichever thread ran them: bit for bit equal.
              expect(Array.from(threaded.estimate)).toEqual(Array.from(single.estimate));
              expect(threaded.residualNormSquared()).toBe(single.residualNormSquared());
              expect(threaded.consensusDistance()).toBe(single.consensusDistance());
            }
          } finally {
            single.dispose?.();
            threaded.dispose?.();
          }
          expect(activeSolverWorkers()).toBe(0);
        });
      }
    }
  });
}

describe('threaded iterations', () => {
  forceThreads(2);

  it('three threads (more than cores), and a single-thread reference agree exactly', () => {
    const t = systems[0];
    for (const id of ['apc', 'cimmino', 'dhbm'] as const) {
      const single = create(t, id, 1);
      const threaded = create(t, id, 3);
      try {
        expect(threaded.threads).toBe(3);
        for (let k = 0; k < 20; k++) {
          single.step();
          threaded.step();
        }
        expect(Array.from(threaded.estimate)).toEqual(Array.from(single.estimate));
      } finally {
        single.dispose?.();
        threaded.dispose?.();
      }
    }
    expect(activeSolverWorkers()).toBe(0);
  });

  it('a disposed method cannot step, and dispose is idempotent', () => {
    const method = create(systems[0], 'apc', 2);
    expect(method.threads).toBe(2);
    expect(activeSolverWorkers()).toBe(1);
    method.dispose?.();
    method.dispose?.();
    expect(activeSolverWorkers()).toBe(0);
    expect(() => method.step()).toThrow(/threads were released/);
  });
});

describe('threaded runs through the runner', () => {
  forceThreads(2);
  const t = wellConditionedSystem(80, 4, 21);

  it('converge like single-thread runs, report their threads, and release them', async () => {
    for (const id of ALGORITHM_IDS) {
      const threaded = runAlgorithm(t.system, id, t.spectral, { tolerance: 1e-10, maxIterations: 20_000 });
      expect(activeSolverWorkers()).toBe(0);
      setSolverThreads(1);
      const single = runAlgorithm(t.system, id, t.spectral, { tolerance: 1e-10, maxIterations: 20_000 });
      setSolverThreads(2);
      expect(threaded.threads).toBe(2);
      expect(single.threads).toBe(1);
      expect(threaded.status).toBe('converged');
      expect(single.status).toBe('converged');
      expect(threaded.iterations).toBe(single.iterations);
      expect(Array.from(threaded.solution)).toEqual(Array.from(single.solution));
    }
    await allWorkersExited(runningSolverWorkers);
  });

  it('cancelled by the abort signal between iterations: the threads end with the run', async () => {
    const controller = new AbortController();
    const r = runAlgorithm(t.system, 'dgd', t.spectral, {
      tolerance: 1e-14,
      maxIterations: 1_000_000,
      signal: controller.signal,
      progressIntervalMs: 0,
      onProgress: (progress) => {
        if ((progress.iteration ?? 0) >= 50) controller.abort();
      },
    });
    expect(r.status).toBe('cancelled');
    expect(r.threads).toBe(2);
    expect(r.iterations).toBe(50);
    expect(activeSolverWorkers()).toBe(0);
    await allWorkersExited(runningSolverWorkers);
  });

  it('cancelled cooperatively (CancelledError thrown into the generator) mid-run: the threads end with the run', async () => {
    const controller = new AbortController();
    let seen = 0;
    const pending = runCooperatively(runAlgorithmWork(t.system, 'apc', t.spectral, { tolerance: 1e-300, maxIterations: 10_000_000 }), {
      signal: controller.signal,
      sliceMs: 1,
      progressIntervalMs: 0,
      onProgress: (progress) => {
        seen = progress.iteration ?? seen;
        if (seen >= 20 && activeSolverWorkers() > 0) controller.abort();
      },
    });
    const r = await pending;
    expect(r.status).toBe('cancelled');
    expect(r.threads).toBe(2);
    expect(r.iterations).toBeGreaterThanOrEqual(20);
    expect(activeSolverWorkers()).toBe(0);
    await allWorkersExited(runningSolverWorkers);
  });

  it('diverged (APC with gamma and eta swapped): the threads end with the run', async () => {
    const { gamma, eta } = algorithms.apc.optimal(t.spectral).parameters;
    const r = runAlgorithm(t.system, 'apc', t.spectral, {
      tolerance: 1e-12,
      maxIterations: 1_000_000,
      parameters: { gamma: eta, eta: gamma },
    });
    expect(r.status).toBe('diverged');
    expect(r.threads).toBe(2);
    expect(activeSolverWorkers()).toBe(0);
    await allWorkersExited(runningSolverWorkers);
  });

  it('an abandoned run (generator closed with return()) releases its threads', async () => {
    const work = runAlgorithmWork(t.system, 'dnag', t.spectral, { tolerance: 1e-300, maxIterations: 1_000_000 });
    for (let k = 0; k < 10; k++) work.next();
    expect(activeSolverWorkers()).toBe(1);
    work.return(undefined as never);
    expect(activeSolverWorkers()).toBe(0);
    await allWorkersExited(runningSolverWorkers);
  });

  it('many runs in a row leave no thread behind', async () => {
    for (let k = 0; k < 8; k++) {
      const id = ALGORITHM_IDS[k % ALGORITHM_IDS.length];
      runAlgorithm(t.system, id, t.spectral, { tolerance: 1e-6, maxIterations: 30 });
      expect(activeSolverWorkers()).toBe(0);
    }
    await allWorkersExited(runningSolverWorkers);
  });
});
