/**
 * Snapshots of a run (src/solvers/runner/snapshot.ts): a run snapshotted between two iterations,
 * abandoned, and resumed from a structured clone of the snapshot (what a checkpoint in another
 * process gives back) on a freshly built method ends exactly as the uninterrupted run: the same
 * status, iterations, stop reason, residual, error and rate to the bit, the same solution and trace.
 * Every algorithm, on dense and CSR storage, with a small trace cap (the recorder thinned out, a
 * pending last point), with and without a known solution, converging and stopped at maxIterations,
 * on one thread and on two (either way round). A snapshot that is not of the run is refused.
 */
import { describe, expect, it } from 'vitest';
import { analyze, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import { ALGORITHM_IDS, algorithms, type AlgorithmId } from '../../../src/solvers/algorithms/registry.js';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { buildDistributedSystem, type DistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { activeSolverWorkers } from '../../../src/solvers/parallel/engine.js';
import { setSolverThreads } from '../../../src/solvers/parallel/threads.js';
import { startRun, type ResumableRunOptions } from '../../../src/solvers/runner/runAlgorithm.js';
import { SnapshotMismatchError, type RunSnapshot } from '../../../src/solvers/runner/snapshot.js';
import type { RunResult } from '../../../src/solvers/runner/types.js';
import { csrFromDense } from '../../../src/solvers/sparse/csr.js';
import { forceThreads, wellConditionedSystem } from '../parallel/support.js';

interface Case {
  readonly label: string;
  readonly system: DistributedSystem;
  readonly spectral: SpectralData;
}

/** A random system (kappa ~ 2: every algorithm converges in tens to hundreds of iterations), dense and CSR, b = A 1 or a given b. */
function cases(): Case[] {
  const dense = wellConditionedSystem(48, 4, 31);
  const { A } = dense.system;
  const partition = { assignment: Array.from(dense.system.partition.assignment) };
  const csr = buildDistributedSystem(createProblem({ A: csrFromDense(A), partition }));
  const rhs = Float64Array.from({ length: A.rows }, (_, i) => Math.sin(i + 1));
  const withRhs = buildDistributedSystem(createProblem({ A, rhs, partition }));
  // A tridiagonal matrix on contiguous machines: partial column supports (APC's CSR offsets live on
  // them) overlapping at the machines' ends, so that projection methods take more than one step.
  const tridiagonal = Array.from({ length: 60 }, (_, i) =>
    Array.from({ length: 60 }, (_, j) => (i === j ? 4 + Math.cos(i) : Math.abs(i - j) === 1 ? -1 : 0)),
  );
  const sparse = buildDistributedSystem(createProblem({ A: csrFromDense(fromRows(tridiagonal)), partition: { machines: 4 } }));
  return [
    { label: 'dense', system: dense.system, spectral: dense.spectral },
    { label: 'CSR', system: csr, spectral: dense.spectral },
    { label: 'dense, b given (no known solution)', system: withRhs, spectral: dense.spectral },
    { label: 'CSR, partial supports', system: sparse, spectral: spectralDataOf(analyze(sparse)) },
  ];
}

const bits = (array: Float64Array | Int32Array): number[] => Array.from(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));

/** Equal runs: every field but the wall time and threads, numbers compared with Object.is, arrays byte for byte. */
function expectSameRun(resumed: RunResult, uninterrupted: RunResult): void {
  expect(resumed.status).toBe(uninterrupted.status);
  expect(resumed.iterations).toBe(uninterrupted.iterations);
  expect(resumed.stopReason).toBe(uninterrupted.stopReason);
  for (const key of ['relativeResidual', 'relativeError', 'empiricalRate', 'theoreticalRate'] as const) {
    expect(Object.is(resumed[key], uninterrupted[key]), `${key}: ${resumed[key]} vs ${uninterrupted[key]}`).toBe(true);
  }
  expect(resumed.parameters).toEqual(uninterrupted.parameters);
  expect(bits(resumed.solution)).toEqual(bits(uninterrupted.solution));
  const [r, u] = [resumed.trace, uninterrupted.trace];
  expect(bits(r.iteration)).toEqual(bits(u.iteration));
  expect(bits(r.relativeResidual)).toEqual(bits(u.relativeResidual));
  expect(r.relativeError === null ? null : bits(r.relativeError)).toEqual(u.relativeError === null ? null : bits(u.relativeError));
  expect(r.consensusDistance === null ? null : bits(r.consensusDistance)).toEqual(
    u.consensusDistance === null ? null : bits(u.consensusDistance),
  );
  expect([r.totalIterations, r.cap, r.downsampled]).toEqual([u.totalIterations, u.cap, u.downsampled]);
}

function withThreads<T>(threads: number, body: () => T): T {
  setSolverThreads(threads);
  try {
    return body();
  } finally {
    setSolverThreads('auto');
  }
}

/** Runs `iterations` iterations, snapshots, abandons the run (its method disposed); the snapshot as another process would read it back. */
function snapshotAt(c: Case, id: AlgorithmId, options: ResumableRunOptions, iterations: number, threads = 1): RunSnapshot {
  return withThreads(threads, () => {
    const run = startRun(c.system, id, c.spectral, options);
    expect(run.snapshot()).toBeNull(); // not started
    for (let k = 0; k < iterations; k++) expect(run.work.next().done).toBe(false);
    const snapshot = run.snapshot();
    expect(snapshot).not.toBeNull();
    expect(snapshot!.iteration).toBe(iterations);
    run.work.return(undefined as never);
    expect(run.snapshot()).toBeNull(); // ended
    return structuredClone(snapshot!);
  });
}

function runFrom(c: Case, id: AlgorithmId, options: ResumableRunOptions, threads = 1): RunResult {
  return withThreads(threads, () => runSync(startRun(c.system, id, c.spectral, options).work));
}

describe('a run resumed from a snapshot ends exactly as the uninterrupted run', () => {
  for (const c of cases()) {
    for (const id of ALGORITHM_IDS) {
      it(`${id}, ${c.label}: converging, small trace cap, snapshots at several iterations`, () => {
        const options = { tolerance: 1e-12, maxIterations: 5000, traceCap: 16 };
        const uninterrupted = runFrom(c, id, options);
        expect(uninterrupted.iterations).toBeGreaterThan(8);
        expect(uninterrupted.trace.downsampled).toBe(true);
        for (const at of [1, 7, Math.floor(uninterrupted.iterations / 2), uninterrupted.iterations - 1]) {
          const resumed = runFrom(c, id, { ...options, resumeFrom: snapshotAt(c, id, options, at) });
          expectSameRun(resumed, uninterrupted);
        }
      });

      it(`${id}, ${c.label}: stopped at maxIterations, resumed twice`, () => {
        const options = { tolerance: 1e-300, maxIterations: 60 };
        const uninterrupted = runFrom(c, id, options);
        expect(uninterrupted.status).toBe('max-iterations');
        const first = snapshotAt(c, id, options, 20);
        // Resume, snapshot again later, resume from that one.
        const again = withThreads(1, () => {
          const run = startRun(c.system, id, c.spectral, { ...options, resumeFrom: first });
          for (let k = 0; k < 25; k++) run.work.next();
          const snapshot = run.snapshot()!;
          run.work.return(undefined as never);
          return structuredClone(snapshot);
        });
        expect(again.iteration).toBe(45);
        expectSameRun(runFrom(c, id, { ...options, resumeFrom: again }), uninterrupted);
        expectSameRun(runFrom(c, id, { ...options, resumeFrom: first }), uninterrupted);
      });
    }
  }
});

describe('threaded runs resume exactly too', () => {
  forceThreads(2);

  for (const c of cases().filter((x) => x.label === 'dense' || x.label === 'CSR, partial supports')) {
    for (const id of ALGORITHM_IDS) {
      it(`${id}, ${c.label}: snapshot on two threads resumed on one, and on one resumed on two`, () => {
        const options = { tolerance: 1e-12, maxIterations: 5000, traceCap: 32 };
        const uninterrupted = runFrom(c, id, options, 1);
        const at = Math.floor(uninterrupted.iterations / 3) + 1;
        const threaded = snapshotAt(c, id, options, at, 2);
        expectSameRun(runFrom(c, id, { ...options, resumeFrom: threaded }, 1), uninterrupted);
        const resumedThreaded = runFrom(c, id, { ...options, resumeFrom: snapshotAt(c, id, options, at, 1) }, 2);
        expect(resumedThreaded.threads).toBe(2);
        expectSameRun(resumedThreaded, uninterrupted);
        expect(activeSolverWorkers()).toBe(0);
      });
    }
  }
});

describe('a snapshot that is not of the run is refused', () => {
  const [c] = cases();
  const options = { tolerance: 1e-12, maxIterations: 500 };
  const refusal = (id: AlgorithmId, resumeFrom: RunSnapshot, more: Partial<ResumableRunOptions> = {}): unknown => {
    try {
      runFrom(c, id, { ...options, ...more, resumeFrom });
    } catch (error) {
      return error;
    }
    return null;
  };

  it('another algorithm, other parameters, another trace cap, arrays of other lengths, an iteration past maxIterations', () => {
    const dhbm = snapshotAt(c, 'dhbm', options, 5);
    expect(refusal('dgd', dhbm)).toBeInstanceOf(SnapshotMismatchError);
    const parameters = { ...dhbm.parameters, beta: dhbm.parameters.beta * (1 + Number.EPSILON) };
    expect(refusal('dhbm', dhbm, { parameters })).toBeInstanceOf(SnapshotMismatchError);
    expect(refusal('dhbm', dhbm, { traceCap: 100 })).toBeInstanceOf(SnapshotMismatchError);
    expect(refusal('dhbm', { ...dhbm, method: [dhbm.method[0]] })).toBeInstanceOf(SnapshotMismatchError);
    expect(refusal('dhbm', dhbm, { maxIterations: 4 })).toBeInstanceOf(SnapshotMismatchError);
    const apc = snapshotAt(c, 'apc', options, 5);
    expect(refusal('apc', { ...apc, method: apc.method.slice(0, 2) })).toBeInstanceOf(SnapshotMismatchError);
    expect(refusal('apc', { ...apc, method: [apc.method[0].subarray(1), ...apc.method.slice(1)] })).toBeInstanceOf(SnapshotMismatchError);
    // The snapshot of a run resumed as it is continues fine.
    expect(refusal('apc', apc)).toBeNull();
    expect(activeSolverWorkers()).toBe(0);
  });

  it('the state of every method holds the estimate first and is copies', () => {
    for (const id of ALGORITHM_IDS) {
      const method = algorithms[id].create(c.system, algorithms[id].optimal(c.spectral).parameters);
      try {
        method.step();
        const state = method.state();
        expect(Array.from(state[0])).toEqual(Array.from(method.estimate));
        method.step();
        expect(Array.from(state[0])).not.toEqual(Array.from(method.estimate));
      } finally {
        method.dispose?.();
      }
    }
  });
});
