/**
 * The whole service as `npm start` runs it (src/main.ts: API, worker and its private redis-server
 * keeping its data in DATA_DIR), as a separate process tree the fault tests can kill.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Job } from '../../src/jobs/types.js';
import { childPids, isAlive } from '../support/processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface ServiceProcess {
  readonly process: ChildProcess;
  readonly baseUrl: string;
  /** What it wrote (pino's JSON lines), for failure messages. */
  output(): string;
  /** Resolves with the exit code once it has exited. */
  exited: Promise<number | null>;
}

/**
 * Starts `node --import tsx src/main.ts` (no REDIS_URL: the embedded, durable redis-server).
 * `processGroup`: as the leader of a process group of its own (its redis-server and sandboxed
 * children in it), which a signal can reach as a whole, as Ctrl-C in a terminal does.
 */
export function spawnService(env: Record<string, string>, options: { processGroup?: boolean } = {}): ServiceProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env };
  delete childEnv.REDIS_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.processGroup ?? false,
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { process: child, baseUrl: `http://127.0.0.1:${env.PORT}`, output: () => output, exited };
}

/** Polls /readyz until 200. */
export async function waitUntilReady(service: ServiceProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (service.process.exitCode !== null) throw new Error(`the service exited (${service.process.exitCode}):\n${service.output()}`);
    try {
      if ((await fetch(`${service.baseUrl}/readyz`)).status === 200) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`the service was not ready in time:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every process below `pid`, deepest first. */
export function descendants(pid: number): number[] {
  const below: number[] = [];
  for (const child of childPids(pid)) below.push(...descendants(child), child);
  return below;
}

/** SIGKILL to the whole tree at once (the service, its redis-server, its sandboxed children), then waits for all to be gone. */
export async function killTree(service: ServiceProcess): Promise<number[]> {
  const pid = service.process.pid!;
  const tree = [pid, ...descendants(pid)];
  for (const member of tree) {
    try {
      process.kill(member, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await service.exited;
  const deadline = Date.now() + 10_000;
  while (tree.some(isAlive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return tree;
}

export async function api<T>(
  service: ServiceProcess,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T, headers: response.headers };
}

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

export async function waitForJob(
  service: ServiceProcess,
  id: string,
  until: (job: Job) => boolean = (job) => FINISHED.has(job.status),
  timeoutMs = 120_000,
): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await api<Job>(service, 'GET', `/v1/jobs/${id}`);
    if (status !== 200) throw new Error(`GET /v1/jobs/${id}: ${status} ${JSON.stringify(body)}`);
    if (until(body)) return body;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${body.status} after the timeout:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
