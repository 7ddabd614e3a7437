/**
 * Fault: the whole `npm start` process tree (service, its redis-server, the sandboxed children)
 * killed with SIGKILL in the middle of a job, then started again on the same DATA_DIR. Finished jobs
 * and their results are still there, bit for bit; the job that was running runs again to the end
 * (at-least-once: `attempts` says 2); the job that was queued runs; the list names each job once.
 * A second service on a DATA_DIR in use refuses to start, naming it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/jobs/types.js';
import { isAlive } from '../support/processes.js';
import { api, freePort, killTree, spawnService, waitForJob, waitUntilReady, type ServiceProcess } from './serviceProcess.js';

// Short locks: the interrupted job's lock expires, and the restarted worker takes it back, within seconds.
const SETTINGS = { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '1000', WORKER_CONCURRENCY: '1' };

let dataDir = '';
const started: ServiceProcess[] = [];

afterAll(async () => {
  for (const service of started) if (service.process.exitCode === null && service.process.signalCode === null) await killTree(service);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function start(port: number): Promise<ServiceProcess> {
  const service = spawnService({ ...SETTINGS, DATA_DIR: dataDir, PORT: String(port) });
  started.push(service);
  await waitUntilReady(service);
  return service;
}

const QUICK_SOLVE = {
  type: 'solve',
  matrix: { format: 'generator', generator: 'gaussian', n: 30, seed: 11 },
  partition: { machines: 3 },
  algorithms: ['apc'],
};
const LONG_SOLVE = {
  type: 'solve',
  matrix: { format: 'generator', generator: 'gaussian', n: 100, seed: 21 },
  partition: { machines: 4 },
  algorithms: ['dgd'],
  // Seconds of iterations (~5-7 s on a quiet 2-core host; the default MAX_ITERATIONS_LIMIT), long enough to be
  // killed mid-solve and to outlast a second service's start below: 400,000 (~2-3 s) ended during that start
  // once, under a loaded CI.
  options: { tolerance: 1e-15, maxIterations: 1_000_000, stopOnStagnation: false },
};

async function submit(service: ServiceProcess, body: unknown): Promise<string> {
  const { status, body: job } = await api<Job>(service, 'POST', '/v1/jobs', body);
  expect(status).toBe(202);
  return job.id;
}

describe('kill -9 of the whole service, then a restart on the same DATA_DIR', () => {
  it('keeps finished jobs and results, reruns the interrupted job, runs the queued one, lists each once', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lss-fault-data-'));
    const port = await freePort();
    const first = await start(port);

    const finishedIds = [
      await submit(first, QUICK_SOLVE),
      await submit(first, { ...QUICK_SOLVE, matrix: { ...QUICK_SOLVE.matrix, seed: 12 } }),
    ];
    const finished: Job[] = [];
    const solutions: number[][] = [];
    for (const id of finishedIds) {
      const job = await waitForJob(first, id);
      expect(job.status).toBe('succeeded');
      finished.push(job);
      solutions.push((await api<{ x: number[] }>(first, 'GET', `/v1/jobs/${id}/runs/apc/solution`)).body.x);
    }

    const interrupted = await submit(first, LONG_SOLVE);
    const queued = await submit(first, QUICK_SOLVE);
    // Until it solves (or, wrongly, ends): a job still queued when first asked is waited for, not taken as ended.
    const running = await waitForJob(
      first,
      interrupted,
      (job) => job.progress?.phase === 'solve' || (job.status !== 'running' && job.status !== 'queued'),
    );
    expect(running.status).toBe('running');
    expect((await api<Job>(first, 'GET', `/v1/jobs/${queued}`)).body.status).toBe('queued');

    // A second service on the same DATA_DIR refuses to start, naming it, and leaves the first untouched.
    const second = spawnService({ ...SETTINGS, DATA_DIR: dataDir, PORT: String(await freePort()) });
    started.push(second);
    expect(await second.exited).not.toBe(0);
    expect(second.output()).toContain(`DATA_DIR ${dataDir} is in use`);
    expect((await api<Job>(first, 'GET', `/v1/jobs/${interrupted}`)).body.status).toBe('running');

    const tree = await killTree(first);
    expect(tree.length).toBeGreaterThanOrEqual(3); // the service, its redis-server, a sandboxed child
    expect(tree.filter(isAlive)).toEqual([]);

    const restarted = await start(port);
    for (const [k, id] of finishedIds.entries()) {
      const { status, body } = await api<Job>(restarted, 'GET', `/v1/jobs/${id}`);
      expect(status).toBe(200);
      expect(body).toEqual(finished[k]);
      expect((await api<{ x: number[] }>(restarted, 'GET', `/v1/jobs/${id}/runs/apc/solution`)).body.x).toEqual(solutions[k]);
    }

    const rerun = await waitForJob(restarted, interrupted);
    expect(rerun.status, JSON.stringify(rerun.error)).toBe('succeeded');
    expect(rerun.attempts).toBe(2);
    expect(rerun.result!.runs.dgd!.iterations).toBe(LONG_SOLVE.options.maxIterations);
    const ranLater = await waitForJob(restarted, queued);
    expect(ranLater.status).toBe('succeeded');
    expect(ranLater.attempts).toBe(1);

    const { body: list } = await api<{ items: { id: string }[] }>(restarted, 'GET', '/v1/jobs?limit=100');
    const ids = list.items.map((item) => item.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...finishedIds, interrupted, queued].sort());
  });
});
