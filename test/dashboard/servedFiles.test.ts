/**
 * What the service serves besides the API: the dashboard's files (pre-compressed, cached by
 * content hash, the initial page weight within its 250 KB budget) and the operators' queue board
 * at /admin/queues over the jobs' and the studies' queues (read-only unless QUEUE_BOARD_READ_ONLY=false, enforced by the board's own API).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, startTestService, type TestService } from '../support/service.js';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { buildTestDashboard, type BuiltDashboard } from './browser.js';

/** The budget for what a first visit loads, compressed (docs/dashboard.md). */
const INITIAL_PAGE_BUDGET_BYTES = 250 * 1024;

let dashboard: BuiltDashboard;
let redis: EmbeddedRedis;

beforeAll(async () => {
  dashboard = await buildTestDashboard();
  redis = await startTestRedis();
});

afterAll(async () => {
  await redis?.stop();
  dashboard?.remove();
});

describe('dashboard files', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ DASHBOARD_DIR: dashboard.outDir }, { worker: false, redis });
  });
  afterAll(() => service?.close());

  it('serves / and its hashed assets compressed, the page revalidated and the assets cached for good', async () => {
    const page = await service.app.inject({ method: 'GET', url: '/', headers: { 'accept-encoding': 'br, gzip' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-encoding']).toBe('br');
    expect(page.headers['cache-control']).toBe('no-cache');
    const html = brotliDecompressSync(page.rawPayload).toString('utf8');
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]);
    expect(assets).toHaveLength(2);
    // No inline script or style: the page lives under a CSP allowing 'self' only.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);

    for (const asset of assets) {
      const response = await service.app.inject({ method: 'GET', url: asset, headers: { 'accept-encoding': 'gzip' } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-encoding']).toBe('gzip');
      expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(response.headers['content-type']).toMatch(asset.endsWith('.js') ? /javascript/ : /text\/css/);
      expect(gunzipSync(response.rawPayload).length).toBeGreaterThan(1000);
    }
    const plain = await service.app.inject({ method: 'GET', url: assets[0] });
    expect(plain.headers['content-encoding']).toBeUndefined();
  });

  it('keeps the initial page within 250 KB compressed', () => {
    for (const weight of dashboard.initial)
      console.log(
        `dashboard: ${weight.file.split('/').pop()}: ${weight.bytes} B, gzip ${weight.gzipBytes} B, brotli ${weight.brotliBytes} B`,
      );
    console.log(`dashboard: initial page weight gzip ${dashboard.initialGzipBytes} B, brotli ${dashboard.initialBrotliBytes} B`);
    expect(dashboard.initial).toHaveLength(3);
    expect(dashboard.initialGzipBytes).toBeLessThan(INITIAL_PAGE_BUDGET_BYTES);
  });

  it('leaves every other path to the API: unknown ones are its 404 problem, and the compressed copies have no route of their own', async () => {
    for (const url of ['/nope', '/assets/nope.js', '/index.html.gz']) {
      const response = await service.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  it('says how to build the dashboard when the bundle is missing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'lss-no-dashboard-'));
    const bare = await startTestService({ DASHBOARD_DIR: empty }, { worker: false, redis });
    try {
      const response = await bare.app.inject({ method: 'GET', url: '/' });
      expect(response.statusCode).toBe(200);
      expect(response.body).toContain('npm run build');
    } finally {
      await bare.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

interface BoardQueues {
  queues: { name: string; readOnlyMode: boolean }[];
}

describe('queue board at /admin/queues', () => {
  it('shows the queue read-only by default, and refuses the actions', async () => {
    const service = await startTestService({}, { worker: false, redis });
    try {
      const page = await service.app.inject({ method: 'GET', url: '/admin/queues' });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      const queues = await service.app.inject({ method: 'GET', url: '/admin/queues/api/queues?activeQueue=jobs&page=1&jobsPerPage=10' });
      expect(queues.statusCode).toBe(200);
      const board = queues.json<BoardQueues>();
      // The jobs' two queues (every job, the small-job slots') and the studies' two (parents, chunks), all read-only.
      expect(board.queues.map((queue) => [queue.name, queue.readOnlyMode]).sort()).toEqual(
        [
          service.config.QUEUE_NAME,
          `${service.config.QUEUE_NAME}-small`,
          service.config.STUDY_QUEUE_NAME,
          `${service.config.STUDY_QUEUE_NAME}-chunks`,
        ]
          .map((name) => [name, true])
          .sort(),
      );
      const pause = await service.app.inject({ method: 'PUT', url: `/admin/queues/api/queues/${service.config.QUEUE_NAME}/pause` });
      expect(pause.statusCode).toBe(405);
    } finally {
      await service.close();
    }
  });

  it('lets operators act when QUEUE_BOARD_READ_ONLY is false', async () => {
    const service = await startTestService({ QUEUE_BOARD_READ_ONLY: false, KEY_PREFIX: 'board' }, { worker: false, redis });
    try {
      const queues = await service.app.inject({ method: 'GET', url: '/admin/queues/api/queues?activeQueue=jobs&page=1&jobsPerPage=10' });
      expect(queues.json<BoardQueues>().queues.find((queue) => queue.name === service.config.QUEUE_NAME)?.readOnlyMode).toBe(false);
      const pause = await service.app.inject({ method: 'PUT', url: `/admin/queues/api/queues/${service.config.QUEUE_NAME}/pause` });
      expect(pause.statusCode).toBeLessThan(300);
      const resume = await service.app.inject({ method: 'PUT', url: `/admin/queues/api/queues/${service.config.QUEUE_NAME}/resume` });
      expect(resume.statusCode).toBeLessThan(300);
    } finally {
      await service.close();
    }
  });
});
