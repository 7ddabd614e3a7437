/**
 * A sparse setup on threads (src/solvers/distributed/sparseSystem.ts through ../parallel/taskPool.ts)
 * builds exactly the machines of one thread, on each backend: the same rows, supports, right-hand
 * sides, Gram factors (bit for bit) and condition estimates, and the same refusal naming the same
 * machine and row; when threads apply (threadsForSetupTasks).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import type { CsrMachineData, CsrSystem } from '../../../src/solvers/distributed/sparseSystem.js';
import { InvalidParameterError, SingularMatrixError } from '../../../src/solvers/errors.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import type { PartitionInput } from '../../../src/solvers/input/types.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { activeBackend } from '../../../src/solvers/linalg/backend.js';
import { algorithms } from '../../../src/solvers/algorithms/registry.js';
import { useWasmKernels, wasmKernelsEnabled, wasmKernelsUnavailableReason } from '../../../src/solvers/linalg/wasmRowKernels.js';
import {
  DEFAULT_PARALLEL_TASKS_MIN_NNZ,
  setParallelMinWork,
  setParallelTasksMinNnz,
  setSolverThreads,
  threadsForSetupTasks,
} from '../../../src/solvers/parallel/threads.js';
import { gramFactorizer } from '../../../src/solvers/machines/placement.js';
import { activeSolverWorkers } from '../../../src/solvers/parallel/workerThreads.js';
import { selectRows, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import { describeEachBackend } from '../../support/backends.js';
import { onSetupThreads } from '../../support/setupThreads.js';
import { thrown } from '../../support/thrown.js';
import { heldTasksWork } from '../parallel/heldTasks.js';

function build(A: CsrMatrix, partition: PartitionInput, threads: number): CsrSystem {
  const system = onSetupThreads(threads, () => buildDistributedSystem(createProblem({ A, partition })));
  if (system.storage !== 'csr') throw new Error('expected a CSR system');
  return system;
}

describe('threads for a sparse setup', () => {
  it('apply from DEFAULT_PARALLEL_TASKS_MIN_NNZ nonzeros, at most one per machine, as the thread setting allows', () => {
    setSolverThreads(4);
    try {
      expect(threadsForSetupTasks(DEFAULT_PARALLEL_TASKS_MIN_NNZ - 1, 100)).toBe(1);
      expect(threadsForSetupTasks(DEFAULT_PARALLEL_TASKS_MIN_NNZ, 100)).toBe(4);
      expect(threadsForSetupTasks(DEFAULT_PARALLEL_TASKS_MIN_NNZ, 3)).toBe(3);
      for (const bad of [-1, Number.NaN]) expect(() => setParallelTasksMinNnz(bad)).toThrow(InvalidParameterError);
    } finally {
      setSolverThreads('auto');
    }
  });
});

describeEachBackend('a sparse setup on two threads', () => {
  beforeAll(() => expect(activeSolverWorkers()).toBe(0));
  afterAll(() => expect(activeSolverWorkers()).toBe(0));

  /** Machine `machine` as `reference` holds it, bit for bit. */
  const expectSameMachine = (machine: CsrMachineData, reference: CsrMachineData): void => {
    expect(machine.index).toBe(reference.index);
    for (const key of ['rows', 'b', 'cols'] as const) expect(Array.from(machine[key]), key).toEqual(Array.from(reference[key]));
    for (const key of ['rowPtr', 'colIdx', 'values'] as const)
      expect(Array.from(machine.a[key]), key).toEqual(Array.from(reference.a[key]));
    const { symbolic } = machine.gram;
    expect(Array.from(symbolic.ordering.perm)).toEqual(Array.from(reference.gram.symbolic.ordering.perm));
    expect(Array.from(symbolic.colPtr)).toEqual(Array.from(reference.gram.symbolic.colPtr));
    expect(Array.from(symbolic.rowIdx)).toEqual(Array.from(reference.gram.symbolic.rowIdx));
    expect(Array.from(machine.gram.values)).toEqual(Array.from(reference.gram.values));
    expect(machine.gramCondition).toBe(reference.gramCondition);
    expect(machine.gramRefinement).toBe(reference.gramRefinement);
  };

  it('builds exactly the machines of one thread', () => {
    const A = poisson2d(40);
    const partition = { machines: 9 };
    const single = build(A, partition, 1);
    const threaded = build(A, partition, 2);
    expect(threaded.machines).toHaveLength(9);
    threaded.machines.forEach((machine, i) => expectSameMachine(machine, single.machines[i]));
  });

  it("gives each machine the Gram factor its own G gives alone, where machines share G's pattern (its analysis taken again) and where not", () => {
    // Strips of 5 lines of a 40 x 40 grid (200 rows), which share G_i's pattern, but machines 1 and 7 trade a row
    // (250 and 1599): 200 rows each still, each of a pattern of its own, machine 1 right after one of the shared one.
    const A = poisson2d(40);
    const assignment = Array.from({ length: A.rows }, (_, row) => (row === 250 ? 7 : row === 1599 ? 1 : Math.floor(row / 200)));
    const patterns = new Set<string>();
    for (const threads of [1, 2]) {
      const system = build(A, { assignment }, threads);
      expect(system.machines.map((machine) => machine.p)).toEqual(new Array(8).fill(200));
      for (const machine of system.machines) {
        const g = gramMatrix(selectRows(A, machine.rows));
        patterns.add(Array.from(g.rowPtr).join() + '|' + Array.from(g.colIdx).join());
        const alone = gramFactorizer()(g);
        expect(Array.from(machine.gram.symbolic.ordering.perm)).toEqual(Array.from(alone.symbolic.ordering.perm));
        expect(Array.from(machine.gram.symbolic.parent)).toEqual(Array.from(alone.symbolic.parent));
        expect(Array.from(machine.gram.symbolic.colPtr)).toEqual(Array.from(alone.symbolic.colPtr));
        expect(Array.from(machine.gram.symbolic.rowIdx)).toEqual(Array.from(alone.symbolic.rowIdx));
        expect(Array.from(machine.gram.values)).toEqual(Array.from(alone.values));
      }
    }
    // The strips' one pattern, machine 1's and machine 7's.
    expect(patterns.size).toBe(3);
  });

  it('builds on a worker thread exactly the machines the calling thread builds', () => {
    const A = poisson2d(40);
    const single = build(A, { machines: 9 }, 1);
    const { n, b, partition } = single;
    const machines = runSync(heldTasksWork<CsrMachineData>('setup', { n, A, b, rowsOf: partition.rowsOf }, 9, activeBackend()));
    // Results from a worker arrive in shared memory: task 0 held the calling thread until the worker ran one.
    expect(machines.filter((machine) => machine.gram.values.buffer instanceof SharedArrayBuffer).length).toBeGreaterThan(0);
    machines.forEach((machine, i) => expectSameMachine(machine, single.machines[i]));
  });

  it('refuses a machine whose rows are dependent as one thread does, naming the same machine and row', () => {
    // Poisson's rows with row 130 repeated as row 131, on machine 2 of 8 contiguous strips (rows 100-149).
    const base = poisson2d(20);
    const rows: number[][] = [];
    const colsOf: number[][] = [];
    for (let k = 0; k < base.rows; k++) {
      const source = k === 131 ? 130 : k;
      const entries = [];
      for (let e = base.rowPtr[source]; e < base.rowPtr[source + 1]; e++) entries.push(e);
      rows.push(entries.map((e) => base.values[e]));
      colsOf.push(entries.map((e) => base.colIdx[e]));
    }
    const rowPtr = new Int32Array(base.rows + 1);
    rows.forEach((values, k) => (rowPtr[k + 1] = rowPtr[k] + values.length));
    const A: CsrMatrix = {
      rows: base.rows,
      cols: base.cols,
      rowPtr,
      colIdx: Int32Array.from(colsOf.flat()),
      values: Float64Array.from(rows.flat()),
    };
    const partition = { sizes: [50, 50, 50, 50, 50, 50, 50, 50] };
    const single = thrown(() => build(A, partition, 1));
    const threaded = thrown(() => build(A, partition, 2));
    expect(single).toBeInstanceOf(SingularMatrixError);
    expect(threaded).toBeInstanceOf(SingularMatrixError);
    expect(threaded.message).toBe(single.message);
    expect((threaded as SingularMatrixError).details).toEqual((single as SingularMatrixError).details);
    expect((threaded as SingularMatrixError).details).toMatchObject({ machine: 2 });
    // The CSR path's factorization squares the rows' conditioning: the refusal names the routes that take a nonsingular
    // A whose machine holds nearly dependent rows (the dense path, another partition).
    expect(single.message).toMatch(/row 13[01] of A .* numerically a linear combination/);
    expect(single.message).toMatch(/dense path .* or a partition that puts the nearly dependent rows on different machines/);
  });
});

describeEachBackend("a sparse setup on threads and a gradient run's arena", (backend) => {
  const wasm = wasmKernelsUnavailableReason() === '';
  let wasmBefore: boolean;
  beforeAll(() => {
    wasmBefore = wasmKernelsEnabled();
    if (wasm) useWasmKernels(true);
  });
  afterAll(() => {
    useWasmKernels(wasmBefore);
    expect(activeSolverWorkers()).toBe(0);
  });

  /** 60 D-HBM iterates on two threads, every run's chunks on a thread of their own (no work threshold). */
  const dhbmIterates = (system: CsrSystem, runs = 1): Float64Array[] => {
    setSolverThreads(2);
    const previous = setParallelMinWork(0);
    const methods = Array.from({ length: runs }, () => algorithms.dhbm.create(system, { alpha: 1 / 16, beta: 0.5 }));
    try {
      for (const method of methods) expect(method.threads).toBe(2);
      // Several runs alive at once step in turn: each reads its own regions.
      for (let k = 0; k < 60; k++) for (const method of methods) method.step();
      return methods.map((method) => Float64Array.from(method.estimate));
    } finally {
      for (const method of methods) method.dispose?.();
      setParallelMinWork(previous);
      setSolverThreads('auto');
    }
  };

  it(`${backend === 'typescript' && wasm ? 'stages' : 'does not stage'} its machines' values, and the runs' iterates are those of a setup on one thread`, () => {
    const A = poisson2d(40);
    const single = build(A, { machines: 9 }, 1);
    const threaded = build(A, { machines: 9 }, 2);
    expect(single.arenaStaging ?? null).toBeNull();
    const staging = threaded.arenaStaging ?? null;
    if (backend === 'typescript' && wasm) {
      if (staging === null) throw new Error('expected a staging memory');
      // Each machine's values are in the staging memory (the worker-built ones viewed on this thread's buffer).
      for (const machine of threaded.machines) expect(staging.holds(machine.a.values)).toBe(true);
    } else expect(staging).toBeNull();
    threaded.machines.forEach((machine, i) => expect(Array.from(machine.a.values)).toEqual(Array.from(single.machines[i].a.values)));
    const reference = dhbmIterates(single)[0];
    const end = staging?.end;
    // Twice in a row (the second run takes the first one's regions again, zeroed), then two runs alive at once.
    for (const x of [...dhbmIterates(threaded), ...dhbmIterates(threaded), ...dhbmIterates(threaded, 2)])
      expect(Array.from(x)).toEqual(Array.from(reference));
    // Every run handed its regions back: the staging memory ends where the setup left it.
    expect(staging?.end).toBe(end);
  });
});
