/** recommend() on every fixture, from the fixture's own metrics (independent NumPy/SciPy values). */
import { describe, expect, it } from 'vitest';
import { ALGORITHM_IDS, type AlgorithmId } from '../../../src/solvers/algorithms/registry.js';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import {
  KAPPA_TIE_RELATIVE,
  kappaResolution,
  predictIterations,
  recommend,
  REGIME_THRESHOLDS,
  unattainableSentence,
} from '../../../src/solvers/analysis/recommendation.js';
import { systemOf } from '../../support/systems.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { readMatrixCsr } from '../sparse/support.js';
import type { AlgorithmTuning, Conditioning } from '../../../src/solvers/analysis/types.js';
import { InvalidParameterError } from '../../../src/solvers/errors.js';
import { heterogeneityOf, loadFixtures, type Fixture } from '../../support/fixtures.js';

const fixtures = loadFixtures();

function inputOf(f: Fixture, tolerance = 1e-10) {
  const e = f.expected;
  const heterogeneity = heterogeneityOf(f);
  const conditioning: Conditioning = {
    kappaS: e.kappaS,
    lambdaMinS: e.lambdaMinS,
    lambdaMaxS: e.lambdaMaxS,
    kappaAtA: e.kappaAtA,
    L: e.kappaAtA,
    mu: 1,
  };
  const rates = Object.fromEntries(ALGORITHM_IDS.map((id) => [id, { rate: e.rates[id], gap: 1 - e.rates[id], parameters: {} }])) as Record<
    AlgorithmId,
    AlgorithmTuning
  >;
  return { m: e.m, heterogeneity, conditioning, rates, tolerance };
}

describe('recommend on the fixtures', () => {
  for (const f of fixtures) {
    it(f.name, () => {
      const e = f.expected;
      const r = recommend(inputOf(f));
      // Corollary 1
      const sc = r.sufficientCondition;
      if (e.corollary1 === null) {
        expect(sc.applicable).toBe(false);
        expect(sc.holds).toBe(false);
        expect(sc.lhs).toBeNull();
        expect(sc.rhs).toBeNull();
      } else {
        expect(sc.holds).toBe(e.corollary1.holds);
        if (e.corollary1.lhs === null) expect(sc.lhs).toBeNull();
        else expect(sc.lhs as number).toBeCloseTo(e.corollary1.lhs, 12);
        if (e.corollary1.rhs === null) expect(sc.rhs).toBeNull();
        else expect(Math.abs((sc.rhs as number) - e.corollary1.rhs)).toBeLessThanOrEqual(1e-12 * Math.max(1, e.corollary1.rhs) + 1e-20);
        expect(sc.applicable).toBe(e.corollary1.lhs !== null && e.corollary1.rhs !== null);
      }
      // Exact comparison
      expect(r.exact.faster).toBe(e.fasterOfApcDhbm);
      expect(r.algorithm).toBe(e.fasterOfApcDhbm);
      expect(r.exact.apcRate).toBe(e.rates.apc);
      expect(r.exact.dhbmRate).toBe(e.rates.dhbm);
      expect(r.exact.kappaS).toBe(e.kappaS);
      expect(r.exact.kappaAtA).toBe(e.kappaAtA);
      expect(r.exact.tie).toBe(f.name.startsWith('ones-minus-eps'));
      if (sc.holds) expect(r.algorithm).toBe('apc'); // the certificate is never contradicted
      // Predicted iterations for every algorithm
      for (const id of ALGORITHM_IDS) {
        const rho = e.rates[id];
        const k = r.predictedIterations[id];
        expect(k, id).toBe(rho >= 1 ? null : Math.max(1, Math.ceil(Math.log(1e-10) / Math.log(rho))));
      }
      // Regime and explanation
      expect(r.regimeThresholds).toEqual({ thetaH: Math.PI / 4, phiMin: Math.PI / 4 });
      expect(r.tolerance).toBe(1e-10);
      expect(r.regime.length).toBeGreaterThan(20);
      expect(r.explanation).toMatch(/kappa\(S\)/);
      expect(r.explanation).toMatch(/kappa\(A\^T A\)/);
      expect(r.explanation).toMatch(/Corollary 1/);
      expect(r.explanation).toMatch(/pi\/4/);
      expect(r.explanation).toContain(String(r.predictedIterations.apc));
      expect(r.explanation.split('\n').length).toBe(1);
      // eps kappa(A), and the sentence exactly when the tolerance is below it.
      expect(r.attainableAccuracy).toBe(Number.EPSILON * Math.sqrt(e.kappaAtA));
      expect(r.explanation.includes('below the attainable accuracy')).toBe(1e-10 < Number.EPSILON * Math.sqrt(e.kappaAtA));
    });
  }

  it('names the paper cases with pi/4 thresholds', () => {
    const byName = (prefix: string) => recommend(inputOf(fixtures.find((f) => f.name.startsWith(prefix)) as Fixture));
    // theta_H = 0.83 >= pi/4, phi_min = 0.48 < pi/4
    expect(byName('example2').regime).toMatch(/small phi_min, large theta_H.*case 1/);
    // theta_H = 0.55, phi_min = 1.12
    expect(byName('gaussian-n40').regime).toMatch(/large phi_min, small theta_H.*case 2/);
    // theta_H = 0.014, phi_min = 0.032
    expect(byName('ones-minus-eps').regime).toMatch(/small phi_min, small theta_H.*case 3/);
    // phi_min undefined (one row per machine)
    expect(byName('gaussian-n24-m24').regime).toMatch(/phi_min undefined/);
    expect(REGIME_THRESHOLDS.thetaH).toBe(Math.PI / 4);
  });

  it('explains a tie, a certificate, and a non-applicable certificate', () => {
    const tie = recommend(inputOf(fixtures.find((f) => f.name.startsWith('ones-minus-eps')) as Fixture));
    expect(tie.explanation).toMatch(/same optimal rate/);
    expect(tie.explanation).toMatch(/cheaper/);
    const block = recommend(inputOf(fixtures.find((f) => f.name.startsWith('block-diagonal')) as Fixture));
    expect(block.sufficientCondition).toMatchObject({ applicable: true, holds: true });
    expect(block.explanation).toMatch(/certifies that APC is faster/);
    expect(block.predictedIterations.apc).toBe(1);
    const g = recommend(inputOf(fixtures.find((f) => f.name.startsWith('gaussian-n40')) as Fixture));
    expect(g.explanation).toMatch(/does not apply/);
  });

  it('recommends D-HBM when kappa(A^T A) < kappa(S)', () => {
    const f = fixtures.find((x) => x.name.startsWith('example2')) as Fixture;
    const input = inputOf(f);
    input.conditioning = { ...input.conditioning, kappaS: 5000 };
    input.rates.apc = { rate: (Math.sqrt(5000) - 1) / (Math.sqrt(5000) + 1), gap: 2 / (Math.sqrt(5000) + 1), parameters: {} };
    const r = recommend(input);
    expect(r.algorithm).toBe('dhbm');
    expect(r.exact).toMatchObject({ faster: 'dhbm', tie: false });
    expect(r.explanation).toMatch(/^D-HBM is recommended/);
  });
});

describe('the regime agrees with the predicted iterations', () => {
  it('case 3 with APC far faster: the regime says so instead of leaving the winner open', () => {
    const f = fixtures.find((x) => x.name.startsWith('ones-minus-eps')) as Fixture;
    const input = inputOf(f);
    input.conditioning = { ...input.conditioning, kappaS: 3, kappaAtA: 1e6 };
    input.rates.apc = { rate: 0.9, gap: 0.1, parameters: {} };
    input.rates.dhbm = { rate: 1 - 1e-4, gap: 1e-4, parameters: {} };
    const r = recommend(input);
    expect(r.regime).toMatch(/case 3/);
    expect(r.regime).not.toMatch(/cannot say/);
    const ratio = r.predictedIterations.dhbm! / r.predictedIterations.apc!;
    expect(ratio).toBeGreaterThan(50);
    expect(r.regime).toContain(
      `APC is predicted to need about ${Number(ratio.toPrecision(2)).toLocaleString('en-US')} times fewer iterations than D-HBM`,
    );
    // A rate near 1 keeps its distance to 1 in the text.
    expect(r.explanation).toContain('rho_D-HBM = 1 - 1.00e-4');
  });

  it('a tie and a method that does not converge are said as such', () => {
    const tie = recommend(inputOf(fixtures.find((f) => f.name.startsWith('ones-minus-eps')) as Fixture));
    expect(tie.regime).toMatch(/here APC and D-HBM have the same optimal rate$/);
    const f = fixtures.find((x) => x.name.startsWith('example2')) as Fixture;
    const input = inputOf(f);
    input.rates.dhbm = { rate: 1, gap: 0, parameters: {} };
    expect(recommend(input).regime).toMatch(/here only APC is predicted to converge$/);
  });
});

describe('a tolerance below the attainable accuracy eps kappa(A)', () => {
  it("is said: the predicted iterations are exact arithmetic's", () => {
    expect(unattainableSentence(1e-8, 1e-9)).toBe('');
    expect(unattainableSentence(1e-8, Number.POSITIVE_INFINITY)).toBe('');
    expect(unattainableSentence(1e-8, 4.8e-5)).toBe(
      "The tolerance 1e-8 is below the attainable accuracy eps kappa(A) = 4.800e-5: in double precision a run's residual " +
        'may stop falling near it (the run then ends stagnated) rather than reach the tolerance, so the predicted ' +
        "iterations and times are exact arithmetic's: they compare speeds, not when a run gets there.",
    );
  });

  it('on plat362 (kappa(A) ~ 2e11, m = 3) the analysis says it of the tolerance 1e-8, and not of 1e-4', () => {
    const system = buildDistributedSystem(createProblem({ A: readMatrixCsr('plat362.mtx'), partition: { machines: 3 } }));
    const analysis = analyze(system, { tolerance: 1e-8 });
    const { L, mu } = analysis.conditioning;
    const { recommendation } = analysis;
    expect(recommendation.attainableAccuracy).toBe(Number.EPSILON * Math.sqrt(L / mu));
    expect(recommendation.attainableAccuracy!).toBeGreaterThan(1e-5);
    expect(recommendation.explanation).toContain(unattainableSentence(1e-8, recommendation.attainableAccuracy!));
    expect(recommendation.explanation).toContain('takes about');
    const loose = analyze(system, { tolerance: 1e-4 }).recommendation;
    expect(loose.explanation).not.toContain('attainable accuracy');
  });
});

describe('predictIterations', () => {
  it('is ceil(ln tol / ln rho), 1 for rho = 0 or rho <= tol, null for rho >= 1', () => {
    expect(predictIterations(0.5, 1e-3)).toBe(10);
    expect(predictIterations(0.9, 1e-8)).toBe(175);
    expect(predictIterations(0, 1e-8)).toBe(1);
    expect(predictIterations(1e-12, 1e-8)).toBe(1);
    expect(predictIterations(1, 1e-8)).toBeNull();
    expect(predictIterations(1.5, 1e-8)).toBeNull();
    expect(predictIterations(Number.NaN, 1e-8)).toBeNull();
    expect(predictIterations(0.5, 1)).toBe(0);
    expect(() => predictIterations(0.5, 0)).toThrow(InvalidParameterError);
  });

  it('near 1 counts by the gap (ln(1 - gap) by log1p), not by the rate rounded to double', () => {
    // DGD on diag(1, 3.16e-8) in 2 machines: kappa(A^T A) = 1e15, gap = 2/(kappa + 1). ln(rate) read 8.73e15 (5% low).
    const gap = 1.9999999999999978e-15;
    const rate = 1 - gap;
    // ln(1e-8) / ln(1 - gap) = -18.420680743952367 / (-gap - gap^2/2 - ...): gap^2 is below the last digit.
    expect(predictIterations(rate, 1e-8, gap)! / (18.420680743952367 / gap)).toBeCloseTo(1, 12);
    // Nearer 0.5 the rate's own digits count alike; a gap that is not 1 - rate's (0: not known) is not used.
    expect(predictIterations(0.9, 1e-8, 0.1)).toBe(175);
    expect(predictIterations(1 - 1e-10, 1e-8, 0)).toBe(Math.ceil(Math.log(1e-8) / Math.log(1 - 1e-10)));
  });
});

describe('the explanation writes the tolerance as given', () => {
  it('2.5e-7 reads 2.5e-7 (it read 3e-7), and the iterations reduce the error by that factor', () => {
    const f = fixtures[0];
    const r = recommend(inputOf(f, 2.5e-7));
    expect(r.explanation).toMatch(/Reducing the error by a factor 2\.5e-7 takes about /);
    expect(r.predictedIterations.apc).toBe(predictIterations(f.expected.rates.apc, 2.5e-7, 1 - f.expected.rates.apc));
  });
});

describe('the explanation on systems near its edges (found by a QA pass against NumPy and mpmath)', () => {
  it('a kappa(S) of 1.00002 is not written 1, nor (1 - c)/(1 + c) = 0.99998; "as on most real data" is c >= 1\'s reason only', () => {
    // [[1, 1e-5], [0, 1]] on 2 machines: cos(theta_H) = 1e-5 / sqrt(1 + 1e-10), kappa(S) = (1 + cos) / (1 - cos).
    const a = analyze(
      systemOf(
        [
          [1, 1e-5],
          [0, 1],
        ],
        [0, 1],
        2,
      ),
    );
    const cos = 1e-5 / Math.sqrt(1 + 1e-10);
    expect(a.conditioning.kappaS).toBeCloseTo((1 + cos) / (1 - cos), 12);
    const text = a.recommendation.explanation;
    expect(text).not.toMatch(/kappa\(S\) = 1(?! [+-] )[ ,.;]/);
    expect(text).toMatch(/kappa\(S\) = 1 \+ 2\.000e-5/);
    expect(text).not.toMatch(/single row\) \(as on most real data\)/);
    // Two machines of two orthogonal rows, their row spaces 1e-5 from orthogonal: Corollary 1 applies, (1 - c)/(1 + c) ~ 1 - 2e-5.
    const corollary = analyze(
      systemOf(
        [
          [1, 0, 1e-5, 0],
          [0, 1, 0, 0],
          [0, 0, 1, 0],
          [0, 0, 0, 1],
        ],
        [0, 0, 1, 1],
        2,
      ),
    );
    expect(corollary.recommendation.sufficientCondition.applicable).toBe(true);
    expect(corollary.recommendation.explanation).toMatch(/\(1 - c\)\/\(1 \+ c\) = 1 - 2\.000e-5/);
  });

  it('kappa(S) and kappa(A^T A) equal in exact arithmetic and apart by rounding at 4e26: a tie, said so', () => {
    // A = J - 1e-12 I (n = 20, 4 machines): kappa(S) = kappa(A^T A) = 4.000177e26 (mpmath, 60 digits); computed ~2e-3
    // apart, about eps kappa(A). They read "APC, not a tie".
    const n = 20;
    const rows = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 - 1e-12 : 1)));
    const a = analyze(
      systemOf(
        rows,
        Array.from({ length: n }, (_, k) => Math.floor(k / 5)),
        4,
      ),
    );
    const { kappaS, kappaAtA } = a.conditioning;
    expect(Math.abs(kappaS / 4.000177e26 - 1)).toBeLessThan(1e-2);
    expect(Math.abs(kappaAtA / 4.000177e26 - 1)).toBeLessThan(1e-2);
    expect(a.recommendation.exact.tie).toBe(true);
    expect(a.recommendation.explanation).toMatch(/agree within what double precision resolves at these condition numbers/);
    // Each rate written from its own gap: the smaller gap is the slower rate's, to the digits shown.
    const gaps = [...a.recommendation.explanation.matchAll(/rho_(APC|D-HBM) = 1 - ([0-9.e+-]+)/g)].map((match) => [
      match[1],
      Number(match[2]),
    ]);
    expect(gaps.length).toBeGreaterThanOrEqual(2);
    for (const [name, gap] of gaps) {
      const own = name === 'APC' ? a.rates.apc.gap : a.rates.dhbm.gap;
      expect(Math.abs((gap as number) / own - 1)).toBeLessThan(5e-3);
    }
  });

  it('well-conditioned systems still tie only to 1e-9', () => {
    expect(kappaResolution(1e3, 1e3)).toBe(KAPPA_TIE_RELATIVE);
    expect(kappaResolution(1e26, 1e20)).toBeCloseTo(4 * Number.EPSILON * 1e13, 20);
  });
});
