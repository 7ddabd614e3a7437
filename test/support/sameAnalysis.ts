/**
 * Two analyses of the same system compared as the split analysis promises: every
 * number to 1e-14 relative, theta_H and its pair identical, the same recommendation.
 */
import { expect } from 'vitest';
import type { Analysis } from '../../src/solvers/analysis/types.js';

/** Every number of two analyses, paired by path (arrays and nested objects walked alike). */
function numbersOf(value: unknown, path: string, out: Map<string, number | null>): Map<string, number | null> {
  if (typeof value === 'number') out.set(path, value);
  else if (value === null) out.set(path, null);
  else if (Array.isArray(value)) value.forEach((v, k) => numbersOf(v, `${path}[${k}]`, out));
  else if (typeof value === 'object') for (const [key, v] of Object.entries(value)) numbersOf(v, `${path}.${key}`, out);
  return out;
}

export function expectSameAnalysis(split: Analysis, whole: Analysis): void {
  expect(split.heterogeneity.thetaH).toBe(whole.heterogeneity.thetaH);
  expect(split.heterogeneity.thetaHPair).toEqual(whole.heterogeneity.thetaHPair);
  expect(split.recommendation.algorithm).toBe(whole.recommendation.algorithm);
  const a = numbersOf(split, 'analysis', new Map());
  const b = numbersOf(whole, 'analysis', new Map());
  expect([...a.keys()]).toEqual([...b.keys()]);
  for (const [path, expected] of b) {
    const actual = a.get(path)!;
    if (expected === null || !Number.isFinite(expected)) {
      expect(actual, path).toBe(expected);
      continue;
    }
    const scale = Math.max(Math.abs(expected), Number.MIN_VALUE);
    expect(Math.abs(actual - expected) / scale, `${path}: ${actual} vs ${expected}`).toBeLessThanOrEqual(1e-14);
  }
}

/**
 * The analysis without what was measured on the machine that ran it: the time to solution (its
 * calibration of the kernels' throughput) and the recommendation's finishesFirst, which follows from
 * it. Two analyses of the same data agree on the rest, whichever process computed them.
 */
export function withoutMeasurements(analysis: Analysis): Omit<Analysis, 'timeToSolution'> {
  const { timeToSolution: _measured, recommendation, ...rest } = analysis;
  const { finishesFirst: _followsFromIt, ...decided } = recommendation;
  return { ...rest, recommendation: decided };
}
