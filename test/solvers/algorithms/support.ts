/**
 * Test-only references: fixture loading, random systems, and the paper's quantities computed
 * independently of src/ with ml-matrix (QR, SVD, eigenvalues), to check the solvers against.
 */
import { EigenvalueDecomposition, Matrix, QrDecomposition, SingularValueDecomposition } from 'ml-matrix';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';
import { buildDistributedSystem, type DenseSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { partitionFromAssignment } from '../../../src/solvers/problem.js';

/** System A x = b with b = A * ones (x* = ones) and the given row assignment. */
export function systemFromRows(rows: number[][], assignment: readonly number[]): DenseSystem {
  const n = rows.length;
  const A = fromRows(rows);
  const xTrue = new Float64Array(n).fill(1);
  const b = new Float64Array(n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) b[i] += rows[i][j];
  const m = Math.max(...assignment) + 1;
  return buildDistributedSystem({ n, A, b, xTrue, partition: partitionFromAssignment(Int32Array.from(assignment), m) });
}

/** Seeded PRNG (mulberry32) with a Box-Muller normal. */
export function prng(seed: number): { uniform: () => number; normal: () => number; int: (k: number) => number } {
  let s = seed >>> 0;
  const uniform = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = (): number => {
    const u = Math.max(uniform(), 1e-300);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
  return { uniform, normal, int: (k) => Math.floor(uniform() * k) };
}

export interface RandomCase {
  rows: number[][];
  assignment: number[];
  m: number;
}

/**
 * A random n x n matrix and a random (not contiguous) partition over m machines. `sigma` scales the
 * entries outside a hidden block structure (rows and columns permuted): sigma = 1 is a plain
 * Gaussian matrix, small sigma makes the machines' row spaces nearly orthogonal (Example 2), 0
 * exactly so (Example 1, sparse supports).
 */
export function randomCase(n: number, m: number, seed: number, sigma: number): RandomCase {
  const r = prng(seed);
  const perm = (k: number): number[] => {
    const p = Array.from({ length: k }, (_, i) => i);
    for (let i = k - 1; i > 0; i--) {
      const j = r.int(i + 1);
      [p[i], p[j]] = [p[j], p[i]];
    }
    return p;
  };
  // Block sizes: every machine at least one row.
  const sizes = new Array<number>(m).fill(1);
  for (let k = m; k < n; k++) sizes[r.int(m)]++;
  const rowOrder = perm(n);
  const colOrder = perm(n);
  const assignment = new Array<number>(n);
  const rows = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  let start = 0;
  for (let i = 0; i < m; i++) {
    for (let k = start; k < start + sizes[i]; k++) {
      const row = rowOrder[k];
      assignment[row] = i;
      for (let c = 0; c < n; c++) {
        const inBlock = c >= start && c < start + sizes[i];
        rows[row][colOrder[c]] = inBlock ? r.normal() : sigma * r.normal();
      }
    }
    start += sizes[i];
  }
  return { rows, assignment, m };
}

export function orthonormalRowBasis(rows: number[][]): Matrix {
  // Q (n x p) with orthonormal columns spanning the row space: QR of A_i^T.
  return new QrDecomposition(new Matrix(rows).transpose()).orthogonalMatrix;
}

export function machineRows(c: RandomCase | { rows: number[][]; assignment: number[]; m: number }): number[][][] {
  const out: number[][][] = Array.from({ length: c.m }, () => []);
  c.rows.forEach((row, k) => out[c.assignment[k]].push(row));
  return out;
}

export function symmetricEigenvalues(M: Matrix): number[] {
  return new EigenvalueDecomposition(M, { assumeSymmetric: true }).realEigenvalues.slice().sort((a, b) => a - b);
}

export function spectralRadius(M: Matrix): number {
  const e = new EigenvalueDecomposition(M);
  let rho = 0;
  e.realEigenvalues.forEach((re, k) => {
    rho = Math.max(rho, Math.hypot(re, e.imaginaryEigenvalues[k]));
  });
  return rho;
}

const angleBetween = (u: number[], v: number[]): number => {
  let uv = 0;
  let uu = 0;
  let vv = 0;
  for (let k = 0; k < u.length; k++) {
    uv += u[k] * v[k];
    uu += u[k] * u[k];
    vv += v[k] * v[k];
  }
  return Math.acos(Math.min(1, Math.abs(uv) / Math.sqrt(uu * vv)));
};

/** Everything the bounds and rates are written in, computed from scratch with ml-matrix. */
export interface ReferenceMetrics {
  n: number;
  m: number;
  blockSizes: number[];
  bases: Matrix[];
  S: Matrix;
  lambdaMinS: number;
  lambdaMaxS: number;
  kappaS: number;
  L: number;
  mu: number;
  kappaAtA: number;
  kappaA: number;
  theta: number[][];
  thetaH: number;
  cosThetaH: number;
  thetaHPair: [number, number] | null;
  phi: (number | null)[];
  phiMin: number | null;
  rowNormRatio: number;
  theorem4KappaALowerBound: number;
  spectral: SpectralData;
}

export function referenceMetrics(c: { rows: number[][]; assignment: number[]; m: number }): ReferenceMetrics {
  const n = c.rows.length;
  const m = c.m;
  const blocks = machineRows(c);
  const bases = blocks.map(orthonormalRowBasis);
  let S = Matrix.zeros(n, n);
  for (const Q of bases) S = S.add(Q.mmul(Q.transpose()));
  const evS = symmetricEigenvalues(S);
  const sv = new SingularValueDecomposition(new Matrix(c.rows)).diagonal;
  const L = sv[0] ** 2;
  const mu = sv[n - 1] ** 2;
  const theta = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  let thetaH = Math.PI / 2;
  let cosThetaH = 0;
  let thetaHPair: [number, number] | null = null;
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++) {
      const cos = Math.min(1, new SingularValueDecomposition(bases[i].transpose().mmul(bases[j]), { autoTranspose: true }).diagonal[0]);
      const t = Math.acos(cos);
      theta[i][j] = theta[j][i] = t;
      if (thetaHPair === null || t < thetaH) {
        thetaH = t;
        cosThetaH = cos;
        thetaHPair = [i, j];
      }
    }
  }
  const phi = blocks.map((b) => {
    if (b.length < 2) return null;
    let best = Math.PI / 2;
    for (let k = 0; k < b.length; k++) for (let l = k + 1; l < b.length; l++) best = Math.min(best, angleBetween(b[k], b[l]));
    return best;
  });
  const defined = phi.filter((p): p is number => p !== null);
  const norms = c.rows.map((row) => Math.hypot(...row));
  let minScaled = Infinity;
  for (let l = 0; l < n; l++) {
    let thetaMin = Math.PI / 2;
    for (let k = 0; k < n; k++) if (k !== l) thetaMin = Math.min(thetaMin, angleBetween(c.rows[k], c.rows[l]));
    minScaled = Math.min(minScaled, norms[l] * Math.sin(thetaMin));
  }
  return {
    n,
    m,
    blockSizes: blocks.map((b) => b.length),
    bases,
    S,
    lambdaMinS: evS[0],
    lambdaMaxS: evS[n - 1],
    kappaS: evS[n - 1] / evS[0],
    L,
    mu,
    kappaAtA: L / mu,
    kappaA: sv[0] / sv[n - 1],
    theta,
    thetaH,
    cosThetaH,
    thetaHPair,
    phi,
    phiMin: defined.length === 0 ? null : Math.min(...defined),
    rowNormRatio: Math.max(...norms) / Math.min(...norms),
    theorem4KappaALowerBound: Math.max(...norms) / minScaled,
    spectral: { m, lambdaMinS: evS[0], lambdaMaxS: evS[n - 1], L, mu },
  };
}
