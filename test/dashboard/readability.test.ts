/**
 * The dashboard read as a researcher reads it, measured in a real browser against the real
 * service: a Matrix Market solve whose rates are all within 1e-3 of 1 and whose runs stop at their
 * cap, a failed job, and Experiment 1 with m = 1. At 1400 px nothing lies off the page and nothing
 * scrolls sideways; at 400 px no page is wider than the screen; each chart label sits within 12 px
 * of its own line and overlaps no other label; rates near 1 keep their digits; each figure's y axis
 * spans its data (within 10% of the data's range, points shown apart excluded). Screenshots of every
 * page at both widths go to test-output/dashboard/.
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Job, JobPage, TraceView } from '../../src/jobs/types.js';
import { StudyStore } from '../../src/jobs/studies/studyStore.js';
import type { Study, StudySummary } from '../../src/jobs/studies/types.js';
import { matrixMarket } from '../support/fixtures.js';
import { runJob, waitForJob } from '../support/service.js';
import { createStudy, startStudyTestService, waitForStudy } from '../support/studyService.js';
import { dashboardInBrowser, SCREENSHOTS } from './browser.js';

const WIDE = { width: 1400, height: 900 };
const NARROW = { width: 400, height: 844 };

const running = dashboardInBrowser(async (outDir) => {
  const service = await startStudyTestService({ DASHBOARD_DIR: outDir }, { STUDY_WORKER_CONCURRENCY: '1' });
  service.spawnWorker();
  return service;
});

async function openPage(path: string, viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[] }> {
  const page = await running.browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${running.service.baseUrl}${path}`);
  return { page, errors };
}

/** The little of the DOM these measurements use (the tests compile without the DOM library). */
interface El {
  tagName: string;
  id: string;
  classList: Iterable<string>;
  textContent: string | null;
  children: Iterable<El>;
  scrollWidth: number;
  clientWidth: number;
  getBoundingClientRect(): { width: number; right: number };
  closest(selector: string): El | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): El | null;
  querySelectorAll(selector: string): Iterable<El>;
}

type Geometry = { scrollWidth: number; offPage: string[]; scrollingTables: string[] };

/** The page's width, the elements whose box ends past the viewport's right edge, and the tables that scroll sideways. */
function geometry(page: Page): Promise<Geometry> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { querySelectorAll(selector: string): Iterable<El>; documentElement: El } }).document;
    const width = (globalThis as unknown as { innerWidth: number }).innerWidth;
    const describe = (element: El): string =>
      `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}.${[...element.classList].join('.')}`;
    const offPage = [...doc.querySelectorAll('main *')]
      .filter((element) => {
        const box = element.getBoundingClientRect();
        // Inside a table that scrolls, or hidden: not on the page's own width.
        return box.width > 0 && box.right > width + 0.5 && !element.closest('.table-scroll');
      })
      .map(describe);
    const scrollingTables = [...doc.querySelectorAll('.table-scroll')]
      .filter((element) => element.scrollWidth > element.clientWidth + 1)
      .map((element) => element.getAttribute('aria-label') ?? describe(element));
    return { scrollWidth: doc.documentElement.scrollWidth, offPage, scrollingTables };
  });
}

async function expectFitsWide(page: Page): Promise<void> {
  const measured = await geometry(page);
  expect(measured.scrollWidth).toBeLessThanOrEqual(WIDE.width);
  expect(measured.offPage).toEqual([]);
  expect(measured.scrollingTables).toEqual([]);
}

async function expectFitsNarrow(page: Page): Promise<void> {
  await expect.poll(async () => (await geometry(page)).scrollWidth, { timeout: 15_000 }).toBeLessThanOrEqual(NARROW.width);
}

/** Screenshots of the page at 1400 px (as it is) and at 400 px, where it must fit the screen. */
async function screenshotBothWidths(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-1400.png`), fullPage: true });
  await page.setViewportSize(NARROW);
  await expectFitsNarrow(page);
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-400.png`), fullPage: true });
}

/** The number a rate cell shows: "0.9974", "1 - 1.06e-5". */
function parseShown(text: string): number {
  const near = /^(-?1) ([-+]) (\d\.\d+e-\d+)$/.exec(text.trim());
  if (near) return Number(near[1]) + (near[2] === '-' ? -1 : 1) * Number(near[3]);
  return Number(text.trim());
}

/** A rate as shown keeps its distance to 1 to 3 significant digits (or 4 digits of the rate itself). */
function expectShownRate(text: string, rate: number): void {
  expect(text.trim()).not.toBe('1');
  const shown = parseShown(text);
  expect(Number.isFinite(shown), text).toBe(true);
  if (rate !== 1 && Math.abs(1 - rate) < 1e-3) expect(Math.abs(shown - rate), text).toBeLessThanOrEqual(0.01 * Math.abs(1 - rate));
  else expect(Math.abs(shown - rate), text).toBeLessThanOrEqual(5e-4 * Math.abs(rate));
}

type Box = { x: number; y: number; width: number; height: number };
type Plot = { left: number; top: number; width: number; height: number; x: [number, number]; y: [number, number] };

/** The smallest distance from a label's box to a polyline (sampled every pixel). */
function distanceToLine(box: Box, points: [number, number][]): number {
  let best = Infinity;
  const toBox = (x: number, y: number): number =>
    Math.hypot(Math.max(box.x - x, 0, x - (box.x + box.width)), Math.max(box.y - y, 0, y - (box.y + box.height)));
  for (let k = 0; k < points.length; k++) {
    const [x1, y1] = points[k];
    const [x0, y0] = k === 0 ? points[k] : points[k - 1];
    const steps = Math.max(1, Math.ceil(Math.hypot(x1 - x0, y1 - y0)));
    for (let s = 0; s <= steps; s++) best = Math.min(best, toBox(x0 + ((x1 - x0) * s) / steps, y0 + ((y1 - y0) * s) / steps));
  }
  return best;
}

/** Each label near its own run's line (mapped from the API's trace on the chart's scales), no two labels overlapping. */
async function expectLabelsOnTheirLines(page: Page, traces: TraceView[]): Promise<void> {
  const chart = page.locator('#convergence-chart');
  await expect.poll(() => chart.getAttribute('data-labels'), { timeout: 30_000 }).not.toBeNull();
  const labels = JSON.parse((await chart.getAttribute('data-labels'))!) as (Box & {
    algorithm: string;
    leader?: { x0: number; y0: number; x1: number; y1: number };
  })[];
  const plot = JSON.parse((await chart.getAttribute('data-plot'))!) as Plot;
  expect(labels.map((label) => label.algorithm).sort()).toEqual(traces.map((trace) => trace.algorithm).sort());
  const [logLow, logHigh] = plot.y.map(Math.log10);
  for (const label of labels) {
    const trace = traces.find((candidate) => candidate.algorithm === label.algorithm)!;
    const points = trace.iteration.flatMap((iteration, k): [number, number][] => {
      const value = trace.relativeResidual[k];
      if (!(value > 0)) return [];
      return [
        [
          plot.left + ((iteration - plot.x[0]) / (plot.x[1] - plot.x[0])) * plot.width,
          plot.top + (1 - (Math.log10(value) - logLow) / (logHigh - logLow)) * plot.height,
        ],
      ];
    });
    if (label.leader) {
      // Set away from its line (no room beside it): a leader from a point of the line to the label's box.
      const { x0, y0, x1, y1 } = label.leader;
      expect(distanceToLine({ x: x0, y: y0, width: 0, height: 0 }, points), label.algorithm).toBeLessThanOrEqual(1);
      expect(distanceToLine(label, [[x1, y1]]), label.algorithm).toBeLessThanOrEqual(0.5);
    } else expect(distanceToLine(label, points), label.algorithm).toBeLessThanOrEqual(12);
  }
  // The letters are drawn in the box measured (they were drawn right-aligned, one box to the left, while the boxes said where).
  const darkPixels = await page.evaluate((boxes) => {
    const canvas = (
      globalThis as unknown as {
        document: {
          querySelector(s: string): {
            width: number;
            clientWidth: number;
            getContext(c: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
          };
        };
      }
    ).document.querySelector('#convergence-chart canvas');
    const scale = canvas.width / canvas.clientWidth;
    return boxes.map((box) => {
      const { data } = canvas
        .getContext('2d')
        .getImageData(Math.round(box.x * scale), Math.round(box.y * scale), Math.round(box.width * scale), Math.round(box.height * scale));
      let dark = 0;
      for (let k = 0; k < data.length; k += 4) if (data[k] < 70 && data[k + 1] < 70 && data[k + 2] < 70 && data[k + 3] > 200) dark++;
      return dark;
    });
  }, labels);
  for (const [k, label] of labels.entries()) expect(darkPixels[k], `${label.algorithm}'s letters in its box`).toBeGreaterThan(label.width);
  for (const [i, a] of labels.entries())
    for (const b of labels.slice(i + 1)) {
      const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
      expect(apart, `${a.algorithm} and ${b.algorithm}`).toBe(true);
    }
}

describe('the dashboard says what the numbers mean', () => {
  it('a job whose rates are all near 1 and whose runs stop at their cap, and the list with a failed job', async () => {
    const created = await running.service.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: {
        type: 'solve',
        matrix: { format: 'matrix-market', data: matrixMarket('bcsstk03.mtx') },
        partition: { machines: 4 },
        options: { tolerance: 1e-12, maxIterations: 1500 },
        labels: { study: 'issue-27', arm: 'bcsstk03' },
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    const job = await waitForJob(running.service.app, created.json<Job>().id, { timeoutMs: 180_000 });
    expect(job.status).toBe('succeeded');
    const analysis = job.result!.analysis!;
    const failing = await running.service.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: {
        type: 'analyze',
        matrix: {
          format: 'dense',
          data: [
            [1, 2],
            [2, 4],
          ],
        },
        partition: { machines: 1 },
      },
    });
    const failed = await waitForJob(running.service.app, failing.json<Job>().id);
    expect(failed.status).toBe('failed');
    const traces: TraceView[] = await Promise.all(
      job.algorithms.map(async (algorithm) =>
        (await running.service.app.inject({ url: `/v1/jobs/${job.id}/runs/${algorithm}/trace` })).json<TraceView>(),
      ),
    );

    const { page, errors } = await openPage(`/#/jobs/${job.id}`, WIDE);
    await page.locator('table.rates tbody tr').first().waitFor({ timeout: 30_000 });

    // Rates near 1 with their digits: the table, the parameters, the legend, the comparison line.
    for (const [k, algorithm] of (['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const).entries()) {
      const row = page.locator('table.rates tbody tr').nth(k);
      expectShownRate(await row.locator('.rate').textContent().then(String), analysis.rates[algorithm].rate);
      const parameters = await row.locator('td').nth(2).textContent();
      for (const [name, value] of Object.entries(analysis.rates[algorithm].parameters))
        if (Math.abs(1 - value) < 1e-3 && value !== 1) expect(parameters).not.toMatch(new RegExp(`${name} = 1(,|$)`));
      const legend = page.locator(`.chart-legend [data-algorithm="${algorithm}"]`);
      expectShownRate(
        (await legend.locator('.legend-rate').textContent())!.replace('theory ρ^t, ρ = ', ''),
        job.result!.runs[algorithm]!.theoreticalRate ?? analysis.rates[algorithm].rate,
      );
      // The legend draws the run solid and its theory dashed, without hover.
      expect(await legend.locator('svg line:not([stroke-dasharray])').count()).toBe(1);
      expect(await legend.locator('svg line[stroke-dasharray]').count()).toBe(1);
    }
    const comparison = await page.locator('#recommendation dd').nth(2).textContent();
    const [apcShown, dhbmShown] = /APC ρ = (.+), D-HBM ρ = (.+):/.exec(comparison!)!.slice(1);
    expectShownRate(apcShown, analysis.recommendation.exact.apcRate);
    expectShownRate(dhbmShown, analysis.recommendation.exact.dhbmRate);
    // The bounds rows say what they bound.
    for (const cell of await page.locator('#conditioning table tbody th').allTextContents()) expect(cell).not.toMatch(/[≤≥]\s*$|p = —/);
    // Its tolerance (1e-12) is below eps kappa(A) (~1.5e-9): the predicted iterations and times say they are exact arithmetic's.
    expect(analysis.recommendation.attainableAccuracy!).toBeGreaterThan(1e-12);
    for (const section of ['#rates', '#time-to-solution'])
      expect(await page.locator(`${section} .unattainable`).textContent()).toMatch(
        /^⚠ The tolerance 1e-12 is below the attainable accuracy eps κ\(A\) = 1\.\d+e-9: these predictions are exact arithmetic’s/,
      );
    // The regime agrees with the predicted iterations.
    const regime = await page.locator('#recommendation dd').first().textContent();
    expect(regime).not.toMatch(/cannot say/);
    expect(regime).toMatch(/here (APC|D-HBM)/);

    // Runs that stopped short are flagged above the chart with the solver's diagnosis, and badged.
    const short = Object.entries(job.result!.runs).filter(([, run]) => run.status !== 'converged');
    expect(short.length).toBeGreaterThan(0);
    for (const [algorithm, run] of short) {
      const flag = page.locator(`.run-problems li[data-run="${algorithm}"]`);
      expect(await flag.textContent()).toContain(run.stopReason);
      expect(await flag.locator('.status').getAttribute('data-status')).toBe(run.status);
    }
    expect(await page.locator('table.rates .status').count()).toBe(6);

    // The chart: labels at their own lines; near the top of the page; everything on the page's width.
    await expectLabelsOnTheirLines(page, traces);
    await page.screenshot({ path: join(SCREENSHOTS, 'readable-job-1400.png'), fullPage: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'readable-job-1400-first-screen.png') });
    expect((await page.locator('#convergence-chart').boundingBox())!.y).toBeLessThan(WIDE.height * 0.6);
    await expectFitsWide(page);
    // As a phone opens it: at its width from the start.
    await page.setViewportSize(NARROW);
    await page.reload();
    await page.locator('table.rates tbody tr').first().waitFor({ timeout: 30_000 });
    await expectFitsNarrow(page);
    await expect
      .poll(() =>
        page
          .locator('#convergence-chart')
          .getAttribute('data-plot')
          .then((plot) => (JSON.parse(plot!) as Plot).width),
      )
      .toBeLessThan(400);
    await expectLabelsOnTheirLines(page, traces);
    await page.screenshot({ path: join(SCREENSHOTS, 'readable-job-400.png'), fullPage: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'readable-job-400-first-screen.png') });
    expect((await page.locator('#convergence-chart').boundingBox())!.y).toBeLessThan(NARROW.height);

    // The list: what each job ran on, its algorithms and labels; why a job failed.
    await page.setViewportSize(WIDE);
    await page.goto(`${running.service.baseUrl}/#/?kind=job`);
    const row = page.locator(`tr[data-job-id="${job.id}"]`);
    await row.waitFor();
    const what = await row.locator('.job-summary-line').textContent();
    expect(what).toContain('matrix-market n = 112');
    expect(what).toContain('APC, D-HBM, DGD, D-NAG, Block Cimmino, Mou-Liu-Morse');
    expect(what).toContain('study=issue-27');
    const summary = (await running.service.app.inject({ url: '/v1/jobs?status=failed&limit=50' }))
      .json<JobPage>()
      .items.find((item) => item.id === failed.id)!;
    expect(await page.locator(`tr[data-job-id="${failed.id}"] .failure-reason`).textContent()).toBe(summary.error!.detail);
    await expectFitsWide(page);
    // Each row's cells end at the row's bottom, its actions' too (a flex box there drew its line off the row's), and
    // the creation time reads on two lines at most: its date whole, its time whole (it broke at the hyphens).
    const rowBox = (await row.boundingBox())!;
    for (const cell of await row.locator('td').all()) {
      const box = (await cell.boundingBox())!;
      expect(Math.abs(box.y + box.height - (rowBox.y + rowBox.height)), await cell.innerHTML()).toBeLessThanOrEqual(1);
    }
    const parts = await row.locator('time .date-part').allTextContents();
    expect(parts).toHaveLength(2);
    const [date, time] = await row.locator('time .date-part').all();
    for (const part of [date, time]) expect((await part.boundingBox())!.height).toBeLessThan(30);
    // At a phone's width the status is in sight, beside the id (it was the fourth column, scrolled out of view), and a
    // failed row's reason takes three lines at most (it left a gap ~380 px tall), the whole of it in its title.
    await page.setViewportSize(NARROW);
    const status = (await page.locator(`tr[data-job-id="${failed.id}"] .status-cell`).boundingBox())!;
    expect(status.x + status.width).toBeLessThanOrEqual(NARROW.width);
    const reason = page.locator(`tr[data-job-id="${failed.id}"] .failure-reason`);
    expect(await reason.getAttribute('title')).toBe(summary.error!.detail);
    const lineHeight = await reason.evaluate(
      (element) =>
        parseFloat(
          (globalThis as unknown as { getComputedStyle(e: unknown): { lineHeight: string } }).getComputedStyle(element).lineHeight,
        ) || 16,
    );
    expect((await reason.boundingBox())!.height).toBeLessThanOrEqual(3 * lineHeight + 2);
    await page.setViewportSize(WIDE);
    await screenshotBothWidths(page, 'readable-list');
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);

  it('runs whose lines lie on one another (an orthogonal system: every run done in one step) are each labelled', async () => {
    // A = I: every method's optimal step solves it at once, so the six lines are the same point or two.
    const n = 12;
    const created = await running.service.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: {
        type: 'solve',
        matrix: { format: 'dense', data: Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))) },
        rhs: Array.from({ length: n }, (_, i) => i + 1),
        partition: { machines: 3 },
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    const job = await waitForJob(running.service.app, created.json<Job>().id, { timeoutMs: 120_000 });
    expect(job.status).toBe('succeeded');
    const traces: TraceView[] = await Promise.all(
      job.algorithms.map(async (algorithm) =>
        (await running.service.app.inject({ url: `/v1/jobs/${job.id}/runs/${algorithm}/trace` })).json<TraceView>(),
      ),
    );
    for (const viewport of [WIDE, NARROW]) {
      const { page, errors } = await openPage(`/#/jobs/${job.id}`, viewport);
      await page.locator('table.rates tbody tr').first().waitFor({ timeout: 30_000 });
      await expectLabelsOnTheirLines(page, traces);
      await page.screenshot({ path: join(SCREENSHOTS, `readable-coincident-lines-${viewport.width}.png`) });
      expect(errors).toEqual([]);
      await page.close();
    }
  });

  it('Experiment 1 with m = 1: the figure at the scale of its data, the reference rows by their settings', async () => {
    const created = await createStudy(running.service.app, {
      preset: 'experiment-1',
      samples: 16,
      grid: { mean: [0, 1], m: [1, 2, 4, 6] },
    });
    const study: Study = await waitForStudy(running.service.app, created.id, { timeoutMs: 240_000 });
    expect(study.status).toBe('succeeded');

    const { page, errors } = await openPage(`/#/studies/${study.id}`, WIDE);
    await expect.poll(() => page.locator('.study-figure .figure-panels').count(), { timeout: 30_000 }).toBe(study.figures.length);

    // Each panel's y axis against the data drawn (means and 95% intervals; APC's m = 1 is shown apart).
    const panels = await page.locator('.study-figure[data-figure="figure-1"] g.panel').evaluateAll((nodes) =>
      (nodes as unknown as El[]).map((group) => {
        const area = group.querySelector('.plot-area')!;
        const top = Number(area.getAttribute('y'));
        const bottom = top + Number(area.getAttribute('height'));
        const ticks = [...group.querySelectorAll('.y-tick')].map((tick) => ({
          value: Number(tick.getAttribute('data-value')),
          y: Number(tick.getAttribute('data-y')),
          text: tick.textContent ?? '',
        }));
        const legend = [...group.querySelectorAll('.legend')].map((text) => text.textContent ?? '');
        return { top, bottom, ticks, legend, notes: [...group.querySelectorAll('.apart')].map((text) => text.textContent ?? '') };
      }),
    );
    expect(panels).toHaveLength(2);
    panels.forEach((panel, p) => {
      const values = study
        .result!.points.filter((point) => point.settings.mean === p)
        .flatMap((point) =>
          point.metrics
            .filter((metric) => !(point.settings.m === 1 && metric.metric === 'rates.apc.rate'))
            .flatMap((metric) => [metric.mean!, ...(metric.interval ?? [])]),
        );
      const [low, high] = [Math.min(...values), Math.max(...values)];
      const [a, b] = [panel.ticks[0], panel.ticks[panel.ticks.length - 1]];
      const perPixel = (b.value - a.value) / (b.y - a.y);
      const [axisLow, axisHigh] = [a.value + (panel.bottom - a.y) * perPixel, a.value + (panel.top - a.y) * perPixel];
      expect(axisLow).toBeLessThanOrEqual(low + 1e-12);
      expect(axisHigh).toBeGreaterThanOrEqual(high - 1e-12);
      expect(axisHigh - axisLow - (high - low)).toBeLessThanOrEqual(0.1 * (high - low));
      for (const tick of panel.ticks) expect(tick.text.length).toBeLessThanOrEqual(6);
      expect(panel.legend).toEqual(['E[ρ_APC]', 'E[ρ_HBM]']);
      expect(panel.notes.join(' ')).toMatch(/at m = 1, E\[ρ_APC\] = 0/);
    });

    // Reference rows by their settings, the metrics by their symbols.
    const reference = await page
      .locator('#study-reference tbody tr')
      .evaluateAll((nodes) => (nodes as unknown as El[]).map((row) => [...row.children].map((cell) => cell.textContent ?? '')));
    expect(reference.length).toBe(study.result!.reference!.length);
    for (const [point, metric] of reference) {
      expect(point).toMatch(/^mean = [01], m = \d+$/);
      expect(metric).toMatch(/^ρ_(APC|HBM)/);
    }

    await expectFitsWide(page);
    await page.screenshot({ path: join(SCREENSHOTS, 'readable-study-1400.png'), fullPage: true });
    await page.setViewportSize(NARROW);
    await expectFitsNarrow(page);
    await page.screenshot({ path: join(SCREENSHOTS, 'readable-study-400.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);

  it('study figures at 400 px and 1400 px, Figures 2-4, the values under the cursor, a failed study says why', async () => {
    const studies = await Promise.all([
      createStudy(running.service.app, { preset: 'experiment-2', samples: 8, grid: { m: [10, 20], n: [40, 80, 120] } }),
      createStudy(running.service.app, { preset: 'experiment-3', samples: 120, grid: { p: [1, 2], n: [16, 32, 64] } }),
    ]);
    // A study that fails: ended as the worker ends one whose aggregation failed for good.
    const doomed = await createStudy(running.service.app, { preset: 'experiment-1', samples: 300 });
    const redis = new Redis(running.service.redis.url);
    const store = new StudyStore(
      redis,
      running.service.config.KEY_PREFIX,
      running.service.config.STUDY_QUEUE_NAME,
      running.service.config.JOB_TTL_SECONDS,
    );
    const problem = {
      type: '/problems/internal-error',
      title: 'Internal error',
      status: 500,
      detail: "The study's aggregation failed after 3 attempt(s); the worker logs have the cause.",
      code: 'internal-error',
    };
    expect(await store.finish(doomed.id, 'failed', 'error', JSON.stringify(problem))).toBe(true);
    redis.disconnect();
    const [second, third] = await Promise.all(studies.map((study) => waitForStudy(running.service.app, study.id, { timeoutMs: 240_000 })));
    expect([second.status, third.status]).toEqual(['succeeded', 'succeeded']);

    // The failed study's row says why, as a failed job's does.
    const { page, errors } = await openPage('/#/?kind=study', WIDE);
    const failedRow = page.locator(`tr[data-study-id="${doomed.id}"]`);
    await expect.poll(() => failedRow.locator('.status-cell').textContent()).toContain('failed');
    expect(await failedRow.locator('.failure-reason').textContent()).toBe(problem.detail);
    const summary = (await running.service.app.inject({ url: '/v1/studies?status=failed' })).json<{ items: StudySummary[] }>().items[0];
    expect(summary.error?.detail).toBe(problem.detail);

    type Measured = {
      figure: string;
      panels: { left: number; right: number; top: number; bottom: number; fontPx: number }[];
      overlaps: string[];
    };
    /** Each panel's box on the screen, the smallest text size drawn in it, and the texts whose boxes overlap. */
    const measure = (): Promise<Measured[]> =>
      page.locator('.study-figure').evaluateAll((figures) =>
        (figures as unknown as El[]).map((figure) => {
          const svgs = [...figure.querySelectorAll('svg.study-svg')] as unknown as (El & { viewBox: { baseVal: { width: number } } })[];
          const overlaps: string[] = [];
          const panels = svgs.map((svg) => {
            const box = svg.getBoundingClientRect() as unknown as {
              left: number;
              right: number;
              top: number;
              bottom: number;
              width: number;
            };
            const scale = box.width / svg.viewBox.baseVal.width;
            const texts = [...svg.querySelectorAll('text')].filter((text) => (text.textContent ?? '').trim() !== '');
            const fontPx = Math.min(...texts.map((text) => Number(text.getAttribute('font-size')) * scale));
            const boxes = texts.map((text) => ({
              text: text.textContent ?? '',
              ...(text.getBoundingClientRect() as unknown as { left: number; right: number; top: number; bottom: number }),
            }));
            for (const [i, a] of boxes.entries())
              for (const b of boxes.slice(i + 1))
                if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
                  overlaps.push(`${a.text} / ${b.text}`);
            return { left: box.left, right: box.right, top: box.top, bottom: box.bottom, fontPx };
          });
          return { figure: figure.getAttribute('data-figure') ?? '', panels, overlaps };
        }),
      );

    // Each figure is fetched on its own, after the page is drawn: 0 until every one has its panels.
    const fewestPanels = async (): Promise<number> => {
      const figures = await measure();
      return figures.length === 0 ? 0 : Math.min(...figures.map((figure) => figure.panels.length));
    };

    for (const study of [second, third]) {
      await page.setViewportSize(WIDE);
      await page.goto(`${running.service.baseUrl}/#/studies/${study.id}`);
      // Every figure drawn (two panels or more) before any is measured.
      await expect.poll(fewestPanels, { timeout: 30_000 }).toBeGreaterThan(1);
      await expectFitsWide(page);
      // Wide: the panels side by side, at their full size.
      for (const figure of await measure()) {
        expect(figure.overlaps, figure.figure).toEqual([]);
        expect(figure.panels[1].top).toBe(figure.panels[0].top);
        for (const panel of figure.panels) expect(panel.fontPx).toBeGreaterThanOrEqual(11);
      }
      await page.screenshot({ path: join(SCREENSHOTS, `readable-${study.preset}-1400.png`), fullPage: true });

      // The value under the cursor: the figure's first point.
      const figureName = study.figures[0].name;
      const point = page.locator(`.study-figure[data-figure="${figureName}"] circle.point`).first();
      const [series, y] = await Promise.all([point.getAttribute('data-series'), point.getAttribute('data-y')]);
      const at = await point.evaluate((circle) => {
        const box = (circle as unknown as El).getBoundingClientRect() as unknown as {
          left: number;
          top: number;
          width: number;
          height: number;
        };
        return { x: box.left + box.width / 2, y: box.top + box.height / 2 };
      });
      await page.mouse.move(at.x, at.y);
      const readout = page.locator(`.study-figure[data-figure="${figureName}"] .figure-readout`);
      await expect.poll(() => readout.textContent()).toContain(`${series} = `);
      const shown = parseShown((await readout.textContent())!.split(`${series} = `)[1].split(' (95%')[0]);
      expect(Math.abs(shown - Number(y))).toBeLessThanOrEqual(5e-4 * Math.max(1e-12, Math.abs(Number(y))));

      // Narrow: each panel within the screen, one under the other, its text still 8 px or more.
      await page.setViewportSize(NARROW);
      await page.reload();
      await expect.poll(fewestPanels, { timeout: 30_000 }).toBeGreaterThan(1);
      await expectFitsNarrow(page);
      for (const figure of await measure()) {
        expect(figure.overlaps, figure.figure).toEqual([]);
        figure.panels.forEach((panel, k) => {
          expect(panel.left).toBeGreaterThanOrEqual(0);
          expect(panel.right).toBeLessThanOrEqual(NARROW.width);
          expect(panel.fontPx, figure.figure).toBeGreaterThanOrEqual(8);
          if (k > 0) expect(panel.top).toBeGreaterThanOrEqual(figure.panels[k - 1].bottom);
        });
      }
      await page.screenshot({ path: join(SCREENSHOTS, `readable-${study.preset}-400.png`), fullPage: true });
      await page
        .locator('.study-figure')
        .last()
        .screenshot({ path: join(SCREENSHOTS, `readable-${study.preset}-400-figure.png`) });
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 400_000);

  it('the values under the cursor on the convergence chart, the predicted time to solution, and an advise job’s candidates', async () => {
    const gaussian = { format: 'generator', generator: 'gaussian', n: 30, seed: 3 };
    const [solveCreated, adviseCreated] = await Promise.all([
      running.service.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        payload: { type: 'solve', matrix: gaussian, partition: { machines: 3 }, options: { deployment: { machineGflops: 10 } } },
      }),
      running.service.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        payload: { type: 'advise', matrix: gaussian, partition: { machines: 3 } },
      }),
    ]);
    const solve = await waitForJob(running.service.app, solveCreated.json<Job>().id, { timeoutMs: 180_000 });
    const advise = await waitForJob(running.service.app, adviseCreated.json<Job>().id, { timeoutMs: 180_000 });
    expect([solve.status, advise.status]).toEqual(['succeeded', 'succeeded']);
    const times = solve.result!.analysis!.timeToSolution!;
    expect(times.deployment).toBeDefined();

    const { page, errors } = await openPage(`/#/jobs/${solve.id}`, WIDE);
    await page.locator('#time-to-solution tbody tr').first().waitFor({ timeout: 30_000 });
    await expectFitsWide(page);

    // The readout under the chart: each run's value at the iteration under the cursor.
    const plot = JSON.parse((await page.locator('#convergence-chart').getAttribute('data-plot'))!) as Plot;
    const canvas = (await page.locator('#convergence-chart canvas').boundingBox())!;
    await page.mouse.move(canvas.x + plot.left + plot.width * 0.3, canvas.y + plot.top + plot.height / 2);
    const readout = page.locator('#convergence-chart .chart-readout');
    await expect.poll(() => readout.getAttribute('data-iteration')).not.toBeNull();
    const iteration = Number(await readout.getAttribute('data-iteration'));
    const text = (await readout.textContent())!;
    expect(text).toMatch(new RegExp(`^iteration ${iteration.toLocaleString('en-US')}: `));
    const apcTrace = (await running.service.app.inject({ url: `/v1/jobs/${solve.id}/runs/apc/trace` })).json<TraceView>();
    const last = apcTrace.iteration.filter((it) => it <= iteration).length - 1;
    const apcShown = Number(/APC ([^ ]+)/.exec(text)![1]);
    expect(Math.abs(apcShown - apcTrace.relativeResidual[last]) / apcTrace.relativeResidual[last]).toBeLessThan(5e-3);

    // Time to solution: per algorithm its iterations, seconds per iteration and seconds, here and on the deployment.
    const rows = await page
      .locator('#time-to-solution tbody tr')
      .evaluateAll((nodes) => (nodes as unknown as El[]).map((row) => [...row.children].map((cell) => cell.textContent ?? '')));
    const seconds = (cell: string): number => Number(cell.replace(/ s( ★)?$/, ''));
    const close = (shown: number, value: number): boolean => Math.abs(shown - value) <= 5e-4 * Math.abs(value);
    expect(rows.map((row) => row[0])).toEqual(['APC', 'D-HBM', 'DGD', 'D-NAG', 'Block Cimmino', 'Mou-Liu-Morse']);
    (['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const).forEach((algorithm, k) => {
      const [, iterationsCell, perIteration, total, deployedPerIteration, deployedTotal] = rows[k];
      const here = times[algorithm];
      const there = times.deployment![algorithm];
      // Past the job's iteration limit the cell says so under the count.
      const [iterations, limitNote] = iterationsCell.split('⚠');
      expect(limitNote !== undefined).toBe(here.iterations !== null && here.iterations > solve.options.maxIterations);
      expect(iterations.replace(/,/g, '')).toBe(here.iterations === null ? '—' : String(here.iterations));
      expect(close(seconds(perIteration), here.secondsPerIteration), perIteration).toBe(true);
      expect(close(seconds(deployedPerIteration), there.secondsPerIteration), deployedPerIteration).toBe(true);
      if (here.seconds !== null) expect(close(seconds(total), here.seconds), total).toBe(true);
      if (there.seconds !== null) expect(close(seconds(deployedTotal), there.seconds), deployedTotal).toBe(true);
    });
    await screenshotBothWidths(page, 'readable-time-to-solution');

    // An analysis whose job allows 2 iterations: each algorithm predicted to need more is marked, at a glance.
    const limited = await runJob(running.service.app, {
      type: 'analyze',
      matrix: gaussian,
      partition: { machines: 3 },
      options: { maxIterations: 2 },
    });
    expect(limited.status).toBe('succeeded');
    const limitedTimes = limited.result!.analysis!.timeToSolution!;
    const beyond = (['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const).filter((id) => (limitedTimes[id].iterations ?? 0) > 2);
    expect(beyond.length).toBeGreaterThan(0);
    await page.goto(`${running.service.baseUrl}/#/jobs/${limited.id}`);
    await page.locator('#time-to-solution tbody tr').first().waitFor({ timeout: 30_000 });
    const notes = await page.locator('#time-to-solution tbody tr .beyond-limit').allTextContents();
    expect(notes).toEqual(beyond.map(() => '⚠ over maxIterations (2)'));
    // An analysis runs nothing: the note speaks of a solve with its options, the explanation of runs with them.
    const notesAt = page.locator('#time-to-solution tbody tr .beyond-limit');
    for (let k = 0; k < notes.length; k++)
      expect(await notesAt.nth(k).getAttribute('title')).toMatch(/^A solve with this job's options stops at maxIterations = 2,/);
    expect(limited.result!.analysis!.recommendation.finishesFirst!.explanation).toMatch(/with these options stops? at 'max-iterations'/);
    await screenshotBothWidths(page, 'readable-time-to-solution-limit');

    // The advise job: its candidates, the best marked.
    const advice = advise.result!.advice!;
    await page.setViewportSize(WIDE);
    await page.goto(`${running.service.baseUrl}/#/jobs/${advise.id}`);
    await page.locator('#advice tbody tr').first().waitFor({ timeout: 30_000 });
    await expectFitsWide(page);
    const candidates = await page
      .locator('#advice tbody tr')
      .evaluateAll((nodes) => (nodes as unknown as El[]).map((row) => [...row.children].map((cell) => cell.textContent ?? '')));
    expect(candidates).toHaveLength(advice.candidates.length);
    advice.candidates.forEach((candidate, k) => {
      const [strategy, sizes, kappaS, thetaH, iterations, time] = candidates[k];
      // The refined candidate says where it started and what it kept.
      const refinement =
        candidate.refinement === null
          ? ''
          : ` from ${candidate.refinement.from}, ${candidate.refinement.kept} of ${candidate.refinement.tries} tries kept`;
      expect(strategy).toBe((candidate.strategy === advice.best ? `${candidate.strategy} ★ best` : candidate.strategy) + refinement);
      expect(sizes).toBe(candidate.sizes.join(', '));
      expect(close(Number(kappaS), candidate.kappaS!), kappaS).toBe(true);
      if (candidate.thetaH === null) expect(thetaH).toBe('not computed');
      else expect(close(Number(thetaH.split(' ')[0]), candidate.thetaH), thetaH).toBe(true);
      // APC's predicted iterations and seconds on the candidate.
      expect(Number(iterations.replace(/,/g, ''))).toBe(candidate.timeToSolution!.iterations);
      expect(close(Number(time.replace(' s', '')), candidate.timeToSolution!.seconds!), time).toBe(true);
    });
    expect(candidates.filter(([strategy]) => strategy.includes('★ best'))).toHaveLength(1);
    expect(advice.candidates.filter((candidate) => candidate.refinement !== null).map((candidate) => candidate.strategy)).toEqual([
      'refined',
    ]);
    await screenshotBothWidths(page, 'readable-advice');

    // A regression whose 4 machines each span R^8: the given partition is at kappa(S) = 1, and the candidates it cannot
    // lose to say "not computed" (not a dash), the reason on hover.
    const regression = await runJob(running.service.app, {
      type: 'advise',
      matrix: { format: 'generator', generator: 'regression', rows: 240, n: 8, seed: 5 },
      partition: { machines: 4 },
    });
    expect(regression.status).toBe('succeeded');
    const unevaluated = regression.result!.advice!.candidates.filter((c) => c.kappaS === null);
    expect(unevaluated.length).toBeGreaterThan(0);
    await page.goto(`${running.service.baseUrl}/#/jobs/${regression.id}`);
    await page.locator('#advice tbody tr').first().waitFor({ timeout: 30_000 });
    for (const [k, candidate] of regression.result!.advice!.candidates.entries()) {
      const cell = page.locator('#advice tbody tr').nth(k).locator(':scope > *').nth(2);
      const text = (await cell.textContent())!;
      // Near 1 the dashboard writes 1 + its distance ("1 + 1.33e-15"), not 1.
      const shown = text.startsWith('1 + ') ? 1 + Number(text.slice(4)) : Number(text);
      if (candidate.kappaS !== null) expect(close(shown, candidate.kappaS), `${text} vs ${candidate.kappaS}`).toBe(true);
      else {
        expect(text).toBe('not computed');
        expect(await cell.locator('span').getAttribute('title')).toBe(candidate.notComputed);
      }
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);
});
