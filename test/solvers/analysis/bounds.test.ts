/** computeBounds() on every fixture, from the fixture's own metrics (independent NumPy/SciPy values). */
import { describe, expect, it } from 'vitest';
import { ALGORITHM_IDS } from '../../../src/solvers/algorithms/registry.js';
import { computeBounds, PROPOSITION1_COS_TOLERANCE } from '../../../src/solvers/analysis/bounds.js';
import type { Heterogeneity } from '../../../src/solvers/analysis/types.js';
import { heterogeneityOf, loadFixtures } from '../../support/fixtures.js';

const fixtures = loadFixtures();

const relClose = (actual: number, expected: number, rel: number): void => {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(rel * Math.abs(expected));
};

describe('computeBounds on the fixtures', () => {
  for (const f of fixtures) {
    it(f.name, () => {
      const e = f.expected;
      const b = computeBounds({
        n: e.n,
        m: e.m,
        blockSizes: e.blockSizes,
        heterogeneity: heterogeneityOf(f),
        theorem4KappaALowerBound: e.theorem4KappaALowerBound,
      });

      relClose(b.proposition2KappaSLowerBound!, e.proposition2KappaSLowerBound, 1e-9);
      if (e.theorem3KappaSUpperBound === null) {
        expect(b.theorem3KappaSUpperBound).toBeNull();
        expect(b.theorem3.hypothesisHolds).toBe(false);
      } else {
        expect(b.theorem3KappaSUpperBound).not.toBeNull();
        relClose(b.theorem3KappaSUpperBound as number, e.theorem3KappaSUpperBound, 1e-9);
        expect(b.theorem3.hypothesisHolds).toBe(true);
      }
      expect(b.theorem3.c).toBeCloseTo((e.m - 1) * e.cosThetaH, 14);
      expect(b.theorem4KappaALowerBound).toBe(e.theorem4KappaALowerBound);

      // The bounds hold on the fixture's (independently computed) condition numbers.
      const slack = 1e-6;
      expect(e.kappaS).toBeGreaterThanOrEqual(b.proposition2KappaSLowerBound! * (1 - slack));
      if (b.theorem2KappaSUpperBound !== null) expect(e.kappaS).toBeLessThanOrEqual(b.theorem2KappaSUpperBound * (1 + slack));
      if (b.theorem3KappaSUpperBound !== null) expect(e.kappaS).toBeLessThanOrEqual(b.theorem3KappaSUpperBound * (1 + slack));
      expect(Math.sqrt(e.kappaAtA)).toBeGreaterThanOrEqual(b.theorem4KappaALowerBound! * (1 - slack));
      expect(e.kappaAtA).toBeGreaterThanOrEqual(b.theorem4KappaAtALowerBounds.rowNormRatio * (1 - slack));
      if (e.phiMin === null) expect(b.theorem4KappaAtALowerBounds.phiMin).toBeNull();
      else expect(e.kappaAtA).toBeGreaterThanOrEqual((b.theorem4KappaAtALowerBounds.phiMin as number) * (1 - slack));

      // Table 1 brackets every optimal rate of the fixture.
      for (const id of ALGORITHM_IDS) {
        const t = b.table1[id];
        expect(t, id).toBeDefined();
        if (!t) continue;
        if (t.lower !== null) expect(e.rates[id], `${id} lower`).toBeGreaterThanOrEqual(t.lower - 1e-9);
        if (t.upper !== null) expect(e.rates[id], `${id} upper`).toBeLessThanOrEqual(t.upper + 1e-9);
        if (['apc', 'cimmino', 'mlm'].includes(id)) expect(t.upperHypothesisHolds).toBe(e.theorem3KappaSUpperBound !== null);
      }
    });
  }

  it('Proposition 1 holds exactly on the permuted block-diagonal fixture (and nowhere else)', () => {
    for (const f of fixtures) {
      const e = f.expected;
      const b = computeBounds({
        n: e.n,
        m: e.m,
        blockSizes: e.blockSizes,
        heterogeneity: heterogeneityOf(f),
        theorem4KappaALowerBound: e.theorem4KappaALowerBound,
      });
      expect(b.proposition1.hypothesisHolds, f.name).toBe(f.name.startsWith('block-diagonal'));
      if (b.proposition1.hypothesisHolds) {
        expect(e.cosThetaH).toBeLessThanOrEqual(PROPOSITION1_COS_TOLERANCE);
        expect(e.kappaS).toBeCloseTo(1, 12);
        expect(e.rates.apc).toBeLessThan(1e-12);
        expect(b.theorem2.hypothesisHolds).toBe(true);
        // sqrt(p (n - p) cos theta_H) turns the 1e-15 cosine into a 2e-6 excess: still a bound, just not tight.
        expect(b.theorem2KappaSUpperBound as number).toBeGreaterThanOrEqual(1);
        expect(b.theorem2KappaSUpperBound as number).toBeLessThan(1 + 1e-5);
      }
    }
  });

  it('Theorem 2 takes the best machine size and reports it', () => {
    const h: Heterogeneity = {
      thetaH: 1.565,
      cosThetaH: Math.cos(1.565),
      thetaHPair: [0, 1],
      theta: [],
      phi: [],
      phiMin: null,
      rowNormRatio: 1,
    };
    const cos = Math.cos(1.565);
    const bound = (p: number, n: number): number => {
      const s = Math.sqrt(p * (n - p) * cos);
      const u = (n - p) * cos;
      return 1 - s - u > 0 ? (1 + s + u) / (1 - s - u) : Infinity;
    };
    const b = computeBounds({ n: 12, m: 3, blockSizes: [2, 9, 1], heterogeneity: h, theorem4KappaALowerBound: 1 });
    const best = Math.min(bound(1, 12), bound(2, 12), bound(9, 12));
    expect(b.theorem2.hypothesisHolds).toBe(true);
    expect(b.theorem2KappaSUpperBound as number).toBeCloseTo(best, 12);
    expect(b.theorem2.p).toBe([1, 2, 9].find((p) => bound(p, 12) === best));
    const none = computeBounds({
      n: 120,
      m: 3,
      blockSizes: [40, 40, 40],
      heterogeneity: { ...h, thetaH: 0.5, cosThetaH: Math.cos(0.5) },
      theorem4KappaALowerBound: 1,
    });
    expect(none.theorem2KappaSUpperBound).toBeNull();
    expect(none.theorem2).toEqual({ hypothesisHolds: false, p: null });
  });
});
