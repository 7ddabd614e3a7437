/** The NumPy references of tall systems (scripts/tallReference.py writes test/fixtures/), read by the tall tests. */
import { readFileSync } from 'node:fs';

export interface GaussianFixture {
  A: number[][];
  b: number[];
  leastSquares: number[];
  blockWeighted: number[];
  leastSquaresResidual: number;
  weightedResidual: number;
  weightedDistance: number;
  kappaS: number;
  kappaAtA: number;
}

export const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), 'utf8'));

/** The noisy 400 x 100 Gaussian system on 5 machines. */
export const gaussianFixture = (): GaussianFixture => fixture('tallGaussian.json') as GaussianFixture;
