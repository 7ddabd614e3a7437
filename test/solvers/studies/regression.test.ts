/**
 * Regression studies in the core: the definition's checks of a regression grid, a point per group
 * (the data is drawn over each point's partition), a sample a job replays bit for bit
 * (`{ format: 'generator', generator: 'regression', ..., seed }` on the sample's partition), the
 * consistency fields as metrics, and the other generators' matrix seeds untouched by the new settings.
 */
import { describe, expect, it } from 'vitest';
import { InvalidParameterError, ProblemTooLargeError } from '../../../src/solvers/errors.js';
import { generateSystem } from '../../../src/solvers/input/generators.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { planStudy } from '../../../src/solvers/studies/plan.js';
import { computeGroupSample, matrixSeed, sampleRegression } from '../../../src/solvers/studies/sampler.js';
import { matrixConditioning } from '../../../src/solvers/studies/sampleMetrics.js';
import type { GeneralStudyRequest } from '../../../src/solvers/studies/presets.js';

const LIMITS = { maxSamples: 10_000, maxPointSamples: 1000, maxPoints: 100, maxN: 1000 };
const REQUEST: GeneralStudyRequest = {
  generator: 'regression',
  settings: { n: 8, rowsPerFeature: 3, sigma: 0.2 },
  grid: { skew: [0, 2], m: [2, 4] },
  partition: { family: 'random', seed: 5 },
  samples: 2,
  metrics: ['rates.apc.rate', 'consistency.consistent', 'consistency.weightedDistance'],
};

describe('regression studies', () => {
  it('gives every point its own group (data drawn over its partition) and rows = rowsPerFeature n', () => {
    const plan = planStudy(REQUEST, LIMITS);
    expect(plan.points).toHaveLength(4);
    expect(plan.groups).toHaveLength(4);
    const { A, b, partition } = sampleRegression(plan.definition, plan.points[3], 1);
    expect([A.rows, A.cols, b.length, partition.m]).toEqual([24, 8, 24, 4]);
  });

  it('a sample is the job of its seed on its partition, bit for bit, and its consistency fields are metrics', () => {
    const plan = planStudy(REQUEST, LIMITS);
    const point = plan.points[3];
    const { A, b, partition } = sampleRegression(plan.definition, point, 1);
    const seed = matrixSeed(plan.definition, point, 1);
    const job = generateSystem({ generator: 'regression', rows: 24, n: 8, mean: 0, skew: 2, sigma: 0.2, seed }, undefined, partition);
    expect(job.A.data).toEqual(A.data);
    expect(job.b).toEqual(b);
    const [outcome] = computeGroupSample(plan.definition, plan.groups[3], 1);
    expect(outcome.status, outcome.reason ?? '').toBe('kept');
    const [apc, consistent, distance] = outcome.values;
    expect(apc).toBeGreaterThan(0);
    expect(apc).toBeLessThan(1);
    expect(consistent).toBe(0); // noisy labels: inconsistent
    expect(distance).toBeGreaterThan(0);
  });

  it('refuses rowsPerFeature < 1, more machines than rows, and rows above MAX_STUDY_N', () => {
    expect(() => planStudy({ ...REQUEST, settings: { n: 8, rowsPerFeature: 0.5 } }, LIMITS)).toThrow(InvalidParameterError);
    expect(() => planStudy({ ...REQUEST, grid: { m: [30] } }, LIMITS)).toThrow(/m = 30 machines/);
    expect(() => planStudy({ ...REQUEST, settings: { n: 100, rowsPerFeature: 20 } }, LIMITS)).toThrow(ProblemTooLargeError);
    expect(() => planStudy({ ...REQUEST, grid: { skew: [-1] } }, LIMITS)).toThrow(/skew/);
  });

  it("leaves the other generators' matrix seeds alone: skew and rowsPerFeature enter only regression seeds", () => {
    const gaussian = planStudy(
      { generator: 'gaussian', settings: { n: 6 }, grid: { m: [2] }, samples: 1, metrics: ['rates.apc.rate'] },
      LIMITS,
    );
    const skewed = planStudy(
      { generator: 'gaussian', settings: { n: 6, skew: 3, rowsPerFeature: 7 }, grid: { m: [2] }, samples: 1, metrics: ['rates.apc.rate'] },
      LIMITS,
    );
    expect(matrixSeed(skewed.definition, skewed.points[0], 0)).toBe(matrixSeed(gaussian.definition, gaussian.points[0], 0));
  });

  it('matrixConditioning takes a tall matrix (its n-th singular value is sigma_min)', () => {
    // diag(3, 1) over two more zero rows: sigma = 3, 1.
    const A = { rows: 4, cols: 2, data: Float64Array.from([3, 0, 0, 1, 0, 0, 0, 0]) };
    expect(matrixConditioning(selectedKernels(), A).kappaAtA).toBeCloseTo(9, 12);
  });
});
