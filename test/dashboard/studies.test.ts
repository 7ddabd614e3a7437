/**
 * The study pages in a real browser (chromium through playwright-core) against the real service,
 * with a separate worker process computing the study (test/support/studyService.ts): the list shows
 * it, its page draws the API's figures and its table, and the samples download as CSV; the one list
 * of jobs and studies follows every row live through one event stream. Screenshots at desktop and
 * phone widths go to test-output/dashboard/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createStudy, startStudyTestService, waitForStudy } from '../support/studyService.js';
import { dashboardInBrowser, DESKTOP, PHONE, SCREENSHOTS } from './browser.js';

const running = dashboardInBrowser(async (outDir) => {
  const service = await startStudyTestService({ DASHBOARD_DIR: outDir }, { STUDY_WORKER_CONCURRENCY: '1' });
  service.spawnWorker();
  return service;
});

describe('study pages in a browser', () => {
  it('lists jobs and studies in one table, every row live from one event stream, with cancel and delete', async () => {
    const page = await running.browser.newPage({ viewport: DESKTOP });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('dialog', (dialog) => void dialog.accept());
    const streamRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/events')) streamRequests.push(new URL(request.url()).pathname);
    });
    await page.goto(`${running.service.baseUrl}/#/`);
    await page.locator('#status-filter').waitFor();
    // Marks this document: still there at the end, so nothing reloaded the page.
    await page.evaluate(() => ((globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true));

    // Created after the page opened: the list learns of them from its stream only.
    const jobIds: string[] = [];
    for (let seed = 1; seed <= 5; seed++) {
      const response = await running.service.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        payload: {
          type: 'solve',
          matrix: { format: 'generator', generator: 'gaussian', n: 24, seed },
          partition: { machines: 3 },
          algorithms: ['apc'],
        },
      });
      expect(response.statusCode, response.body).toBe(202);
      jobIds.push(response.json<{ id: string }>().id);
    }
    const study = await createStudy(running.service.app, { preset: 'experiment-1', samples: 12, grid: { mean: [0], m: [2, 3] } });

    const rows = [...jobIds.map((id) => page.locator(`tr[data-job-id="${id}"]`)), page.locator(`tr[data-study-id="${study.id}"]`)];
    for (const row of rows) await expect.poll(() => row.locator('.status-cell').textContent(), { timeout: 240_000 }).toContain('succeeded');
    const studyRow = rows[5];
    // The kind is the column after the status (beside the id: a phone's width scrolls the others out of sight).
    expect(await studyRow.locator('td').nth(1).textContent()).toBe('Study');
    expect(await studyRow.locator('.progress-text').textContent()).toBe('24 / 24 samples');
    expect(await rows[0].locator('td').nth(1).textContent()).toBe('Job');
    // Six rows went live on one stream (the job and study pages have their own; the list needs one).
    expect(streamRequests).toEqual(['/v1/events']);
    expect(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'list-desktop.png'), fullPage: true });

    // Filter by status and kind: the studies that succeeded.
    await page.locator('#kind-filter').selectOption('study');
    await page.waitForURL(/#\/\?kind=study$/);
    await page.locator('#status-filter').selectOption('succeeded');
    await expect.poll(() => page.locator(`tr[data-study-id="${study.id}"]`).count()).toBe(1);
    expect(await page.locator('tr[data-job-id]').count()).toBe(0);

    // Delete a study and a job from the list; cancel a queued job (no worker takes it fast enough to matter: either way it ends).
    await page.getByRole('button', { name: `Delete study ${study.id}` }).click();
    await expect.poll(() => page.locator(`tr[data-study-id="${study.id}"]`).count()).toBe(0);
    expect((await running.service.app.inject({ url: `/v1/studies/${study.id}` })).statusCode).toBe(404);
    await page.goto(`${running.service.baseUrl}/#/?kind=job`);
    await page.getByRole('button', { name: `Delete job ${jobIds[0]}` }).click();
    await expect.poll(() => page.locator(`tr[data-job-id="${jobIds[0]}"]`).count()).toBe(0);
    expect((await running.service.app.inject({ url: `/v1/jobs/${jobIds[0]}` })).statusCode).toBe(404);
    const cancelled = await running.service.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: {
        type: 'solve',
        matrix: { format: 'generator', generator: 'gaussian', n: 400, seed: 1 },
        partition: { machines: 4 },
        options: { tolerance: 1e-300, maxIterations: 100_000, stopOnStagnation: false },
      },
    });
    const cancelledId = cancelled.json<{ id: string }>().id;
    const cancelButton = page.getByRole('button', { name: `Cancel job ${cancelledId}` });
    await cancelButton.waitFor();
    await cancelButton.click();
    await expect
      .poll(() => page.locator(`tr[data-job-id="${cancelledId}"] .status-cell`).textContent(), { timeout: 60_000 })
      .toContain('cancelled');

    // A cancel's answer read before the job ended, delivered after the stream's `cancelled` event (as
    // on a loaded machine): the row stays cancelled.
    const raced = await running.service.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { type: 'solve', matrix: { format: 'generator', generator: 'gaussian', n: 400, seed: 2 }, partition: { machines: 4 } },
    });
    const racedId = raced.json<{ id: string }>().id;
    const racedRow = page.locator(`tr[data-job-id="${racedId}"] .status-cell`);
    let answered: () => void = () => undefined;
    const answerSent = new Promise<void>((resolve) => (answered = resolve));
    await page.route(`**/v1/jobs/${racedId}/cancel`, async (route) => {
      const response = await route.fetch();
      const stale = { ...((await response.json()) as Record<string, unknown>), status: 'running' };
      await expect.poll(() => racedRow.textContent(), { timeout: 60_000 }).toContain('cancelled');
      // Cleared, so that the announcement the answer's handling makes says when it has run.
      await page.locator('#announcer').evaluate((announcer: { textContent: string | null }) => (announcer.textContent = ''));
      await route.fulfill({ response, json: stale });
      answered();
    });
    await page.getByRole('button', { name: `Cancel job ${racedId}` }).click();
    await answerSent;
    await expect.poll(() => page.locator('#announcer').textContent()).toBe(`Job ${racedId} cancelled.`);
    expect(await racedRow.textContent()).toContain('cancelled');
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);

  it('lists a study, draws its figures and table, and downloads its samples', async () => {
    const created = await createStudy(running.service.app, { preset: 'experiment-1', samples: 40, grid: { mean: [0, 1], m: [2, 4] } });
    const study = await waitForStudy(running.service.app, created.id, { timeoutMs: 240_000 });
    expect(study.status).toBe('succeeded');

    const page = await running.browser.newPage({ viewport: DESKTOP, acceptDownloads: true });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${running.service.baseUrl}/#/studies`);
    const row = page.locator(`tr[data-study-id="${study.id}"]`);
    await expect.poll(() => row.locator('.status-cell').textContent()).toContain('succeeded');
    expect(await row.locator('.progress-text').textContent()).toBe(`${study.progress.total} / ${study.progress.total} samples`);
    await row.getByRole('link').click();
    await page.waitForURL(new RegExp(`#/studies/${study.id}$`));

    // Each figure the study declares, drawn from the API's SVG (with its plotted paths).
    await expect.poll(() => page.locator('.study-figure .figure-panels').count(), { timeout: 30_000 }).toBe(study.figures.length);
    expect(study.figures.length).toBeGreaterThan(0);
    for (const figure of study.figures) {
      // One picture per panel, the figure named by its title.
      const panels = page.locator(`.study-figure[data-figure="${figure.name}"] .figure-panels`);
      expect(await panels.getAttribute('aria-label')).toBe(figure.title);
      expect(await panels.locator('svg').count()).toBe(2);
      expect(await panels.locator('path, polyline, circle, rect').count()).toBeGreaterThan(2);
    }
    // One table row per grid point and metric.
    const expectedRows = study.result!.points.reduce((sum, point) => sum + point.metrics.length, 0);
    expect(await page.locator('table.study-results tbody tr').count()).toBe(expectedRows);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Samples (CSV)' }).click()]);
    const csv = readFileSync(await download.path(), 'utf8');
    const samples = await running.service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/samples.csv` });
    expect(csv).toBe(samples.body);

    await page.screenshot({ path: join(SCREENSHOTS, 'study-desktop.png'), fullPage: true });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: join(SCREENSHOTS, 'study-phone.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });
});
