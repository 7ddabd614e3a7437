/**
 * Snapshots of a run over several right-hand sides (src/solvers/runner/multipleRhs.ts,
 * BlockRunSnapshot in src/solvers/runner/snapshot.ts): a block run snapshotted between two rounds,
 * abandoned, and resumed from a deep copy of the snapshot on a freshly built block method ends with
 * the uninterrupted run's columns: each column's status, iterations, stop reason and residual, its
 * solution and trace to the bit. Every algorithm, on dense storage (full and partial column
 * supports) and CSR, with a column that ends at once (b = 0), columns that end at different
 * iterations (snapshots before, between and after their ends), a small trace cap; snapshots taken
 * on two threads resumed on one; a snapshot that does not fit the run is refused.
 */
import { describe, expect, it } from 'vitest';
import { ALGORITHM_IDS, type AlgorithmId } from '../../../src/solvers/algorithms/registry.js';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';
import { analyze, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { buildDistributedSystem, type DistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { fromRows, type CsrMatrix, type DenseMatrix } from '../../../src/solvers/matrix.js';
import { activeSolverWorkers } from '../../../src/solvers/parallel/engine.js';
import { setParallelMinWork, setSolverThreads } from '../../../src/solvers/parallel/threads.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { startMultipleRhsRun, type ResumableBlockRunOptions } from '../../../src/solvers/runner/multipleRhs.js';
import { SnapshotMismatchError, type BlockRunSnapshot } from '../../../src/solvers/runner/snapshot.js';
import type { RunResult } from '../../../src/solvers/runner/types.js';
import { csrToDense } from '../../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';

/** A diagonally dominant dense matrix with random off-diagonal entries. */
function denseMatrix(n: number): DenseMatrix {
  const random = new SeededRandom(7);
  return fromRows(Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? n / 2 : random.nextDouble() - 0.5))));
}

interface Case {
  readonly label: string;
  readonly system: DistributedSystem;
  readonly spectral: SpectralData;
  readonly rhs: Float64Array[];
}

/**
 * The right-hand sides: b = 0 (converged at iteration 0 under the absolute tolerance), a random b,
 * and a random b with one entry 1e6 times the rest (its columns end at other iterations).
 */
function rightHandSides(n: number): Float64Array[] {
  const random = new SeededRandom(11);
  const b = (): Float64Array => Float64Array.from({ length: n }, () => random.nextDouble() * 2 - 1);
  const spiked = b();
  spiked[0] *= 1e6;
  return [new Float64Array(n), b(), spiked, b()];
}

function cases(): Case[] {
  const matrices: [string, DenseMatrix | CsrMatrix, number][] = [
    ['dense n = 24', denseMatrix(24), 4],
    ['dense banded, partial supports', csrToDense(poisson2d(6)), 3],
    ['CSR Poisson 6 x 6', poisson2d(6), 3],
  ];
  return matrices.map(([label, A, m]) => {
    const system = buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
    return { label, system, spectral: spectralDataOf(analyze(system)), rhs: rightHandSides(A.rows) };
  });
}

const OPTIONS: ResumableBlockRunOptions = { tolerance: 1e-10, absoluteTolerance: 1e-300, maxIterations: 20_000, traceCap: 8 };

/** The snapshot as another process would read it back: every array copied (the block's are views of the run's own). */
function deepCopy<T>(value: T): T {
  if (value instanceof Float64Array || value instanceof Int32Array) return value.slice() as T;
  if (Array.isArray(value)) return value.map((item: unknown) => deepCopy(item)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, deepCopy(item)])) as T;
  }
  return value;
}

function withThreads<T>(threads: number, body: () => T): T {
  setSolverThreads(threads);
  const minWork = setParallelMinWork(0);
  try {
    return body();
  } finally {
    setParallelMinWork(minWork);
    setSolverThreads('auto');
  }
}

function runFrom(c: Case, id: AlgorithmId, options: ResumableBlockRunOptions, threads = 1): RunResult[] {
  return withThreads(threads, () => runSync(startMultipleRhsRun(c.system, id, c.spectral, options, c.rhs).work));
}

/** Runs `rounds` rounds, snapshots, abandons the run (its block disposed), and gives back a copy of the snapshot. */
function snapshotAt(c: Case, id: AlgorithmId, options: ResumableBlockRunOptions, rounds: number, threads = 1): BlockRunSnapshot {
  return withThreads(threads, () => {
    const run = startMultipleRhsRun(c.system, id, c.spectral, options, c.rhs);
    expect(run.snapshot()).toBeNull(); // not started
    for (let k = 0; k < rounds; k++) expect(run.work.next().done).toBe(false);
    const snapshot = deepCopy(run.snapshot()!);
    run.work.return(undefined as never);
    expect(run.snapshot()).toBeNull(); // ended
    return snapshot;
  });
}

const bits = (array: Float64Array | Int32Array | null): number[] | null =>
  array === null ? null : Array.from(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));

/** Equal columns: every field but the wall time and threads, numbers with Object.is, arrays byte for byte. */
function expectSameColumns(resumed: RunResult[], uninterrupted: RunResult[]): void {
  expect(resumed).toHaveLength(uninterrupted.length);
  resumed.forEach((r, j) => {
    const u = uninterrupted[j];
    expect([r.status, r.iterations, r.stopReason], `column ${j}`).toEqual([u.status, u.iterations, u.stopReason]);
    for (const key of ['relativeResidual', 'empiricalRate', 'theoreticalRate'] as const) {
      expect(Object.is(r[key], u[key]), `column ${j} ${key}: ${r[key]} vs ${u[key]}`).toBe(true);
    }
    expect(r.parameters).toEqual(u.parameters);
    expect(r.growth).toEqual(u.growth);
    expect(bits(r.solution), `column ${j} solution`).toEqual(bits(u.solution));
    for (const key of ['iteration', 'relativeResidual', 'relativeError', 'consensusDistance'] as const) {
      expect(bits(r.trace[key]), `column ${j} trace ${key}`).toEqual(bits(u.trace[key]));
    }
    expect([r.trace.totalIterations, r.trace.downsampled]).toEqual([u.trace.totalIterations, u.trace.downsampled]);
  });
}

describe('a run over several right-hand sides resumed from a snapshot ends with the uninterrupted columns', () => {
  for (const c of cases()) {
    for (const id of ALGORITHM_IDS) {
      it(`${id}, ${c.label}: snapshots before, between and after the columns' ends`, () => {
        const uninterrupted = runFrom(c, id, OPTIONS);
        const iterations = uninterrupted.map((column) => column.iterations);
        expect(uninterrupted.every((column) => column.status === 'converged')).toBe(true);
        expect(iterations[0]).toBe(0);
        const last = Math.max(...iterations);
        expect(last).toBeGreaterThan(8);
        expect(uninterrupted.some((column) => column.trace.downsampled)).toBe(true);
        // Rounds: the first, one before the first running column ends, one just after it, the last.
        const firstEnd = Math.min(...iterations.slice(1));
        const rounds = [...new Set([1, Math.max(1, firstEnd - 1), Math.min(firstEnd + 1, last - 1), last - 1])];
        for (const at of rounds) {
          const snapshot = snapshotAt(c, id, OPTIONS, at);
          expect(snapshot.iteration).toBe(at);
          // The columns that had ended by then are in it as they ended; the others run on from it.
          snapshot.columns.forEach((column, j) => {
            if ('ended' in column) {
              expect(iterations[j]).toBeLessThanOrEqual(at);
              expect(bits(column.ended.solution)).toEqual(bits(uninterrupted[j].solution));
            } else expect(iterations[j]).toBeGreaterThan(at);
          });
          expectSameColumns(runFrom(c, id, { ...OPTIONS, resumeFrom: snapshot }), uninterrupted);
        }
      });
    }
  }

  it('resumed twice, and at maxIterations', () => {
    const [c] = cases();
    const options = { ...OPTIONS, tolerance: 1e-300, maxIterations: 60 };
    for (const id of ['dhbm', 'apc'] as const) {
      const uninterrupted = runFrom(c, id, options);
      expect(uninterrupted.slice(1).every((column) => column.status === 'max-iterations')).toBe(true);
      const first = snapshotAt(c, id, options, 20);
      const again = (() => {
        const run = startMultipleRhsRun(c.system, id, c.spectral, { ...options, resumeFrom: first }, c.rhs);
        for (let k = 0; k < 25; k++) run.work.next();
        const snapshot = deepCopy(run.snapshot()!);
        run.work.return(undefined as never);
        return snapshot;
      })();
      expect(again.iteration).toBe(45);
      expectSameColumns(runFrom(c, id, { ...options, resumeFrom: again }), uninterrupted);
      expectSameColumns(runFrom(c, id, { ...options, resumeFrom: first }), uninterrupted);
    }
  });
});

describe('threaded block runs resume exactly too', () => {
  for (const c of cases().filter((x) => x.label !== 'dense n = 24')) {
    for (const id of ALGORITHM_IDS) {
      it(`${id}, ${c.label}: snapshot on two threads resumed on one`, () => {
        const uninterrupted = runFrom(c, id, OPTIONS, 1);
        const at = Math.floor(Math.max(...uninterrupted.map((column) => column.iterations)) / 3) + 1;
        expectSameColumns(runFrom(c, id, { ...OPTIONS, resumeFrom: snapshotAt(c, id, OPTIONS, at, 2) }, 1), uninterrupted);
        expect(activeSolverWorkers()).toBe(0);
      });
    }
  }
});

describe('a block snapshot that is not of the run is refused', () => {
  const [c] = cases();
  const refusal = (id: AlgorithmId, resumeFrom: BlockRunSnapshot, more: Partial<ResumableBlockRunOptions> = {}): unknown => {
    try {
      runFrom(c, id, { ...OPTIONS, ...more, resumeFrom });
    } catch (error) {
      return error;
    }
    return null;
  };

  it('another algorithm, other parameters, other columns, blocks of other lengths, another trace cap', () => {
    const dhbm = snapshotAt(c, 'dhbm', OPTIONS, 5);
    expect(dhbm.block.active).toEqual([1, 2, 3]);
    // x and D-HBM's z, n x 3 each.
    expect(dhbm.block.blocks.map((block) => block.length)).toEqual([24 * 3, 24 * 3]);
    expect(refusal('dgd', dhbm)).toBeInstanceOf(SnapshotMismatchError);
    const parameters = { ...dhbm.parameters, beta: dhbm.parameters.beta * (1 + Number.EPSILON) };
    expect(refusal('dhbm', dhbm, { parameters })).toBeInstanceOf(SnapshotMismatchError);
    expect(refusal('dhbm', dhbm, { traceCap: 100 })).toBeInstanceOf(SnapshotMismatchError);
    expect(refusal('dhbm', { ...dhbm, columns: dhbm.columns.slice(0, 3) })).toBeInstanceOf(SnapshotMismatchError);
    expect(refusal('dhbm', { ...dhbm, block: { ...dhbm.block, active: [0, 1, 2, 3] } })).toBeInstanceOf(SnapshotMismatchError);
    expect(refusal('dhbm', { ...dhbm, block: { ...dhbm.block, blocks: dhbm.block.blocks.slice(0, 1) } })).toBeInstanceOf(
      SnapshotMismatchError,
    );
    const apc = snapshotAt(c, 'apc', OPTIONS, 5);
    const [x, ...rest] = apc.block.blocks;
    expect(refusal('apc', { ...apc, block: { ...apc.block, blocks: [x.subarray(1), ...rest] } })).toBeInstanceOf(SnapshotMismatchError);
    // As it is, it continues fine.
    expect(refusal('apc', apc)).toBeNull();
    expect(activeSolverWorkers()).toBe(0);
  });
});
