/**
 * The dashboard as a user gets it, for the browser tests: the bundle built into a directory of its
 * own (DASHBOARD_DIR), served by the real service (test/support/service.ts: a real redis-server and
 * worker), and Debian's chromium driven by playwright-core.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { buildDashboard, type DashboardBuild } from '../../scripts/buildDashboard.js';

/** Where the test run writes its screenshots (git-ignored), for a reviewer to look at. */
export const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-output', 'dashboard');

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** Debian's chromium: the binary itself (the /usr/bin/chromium wrapper script also works), or CHROMIUM_PATH. */
export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  const found = candidates.find((path): path is string => !!path && existsSync(path));
  if (!found) throw new Error('No chromium found: apt-get install chromium (.ci/run does), or set CHROMIUM_PATH');
  return found;
}

export function launchBrowser(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface BuiltDashboard extends DashboardBuild {
  remove(): void;
}

export async function buildTestDashboard(): Promise<BuiltDashboard> {
  const directory = mkdtempSync(join(tmpdir(), 'lss-dashboard-'));
  const built = await buildDashboard(join(directory, 'dashboard'));
  mkdirSync(SCREENSHOTS, { recursive: true });
  return { ...built, remove: () => rmSync(directory, { recursive: true, force: true }) };
}

/**
 * A new page at `url`, with the page's errors collected: uncaught exceptions and console errors,
 * except the 503 a service without the study queue answers to the list's request for studies.
 */
export async function openDashboardPage(
  browser: Browser,
  url: string,
  viewport: { width: number; height: number },
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 503/.test(message.text())) errors.push(message.text());
  });
  await page.goto(url);
  return { page, errors };
}

/** The page's width as laid out (wider than the viewport: it scrolls sideways). */
export const pageWidth = (page: Page): Promise<number> =>
  page.evaluate(
    () => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth,
  );

/**
 * For a test file: before its tests, the dashboard built, a service serving it (`start` given the
 * bundle's directory) and chromium; after them, all three gone. Read the service and browser inside tests.
 */
export function dashboardInBrowser<S extends { close(): Promise<void> }>(
  start: (dashboardDir: string) => Promise<S>,
): { readonly service: S; readonly browser: Browser } {
  let dashboard: BuiltDashboard | undefined;
  let service: S | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    dashboard = await buildTestDashboard();
    service = await start(dashboard.outDir);
    browser = await launchBrowser();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await service?.close();
    dashboard?.remove();
  });
  return {
    get service(): S {
      return service!;
    },
    get browser(): Browser {
      return browser!;
    },
  };
}
