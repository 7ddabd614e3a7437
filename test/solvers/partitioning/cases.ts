/**
 * The advisor's check cases: a block-diagonal matrix (12 blocks of 100) and a 2-D
 * Poisson matrix, rows and columns shuffled by seeded permutations. test/reference/partitioning.py
 * builds the same matrices (the permutations are written into its JSON) and computes kappa(S).
 */
import type { CsrMatrix, DenseMatrix } from '../../../src/solvers/matrix.js';
import { readMatrixCsr } from '../sparse/support.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';

/** B[perm_r[k], perm_c[l]] = A[k, l]: rows and columns shuffled. */
export function shuffleDense(a: DenseMatrix, rowPerm: Int32Array, colPerm: Int32Array): DenseMatrix {
  const n = a.rows;
  const data = new Float64Array(n * n);
  for (let k = 0; k < n; k++) for (let l = 0; l < n; l++) data[rowPerm[k] * n + colPerm[l]] = a.data[k * n + l];
  return { rows: n, cols: n, data };
}

export function shuffleCsr(a: CsrMatrix, rowPerm: Int32Array, colPerm: Int32Array): CsrMatrix {
  const n = a.rows;
  const rowOf = new Int32Array(n);
  for (let k = 0; k < n; k++) rowOf[rowPerm[k]] = k;
  const rowPtr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) rowPtr[i + 1] = rowPtr[i] + a.rowPtr[rowOf[i] + 1] - a.rowPtr[rowOf[i]];
  const colIdx = new Int32Array(rowPtr[n]);
  const values = new Float64Array(rowPtr[n]);
  for (let i = 0; i < n; i++) {
    const k = rowOf[i];
    const entries: [number, number][] = [];
    for (let p = a.rowPtr[k]; p < a.rowPtr[k + 1]; p++) entries.push([colPerm[a.colIdx[p]], a.values[p]]);
    entries.sort((x, y) => x[0] - y[0]);
    entries.forEach(([c, v], q) => {
      colIdx[rowPtr[i] + q] = c;
      values[rowPtr[i] + q] = v;
    });
  }
  return { rows: n, cols: n, rowPtr, colIdx, values };
}

/** 12 diagonal blocks of 100, each Gaussian plus 10 I (well conditioned), rows and columns shuffled. */
export function shuffledBlockDiagonal(blocks = 12, size = 100, seed = 25): { A: DenseMatrix; rowPerm: Int32Array; colPerm: Int32Array } {
  const n = blocks * size;
  const random = new SeededRandom(seed);
  const data = new Float64Array(n * n);
  for (let b = 0; b < blocks; b++) {
    for (let k = 0; k < size; k++) {
      for (let l = 0; l < size; l++) data[(b * size + k) * n + b * size + l] = random.nextNormal() + (k === l ? 10 : 0);
    }
  }
  const rowPerm = random.permutation(n);
  const colPerm = random.permutation(n);
  return { A: shuffleDense({ rows: n, cols: n, data }, rowPerm, colPerm), rowPerm, colPerm };
}

/** The k^2 x k^2 Poisson matrix, rows and columns shuffled. */
export function shuffledPoisson(k: number, seed = 25): { A: CsrMatrix; rowPerm: Int32Array; colPerm: Int32Array } {
  const random = new SeededRandom(seed);
  const rowPerm = random.permutation(k * k);
  const colPerm = random.permutation(k * k);
  return { A: shuffleCsr(poisson2d(k), rowPerm, colPerm), rowPerm, colPerm };
}

/** A case of ./shuffledCases.json (scripts/partitionReference.py). */
export interface ShuffledCase {
  name: string;
  n: number;
  m: number;
  rowPerm: number[];
  colPerm: number[];
  kappaSNatural: number;
  kappaSShuffledContiguous: number;
}

/** The shuffled matrix of a ./shuffledCases.json case. */
export function shuffledCaseMatrix(testCase: ShuffledCase): CsrMatrix {
  const natural = testCase.name === 'poisson2d-30' ? poisson2d(30) : readMatrixCsr(`${testCase.name}.mtx`);
  return shuffleCsr(natural, Int32Array.from(testCase.rowPerm), Int32Array.from(testCase.colPerm));
}
