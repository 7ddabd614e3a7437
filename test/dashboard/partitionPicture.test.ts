/**
 * The partition pictures in a real browser against the real service: an advise job's page shows,
 * under its candidates, the given partition (before) and the best (after), side by side at 1400 px
 * and one under the other at 400 px, each inside the page; each picture is the API's for its
 * strategy (its title names the strategy and kappa(S)); the rows' order can be switched; an analyze
 * job shows its own partition in a card. Screenshots at both widths go to test-output/dashboard/.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/jobs/types.js';
import { toRows } from '../../src/solvers/matrix.js';
import { runJob, startTestService } from '../support/service.js';
import { shuffledBlockDiagonal } from '../solvers/partitioning/cases.js';
import { dashboardInBrowser, openDashboardPage, pageWidth, SCREENSHOTS } from './browser.js';

const WIDE = { width: 1400, height: 900 };
const NARROW = { width: 400, height: 844 };

const running = dashboardInBrowser((outDir) => startTestService({ DASHBOARD_DIR: outDir }, { listen: true }));

interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
  width: number;
}

interface Shown {
  box: Box;
  alt: string;
  naturalWidth: number;
  loaded: string | null;
}

/** Each picture of the page: its image's box, alt text and intrinsic width, and the order it was last drawn in. */
function pictures(page: Page, scope: string): Promise<Shown[]> {
  return page.locator(`${scope} .partition-picture`).evaluateAll((nodes) =>
    (
      nodes as unknown as {
        dataset: { loaded?: string };
        querySelector(selector: string): { alt: string; naturalWidth: number; getBoundingClientRect(): Box };
      }[]
    ).map((figure) => {
      const image = figure.querySelector('img');
      const { left, right, top, bottom, width } = image.getBoundingClientRect();
      return {
        box: { left, right, top, bottom, width },
        alt: image.alt,
        naturalWidth: image.naturalWidth,
        loaded: figure.dataset.loaded ?? null,
      };
    }),
  );
}

const openPage = (path: string): Promise<{ page: Page; errors: string[] }> =>
  openDashboardPage(running.browser, `${running.service.baseUrl}${path}`, WIDE);

const dense = { format: 'dense', data: toRows(shuffledBlockDiagonal(6, 30, 11).A) };

describe('partition pictures', () => {
  it("an advise job: before and after side by side at 1400 px, one under the other at 400 px, each the API's picture", async () => {
    const advise: Job = await runJob(running.service.app, {
      type: 'advise',
      matrix: dense,
      partition: { machines: 6 },
      options: { imbalance: 0.05 },
    });
    expect(advise.status, JSON.stringify(advise.error)).toBe('succeeded');
    const advice = advise.result!.advice!;
    const best = advice.candidates.find((c) => c.strategy === advice.best)!;
    const { page, errors } = await openPage(`/#/jobs/${advise.id}`);
    await expect
      .poll(async () => (await pictures(page, '#advice')).map((p) => p.loaded), { timeout: 30_000 })
      .toEqual(['machine', 'machine']);

    let [before, after] = await pictures(page, '#advice');
    expect(before.alt).toMatch(/^Before: the given partition: Given partition: κ\(S\) = \S+; rows grouped by machine$/);
    expect(after.alt).toBe(`After: the best (${best.strategy}): Best partition (${best.strategy}): κ(S) = 1; rows grouped by machine`);
    for (const picture of [before, after]) {
      expect(picture.naturalWidth).toBeGreaterThan(0);
      // Readable: at least 400 px wide, and inside the page.
      expect(picture.box.width).toBeGreaterThanOrEqual(400);
      expect(picture.box.left).toBeGreaterThanOrEqual(0);
      expect(picture.box.right).toBeLessThanOrEqual(WIDE.width);
    }
    // Side by side: the same top, after to the right of before.
    expect(Math.abs(after.box.top - before.box.top)).toBeLessThan(1);
    expect(after.box.left).toBeGreaterThanOrEqual(before.box.right);
    expect(await pageWidth(page)).toBeLessThanOrEqual(WIDE.width);
    await page.locator('#advice .partition-pictures').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'partition-advice-1400.png'), fullPage: true });

    await page.setViewportSize(NARROW);
    await expect.poll(() => pageWidth(page), { timeout: 15_000 }).toBeLessThanOrEqual(NARROW.width);
    [before, after] = await pictures(page, '#advice');
    // One under the other, each within the screen.
    expect(after.box.top).toBeGreaterThanOrEqual(before.box.bottom);
    for (const picture of [before, after]) {
      expect(picture.box.left).toBeGreaterThanOrEqual(0);
      expect(picture.box.right).toBeLessThanOrEqual(NARROW.width);
      expect(picture.box.width).toBeGreaterThan(NARROW.width * 0.75);
    }
    await page.screenshot({ path: join(SCREENSHOTS, 'partition-advice-400.png'), fullPage: true });

    // In the matrix's order: both drawn again.
    await page.setViewportSize(WIDE);
    await page.locator('#advice .partition-order input[value="matrix"]').check();
    await expect
      .poll(async () => (await pictures(page, '#advice')).map((p) => p.loaded), { timeout: 30_000 })
      .toEqual(['matrix', 'matrix']);
    expect((await pictures(page, '#advice'))[1].alt).toMatch(/rows in the matrix's order$/);
    await page.locator('#advice .partition-pictures').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'partition-advice-matrix-order-1400.png') });
    expect(errors).toEqual([]);
    await page.close();
  }, 240_000);

  it('an analyze job: its own partition in a card, within the page at both widths', async () => {
    const analysis = await runJob(running.service.app, { type: 'analyze', matrix: dense, partition: { machines: 6 } });
    expect(analysis.status).toBe('succeeded');
    const { page, errors } = await openPage(`/#/jobs/${analysis.id}`);
    await expect.poll(async () => (await pictures(page, '#partition')).map((p) => p.loaded), { timeout: 30_000 }).toEqual(['machine']);
    const [own] = await pictures(page, '#partition');
    expect(own.alt).toMatch(/^The job's partition: The job's partition: κ\(S\) = \S+; rows grouped by machine$/);
    expect(own.box.right).toBeLessThanOrEqual(WIDE.width);
    expect(await pageWidth(page)).toBeLessThanOrEqual(WIDE.width);
    await page.screenshot({ path: join(SCREENSHOTS, 'partition-analyze-1400.png'), fullPage: true });
    await page.setViewportSize(NARROW);
    await expect.poll(() => pageWidth(page), { timeout: 15_000 }).toBeLessThanOrEqual(NARROW.width);
    expect((await pictures(page, '#partition'))[0].box.right).toBeLessThanOrEqual(NARROW.width);
    await page.screenshot({ path: join(SCREENSHOTS, 'partition-analyze-400.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
