/**
 * The row-move effects of ../../../src/solvers/analysis/rowMoveEffects.ts on a dense matrix, on each backend:
 *  - the dense path (every row's coordinates in a machine's basis by the kernels' product A Q_h^T, on A's own rows or
 *    on the columns the machine touches) gives the CSR path's effects (its loop over each row's entries) on the same
 *    matrix;
 *  - given the rows' Gram matrix (the advisor's), the coordinates come from it for a well-conditioned machine (the same
 *    effects to 1e-9) and from the product for an ill-conditioned one;
 *  - given the machines' R alone (Cholesky factors of the Gram matrix's blocks) and a factorization of A, the same
 *    effects as through Q, to the guidance's tolerance;
 *  - the Rayleigh-Ritz values of a move bracket the exact extreme eigenvalues of the moved partition's S (ml-matrix's
 *    eigendecomposition of S = sum_i P_i formed densely): Ritz values of a subspace lie within the spectrum.
 */
import { EigenvalueDecomposition, Matrix, QrDecomposition } from 'ml-matrix';
import { expect, it } from 'vitest';
import { doneWork, runSync } from '../../../src/solvers/cooperative.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { dot, type DenseMatrix } from '../../../src/solvers/matrix.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { MoveEffectsCache, rowMoveEffectsWork } from '../../../src/solvers/analysis/rowMoveEffects.js';
import { basisFactoredMatrixWork, sEndsOfFactorsWork, triangularFactorFromRowGram } from '../../../src/solvers/analysis/kappaS.js';
import { csrFromDense } from '../../../src/solvers/sparse/csr.js';
import { buildDenseFactorsWork, buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { rowGraphAndGram } from '../../../src/solvers/partitioning/rowGraph.js';
import { describeEachBackend } from '../../support/backends.js';

const N = 40;
const M = 4;

/** A Gaussian matrix, its diagonal shifted; machine 0's rows (every fourth row) miss the last 6 columns. */
function matrix(): DenseMatrix {
  const random = new SeededRandom(11);
  const data = new Float64Array(N * N);
  for (let k = 0; k < N * N; k++) data[k] = random.nextNormal();
  for (let k = 0; k < N; k++) data[k * N + k] += 3;
  for (let k = 0; k < N; k += M) for (let j = N - 6; j < N; j++) data[k * N + j] = 0;
  return { rows: N, cols: N, data };
}

const ASSIGNMENT = Int32Array.from({ length: N }, (_, k) => k % M);

/** The extreme eigenvalues of S = sum_i P_i (P_i the projection onto machine i's rows), formed densely. */
function exactEnds(a: DenseMatrix, assignment: Int32Array): { max: number; min: number } {
  const s = Matrix.zeros(N, N);
  for (let i = 0; i < M; i++) {
    const rows = Array.from(assignment.keys()).filter((k) => assignment[k] === i);
    const block = new Matrix(rows.map((k) => Array.from(a.data.subarray(k * N, (k + 1) * N))));
    const q = new QrDecomposition(block.transpose()).orthogonalMatrix.subMatrix(0, N - 1, 0, rows.length - 1);
    s.add(q.mmul(q.transpose()));
  }
  const values = new EigenvalueDecomposition(s, { assumeSymmetric: true }).realEigenvalues;
  return { max: Math.max(...values), min: Math.min(...values) };
}

describeEachBackend('row-move effects', () => {
  it("are the same from a distributed system's machines (their QR not done again) as from A's rows alone", () => {
    const a = matrix();
    const kernels = selectedKernels();
    const system = buildDistributedSystem(createProblem({ A: a, partition: { assignment: Array.from(ASSIGNMENT) } }));
    const alone = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M))!;
    const given = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { basesWork: () => doneWork(system.machines) }))!;
    // Machine 0 touches only some columns, as the system holds it.
    expect(system.machines[0].c).toBe(N - 6);
    expect(given.lambdaMax).toBe(alone.lambdaMax);
    expect(given.lambdaMin).toBe(alone.lambdaMin);
    expect(given.deltaMax).toEqual(alone.deltaMax);
    expect(given.deltaMin).toEqual(alone.deltaMin);
    expect(given.rayleighRitz([{ row: 1, to: 0 }])).toEqual(alone.rayleighRitz([{ row: 1, to: 0 }]));
    // They are what it reads: the same machines with Q_i's first two basis vectors swapped (R_i kept, so Q_i R_i is no
    // longer A_i^T) give other effects.
    const swapped = system.machines.map((machine) => {
      const q = Float64Array.from(machine.q);
      const c = machine.c;
      q.set(machine.q.subarray(c, 2 * c), 0);
      q.set(machine.q.subarray(0, c), c);
      return { ...machine, q };
    });
    const read = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { basesWork: () => doneWork(swapped) }))!;
    expect(read.deltaMax).not.toEqual(alone.deltaMax);
  });

  it("are the same with lambda_min(S)'s vector through another partition's factorization of A as through the LU of Q^T", () => {
    const a = matrix();
    const kernels = selectedKernels();
    const own = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M))!;
    // A factored as contiguous strips on three machines (the advisor's given partition, say).
    const other = buildDistributedSystem(
      createProblem({ A: a, partition: { assignment: Array.from({ length: N }, (_, k) => Math.floor((3 * k) / N)) } }),
    );
    const factored = runSync(basisFactoredMatrixWork(kernels, other));
    const through = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { factored }))!;
    expect(Math.abs(through.lambdaMin / own.lambdaMin - 1)).toBeLessThan(1e-9);
    expect(through.lambdaMax).toBe(own.lambdaMax);
    // The guidance's eigenvectors are converged to 1e-6, so the first-order effects agree to about that.
    for (let q = 0; q < N * M; q++) {
      if (Number.isNaN(own.deltaMin[q])) continue;
      expect(Math.abs(through.deltaMin[q] - own.deltaMin[q])).toBeLessThanOrEqual(
        1e-5 * (Math.abs(own.lambdaMin) + Math.abs(own.deltaMin[q])),
      );
    }
  });

  it("take a machine's row coordinates A Q_h^T and R_h^{-1} from the cache of earlier calls when its basis is the same", () => {
    const a = matrix();
    const kernels = selectedKernels();
    const system = buildDistributedSystem(createProblem({ A: a, partition: { assignment: Array.from(ASSIGNMENT) } }));
    // Row 1 moved from machine 1 to machine 2: machines 0 and 3 keep their rows, hence (as the advisor builds the moved
    // system) their bases.
    const moved = ASSIGNMENT.slice();
    moved[1] = 2;
    const movedSystem = buildDistributedSystem(createProblem({ A: a, partition: { assignment: Array.from(moved) } }));
    const givenMoved = movedSystem.machines.map((machine, i) => (i === 0 || i === 3 ? system.machines[i] : machine));
    const alone = runSync(rowMoveEffectsWork(kernels, a, moved, M, { basesWork: () => doneWork(givenMoved) }))!;
    const cache = new MoveEffectsCache(a);
    runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { basesWork: () => doneWork(system.machines), cache }));
    expect(cache.coordinates.get(system.machines[0].r)).toBeDefined();
    expect(cache.inverses.get(system.machines[0].r)).toBeDefined();
    const cached = runSync(rowMoveEffectsWork(kernels, a, moved, M, { basesWork: () => doneWork(givenMoved), cache }))!;
    expect(cached.deltaMax).toEqual(alone.deltaMax);
    expect(cached.deltaMin).toEqual(alone.deltaMin);
    // What the cache holds is what is read: machine 3's coordinates scaled give other effects of moves to machine 3.
    const held = cache.coordinates.get(system.machines[3].r)!;
    cache.coordinates.set(system.machines[3].r, { values: held.values.map((x) => 2 * x), norm2: held.norm2.map((x) => 4 * x) });
    const read = runSync(rowMoveEffectsWork(kernels, a, moved, M, { basesWork: () => doneWork(givenMoved), cache }))!;
    expect(read.deltaMax[0 * M + 3]).not.toBe(alone.deltaMax[0 * M + 3]);
    // And A's row norms are kept once: scaled, they give other effects too.
    expect(cache.rowNorm2).toHaveLength(N);
    cache.coordinates.set(system.machines[3].r, held);
    cache.rowNorm2 = cache.rowNorm2!.map((x) => 2 * x);
    const norms = runSync(rowMoveEffectsWork(kernels, a, moved, M, { basesWork: () => doneWork(givenMoved), cache }))!;
    expect(norms.deltaMax[0 * M + 3]).not.toBe(alone.deltaMax[0 * M + 3]);
  });

  it("are the same started from a nearby partition's Ritz vectors (the refinement's last effects) as from random ones", () => {
    const a = matrix();
    const kernels = selectedKernels();
    const before = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M))!;
    const moved = ASSIGNMENT.slice();
    moved[1] = 2;
    const cold = runSync(rowMoveEffectsWork(kernels, a, moved, M))!;
    const warm = runSync(rowMoveEffectsWork(kernels, a, moved, M, { startVectors: before }))!;
    expect(Math.abs(warm.lambdaMax / cold.lambdaMax - 1)).toBeLessThan(1e-9);
    expect(Math.abs(warm.lambdaMin / cold.lambdaMin - 1)).toBeLessThan(1e-9);
    // The same eigenvectors up to sign, to the guidance's tolerance.
    expect(Math.abs(Math.abs(dot(warm.u, cold.u)) - 1)).toBeLessThan(1e-6);
    expect(Math.abs(Math.abs(dot(warm.v, cold.v)) - 1)).toBeLessThan(1e-6);
  });

  it('are the same on dense storage (the kernels product) as on CSR (its row loop)', () => {
    const a = matrix();
    const kernels = selectedKernels();
    const dense = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M))!;
    const csr = runSync(rowMoveEffectsWork(kernels, csrFromDense(a), ASSIGNMENT, M))!;
    expect(dense.lambdaMax).toBeCloseTo(csr.lambdaMax, 12);
    expect(dense.lambdaMin).toBeCloseTo(csr.lambdaMin, 12);
    let compared = 0;
    for (let q = 0; q < N * M; q++) {
      expect(Number.isNaN(dense.deltaMax[q])).toBe(Number.isNaN(csr.deltaMax[q]));
      if (Number.isNaN(csr.deltaMax[q])) continue;
      expect(Math.abs(dense.deltaMax[q] - csr.deltaMax[q])).toBeLessThanOrEqual(1e-9 * (1 + Math.abs(csr.deltaMax[q])));
      expect(Math.abs(dense.deltaMin[q] - csr.deltaMin[q])).toBeLessThanOrEqual(1e-9 * (1 + Math.abs(csr.deltaMin[q])));
      compared++;
    }
    // Every row can move to each of the other three machines.
    expect(compared).toBe(N * (M - 1));
  });

  it("take the rows' coordinates from the rows' Gram matrix when given, the product's for an ill-conditioned machine", () => {
    const kernels = selectedKernels();
    // Every machine on every column (a machine that misses some takes the product on them).
    const random = new SeededRandom(5);
    const a = matrix();
    for (let k = 0; k < N; k += M) for (let j = N - 6; j < N; j++) a.data[k * N + j] = random.nextNormal();
    const compareEffects = (x: { deltaMax: Float64Array; deltaMin: Float64Array }, y: typeof x, tolerance: number): void => {
      for (let q = 0; q < N * M; q++) {
        expect(Number.isNaN(x.deltaMax[q])).toBe(Number.isNaN(y.deltaMax[q]));
        if (Number.isNaN(y.deltaMax[q])) continue;
        expect(Math.abs(x.deltaMax[q] - y.deltaMax[q])).toBeLessThanOrEqual(tolerance * (1 + Math.abs(y.deltaMax[q])));
        expect(Math.abs(x.deltaMin[q] - y.deltaMin[q])).toBeLessThanOrEqual(tolerance * (1 + Math.abs(y.deltaMin[q])));
      }
    };
    const product = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M))!;
    const { gram } = rowGraphAndGram(kernels, a);
    const fromGram = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { rowGram: gram }))!;
    compareEffects(fromGram, product, 1e-9);
    // What the Gram matrix says is read: scaled, it gives other effects of moves to any machine.
    const scaled = { ...gram, rowNorms: gram.rowNorms.map((x) => 2 * x) };
    const misread = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { rowGram: scaled }))!;
    for (const h of [0, 1, 2, 3]) {
      const move = (h === 0 ? 1 : 0) * M + h;
      expect(misread.deltaMax[move]).not.toBeCloseTo(product.deltaMax[move], 6);
    }

    // Machine 0's rows 0 and 4 nearly parallel (kappa(R_0) ~ 1e7): its coordinates from the product, to the bit, even
    // from a scaled Gram matrix; the others' from the Gram matrix.
    for (let j = 0; j < N; j++) a.data[4 * N + j] = a.data[j] + 1e-7 * random.nextNormal();
    const illProduct = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M))!;
    const ill = rowGraphAndGram(kernels, a).gram;
    const illScaled = { ...ill, rowNorms: ill.rowNorms.map((x) => 2 * x) };
    const illMisread = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { rowGram: illScaled }))!;
    // Row 1 (machine 1) to machine 0: machine 0's coordinates and the row's own removal (machine 1's R^{-1}) only.
    expect(illMisread.deltaMax[1 * M + 0]).toBe(illProduct.deltaMax[1 * M + 0]);
    expect(illMisread.deltaMax[0 * M + 1]).not.toBeCloseTo(illProduct.deltaMax[0 * M + 1], 6);
  });

  it("are the same from the machines' R alone (Cholesky factors of the rows' Gram blocks, Q never formed) as through Q", () => {
    const kernels = selectedKernels();
    // Every machine on every column (the route from R alone needs it).
    const random = new SeededRandom(5);
    const a = matrix();
    for (let k = 0; k < N; k += M) for (let j = N - 6; j < N; j++) a.data[k * N + j] = random.nextNormal();
    const { gram } = rowGraphAndGram(kernels, a);
    const problem = createProblem({ A: a, partition: { assignment: Array.from(ASSIGNMENT) } });
    const system = buildDistributedSystem(problem);
    const factored = runSync(basisFactoredMatrixWork(kernels, system));
    const triangularFactorOf = (rows: Int32Array) => triangularFactorFromRowGram(kernels, gram, rows);
    const factors = runSync(buildDenseFactorsWork(problem, kernels, { triangularFactorOf }));
    // Every machine's R from the Gram matrix: no reflectors, no copy of its rows, so no Q to be had from it.
    expect(factors.machines.every(({ reflectors, a: rows }) => reflectors === null && rows === null)).toBe(true);
    const throughQ = runSync(
      rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { basesWork: () => doneWork(system.machines), rowGram: gram, factored }),
    )!;
    const fromR = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { factors: factors.machines, rowGram: gram, factored }))!;
    expect(Math.abs(fromR.lambdaMax / throughQ.lambdaMax - 1)).toBeLessThan(1e-9);
    expect(Math.abs(fromR.lambdaMin / throughQ.lambdaMin - 1)).toBeLessThan(1e-9);
    // The guidance's eigenvectors are converged to 1e-6 by either route, so the effects agree to about that.
    let compared = 0;
    for (let q = 0; q < N * M; q++) {
      expect(Number.isNaN(fromR.deltaMax[q])).toBe(Number.isNaN(throughQ.deltaMax[q]));
      if (Number.isNaN(throughQ.deltaMax[q])) continue;
      expect(Math.abs(fromR.deltaMax[q] - throughQ.deltaMax[q])).toBeLessThanOrEqual(
        1e-5 * (throughQ.lambdaMax + Math.abs(throughQ.deltaMax[q])),
      );
      expect(Math.abs(fromR.deltaMin[q] - throughQ.deltaMin[q])).toBeLessThanOrEqual(
        1e-5 * (throughQ.lambdaMin + Math.abs(throughQ.deltaMin[q])),
      );
      compared++;
    }
    expect(compared).toBe(N * (M - 1));
    const moves = Array.from({ length: N }, (_, k) => ({ row: k, to: (ASSIGNMENT[k] + 1 + (k % (M - 1))) % M }));
    const ritzQ = throughQ.rayleighRitz(moves);
    for (const [index, ritz] of fromR.rayleighRitz(moves).entries()) {
      expect(Math.abs(ritz!.lambdaMax / ritzQ[index]!.lambdaMax - 1)).toBeLessThan(1e-5);
      expect(Math.abs(ritz!.lambdaMin / ritzQ[index]!.lambdaMin - 1)).toBeLessThan(1e-5);
    }
    // S's ends given with their vectors (an evaluation's, its values to 1e-12): not computed again, the same effects to
    // about the guidance's tolerance (either run's vectors are that far from the eigenvectors); what is given is read.
    const { ends } = runSync(sEndsOfFactorsWork(kernels, factors, factored))!;
    const withEnds = runSync(
      rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { factors: factors.machines, rowGram: gram, factored, ends: ends! }),
    )!;
    expect(withEnds.lambdaMax).toBe(ends!.lambdaMax);
    expect(withEnds.lambdaMin).toBe(ends!.lambdaMin);
    expect(Math.abs(withEnds.lambdaMax / fromR.lambdaMax - 1)).toBeLessThan(1e-9);
    for (let q = 0; q < N * M; q++) {
      if (Number.isNaN(fromR.deltaMax[q])) continue;
      expect(Math.abs(withEnds.deltaMax[q] - fromR.deltaMax[q])).toBeLessThanOrEqual(
        5e-5 * (fromR.lambdaMax + Math.abs(fromR.deltaMax[q])),
      );
      expect(Math.abs(withEnds.deltaMin[q] - fromR.deltaMin[q])).toBeLessThanOrEqual(
        5e-5 * (fromR.lambdaMin + Math.abs(fromR.deltaMin[q])),
      );
    }
    const swapped = runSync(
      rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, {
        factors: factors.machines,
        rowGram: gram,
        factored,
        ends: { ...ends!, u: ends!.v, v: ends!.u },
      }),
    )!;
    expect(swapped.deltaMax).not.toEqual(withEnds.deltaMax);
    // The factors are what is read: each R doubled makes S a quarter of itself.
    const doubled = factors.machines.map((machine) => ({ ...machine, r: machine.r.map((x) => 2 * x) }));
    const quartered = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { factors: doubled, rowGram: gram, factored }))!;
    expect(Math.abs((4 * quartered.lambdaMax) / throughQ.lambdaMax - 1)).toBeLessThan(1e-9);
    // Without a factorization of A they are not read (Q's route, the QR of A's rows): the same values as alone.
    const alone = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { rowGram: gram }))!;
    const ignored = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { factors: doubled, rowGram: gram }))!;
    expect(ignored.lambdaMax).toBe(alone.lambdaMax);
    expect(ignored.deltaMax).toEqual(alone.deltaMax);

    // The caller's bases are asked for only when the route from R does not stand: here it does ...
    let asked = 0;
    const basesWork = function* () {
      asked++;
      yield undefined;
      return system.machines;
    };
    runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { factors: factors.machines, rowGram: gram, factored, basesWork }));
    expect(asked).toBe(0);
    // ... and with machine 0's rows 0 and 4 nearly parallel (kappa(R_0) ~ 1e7) it does not: the effects are those of
    // the bases given.
    for (let j = 0; j < N; j++) a.data[4 * N + j] = a.data[j] + 1e-7 * random.nextNormal();
    const ill = rowGraphAndGram(kernels, a).gram;
    const illProblem = createProblem({ A: a, partition: { assignment: Array.from(ASSIGNMENT) } });
    const illSystem = buildDistributedSystem(illProblem);
    const illFactored = runSync(basisFactoredMatrixWork(kernels, illSystem));
    const illFactors = runSync(
      buildDenseFactorsWork(illProblem, kernels, { triangularFactorOf: (rows) => triangularFactorFromRowGram(kernels, ill, rows) }),
    );
    const illOptions = { factors: illFactors.machines, rowGram: ill, factored: illFactored };
    const viaSystem = runSync(
      rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, {
        ...illOptions,
        basesWork: function* () {
          asked++;
          yield undefined;
          return illSystem.machines;
        },
      }),
    )!;
    expect(asked).toBe(1);
    const given = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { ...illOptions, basesWork: () => doneWork(illSystem.machines) }))!;
    expect(viaSystem.lambdaMax).toBe(given.lambdaMax);
    expect(viaSystem.deltaMax).toEqual(given.deltaMax);
    expect(viaSystem.deltaMin).toEqual(given.deltaMin);
  });

  it('give the same Rayleigh-Ritz values from the coordinates (dense) as from the vectors w and z (CSR)', () => {
    const a = matrix();
    const kernels = selectedKernels();
    const dense = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M))!;
    const csr = runSync(rowMoveEffectsWork(kernels, csrFromDense(a), ASSIGNMENT, M))!;
    const moves = Array.from({ length: N }, (_, k) => ({ row: k, to: (ASSIGNMENT[k] + 1 + (k % (M - 1))) % M }));
    const fromCoordinates = dense.rayleighRitz(moves);
    const fromVectors = csr.rayleighRitz(moves);
    for (const [index, ritz] of fromCoordinates.entries()) {
      const reference = fromVectors[index]!;
      expect(Math.abs(ritz!.lambdaMax / reference.lambdaMax - 1)).toBeLessThan(1e-9);
      expect(Math.abs(ritz!.lambdaMin / reference.lambdaMin - 1)).toBeLessThan(1e-9);
    }
  });

  it("share one G = Q^T Q's memory between the rounds of a cache, each round's Rayleigh-Ritz values its own", () => {
    const a = matrix();
    const kernels = selectedKernels();
    const moved = ASSIGNMENT.slice();
    moved[1] = 2;
    const moves = Array.from({ length: N }, (_, k) => ({ row: k, to: (moved[k] + 1 + (k % (M - 1))) % M }));
    const alone = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M))!.rayleighRitz(moves);
    const movedAlone = runSync(rowMoveEffectsWork(kernels, a, moved, M))!.rayleighRitz(moves);
    const cache = new MoveEffectsCache(a);
    const first = runSync(rowMoveEffectsWork(kernels, a, ASSIGNMENT, M, { cache }))!;
    expect(first.rayleighRitz(moves)).toEqual(alone);
    const held = cache.gram!.data;
    const second = runSync(rowMoveEffectsWork(kernels, a, moved, M, { cache }))!;
    expect(second.rayleighRitz(moves)).toEqual(movedAlone);
    // The second round wrote its G where the first's was; the first, asked again, makes its own again.
    expect(cache.gram!.data).toBe(held);
    expect(first.rayleighRitz(moves)).toEqual(alone);
    expect(second.rayleighRitz(moves)).toEqual(movedAlone);
  });

  it("brackets each move's exact extreme eigenvalues of S by Rayleigh-Ritz", () => {
    const a = matrix();
    const effects = runSync(rowMoveEffectsWork(selectedKernels(), a, ASSIGNMENT, M))!;
    const moves = [
      [0, 1],
      [5, 0],
      [10, 3],
      [39, 2],
    ].map(([row, to]) => ({ row, to }));
    // Taken together (one product with S for all moves) as one by one.
    const together = effects.rayleighRitz(moves);
    for (const [index, { row: k, to: h }] of moves.entries()) {
      const moved = ASSIGNMENT.slice();
      moved[k] = h;
      const exact = exactEnds(a, moved);
      const ritz = together[index]!;
      const alone = effects.rayleighRitz([{ row: k, to: h }])[0]!;
      expect(Math.abs(ritz.lambdaMax - alone.lambdaMax)).toBeLessThan(1e-12);
      expect(Math.abs(ritz.lambdaMin - alone.lambdaMin)).toBeLessThan(1e-12 * Math.abs(alone.lambdaMin) + 1e-15);
      expect(ritz.lambdaMax).toBeLessThanOrEqual(exact.max + 1e-10);
      expect(ritz.lambdaMin).toBeGreaterThanOrEqual(exact.min - 1e-10);
      // The subspace holds the current extreme vectors: the moved ends are close to it (a single row moved).
      expect(ritz.lambdaMax).toBeGreaterThan(0.9 * exact.max);
    }
  });
});
