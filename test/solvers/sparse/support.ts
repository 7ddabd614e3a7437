/**
 * Helpers of the sparse tests: random sparse matrices (dense and CSR views of the same entries), the
 * SciPy reference values of test/reference/sparse/expected.json, and the real matrices as CSR.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RANK_TOLERANCE } from '../../../src/solvers/distributed/rowSpace.js';
import { onSupport, type CsrMachineData } from '../../../src/solvers/distributed/sparseSystem.js';
import { nativeSpqr, type NativeRowBasis } from '../../../src/solvers/linalg/backend.js';
import type { DenseMatrix } from '../../../src/solvers/matrix.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { csrFromCoo, csrFromDense, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { convectionDiffusion2d, poisson2d } from '../../../src/solvers/sparse/generators.js';
import { MatrixMarketStreamReader } from '../../../src/solvers/sparse/matrixMarketStream.js';
import { MATRICES_DIR } from '../../support/sharedData.js';

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** A rows x cols matrix with about `density` of its entries uniform in [-1, 1), the rest exactly 0. */
export function randomSparseDense(rows: number, cols: number, density: number, seed: number): DenseMatrix {
  const rng = new SeededRandom(seed);
  const data = new Float64Array(rows * cols);
  for (let k = 0; k < data.length; k++) if (rng.nextDouble() < density) data[k] = 2 * rng.nextDouble() - 1;
  return { rows, cols, data };
}

export function randomSparse(rows: number, cols: number, density: number, seed: number): { dense: DenseMatrix; csr: CsrMatrix } {
  const dense = randomSparseDense(rows, cols, density, seed);
  return { dense, csr: csrFromDense(dense) };
}

export interface CsrJson {
  rows: number;
  cols: number;
  rowPtr: number[];
  colIdx: number[];
  values: number[];
}

export interface GramBlockReference {
  rows: [number, number];
  nnz: number;
  trace: number;
  frobenius: number;
  x: number[];
  relativeResidual: number;
  equilibratedCondition: number;
  logDet: number;
  amdPerm: number[];
  amdLnz: number;
  amdLnzByElimination: number;
  naturalLnzByElimination: number;
}

export interface SparseReference {
  matrixMarket: {
    file: string;
    rows: number;
    cols: number;
    nnz: number;
    complex?: boolean;
    sum?: number;
    sumAbs?: number;
    sumRowWeighted?: number;
    sumColWeighted?: number;
  }[];
  generators: Record<string, CsrJson>;
  gram: {
    label: string;
    source: { matrixMarket?: string; generator?: string; k?: number; peclet?: number };
    machines: number;
    n: number;
    blocks: GramBlockReference[];
  }[];
}

export const SPARSE_REFERENCE = JSON.parse(
  readFileSync(join(repositoryRoot, 'test', 'reference', 'sparse', 'expected.json'), 'utf8'),
) as SparseReference;

export function readMatrixText(file: string): string {
  return readFileSync(join(MATRICES_DIR, file), 'utf8');
}

/** A real matrix as CSR through the streaming reader (whole text in one chunk). */
export function readMatrixCsr(file: string): CsrMatrix {
  const reader = new MatrixMarketStreamReader();
  reader.push(readMatrixText(file));
  return reader.finish();
}

export function relativeDifference(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let k = 0; k < x.length; k++) {
    num += (x[k] - y[k]) ** 2;
    den += y[k] ** 2;
  }
  return Math.sqrt(num / den);
}

/** The matrix a reference case was computed on. */
export function referenceMatrix(source: SparseReference['gram'][number]['source']): CsrMatrix {
  if (source.matrixMarket !== undefined) return readMatrixCsr(source.matrixMarket);
  if (source.generator === 'poisson2d') return poisson2d(source.k!);
  return convectionDiffusion2d(source.k!, source.peclet!);
}

/** start, start + 1, ..., end - 1. */
export function rowRange(start: number, end: number): Int32Array {
  return Int32Array.from({ length: end - start }, (_, k) => start + k);
}

/**
 * A tall 8 x 6 matrix whose machines (rows 0-3, 4-6, 7) have ranks 4, 3 and 1 on columns 0-3, 2-4 and 4-5: machines 0
 * and 1 hold 7 independent rows in 5 columns (their row spaces intersect), 1 and 2 hold 4 in 4 (they do not).
 */
export const INTERSECTING_MACHINE_ROWS: readonly (readonly number[])[] = [
  [1, 2, 0.5, -1, 0, 0],
  [0.3, -1, 2, 1, 0, 0],
  [2, 0.1, 1, 0.7, 0, 0],
  [-1, 1, 0.2, 3, 0, 0],
  [0, 0, 1, 2, -0.5, 0],
  [0, 0, -2, 0.4, 1, 0],
  [0, 0, 0.6, 1, 3, 0],
  [0, 0, 0, 0, 1, 2],
];

/**
 * The native addon's row basis of a CSR machine (SuiteSparseQR), called on its support columns as
 * src/solvers/distributed/sparseSystem.ts calls it, with its rank tolerance: tests read which route its second QR took.
 */
export function addonRowBasis(machine: CsrMachineData): NativeRowBasis {
  const { rowPtr, colIdx, values } = onSupport(machine.a, machine.cols);
  return nativeSpqr()!.spqrRowBasis(machine.p, machine.c, rowPtr, colIdx, values, machine.b, RANK_TOLERANCE);
}

/** A tall sparse case of scripts/tallSparseSearch.py: its entries, b, and NumPy's machine ranks, x_W and x_LS. */
export interface TallSparseCase {
  rows: number;
  cols: number;
  machines: number;
  entries: [number, number, number][];
  b: number[];
  ranks: number[];
  blockWeighted: number[];
  leastSquares: number[];
}

/** The CSR matrix of a TallSparseCase (or of any fixture listing its entries so). */
export function tallSparseCaseMatrix(c: Pick<TallSparseCase, 'rows' | 'cols' | 'entries'>): CsrMatrix {
  return csrFromCoo(
    c.rows,
    c.cols,
    c.entries.map((e) => e[0]),
    c.entries.map((e) => e[1]),
    c.entries.map((e) => e[2]),
  );
}

/** The tall banded regression of scripts/bandedRegressionReference.py (its CASE), with NumPy's points. */
export interface BandedRegressionCase extends Omit<TallSparseCase, 'entries'> {
  perRow: number;
  width: number;
  seed: number;
  localLeastSquares: number[][];
}

/**
 * scripts/bandedRegressionReference.py's banded_regression, draw for draw (MINSTD: exact in doubles): row r holds `perRow`
 * distinct columns within `width` of a uniform centre (clamped to [0, cols)), values 2u - 1.
 */
export function bandedRegression(c: Pick<BandedRegressionCase, 'rows' | 'cols' | 'perRow' | 'width' | 'seed'>): CsrMatrix {
  const modulus = 2147483647;
  let state = c.seed;
  const draw = (): number => (state = (state * 48271) % modulus) / modulus;
  const rowIdx: number[] = [];
  const colIdx: number[] = [];
  const values: number[] = [];
  for (let r = 0; r < c.rows; r++) {
    const centre = Math.floor(draw() * c.cols);
    const cols: number[] = [];
    while (cols.length < c.perRow) {
      const col = Math.min(c.cols - 1, Math.max(0, centre + Math.floor(draw() * c.width) - Math.floor(c.width / 2)));
      if (!cols.includes(col)) cols.push(col);
    }
    for (const col of cols.sort((x, y) => x - y)) {
      rowIdx.push(r);
      colIdx.push(col);
      values.push(2 * draw() - 1);
    }
    draw(); // b's noise, drawn by the script after the row's values.
  }
  return csrFromCoo(c.rows, c.cols, rowIdx, colIdx, values);
}
