import { LuDecomposition, Matrix } from 'ml-matrix';
import { expect, it } from 'vitest';
import { luFactor, luSolve, luSolveTransposed } from '../../../src/solvers/linalg/lu.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { norm2, type DenseMatrix } from '../../../src/solvers/matrix.js';
import { describeEachBackend } from '../../support/backends.js';
import { randomMatrix } from '../../support/systems.js';

function randomSquare(n: number, seed: number, density = 1): DenseMatrix {
  const rng = new SeededRandom(seed);
  const a = randomMatrix(n, n, rng, density);
  // Keep sparse test matrices nonsingular with a diagonal that is not dominant enough to avoid pivoting.
  if (density < 1) for (let i = 0; i < n; i++) a.data[i * n + i] += 0.5 * (2 * rng.nextDouble() - 1);
  return a;
}

/** |A x - b| / (|A|_F |x|): the normwise backward error, O(eps) for a stable solver. */
function backwardError(a: DenseMatrix, x: Float64Array, b: Float64Array, transposed: boolean): number {
  const n = a.rows;
  const r = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = -b[i];
    for (let j = 0; j < n; j++) s += (transposed ? a.data[j * n + i] : a.data[i * n + j]) * x[j];
    r[i] = s;
  }
  return norm2(r) / (norm2(a.data) * norm2(x));
}

describeEachBackend('LU with partial pivoting', () => {
  for (const [n, density] of [
    [1, 1],
    [5, 1],
    [37, 1],
    [120, 1],
    [200, 0.03],
  ] as const) {
    it(`solves A x = b and A^T x = b with backward error O(eps) (n = ${n}, density ${density})`, () => {
      const a = randomSquare(n, 11 + n, density);
      const f = luFactor(a);
      expect(f.zeroPivotColumn).toBe(-1);
      const b = new SeededRandom(3).fillSigned(new Float64Array(n));
      const x = luSolve(f, b);
      const y = luSolveTransposed(f, b);
      expect(backwardError(a, x, b, false)).toBeLessThan(20 * Number.EPSILON);
      expect(backwardError(a, y, b, true)).toBeLessThan(20 * Number.EPSILON);
      // Independent reference: ml-matrix's own LU solve, to the accuracy the conditioning allows.
      const ref = new LuDecomposition(
        new Matrix(Array.from({ length: n }, (_, i) => Array.from(a.data.subarray(i * n, (i + 1) * n)))),
      ).solve(Matrix.columnVector(Array.from(b)));
      const cond = n <= 37 ? 1e6 : 1e8;
      for (let i = 0; i < n; i++)
        expect(Math.abs(x[i] - ref.get(i, 0))).toBeLessThan(cond * Number.EPSILON * (1 + Math.abs(ref.get(i, 0))));
    });
  }

  it('needs pivoting on a matrix with a zero diagonal (permutation times scaling)', () => {
    const n = 6;
    const data = new Float64Array(n * n);
    for (let i = 0; i < n; i++) data[i * n + ((i + 2) % n)] = i + 1; // A e_{(i+2) mod n} = (i+1) e_i
    const a = { rows: n, cols: n, data };
    const f = luFactor(a);
    const b = Float64Array.from({ length: n }, (_, i) => i + 1);
    // A x = b has x_{(i+2) mod n} = b_i / (i + 1) = 1 exactly.
    expect(Array.from(luSolve(f, b))).toEqual(new Array(n).fill(1));
    // A^T y = b: y_i (i + 1) = b_{(i+2) mod n}.
    const y = luSolveTransposed(f, b);
    for (let i = 0; i < n; i++) expect(y[i]).toBeCloseTo((((i + 2) % n) + 1) / (i + 1), 14);
  });

  it('reports an exactly zero pivot for a singular matrix', () => {
    const a = { rows: 3, cols: 3, data: Float64Array.from([1, 2, 3, 2, 4, 6, 0, 1, 1]) };
    expect(luFactor(a).zeroPivotColumn).toBeGreaterThanOrEqual(0);
  });

  it('does not modify its input unless asked to factor in place', () => {
    const a = randomSquare(9, 5);
    const copy = Float64Array.from(a.data);
    luFactor(a);
    expect(a.data).toEqual(copy);
    const f = luFactor(a, { inPlace: true });
    expect(f.lu).toBe(a.data);
  });

  it('keeps the triangular solves exact on a banded matrix (envelopes skip only zeros)', () => {
    const n = 300;
    const data = new Float64Array(n * n);
    const rng = new SeededRandom(9);
    for (let i = 0; i < n; i++) for (let j = Math.max(0, i - 3); j < Math.min(n, i + 5); j++) data[i * n + j] = 2 * rng.nextDouble() - 1;
    const a = { rows: n, cols: n, data };
    const f = luFactor(a);
    const xTrue = Float64Array.from({ length: n }, (_, i) => Math.sin(i));
    const b = new Float64Array(n);
    const bt = new Float64Array(n);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        b[i] += data[i * n + j] * xTrue[j];
        bt[i] += data[j * n + i] * xTrue[j];
      }
    expect(backwardError(a, luSolve(f, b), b, false)).toBeLessThan(20 * Number.EPSILON);
    expect(backwardError(a, luSolveTransposed(f, bt), bt, true)).toBeLessThan(20 * Number.EPSILON);
  });
});
