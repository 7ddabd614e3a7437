/** The dashboard's text for a job's matrix (src/dashboard/format.ts), as its job page and the activity list show it. */
import { describe, expect, it } from 'vitest';
import {
  formatMatrix,
  formatNumber,
  formatOptions,
  formatPartition,
  formatRate,
  formatSetting,
  formatTime,
  runsConvergedText,
} from '../../src/dashboard/format.js';
import { ringRadius } from '../../src/dashboard/heatmapGeometry.js';

describe('formatMatrix', () => {
  it('a regression reads rows x features (it read "regression n = 300 (rows 300, ...)" for 200 features)', () => {
    const matrix = {
      format: 'generator',
      n: 300,
      nnz: 60_000,
      generator: { generator: 'regression', rows: 300, n: 200, skew: 2, sigma: 0.1, seed: 3 },
    };
    expect(formatMatrix(matrix)).toBe('regression 300 × 200 (skew 2, sigma 0.1, seed 3)');
  });

  it('a square generator reads n = ..., its settings beside it; other inputs their format', () => {
    const gaussian = { format: 'generator', n: 120, nnz: 14_400, generator: { generator: 'gaussian', n: 120, mean: 1, std: 1, seed: 1 } };
    expect(formatMatrix(gaussian)).toBe('gaussian n = 120 (mean 1, std 1, seed 1)');
    expect(formatMatrix({ format: 'coo', n: 1000, nnz: 4996 })).toBe('coo n = 1,000, nnz 4,996');
    expect(formatMatrix({ format: 'stored', n: 62, nnz: 450, id: '01M7Z' })).toBe('stored 01M7Z, n = 62, nnz 450');
    // A tall one reads N x n (it read "n = 608" for ash608's 608 x 188).
    expect(formatMatrix({ format: 'stored', n: 608, cols: 188, nnz: 1216, id: '01M7Z' })).toBe('stored 01M7Z, 608 × 188, nnz 1,216');
    expect(formatMatrix({ format: 'dense', n: 400, cols: 100, nnz: 40_000 })).toBe('dense 400 × 100, nnz 40,000');
  });
});

describe('formatSetting', () => {
  it('a tolerance reads as written (it read "1.000e-8"); a long value as the measured ones', () => {
    expect(formatSetting(1e-8)).toBe('1e-8');
    expect(formatSetting(0.001)).toBe('0.001');
    expect(formatSetting(2.5e-10)).toBe('2.5e-10');
    expect(formatSetting(1 / 3)).toBe('0.3333');
    expect(formatSetting(null)).toBe('—');
  });
});

describe('formatOptions', () => {
  it("a job's settings as its type uses them: the advice's imbalance and tries, a solve's stopping rules and parameters", () => {
    const base = { tolerance: 1e-8, maxIterations: 20_000, parameters: {} };
    expect(formatOptions('analyze', base)).toBe('tolerance 1e-8, max iterations 20,000');
    expect(formatOptions('advise', { ...base, imbalance: 0.05, refinementTries: 0 })).toBe(
      'tolerance 1e-8, max iterations 20,000, imbalance 0.05, refinement tries 0',
    );
    expect(
      formatOptions('solve', {
        ...base,
        absoluteTolerance: 1e-12,
        maxWallTimeMs: 60_000,
        stopOnStagnation: false,
        parameters: { apc: { gamma: 1.2, eta: 1.5 } },
      }),
    ).toBe(
      'tolerance 1e-8, max iterations 20,000, absolute tolerance 1e-12, wall-time limit 60,000 ms, not stopped on stagnation, APC gamma 1.2, APC eta 1.5',
    );
    expect(formatOptions('solve', { ...base, initialGuess: { kind: 'job' as const, job: '01M7Z', algorithm: 'apc' as const } })).toBe(
      "tolerance 1e-8, max iterations 20,000, started from job 01M7Z's APC solution",
    );
    expect(formatOptions('solve', { ...base, initialGuess: { kind: 'vector' as const } })).toBe(
      'tolerance 1e-8, max iterations 20,000, started from a given x(0)',
    );
    // The stopping rules are a solve's: an analysis given them ran none.
    expect(formatOptions('analyze', { ...base, maxWallTimeMs: 60_000 })).toBe('tolerance 1e-8, max iterations 20,000');
  });
});

describe('runsConvergedText', () => {
  it("a solve's runs out of those asked for (a list row read only 'succeeded' where no run converged)", () => {
    const stopped = { status: 'max-iterations' as const, stopReason: 'Stopped at maxIterations = 5.' };
    expect(
      runsConvergedText({
        algorithms: ['apc', 'dgd'],
        summary: {
          converged: [],
          notConverged: [
            { algorithm: 'apc', ...stopped },
            { algorithm: 'dgd', ...stopped },
          ],
        },
      }),
    ).toEqual({
      text: '0 of 2 runs converged',
      all: false,
    });
    // A run never started (the job cancelled first) is one that did not converge.
    expect(runsConvergedText({ algorithms: ['dgd', 'cimmino'], summary: { converged: ['dgd'], notConverged: [] } })).toEqual({
      text: '1 of 2 runs converged',
      all: false,
    });
    expect(runsConvergedText({ algorithms: ['apc'], summary: { converged: ['apc'], notConverged: [] } })).toEqual({
      text: '1 of 1 run converged',
      all: true,
    });
    expect(runsConvergedText({ algorithms: [] })).toBeNull();
  });
});

describe('formatTime', () => {
  it('reads year first, in the local time zone (07/12/2026 read as 7 December or 12 July)', () => {
    const iso = '2026-12-07T19:12:05.000Z';
    const date = new Date(iso);
    const two = (value: number): string => String(value).padStart(2, '0');
    expect(formatTime(iso)).toBe(
      `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:05`,
    );
    expect(formatTime(null)).toBe('—');
    expect(formatTime('not a date')).toBe('—');
  });
});

describe('formatPartition', () => {
  it('says how the partition was given, and the job a taken one came from (a fromAdvice job read "Machines m 8" only)', () => {
    expect(formatPartition({ kind: 'machines', m: 8, sizes: [] })).toEqual({ text: '8 contiguous blocks of rows', job: null });
    expect(formatPartition({ kind: 'random', m: 4, sizes: [], seed: 3 })).toEqual({ text: 'random (seed 3)', job: null });
    expect(formatPartition({ kind: 'fromAdvice', m: 4, sizes: [], fromAdvice: '01ADVICE' })).toEqual({
      text: 'the best candidate of advise job',
      job: '01ADVICE',
    });
    expect(formatPartition({ kind: 'fromJob', m: 4, sizes: [], fromJob: '01JOB' })).toEqual({ text: 'the partition of job', job: '01JOB' });
    expect(formatPartition(null)).toEqual({ text: '—', job: null });
  });
});

describe('formatNumber', () => {
  it('writes 4 significant digits, from 1e4 in exponent notation (kappa(S) = 34,049.7 read "34050", like a count)', () => {
    expect(formatNumber(34_049.74)).toBe('3.405e+4');
    expect(formatNumber(42_199.74)).toBe('4.220e+4');
    expect(formatNumber(9999.4)).toBe('9999');
    expect(formatNumber(0.00123456)).toBe('0.001235');
    expect(formatNumber(1 - 1.06e-5)).toBe('1 - 1.06e-5');
  });
});

describe('formatRate', () => {
  it("a rate near 1 reads 1 - gap from the gap's digits, as the server's sentences write it", () => {
    // 1 - 1.2e-15 in floating point: 1 - rate reads 1.22e-15.
    const gap = 1.2e-15;
    expect(formatRate(1 - gap)).toBe('1 - 1.22e-15');
    expect(formatRate(1 - gap, gap)).toBe('1 - 1.20e-15');
    expect(formatRate(1, 7.79e-27)).toBe('1 - 7.79e-27');
    // Without a gap, or away from 1, the number as formatNumber writes it.
    expect(formatRate(1 - 1.06e-5)).toBe('1 - 1.06e-5');
    expect(formatRate(0.5, 0.5)).toBe('0.5');
  });
});

describe('the theta_H ring of the heatmap', () => {
  it("stays inside a large cell (m = 2 to 4: around it, it covered the machines' numbers), circles a tiny one", () => {
    for (const ratio of [1, 2])
      for (const cell of [24, 60, 150, 300].map((c) => c * ratio)) {
        // Its outer edge: the radius and half the white stroke (4 px).
        expect(ringRadius(cell, ratio) + 2 * ratio, `cell ${cell}`).toBeLessThanOrEqual(cell / 2);
      }
    // A cell of a few pixels (m = 200) is circled by at least 6 px, visible around it.
    expect(ringRadius(3, 1)).toBeGreaterThanOrEqual(6);
    expect(ringRadius(12, 1)).toBeGreaterThan(6);
  });
});
