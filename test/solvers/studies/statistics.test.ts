/** Monte-Carlo summaries and the closed forms beside them, against SciPy (test/reference/studies/beta.json). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { exceedance, histogram, lineAngleExceedance, regularizedBeta, summarize, Z_95 } from '../../../src/solvers/studies/statistics.js';

interface BetaReference {
  betainc: { x: number; a: number; b: number; value: number }[];
  lineExceedance: { n: number; eps: number; value: number }[];
  lineExceedanceTail: { n: number; eps: number; value: number }[];
}
const reference = JSON.parse(readFileSync(new URL('../../reference/studies/beta.json', import.meta.url), 'utf8')) as BetaReference;

describe('statistics', () => {
  it('summarizes finite values: mean, standard error, 95% interval, extremes; NaN marks a missing value', () => {
    const s = summarize([1, 2, 3, 4, Number.NaN]);
    expect(s.count).toBe(4);
    expect(s.mean).toBe(2.5);
    // sample variance 5/3, SE = sqrt(5/3 / 4)
    expect(s.standardError).toBeCloseTo(Math.sqrt(5 / 12), 15);
    expect(s.interval![0]).toBeCloseTo(2.5 - Z_95 * Math.sqrt(5 / 12), 14);
    expect([s.min, s.max]).toEqual([1, 4]);
    expect(summarize([Number.NaN])).toMatchObject({ count: 0, mean: null, interval: null });
    expect(summarize([7])).toMatchObject({ count: 1, mean: 7, standardError: null });
  });

  it('histogram densities integrate to the share below the 99th percentile; exceedance counts strictly above eps', () => {
    const values = Array.from({ length: 1000 }, (_, k) => k / 1000);
    const h = histogram(values, 10)!;
    const width = h.edges[1] - h.edges[0];
    const mass = h.density.reduce((sum, d) => sum + d * width, 0);
    expect(mass + h.above / 1000).toBeCloseTo(1, 12);
    expect(exceedance([0.1, 0.2, 0.3, Number.NaN], 0.2)).toMatchObject({ probability: 1 / 3 });
  });

  it('regularized incomplete beta matches SciPy to 1e-12', () => {
    for (const { x, a, b, value } of reference.betainc) expect(Math.abs(regularizedBeta(x, a, b) - value)).toBeLessThan(1e-12);
  });

  it('P(tan^-2 theta > eps) for two uniform lines matches SciPy to 1e-12', () => {
    for (const { n, eps, value } of reference.lineExceedance) expect(Math.abs(lineAngleExceedance(n, eps) - value)).toBeLessThan(1e-12);
  });

  it('and far in its tail to 1e-10 relative (it read 0 for 3.03e-24 at n = 256, eps = 0.5: 1 minus a value near 1)', () => {
    for (const { n, eps, value } of reference.lineExceedanceTail)
      expect(Math.abs(lineAngleExceedance(n, eps) / value - 1), `n = ${n}, eps = ${eps}`).toBeLessThan(1e-10);
  });

  it("a probability of 0 or 1 has Wilson's interval, not 0 ± 0 (Experiment 3 read 31 of 100 estimates as certain)", () => {
    const z2 = Z_95 * Z_95;
    const none = exceedance(new Float64Array(2000), 0.5);
    expect(none.probability).toBe(0);
    expect(none.standardError).toBe(0);
    // At 0 successes Wilson's upper end is z^2 / (N + z^2): ~1.9e-3 at N = 2000.
    expect(none.interval![0]).toBe(0);
    expect(none.interval![1]).toBeCloseTo(z2 / (2000 + z2), 15);
    const all = exceedance(new Float64Array(2000).fill(1), 0.5);
    expect(all.interval![0]).toBeCloseTo(1 - z2 / (2000 + z2), 15);
    expect(all.interval![1]).toBe(1);
    // Mid-range it is close to P -+ 1.96 SE, shifted toward 1/2 (Wilson, 1927: 40 of 100 -> [0.3094, 0.4980]).
    const mid = exceedance(
      Float64Array.from({ length: 100 }, (_, k) => (k < 40 ? 1 : 0)),
      0.5,
    );
    expect(mid.interval![0]).toBeCloseTo(0.3094, 4);
    expect(mid.interval![1]).toBeCloseTo(0.498, 4);
  });

  it("a log-scale histogram has equal-ratio bins from the positive values' 1st percentile, the rest and values <= 0 below", () => {
    // 10^(k/100), k = 0..399: four decades, 100 values each; a zero and a negative value below the first edge.
    const values = [0, -1, ...Array.from({ length: 400 }, (_, k) => 10 ** (k / 100))];
    const h = histogram(values, 4, 'log')!;
    expect(h.scale).toBe('log');
    // The zero, the negative value and the positive values' first 1% (4 of 400).
    expect(h.below).toBe(2 + 4);
    expect(h.edges[0]).toBe(10 ** (4 / 100));
    for (let b = 1; b < 4; b++) expect(h.edges[b + 1] / h.edges[b]).toBeCloseTo(h.edges[1] / h.edges[0], 12);
    // Each bin's share count / total: the 99th percentile ends the last, so ~100 values in each but the last.
    const shares = h.density.map((d, b) => d * (h.edges[b + 1] - h.edges[b]) * values.length);
    expect(shares.reduce((a, b) => a + b, 0) + h.above + h.below).toBeCloseTo(values.length, 9);
    for (const share of shares.slice(0, 3)) expect(Math.abs(share - 99)).toBeLessThanOrEqual(2);
    // The default stays equal widths from 0.
    const linear = histogram(values, 4)!;
    expect(linear.scale).toBe('linear');
    expect(linear.edges[0]).toBe(-1);
    expect(linear.below).toBe(0);
  });

  it('an exceedance over no value at all is null, not 0 (a bound that never applies was read as never exceeded)', () => {
    expect(exceedance([Number.NaN, Number.NaN], 5)).toEqual({ eps: 5, probability: null, standardError: null, interval: null });
    expect(exceedance([], 5)).toEqual({ eps: 5, probability: null, standardError: null, interval: null });
    expect(exceedance([1, Number.NaN, 7], 5)).toMatchObject({ eps: 5, probability: 0.5, standardError: Math.sqrt(0.25 / 2) });
  });
});
