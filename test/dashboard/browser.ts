/**
 * The dashboard as a user gets it, for the browser tests: the bundle built into a directory of its
 * own (DASHBOARD_DIR), served by the real service (test/support/service.ts: a real redis-server and
 * worker), and Debian's chromium driven by playwright-core.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
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
