/** The numbers the service's sentences write: near 1 as 1 -/+ d, a tolerance as given. */
import { describe, expect, it } from 'vitest';
import { closeToOneText, toleranceText } from '../../src/solvers/numberText.js';

describe('numberText', () => {
  it('toleranceText gives the tolerance back with the fewest digits (2.5e-7 is not written 3e-7)', () => {
    expect(toleranceText(1e-8)).toBe('1e-8');
    expect(toleranceText(2.5e-7)).toBe('2.5e-7');
    expect(toleranceText(1e-4)).toBe('1e-4');
    expect(toleranceText(0.123456789)).toBe('1.23456789e-1');
    for (const x of [1e-12, 3.7e-9, 1 / 3, 5e-324, 0.1 + 0.2]) expect(Number(toleranceText(x))).toBe(x);
  });

  it('closeToOneText writes a value within 1e-3 of 1 as 1 - d or 1 + d, and 1 with a gap as 1 - gap', () => {
    expect(closeToOneText(1 - 1.06e-5)).toBe('1 - 1.06e-5');
    expect(closeToOneText(1 + 4.147e-4, 3)).toBe('1 + 4.147e-4');
    expect(closeToOneText(1, 3, 3.429e-24)).toBe('1 - 3.429e-24');
    expect(closeToOneText(0.5)).toBeNull();
    expect(closeToOneText(1)).toBeNull();
  });

  it('closeToOneText takes d from the gap for any rate near 1, whose 1 - x has lost digits to cancellation', () => {
    // rho = 1 - 1.23456789e-14 in floating point: 1 - rho reads 1.232e-14, the gap its exact digits.
    const gap = 1.23456789e-14;
    const rho = 1 - gap;
    expect((1 - rho).toExponential(3)).toBe('1.232e-14');
    expect(closeToOneText(rho, 3, gap)).toBe('1 - 1.235e-14');
    // A gap says nothing of a value above 1 or away from it.
    expect(closeToOneText(1 + 2e-5, 2, 1e-9)).toBe('1 + 2.00e-5');
    expect(closeToOneText(0.5, 2, 0.5)).toBeNull();
  });
});
