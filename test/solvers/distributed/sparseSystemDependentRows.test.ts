/**
 * CSR machines whose rows are dependent (src/solvers/distributed/sparseSystem.ts), by the routes on their rows (the
 * route from a tall machine's columns, src/solvers/distributed/supportRowSpace.ts, which takes these machines first, is
 * turned off here and tested in ./supportRowSpace.test.ts): the independent rows S
 * and b_S' = A_S A_i^+ b_i by SuiteSparseQR on the native backend; on the TypeScript one by the dense path's
 * test streamed over the rows (src/solvers/distributed/streamedRowBasis.ts) while the basis holds at most 2^22
 * entries, by the pivot-dropping Cholesky (src/solvers/sparse/droppingCholesky.ts) above, nothing p x c being dense:
 *  - ash608 with noisy labels on 4 machines: each machine's rank is NumPy's matrix_rank, its solution set
 *    {A_S x = b_S'} holds NumPy's A_i^+ b_i (its minimum-norm point), and APC reaches NumPy's block-weighted
 *    solution x_W (scripts/dependentRowsReference.py, test/fixtures/ash608Noisy.json);
 *  - a machine of 5000 rows (2500 rows and twice each of them) on 5000 support columns, whose dense block
 *    (2.5e7 entries) the dense rank-revealing path refused: rank 2500 and b_S' in closed form;
 *  - built on two threads, the same machines as on one;
 *  - a 600 x 40 random sparse regression on 3 machines of 200 rows (one of rank 39), whose row-basis factor R fills: the
 *    addon's second QR (x_0, of R^T) runs dense there, SuiteSparseQR's on ash608, whose R stays sparse; both against
 *    NumPy (scripts/filledRowBasisReference.py, test/fixtures/tallFilledSparse.json); on TypeScript its 200 rows are
 *    streamed in two blocks. The pivot-dropping Cholesky failed this case (its greedily kept rows so ill-conditioned
 *    that rounding kept a 41st row of 40 columns).
 *  - a 1625 x 60 system (kappa(A) = 1.6) whose machines hold scaled copies of rows, where SuiteSparseQR's rank detection
 *    kept a row in the others' span on one machine and called an independent one dead (the job failed with
 *    singular-matrix): the streamed route chooses again; NumPy's ranks, x_W and x_LS (scripts/duplicatedRowsReference.py);
 *  - a 2510 x 100 system where the rows SuiteSparseQR kept on one machine were taken by the Cholesky factorization at a
 *    condition number of ~1.6e18 (x_W off by 7e-4): chosen again as well; NumPy's x_W and x_LS (the same script).
 * (Every algorithm reaching ones on ash608 with b = A ones: ./tallSystems.test.ts, on both backends.)
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { analyze, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import {
  buildSparseSystem,
  setSupportRowSpaceRoute,
  type CsrMachineData,
  type CsrSystem,
} from '../../../src/solvers/distributed/sparseSystem.js';
import { leastSquaresPoints } from '../../../src/solvers/distributed/leastSquares.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { nativeSpqr } from '../../../src/solvers/linalg/backend.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { csrFromCoo, multiplyTransposed, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { solveCholesky } from '../../../src/solvers/sparse/sparseCholesky.js';
import { describeEachBackend } from '../../support/backends.js';
import { onSetupThreads } from '../../support/setupThreads.js';
import { addonRowBasis, readMatrixCsr, relativeDifference, tallSparseCaseMatrix, type TallSparseCase } from '../sparse/support.js';

interface NoisyFixture {
  b: number[];
  ranks: number[];
  localLeastSquares: number[][];
  blockWeighted: number[];
}
const noisy = JSON.parse(readFileSync(new URL('../../fixtures/ash608Noisy.json', import.meta.url), 'utf8')) as NoisyFixture;
interface FilledFixture extends NoisyFixture {
  rows: number;
  cols: number;
  machines: number;
  entries: [number, number, number][];
}
const filled = JSON.parse(readFileSync(new URL('../../fixtures/tallFilledSparse.json', import.meta.url), 'utf8')) as FilledFixture;
const fixture = (name: string): TallSparseCase =>
  JSON.parse(readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8')) as TallSparseCase;
const duplicated = fixture('duplicatedRowsSparse');
const illConditioned = fixture('illConditionedRowsSparse');

let ash: CsrMatrix;
let supportRoute: boolean;
beforeAll(() => {
  ash = readMatrixCsr('ash608.mtx');
  supportRoute = setSupportRowSpaceRoute(false);
});
afterAll(() => {
  setSupportRowSpaceRoute(supportRoute);
});

/** The independent rows S a route on the rows kept (local indices). */
function keptRows(machine: CsrMachineData): Int32Array {
  const rows = machine.projection?.rows ?? null;
  if (rows === null) throw new Error(`machine ${machine.index} has no rows of its own in its projection`);
  return rows;
}

/** The minimum-norm point of {x : A_S x = b_S'}: A_S^T (A_S A_S^T)^{-1} b_S', with the machine's own factor. */
function minimumNormPoint(machine: CsrMachineData, n: number): Float64Array {
  const projection = machine.projection!;
  const y = solveCholesky(machine.gram, projection.b, new Float64Array(projection.b.length));
  return multiplyTransposed(projection.a, y, new Float64Array(n));
}

describeEachBackend('CSR machines with dependent rows', (backend) => {
  // An addon built without SuiteSparseQR (libspqr missing at install) runs the TypeScript routes on both; CI has it.
  const withoutSpqr = backend === 'native' && nativeSpqr() === null && !process.env.CI;
  it.skipIf(withoutSpqr)(`finds them with ${backend === 'native' ? 'SuiteSparseQR' : 'the TypeScript routes'}`, () => {
    expect(selectedKernels().spqr === null).toBe(backend === 'typescript');
  });

  it("ash608 with noisy labels: NumPy's ranks and local least-squares points; APC reaches x_W", () => {
    const system = buildSparseSystem(createProblem({ A: ash, rhs: noisy.b, partition: { machines: 4 } }));
    expect(system.machines.map((machine) => machine.rank)).toEqual(noisy.ranks);
    system.machines.forEach((machine, i) => {
      expect(keptRows(machine).length).toBe(noisy.ranks[i]);
      expect(relativeDifference(minimumNormPoint(machine, 188), noisy.localLeastSquares[i]), `machine ${i}`).toBeLessThan(1e-10);
    });
    const analysis = analyze(system);
    expect(analysis.consistency?.consistent).toBe(false);
    const run = runAlgorithm(system, 'apc', spectralDataOf(analysis), { tolerance: 1e-12, maxIterations: 5000 });
    expect(run.status, run.stopReason).toBe('converged');
    expect(run.target).toBe('block-weighted');
    expect(relativeDifference(run.solution, noisy.blockWeighted)).toBeLessThan(1e-8);
  });

  it('on two threads, the same rows and b_S as on one (bit for bit)', () => {
    const build = (threads: number) =>
      onSetupThreads(threads, () => buildSparseSystem(createProblem({ A: ash, rhs: noisy.b, partition: { machines: 4 } })));
    const [one, two] = [build(1), build(2)];
    two.machines.forEach((machine, i) => {
      expect(machine.projection!.rows).toEqual(one.machines[i].projection!.rows);
      expect(machine.projection!.b).toEqual(one.machines[i].projection!.b);
    });
  });

  it("a random sparse regression whose row-basis factor fills: NumPy's ranks and local least-squares points; APC reaches x_W", () => {
    const A = tallSparseCaseMatrix(filled);
    const system = buildSparseSystem(createProblem({ A, rhs: filled.b, partition: { machines: filled.machines } }));
    expect(system.machines.map((machine) => machine.rank)).toEqual(filled.ranks);
    // b_S' = A_S x_0 with NumPy's x_0. (Not x_0 back from {A_S x = b_S'}: the kept rows are taken greedily, and machine
    // 0's A_S has a condition number of ~2.5e5, which the Gram matrix of that route squares.)
    system.machines.forEach((machine, i) => {
      const rows = keptRows(machine);
      const bS = machine.projection!.b;
      const x0 = filled.localLeastSquares[i];
      const { rowPtr, colIdx, values } = machine.a;
      const expected = Array.from(rows, (k) => {
        let sum = 0;
        for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) sum += values[e] * x0[colIdx[e]];
        return sum;
      });
      expect(relativeDifference(bS, expected), `machine ${i}`).toBeLessThan(1e-10);
    });
    const run = runAlgorithm(system, 'apc', spectralDataOf(analyze(system)), { tolerance: 1e-12, maxIterations: 5000 });
    expect(run.status, run.stopReason).toBe('converged');
    expect(relativeDifference(run.solution, filled.blockWeighted)).toBeLessThan(1e-8);
    // The addon's route for x_0 (the TypeScript backend's streamed route has one): dense where R fills, as here,
    // SuiteSparseQR's where it stays sparse, as on ash608's machines (152 rows on ~170 columns).
    if (backend === 'native' && !withoutSpqr) {
      expect(system.machines.map((machine) => addonRowBasis(machine).denseSolve)).toEqual([true, true, true]);
      const ashSystem = buildSparseSystem(createProblem({ A: ash, rhs: noisy.b, partition: { machines: 4 } }));
      expect(ashSystem.machines.map((machine) => addonRowBasis(machine).denseSolve)).toEqual([false, false, false, false]);
    }
  });

  /** The system of a case of scripts/tallSparseSearch.py, its machines' ranks, x_W and x_LS checked against NumPy's. */
  function expectNumPyPoints(c: TallSparseCase): CsrSystem {
    const system = buildSparseSystem(createProblem({ A: tallSparseCaseMatrix(c), rhs: c.b, partition: { machines: c.machines } }));
    expect(system.machines.map((machine) => machine.rank)).toEqual(c.ranks);
    const points = leastSquaresPoints(system);
    expect(relativeDifference(points.blockWeighted, c.blockWeighted)).toBeLessThan(1e-8);
    expect(relativeDifference(points.leastSquares, c.leastSquares)).toBeLessThan(1e-10);
    return system;
  }

  it("scaled copies of rows that SuiteSparseQR's rank detection misjudged: NumPy's ranks, x_W and x_LS", () => {
    const system = expectNumPyPoints(duplicated);
    // The machine SuiteSparseQR misjudged: its own choice of 60 rows spans 59 dimensions (the addon says rank 60).
    if (backend === 'native' && !withoutSpqr) {
      const basis = addonRowBasis(system.machines[2]);
      expect(basis.rank).toBe(60);
      expect(Array.from(basis.rows).sort((x, y) => x - y)).not.toEqual(Array.from(keptRows(system.machines[2])));
    }
  });

  it("rows SuiteSparseQR kept that the Cholesky factorization took ill-conditioned (~1.6e18): NumPy's x_W and x_LS", () => {
    expectNumPyPoints(illConditioned);
  });

  it('a machine whose dense block would hold 2.5e7 entries: rank 2500, b_S the least-squares labels of each pair', () => {
    // Machine 0: rows r_k (k < 2500, on columns 2k, 2k+1 and 7k + 3 mod n) and 2 r_k; machines 1 and 2 complete the rank.
    const n = 5000;
    const half = 2500;
    const rowIdx: number[] = [];
    const colIdx: number[] = [];
    const values: number[] = [];
    const put = (row: number, col: number, value: number): void => {
      rowIdx.push(row);
      colIdx.push(col);
      values.push(value);
    };
    for (let k = 0; k < half; k++) {
      for (const [row, scale] of [
        [k, 1],
        [half + k, 2],
      ]) {
        put(row, 2 * k, scale);
        put(row, 2 * k + 1, -0.5 * scale);
        put(row, (7 * k + 3) % n, 0.25 * (1 + (k % 3)) * scale);
      }
      put(n + k, 2 * k, 1);
      put(n + k, 2 * k + 1, 0.5);
      put(n + half + k, 2 * k + 1, 1);
      put(n + half + k, (2 * k + 2) % n, -0.3);
    }
    const A = csrFromCoo(2 * n, n, rowIdx, colIdx, values);
    const b = Float64Array.from({ length: 2 * n }, (_, k) => Math.cos(k));
    const system = buildSparseSystem(createProblem({ A, rhs: b, partition: { sizes: [n, half, half] } }));
    const machine = system.machines[0];
    expect([machine.p, machine.c, machine.rank]).toEqual([n, n, half]);
    // Each pair (r_k x = b_k, 2 r_k x = b'_k) alone in its columns' span: r_k x_0 = (b_k + 2 b'_k) / 5.
    const rows = keptRows(machine);
    const bS = machine.projection!.b;
    let largest = 0;
    for (let t = 0; t < rows.length; t++) {
      const k = rows[t] % half;
      const pairValue = (b[k] + 2 * b[half + k]) / 5;
      const expected = rows[t] < half ? pairValue : 2 * pairValue;
      largest = Math.max(largest, Math.abs(bS[t] - expected));
    }
    expect(new Set(Array.from(rows, (row) => row % half)).size).toBe(half);
    expect(largest).toBeLessThan(1e-12);
    expect(system.machines.map((other) => other.rank)).toEqual([half, half, half]);
    // Its R stays sparse (3 entries a row of A_i^T's factor, not 2500): SuiteSparseQR's second QR, not a dense 5000 x 2500.
    if (backend === 'native' && !withoutSpqr) expect(addonRowBasis(machine).denseSolve).toBe(false);
  });

  it("a row within ~5e-9 rad of its machine's other rows: dropped, and the job goes on (native refused it as singular)", () => {
    // 9 x 5 of full column rank, 3 machines; machine 0 holds r0, r1 and r2 = r0 + 1e-8 e_4. SuiteSparseQR keeps r2 (it is
    // more than 1e-10 rad from span(r0, r1)), the Cholesky factor of the kept rows' Gram matrix cannot take it: a 200,000 x
    // 500 sparse regression failed so with "row 90035 ... is numerically a linear combination of the machine's other rows".
    let seed = 7;
    const draw = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
    const rows = Array.from({ length: 9 }, () => Array.from({ length: 5 }, draw));
    rows[2] = rows[0].map((value, j) => value + (j === 4 ? 1e-8 : 0));
    const triplets = rows.flatMap((row, i) => row.map((value, j) => [i, j, value]));
    const A = csrFromCoo(
      9,
      5,
      triplets.map((t) => t[0]),
      triplets.map((t) => t[1]),
      triplets.map((t) => t[2]),
    );
    const b = rows.map((row, i) => row.reduce((sum, value) => sum + value, 0) + 0.01 * Math.sin(i + 1));
    const system = buildSparseSystem(createProblem({ A, rhs: b, partition: { machines: 3 } }));
    expect(system.machines.map((machine) => machine.rank)).toEqual([2, 3, 3]);
    const kept = keptRows(system.machines[0]);
    const bS = system.machines[0].projection!.b;
    expect(Array.from(kept)).toEqual([0, 1]);
    // r2 counts as r0: the local least-squares value of r0 x is the mean of their labels, r1 x keeps its own.
    expect(Math.abs(bS[0] - (b[0] + b[2]) / 2)).toBeLessThan(1e-7);
    expect(Math.abs(bS[1] - b[1])).toBeLessThan(1e-7);
    const analysis = analyze(system);
    const run = runAlgorithm(system, 'apc', spectralDataOf(analysis), { tolerance: 1e-10, maxIterations: 5000 });
    expect(run.status, run.stopReason).toBe('converged');
  });
});
