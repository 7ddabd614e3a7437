/**
 * Fault: Redis stopped for 10 s while clients keep submitting and reading jobs, then started again
 * (same port, same data directory, as a restarted redis-server would be). Meanwhile every request
 * answers, and answers 503 (never a hang, never a 500); the service recovers by itself (no restart
 * of its own), and every job it accepted (202) before, during or after the outage ends `succeeded`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import type { Job } from '../../src/jobs/types.js';
import { REDIS_SERVER_BIN, startTestService, waitForJob, type TestService } from '../support/service.js';

const OUTAGE_MS = 10_000;
/** A request still unanswered after this is a hang (the fail-fast connection answers 503 within about 2 s). */
const HANG_MS = 8000;

let dataDir = '';
let redis: EmbeddedRedis | null = null;
let service: TestService | null = null;

afterAll(async () => {
  await service?.close();
  await redis?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function restartRedis(port: number): Promise<EmbeddedRedis> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await startEmbeddedRedis({ bin: REDIS_SERVER_BIN, port, dataDir, startTimeoutMs: 10_000 });
    } catch (error) {
      // The port may still be held for a moment by the stopped server.
      if (attempt > 40) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

interface Answer {
  /** Redis up; down; restarted but the service not ready again yet; ready again. */
  phase: 'before' | 'outage' | 'recovering' | 'after';
  what: string;
  status: number | 'hang';
}

describe('Redis stopped for 10 s under load', () => {
  it('answers 503 meanwhile, recovers by itself, and loses no accepted job', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lss-fault-redis-'));
    redis = await startEmbeddedRedis({ bin: REDIS_SERVER_BIN, dataDir });
    const port = redis.port;
    service = await startTestService({ LOCK_DURATION_MS: 5000, STALLED_INTERVAL_MS: 2000 }, { redis });
    const app = service.app;

    let phase: Answer['phase'] = 'before';
    const answers: Answer[] = [];
    const accepted: string[] = [];
    let seed = 0;
    const timed = async (what: string, request: () => Promise<{ statusCode: number }>): Promise<number | 'hang'> => {
      let timer: NodeJS.Timeout | undefined;
      const hang = new Promise<'hang'>((resolve) => (timer = setTimeout(() => resolve('hang'), HANG_MS)));
      const status = await Promise.race([request().then((response) => response.statusCode), hang]);
      clearTimeout(timer);
      answers.push({ phase, what, status });
      return status;
    };

    // Two clients: one submits small jobs, one reads jobs it was told about and lists them.
    let running = true;
    const submitter = (async () => {
      while (running) {
        const body = {
          type: 'analyze',
          matrix: { format: 'generator', generator: 'gaussian', n: 12, seed: ++seed },
          partition: { machines: 3 },
        };
        let id = '';
        const status = await timed('POST /v1/jobs', async () => {
          const response = await app.inject({ method: 'POST', url: '/v1/jobs', payload: body });
          if (response.statusCode === 202) id = response.json<Job>().id;
          return response;
        });
        if (status === 202) accepted.push(id);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const reader = (async () => {
      while (running) {
        const id = accepted[accepted.length - 1];
        if (id) await timed('GET /v1/jobs/{id}', () => app.inject({ url: `/v1/jobs/${id}` }));
        await timed('GET /v1/jobs', () => app.inject({ url: '/v1/jobs?limit=5' }));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    await new Promise((resolve) => setTimeout(resolve, 2000));
    phase = 'outage';
    await redis.stop();
    redis = null;
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    redis = await restartRedis(port);
    phase = 'recovering';
    // Recovers by itself: ready again, and accepting jobs again.
    const deadline = Date.now() + 30_000;
    while ((await app.inject({ url: '/readyz' })).statusCode !== 200 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
    phase = 'after';
    const acceptedBeforeRecovery = accepted.length;
    while (accepted.length < acceptedBeforeRecovery + 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    running = false;
    await Promise.all([submitter, reader]);

    const during = answers.filter((answer) => answer.phase === 'outage' || answer.phase === 'recovering');
    const statuses = (list: Answer[]): string[] => [...new Set(list.map((answer) => `${answer.what} ${answer.status}`))].sort();
    // The requests sent once Redis was down (the first one may still have reached it).
    expect(during.filter((answer) => answer.status === 503).length).toBeGreaterThan(10);
    expect(during.filter((answer) => answer.status === 'hang')).toEqual([]);
    expect(statuses(during.filter((answer) => answer.status !== 503 && answer.status !== 200 && answer.status !== 202))).toEqual([]);
    expect(statuses(answers.filter((answer) => !during.includes(answer) && answer.status !== 200 && answer.status !== 202))).toEqual([]);
    expect(accepted.length).toBeGreaterThan(acceptedBeforeRecovery);

    // No accepted job lost: each one ends succeeded (those caught mid-run by the outage run again).
    for (const id of accepted) {
      const job = await waitForJob(app, id, { timeoutMs: 120_000 });
      expect(job.status, `${id}: ${JSON.stringify(job.error)}`).toBe('succeeded');
    }
    const { items } = (await app.inject({ url: '/v1/jobs?limit=100' })).json<{ items: { id: string }[] }>();
    const listed = new Set(items.map((item) => item.id));
    for (const id of accepted) expect(listed.has(id)).toBe(true);
  });
});
