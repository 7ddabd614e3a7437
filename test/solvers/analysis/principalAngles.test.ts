import { Matrix, QrDecomposition, SingularValueDecomposition } from 'ml-matrix';
import { expect, it } from 'vitest';
import {
  BLOCK_LANCZOS_STEPS,
  blockTopWork,
  computePrincipalAngles,
  largestSingularValueWork,
  NEAR_PARALLEL_COSINE,
  sineFromSingularVector,
  thetaHFromRowGramWork,
  thetaHWork,
} from '../../../src/solvers/analysis/principalAngles.js';
import { lanczosWork } from '../../../src/solvers/eigen/lanczos.js';
import { gramBlock, gramBlocksWork, type RowGram } from '../../../src/solvers/analysis/gramBlocks.js';
import type { DenseMatrix } from '../../../src/solvers/matrix.js';
import { doneWork, runSync, type Work } from '../../../src/solvers/cooperative.js';
import type { DenseMachineData, DenseSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { loadFixtures } from '../../support/fixtures.js';
import { describeEachBackend } from '../../support/backends.js';
import { systemOf } from '../../support/systems.js';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import { triangularFactorFromRowGram } from '../../../src/solvers/analysis/kappaS.js';
import {
  buildDenseFactorsWork,
  buildDistributedSystem,
  denseMachineOfFactorWork,
} from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { generateMatrix } from '../../../src/solvers/input/generators.js';

// Hadamard / 2: orthogonal with entries exactly representable, so rotating by it is exact up to the
// rounding of the products (relative eps per entry).
const H4 = [
  [1, 1, 1, 1],
  [1, -1, 1, -1],
  [1, 1, -1, -1],
  [1, -1, -1, 1],
].map((r) => r.map((v) => v / 2));
const rotate = (rows: number[][]) => rows.map((r) => H4[0].map((_, j) => r.reduce((s, v, k) => s + v * H4[k][j], 0)));

/** The rows' Gram matrix as the partition advisor's row graph keeps it (RowGram: normalized rows' products). */
function rowGramOf(a: DenseMatrix): RowGram {
  const { rows, cols, data } = a;
  const rowNorms = Float64Array.from({ length: rows }, (_, i) => Math.hypot(...data.subarray(i * cols, (i + 1) * cols)));
  const normalized = new Float64Array(rows * rows);
  for (let i = 0; i < rows; i++)
    for (let j = i; j < rows; j++) {
      let s = 0;
      for (let t = 0; t < cols; t++) s += (data[i * cols + t] / rowNorms[i]) * (data[j * cols + t] / rowNorms[j]);
      normalized[i * rows + j] = s;
      normalized[j * rows + i] = s;
    }
  return { rows, normalized, rowNorms };
}

/** machineOf for thetaHFromRowGramWork on a built system: its machines as they are. */
function machineOf(machines: readonly DenseMachineData[]): (i: number) => Work<DenseMachineData> {
  return (i) => doneWork(machines[i]);
}

describeEachBackend('smallest principal angle between two machines', (backend) => {
  // The TypeScript reflectors reproduce these exactly built bases to the last bit (2 ulps below).
  // LAPACK forms Q from 1 - tau (dlarfg / dlarfb), a few ulps off: cos(theta) to 4 eps absolute. The cosine of these
  // small blocks comes from a bidiagonalization on both (./principalAngles.ts SMALL_BLOCK): theta on the arccos path
  // (above 0.45 rad) to 4 eps / sin(theta), on the atan2 path to 2 eps relative.
  const cosTolerance = backend === 'typescript' ? 2 * Number.EPSILON : 4 * Number.EPSILON;
  const thetaTolerance = (theta: number) => Math.max(2 * Number.EPSILON * theta, theta > 0.45 ? (4 * Number.EPSILON) / Math.sin(theta) : 0);
  // span(e1, e2) and span(e1 + d e3, e4) meet at exactly atan(d).
  for (const d of [0.7, 0.5, 0.2, 1e-3, 1e-7, 1e-10]) {
    it(`is atan(${d}) for two planes built exactly (both the arccos and the atan2(sin, cos) paths)`, () => {
      const rows = [
        [1, 0, 0, 0],
        [0, 1, 0, 0],
        [1, 0, d, 0],
        [0, 0, 0, 1],
      ];
      const expected = Math.atan(d);
      const plain = computePrincipalAngles(systemOf(rows, [0, 0, 1, 1], 2));
      expect(Math.abs(plain.thetaH - expected)).toBeLessThanOrEqual(thetaTolerance(expected));
      expect(plain.thetaHPair).toEqual([0, 1]);
      expect(plain.theta).toEqual([
        [0, plain.thetaH],
        [plain.thetaH, 0],
      ]);
      expect(Math.abs(plain.cosThetaH - 1 / Math.sqrt(1 + d * d))).toBeLessThanOrEqual(cosTolerance);
      // Rotated by an orthogonal matrix and mixed within each machine: the same subspaces up to
      // rounding of the entries (a few eps, absolute).
      const rotated = rotate(rows);
      const mixed = [
        rotated[0].map((v, j) => 0.8 * v - 1.3 * rotated[1][j]),
        rotated[1].map((v, j) => 0.4 * v + 2.1 * rotated[0][j]),
        rotated[3].map((v, j) => 1.7 * v + 0.6 * rotated[2][j]),
        rotated[2].map((v, j) => -0.9 * v + 0.3 * rotated[3][j]),
      ];
      const mixedAngles = computePrincipalAngles(systemOf(mixed, [0, 0, 1, 1], 2));
      expect(Math.abs(mixedAngles.thetaH - expected)).toBeLessThan(1e-15);
    });
  }

  it('is accurate where arccos(cos) is not (1e-10 rad: cos rounds to 1)', () => {
    expect(Math.acos(Math.cos(1e-10))).toBe(0);
    expect(NEAR_PARALLEL_COSINE).toBeLessThan(Math.cos(0.4));
  });

  for (const [sizes, assignment] of [
    ['1 row vs 3 rows', [0, 1, 1, 1]],
    ['3 rows vs 1 row', [1, 0, 0, 0]],
  ] as const) {
    it(`handles unequal basis sizes (${sizes})`, () => {
      const d = 1e-8;
      const rows = [
        [1, 0, d, 0],
        [1, 0, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 0, 1],
      ];
      const angles = computePrincipalAngles(systemOf(rotate(rows), [...assignment], 2));
      expect(Math.abs(angles.thetaH - Math.atan(d))).toBeLessThan(1e-15);
    });
  }

  it('is pi/2 exactly for machines with disjoint column supports', () => {
    const rows = [
      [1, 2, 0, 0],
      [3, 1, 0, 0],
      [0, 0, 1, 1],
      [0, 0, 2, -1],
    ];
    const angles = computePrincipalAngles(systemOf(rows, [0, 0, 1, 1], 2));
    expect(angles.thetaH).toBe(Math.PI / 2);
    expect(angles.cosThetaH).toBe(0);
  });

  it('is pi/2 with no pair for a single machine', () => {
    const angles = computePrincipalAngles(
      systemOf(
        [
          [2, 1],
          [1, 3],
        ],
        [0, 0],
        1,
      ),
    );
    expect(angles.thetaH).toBe(Math.PI / 2);
    expect(angles.thetaHPair).toBeNull();
    expect(angles.theta).toEqual([[0]]);
  });

  for (const mean of [0, 1]) {
    it(`matches ml-matrix references on random Gaussian data (mean ${mean})`, () => {
      const n = 30;
      const m = 3;
      const rng = new SeededRandom(21 + mean);
      const rows = Array.from({ length: n }, () => Array.from({ length: n }, () => mean + 2 * rng.nextDouble() - 1));
      const assignment = Array.from({ length: n }, (_, k) => k % m);
      const angles = computePrincipalAngles(systemOf(rows, assignment, m));
      const bases = Array.from({ length: m }, (_, i) => {
        const ai = new Matrix(rows.filter((_, k) => assignment[k] === i)).transpose();
        return new QrDecomposition(ai).orthogonalMatrix.subMatrix(0, n - 1, 0, ai.columns - 1);
      });
      const svd = (x: Matrix) =>
        new SingularValueDecomposition(x, { computeLeftSingularVectors: false, computeRightSingularVectors: false }).diagonal;
      for (let i = 0; i < m; i++)
        for (let j = i + 1; j < m; j++) {
          const g = bases[i].transpose().mmul(bases[j]);
          const c = svd(g)[0];
          // Reference sine from ml-matrix: smallest singular value of Q_j - Q_i (Q_i^T Q_j).
          const s = svd(bases[j].clone().sub(bases[i].mmul(g))).at(-1)!;
          expect(Math.abs(angles.theta[i][j] - Math.atan2(s, c))).toBeLessThan(1e-13);
          expect(angles.theta[j][i]).toBe(angles.theta[i][j]);
          if (c < 0.8) expect(Math.abs(angles.theta[i][j] - Math.acos(c))).toBeLessThan(1e-13);
        }
    });
  }

  const generated = loadFixtures().filter((c) => c.A !== undefined);
  for (const fixture of generated) {
    it(`reproduces the theta matrix of fixture ${fixture.name}`, () => {
      const e = fixture.expected;
      const angles = computePrincipalAngles(systemOf(fixture.A!, fixture.partition.assignment, e.m));
      const tol = fixture.name.startsWith('tiny-angle') ? 1e-12 : 1e-9;
      for (let i = 0; i < e.m; i++) for (let j = 0; j < e.m; j++) expect(Math.abs(angles.theta[i][j] - e.theta[i][j])).toBeLessThan(tol);
    });
  }

  it('gives theta_H alone (the sine route for the pairs nearest parallel only) equal to the full computation, to the bit', () => {
    const kernels = selectedKernels();
    const thetaHAlone = (system: DenseSystem): number =>
      runSync(
        (function* () {
          return yield* thetaHWork(kernels, system.machines, yield* gramBlocksWork(kernels, system.machines));
        })(),
      );
    const systems: DenseSystem[] = generated.map((fixture) => systemOf(fixture.A!, fixture.partition.assignment, fixture.expected.m));
    // Near-parallel pairs everywhere (mean 1: every pair ~0.3 rad here), wide angles (mean 0), a single machine.
    for (const [mean, m] of [
      [1, 6],
      [0, 5],
      [0, 1],
    ]) {
      const n = 60;
      const random = new SeededRandom(17);
      const rows = Array.from({ length: n }, () => Array.from({ length: n }, () => mean + random.nextNormal()));
      systems.push(
        systemOf(
          rows,
          Array.from({ length: n }, (_, k) => k % m),
          m,
        ),
      );
    }
    let nearParallel = 0;
    let fromRowGram = 0;
    for (const system of systems) {
      const angles = computePrincipalAngles(system, kernels);
      expect(thetaHAlone(system)).toBe(angles.thetaH);
      if (Math.cos(angles.thetaH) >= NEAR_PARALLEL_COSINE) nearParallel++;
      // Most blocks from the rows' Gram matrix (null: declined, for an ill-conditioned R_i or a tall system).
      const pruned = runSync(thetaHFromRowGramWork(kernels, system.machines, rowGramOf(system.A), machineOf(system.machines)));
      if (pruned !== null) {
        expect(pruned).toBe(angles.thetaH);
        fromRowGram++;
      }
    }
    expect(nearParallel).toBeGreaterThanOrEqual(2);
    expect(fromRowGram).toBeGreaterThanOrEqual(3);
  });

  it("gives theta_H from machines held as their R alone (Cholesky of the rows' Gram matrix), forming few machines' Q", () => {
    const kernels = selectedKernels();
    for (const [mean, m] of [
      [1, 6],
      [0, 5],
    ]) {
      const n = 90;
      const random = new SeededRandom(41);
      const A = generateMatrix({ generator: 'gaussian', n, mean, std: 1, seed: 41 + m });
      const assignment = Array.from({ length: n }, () => Math.floor(random.nextDouble() * m));
      for (let i = 0; i < m; i++) assignment[i] = i;
      const problem = createProblem({ A, partition: { assignment } });
      const gram = rowGramOf(A);
      const factors = runSync(
        buildDenseFactorsWork(problem, kernels, { triangularFactorOf: (rows) => triangularFactorFromRowGram(kernels, gram, rows) }),
      );
      expect(factors.machines.every((machine) => machine.reflectors === null)).toBe(true);
      const asked: number[] = [];
      const thetaH = runSync(
        thetaHFromRowGramWork(kernels, factors.machines, gram, function* (i) {
          asked.push(i);
          return yield* denseMachineOfFactorWork(factors, i, kernels);
        }),
      );
      // An analysis' theta_H of the same partition, to the bit.
      expect(thetaH).toBe(analyze(buildDistributedSystem(problem, kernels)).heterogeneity.thetaH);
      expect(new Set(asked).size).toBe(asked.length);
      expect(asked.length).toBeLessThan(m);
    }
  });

  it("declines theta_H from the rows' Gram matrix when an R_i is ill-conditioned (the margin would keep every pair)", () => {
    const kernels = selectedKernels();
    const random = new SeededRandom(31);
    const n = 40;
    const rows = Array.from({ length: n }, () => Array.from({ length: n }, () => random.nextNormal()));
    // Row 1 within 1e-7 of row 0 on machine 0: kappa(R_0) ~ 1e7.
    rows[1] = rows[0].map((v, j) => v + 1e-7 * rows[1][j]);
    const system = systemOf(
      rows,
      rows.map((_, k) => Math.floor(k / 10)),
      4,
    );
    expect(runSync(thetaHFromRowGramWork(kernels, system.machines, rowGramOf(system.A), machineOf(system.machines)))).toBeNull();
  });
});

/**
 * Q_1^T Q_2 (rows x cols) of two orthonormal bases (ml-matrix's QR) of Gaussian vectors of R^n with entries
 * mean + N(0, 1), and its sigma_max by ml-matrix's SVD.
 */
function randomGramBlock(
  random: SeededRandom,
): (rows: number, cols: number, n: number, mean: number) => { gram: Matrix; expected: number } {
  const basis = (n: number, p: number, mean: number): Matrix => {
    const vectors = new Matrix(n, p);
    for (let i = 0; i < n; i++) for (let j = 0; j < p; j++) vectors.set(i, j, mean + random.nextNormal());
    return new QrDecomposition(vectors).orthogonalMatrix.subMatrix(0, n - 1, 0, p - 1);
  };
  return (rows, cols, n, mean) => {
    const gram = basis(n, rows, mean)
      .transpose()
      .mmul(basis(n, cols, mean));
    return { gram, expected: new SingularValueDecomposition(gram).diagonal[0] };
  };
}

describeEachBackend('a Gram block sigma_max', () => {
  // Q_1^T Q_2 of two random orthonormal bases of R^n: of halves of R^120 (a clustered top: Lanczos needs ~p steps), of
  // R^1200 with a common mean direction of the rows (a top apart from the rest: a few steps), and of two sizes.
  const gramBlockOf = randomGramBlock(new SeededRandom(23));

  for (const [rows, cols, n, mean] of [
    [60, 60, 120, 0],
    [120, 120, 1200, 1],
    [50, 80, 140, 0],
    [80, 50, 140, 0],
  ]) {
    it(`Lanczos within its steps, else the bidiagonalization: ml-matrix's SVD to 1e-14 (${rows} x ${cols} of R^${n}, mean ${mean})`, () => {
      const kernels = selectedKernels();
      const { gram, expected } = gramBlockOf(rows, cols, n, mean);
      const g = Float64Array.from(gram.to1DArray());
      // A cap the block needs more steps than (mean 0), so that the bidiagonalization takes over, checked here.
      const steps = mean === 0 ? 8 : BLOCK_LANCZOS_STEPS;
      const p = Math.min(rows, cols);
      const m = rows >= cols ? g : Float64Array.from(gram.transpose().to1DArray());
      const op = {
        size: p,
        apply: (x: Float64Array, y: Float64Array) =>
          kernels.dense.normalProduct(m, Math.max(rows, cols), p, x, y, new Float64Array(Math.max(rows, cols))),
      };
      expect(runSync(lanczosWork(kernels, op, { which: 'largest', maxIterations: steps })).converged).toBe(mean !== 0);
      for (const cap of [steps, 0, Infinity])
        expect(Math.abs(runSync(largestSingularValueWork(kernels, g, rows, cols, cap)) - expected)).toBeLessThan(1e-14);
    });
  }
});

describeEachBackend('sigma_max of a small Gram block (at most 32 rows or columns: the dense eigensolver)', () => {
  const gramBlockOf = randomGramBlock(new SeededRandom(31));
  for (const [rows, cols, n, mean] of [
    [10, 20, 60, 0],
    [20, 10, 60, 1],
    [32, 32, 70, 0],
    [32, 40, 80, 1],
  ]) {
    it(`equals ml-matrix's SVD to 1e-14, its vector a unit right singular vector (${rows} x ${cols} of R^${n}, mean ${mean})`, () => {
      const kernels = selectedKernels();
      const { gram, expected } = gramBlockOf(rows, cols, n, mean);
      const top = runSync(blockTopWork(kernels, Float64Array.from(gram.to1DArray()), rows, cols));
      expect(Math.abs(top.c - expected)).toBeLessThan(1e-14);
      // The vector is on the smaller side: |M v| = sigma_max for M = G (cols <= rows) or G^T.
      const v = top.vector!;
      expect(v).not.toBeNull();
      const m = cols <= rows ? gram : gram.transpose();
      const mv = m.mmul(Matrix.columnVector(Array.from(v)));
      expect(Math.abs(Math.hypot(...v) - 1)).toBeLessThan(1e-14);
      expect(Math.abs(mv.norm() - expected)).toBeLessThan(1e-14);
      // Kato-Temple's bound on lambda_max - |M v|^2: rounding-level (1e-28 to 2e-26 here; the gap is smallest at mean 0).
      expect(top.squareError).toBeLessThan(1e-24);
    });
  }
});

describeEachBackend("the sine of a near-parallel pair from its cosine's singular vector", () => {
  // Q_b - Q_a G_ab with ml-matrix (b the machine with fewer rows), and its smallest singular value.
  const referenceSine = (a: DenseMachineData, b: DenseMachineData, n: number): number => {
    const spread = (machine: DenseMachineData): Matrix => {
      const q = new Matrix(machine.p, n);
      for (let k = 0; k < machine.p; k++) machine.cols.forEach((col, t) => q.set(k, col, machine.q[k * machine.c + t]));
      return q;
    };
    const qa = spread(a);
    const qb = spread(b);
    const w = qb.sub(qa.mmul(qb.transpose()).transpose().mmul(qa));
    return Math.min(...new SingularValueDecomposition(w.transpose()).diagonal);
  };

  // Machines of 40, 50 and 60 rows (Lanczos's blocks), and of 10, 15 and 20 (small blocks: the dense eigensolver's).
  for (const sizes of [
    [40, 50, 60],
    [10, 15, 20],
  ])
    it(`equals sigma_min(Q_b - Q_a G_ab) by ml-matrix to 8 eps (machines of ${sizes.join(', ')} rows, near parallel)`, () => {
      const kernels = selectedKernels();
      const random = new SeededRandom(29);
      const n = 2 * (sizes[0] + sizes[1] + sizes[2]);
      // Mean 1: the rows share a direction, so every pair is near parallel.
      const rows = Array.from({ length: n }, () => Array.from({ length: n }, () => 1 + random.nextNormal()));
      const system = systemOf(
        rows,
        rows.map((_, k) => (k < sizes[0] ? 0 : k < sizes[0] + sizes[1] ? 1 : k < sizes[0] + sizes[1] + sizes[2] ? 2 : 3)),
        4,
      );
      const gram = runSync(gramBlocksWork(kernels, system.machines));
      for (const [i, j] of [
        [0, 1],
        [0, 2],
        [1, 2],
      ]) {
        const [mi, mj] = [system.machines[i], system.machines[j]];
        const g = gramBlock(gram, i, j)!;
        const top = runSync(blockTopWork(kernels, g, mi.p, mj.p));
        expect(top.c).toBeGreaterThanOrEqual(NEAR_PARALLEL_COSINE);
        const sine = sineFromSingularVector(kernels, mi, mj, g, top);
        expect(sine).not.toBeNull();
        const expected = mj.p <= mi.p ? referenceSine(mi, mj, n) : referenceSine(mj, mi, n);
        expect(Math.abs(sine! - expected)).toBeLessThan(8 * Number.EPSILON);
      }
    });

  it('gives way to the QR of W below 1e-3 rad, and when the bound is not met', () => {
    const kernels = selectedKernels();
    const d = 1e-6;
    const system = systemOf(
      [
        [1, 0, 0, 0],
        [0, 1, 0, 0],
        [1, 0, d, 0],
        [0, 0, 0, 1],
      ],
      [0, 0, 1, 1],
      2,
    );
    const g = gramBlock(runSync(gramBlocksWork(kernels, system.machines)), 0, 1)!;
    const top = runSync(blockTopWork(kernels, g, 2, 2));
    expect(sineFromSingularVector(kernels, system.machines[0], system.machines[1], g, top)).toBeNull();
    // theta_H = d (to first order) all the same, by the QR.
    expect(Math.abs(computePrincipalAngles(system, kernels).thetaH - Math.atan(d))).toBeLessThan(1e-20);
    expect(sineFromSingularVector(kernels, system.machines[0], system.machines[1], g, { ...top, squareError: Infinity })).toBeNull();
  });
});
