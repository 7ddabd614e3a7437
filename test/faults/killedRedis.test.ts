/**
 * Fault: the private redis-server of `npm start` killed with SIGKILL while the service runs. It is started again on
 * its port and DATA_DIR: the service answers again by itself, with every job it had, and runs new ones; the lock file
 * names the new server. Killed over and over (more than 5 times a minute), the service exits with code 1 for a process
 * manager to start it again, rather than answering 503 forever with its liveness probe ok (as a QA pass found it).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/jobs/types.js';
import { isAlive } from '../support/processes.js';
import { api, freePort, killTree, spawnService, waitForJob, waitUntilReady, type ServiceProcess } from './serviceProcess.js';

let dataDir = '';
let service: ServiceProcess | null = null;

afterAll(async () => {
  if (service && service.process.exitCode === null && service.process.signalCode === null) await killTree(service);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const QUICK_ANALYZE = {
  type: 'analyze',
  matrix: { format: 'generator', generator: 'gaussian', n: 30, seed: 5 },
  partition: { machines: 3 },
};

async function redisPid(): Promise<number> {
  return (JSON.parse(await readFile(join(dataDir, 'service.lock'), 'utf8')) as { redisPid: number }).redisPid;
}

async function untilReplaced(killed: number): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const pid = await redisPid().catch(() => killed);
    if (pid !== killed && isAlive(pid)) return pid;
    if (Date.now() > deadline) throw new Error(`redis-server ${killed} was not replaced:\n${service!.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('kill -9 of the private redis-server', () => {
  it('starts it again on its data: the service serves again with every job; killed over and over, it exits (1)', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lss-fault-redis-kill-'));
    service = spawnService({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    await waitUntilReady(service);
    const before = await api<Job>(service, 'POST', '/v1/jobs', QUICK_ANALYZE);
    expect(before.status).toBe(202);
    expect((await waitForJob(service, before.body.id)).status).toBe('succeeded');

    const first = await redisPid();
    process.kill(first, 'SIGKILL');
    const second = await untilReplaced(first);
    expect(second).not.toBe(first);
    await waitUntilReady(service);
    // What was stored before is there; a new job runs to the end.
    const kept = await api<Job>(service, 'GET', `/v1/jobs/${before.body.id}`);
    expect(kept.status).toBe(200);
    expect(kept.body.status).toBe('succeeded');
    const after = await api<Job>(service, 'POST', '/v1/jobs', { ...QUICK_ANALYZE, matrix: { ...QUICK_ANALYZE.matrix, seed: 6 } });
    expect(after.status).toBe(202);
    expect((await waitForJob(service, after.body.id)).status).toBe('succeeded');
    expect(service.output()).toMatch(/the private redis-server exited; starting it again on its data/);

    // Past 5 restarts within a minute (the first above, 4 more here, then a sixth exit): it gives up and exits with 1.
    let pid = second;
    for (let kill = 0; kill < 4; kill++) {
      process.kill(pid, 'SIGKILL');
      pid = await untilReplaced(pid);
    }
    process.kill(pid, 'SIGKILL');
    expect(await service.exited).toBe(1);
    expect(service.output()).toMatch(/cannot be kept running; exiting/);
  }, 180_000);
});
