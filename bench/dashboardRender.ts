/**
 * The dashboard's convergence chart render time, in Debian's chromium against the real service
 * (`npm start`'s process: API, worker, private Redis): six 2,048-point traces (a solve whose six
 * runs reach their iteration limit), twelve series with the theory lines. Prints, best and median,
 * the page's first draw (cold code) over --loads page loads and the chart rebuilt from scratch over
 * --rebuilds switches between residual and error, in ms from the data to uPlot's first draw (the
 * chart's data-render-ms), with the load average. Nothing is asserted.
 *
 *   node --import tsx bench/dashboardRender.ts [--loads 10] [--rebuilds 10]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildDashboard } from '../scripts/buildDashboard.js';
import { launchBrowser } from '../test/dashboard/browser.js';
import { runJobOverHttp, startService } from './service.js';

const TRACE_CAP = 2048;

const { values } = parseArgs({ options: { loads: { type: 'string', default: '10' }, rebuilds: { type: 'string', default: '10' } } });
const loads = Number(values.loads);
const rebuilds = Number(values.rebuilds);

function bestAndMedian(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  return `best ${sorted[0].toFixed(1)} ms, median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms (${times.length})`;
}

const directory = mkdtempSync(join(tmpdir(), 'lss-dashboard-render-'));
const built = await buildDashboard(join(directory, 'dashboard'));
const service = await startService(
  { DASHBOARD_DIR: built.outDir, TRACE_CAP: String(TRACE_CAP), AUTH_MODE: 'none' },
  'dashboard-render.log',
);
const browser = await launchBrowser();
try {
  const { id, job } = await runJobOverHttp(
    service,
    {
      type: 'solve',
      matrix: { format: 'generator', generator: 'gaussian', n: 40, seed: 3 },
      partition: { machines: 4 },
      options: { tolerance: 1e-300, maxIterations: TRACE_CAP - 1 },
    },
    { pollMs: 200, sampleRss: false },
  );
  if (job.status !== 'succeeded') throw new Error(`job ${id} ${job.status}`);

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const chart = page.locator('#convergence-chart');
  const renderMs = async (): Promise<number> => {
    await chart.and(page.locator('[data-render-ms]')).waitFor({ timeout: 30_000 });
    return Number(await chart.getAttribute('data-render-ms'));
  };
  await page.goto(`${service.baseUrl}/#/jobs/${id}`);
  const firstDraws = [await renderMs()];
  while (firstDraws.length < loads) {
    await page.reload();
    firstDraws.push(await renderMs());
  }
  const rebuildTimes: number[] = [];
  for (let k = 0; k < rebuilds; k++) {
    await page.getByRole('radio', { name: k % 2 === 0 ? /relative error/ : /relative residual/ }).check();
    rebuildTimes.push(await renderMs());
  }
  console.log(`six ${TRACE_CAP}-point traces (12 series), ms from the data to uPlot's first draw in chromium`);
  console.log(`  page's first draw:       ${bestAndMedian(firstDraws)}`);
  console.log(`  rebuilt from scratch:    ${bestAndMedian(rebuildTimes)}`);
  console.log(
    `  load average (1, 5, 15 min): ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`,
  );
} finally {
  await browser.close();
  await service.stop();
  rmSync(directory, { recursive: true, force: true });
}
