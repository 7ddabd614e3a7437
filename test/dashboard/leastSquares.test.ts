/**
 * Tall systems and several right-hand sides on the job page, in a real browser against the real
 * service, measured against the API's own answers: a noisy 60 x 20 dense system on 3 machines (one
 * holding a dependent row, one more rows than unknowns) shows its errors' chart first (its residuals
 * level off), its consistency values as the analysis reports them, each run's target beside its error (rates table, chart axis and legend), and the bounds that do not carry over
 * to N > n marked as bounds.tall says; a job of 3 right-hand sides shows each column's status and
 * iterations, and choosing a column draws that column's trace (?column=j). Every download is the
 * API's file byte for byte. Both pages fit at 1400 and 400 px; screenshots go to test-output/dashboard/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Job, TraceView } from '../../src/jobs/types.js';
import { prng } from '../solvers/algorithms/support.js';
import { runJob, startTestService } from '../support/service.js';
import { dashboardInBrowser, openDashboardPage, pageWidth, SCREENSHOTS } from './browser.js';

const WIDE = { width: 1400, height: 900 };
const NARROW = { width: 400, height: 844 };
const ALL = ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const;

const running = dashboardInBrowser((outDir) => startTestService({ DASHBOARD_DIR: outDir }, { listen: true }));

const multiply = (A: number[][], x: number[]): number[] => A.map((row) => row.reduce((sum, a, k) => sum + a * x[k], 0));

/** A 60 x 20 Gaussian A whose third row is the sum of the first two (machine 0 has rank 19), b = A ones + 0.1 noise. */
function noisyTallSystem(): { A: number[][]; b: number[] } {
  const draw = prng(2026).normal;
  const A = Array.from({ length: 60 }, () => Array.from({ length: 20 }, draw));
  A[2] = A[0].map((value, k) => value + A[1][k]);
  const b = multiply(A, new Array<number>(20).fill(1)).map((value) => value + 0.1 * draw());
  return { A, b };
}

const openPage = (path: string): Promise<{ page: Page; errors: string[] }> =>
  openDashboardPage(running.browser, `${running.service.baseUrl}${path}`, WIDE);

/** Tables that scroll sideways (at 1400 px, none should). */
const scrollingTables = (page: Page): Promise<string[]> =>
  page
    .locator('.table-scroll')
    .evaluateAll((nodes) =>
      (nodes as unknown as { scrollWidth: number; clientWidth: number; getAttribute(name: string): string | null }[])
        .filter((node) => node.scrollWidth > node.clientWidth + 1)
        .map((node) => node.getAttribute('aria-label') ?? ''),
    );

async function expectFits(page: Page, name: string): Promise<void> {
  expect(await pageWidth(page)).toBeLessThanOrEqual(WIDE.width);
  expect(await scrollingTables(page)).toEqual([]);
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-1400.png`), fullPage: true });
  await page.setViewportSize(NARROW);
  await expect.poll(() => pageWidth(page), { timeout: 15_000 }).toBeLessThanOrEqual(NARROW.width);
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-400.png`), fullPage: true });
  await page.setViewportSize(WIDE);
}

/** A number as the dashboard shows it ("1.234e-2", "0.05123"), read back. */
const shown = (text: string | null): number => Number(/-?\d[\d.]*(e[-+]?\d+)?/.exec(text ?? '')?.[0]);

/** Shown to 4 significant digits. */
function expectShown(text: string | null, value: number): void {
  expect(Math.abs(shown(text) - value), `${text} against ${value}`).toBeLessThanOrEqual(5e-4 * Math.abs(value));
}

/** The file a download button saves, as bytes. */
async function downloaded(page: Page, button: string): Promise<Buffer> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button, exact: true }).click()]);
  return readFileSync(await download.path());
}

/** The API's file for a path and Accept, as bytes. */
async function apiFile(url: string, accept: string): Promise<Buffer> {
  const response = await running.service.app.inject({ url, headers: { accept } });
  expect(response.statusCode, response.body).toBe(200);
  return response.rawPayload;
}

describe('least squares and several right-hand sides on the job page', () => {
  it("a noisy 60 x 20 system: the consistency card, each run's target, the bounds for N > n, the API's files", async () => {
    const { A, b } = noisyTallSystem();
    const job: Job = await runJob(
      running.service.app,
      {
        type: 'solve',
        matrix: { format: 'dense', data: A },
        rhs: b,
        // Machine 2 holds more rows than unknowns: rank n, its full column rank, is not flagged as deficient.
        partition: { sizes: [20, 15, 25] },
        algorithms: ALL,
        options: { tolerance: 1e-10, maxIterations: 3000 },
      },
      240_000,
    );
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    const { runs } = job.result!;
    const analysis = job.result!.analysis!;
    const consistency = analysis.consistency!;
    expect(consistency.consistent).toBe(false);
    expect(analysis.machineRanks![0]).toBeLessThan(analysis.blockSizes[0]);

    const { page, errors } = await openPage(`/#/jobs/${job.id}`);
    const card = page.locator('#consistency');
    await card.waitFor({ timeout: 30_000 });

    // The consistency values are the analysis' own.
    expect(await card.locator('[data-value="consistent"]').textContent()).toBe('no');
    expectShown(await card.locator('[data-value="leastSquaresResidual"]').textContent(), consistency.leastSquaresResidual);
    expectShown(await card.locator('[data-value="weightedResidual"]').textContent(), consistency.weightedResidual);
    expectShown(await card.locator('[data-value="weightedDistance"]').textContent(), consistency.weightedDistance);
    expect(await card.locator('.explanation').textContent()).toBe(analysis.recommendation.leastSquaresNote);
    expect(await card.locator('h2').textContent()).toBe(`Least squares: 60 × 20, inconsistent`);
    const ranks = await card
      .locator('table.machine-ranks tbody tr')
      .evaluateAll((rows) =>
        (rows as unknown as { children: Iterable<{ textContent: string | null }> }[]).map((row) =>
          [...row.children].map((cell) => cell.textContent ?? ''),
        ),
      );
    expect(ranks.map((row) => shown(row[2]))).toEqual(analysis.machineRanks);
    expect(ranks.map((row) => shown(row[1]))).toEqual(analysis.blockSizes);
    expect(ranks[0][2]).toContain('deficient');
    expect(ranks[1][2]).toBe('15');
    expect(analysis.machineRanks![2]).toBe(20);
    expect(ranks[2][2]).toBe('20 = n (full column rank)');

    // The recommendation's heading says which point the recommended method reaches (APC: x_W; D-HBM: x_LS).
    const heading = await page.locator('#recommendation-title').textContent();
    expect(heading).toBe(
      analysis.recommendation.algorithm === 'apc'
        ? 'Recommendation: APC for x_W (block-weighted); for x_LS, D-HBM'
        : 'Recommendation: D-HBM (reaches x_LS)',
    );

    // Each run's target beside its error, as the API reports it.
    for (const [k, algorithm] of ALL.entries()) {
      const run = runs[algorithm]!;
      const note = page.locator('table.rates tbody tr').nth(k).locator('.run-error');
      expect(await note.getAttribute('data-target')).toBe(run.target);
      const text = await note.textContent();
      expect(text).toMatch(run.target === 'least-squares' ? /^error to x_LS: / : /^error to x_W: /);
      expectShown(text!.replace(/^error to x_\w+: /, ''), run.relativeError!);
    }
    expect(new Set(ALL.map((algorithm) => runs[algorithm]!.target))).toEqual(new Set(['least-squares', 'block-weighted']));

    // The bounds table: the column "Holds for N > n" is bounds.tall's answer, row by row.
    const tall = analysis.bounds.tall!;
    const expected = [tall.proposition1, tall.proposition2, tall.theorem2, tall.theorem3, tall.theorem4, tall.theorem4, tall.theorem4];
    const marks = await page
      .locator('#conditioning table.bounds tbody tr td:last-child span')
      .evaluateAll((cells) =>
        (cells as unknown as { getAttribute(name: string): string | null }[]).map((cell) => cell.getAttribute('data-tall')),
      );
    expect(marks).toEqual(expected.map((holds) => (holds ? 'yes' : 'no')));
    // Theorem 4's kappa(A) bound, which a tall A does not satisfy, is not computed (null), and the row says so.
    expect(analysis.bounds.theorem4KappaALowerBound).toBeNull();
    const theorem4 = page.locator('#conditioning table.bounds tbody tr').nth(4).locator('td');
    expect(await theorem4.nth(0).textContent()).toBe('not computed (N > n)');
    // Proposition 2's bound at theta_H = 0 is 1 / sin²(0): infinite (null in the API), not a value missing ("—").
    const proposition2 = await page.locator('#conditioning table.bounds tbody tr').nth(1).locator('td').nth(0).textContent();
    if (analysis.heterogeneity.thetaH === 0) expect(proposition2).toBe('∞ (theta_H = 0)');
    else expect(Number(proposition2)).toBeCloseTo(analysis.bounds.proposition2KappaSLowerBound!, 0);
    expect(await page.locator('#conditioning .tall-note').textContent()).toBe(`N > n: ${tall.note}`);
    expect(await page.locator('table.rates tbody td .tall-fails').count()).toBe(tall.table1 ? 0 : 6);

    // The chart of errors, shown first (the residuals of an inconsistent system level off): its axis names both
    // targets, each legend entry its own.
    await expect.poll(() => page.locator('#convergence').getAttribute('data-axis')).toBe('relative error to x_LS or x_W (legend)');
    expect(await page.locator('#convergence input[value="relativeError"]').isChecked()).toBe(true);
    for (const algorithm of ALL)
      expect(await page.locator(`.chart-legend [data-algorithm="${algorithm}"] .legend-note`).textContent()).toBe(
        runs[algorithm]!.target === 'least-squares' ? ' (error to x_LS)' : ' (error to x_W)',
      );

    await page.locator('#convergence').screenshot({ path: join(SCREENSHOTS, 'least-squares-error-chart-1400.png') });

    // Downloads: the API's CSV and Matrix Market byte for byte; all traces joined from the API's rows.
    const base = `/v1/jobs/${job.id}/runs`;
    // Fetched as every call is: Accept names the format, the session's key goes as a bearer token.
    await page.evaluate(() =>
      (globalThis as unknown as { sessionStorage: { setItem(key: string, value: string): void } }).sessionStorage.setItem(
        'lss.dashboard.apiKey',
        'lss_test_key',
      ),
    );
    const request = page.waitForRequest((candidate) => candidate.url().endsWith(`${base}/apc/solution`));
    expect((await downloaded(page, 'APC solution as CSV')).equals(await apiFile(`${base}/apc/solution`, 'text/csv'))).toBe(true);
    expect((await request).headers().authorization).toBe('Bearer lss_test_key');
    expect((await request).headers().accept).toMatch(/^text\/csv/);
    expect((await downloaded(page, 'DGD trace as CSV')).equals(await apiFile(`${base}/dgd/trace`, 'text/csv'))).toBe(true);
    expect(
      (await downloaded(page, 'D-HBM solution as Matrix Market')).equals(
        await apiFile(`${base}/dhbm/solution`, 'application/x-matrix-market'),
      ),
    ).toBe(true);
    const joined = (await downloaded(page, 'All traces (CSV)')).toString('utf8').trimEnd().split('\n');
    const expectedRows = ['algorithm,iteration,relativeResidual,relativeError,consensusDistance'];
    for (const algorithm of ALL)
      for (const row of (await apiFile(`${base}/${algorithm}/trace`, 'text/csv')).toString('utf8').trimEnd().split('\n').slice(1))
        expectedRows.push(`${algorithm},${row}`);
    expect(joined).toEqual(expectedRows);

    await page.locator('#convergence input[value="relativeResidual"]').check();
    await expectFits(page, 'least-squares-job');
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);

  it("three right-hand sides: each column's runs in a table; choosing a column draws and downloads its trace", async () => {
    const draw = prng(7).normal;
    const n = 30;
    const A = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 12 : 0) + draw()));
    const rhs = [
      multiply(A, new Array<number>(n).fill(1)),
      Array.from({ length: n }, draw),
      Array.from({ length: n }, (_, i) => (i < 5 ? 1 : 0)),
    ];
    const algorithms = ['apc', 'dgd', 'cimmino'] as const;
    const job: Job = await runJob(
      running.service.app,
      { type: 'solve', matrix: { format: 'dense', data: A }, rhs, partition: { machines: 3 }, algorithms, options: { tolerance: 1e-10 } },
      240_000,
    );
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    const { runs } = job.result!;
    const traceOf = async (algorithm: string, column: number): Promise<TraceView> =>
      (await running.service.app.inject({ url: `/v1/jobs/${job.id}/runs/${algorithm}/trace?column=${column}` })).json<TraceView>();

    const { page, errors } = await openPage(`/#/jobs/${job.id}`);
    await page.locator('#columns table.columns tbody tr').first().waitFor({ timeout: 30_000 });

    // The per-column table: each run's status and iterations as columns[j] reports them.
    expect(await page.locator('#columns tbody tr').count()).toBe(3);
    for (let j = 0; j < 3; j++)
      for (const algorithm of algorithms) {
        const cell = page.locator(`#columns tbody tr[data-column="${j}"] .column-run[data-algorithm="${algorithm}"]`);
        const column = runs[algorithm]!.columns![j];
        expect(await cell.locator('.status').getAttribute('data-status')).toBe(column.status);
        expect(await cell.locator('.cell-note').textContent()).toMatch(
          new RegExp(`^${column.iterations.toLocaleString('en-US')} it\\., residual `),
        );
        expectShown((await cell.locator('.cell-note').textContent())!.replace(/^.*residual /, ''), column.relativeResidual!);
      }

    /** The chart's points, and each run's value read under the cursor at the plot's right end. */
    const readChart = async (): Promise<{ points: number; iteration: number; values: Record<string, number> }> => {
      const over = (await page.locator('#convergence-chart .u-over').boundingBox())!;
      await page.mouse.move(over.x + over.width - 1, over.y + over.height / 2);
      const readout = page.locator('#convergence-chart .chart-readout');
      await expect.poll(() => readout.getAttribute('data-iteration')).not.toBeNull();
      const text = (await readout.textContent())!;
      const values = Object.fromEntries(
        [...text.matchAll(/(APC|DGD|Block Cimmino) (\S+)/g)].map(([, name, value]) => [name, Number(value)]),
      );
      return {
        points: Number(await page.locator('#convergence-chart').getAttribute('data-points')),
        iteration: Number(await readout.getAttribute('data-iteration')),
        values,
      };
    };
    /** A trace's last value at or before an iteration. */
    const valueAt = (trace: TraceView, iteration: number): number => {
      let k = 0;
      while (k + 1 < trace.iteration.length && trace.iteration[k + 1] <= iteration) k++;
      return trace.relativeResidual[k];
    };
    const names = { apc: 'APC', dgd: 'DGD', cimmino: 'Block Cimmino' } as const;
    const expectColumn = async (column: number): Promise<void> => {
      await expect.poll(() => page.locator('#convergence').getAttribute('data-column')).toBe(String(column));
      await expect.poll(() => page.locator('#convergence').getAttribute('data-loading')).toBeNull();
      const traces = await Promise.all(algorithms.map((algorithm) => traceOf(algorithm, column)));
      const chart = await readChart();
      expect(chart.points).toBe(traces.reduce((sum, trace) => sum + trace.iteration.length, 0));
      for (const [k, algorithm] of algorithms.entries()) {
        const value = valueAt(traces[k], chart.iteration);
        // The readout shows 3 significant digits.
        expect(Math.abs(chart.values[names[algorithm]] - value), `${algorithm} column ${column}`).toBeLessThanOrEqual(5e-3 * value);
      }
    };
    await expectColumn(0);
    const first = await readChart();
    await page.locator('#column-select').selectOption('2');
    await expectColumn(2);
    expect(await readChart()).not.toEqual(first);
    expect(await page.locator('#columns tbody tr.chosen').getAttribute('data-column')).toBe('2');

    // The downloads follow the chosen column: the API's ?column=2 files byte for byte.
    expect(await page.locator('#downloads h2').textContent()).toBe('Downloads (right-hand side b2)');
    const base = `/v1/jobs/${job.id}/runs`;
    expect((await downloaded(page, 'DGD trace as CSV')).equals(await apiFile(`${base}/dgd/trace?column=2`, 'text/csv'))).toBe(true);
    expect((await downloaded(page, 'APC solution as CSV')).equals(await apiFile(`${base}/apc/solution?column=2`, 'text/csv'))).toBe(true);
    expect((await downloaded(page, 'APC trace as JSON')).equals(await apiFile(`${base}/apc/trace?column=2`, 'application/json'))).toBe(
      true,
    );

    await expectFits(page, 'several-rhs-job');
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);
});
