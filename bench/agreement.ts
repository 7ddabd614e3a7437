/**
 * How far the analysis values of two sides (backends, NumPy) are apart, in relative terms and as
 * fractions of the tolerances of test/solvers/analysis/fixtures.test.ts, and how a backend did on
 * the NumPy/SciPy fixtures (bench/fixtures.ts).
 */
import type { SideReport } from './common.js';
import type { FixtureReport } from './fixtures.js';
import { isReport, type RunRecord } from './record.js';

/** The analysis values compared, by the name the report gives them. */
export const AGREEMENT_KEYS: [string, (s: SideReport) => number | null][] = [
  ['kappaS', (s) => s.values.kappaS],
  ['kappaAtA', (s) => s.values.kappaAtA],
  ['thetaH', (s) => s.values.thetaH],
  ['phiMin', (s) => s.values.phiMin],
  ['rate APC', (s) => s.values.apc.rate],
  ['rate D-HBM', (s) => s.values.dhbm.rate],
  ['rowNormRatio', (s) => s.values.rowNormRatio],
];

/** |a - b| / |b|, 0 when equal, null when either is missing. */
export function relativeDifference(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  if (a === b) return 0;
  return Math.abs(a - b) / Math.max(Math.abs(b), Number.MIN_VALUE);
}

/** Every backend against NumPy, and native against TypeScript; the second side is the reference. */
export function agreementPairs(record: RunRecord): [string, string][] {
  const pairs: [string, string][] = record.backends.map((b) => [b, 'numpy']);
  if (record.backends.includes('native')) pairs.push(['native', 'typescript']);
  return pairs;
}

/**
 * |x - y| as a fraction of the tolerance the fixture tests allow (test/solvers/analysis/fixtures.test.ts),
 * y taken as the reference: kappa(S) relative max(1e-6, 4 eps kappa(S)), kappa(A^T A) relative
 * max(1e-6, 8 eps sqrt(kappa)), angles 1e-9 absolute, rates 1e-9 absolute or the condition number's
 * tolerance times the rate's sensitivity, the row-norm ratio 1e-9 relative. <= 1: agreement.
 */
function toleranceFractions(x: SideReport, y: SideReport): [string, number][] {
  const a = x.values;
  const b = y.values;
  const tolS = Math.max(1e-6, 4 * Number.EPSILON * b.kappaS);
  const tolA = Math.max(1e-6, 8 * Number.EPSILON * Math.sqrt(b.kappaAtA));
  const relative = (u: number, v: number): number => Math.abs(u - v) / Math.abs(v);
  return [
    ['kappaS', relative(a.kappaS, b.kappaS) / tolS],
    ['kappaAtA', relative(a.kappaAtA, b.kappaAtA) / tolA],
    ['thetaH', Math.abs(a.thetaH - b.thetaH) / 1e-9],
    ['phiMin', a.phiMin === null || b.phiMin === null ? (a.phiMin === b.phiMin ? 0 : Infinity) : Math.abs(a.phiMin - b.phiMin) / 1e-9],
    ['rate APC', Math.abs(a.apc.rate - b.apc.rate) / Math.max(1e-9, tolS / Math.sqrt(b.kappaS))],
    ['rate D-HBM', Math.abs(a.dhbm.rate - b.dhbm.rate) / Math.max(1e-9, tolA / Math.sqrt(b.kappaAtA))],
    ['rowNormRatio', relative(a.rowNormRatio, b.rowNormRatio) / 1e-9],
  ];
}

/** Largest difference as a fraction of its tolerance between two sides over all problems. */
export function worstToleranceFraction(record: RunRecord, a: string, b: string): { fraction: number; key: string; problem: string } | null {
  let out: { fraction: number; key: string; problem: string } | null = null;
  for (const { spec, sides } of record.problems) {
    const x = sides[a];
    const y = sides[b];
    if (!isReport(x) || !isReport(y)) continue;
    for (const [key, fraction] of toleranceFractions(x, y)) {
      const f = Number.isNaN(fraction) ? Infinity : fraction;
      if (out === null || f > out.fraction) out = { fraction: f, key, problem: spec.name };
    }
  }
  return out;
}

/** Largest relative difference of the analysis values between two sides over all problems. */
export function worstAgreement(record: RunRecord, a: string, b: string): { worst: number; key: string; problem: string } | null {
  let out: { worst: number; key: string; problem: string } | null = null;
  for (const { spec, sides } of record.problems) {
    const x = sides[a];
    const y = sides[b];
    if (!isReport(x) || !isReport(y)) continue;
    for (const [key, get] of AGREEMENT_KEYS) {
      const d = relativeDifference(get(x), get(y));
      if (d !== null && (out === null || d > out.worst)) out = { worst: d, key, problem: spec.name };
    }
  }
  return out;
}

export function fixtureSummary(report: FixtureReport | { error: string } | undefined): string {
  if (!report) return 'not run';
  if ('error' in report) return `failed: ${report.error}`;
  const passed = report.cases.filter((c) => c.passed).length;
  const worst = report.cases.reduce((w, c) => ((c.worstFraction ?? Infinity) > (w.worstFraction ?? Infinity) ? c : w));
  return (
    `${passed}/${report.cases.length} cases within the test tolerances ` +
    `(worst: ${worst.name}, ${worst.worstValue} at ${(worst.worstFraction ?? Infinity).toExponential(1)} of its tolerance)`
  );
}
