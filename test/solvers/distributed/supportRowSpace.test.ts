/**
 * Tall CSR machines' row spaces found from their columns (src/solvers/distributed/supportRowSpace.ts, taken first by
 * src/solvers/distributed/sparseSystem.ts), on both backends:
 *  - a 5,040 x 2,100 banded regression on 2 machines of 2,520 rows, whose supports (2,084 and 2,086 columns) hold 3 and
 *    0 dependent columns: NumPy's ranks, each machine's minimum-norm local least-squares point, x_W and x_LS
 *    (scripts/bandedRegressionReference.py, test/fixtures/bandedRegression.json); APC reaches x_W. The routes on the
 *    rows failed this setup on both backends (singular-matrix: SuiteSparseQR kept 2,083 rows of rank 2,081, and the
 *    pivot-dropping Cholesky's conjugate gradients stalled);
 *  - a machine of full rank on its support takes the unit rows of it with b' = x_0 (the 600 x 40 regression of
 *    test/fixtures/tallFilledSparse.json, whose third machine has a dependent column);
 *  - a column that is the sum of two others, in closed form: R's rows are orthogonal to the null vector, and R's
 *    solution set holds a point where the normal equations hold;
 *  - the random search's systems of test/fixtures (scaled copies of rows): NumPy's ranks, x_W and x_LS;
 *  - built on two threads, the same machines as on one;
 *  - a dependent column of a machine whose normal matrix's factor fills (found by the blocked pivot-dropping Cholesky):
 *    rank 299 of 300, R orthogonal to the null vector, the normal equations at the minimum-norm point.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { analyze, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import { leastSquaresPoints } from '../../../src/solvers/distributed/leastSquares.js';
import { buildSparseSystem, onSupport, type CsrMachineData } from '../../../src/solvers/distributed/sparseSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { csrFromCoo, csrFromDense, multiply, multiplyTransposed, transpose, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import { analyzeCholesky, solveCholesky } from '../../../src/solvers/sparse/sparseCholesky.js';
import { describeEachBackend } from '../../support/backends.js';
import { onSetupThreads } from '../../support/setupThreads.js';
import {
  bandedRegression,
  randomSparse,
  relativeDifference,
  tallSparseCaseMatrix,
  type BandedRegressionCase,
  type TallSparseCase,
} from '../sparse/support.js';

const fixture = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), 'utf8')) as T;
const banded = fixture<BandedRegressionCase>('bandedRegression');
const filled = fixture<TallSparseCase & { localLeastSquares: number[][] }>('tallFilledSparse');

/**
 * The minimum-norm point of the machine's solution set {R x = b'}: R^T (R R^T)^{-1} b', with its own Gram factor and
 * residual corrections from R itself (as its projection passes refine their solves: an ill-conditioned A_S of the routes
 * on the rows loses what its Gram matrix squares).
 */
function minimumNormPoint(machine: CsrMachineData, n: number): Float64Array {
  const { a: r, b } = machine.projection!;
  const y = solveCholesky(machine.gram, b, new Float64Array(b.length));
  for (let step = 0; step < 3; step++) {
    const residual = multiply(r, multiplyTransposed(r, y, new Float64Array(n))).map((v, k) => b[k] - v);
    const correction = solveCholesky(machine.gram, residual, new Float64Array(b.length));
    for (let k = 0; k < y.length; k++) y[k] += correction[k];
  }
  return multiplyTransposed(r, y, new Float64Array(n));
}

describeEachBackend("tall machines' row spaces from their columns", () => {
  it("a banded regression with dependent columns: NumPy's ranks, local least-squares points, x_W and x_LS; APC reaches x_W", () => {
    const system = buildSparseSystem(
      createProblem({ A: bandedRegression(banded), rhs: banded.b, partition: { machines: banded.machines } }),
    );
    expect(system.machines.map((machine) => [machine.c, machine.rank])).toEqual([
      [2084, banded.ranks[0]],
      [2086, banded.ranks[1]],
    ]);
    system.machines.forEach((machine, i) => {
      expect(machine.projection?.rows).toBeNull();
      expect(machine.projection!.a.rows).toBe(banded.ranks[i]);
      expect(relativeDifference(minimumNormPoint(machine, banded.cols), banded.localLeastSquares[i]), `machine ${i}`).toBeLessThan(1e-10);
    });
    const points = leastSquaresPoints(system);
    expect(relativeDifference(points.blockWeighted, banded.blockWeighted)).toBeLessThan(1e-10);
    expect(relativeDifference(points.leastSquares, banded.leastSquares)).toBeLessThan(1e-12);
    const run = runAlgorithm(system, 'apc', spectralDataOf(analyze(system)), { tolerance: 1e-12, maxIterations: 5000 });
    expect(run.status, run.stopReason).toBe('converged');
    expect(run.target).toBe('block-weighted');
    expect(relativeDifference(run.solution, banded.blockWeighted)).toBeLessThan(1e-8);
  });

  it("machines of full rank on their support take its unit rows, b' = x_0; a dependent column leaves rank 39 of 40", () => {
    const system = buildSparseSystem(
      createProblem({ A: tallSparseCaseMatrix(filled), rhs: filled.b, partition: { machines: filled.machines } }),
    );
    expect(system.machines.map((machine) => machine.rank)).toEqual(filled.ranks);
    system.machines.forEach((machine, i) => {
      const { a: r, b } = machine.projection!;
      expect(r.rows).toBe(filled.ranks[i]);
      if (machine.rank === machine.c) {
        // e_j for j in C_i, and b' = x_0 there.
        expect(Array.from(r.rowPtr)).toEqual(Array.from({ length: machine.c + 1 }, (_, t) => t));
        expect(Array.from(r.colIdx)).toEqual(Array.from(machine.cols));
        expect(Array.from(r.values).every((v) => v === 1)).toBe(true);
        const x0 = Array.from(machine.cols, (j) => filled.localLeastSquares[i][j]);
        expect(relativeDifference(b, x0), `machine ${i}`).toBeLessThan(1e-12);
      }
      expect(relativeDifference(minimumNormPoint(machine, filled.cols), filled.localLeastSquares[i]), `machine ${i}`).toBeLessThan(1e-10);
    });
    expect(system.machines.filter((machine) => machine.rank < machine.c)).toHaveLength(1);
    expect(relativeDifference(leastSquaresPoints(system).blockWeighted, filled.blockWeighted)).toBeLessThan(1e-10);
  });

  it('a column that is the sum of two others: rank 2, R orthogonal to the null vector, the normal equations hold', () => {
    // Rows 0-3 on machine 0 (column 2 = column 0 + column 1), rows 4-5 on machine 1 (full column rank overall).
    const dense = [
      [1, 0, 1],
      [0, 1, 1],
      [1, 1, 2],
      [2, -1, 1],
      [1, 2, 0],
      [0, 1, 3],
    ];
    const entries = dense.flatMap((row, i) => row.flatMap((value, j) => (value === 0 ? [] : [[i, j, value]])));
    const A = csrFromCoo(
      6,
      3,
      entries.map((e) => e[0]),
      entries.map((e) => e[1]),
      entries.map((e) => e[2]),
    );
    const b = [1, 2, 4, -1, 0.5, 3];
    const system = buildSparseSystem(createProblem({ A, rhs: b, partition: { sizes: [4, 2] } }));
    const machine = system.machines[0];
    expect([machine.p, machine.c, machine.rank]).toEqual([4, 3, 2]);
    const r: CsrMatrix = machine.projection!.a;
    const nullVector = Float64Array.of(1, 1, -1);
    expect(Math.max(...Array.from(multiply(r, nullVector), Math.abs))).toBeLessThan(1e-14);
    // x = argmin |A_0 x - b_0|: A_0^T (A_0 x - b_0) = 0.
    const x = minimumNormPoint(machine, 3);
    const residual = multiply(machine.a, x).map((v, k) => v - b[k]);
    const gradient = multiplyTransposed(machine.a, residual, new Float64Array(3));
    expect(Math.max(...Array.from(gradient, Math.abs))).toBeLessThan(1e-13);
    // The minimum-norm one: orthogonal to the null vector.
    expect(Math.abs(x[0] + x[1] - x[2])).toBeLessThan(1e-13);
  });

  for (const name of ['duplicatedRowsSparse', 'illConditionedRowsSparse']) {
    it(`the random search's ${name}: NumPy's ranks, x_W and x_LS`, () => {
      const c = fixture<TallSparseCase>(name);
      const system = buildSparseSystem(createProblem({ A: tallSparseCaseMatrix(c), rhs: c.b, partition: { machines: c.machines } }));
      expect(system.machines.map((machine) => machine.rank)).toEqual(c.ranks);
      const points = leastSquaresPoints(system);
      expect(relativeDifference(points.blockWeighted, c.blockWeighted)).toBeLessThan(1e-8);
      expect(relativeDifference(points.leastSquares, c.leastSquares)).toBeLessThan(1e-10);
    });
  }

  it('on two threads, the same rows and b as on one (bit for bit)', () => {
    const build = (threads: number) =>
      onSetupThreads(threads, () =>
        buildSparseSystem(createProblem({ A: bandedRegression(banded), rhs: banded.b, partition: { machines: banded.machines } })),
      );
    const [one, two] = [build(1), build(2)];
    two.machines.forEach((machine, i) => {
      const mine = machine.projection!;
      const theirs = one.machines[i].projection!;
      expect(mine.a.colIdx).toEqual(theirs.a.colIdx);
      expect(mine.a.values).toEqual(theirs.a.values);
      expect(mine.b).toEqual(theirs.b);
    });
  });
});

describeEachBackend("a tall machine's dependent column found by blocks (its normal matrix's factor fills)", () => {
  it('rank 299 of 300: R orthogonal to the null vector, the normal equations hold at the minimum-norm point', () => {
    // Machine 0: 600 random sparse rows on 300 columns, column 7 a copy of column 3 there; machine 1 completes the rank.
    const { dense } = randomSparse(900, 300, 0.04, 21);
    for (let i = 0; i < 600; i++) dense.data[i * 300 + 7] = dense.data[i * 300 + 3];
    const A = csrFromDense(dense);
    const b = Float64Array.from({ length: 900 }, (_, k) => Math.sin(k + 1));
    const system = buildSparseSystem(createProblem({ A, rhs: b, partition: { sizes: [600, 300] } }));
    const machine = system.machines[0];
    expect(analyzeCholesky(gramMatrix(transpose(onSupport(machine.a, machine.cols)))).nnzL).toBeGreaterThan((300 * 301) / 4);
    expect([machine.c, machine.rank]).toEqual([300, 299]);
    expect(machine.projection?.rows).toBeNull();
    const nullVector = new Float64Array(300);
    nullVector[3] = 1;
    nullVector[7] = -1;
    const r = machine.projection!.a;
    expect(Math.max(...Array.from(multiply(r, nullVector), Math.abs))).toBeLessThan(1e-13);
    const x = minimumNormPoint(machine, 300);
    const residual = multiply(machine.a, x).map((v, k) => v - b[k]);
    const gradient = multiplyTransposed(machine.a, residual, new Float64Array(300));
    expect(Math.max(...Array.from(gradient, Math.abs))).toBeLessThan(1e-11);
    expect(Math.abs(x[3] - x[7])).toBeLessThan(1e-12);
  });
});

describeEachBackend('a tall machine whose dependent column depends on all the others', () => {
  it("goes to the routes on the rows (R's Gram matrix would be dense): rank 299, the normal equations hold", () => {
    // Machine 0: 600 banded rows on 300 columns, column 299 the sum of the others there; machine 1 completes the rank.
    const rows = 900;
    const entries: [number, number, number][] = [];
    for (let i = 0; i < rows; i++) {
      const centre = (i * 7) % 299;
      let sum = 0;
      for (let d = 0; d < 3; d++) {
        const value = Math.sin(i * 3 + d + 1);
        entries.push([i, (centre + d) % 299, value]);
        sum += value;
      }
      entries.push([i, 299, i < 600 ? sum : Math.cos(i)]);
    }
    const A = csrFromCoo(
      rows,
      300,
      entries.map((e) => e[0]),
      entries.map((e) => e[1]),
      entries.map((e) => e[2]),
    );
    const b = Float64Array.from({ length: rows }, (_, k) => Math.sin(k + 1));
    const system = buildSparseSystem(createProblem({ A, rhs: b, partition: { sizes: [600, 300] } }));
    const machine = system.machines[0];
    expect([machine.c, machine.rank]).toEqual([300, 299]);
    expect(machine.projection?.rows).toBeInstanceOf(Int32Array);
    const x = minimumNormPoint(machine, 300);
    const residual = multiply(machine.a, x).map((v, k) => v - b[k]);
    const gradient = multiplyTransposed(machine.a, residual, new Float64Array(300));
    // A_0^T r = 0 to the route's accuracy (the rows route's b_S' carries ~kappa(A_S) u), relative to |A_0|_F |r|.
    const scale = Math.hypot(...machine.a.values) * Math.hypot(...residual);
    expect(Math.hypot(...gradient) / scale).toBeLessThan(1e-8);
  });
});
