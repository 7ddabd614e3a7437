/**
 * Every case of ../shared/fixtures/heterogeneity (NumPy/SciPy reference values) through `analyze`
 * on dense storage, with the tolerances of ./fixtureChecks.ts.
 */
import { expect, it } from 'vitest';
import { loadFixtures } from '../../support/fixtures.js';
import { describeEachBackend } from '../../support/backends.js';
import { analyzeFixture, checkFixture, expectAbsolute, expectRelative } from './fixtureChecks.js';

const fixtures = loadFixtures();

describeEachBackend('heterogeneity fixtures (NumPy references)', () => {
  it('covers every case in the folder', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(14);
  });

  for (const f of fixtures) {
    // sherman5 (n = 3312) takes a few seconds; everything else is milliseconds.
    it(`reproduces ${f.name}`, { timeout: 120_000 }, () => {
      checkFixture(f, analyzeFixture(f));
    });
  }

  it('permuted block diagonal: total orthogonality gives kappa(S) = 1 and theta_H = pi/2 exactly (Proposition 1)', () => {
    const f = fixtures.find((x) => x.name.startsWith('block-diagonal-permuted'))!;
    const a = analyzeFixture(f);
    expect(a.conditioning.kappaS).toBe(1);
    expect(a.heterogeneity.thetaH).toBe(Math.PI / 2);
    expect(a.rates.apc.rate).toBe(0);
  });

  it("ones-minus-eps: the paper's Example 3 closed forms", () => {
    const f = fixtures.find((x) => x.name.startsWith('ones-minus-eps'))!;
    const a = analyzeFixture(f);
    const n = f.expected.n;
    const eps = 1 - f.A![0][0]; // the stored 1 - eps, so eps exactly as represented
    const phiExact = Math.acos(1 - (eps * eps) / (n - 2 * eps + eps * eps));
    // arccos of a cosine this close to 1 is itself only good to ~eps / phi ~ 1e-14.
    expectAbsolute(a.heterogeneity.phiMin as number, phiExact, 1e-13, 'phiMin');
    expect(a.heterogeneity.thetaH).toBeLessThanOrEqual(phiExact + 1e-13);
    // Eigenvalues of J - eps I: n - eps (once) and -eps, so kappa(A^T A) = ((n - eps) / eps)^2.
    expectRelative(a.conditioning.kappaAtA, ((n - eps) / eps) ** 2, 1e-10, 'kappaAtA');
  });
});
