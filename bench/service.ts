/**
 * The service as the benchmark runs it: `node --import tsx src/main.ts` (API, one worker, a private
 * redis-server in a fresh DATA_DIR) on a free loopback port, with the environment the caller adds,
 * its log in bench/.cache. Stopped by SIGTERM (clean shutdown), killed only when that hangs.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, createReadStream, mkdtempSync, openSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { treeRssBytes } from './machineProbe.js';
import { CACHE, NODE_TSX, ROOT } from './processes.js';

export interface RunningService {
  baseUrl: string;
  process: ChildProcess;
  /** Seconds from spawn to /readyz answering 200. */
  startSeconds: number;
  exited: () => boolean;
  /** How the process ended ('code 1', 'signal SIGSEGV'), null while it runs. */
  exitStatus: () => string | null;
  stop: () => Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePromise(port));
    });
  });
}

async function waitReady(url: string, timeoutMs: number, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited()) throw new Error('the service exited before it was ready');
    try {
      const response = await fetch(url);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms`);
}

/**
 * `npm run build`: the service as `npm start` runs it (compiled by tsc, no tsx loader, whose esbuild output names
 * every function it creates at run time: a defineProperty call per closure). Throws when the build fails.
 */
export function buildService(): void {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) throw new Error(`npm run build failed (${build.status ?? build.signal})`);
}

/**
 * Starts the service with `extraEnv` over the caller's environment (REDIS_URL removed: a private redis-server): from
 * src/ under tsx, or `built` as `npm start` runs it (dist/src/main.js, built by the caller: buildService).
 */
export async function startService(
  extraEnv: NodeJS.ProcessEnv,
  logName: string,
  options: { built?: boolean } = {},
): Promise<RunningService> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'lss-bench-'));
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, ...extraEnv };
  delete env.REDIS_URL;
  const logFd = openSync(join(CACHE, logName), 'w');
  const t0 = performance.now();
  const main = options.built ? [join(ROOT, 'dist', 'src', 'main.js')] : [...NODE_TSX, join(ROOT, 'src', 'main.ts')];
  const child = spawn(process.execPath, main, { cwd: ROOT, env, stdio: ['ignore', logFd, logFd] });
  let exitStatus: string | null = null;
  const exited = (): boolean => exitStatus !== null;
  const exit = new Promise<void>((r) =>
    child.on('exit', (code, signal) => {
      exitStatus = signal === null ? `code ${code}` : `signal ${signal}`;
      r();
    }),
  );
  const stop = async (): Promise<void> => {
    if (!exited()) child.kill('SIGTERM');
    const killTimer = setTimeout(() => {
      if (!exited()) child.kill('SIGKILL');
    }, 30_000);
    await exit;
    clearTimeout(killTimer);
    closeSync(logFd);
    rmSync(dataDir, { recursive: true, force: true });
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitReady(`${baseUrl}/readyz`, 60_000, exited);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    baseUrl,
    process: child,
    startSeconds: (performance.now() - t0) / 1e3,
    exited,
    exitStatus: () => exitStatus,
    stop,
  };
}

/** fetch, its failure naming the request. */
export async function request(what: string, url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    // fetch's own message ('fetch failed') says nothing: its cause does.
    const { message, cause } = error as Error;
    throw new Error(`${what}: ${message}${cause instanceof Error ? `: ${cause.message}` : ''}`, { cause: error });
  }
}

/** Streams a Matrix Market file to POST /v1/matrices, as a client uploads one; the stored matrix's id. */
export async function uploadMatrixMarket(baseUrl: string, file: string): Promise<string> {
  const uploaded = await request('POST /v1/matrices', `${baseUrl}/v1/matrices`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>,
    duplex: 'half',
  });
  if (uploaded.status !== 201) throw new Error(`POST /v1/matrices: ${uploaded.status} ${await uploaded.text()}`);
  return ((await uploaded.json()) as { id: string }).id;
}

/**
 * Submits a job (POST /v1/jobs) and reads its document every `pollMs` until it ends: the last document and, when
 * `sampleRss`, the largest resident set of the service's process tree sampled at each read (bytes; 0 when none could
 * be read, or not sampled). Benches that time the job's own runs leave `sampleRss` off: reading /proc at each poll is
 * work beside them. `onRead` sees each document read, with the milliseconds it took (a finished advise job's document
 * at n = 10^6 is ~15 MB).
 */
export async function runJobOverHttp<T extends { status: string }>(
  service: RunningService,
  jobRequest: unknown,
  { pollMs = 1000, sampleRss = true, onRead }: { pollMs?: number; sampleRss?: boolean; onRead?: (job: T, readMs: number) => void } = {},
): Promise<{ id: string; job: T; peakRssBytes: number }> {
  const submitted = await request('POST /v1/jobs', `${service.baseUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(jobRequest),
  });
  if (submitted.status !== 202) throw new Error(`POST /v1/jobs: ${submitted.status} ${await submitted.text()}`);
  const id = ((await submitted.json()) as { id: string }).id;
  let peakRssBytes = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, pollMs));
    if (sampleRss && service.process.pid) peakRssBytes = Math.max(peakRssBytes, treeRssBytes(service.process.pid) ?? 0);
    const read = performance.now();
    const job = (await (await request(`GET /v1/jobs/${id}`, `${service.baseUrl}/v1/jobs/${id}`)).json()) as T;
    onRead?.(job, performance.now() - read);
    if (job.status === 'succeeded' || job.status === 'failed' || job.status === 'cancelled') return { id, job, peakRssBytes };
  }
}
