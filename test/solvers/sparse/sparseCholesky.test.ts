import { CholeskyDecomposition, Matrix } from 'ml-matrix';
import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, SingularMatrixError } from '../../../src/solvers/errors.js';
import { csrFromCoo, csrFromDense, multiply, selectRows, transpose, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { choleskyUpperInPlace } from '../../../src/solvers/linalg/cholesky.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import { invertPermutation } from '../../../src/solvers/sparse/ordering.js';
import {
  analysisFor,
  analyzeCholesky,
  factorCholesky,
  factorCholeskyDensely,
  hasAnalyzedPattern,
  keptPivotsFactor,
  multiplyLower,
  multiplyUpper,
  refactorCholesky,
  solveCholesky,
  solveLower,
  solveUpper,
  type CholeskyFactor,
} from '../../../src/solvers/sparse/sparseCholesky.js';
import { describeEachBackend } from '../../support/backends.js';
import { thrown } from '../../support/thrown.js';
import { SPARSE_REFERENCE, randomSparse, referenceMatrix, relativeDifference, rowRange } from './support.js';

const EPS = Number.EPSILON;

/** L (n x n, dense row-major) from the factor's columns. */
function denseL(factor: CholeskyFactor): Float64Array {
  const { n, colPtr, rowIdx } = factor.symbolic;
  const l = new Float64Array(n * n);
  for (let j = 0; j < n; j++) for (let q = colPtr[j]; q < colPtr[j + 1]; q++) l[rowIdx[q] * n + j] = factor.values[q];
  return l;
}

function sinVector(n: number): Float64Array {
  return Float64Array.from({ length: n }, (_, k) => Math.sin(k + 1));
}

function relativeResidual(g: CsrMatrix, x: Float64Array, b: Float64Array): number {
  const r = multiply(g, x);
  return relativeDifference(r, b);
}

describe('sparse Cholesky against SciPy and libamd (machine Gram blocks of real and generated matrices)', () => {
  for (const c of SPARSE_REFERENCE.gram) {
    it(`${c.label}: solutions, log det, fill`, () => {
      const a = referenceMatrix(c.source);
      for (const block of c.blocks) {
        const g = gramMatrix(selectRows(a, rowRange(block.rows[0], block.rows[1])));
        const p = g.rows;
        const label = `${c.label} rows ${block.rows[0]}..${block.rows[1]}`;
        const factor = factorCholesky(g);
        const b = sinVector(p);
        const x = solveCholesky(factor, b, new Float64Array(p));
        // Cholesky's accuracy is set by the equilibrated condition number (it is invariant under diagonal scaling).
        const tolerance = Math.max(1e-13, 100 * EPS * block.equilibratedCondition);
        expect(relativeDifference(x, block.x), label).toBeLessThanOrEqual(tolerance);
        expect(relativeResidual(g, x, b), label).toBeLessThanOrEqual(Math.max(10 * block.relativeResidual, 1e-13));
        if (block === c.blocks[0]) {
          // And a dense Cholesky of the same G_i (ml-matrix), an implementation independent of both.
          const dense = Matrix.zeros(p, p);
          for (let r = 0; r < p; r++) for (let q = g.rowPtr[r]; q < g.rowPtr[r + 1]; q++) dense.set(r, g.colIdx[q], g.values[q]);
          const xDense = new CholeskyDecomposition(dense).solve(Matrix.columnVector(Array.from(b))).getColumn(0);
          expect(relativeDifference(x, xDense), label).toBeLessThanOrEqual(tolerance);
        }
        // log det G = 2 sum log L_kk, whatever the ordering.
        let logDet = 0;
        for (let j = 0; j < p; j++) logDet += 2 * Math.log(factor.values[factor.symbolic.colPtr[j]]);
        expect(Math.abs(logDet - block.logDet), label).toBeLessThanOrEqual(1e-9 * (Math.abs(block.logDet) + p));

        // Symbolic analysis: nnz(L) under libamd's ordering and under the natural one, exactly as counted by elimination in Python.
        const amdPerm = Int32Array.from(block.amdPerm);
        expect(analyzeCholesky(g, { ordering: { perm: amdPerm, inverse: invertPermutation(amdPerm) } }).nnzL - p, label).toBe(
          block.amdLnzByElimination,
        );
        expect(analyzeCholesky(g, { ordering: 'natural' }).nnzL - p, label).toBe(block.naturalLnzByElimination);
        // Our approximate minimum degree: within 5% of SuiteSparse AMD's fill, and no worse than no ordering.
        const ourFill = factor.symbolic.nnzL - p;
        expect(ourFill, label).toBeLessThanOrEqual(Math.ceil(1.05 * block.amdLnzByElimination));
        expect(ourFill, label).toBeLessThanOrEqual(block.naturalLnzByElimination);
      }
    });
  }
});

describe('sparse Cholesky against a dense Cholesky (ml-matrix)', () => {
  const cases: [string, () => CsrMatrix][] = [
    ['Poisson k = 12 (SPD itself)', () => poisson2d(12)],
    [
      'Gram of a 60 x 90 random sparse matrix with a unit diagonal (full row rank)',
      () => {
        const { dense } = randomSparse(60, 90, 0.05, 11);
        for (let i = 0; i < 60; i++) dense.data[i * 90 + i] += 1;
        return gramMatrix(csrFromDense(dense));
      },
    ],
    ['Gram of 2-D Poisson rows 100..299 (k = 20)', () => gramMatrix(selectRows(poisson2d(20), rowRange(100, 300)))],
  ];
  for (const [label, build] of cases) {
    it(`${label}: L equals the dense factor of P G P^T, x equals the dense solve`, () => {
      const g = build();
      const n = g.rows;
      const factor = factorCholesky(g);
      const { perm } = factor.symbolic.ordering;
      const gDense = new Float64Array(n * n);
      for (let r = 0; r < n; r++) for (let q = g.rowPtr[r]; q < g.rowPtr[r + 1]; q++) gDense[r * n + g.colIdx[q]] = g.values[q];
      const permuted = Matrix.zeros(n, n);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) permuted.set(i, j, gDense[perm[i] * n + perm[j]]);
      const reference = new CholeskyDecomposition(permuted);
      expect(reference.isPositiveDefinite()).toBe(true);
      const lReference = reference.lowerTriangularMatrix;
      const l = denseL(factor);
      let maxL = 0;
      let maxDifference = 0;
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          maxL = Math.max(maxL, Math.abs(lReference.get(i, j)));
          maxDifference = Math.max(maxDifference, Math.abs(l[i * n + j] - lReference.get(i, j)));
          // The symbolic pattern contains every nonzero of the true factor.
          if (Math.abs(lReference.get(i, j)) > 1e-12 * maxL) expect(l[i * n + j], `${i}, ${j}`).not.toBe(0);
        }
      }
      expect(maxDifference).toBeLessThanOrEqual(1e-12 * maxL);

      const b = sinVector(n);
      const xReference = new CholeskyDecomposition(
        new Matrix([...Array(n).keys()].map((i) => Array.from(gDense.subarray(i * n, (i + 1) * n)))),
      )
        .solve(Matrix.columnVector(Array.from(b)))
        .getColumn(0);
      const x = solveCholesky(factor, b, new Float64Array(n));
      expect(relativeDifference(x, xReference)).toBeLessThanOrEqual(1e-11);
    });
  }
});

describe('sparse Cholesky API', () => {
  it('multiplyLower / multiplyUpper apply B = P^T L and B^T: B B^T x = G x, B^{-1} B u = u, in place too', () => {
    const g = gramMatrix(selectRows(poisson2d(12), rowRange(20, 80)));
    const factor = factorCholesky(g);
    const x = Float64Array.from({ length: g.rows }, (_, k) => Math.sin(k + 1));
    const bx = multiplyLower(factor, multiplyUpper(factor, x, new Float64Array(g.rows)), new Float64Array(g.rows));
    const gx = multiply(g, x);
    for (let k = 0; k < g.rows; k++) expect(Math.abs(bx[k] - gx[k])).toBeLessThan(1e-12 * Math.max(1, Math.abs(gx[k])));
    const u = x.slice();
    multiplyLower(factor, u, u);
    solveLower(factor, u, u);
    for (let k = 0; k < g.rows; k++) expect(Math.abs(u[k] - x[k])).toBeLessThan(1e-12);
    const v = x.slice();
    multiplyUpper(factor, v, v);
    solveUpper(factor, v, v);
    for (let k = 0; k < g.rows; k++) expect(Math.abs(v[k] - x[k])).toBeLessThan(1e-12);
  });

  const g = gramMatrix(selectRows(poisson2d(15), rowRange(30, 130)));
  const n = g.rows;

  it('solveLower / solveUpper are the two halves of B = P^T L (B B^T = G), in place too', () => {
    const factor = factorCholesky(g);
    const b = sinVector(n);
    const y = solveLower(factor, b, new Float64Array(n));
    const x = solveUpper(factor, y, new Float64Array(n));
    const direct = solveCholesky(factor, b, new Float64Array(n));
    expect(relativeDifference(x, direct)).toBeLessThanOrEqual(1e-15);
    // |B^{-1} b|^2 = b^T G^{-1} b.
    let yy = 0;
    let bx = 0;
    for (let k = 0; k < n; k++) {
      yy += y[k] * y[k];
      bx += b[k] * direct[k];
    }
    expect(Math.abs(yy - bx)).toBeLessThanOrEqual(1e-13 * bx);
    const inPlace = b.slice();
    solveCholesky(factor, inPlace, inPlace);
    expect(inPlace).toEqual(direct);
    const halves = b.slice();
    solveUpper(factor, solveLower(factor, halves, halves), halves);
    expect(halves).toEqual(x);
  });

  it('one analysis serves a refactorization with new values; a different pattern is refused', () => {
    const symbolic = analyzeCholesky(g);
    const factor = factorCholesky(g, symbolic);
    const shifted = { ...g, values: g.values.slice() };
    for (let r = 0; r < n; r++)
      for (let q = g.rowPtr[r]; q < g.rowPtr[r + 1]; q++) shifted.values[q] = 2 * g.values[q] + (g.colIdx[q] === r ? 1 : 0);
    refactorCholesky(factor, shifted);
    const b = sinVector(n);
    const x = solveCholesky(factor, b, new Float64Array(n));
    expect(relativeResidual(shifted, x, b)).toBeLessThanOrEqual(1e-13);
    // The analysis stays with the factor (for refactorizations); its symbolic part shares the same pattern arrays.
    expect(factor.analysis).toBe(symbolic);
    expect(factor.symbolic.rowIdx).toBe(symbolic.rowIdx);
    const other = poisson2d(10);
    expect(thrown(() => factorCholesky(other, symbolic))).toBeInstanceOf(DimensionMismatchError);
    const moved = g.colIdx.slice();
    moved[1] = moved[1] + 1; // same sizes, one entry in another column
    expect(thrown(() => factorCholesky({ ...g, colIdx: moved }, symbolic))).toBeInstanceOf(DimensionMismatchError);
  });

  it('analysisFor takes an analysis again, as its own copy, for a matrix of its pattern only: the same factor, bit for bit', () => {
    const first = analyzeCholesky(g);
    // Other values, the same pattern: G of the same rows scaled.
    const scaled = { ...g, values: g.values.map((v) => 3 * v) };
    expect(hasAnalyzedPattern(first, scaled)).toBe(true);
    const again = analysisFor(scaled, first);
    const fresh = analyzeCholesky(scaled);
    for (const key of ['parent', 'colPtr', 'rowIdx', 'lowerPtr', 'lowerIdx', 'lowerSource', 'patternRowPtr', 'patternColIdx'] as const) {
      expect(Array.from(again[key]), key).toEqual(Array.from(fresh[key]));
      expect(again[key], key).not.toBe(first[key]);
    }
    expect(Array.from(again.ordering.perm)).toEqual(Array.from(fresh.ordering.perm));
    expect(again.ordering.perm).not.toBe(first.ordering.perm);
    expect(Array.from(factorCholesky(scaled, again).values)).toEqual(Array.from(factorCholesky(scaled).values));
    // One entry in another column, the sizes the same: not the analyzed pattern.
    const moved = g.colIdx.slice();
    moved[1] = moved[1] + 1;
    expect(hasAnalyzedPattern(first, { ...g, colIdx: moved })).toBe(false);
    // The analysis of another pattern of the same order (a 10 x 10 grid's Gram matrix against rows of a 15 x 15 one's): G's own.
    const previous = analyzeCholesky(gramMatrix(poisson2d(10)));
    expect(previous.n).toBe(n);
    expect(hasAnalyzedPattern(previous, g)).toBe(false);
    const replaced = analysisFor(g, previous);
    expect(Array.from(replaced.colPtr)).toEqual(Array.from(first.colPtr));
    expect(Array.from(replaced.ordering.perm)).toEqual(Array.from(first.ordering.perm));
    expect(Array.from(analysisFor(g, null).rowIdx)).toEqual(Array.from(first.rowIdx));
  });

  it('refuses a matrix that stores one triangle only', () => {
    const lower = csrFromCoo(2, 2, [0, 1, 1], [0, 0, 1], [4, 1, 4]);
    const error = thrown(() => analyzeCholesky(lower));
    expect(error).toBeInstanceOf(DimensionMismatchError);
    expect(error.message).toMatch(/full symmetric pattern/);
  });

  it('natural ordering and a given ordering give the same solution', () => {
    const b = sinVector(n);
    const amd = solveCholesky(factorCholesky(g), b, new Float64Array(n));
    const natural = solveCholesky(factorCholesky(g, analyzeCholesky(g, { ordering: 'natural' })), b, new Float64Array(n));
    expect(relativeDifference(natural, amd)).toBeLessThanOrEqual(1e-13);
  });

  it('1 x 1 and diagonal matrices', () => {
    const one = csrFromCoo(1, 1, [0], [0], [4]);
    expect(Array.from(solveCholesky(factorCholesky(one), new Float64Array([2]), new Float64Array(1)))).toEqual([0.5]);
    const diagonal = csrFromCoo(3, 3, [0, 1, 2], [0, 1, 2], [1, 4, 16]);
    const f = factorCholesky(diagonal);
    expect(f.symbolic.nnzL).toBe(3);
    expect(Array.from(solveCholesky(f, new Float64Array([1, 1, 1]), new Float64Array(3)))).toEqual([1, 0.25, 0.0625]);
  });
});

describe('numerically singular or indefinite matrices: SingularMatrixError naming the row', () => {
  it('a machine row that is a combination of its other rows', () => {
    // Rows 0..3 of a random sparse matrix, then row 4 = row 1 - 2 row 3: G is singular.
    const { dense } = randomSparse(5, 12, 0.5, 21);
    const c = dense.cols;
    for (let j = 0; j < c; j++) dense.data[4 * c + j] = dense.data[1 * c + j] - 2 * dense.data[3 * c + j];
    const g = gramMatrix(csrFromDense(dense));
    const error = thrown(() => factorCholesky(g));
    expect(error).toBeInstanceOf(SingularMatrixError);
    const details = (error as SingularMatrixError).details;
    // The pivot found zero is one of the dependent rows, in G's own numbering.
    expect([1, 3, 4]).toContain(details.row);
    expect(Math.abs(details.relativePivot as number)).toBeLessThanOrEqual(1e-13);
    expect(error.message).toContain(`row ${String(details.row)}`);
    // The caller adds the machine (and maps the row to its global index).
    const extended = new SingularMatrixError(`rank-deficient rows of machine 3: ${error.message}`, { ...details, machine: 3 });
    expect(extended.details).toMatchObject({ machine: 3, row: details.row });
    expect(extended.code).toBe('singular-matrix');
  });

  it('rows at a tiny angle pass or fail at the tolerance, which can be set', () => {
    // Two rows at angle t: pivot ratio d_1 / G_11 = sin^2 t.
    const t = 1e-6;
    const rows = csrFromCoo(2, 2, [0, 1, 1], [0, 0, 1], [1, Math.cos(t), Math.sin(t)]);
    const g = gramMatrix(rows);
    expect(() => factorCholesky(g)).not.toThrow();
    const error = thrown(() => factorCholesky(g, undefined, { relativePivotTolerance: 1e-11 }));
    expect(error).toBeInstanceOf(SingularMatrixError);
    const ratio = (error as SingularMatrixError).details.relativePivot as number;
    // Computed as 1 - cos^2 t: rounding of order u against sin^2 t = 1e-12.
    expect(Math.abs(ratio - Math.sin(t) ** 2)).toBeLessThanOrEqual(1e-3 * Math.sin(t) ** 2);
  });

  it('a zero row, and an indefinite symmetric matrix', () => {
    const zeroRow = gramMatrix(csrFromCoo(3, 3, [0, 2], [0, 2], [1, 1]));
    const zeroError = thrown(() => factorCholesky(zeroRow));
    expect(zeroError).toBeInstanceOf(SingularMatrixError);
    expect((zeroError as SingularMatrixError).details.row).toBe(1);
    const indefinite = csrFromCoo(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [1, 2, 2, 1]);
    const error = thrown(() => factorCholesky(indefinite));
    expect(error).toBeInstanceOf(SingularMatrixError);
    expect((error as SingularMatrixError).details.pivot).toBeCloseTo(-3, 12);
  });
});

describeEachBackend('sparse Cholesky computed densely (a factor that fills)', () => {
  /** G = A^T A of random sparse rows: its factor fills nearly all of its lower triangle. */
  function filledGram(rows: number, cols: number, seed: number): CsrMatrix {
    return gramMatrix(transpose(randomSparse(rows, cols, 0.02, seed).csr));
  }

  it("the up-looking factorization's factor, to rounding, and G x = b solved to its accuracy", () => {
    const g = filledGram(600, 300, 11);
    const analysis = analyzeCholesky(g);
    expect(analysis.nnzL).toBeGreaterThan((300 * 301) / 4);
    const kernels = selectedKernels();
    const dense = factorCholeskyDensely(g, analysis, (a, n) => choleskyUpperInPlace(kernels, a, n));
    const upLooking = factorCholesky(g, analysis);
    expect(relativeDifference(dense.values, upLooking.values)).toBeLessThan(1e-12);
    const b = sinVector(300);
    expect(relativeResidual(g, solveCholesky(dense, b, new Float64Array(300)), b)).toBeLessThan(1e-12);
  });

  it('a singular G (a repeated column of A): SingularMatrixError naming one of the two columns', () => {
    const { dense } = randomSparse(400, 200, 0.03, 5);
    for (let i = 0; i < 400; i++) dense.data[i * 200 + 7] = dense.data[i * 200 + 3];
    const g = gramMatrix(transpose(csrFromDense(dense)));
    const kernels = selectedKernels();
    const error = thrown(() => factorCholeskyDensely(g, analyzeCholesky(g), (a, n) => choleskyUpperInPlace(kernels, a, n)));
    expect(error).toBeInstanceOf(SingularMatrixError);
    expect(String((error as SingularMatrixError).details.row)).toMatch(/^(3|7)$/);
  });
});

/** A^T A (300 x 300, its factor filled) of 500 random sparse rows whose column 7 repeats column 3. */
function repeatedColumnGram(): CsrMatrix {
  const { dense } = randomSparse(500, 300, 0.02, 8);
  for (let i = 0; i < 500; i++) dense.data[i * 300 + 7] = dense.data[i * 300 + 3];
  return gramMatrix(transpose(csrFromDense(dense)));
}

describeEachBackend('the pivot-dropping Cholesky computed densely', () => {
  it('drops the pivots the up-looking one drops (a repeated column of A), and keeps the factor of the others', () => {
    const g = repeatedColumnGram();
    const analysis = analyzeCholesky(g);
    expect(analysis.nnzL).toBeGreaterThan((300 * 301) / 4);
    const upLookingDropped = new Uint8Array(300);
    const upLooking = factorCholesky(g, analysis, { dropped: upLookingDropped });
    const denseDropped = new Uint8Array(300);
    const kernels = selectedKernels();
    const byBlocks = factorCholeskyDensely(g, analysis, (a, n, marks) => choleskyUpperInPlace(kernels, a, n, marks), {
      dropped: denseDropped,
    });
    expect(Array.from(denseDropped)).toEqual(Array.from(upLookingDropped));
    expect(denseDropped.reduce((s, d) => s + d, 0)).toBe(1);
    const droppedOriginal = analysis.ordering.perm[denseDropped.indexOf(1)];
    expect([3, 7]).toContain(droppedOriginal);
    expect(relativeDifference(byBlocks.values, upLooking.values)).toBeLessThan(1e-12);
  });
});

describeEachBackend("the kept pivots' factor read off a dropping factorization", () => {
  it('G_K (a repeated column of A dropped) solved to its accuracy by the factor, up-looking and by blocks', () => {
    const g = repeatedColumnGram();
    const analysis = analyzeCholesky(g);
    const kernels = selectedKernels();
    const factorizations = [
      (dropped: Uint8Array) => factorCholesky(g, analysis, { dropped }),
      (dropped: Uint8Array) => factorCholeskyDensely(g, analysis, (a, n, marks) => choleskyUpperInPlace(kernels, a, n, marks), { dropped }),
    ];
    for (const factorize of factorizations) {
      const dropped = new Uint8Array(300);
      const { kept, gram, factor } = keptPivotsFactor(g, factorize(dropped), dropped);
      expect(kept).toHaveLength(299);
      expect(kept.includes(3) !== kept.includes(7)).toBe(true);
      const b = sinVector(299);
      expect(relativeResidual(gram, solveCholesky(factor, b, new Float64Array(299)), b)).toBeLessThan(1e-12);
    }
  });
});
