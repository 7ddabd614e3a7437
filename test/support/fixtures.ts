/** Reference cases from the shared reference data (see ./sharedData.ts). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_DIR } from './sharedData.js';


export interface HeterogeneityFixture {
  name: string;
  source: { matrixMarket?: string; generator?: string };
  partition: { assignment: number[] };
  A?: number[][];
  expected: {
    n: number;
    m: number;
    blockSizes: number[];
    kappaS: number;
    lambdaMinS: number;
    lambdaMaxS: number;
    kappaAtA: number;
    thetaH: number;
    cosThetaH: number;
    thetaHPair: [number, number] | null;
    phiMin: number | null;
    rowNormRatio: number;
    rates: Record<'apc' | 'cimmino' | 'mlm' | 'dhbm' | 'dnag' | 'dgd', number>;
    fasterOfApcDhbm: 'apc' | 'dhbm';
  };
}

export function loadFixture(name: string): HeterogeneityFixture {
  return JSON.parse(readFileSync(join(SHARED_DIR, 'fixtures', 'heterogeneity', `${name}.json`), 'utf8')) as HeterogeneityFixture;
}

export function matrixMarket(file: string): string {
  return readFileSync(join(SHARED_DIR, 'matrices', file), 'utf8');
}

/** The `matrix` of a POST /v1/jobs body for a fixture. */
export function fixtureMatrix(fixture: HeterogeneityFixture): object {
  if (fixture.A) return { format: 'dense', data: fixture.A };
  if (fixture.source.matrixMarket) return { format: 'matrix-market', data: matrixMarket(fixture.source.matrixMarket) };
  throw new Error(`fixture ${fixture.name} has neither A nor a Matrix Market source`);
}

export function relativeDifference(actual: number, expected: number): number {
  return Math.abs(actual - expected) / Math.max(Math.abs(expected), Number.MIN_VALUE);
}
