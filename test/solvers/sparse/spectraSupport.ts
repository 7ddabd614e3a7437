/**
 * Helpers of the sparse LU and spectra tests: the SciPy reference values of
 * test/reference/sparse/spectra.json (written by spectra.py next to it), the matrices they name, the
 * contiguous partitions (NumPy array_split) and two implementations of the machines' Gram factor
 * solves: the sparse Cholesky of src/solvers/sparse, and a dense Cholesky (ml-matrix) as an
 * independent stand-in; the check of a sparse LU (TypeScript or UMFPACK) against SciPy's splu.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CholeskyDecomposition, Matrix } from 'ml-matrix';
import { expect } from 'vitest';
import { parseMatrixMarket } from '../../../src/solvers/input/matrixMarket.js';
import { csrFromDense, multiply, multiplyTransposed, selectRows, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { convectionDiffusion2d, poisson2d } from '../../../src/solvers/sparse/generators.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import {
  factorCholesky,
  multiplyLower,
  multiplyUpper,
  solveCholesky,
  solveLower,
  solveUpper,
} from '../../../src/solvers/sparse/sparseCholesky.js';
import {
  factorNonzeros,
  sparseLuSolve,
  sparseLuSolveTransposed,
  type SparseLuFactorization,
} from '../../../src/solvers/sparse/sparseLu.js';
import type { GramFactorSolves } from '../../../src/solvers/sparse/spectrumOfS.js';
import { fixtureMatrix, type Fixture } from '../../support/fixtures.js';
import { MATRICES_DIR } from '../../support/sharedData.js';

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export interface LuReference {
  name: string;
  n: number;
  nnz: number;
  spluFactorNonzeros: number;
  x: number[];
  relativeResidual: number;
  relativeResidualTransposed: number;
}

export interface ConditioningReference {
  name: string;
  n: number;
  sigmaMax: number;
  sigmaMin: number;
  L: number;
  mu: number;
  kappaAtA: number;
  dense?: { sigmaMax: number; sigmaMin: number };
}

export interface SSpectrumReference {
  name: string;
  n: number;
  m: number;
  blockStarts: number[];
  lambdaMaxS: number;
  lambdaMinS: number;
  kappaS: number;
  pairs: { i: number; j: number; theta: number; cos: number }[];
  dense?: { lambdaMaxS: number; lambdaMinS: number };
}

export interface SpectraReference {
  lu: LuReference[];
  conditioning: ConditioningReference[];
  sSpectrum: SSpectrumReference[];
}

export function loadSpectraReference(): SpectraReference {
  return JSON.parse(readFileSync(join(repositoryRoot, 'test', 'reference', 'sparse', 'spectra.json'), 'utf8')) as SpectraReference;
}

const cache = new Map<string, CsrMatrix>();

/**
 * A matrix named as in spectra.json: a file of test/reference/matrices ("sherman5"), or a grid
 * generator ("poisson2d-k100", "convectionDiffusion2d-k100-peclet50"); a "-m<count>" suffix is ignored.
 */
export function namedMatrix(name: string): CsrMatrix {
  const base = name.replace(/-m\d+$/, '');
  let a = cache.get(base);
  if (a) return a;
  const poisson = /^poisson2d-k(\d+)$/.exec(base);
  const convection = /^convectionDiffusion2d-k(\d+)-peclet(\d+)$/.exec(base);
  if (poisson) a = poisson2d(Number(poisson[1]));
  else if (convection) a = convectionDiffusion2d(Number(convection[1]), Number(convection[2]));
  else a = csrFromDense(parseMatrixMarket(readFileSync(join(MATRICES_DIR, `${base}.mtx`), 'utf8')));
  cache.set(base, a);
  return a;
}

/** NumPy's array_split of 0..n-1 into m contiguous blocks, as ascending row lists. */
export function contiguousPartition(n: number, m: number): Int32Array[] {
  const base = Math.floor(n / m);
  const extra = n % m;
  const out: Int32Array[] = [];
  let start = 0;
  for (let i = 0; i < m; i++) {
    const size = base + (i < extra ? 1 : 0);
    out.push(Int32Array.from({ length: size }, (_, k) => start + k));
    start += size;
  }
  return out;
}

/** Row lists from an assignment (machine of each row). */
export function partitionFromAssignment(assignment: readonly number[], m: number): Int32Array[] {
  const rows: number[][] = Array.from({ length: m }, () => []);
  assignment.forEach((machine, r) => rows[machine].push(r));
  return rows.map((r) => Int32Array.from(r));
}

/** A heterogeneity fixture as CSR, with its machines' rows (ascending). */
export function csrFixture(f: Fixture): { a: CsrMatrix; rows: Int32Array[] } {
  return { a: csrFromDense(fixtureMatrix(f)), rows: partitionFromAssignment(f.partition.assignment, f.expected.m) };
}

/**
 * Solves with the sparse Cholesky factors of each G_i = A_i A_i^T (B_i = P^T L, B_i B_i^T = G_i); with
 * `joint` (the default) also the pairs' shift-invert route, with `coupling` (the default) their coupling route, as
 * the analysis has them; with neither, Lanczos on C^T C alone.
 */
export function sparseCholeskySolves(
  a: CsrMatrix,
  rowsOfMachine: readonly Int32Array[],
  { joint = true, coupling = true }: { joint?: boolean; coupling?: boolean } = {},
): GramFactorSolves {
  const factors = rowsOfMachine.map((rows) => factorCholesky(gramMatrix(selectRows(a, rows))));
  const solves: GramFactorSolves = {
    solveL(i, b, y) {
      solveLower(factors[i], b, y);
    },
    solveLT(i, y, x) {
      solveUpper(factors[i], y, x);
    },
    ...(coupling ? { factorValues: (i: number) => factors[i] } : {}),
  };
  if (!joint) return solves;
  return {
    ...solves,
    joint: {
      multiplyL: (i, u, out) => multiplyLower(factors[i], u, out),
      multiplyLT: (i, y, out) => multiplyUpper(factors[i], y, out),
      factor(g) {
        const factor = factorCholesky(g);
        return { solve: (b, x) => void solveCholesky(factor, b, x), release: () => undefined };
      },
    },
  };
}

/** Solves with dense Cholesky factors (ml-matrix) of each G_i, formed densely: small machines only. */
export function denseCholeskySolves(a: CsrMatrix, rowsOfMachine: readonly Int32Array[]): GramFactorSolves {
  const lowers = rowsOfMachine.map((rows) => {
    const p = rows.length;
    const g = new Matrix(p, p);
    const block = selectRows(a, rows);
    const dense = new Float64Array(a.cols);
    for (let r = 0; r < p; r++) {
      dense.fill(0);
      for (let q = block.rowPtr[r]; q < block.rowPtr[r + 1]; q++) dense[block.colIdx[q]] = block.values[q];
      for (let s = 0; s <= r; s++) {
        let dot = 0;
        for (let q = block.rowPtr[s]; q < block.rowPtr[s + 1]; q++) dot += block.values[q] * dense[block.colIdx[q]];
        g.set(r, s, dot);
        g.set(s, r, dot);
      }
    }
    const l = new CholeskyDecomposition(g).lowerTriangularMatrix;
    return { p, l: Float64Array.from(l.to1DArray()) };
  });
  return {
    solveL(i, b, y) {
      const { p, l } = lowers[i];
      for (let r = 0; r < p; r++) {
        let s = b[r];
        for (let c = 0; c < r; c++) s -= l[r * p + c] * y[c];
        y[r] = s / l[r * p + r];
      }
    },
    solveLT(i, y, x) {
      const { p, l } = lowers[i];
      for (let r = p - 1; r >= 0; r--) {
        let s = y[r];
        for (let c = r + 1; c < p; c++) s -= l[c * p + r] * x[c];
        x[r] = s / l[r * p + r];
      }
    },
  };
}

export function relativeDifference(actual: number, expected: number): number {
  return Math.abs(actual - expected) / Math.abs(expected);
}

export function maxAbs(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s = Math.max(s, Math.abs(x[i]));
  return s;
}

/** max |A x - b| / max |b| (A^T when transposed). */
export function relativeResidual(a: CsrMatrix, x: Float64Array, b: Float64Array, transposed = false): number {
  const ax = transposed ? multiplyTransposed(a, x) : multiply(a, x);
  let r = 0;
  for (let i = 0; i < b.length; i++) r = Math.max(r, Math.abs(ax[i] - b[i]));
  return r / maxAbs(b);
}

/** A - shift I (a copy; A's diagonal entries stored). */
export function shiftedDiagonal(a: CsrMatrix, shift: number): CsrMatrix {
  const values = a.values.slice();
  for (let i = 0; i < a.rows; i++) for (let p = a.rowPtr[i]; p < a.rowPtr[i + 1]; p++) if (a.colIdx[p] === i) values[p] -= shift;
  return { ...a, values };
}

export function sinVector(n: number): Float64Array {
  return Float64Array.from({ length: n }, (_, k) => Math.sin(k + 1));
}

/**
 * A sparse LU of the reference matrix `ref.name` against SciPy's splu: the solution of A x = A sin
 * within 64 eps kappa(A) of splu's (both backward stable), residuals of both solves at splu's level
 * (threshold pivoting may cost a small factor; n eps at worst), fill within 4x of splu's with COLAMD.
 */
export function expectLuAsSplu(reference: SpectraReference, ref: LuReference, factor: (a: CsrMatrix) => SparseLuFactorization): void {
  const EPS = Number.EPSILON;
  const conditioning = reference.conditioning.find((c) => c.name === ref.name);
  const kappa = conditioning === undefined ? Infinity : conditioning.sigmaMax / conditioning.sigmaMin;
  const a = namedMatrix(ref.name);
  const n = a.rows;
  const f = factor(a);
  const b = multiply(a, sinVector(n));
  const x = new Float64Array(n);
  const work = new Float64Array(n);
  sparseLuSolve(f, b, x, work);
  let difference = 0;
  for (let i = 0; i < n; i++) difference = Math.max(difference, Math.abs(x[i] - ref.x[i]));
  expect(difference / maxAbs(ref.x)).toBeLessThanOrEqual(Math.max(64 * EPS, 64 * EPS * kappa));
  expect(relativeResidual(a, x, b)).toBeLessThanOrEqual(Math.max(16 * ref.relativeResidual, n * EPS));
  const y = new Float64Array(n);
  sparseLuSolveTransposed(f, b, y, work);
  expect(relativeResidual(a, y, b, true)).toBeLessThanOrEqual(Math.max(16 * ref.relativeResidualTransposed, n * EPS));
  expect(factorNonzeros(f)).toBeLessThanOrEqual(4 * ref.spluFactorNonzeros);
}
