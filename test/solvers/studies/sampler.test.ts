/** Study plans and samples: grid expansion, grouping, chunks, seeds, dropped and failed samples, aggregation. */
import { describe, expect, it } from 'vitest';
import { aggregateStudy, type PointSamples } from '../../../src/solvers/studies/aggregate.js';
import { CHUNK_TARGET_COST } from '../../../src/solvers/studies/definition.js';
import { planStudy } from '../../../src/solvers/studies/plan.js';
import { computeGroupSample, matrixSeed, SAMPLE_STATUSES } from '../../../src/solvers/studies/sampler.js';

const LIMITS = { maxSamples: 1e6, maxPointSamples: 1e4, maxPoints: 1000, maxN: 1000 };

describe('study plans', () => {
  it('Experiment 1: 32 points in 2 groups (one matrix per sample for all 16 m), 26 chunks of ~CHUNK_TARGET_COST analyses', () => {
    const plan = planStudy({ preset: 'experiment-1' }, LIMITS);
    expect(plan.points).toHaveLength(32);
    expect(plan.groups.map((g) => g.points.length)).toEqual([16, 16]);
    expect(plan.chunks).toHaveLength(26);
    for (const group of plan.groups) {
      const own = plan.chunks.filter((c) => c.group === group.index);
      // Contiguous, covering every sample once.
      expect(own[0].start).toBe(0);
      expect(own[own.length - 1].end).toBe(300);
      for (let k = 1; k < own.length; k++) expect(own[k].start).toBe(own[k - 1].end);
      for (const chunk of own) expect((chunk.end - chunk.start) * 17).toBeLessThanOrEqual(CHUNK_TARGET_COST * 1.2);
    }
    // The same matrix for every m of a sample, a different one for another sample or mean.
    const [a, b] = plan.groups[0].points;
    expect(matrixSeed(plan.definition, a, 7)).toBe(matrixSeed(plan.definition, b, 7));
    expect(matrixSeed(plan.definition, a, 7)).not.toBe(matrixSeed(plan.definition, a, 8));
    expect(matrixSeed(plan.definition, a, 7)).not.toBe(matrixSeed(plan.definition, plan.groups[1].points[0], 7));
  });

  it('a sample that throws is recorded as failed with its reason, never fatal; a dropped one with the rule', () => {
    const plan = planStudy(
      { generator: 'ones-minus-eps', settings: { n: 6, eps: 0 }, grid: { m: [2, 3] }, samples: 3, metrics: ['rates.apc.rate'] },
      LIMITS,
    );
    const outcomes = computeGroupSample(plan.definition, plan.groups[0], 0);
    expect(outcomes.map((o) => o.status)).toEqual(['failed', 'failed']);
    expect(outcomes[0].reason).toMatch(/singular/i);

    const dropping = planStudy(
      { settings: { n: 30, mean: 1 }, grid: { m: [3] }, samples: 4, metrics: ['rates.apc.rate'], dropKappaAtAAbove: 1 },
      LIMITS,
    );
    const dropped = computeGroupSample(dropping.definition, dropping.groups[0], 0)[0];
    expect(dropped).toMatchObject({ status: 'dropped', reason: 'kappa(A^T A) > 1' });

    const samples: PointSamples[] = plan.points.map(() => ({
      status: Int8Array.from([SAMPLE_STATUSES.indexOf('failed'), SAMPLE_STATUSES.indexOf('failed'), -1]),
      reasons: ['singular', 'singular', ''],
      values: [new Float64Array([Number.NaN, Number.NaN, Number.NaN])],
    }));
    const result = aggregateStudy(plan.definition, plan.points, samples, null);
    expect(result.points[0]).toMatchObject({ samples: 3, kept: 0, failed: 3 });
    expect(result.points[0].failures).toEqual([
      { reason: 'singular', count: 2 },
      { reason: 'its chunk failed on every attempt (see the worker logs)', count: 1 },
    ]);
    expect(result.points[0].metrics[0]).toMatchObject({ count: 0, mean: null });
  });

  it("a sample's fate does not depend on its metrics: the analysis' input checks on the cheap path too", () => {
    // Entries ~1e-150 are below the least accepted largest entry of a row (2^-200 leaves room for sigma_min(A)^2).
    const outcome = (metrics: string[]) => {
      const plan = planStudy({ settings: { n: 12, mean: 0, std: 1e-150 }, grid: { m: [3] }, samples: 1, metrics }, LIMITS);
      return computeGroupSample(plan.definition, plan.groups[0], 0)[0];
    };
    const cheap = outcome(['conditioning.kappaS']);
    const full = outcome(['conditioning.kappaS', 'heterogeneity.thetaH']);
    expect(cheap.status).toBe('failed');
    expect(cheap.reason).toBe(full.reason);
    expect(cheap.reason).toMatch(/^Row 0 of A has no entry larger than .* below 2\^-200 \(~6\.2e-61\), the least accepted/);
  });

  it("a share metric counts a string value: recommendation.algorithm is APC's share", () => {
    const plan = planStudy(
      {
        settings: { n: 40, mean: 1 },
        grid: { m: [4] },
        samples: 2,
        metrics: ['recommendation.algorithm', 'recommendation.algorithm=dhbm'],
      },
      LIMITS,
    );
    const [outcome] = computeGroupSample(plan.definition, plan.groups[0], 0);
    expect(outcome.values[0] + outcome.values[1]).toBe(1);
    expect(plan.definition.metrics.map((m) => [m.kind, m.of])).toEqual([
      ['share', 'apc'],
      ['share', 'dhbm'],
    ]);
  });
});
