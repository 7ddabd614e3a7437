import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import { expect, it } from 'vitest';
import { lanczos } from '../../../src/solvers/eigen/lanczos.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { describeEachBackend } from '../../support/backends.js';
import { denseOperator } from '../../support/operators.js';

function randomSpd(n: number, seed: number): Float64Array {
  const rng = new SeededRandom(seed);
  const b = rng.fillSigned(new Float64Array(n * n));
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += b[k * n + i] * b[k * n + j];
      a[i * n + j] = s + (i === j ? 1e-3 : 0);
    }
  return a;
}

describeEachBackend('Lanczos with full reorthogonalization', () => {
  for (const [n, seed] of [
    [30, 1],
    [80, 2],
    [150, 3],
  ] as const) {
    it(`matches ml-matrix's eigenvalues at both ends of a random SPD matrix (n = ${n})`, () => {
      const a = randomSpd(n, seed);
      const ref = new EigenvalueDecomposition(new Matrix(Array.from({ length: n }, (_, i) => Array.from(a.subarray(i * n, (i + 1) * n)))), {
        assumeSymmetric: true,
      }).realEigenvalues;
      const lo = Math.min(...ref);
      const hi = Math.max(...ref);
      const r = lanczos(denseOperator(a, n), { which: 'both' });
      expect(r.converged).toBe(true);
      expect(Math.abs(r.largest - hi) / hi).toBeLessThan(1e-12);
      // lambda_min is known to absolute accuracy eps * lambda_max (both here and in the reference).
      expect(Math.abs(r.smallest - lo)).toBeLessThan(1e-12 * hi);
    });
  }

  it('tests convergence every 4 steps on a small operator (n <= 200), still to full accuracy', () => {
    // Tested every step, this run accepts after 31 steps.
    const n = 120;
    const a = randomSpd(n, 5);
    const ref = new EigenvalueDecomposition(new Matrix(Array.from({ length: n }, (_, i) => Array.from(a.subarray(i * n, (i + 1) * n)))), {
      assumeSymmetric: true,
    }).realEigenvalues;
    const hi = Math.max(...ref);
    const r = lanczos(denseOperator(a, n), { which: 'largest', tolerance: 1e-8 });
    expect(r.converged).toBe(true);
    expect(r.exhausted).toBe(false);
    expect(r.iterations % 4).toBe(0);
    expect(Math.abs(r.largest - hi) / hi).toBeLessThan(1e-12);
  });

  it("accepts by the value's Kato-Temple bound (valueTolerance) in fewer steps, the value to that tolerance", () => {
    // A diagonal operator of size 2000 with its top eigenvalues 1, 0.9, 0.85, ... (a gap of 0.1) and the rest in [0, 0.8].
    const n = 2000;
    const rng = new SeededRandom(8);
    const diag = Float64Array.from({ length: n }, () => 0.8 * rng.nextDouble());
    diag[17] = 1;
    diag[400] = 0.9;
    diag[1200] = 0.85;
    const op = {
      size: n,
      apply: (x: Float64Array, y: Float64Array) => {
        for (let i = 0; i < n; i++) y[i] = diag[i] * x[i];
      },
    };
    const byResidual = lanczos(op, { which: 'largest' });
    const byValue = lanczos(op, { which: 'largest', valueTolerance: 1e-12 });
    expect(byResidual.converged && byValue.converged).toBe(true);
    expect(byValue.iterations).toBeLessThan(0.75 * byResidual.iterations);
    expect(Math.abs(byValue.largest - 1)).toBeLessThan(1e-12);
    // Its residual is far above the default tolerance (1e-13): the value decided, and its residual^2 / gap is the bound.
    expect(byValue.residualLargest).toBeGreaterThan(1e-10);
    expect(byValue.residualLargest ** 2 / byValue.gapLargest).toBeLessThanOrEqual(1e-12);
  });

  it('stops after one step on the identity (invariant subspace: exact answer)', () => {
    const n = 40;
    const r = lanczos({ size: n, apply: (x, y) => y.set(x) }, { which: 'both' });
    expect(r.iterations).toBe(1);
    expect(r.exhausted).toBe(true);
    // The Ritz value is v^T v for the normalized start vector: 1 up to rounding.
    expect(Math.abs(r.largest - 1)).toBeLessThan(4 * Number.EPSILON);
    expect(r.smallest).toBe(r.largest);
  });

  it('is exact on exhaustion for a diagonal operator with distinct eigenvalues', () => {
    const n = 12;
    const diag = Float64Array.from({ length: n }, (_, i) => (i + 1) ** 2);
    const r = lanczos(
      {
        size: n,
        apply: (x, y) => {
          for (let i = 0; i < n; i++) y[i] = diag[i] * x[i];
        },
      },
      { which: 'both', tolerance: 0 },
    );
    expect(r.exhausted).toBe(true);
    expect(Math.abs(r.largest - n * n)).toBeLessThan(1e-12 * n * n);
    expect(Math.abs(r.smallest - 1)).toBeLessThan(1e-12 * n * n);
  });

  it('handles a 1 x 1 operator', () => {
    const r = lanczos({
      size: 1,
      apply: (x, y) => {
        y[0] = 7 * x[0];
      },
    });
    expect(r.largest).toBe(7);
  });

  it('is deterministic for a given seed', () => {
    const a = randomSpd(25, 4);
    expect(lanczos(denseOperator(a, 25), { seed: 5 })).toEqual(lanczos(denseOperator(a, 25), { seed: 5 }));
  });
});
