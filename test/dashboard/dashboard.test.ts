/**
 * The dashboard in a real headless browser (Debian's chromium through playwright-core) against the
 * real service: a job submitted from the form, followed live to its end, its page with the
 * convergence chart and the heatmap drawn, a download checked row by row against the API; a refused
 * submission with the problem next to its field; the API key sent as a bearer token. Screenshots
 * of the job page at desktop and phone widths go to test-output/dashboard/ (git-ignored).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, TraceView } from '../../src/jobs/types.js';
import { createJob, startTestService, waitForJob, type TestService } from '../support/service.js';
import { buildTestDashboard, DESKTOP, launchBrowser, PHONE, SCREENSHOTS, type BuiltDashboard } from './browser.js';

let dashboard: BuiltDashboard;
let service: TestService;
let browser: Browser;

beforeAll(async () => {
  dashboard = await buildTestDashboard();
  service = await startTestService({ DASHBOARD_DIR: dashboard.outDir }, { listen: true });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
  dashboard?.remove();
});

/** A page that fails the test on any script error (a CSP refusal shows up here too). */
async function openPage(path: string, viewport = DESKTOP): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport, acceptDownloads: true });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    // This service runs no studies: the list's request for them is answered 503, as it should be.
    const noStudies = /status of 503/.test(message.text()) && message.location().url.includes('/v1/studies');
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text()) && !noStudies) errors.push(message.text());
  });
  await page.goto(`${service.baseUrl}${path}`);
  return { page, errors };
}

/** Pixels of a canvas that are not blank (not transparent, not white). */
async function inkedPixels(page: Page, selector: string): Promise<number> {
  return page
    .locator(selector)
    .first()
    .evaluate((canvas) => {
      const element = canvas as unknown as {
        width: number;
        height: number;
        getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
      };
      const data = element.getContext('2d')?.getImageData(0, 0, element.width, element.height).data;
      if (!data) return 0;
      let count = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 0 && (data[i] < 250 || data[i + 1] < 250 || data[i + 2] < 250)) count++;
      return count;
    });
}

async function apiJson<T>(url: string): Promise<T> {
  const response = await service.app.inject({ method: 'GET', url });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<T>();
}

/**
 * Submits the New job form: the form opens the new job's page, which follows the job's event stream to its end (shown
 * succeeded); the API's job.
 */
async function submitAndFollow(page: Page): Promise<Job> {
  await page.getByRole('button', { name: 'Submit' }).click();
  await page.waitForURL(/#\/jobs\/[0-9A-Z]+$/);
  const id = page.url().split('/').pop()!;
  await page.locator('.job-status [data-status="succeeded"]').waitFor({ timeout: 90_000 });
  return apiJson<Job>(`/v1/jobs/${id}`);
}

describe('dashboard in a browser', () => {
  it('submits a generator job from the form, follows it live, and shows its convergence, heatmap and downloads', async () => {
    const { page, errors } = await openPage('/#/new');
    await page.getByLabel('n (rows and columns)').fill('48');
    await page.getByLabel('Mean').fill('0');
    await page.getByLabel('Seed').fill('7');
    await page.getByLabel('Machines (m)').fill('6');
    await page.getByLabel('Tolerance (relative residual)').fill('1e-9');
    const job = await submitAndFollow(page);
    const id = job.id;
    expect(job.status).toBe('succeeded');
    expect(job.n).toBe(48);
    expect(job.m).toBe(6);
    expect(job.algorithms).toHaveLength(6);

    // The list shows it (from its status), and opens it.
    await page.getByRole('link', { name: 'Jobs and studies', exact: true }).first().click();
    const row = page.locator(`tr[data-job-id="${id}"]`);
    await expect.poll(() => row.locator('.status-cell').textContent()).toContain('succeeded');
    await row.getByRole('link').click();
    await page.waitForURL(new RegExp(`#/jobs/${id}$`));

    // Convergence: one solid and one dashed (theoretical) series per run, drawn on the canvas.
    const chart = page.locator('#convergence-chart');
    await expect.poll(() => chart.getAttribute('data-series')).toBe('12');
    expect(await chart.getAttribute('data-runs')).toBe('6');
    const runs = Object.values(job.result!.runs);
    const totalPoints = runs.reduce((sum, run) => sum + run.tracePoints, 0);
    expect(Number(await chart.getAttribute('data-points'))).toBe(totalPoints);
    await expect.poll(() => inkedPixels(page, '#convergence-chart canvas')).toBeGreaterThan(2000);
    // The legend, readable without hover: each run's name and its theory line's rate.
    const legend = page.locator('#convergence-chart .chart-legend');
    for (const [algorithm, name] of Object.entries({
      apc: 'APC',
      dhbm: 'D-HBM',
      dgd: 'DGD',
      dnag: 'D-NAG',
      cimmino: 'Block Cimmino',
      mlm: 'Mou-Liu-Morse',
    })) {
      const entry = legend.locator(`[data-algorithm="${algorithm}"]`);
      expect(await entry.locator('.legend-name').textContent()).toBe(name);
      expect(await entry.locator('.legend-rate').textContent()).toMatch(/^theory ρ\^t, ρ = \S/);
    }

    // Heterogeneity: the 6 x 6 theta heatmap drawn, the theta_H pair named; phi_i bars drawn.
    const analysis = job.result!.analysis!;
    const heatmap = page.locator('.heatmap-figure');
    expect(await heatmap.getAttribute('data-machines')).toBe('6');
    await expect.poll(() => inkedPixels(page, 'canvas.heatmap')).toBeGreaterThan(10_000);
    const [i, j] = analysis.heterogeneity.thetaHPair!;
    expect(await heatmap.locator('figcaption').textContent()).toContain(`between machines ${i} and ${j}`);
    // The map sits right of and below the machines' numbers (26 px): hovering the ringed cell reads out that pair.
    await page.locator('canvas.heatmap').scrollIntoViewIfNeeded();
    const box = (await page.locator('canvas.heatmap').boundingBox())!;
    const cell = (box.width - 26) / 6;
    await page.mouse.move(box.x + 26 + (j + 0.5) * cell, box.y + 26 + (i + 0.5) * cell);
    await expect
      .poll(() => heatmap.locator('output.readout').textContent())
      .toMatch(new RegExp(`^theta\\(${i}, ${j}\\) = .* the theta_H pair$`));
    await heatmap.screenshot({ path: join(SCREENSHOTS, 'heatmap.png') });
    await expect.poll(() => inkedPixels(page, '#phi-chart canvas')).toBeGreaterThan(500);

    // Rates of the six algorithms with their Table 1 bounds, and the recommendation.
    await expect.poll(() => page.locator('table.rates tbody tr').count()).toBe(6);
    const recommended = analysis.recommendation.algorithm === 'apc' ? 'APC' : 'D-HBM';
    expect(await page.locator('#recommendation h2').textContent()).toContain(recommended);
    expect(await page.locator('#recommendation .explanation').textContent()).toBe(analysis.recommendation.explanation);

    // Downloads: every run's trace as one CSV, row for row the API's traces.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'All traces (CSV)' }).click()]);
    expect(download.suggestedFilename()).toBe(`job-${id}-traces.csv`);
    const lines = readFileSync(await download.path(), 'utf8')
      .trimEnd()
      .split('\n');
    expect(lines[0]).toBe('algorithm,iteration,relativeResidual,relativeError,consensusDistance');
    expect(lines).toHaveLength(1 + totalPoints);
    for (const algorithm of job.algorithms) {
      const trace = await apiJson<TraceView>(`/v1/jobs/${id}/runs/${algorithm}/trace`);
      const rows = lines.filter((line) => line.startsWith(`${algorithm},`)).map((line) => line.split(','));
      expect(rows).toHaveLength(trace.iteration.length);
      rows.forEach((cells, k) => {
        expect(Number(cells[1])).toBe(trace.iteration[k]);
        expect(Number(cells[2])).toBe(trace.relativeResidual[k]);
        expect(Number(cells[3])).toBe(trace.relativeError![k]);
      });
    }
    const [solutionDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'APC solution as CSV' }).click(),
    ]);
    const solution = readFileSync(await solutionDownload.path(), 'utf8')
      .trimEnd()
      .split('\n');
    expect(solution).toHaveLength(1 + 48);
    // b = A * ones(n): the converged solution is ones to the tolerance's order.
    for (const line of solution.slice(1)) expect(Math.abs(Number(line.split(',')[1]) - 1)).toBeLessThan(1e-5);

    await page.screenshot({ path: join(SCREENSHOTS, 'job-desktop.png'), fullPage: true });
    await page.setViewportSize(PHONE);
    await expect.poll(() => page.evaluate(() => (globalThis as unknown as { innerWidth: number }).innerWidth)).toBe(PHONE.width);
    // Nothing wider than the phone's screen but the tables, which scroll inside their own box, once the
    // charts have redrawn for the new width (on a loaded machine that can take a few frames).
    await expect
      .poll(
        () =>
          page.evaluate(() => {
            const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement;
            return root.scrollWidth;
          }),
        { timeout: 15_000 },
      )
      .toBeLessThanOrEqual(PHONE.width);
    await page.screenshot({ path: join(SCREENSHOTS, 'job-phone.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a solve cancelled during its runs: analysis not completed, its runs as they ended, the one never started, their files', async () => {
    // APC converges; gradient descent on a Gaussian matrix runs until cancelled (the runs come before the rest of the
    // analysis); block Cimmino, after it, never starts.
    const { job: created } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'generator', generator: 'gaussian', n: 40, seed: 11 },
      partition: { machines: 4 },
      algorithms: ['apc', 'dgd', 'cimmino'],
      options: { tolerance: 1e-12, maxIterations: 1_000_000, stopOnStagnation: false },
    });
    await waitForJob(service.app, created.id, { until: (job) => job.progress?.algorithm === 'dgd' });
    expect((await service.app.inject({ method: 'POST', url: `/v1/jobs/${created.id}/cancel` })).statusCode).toBe(200);
    const job = await waitForJob(service.app, created.id);
    expect(job.status).toBe('cancelled');
    const result = job.result!;
    expect(result.analysisCompleted).toBe(false);

    const { page, errors } = await openPage(`/#/jobs/${job.id}`);
    const section = page.locator('#analysis-not-completed');
    await section.waitFor();
    expect(await section.locator('h2').textContent()).toBe('Analysis not completed');
    expect(await section.locator('.explanation').textContent()).toContain('cancelled before its analysis was complete');
    // L, mu, lambda_min(S), lambda_max(S) to 4 significant digits ("1 - 2.5e-5" near 1, as the rates are written).
    const shown = (text: string): number => {
      const near = /^(-?1) ([-+]) (\S+)$/.exec(text);
      return near ? Number(near[1]) + (near[2] === '-' ? -1 : 1) * Number(near[3]) : Number(text);
    };
    const facts = (await section.locator('dl.spectral dd').allTextContents()).map(shown);
    const { L, mu, lambdaMinS, lambdaMaxS } = result.spectral!;
    expect(facts).toHaveLength(4);
    [L, mu, lambdaMinS, lambdaMaxS].forEach((value, k) => expect(Math.abs(facts[k] - value)).toBeLessThanOrEqual(5e-4 * value));
    // Each run as it ended: the converged APC, the cancelled DGD with its iterations.
    const rows = section.locator('table.runs tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).locator('[data-status]').getAttribute('data-status')).toBe('converged');
    expect(await rows.nth(1).locator('[data-status]').getAttribute('data-status')).toBe('cancelled');
    expect(await rows.nth(1).locator('td').nth(2).textContent()).toBe(result.runs.dgd!.iterations.toLocaleString('en-US'));
    expect(result.runs.cimmino).toBeUndefined();
    // The header counts the run never started (it said "1 of 1 run did not converge", Cimmino unnamed), and the flags name it.
    expect(await page.locator('.job-status .run-count').textContent()).toBe(' 2 of 3 runs did not converge');
    expect(await page.locator('.run-problems li[data-run="cimmino"]').textContent()).toBe(
      'Block Cimmino: not started (the job ended before its turn).',
    );
    // No section built on the analysis; the chart, the partition and the downloads are there.
    for (const id of ['rates', 'conditioning', 'heterogeneity', 'recommendation']) expect(await page.locator(`#${id}`).count(), id).toBe(0);
    await expect.poll(() => page.locator('#convergence-chart').getAttribute('data-runs')).toBe('2');
    await page.locator('#partition').waitFor();
    expect(await page.getByRole('button', { name: 'DGD solution as CSV' }).count()).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'job-analysis-not-completed.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('writes a rate that rounds to 1 as 1 - gap (the Hilbert matrix n = 10: DGD, Cimmino and MLM), never as 1', async () => {
    const n = 10;
    const hilbert = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => 1 / (i + j + 1)));
    const { job: created } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'dense', data: hilbert },
      partition: { machines: 2 },
      algorithms: ['dgd', 'cimmino', 'mlm'],
      options: { maxIterations: 200 },
    });
    const job = await waitForJob(service.app, created.id);
    expect(job.status).toBe('succeeded');
    // DGD and Cimmino stop at maxIterations (Mou-Liu-Morse converges).
    const converged = job.summary!.converged.length;
    expect(converged).toBeLessThan(2);
    // The list says how many of the succeeded job's runs converged (it showed the succeeded badge alone).
    const list = await openPage('/#/');
    const listed = list.page.locator(`tr[data-job-id="${job.id}"] .status-cell`);
    await expect.poll(() => listed.textContent()).toContain(`${converged} of 3 runs converged`);
    expect(await listed.locator('.run-count').count()).toBe(1);
    expect(list.errors).toEqual([]);
    await list.page.close();
    const { rates } = job.result!.analysis!;
    const { page, errors } = await openPage(`/#/jobs/${job.id}`);
    await page.locator('table.rates tbody tr').first().waitFor();
    // The rates table lists all six in their order: APC, D-HBM, DGD, D-NAG, Block Cimmino, Mou-Liu-Morse.
    const row = { dgd: 2, cimmino: 4, mlm: 5 } as const;
    for (const algorithm of ['dgd', 'cimmino', 'mlm'] as const) {
      expect(rates[algorithm].rate, algorithm).toBe(1);
      const expected = `1 - ${rates[algorithm].gap.toExponential(2)}`;
      expect(await page.locator('table.rates tbody tr').nth(row[algorithm]).locator('.rate').textContent(), algorithm).toBe(expected);
      // Its predicted iterations, ~1e25, in exponent notation.
      const predicted = job.result!.analysis!.recommendation.predictedIterations[algorithm]!;
      expect(predicted, algorithm).toBeGreaterThan(1e20);
      expect(await page.locator('table.rates tbody tr').nth(row[algorithm]).locator('td').nth(3).textContent(), algorithm).toBe(
        predicted.toExponential(3),
      );
      expect(await page.locator(`.chart-legend [data-algorithm="${algorithm}"] .legend-rate`).textContent(), algorithm).toBe(
        `theory ρ^t, ρ = ${expected}`,
      );
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('submits an advise job from the form with its refinement tries, shows its advice, and names a refused tries field', async () => {
    const { page, errors } = await openPage('/#/new');
    await page.getByRole('radio', { name: 'Advise a partition' }).check();
    // The solve-only fields give way to the advice's.
    expect(await page.getByLabel('Tolerance (relative residual)').isHidden()).toBe(true);
    await page.getByLabel('n (rows and columns)').fill('60');
    await page.getByLabel('Machines (m)').fill('4');
    await page.getByLabel('Refinement tries').fill('65');
    await page.getByRole('button', { name: 'Submit' }).click();
    // Refused by the schema: the problem at the tries field, the form kept.
    const triesProblem = page.locator('.field[data-path="/options/refinementTries"] .field-problem');
    await triesProblem.waitFor();
    expect(await triesProblem.textContent()).toMatch(/64/);
    expect(await page.getByLabel('Refinement tries').getAttribute('aria-invalid')).toBe('true');
    expect(page.url()).toMatch(/#\/new$/);
    await page.screenshot({ path: join(SCREENSHOTS, 'advise-form-refused.png'), fullPage: true });

    await page.getByLabel('Refinement tries').fill('0');
    await page.getByLabel('Imbalance').fill('0.05');
    const job = await submitAndFollow(page);
    expect(job.type).toBe('advise');
    expect(job.options).toMatchObject({ imbalance: 0.05, refinementTries: 0 });
    const advice = job.result!.advice!;
    expect(advice.candidates.map((c) => c.strategy)).not.toContain('refined');
    // Its page shows the settings it ran with, and the advice as the API gives it, the summary saying no refinement ran.
    await expect
      .poll(() => page.locator('dl.facts').first().textContent())
      .toContain('tolerance 1e-8, max iterations 20,000, imbalance 0.05, refinement tries 0');
    await page.locator('#advice').waitFor();
    expect(await page.locator('#advice .explanation').textContent()).toBe(advice.summary);
    expect(advice.summary).toContain('The refinement was not run (refinementTries 0).');
    await expect.poll(() => page.locator('#advice table tbody tr').count()).toBe(advice.candidates.length);
    await page.screenshot({ path: join(SCREENSHOTS, 'advise-job-no-refinement.png'), fullPage: true });
    // A job that takes the advice says where its partition came from, and links to the advice (it showed "Machines m 4" only).
    const { job: taking } = await createJob(service.app, {
      type: 'analyze',
      matrix: job.matrix.generator
        ? { format: 'generator', ...job.matrix.generator }
        : { format: 'generator', generator: 'gaussian', n: 60 },
      partition: { fromAdvice: job.id },
    });
    await page.goto(`${service.baseUrl}/#/jobs/${taking.id}`);
    const source = page.locator('dl.facts dd.partition-source');
    await expect.poll(() => source.textContent()).toBe(`the best candidate of advise job ${job.id}`);
    expect(await source.locator('a').getAttribute('href')).toBe(`#/jobs/${job.id}`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a refused submission’s problem next to the field it names', async () => {
    const { page, errors } = await openPage('/#/new');
    // 422 from the numerical checks (no field list): more machines than rows, shown at the machines field.
    await page.getByLabel('n (rows and columns)').fill('20');
    await page.getByLabel('Machines (m)').fill('100');
    await page.getByRole('button', { name: 'Submit' }).click();
    const machinesProblem = page.locator('.field[data-path="/partition/machines"] .field-problem');
    await machinesProblem.waitFor();
    const refused = await service.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: {
        type: 'solve',
        matrix: { format: 'generator', generator: 'gaussian', n: 20, seed: 1, mean: 1, std: 1 },
        partition: { machines: 100 },
      },
    });
    expect(refused.statusCode).toBe(422);
    expect(await machinesProblem.textContent()).toContain(refused.json<{ detail: string }>().detail);
    expect(await page.getByLabel('Machines (m)').getAttribute('aria-invalid')).toBe('true');
    expect(page.url()).toMatch(/#\/new$/);

    // 400 from the schema (a field list): n = 0, shown at the n field; the earlier problem is gone.
    await page.getByLabel('Machines (m)').fill('2');
    await page.getByLabel('n (rows and columns)').fill('0');
    await page.getByRole('button', { name: 'Submit' }).click();
    const nProblem = page.locator('.field[data-path="/matrix/n"] .field-problem');
    await nProblem.waitFor();
    expect(await nProblem.textContent()).toMatch(/Invalid request|>=\s*1|too small/i);
    expect(await machinesProblem.isHidden()).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'refused-phone.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps an API key for the session and sends it as a bearer token', async () => {
    const { page } = await openPage('/#/');
    await page.getByRole('button', { name: 'API key' }).click();
    await page.getByRole('textbox', { name: 'Key' }).fill('lss_test_key');
    const request = page.waitForRequest((candidate) => candidate.url().includes('/v1/jobs'));
    await page.getByRole('button', { name: 'Save' }).click();
    expect((await request).headers().authorization).toBe('Bearer lss_test_key');
    expect(
      await page.evaluate(() =>
        (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem(
          'lss.dashboard.apiKey',
        ),
      ),
    ).toBe('lss_test_key');
    await page.close();
  });

  it('draws 2,048-point traces of six algorithms (render time reported, not asserted)', async () => {
    // Runs that reach their iteration limit of TRACE_CAP - 1: iterations 0 to 2047, TRACE_CAP = 2048 points each.
    const created = await service.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: {
        type: 'solve',
        matrix: { format: 'generator', generator: 'gaussian', n: 40, seed: 3 },
        partition: { machines: 4 },
        options: { tolerance: 1e-300, maxIterations: service.config.TRACE_CAP - 1 },
      },
    });
    expect(created.statusCode).toBe(202);
    const job = await waitForJob(service.app, created.json<Job>().id, { timeoutMs: 90_000 });
    expect(job.status).toBe('succeeded');
    const points = Object.values(job.result!.runs).map((run) => run.tracePoints);
    expect(points).toEqual(new Array(6).fill(service.config.TRACE_CAP));

    const { page, errors } = await openPage(`/#/jobs/${job.id}`);
    const chart = page.locator('#convergence-chart');
    const renderMs = async (): Promise<number> => {
      await expect.poll(() => chart.getAttribute('data-render-ms'), { timeout: 30_000 }).not.toBeNull();
      expect(Number(await chart.getAttribute('data-points'))).toBe(6 * service.config.TRACE_CAP);
      expect(await chart.getAttribute('data-series')).toBe('12');
      return Number(await chart.getAttribute('data-render-ms'));
    };
    // The page's first draw (cold: uPlot's code not yet run), over several loads of the page; then
    // redraws from scratch (switching between residual and error rebuilds the chart).
    const firstDraws = [await renderMs()];
    for (let k = 0; k < 4; k++) {
      await page.reload();
      firstDraws.push(await renderMs());
    }
    const rebuilds: number[] = [];
    for (let k = 0; k < 6; k++) {
      await page.getByRole('radio', { name: k % 2 === 0 ? /relative error/ : /relative residual/ }).check();
      rebuilds.push(await renderMs());
    }
    const bestAndMedian = (times: number[]): string => {
      const sorted = [...times].sort((a, b) => a - b);
      return `best ${sorted[0].toFixed(1)} ms, median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms`;
    };
    console.log(
      `dashboard: six ${service.config.TRACE_CAP}-point traces (12 series with the theory lines), ms from the data to uPlot's ` +
        `first draw in chromium: the page's first draw ${bestAndMedian(firstDraws)} (${firstDraws.length} loads); ` +
        `rebuilt from scratch ${bestAndMedian(rebuilds)} (${rebuilds.length} rebuilds)`,
    );
    expect(errors).toEqual([]);
    await page.close();
  });
});
