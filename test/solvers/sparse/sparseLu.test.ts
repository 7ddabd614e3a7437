import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, NotSquareError, SingularMatrixError } from '../../../src/solvers/errors.js';
import { csrFromDense, multiply, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { convectionDiffusion2d } from '../../../src/solvers/sparse/generators.js';
import {
  adoptLu,
  patternSymmetry,
  sparseLu,
  sparseLuSolve,
  sparseLuSolveTransposed,
  type ExternalLu,
} from '../../../src/solvers/sparse/sparseLu.js';
import { thrown } from '../../support/thrown.js';
import { expectLuAsSplu, loadSpectraReference, maxAbs, namedMatrix, relativeResidual, sinVector } from './spectraSupport.js';

const EPS = Number.EPSILON;
const reference = loadSpectraReference();

describe('sparseLu against SciPy splu', () => {
  for (const ref of reference.lu) {
    it(`${ref.name} (n = ${ref.n}): solution and residuals as SuperLU's`, () => {
      expectLuAsSplu(reference, ref, (a) => sparseLu(a));
      // The symmetric positive definite ones went through Cholesky: the pivoting LU too (tau = 0.1, the symmetric strategy's).
      if (sparseLu(namedMatrix(ref.name)).ordering === 'cholesky')
        expectLuAsSplu(reference, ref, (a) => sparseLu(a, { pivotThreshold: 0.1 }));
    });
  }
});

describe('sparseLu orderings and pivoting', () => {
  const a = namedMatrix('sherman5');
  const n = a.rows;
  const b = multiply(a, sinVector(n));

  for (const options of [
    { ordering: 'natural' as const },
    { ordering: 'symmetric' as const },
    { ordering: 'unsymmetric' as const },
    { ordering: 'symmetric' as const, pivotThreshold: 1 },
    // A given order: the one a first factorization chose (reused for a matrix of the same pattern).
    { columnPermutation: sparseLu(a, { ordering: 'unsymmetric' }).columnOrder },
  ]) {
    it(`solves sherman5 with ${options.columnPermutation ? 'a given column order' : JSON.stringify(options)}`, () => {
      const f = sparseLu(a, options);
      const x = new Float64Array(n);
      sparseLuSolve(f, b, x, new Float64Array(n));
      expect(relativeResidual(a, x, b)).toBeLessThan(1e-13);
      // Threshold pivoting: every multiplier of L within 1 / tau.
      expect(maxAbs(f.lValues)).toBeLessThanOrEqual(1 / f.pivotThreshold + 1e-12);
      if (options.columnPermutation) expect(f.ordering).toBe('given');
    });
  }

  it("picks the symmetric strategy for a mostly symmetric pattern with a zero-free diagonal, as UMFPACK's rule", () => {
    // Convection-diffusion: a symmetric pattern, unsymmetric values (not a candidate for Cholesky).
    const convection = convectionDiffusion2d(20, 50);
    expect(patternSymmetry(convection)).toEqual({ symmetry: 1, zeroFreeDiagonal: true });
    expect(sparseLu(convection).ordering).toBe('symmetric');
    // gr_30_30 is symmetric positive definite: Cholesky (./positiveDefiniteLu.test.ts), unless another strategy is asked for.
    expect(sparseLu(namedMatrix('gr_30_30')).ordering).toBe('cholesky');
    expect(sparseLu(namedMatrix('gr_30_30'), { ordering: 'symmetric' }).ordering).toBe('symmetric');
    // impcol_a has structural zeros on its diagonal.
    expect(patternSymmetry(namedMatrix('impcol_a')).zeroFreeDiagonal).toBe(false);
    expect(sparseLu(namedMatrix('impcol_a')).ordering).toBe('unsymmetric');
  });

  it('solves in place (x = b) and into caller buffers without touching b otherwise', () => {
    const f = sparseLu(a);
    const x = new Float64Array(n);
    const work = new Float64Array(n);
    sparseLuSolve(f, b, x, work);
    const inPlace = Float64Array.from(b);
    sparseLuSolve(f, inPlace, inPlace, work);
    expect(inPlace).toEqual(x);
    const t = new Float64Array(n);
    sparseLuSolveTransposed(f, b, t, work);
    const tInPlace = Float64Array.from(b);
    sparseLuSolveTransposed(f, tInPlace, tInPlace, work);
    expect(tInPlace).toEqual(t);
  });

  it('needs a pivot: a permutation matrix (zero diagonal) is solved exactly', () => {
    const m = 7;
    const p = csrFromDense({
      rows: m,
      cols: m,
      data: Float64Array.from({ length: m * m }, (_, k) => (k % m === (Math.floor(k / m) + 3) % m ? 2 : 0)),
    });
    const f = sparseLu(p);
    const x = new Float64Array(m);
    const rhs = Float64Array.from({ length: m }, (_, i) => i + 1);
    sparseLuSolve(f, rhs, x, new Float64Array(m));
    expect(Array.from(multiply(p, x))).toEqual(Array.from(rhs));
  });
});

describe('sparseLu on singular matrices', () => {
  const dense = (rows: number[][]): CsrMatrix =>
    csrFromDense({ rows: rows.length, cols: rows[0].length, data: Float64Array.from(rows.flat()) });

  it('throws SingularMatrixError for a structurally singular matrix (an empty column)', () => {
    const error = thrown(() =>
      sparseLu(
        dense([
          [1, 0, 2],
          [3, 0, 4],
          [5, 0, 6],
        ]),
      ),
    );
    expect(error).toBeInstanceOf(SingularMatrixError);
    expect((error as SingularMatrixError).details).toMatchObject({ column: 1 });
  });

  it('throws SingularMatrixError for a numerically singular matrix (a column that is the sum of two others)', () => {
    const error = thrown(() =>
      sparseLu(
        dense([
          [0.1, 0.7, 0.8, 0],
          [0.3, 0.2, 0.5, 1],
          [0.9, 0.4, 1.3, 2],
          [0.6, 0.3, 0.9, 5],
        ]),
        { ordering: 'natural' },
      ),
    );
    expect(error).toBeInstanceOf(SingularMatrixError);
    // 0.1 + 0.7 != 0.8 in binary: the last pivot is rounding noise (~4e-17), not an exact zero.
    const details = (error as SingularMatrixError).details as { column: number; pivot: number };
    expect(details.column).toBe(2);
    expect(details.pivot).toBeGreaterThan(0);
    expect(details.pivot).toBeLessThan(4 * 4 * EPS);
  });

  it('accepts a nonsingular but badly scaled matrix (column scales 1e-150 .. 1e150)', () => {
    const scales = [1e-150, 1, 1e150];
    const a = dense([
      [2 * scales[0], 1 * scales[1], 0],
      [1 * scales[0], 3 * scales[1], 1 * scales[2]],
      [0, 1 * scales[1], 4 * scales[2]],
    ]);
    const f = sparseLu(a);
    const x = new Float64Array(3);
    const rhs = multiply(a, Float64Array.from([1 / scales[0], 1, 1 / scales[2]]));
    sparseLuSolve(f, rhs, x, new Float64Array(3));
    expect(Math.abs(x[1] - 1)).toBeLessThan(1e-14);
  });

  it('throws NotSquareError for a rectangular matrix', () => {
    expect(thrown(() => sparseLu(dense([[1, 2, 3]])))).toBeInstanceOf(NotSquareError);
  });
});

describe('adoptLu (a factorization computed elsewhere)', () => {
  const a = namedMatrix('sherman5');
  const external = (): ExternalLu => ({ ...sparseLu(a), singular: false, strategy: 'unsymmetric' });

  it('takes a valid factorization as it is: the same solves', () => {
    const f = sparseLu(a);
    const adopted = adoptLu(a, external());
    const b = multiply(a, sinVector(a.rows));
    const x = new Float64Array(a.rows);
    const y = new Float64Array(a.rows);
    sparseLuSolve(f, b, x, new Float64Array(a.rows));
    sparseLuSolve(adopted, b, y, new Float64Array(a.rows));
    expect(y).toEqual(x);
  });

  it('refuses a malformed layout with DimensionMismatchError', () => {
    const swappedDiagonal = external();
    const lRowIdx = Int32Array.from(swappedDiagonal.lRowIdx);
    const k = Array.from({ length: a.rows }, (_, j) => j).find((j) => swappedDiagonal.lColPtr[j + 1] - swappedDiagonal.lColPtr[j] > 1) ?? 0;
    const p = swappedDiagonal.lColPtr[k];
    [lRowIdx[p], lRowIdx[p + 1]] = [lRowIdx[p + 1], lRowIdx[p]];
    expect(thrown(() => adoptLu(a, { ...swappedDiagonal, lRowIdx }))).toBeInstanceOf(DimensionMismatchError);
    const notPermutation = Int32Array.from(external().rowPivot);
    notPermutation[0] = notPermutation[1];
    expect(thrown(() => adoptLu(a, { ...external(), rowPivot: notPermutation }))).toBeInstanceOf(DimensionMismatchError);
  });

  it('raises SingularMatrixError for a reported zero pivot and for a pivot at rounding level', () => {
    expect(thrown(() => adoptLu(a, { ...external(), singular: true }))).toBeInstanceOf(SingularMatrixError);
    const tiny = external();
    const uValues = Float64Array.from(tiny.uValues);
    uValues[tiny.uColPtr[a.rows] - 1] = 1e-30;
    const error = thrown(() => adoptLu(a, { ...tiny, uValues }));
    expect(error).toBeInstanceOf(SingularMatrixError);
    expect((error as SingularMatrixError).details).toMatchObject({ step: a.rows - 1, pivot: 1e-30 });
  });
});
