/**
 * Agreement of one backend with the NumPy/SciPy fixtures (the heterogeneity cases of the shared
 * reference fixtures; test/reference vendors a copy), in its own process: every case through
 * buildDistributedSystem + analyze, the headline values compared with the tolerances of
 * test/solvers/analysis/fixtures.test.ts (relative max(1e-6, 4 eps kappa(S)) on kappa(S) and
 * lambda_min(S), max(1e-6, 8 eps sqrt(kappa)) on kappa(A^T A), 1e-9 absolute on angles (1e-12 for
 * the tiny-angle case), 1e-9 on rates widened by their sensitivity to the condition number).
 * The test suite checks every field; this reports, per case, the worst error as a fraction of its
 * tolerance (<= 1 passes).
 *
 *   node --import tsx bench/fixtures.ts <typescript|native> <fixturesDir> <matricesDir>
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  analyze,
  buildDistributedSystem,
  fromRows,
  parseMatrixMarket,
  partitionFromAssignment,
  type DenseMatrix,
} from '../src/solvers/index.js';
import { selectBackend, type BackendName } from './backends.js';

interface Fixture {
  name: string;
  A?: number[][];
  source: { matrixMarket?: string };
  partition: { assignment: number[] };
  expected: {
    m: number;
    kappaS: number;
    lambdaMinS: number;
    lambdaMaxS: number;
    kappaAtA: number;
    thetaH: number;
    phiMin: number | null;
    rowNormRatio: number;
    rates: { apc: number; dhbm: number };
  };
}

export interface FixtureCheck {
  name: string;
  n: number;
  seconds: number;
  /** Worst |error| / tolerance over the compared values, and which value it was. */
  worstFraction: number;
  worstValue: string;
  passed: boolean;
}

export interface FixtureReport {
  backend: string;
  cases: FixtureCheck[];
}

const EPS = Number.EPSILON;

function main(): void {
  const [backendArg, fixturesDir, matricesDir] = process.argv.slice(2);
  const selected = selectBackend(backendArg as BackendName);
  const files = readdirSync(fixturesDir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const cases: FixtureCheck[] = [];
  for (const file of files) {
    const f = JSON.parse(readFileSync(join(fixturesDir, file), 'utf8')) as Fixture;
    const A: DenseMatrix = f.A ? fromRows(f.A) : parseMatrixMarket(readFileSync(join(matricesDir, f.source.matrixMarket!), 'utf8'));
    const n = A.rows;
    const partition = partitionFromAssignment(Int32Array.from(f.partition.assignment), f.expected.m);
    const t0 = performance.now();
    const a = analyze(buildDistributedSystem({ n, A, b: new Float64Array(n).fill(1), xTrue: null, partition }));
    const seconds = (performance.now() - t0) / 1e3;

    const e = f.expected;
    const tolS = Math.max(1e-6, 4 * EPS * e.kappaS);
    const tolA = Math.max(1e-6, 8 * EPS * Math.sqrt(e.kappaAtA));
    const angleTol = f.name.startsWith('tiny-angle') ? 1e-12 : 1e-9;
    const rel = (x: number, y: number): number => Math.abs(x - y) / Math.abs(y);
    const fractions: [string, number][] = [
      ['kappaS', rel(a.conditioning.kappaS, e.kappaS) / tolS],
      ['lambdaMinS', rel(a.conditioning.lambdaMinS, e.lambdaMinS) / tolS],
      ['lambdaMaxS', rel(a.conditioning.lambdaMaxS, e.lambdaMaxS) / 1e-9],
      ['kappaAtA', rel(a.conditioning.kappaAtA, e.kappaAtA) / tolA],
      ['thetaH', Math.abs(a.heterogeneity.thetaH - e.thetaH) / angleTol],
      [
        'phiMin',
        e.phiMin === null
          ? a.heterogeneity.phiMin === null
            ? 0
            : Infinity
          : Math.abs((a.heterogeneity.phiMin ?? NaN) - e.phiMin) / angleTol,
      ],
      ['rowNormRatio', rel(a.heterogeneity.rowNormRatio, e.rowNormRatio) / 1e-9],
      ['rates.apc', Math.abs(a.rates.apc.rate - e.rates.apc) / Math.max(1e-9, tolS / Math.sqrt(e.kappaS))],
      ['rates.dhbm', Math.abs(a.rates.dhbm.rate - e.rates.dhbm) / Math.max(1e-9, tolA / Math.sqrt(e.kappaAtA))],
    ];
    // NaN (a missing value) counts as the worst possible.
    const [worstValue, worstFraction] = fractions.reduce((w, c) => (c[1] > w[1] || Number.isNaN(c[1]) ? c : w));
    cases.push({ name: f.name, n, seconds, worstFraction, worstValue, passed: worstFraction <= 1 });
  }
  const report: FixtureReport = { backend: selected.backend, cases };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main();
