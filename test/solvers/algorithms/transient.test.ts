/**
 * The transient growth of D-HBM (src/solvers/algorithms/transient.ts) against the closed form of its worst mode at the
 * optimal parameters: at lambda = L the double root is -rho and, from x(-1) = x(0), the mode's error is
 * (1 + (1 + rho) t) (-rho)^t; the prediction is its largest modulus over t, at its iteration. A block run's columns
 * ask for the same prediction: it is the same, however often asked.
 */
import { describe, expect, it } from 'vitest';
import { dhbm } from '../../../src/solvers/algorithms/dhbm.js';
import { dnag } from '../../../src/solvers/algorithms/dnag.js';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';

const spectral = (mu: number, L: number): SpectralData => ({ m: 4, lambdaMinS: 0.5, lambdaMaxS: 2, mu, L });

describe('transient growth of D-HBM at its optimal parameters', () => {
  for (const kappa of [1e2, 1e4, 1e6]) {
    it(`is the closed-form peak of the mode at L: kappa(A^T A) = ${kappa}`, () => {
      const data = spectral(1, kappa);
      const { rate: rho, parameters } = dhbm.optimal(data);
      // max over t of (1 + (1 + rho) t) rho^t, from the closed form (not the recurrence).
      let peak = 1;
      let at = 0;
      for (let t = 1; t < 20 / (1 - rho); t++) {
        const e = (1 + (1 + rho) * t) * rho ** t;
        if (e > peak) [peak, at] = [e, t];
      }
      const predicted = dhbm.transientGrowth!(data, parameters)!;
      expect(Math.abs(predicted.factor / peak - 1)).toBeLessThan(1e-9);
      expect(Math.abs(predicted.iteration - at)).toBeLessThanOrEqual(1);
      // About sqrt(kappa) / e (the module comment's estimate), well above 1.
      expect(predicted.factor / (Math.sqrt(kappa) / Math.E)).toBeGreaterThan(0.5);
      expect(predicted.factor / (Math.sqrt(kappa) / Math.E)).toBeLessThan(2);
    });
  }

  it('is the same when asked again, and differs with the parameters or the method', () => {
    const data = spectral(1, 1e5);
    const { parameters } = dhbm.optimal(data);
    const first = dhbm.transientGrowth!(data, parameters);
    expect(dhbm.transientGrowth!({ ...data }, { ...parameters })).toEqual(first);
    const slower = { alpha: parameters.alpha / 2, beta: parameters.beta };
    expect(dhbm.transientGrowth!(data, slower)).not.toEqual(first);
    expect(dnag.transientGrowth!(data, dnag.optimal(data).parameters)).not.toEqual(first);
  });
});
