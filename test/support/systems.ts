/**
 * Small seeded matrices and dense distributed systems for the numerical tests: rows given by hand,
 * uniform random matrices, Gaussian systems. Each test compares against an independent reference
 * (ml-matrix, a closed form, the other backend), so these only need to be reproducible.
 */
import { SingularValueDecomposition, type Matrix } from 'ml-matrix';
import { buildDistributedSystem, type DenseSystem } from '../../src/solvers/distributed/distributedSystem.js';
import { fromRows, type DenseMatrix } from '../../src/solvers/matrix.js';
import { partitionFromAssignment } from '../../src/solvers/problem.js';
import { SeededRandom } from '../../src/solvers/random.js';

/** The dense system of `rows`, row k on machine `assignment[k]` of `m`; b = 0 (no analysis reads it). */
export function systemOf(rows: number[][], assignment: number[], m: number): DenseSystem {
  const A = fromRows(rows);
  return buildDistributedSystem({
    n: A.rows,
    A,
    b: new Float64Array(A.rows),
    xTrue: null,
    partition: partitionFromAssignment(Int32Array.from(assignment), m),
  });
}

/**
 * A rows x cols matrix whose entries are uniform in [-1, 1), each kept with probability `density`
 * (else 0). `random` is a seed, or a generator the caller goes on drawing from.
 */
export function randomMatrix(rows: number, cols: number, random: number | SeededRandom, density = 1): DenseMatrix {
  const rng = typeof random === 'number' ? new SeededRandom(random) : random;
  const data = new Float64Array(rows * cols);
  for (let k = 0; k < data.length; k++) data[k] = rng.nextDouble() < density ? 2 * rng.nextDouble() - 1 : 0;
  return { rows, cols, data };
}

export interface GaussianSystemOptions {
  /** Mean of the N(mean, 1) entries; 1 by default (the paper's heterogeneous case). */
  mean?: number;
  /** Share of the off-diagonal entries drawn (the others 0); the diagonal is always drawn. */
  density?: number;
  /** The machine of row k; contiguous blocks floor(k m / n) by default. */
  machineOfRow?: (row: number, n: number, m: number) => number;
}

/** An n x n seeded Gaussian system on m machines, b = 1. */
export function gaussianSystem(n: number, m: number, seed: number, options: GaussianSystemOptions = {}): DenseSystem {
  const { mean = 1, density = 1, machineOfRow = (k: number) => Math.floor((k * m) / n) } = options;
  const rng = new SeededRandom(seed);
  const data = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) if (i === j || rng.nextDouble() < density) data[i * n + j] = mean + rng.nextNormal();
  return buildDistributedSystem({
    n,
    A: { rows: n, cols: n, data },
    b: new Float64Array(n).fill(1),
    xTrue: null,
    partition: partitionFromAssignment(
      Int32Array.from({ length: n }, (_, k) => machineOfRow(k, n, m)),
      m,
    ),
  });
}

/** An n x n matrix of uniform entries in [mean - 1, mean + 1), as nested rows. */
export function randomRows(n: number, seed: number, mean = 0): number[][] {
  const rng = new SeededRandom(seed);
  return Array.from({ length: n }, () => Array.from({ length: n }, () => mean + 2 * rng.nextDouble() - 1));
}

/** The singular values of x by ml-matrix's SVD (an independent reference for the kernels' routines). */
export function svdValues(x: Matrix): number[] {
  return new SingularValueDecomposition(x, { computeLeftSingularVectors: false, computeRightSingularVectors: false, autoTranspose: true })
    .diagonal;
}
