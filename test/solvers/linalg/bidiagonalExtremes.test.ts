/**
 * bidiagonalExtremes (trisection, both ends in one pass) against the one-index bisection
 * of linalg/singularValues.ts on the same bidiagonals: random, graded, with tiny and zero singular
 * values.
 */
import { describe, expect, it } from 'vitest';
import { bidiagonalSingularValue } from '../../../src/solvers/linalg/singularValues.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { bidiagonalExtremes } from '../../../src/solvers/linalg/singularValues.js';

function bisection(d: Float64Array, e: Float64Array): { largest: number; smallest: number } {
  const q = d.length;
  const off = e.subarray(0, Math.max(0, q - 1));
  return { largest: bidiagonalSingularValue(d, off, q - 1), smallest: bidiagonalSingularValue(d, off, 0) };
}

function expectSame(d: Float64Array, e: Float64Array, where: string): void {
  const ours = bidiagonalExtremes(d, e, d.length);
  const reference = bisection(d, e);
  for (const key of ['largest', 'smallest'] as const) {
    const scale = Math.abs(reference[key]);
    const difference = Math.abs(ours[key] - reference[key]);
    if (scale === 0) expect(difference, `${where}: ${key}`).toBeLessThanOrEqual(1e-300);
    else expect(difference / scale, `${where}: ${key} ${ours[key]} vs ${reference[key]}`).toBeLessThan(1e-13);
  }
}

describe('bidiagonalExtremes', () => {
  it('equals the bisection on random bidiagonals of every size from 1 to 130', () => {
    const random = new SeededRandom(17);
    for (let q = 1; q <= 130; q++) {
      const d = random.fillNormal(new Float64Array(q));
      const e = random.fillNormal(new Float64Array(q));
      expectSame(d, e, `q = ${q}`);
    }
  });

  it('keeps tiny singular values to high relative accuracy, as the bisection does (graded and nearly singular)', () => {
    const q = 60;
    const graded = new Float64Array(q).map((_, i) => 10 ** (-i / 4));
    const gradedOff = new Float64Array(q).map((_, i) => 0.5 * 10 ** (-i / 4));
    expectSame(graded, gradedOff, 'graded');
    const random = new SeededRandom(3);
    const d = random.fillNormal(new Float64Array(q));
    const e = random.fillNormal(new Float64Array(q));
    d[q - 1] = 1e-100;
    expectSame(d, e, 'one tiny diagonal entry');
    const smallest = bidiagonalExtremes(d, e, q).smallest;
    expect(smallest).toBeGreaterThan(0);
    expect(smallest).toBeLessThan(1e-99);
  });

  it('returns zero for a singular bidiagonal and the exact values of diagonal ones', () => {
    const d = Float64Array.from([3, 0, 2, 5]);
    const e = Float64Array.from([1, 1, 1]);
    expectSame(d, e, 'zero on the diagonal');
    expect(bidiagonalExtremes(Float64Array.from([0, 0]), Float64Array.from([0]), 2)).toEqual({ largest: 0, smallest: 0 });
    const diagonal = bidiagonalExtremes(Float64Array.from([2, -7, 0.5, 4]), new Float64Array(3), 4);
    expect(diagonal.largest).toBeCloseTo(7, 14);
    expect(diagonal.smallest).toBeCloseTo(0.5, 15);
  });
});
