/** The registry and the parts of each algorithm's contract that do not need a run. */
import { describe, expect, it } from 'vitest';
import { ALGORITHM_IDS, algorithms, getAlgorithm } from '../../../src/solvers/algorithms/registry.js';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';
import { InvalidParameterError, SingularMatrixError } from '../../../src/solvers/errors.js';

const spectral: SpectralData = { m: 4, lambdaMinS: 0.05, lambdaMaxS: 2.5, mu: 0.01, L: 40 };

describe('registry', () => {
  it('maps every public id to its algorithm', () => {
    expect([...ALGORITHM_IDS].sort()).toEqual(['apc', 'cimmino', 'dgd', 'dhbm', 'dnag', 'mlm']);
    for (const id of ALGORITHM_IDS) {
      expect(algorithms[id].id).toBe(id);
      expect(getAlgorithm(id)).toBe(algorithms[id]);
      expect(algorithms[id].name.length).toBeGreaterThan(3);
    }
    expect(algorithms.apc.family).toBe('projection');
    expect(algorithms.dhbm.family).toBe('gradient');
  });

  it('rejects an unknown id, naming the valid ones', () => {
    expect(() => getAlgorithm('gmres')).toThrow(InvalidParameterError);
    expect(() => getAlgorithm('gmres')).toThrow(/apc, dhbm, dgd, dnag, cimmino, mlm/);
    expect(() => getAlgorithm('__proto__')).toThrow(InvalidParameterError);
  });

  it('lists the paper parameters', () => {
    expect(algorithms.apc.parameterNames).toEqual(['gamma', 'eta']);
    expect(algorithms.mlm.parameterNames).toEqual([]);
    expect(algorithms.cimmino.parameterNames).toEqual(['nu']);
    expect(algorithms.dgd.parameterNames).toEqual(['alpha']);
    expect(algorithms.dnag.parameterNames).toEqual(['alpha', 'beta']);
    expect(algorithms.dhbm.parameterNames).toEqual(['alpha', 'beta']);
  });
});

describe('validateParameters', () => {
  it('accepts partial, in-domain overrides', () => {
    expect(() => algorithms.apc.validateParameters({ gamma: 1.2 })).not.toThrow();
    expect(() => algorithms.dhbm.validateParameters({ beta: 0 })).not.toThrow();
    expect(() => algorithms.mlm.validateParameters({})).not.toThrow();
  });

  it('rejects unknown names, naming the valid ones', () => {
    expect(() => algorithms.apc.validateParameters({ alpha: 1 })).toThrow(/valid parameters for apc: gamma, eta/);
    expect(() => algorithms.dhbm.validateParameters({ momentum: 0.5 })).toThrow(InvalidParameterError);
    expect(() => algorithms.mlm.validateParameters({ gamma: 1 })).toThrow(/mlm takes no parameters/);
  });

  it('rejects non-finite values and values outside the iteration domain', () => {
    const bad: [string, Record<string, number>][] = [
      ['apc', { gamma: 0 }],
      ['apc', { eta: -1 }],
      ['apc', { gamma: Number.NaN }],
      ['cimmino', { nu: 0 }],
      ['dgd', { alpha: Number.POSITIVE_INFINITY }],
      ['dgd', { alpha: -0.1 }],
      ['dnag', { beta: 1 }],
      ['dnag', { beta: -0.1 }],
      ['dhbm', { beta: 1.5 }],
      ['dhbm', { alpha: 0 }],
    ];
    for (const [id, p] of bad)
      expect(() => getAlgorithm(id).validateParameters(p), `${id} ${JSON.stringify(p)}`).toThrow(InvalidParameterError);
  });

  it('rate() needs the full parameter set', () => {
    expect(() => algorithms.apc.rate(spectral, { gamma: 1 })).toThrow(/eta of apc is missing/);
  });
});

describe('rates', () => {
  it('closed forms of the table in docs/SPEC.md', () => {
    const kS = spectral.lambdaMaxS / spectral.lambdaMinS;
    const k = spectral.L / spectral.mu;
    expect(algorithms.apc.optimal(spectral).rate).toBeCloseTo((Math.sqrt(kS) - 1) / (Math.sqrt(kS) + 1), 15);
    expect(algorithms.cimmino.optimal(spectral).rate).toBeCloseTo((kS - 1) / (kS + 1), 15);
    expect(algorithms.mlm.optimal(spectral).rate).toBeCloseTo(1 - spectral.lambdaMinS / spectral.m, 15);
    expect(algorithms.dgd.optimal(spectral).rate).toBeCloseTo((k - 1) / (k + 1), 15);
    expect(algorithms.dnag.optimal(spectral).rate).toBeCloseTo(1 - 2 / Math.sqrt(3 * k + 1), 15);
    expect(algorithms.dhbm.optimal(spectral).rate).toBeCloseTo((Math.sqrt(k) - 1) / (Math.sqrt(k) + 1), 15);
  });

  it('each optimal gap is 1 - rate without cancellation: equal to it here, and still the closed form where the rate rounds to 1', () => {
    for (const id of ALGORITHM_IDS) {
      const { rate, gap } = algorithms[id].optimal(spectral);
      expect(Math.abs(gap - (1 - rate)), id).toBeLessThanOrEqual(4 * Number.EPSILON);
    }
    // kappa(A^T A) = 1e26 and kappa(S) = 1e24: DGD's, Cimmino's and MLM's rates are 1 in double precision.
    const far: SpectralData = { m: 2, L: 1, mu: 1e-26, lambdaMaxS: 1, lambdaMinS: 1e-24 };
    const closedForms: Record<'dgd' | 'cimmino' | 'mlm', number> = {
      dgd: 2e-26 / (1 + 1e-26),
      cimmino: 2e-24 / (1 + 1e-24),
      mlm: 1e-24 / 2,
    };
    for (const id of ['dgd', 'cimmino', 'mlm'] as const) {
      const { rate, gap } = algorithms[id].optimal(far);
      expect(rate, id).toBe(1);
      expect(Math.abs(gap / closedForms[id] - 1), id).toBeLessThan(1e-15);
    }
  });

  it('APC: gamma* eta* = 4/D^2, (gamma* - 1)(eta* - 1) = rho^2, gamma* the smaller root; swapped diverges for m >= 3', () => {
    const { rate, parameters } = algorithms.apc.optimal(spectral);
    const { gamma, eta } = parameters;
    const muMin = spectral.lambdaMinS / spectral.m;
    const muMax = spectral.lambdaMaxS / spectral.m;
    const d = Math.sqrt(muMin) + Math.sqrt(muMax);
    expect(gamma * eta).toBeCloseTo(4 / (d * d), 12);
    expect((gamma - 1) * (eta - 1)).toBeCloseTo(rate * rate, 12);
    expect(gamma).toBeLessThan(eta);
    expect(algorithms.apc.rate(spectral, { gamma: eta, eta: gamma })).toBeCloseTo(Math.abs(1 - eta), 12);
    expect(algorithms.apc.rate(spectral, { gamma: eta, eta: gamma })).toBeGreaterThan(1);
  });

  it('non-optimal parameters give a slower rate, and >= 1 outside the convergent range', () => {
    for (const id of ALGORITHM_IDS) {
      const { rate, parameters } = algorithms[id].optimal(spectral);
      for (const name of algorithms[id].parameterNames) {
        for (const factor of [0.7, 1.3]) {
          const p = { ...parameters, [name]: parameters[name] * factor };
          if (name === 'beta' && p.beta >= 1) continue;
          expect(algorithms[id].rate(spectral, p), `${id} ${name} x${factor}`).toBeGreaterThan(rate);
        }
      }
    }
    expect(algorithms.dgd.rate(spectral, { alpha: 2.5 / spectral.L })).toBeGreaterThan(1);
    expect(algorithms.cimmino.rate(spectral, { nu: 2.5 / spectral.lambdaMaxS })).toBeGreaterThan(1);
  });

  it('refuses spectral data of a singular system', () => {
    expect(() => algorithms.dhbm.optimal({ ...spectral, mu: 0 })).toThrow(SingularMatrixError);
    expect(() => algorithms.apc.optimal({ ...spectral, lambdaMinS: Number.NaN })).toThrow(InvalidParameterError);
  });
});

describe('Table 1 bounds', () => {
  const h = { m: 3, thetaH: 1.3, cosThetaH: Math.cos(1.3), phiMin: 0.4, rowNormRatio: 3 };

  it('gives the projection methods upper bounds only when c = (m-1) cos(theta_H) < 1', () => {
    for (const id of ['apc', 'cimmino', 'mlm'] as const) {
      const b = algorithms[id].rateBounds(h);
      expect(b.upperHypothesisHolds).toBe(true);
      expect(b.upper).not.toBeNull();
      expect(b.lower as number).toBeLessThanOrEqual(b.upper as number);
      const far = algorithms[id].rateBounds({ ...h, thetaH: 0.3, cosThetaH: Math.cos(0.3) });
      expect(far.upper).toBeNull();
      expect(far.upperHypothesisHolds).toBe(false);
    }
    const c = 2 * Math.cos(1.3);
    expect(algorithms.apc.rateBounds(h).upper).toBeCloseTo(c / (1 + Math.sqrt(1 - c * c)), 15);
    expect(algorithms.cimmino.rateBounds(h).upper).toBeCloseTo(c, 15);
    expect(algorithms.apc.rateBounds(h).lower).toBeCloseTo(2 / (1 + Math.sin(1.3)) - 1, 15);
  });

  it('gives the gradient methods the row-norm and phi_min lower bounds (the larger as `lower`)', () => {
    const r = 3;
    const s = Math.sin(0.4);
    expect(algorithms.dgd.rateBounds(h).lowerBounds).toEqual({ rowNormRatio: (r * r - 1) / (r * r + 1), phiMin: 2 / (1 + s * s) - 1 });
    expect(algorithms.dhbm.rateBounds(h).lower).toBeCloseTo(Math.max((r - 1) / (r + 1), 2 / (1 + s) - 1), 15);
    const nag = algorithms.dnag.rateBounds(h);
    expect(nag.lowerBounds.rowNormRatio).toBeCloseTo(1 - 2 / Math.sqrt(3 * r + 1), 15);
    expect(nag.lowerBounds.rowNormRatioSquared).toBeCloseTo(1 - 2 / Math.sqrt(3 * r * r + 1), 15);
    expect(nag.upper).toBeNull();
    expect(algorithms.dhbm.rateBounds({ ...h, phiMin: null }).lowerBounds.phiMin).toBeNull();
  });
});
