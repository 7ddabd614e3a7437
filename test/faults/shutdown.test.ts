/**
 * Fault: shutdown ends within SHUTDOWN_TIMEOUT_MS (plus a second) whatever Redis does.
 * The service is busy (a long job running, a study's chunks running, an event stream open) when
 *  - its whole process group gets SIGTERM, as a terminal's Ctrl-C gives SIGINT, so its embedded
 *    redis-server exits first: every worker and connection must stop retrying Redis;
 *  - its redis-server was killed (SIGKILL) before the service gets SIGTERM.
 * Each time the service exits within the bound and leaves no process behind (redis-server,
 * sandboxed children).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Study } from '../../src/jobs/studies/types.js';
import type { Job } from '../../src/jobs/types.js';
import { isAlive } from '../support/processes.js';
import { GOOD_JOB } from '../support/requests.js';
import { openEventStream } from '../support/sse.js';
import { api, descendants, freePort, killTree, spawnService, waitForJob, waitUntilReady, type ServiceProcess } from './serviceProcess.js';

const SHUTDOWN_TIMEOUT_MS = 3000;
const SETTINGS = { SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), WORKER_CONCURRENCY: '1', STUDY_WORKER_CONCURRENCY: '1' };

const dirs: string[] = [];
const started: ServiceProcess[] = [];

afterAll(async () => {
  for (const service of started) if (service.process.exitCode === null && service.process.signalCode === null) await killTree(service);
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const LONG_SOLVE = {
  type: 'solve',
  matrix: { format: 'generator', generator: 'gaussian', n: 100, seed: 3 },
  partition: { machines: 4 },
  algorithms: ['dgd'],
  options: { tolerance: 1e-300, maxIterations: 1_000_000, stopOnStagnation: false },
};

/** A busy service in a process group of its own: a job solving, a study under way, an event stream open. */
async function busyService(
  first?: (service: ServiceProcess) => Promise<void>,
): Promise<{ service: ServiceProcess; tree: number[]; redisPid: number }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'lss-fault-shutdown-'));
  dirs.push(dataDir);
  const service = spawnService({ ...SETTINGS, DATA_DIR: dataDir, PORT: String(await freePort()) }, { processGroup: true });
  started.push(service);
  await waitUntilReady(service);
  await first?.(service);
  const job = await api<Job>(service, 'POST', '/v1/jobs', LONG_SOLVE);
  expect(job.status).toBe(202);
  const study = await api<Study>(service, 'POST', '/v1/studies', { preset: 'experiment-1', grid: { m: [2, 12] }, samples: 300 });
  expect(study.status, JSON.stringify(study.body)).toBe(202);
  await waitForJob(service, job.body.id, (j) => j.progress?.phase === 'solve');
  const stream = await openEventStream(`${service.baseUrl}/v1/jobs/${job.body.id}/events`);
  await stream.waitFor((event) => event.event === 'status');
  const redisPid = Number(/"redisPid":(\d+)/.exec(service.output())?.[1]);
  expect(isAlive(redisPid)).toBe(true);
  const tree = [service.process.pid!, ...descendants(service.process.pid!)];
  expect(tree).toContain(redisPid);
  expect(tree.length).toBeGreaterThanOrEqual(4); // the service, redis-server, a job's and a study chunk's sandboxed children
  return { service, tree, redisPid };
}

/** Milliseconds from now until the service has exited, and its exit code. */
async function timeToExit(service: ServiceProcess): Promise<{ ms: number; code: number | null }> {
  const start = performance.now();
  const code = await Promise.race([service.exited, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 60_000))]);
  if (code === 'hung') throw new Error(`the service was still running 60 s after the signal:\n${service.output().slice(-4000)}`);
  return { ms: performance.now() - start, code };
}

async function expectNothingLeft(tree: number[]): Promise<void> {
  const deadline = Date.now() + 5000;
  while (tree.some(isAlive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(tree.filter(isAlive)).toEqual([]);
}

describe('shutdown ends within SHUTDOWN_TIMEOUT_MS plus a second, whatever Redis does', () => {
  it('SIGTERM to the whole process group: redis-server exits first', async () => {
    const { service, tree } = await busyService();
    process.kill(-service.process.pid!, 'SIGTERM');
    const { ms } = await timeToExit(service);
    expect(ms, service.output().slice(-4000)).toBeLessThanOrEqual(SHUTDOWN_TIMEOUT_MS + 1000);
    await expectNothingLeft(tree);
  });

  it('SIGINT to the whole process group, as Ctrl-C', async () => {
    const { service, tree } = await busyService();
    process.kill(-service.process.pid!, 'SIGINT');
    const { ms } = await timeToExit(service);
    expect(ms, service.output().slice(-4000)).toBeLessThanOrEqual(SHUTDOWN_TIMEOUT_MS + 1000);
    await expectNothingLeft(tree);
  });

  it('SIGTERM to the service alone, Redis healthy, a callback hanging: it exits 0 within the bound, nothing said wrong', async () => {
    // A receiver that never answers, its delivery under way at the signal.
    const arrived: string[] = [];
    const receiver = createServer((request) => arrived.push(request.headers['webhook-id'] as string));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const notify = { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret: 'a-long-random-secret-string' };
    const { service, tree } = await busyService(async (started) => {
      const quick = await api<Job>(started, 'POST', '/v1/jobs', { ...GOOD_JOB, notify });
      expect(quick.status).toBe(202);
      const deadline = Date.now() + 30_000;
      while (arrived.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(arrived).toEqual([`msg_job_${quick.body.id}`]);
    });
    service.process.kill('SIGTERM');
    const { ms, code } = await timeToExit(service);
    const output = service.output();
    expect(ms, output.slice(-4000)).toBeLessThanOrEqual(SHUTDOWN_TIMEOUT_MS + 1000);
    expect(code, output.slice(-4000)).toBe(0);
    // The running jobs are left to resume (a warning); the shutdown itself finished, with Redis there all along.
    expect(output).toContain('shutdown complete');
    expect(output).not.toContain('shutdown did not finish in time');
    await expectNothingLeft(tree);
    receiver.closeAllConnections();
    receiver.close();
  });

  it('redis-server killed, then SIGTERM to the service alone', async () => {
    const { service, tree, redisPid } = await busyService();
    process.kill(redisPid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the connections notice and start retrying
    service.process.kill('SIGTERM');
    const { ms } = await timeToExit(service);
    expect(ms, service.output().slice(-4000)).toBeLessThanOrEqual(SHUTDOWN_TIMEOUT_MS + 1000);
    await expectNothingLeft(tree);
  });
});
