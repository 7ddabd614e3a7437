/**
 * The dense machines' data (src/solvers/distributed/distributedSystem.ts): each machine's column support, the test
 * that its rows are independent (relative to its largest row, whose norm is read from R), and the system made from R and
 * the QR's kept reflectors (the partition advisor's candidates) against the one built at once.
 */
import { expect, it } from 'vitest';
import { buildDistributedSystem, createProblem } from '../../../src/solvers/index.js';
import type { DenseSystem } from '../../../src/solvers/machines/machineData.js';
import { buildDenseFactorsWork, denseSystemOfFactorsWork } from '../../../src/solvers/distributed/distributedSystem.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { kernelsOf, selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { nativeBlas } from '../../../src/solvers/linalg/backend.js';
import { SingularMatrixError } from '../../../src/solvers/errors.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { describeEachBackend } from '../../support/backends.js';

/** n x n tridiagonal (2 on the diagonal, -1 beside it) with `scale` on row `scaledRow`. */
function tridiagonal(n: number, scaledRow = -1, scale = 1): number[][] {
  return Array.from({ length: n }, (_, i) =>
    Array.from({ length: n }, (_, j) => (i === j ? 2 : Math.abs(i - j) === 1 ? -1 : 0) * (i === scaledRow ? scale : 1)),
  );
}

/** The columns where some row of `rows` is nonzero, by brute force. */
function supportOf(rows: number[][]): number[] {
  return rows[0].map((_, j) => j).filter((j) => rows.some((row) => row[j] !== 0));
}

describeEachBackend('dense machines', () => {
  it("holds each machine's rows on its column support: every column of a dense matrix, the band of a banded one", () => {
    const banded = tridiagonal(12);
    const system = buildDistributedSystem(createProblem({ A: fromRows(banded), partition: { machines: 3 } }));
    for (const machine of system.machines) {
      const rows = [...machine.rows].map((k) => banded[k]);
      expect([...machine.cols]).toEqual(supportOf(rows));
      expect(machine.full).toBe(false);
    }
    const dense = Array.from({ length: 6 }, (_, i) => Array.from({ length: 6 }, (_, j) => 1 + ((i * 7 + j * 3) % 5) + (i === j ? 10 : 0)));
    const full = buildDistributedSystem(createProblem({ A: fromRows(dense), partition: { machines: 2 } }));
    for (const machine of full.machines) {
      expect([...machine.cols]).toEqual([0, 1, 2, 3, 4, 5]);
      expect(machine.full).toBe(true);
    }
  });

  it('refuses a machine whose rows are dependent, naming the row, and keeps a row that is only much shorter', () => {
    // Row 2 = row 0 + row 1 on machine 0 (rows 0-2); A is then singular.
    const rows = [
      [4, 1, 0, 0, 1, 0],
      [1, 5, 1, 0, 0, 1],
      [5, 6, 1, 0, 1, 1],
      [0, 1, 6, 1, 0, 0],
      [1, 0, 1, 7, 1, 0],
      [0, 1, 0, 1, 8, 2],
    ];
    let error: unknown;
    try {
      buildDistributedSystem(createProblem({ A: fromRows(rows), partition: { machines: 2 } }));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SingularMatrixError);
    expect((error as SingularMatrixError).details).toEqual({ machine: 0, row: 2, machineRow: 2 });
    // A row 1e-8 the length of the others is independent of them: its pivot is far above 64 eps times the longest row.
    const scaled = buildDistributedSystem(createProblem({ A: fromRows(tridiagonal(8, 1, 1e-8)), partition: { machines: 2 } }));
    expect(scaled.machines[0].p).toBe(4);
    expect(Math.abs(scaled.machines[0].r[1 * 4 + 1])).toBeGreaterThan(1e-9);
  });

  it('makes from R and the kept reflectors the very system built at once (Q formed later, bit for bit)', () => {
    // Banded rows (machines on some columns) and a dense block, 3 machines.
    const rows = tridiagonal(30).map((row, i) => row.map((x, j) => (j < 6 ? x + 0.1 * ((i * 5 + j) % 7) : x)));
    const problem = createProblem({ A: fromRows(rows), partition: { assignment: Array.from({ length: 30 }, (_, k) => (k * 7) % 3) } });
    const kernels = selectedKernels();
    const built = buildDistributedSystem(problem, kernels);
    const factors = runSync(buildDenseFactorsWork(problem, kernels));
    // Machine 1's R given (the factor of its rows' Gram matrix, here from the QR again, sign-flipped): it keeps no
    // reflectors, and the system made factors it as the build does.
    const given = runSync(
      buildDenseFactorsWork(problem, kernels, {
        triangularFactorOf: (rows) => (rows[0] === factors.machines[1].rows[0] ? factors.machines[1].r.map((x) => -x) : null),
      }),
    );
    expect(given.machines.map((machine) => machine.reflectors === null)).toEqual([false, true, false]);
    expect(given.machines[1].r).toEqual(factors.machines[1].r.map((x) => -x));
    for (const made of [runSync(denseSystemOfFactorsWork(factors, kernels)), runSync(denseSystemOfFactorsWork(given, kernels))])
      expectSameMachines(made, built);
    // The reflectors are the backend's own: the other backend's kernels refuse them.
    if (nativeBlas() !== null) {
      const other = kernelsOf(kernels.backend === 'native' ? 'typescript' : 'native');
      expect(() => runSync(other.dense.formQWork(factors.machines[0].reflectors!))).toThrow(RangeError);
    }
    // Another partition whose machines 0 and 2 hold machine 2's and machine 0's rows (machine 1 a row less, machine 0
    // one more: not the same rows): those two are taken from the known factors, renumbered, their R the same array.
    const moved = Array.from({ length: 30 }, (_, k) => [2, 1, 0][(k * 7) % 3]);
    moved[moved.indexOf(1)] = 2;
    const movedProblem = createProblem({ A: problem.A, partition: { assignment: moved } });
    const reused = runSync(buildDenseFactorsWork(movedProblem, kernels, { known: factors.machines }));
    const fresh = runSync(buildDenseFactorsWork(movedProblem, kernels));
    expect(reused.machines[0].r).toBe(factors.machines[2].r);
    expect(reused.machines[0].index).toBe(0);
    expect(reused.machines[1].r).not.toBe(factors.machines[1].r);
    expect(reused.machines[2].r).not.toBe(factors.machines[0].r);
    for (const [i, machine] of reused.machines.entries()) expect(machine.r).toEqual(fresh.machines[i].r);
  });
});

function expectSameMachines(made: DenseSystem, built: DenseSystem): void {
  expect(made.machines).toHaveLength(3);
  for (const [i, machine] of made.machines.entries()) {
    const at = built.machines[i];
    for (const key of ['rows', 'cols', 'a', 'b', 'q', 'r', 'qtx0', 'aStart', 'aEnd', 'qStart', 'qEnd'] as const)
      expect(machine[key], key).toEqual(at[key]);
    expect([machine.p, machine.c, machine.rank, machine.full, machine.localResidual2]).toEqual([
      at.p,
      at.c,
      at.rank,
      at.full,
      at.localResidual2,
    ]);
  }
}
