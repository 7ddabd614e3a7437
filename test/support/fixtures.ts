/**
 * The reference cases of the shared fixtures (heterogeneity/: NumPy/SciPy values, vendored in test/reference/fixtures, see its README),
 * found through ./sharedData.ts: one type and one loader for every test.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AlgorithmId } from '../../src/solvers/algorithms/registry.js';
import type { Heterogeneity } from '../../src/solvers/analysis/types.js';
import { parseMatrixMarket } from '../../src/solvers/input/matrixMarket.js';
import { fromRows, type DenseMatrix } from '../../src/solvers/matrix.js';
import { FIXTURES_DIR, MATRICES_DIR } from './sharedData.js';

export interface Fixture {
  name: string;
  source: { matrixMarket?: string; generator?: string; example?: number; constructed?: string };
  partition: { assignment: number[] };
  /** The matrix (rows) for generated cases; real matrices name a Matrix Market file in `source`. */
  A?: number[][];
  /** Field names of the API's Analysis, flattened. */
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
    theta: number[][];
    phi: (number | null)[];
    phiMin: number | null;
    rowNormRatio: number;
    theorem4KappaALowerBound: number;
    theorem3KappaSUpperBound: number | null;
    proposition2KappaSLowerBound: number;
    rates: Record<AlgorithmId, number>;
    corollary1: { lhs: number | null; rhs: number | null; holds: boolean } | null;
    fasterOfApcDhbm: 'apc' | 'dhbm';
  };
}

export function loadFixture(name: string): Fixture {
  return JSON.parse(readFileSync(join(FIXTURES_DIR, `${name}.json`), 'utf8')) as Fixture;
}

/** Every case, sorted by name. */
export function loadFixtures(): Fixture[] {
  return readdirSync(FIXTURES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => loadFixture(f.slice(0, -'.json'.length)));
}

/** The fixture's expected heterogeneity metrics, shaped as the analysis reports them. */
export function heterogeneityOf(fixture: Fixture): Heterogeneity {
  const { thetaH, cosThetaH, thetaHPair, theta, phi, phiMin, rowNormRatio } = fixture.expected;
  return { thetaH, cosThetaH, thetaHPair, theta, phi, phiMin, rowNormRatio };
}

export function matrixMarket(file: string): string {
  return readFileSync(join(MATRICES_DIR, file), 'utf8');
}

/** The fixture's matrix: its rows, or its Matrix Market file parsed. */
export function fixtureMatrix(fixture: Fixture): DenseMatrix {
  if (fixture.A) return fromRows(fixture.A);
  if (fixture.source.matrixMarket) return parseMatrixMarket(matrixMarket(fixture.source.matrixMarket));
  throw new Error(`fixture ${fixture.name} has neither A nor a Matrix Market source`);
}

/** The `matrix` of a POST /v1/jobs body for a fixture. */
export function fixtureMatrixInput(fixture: Fixture): object {
  if (fixture.A) return { format: 'dense', data: fixture.A };
  if (fixture.source.matrixMarket) return { format: 'matrix-market', data: matrixMarket(fixture.source.matrixMarket) };
  throw new Error(`fixture ${fixture.name} has neither A nor a Matrix Market source`);
}

export function relativeDifference(actual: number, expected: number): number {
  return Math.abs(actual - expected) / Math.max(Math.abs(expected), Number.MIN_VALUE);
}
