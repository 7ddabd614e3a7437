/**
 * The study pages in a real browser (chromium through playwright-core) against the real service,
 * with a separate worker process computing the study (test/support/studyService.ts): the list shows
 * it, its page draws the API's figures and its table, and the samples download as CSV. Screenshots
 * at desktop and phone widths go to test-output/dashboard/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStudy, startStudyTestService, waitForStudy, type StudyTestService } from '../support/studyService.js';
import { buildTestDashboard, DESKTOP, launchBrowser, PHONE, SCREENSHOTS, type BuiltDashboard } from './browser.js';

let dashboard: BuiltDashboard;
let service: StudyTestService;
let browser: Browser;

beforeAll(async () => {
  dashboard = await buildTestDashboard();
  service = await startStudyTestService({ DASHBOARD_DIR: dashboard.outDir }, { STUDY_WORKER_CONCURRENCY: '1' });
  service.spawnWorker();
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  dashboard?.remove();
});

describe('study pages in a browser', () => {
  it('lists a study, draws its figures and table, and downloads its samples', async () => {
    const created = await createStudy(service.app, { preset: 'experiment-1', samples: 40, grid: { mean: [0, 1], m: [2, 4] } });
    const study = await waitForStudy(service.app, created.id, { timeoutMs: 240_000 });
    expect(study.status).toBe('succeeded');

    const page = await browser.newPage({ viewport: DESKTOP, acceptDownloads: true });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${service.baseUrl}/#/studies`);
    const row = page.locator(`tr[data-study-id="${study.id}"]`);
    await expect.poll(() => row.locator('.status-cell').textContent()).toContain('succeeded');
    expect(await row.locator('.progress-text').textContent()).toBe(`${study.progress.total} / ${study.progress.total} samples`);
    await row.getByRole('link').click();
    await page.waitForURL(new RegExp(`#/studies/${study.id}$`));

    // Each figure the study declares, drawn from the API's SVG (with its plotted paths).
    await expect.poll(() => page.locator('.study-figure svg').count(), { timeout: 30_000 }).toBe(study.figures.length);
    expect(study.figures.length).toBeGreaterThan(0);
    for (const figure of study.figures) {
      const svg = page.locator(`.study-figure[data-figure="${figure.name}"] svg`);
      expect(await svg.getAttribute('aria-label')).toBe(figure.title);
      expect(await svg.locator('path, polyline, circle, rect').count()).toBeGreaterThan(2);
    }
    // One table row per grid point and metric.
    const expectedRows = study.result!.points.reduce((sum, point) => sum + point.metrics.length, 0);
    expect(await page.locator('table.study-results tbody tr').count()).toBe(expectedRows);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Samples (CSV)' }).click()]);
    const csv = readFileSync(await download.path(), 'utf8');
    const samples = await service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/samples.csv` });
    expect(csv).toBe(samples.body);

    await page.screenshot({ path: join(SCREENSHOTS, 'study-desktop.png'), fullPage: true });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: join(SCREENSHOTS, 'study-phone.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });
});
