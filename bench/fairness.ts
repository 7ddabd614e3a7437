/**
 * Start latency of small jobs under a flood (issue 23 §2, src/jobs/apiKeys/fairShare.ts), end to end: a
 * private redis-server, the API (src/api/server.ts, AUTH_MODE=keys) and one worker process
 * (src/jobs/workerMain.ts, the default 2 regular slots and 1 small-job slot). One key queues the
 * issue's flood (60 solves: n = 300, six algorithms, 200,000 iterations, about a minute each) and
 * holds both regular slots; then `--keys` other keys, in a closed loop each (submit a tiny analyze
 * job, wait for its end, pause 0-500 ms), run `--small` small jobs in all. A small job's start
 * latency is its document's startedAt - createdAt (the API's clock and the worker child's, one host).
 * Before issue 23 such a job waited for a flood job to end (62 s in the issue).
 *
 *   node --import tsx bench/fairness.ts [--flood 60] [--small 200] [--keys 4]
 *
 * Prints one JSON line: p50, p99 and max start latency (ms), the flood's jobs running at the end
 * (2: it held both regular slots throughout) and finished meanwhile.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startEmbeddedRedis } from '../src/jobs/embeddedRedis.js';
import { ApiKeyStore } from '../src/jobs/apiKeys/apiKeyStore.js';
import type { Job } from '../src/jobs/types.js';
import { freePort } from './service.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

const floodJobs = option('flood', 60);
const smallJobs = option('small', 200);
const smallKeys = option('keys', 4);

const LONG_SOLVE = {
  type: 'solve',
  partition: { machines: 10 },
  algorithms: ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'],
  options: { maxIterations: 200_000, tolerance: 1e-300 },
};
const TINY_ANALYZE = { type: 'analyze', partition: { machines: 2 } };
const gaussian = (n: number, seed: number) => ({ format: 'generator', generator: 'gaussian', n, mean: 1, std: 1, seed });

export interface FairnessReport {
  flood: number;
  smallJobs: number;
  keys: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  /** The five longest latencies, with the order in which their jobs were submitted (0 first). */
  slowest: { ms: number; submitted: number }[];
  /** Flood jobs running when the last small job ended: 2 means the flood held both regular slots throughout. */
  floodRunningAtEnd: number;
  floodFinished: number;
  seconds: number;
  loadAverage: number[];
}

function start(entry: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function waitReady(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready after 60 s`);
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<FairnessReport> {
  const redis = await startEmbeddedRedis({ bin: process.env.REDIS_SERVER_BIN ?? 'redis-server' });
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    REDIS_URL: redis.url,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    AUTH_MODE: 'keys',
    RATE_LIMIT_PER_SECOND: '100000',
  };
  // Keys mode starts only with an admin key; the others are the flooder and the small jobs' keys.
  const connection = new Redis(redis.url);
  const keys = new ApiKeyStore(connection, process.env.KEY_PREFIX ?? 'lss');
  await keys.create({ name: 'bench admin', admin: true });
  const flooder = (await keys.create({ name: 'flooder' })).key;
  const others = await Promise.all(Array.from({ length: smallKeys }, (_, k) => keys.create({ name: `small ${k}` })));
  connection.disconnect();

  const processes = [start('src/api/server.ts', env), start('src/jobs/workerMain.ts', env)];
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitReady(`${base}/readyz`);
    const call = async <T>(key: string, path: string, body?: object): Promise<T> => {
      const response = await fetch(`${base}${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as T;
    };

    const flood: string[] = [];
    for (let k = 0; k < floodJobs; k++)
      flood.push((await call<Job>(flooder, '/v1/jobs', { ...LONG_SOLVE, matrix: gaussian(300, k + 1) })).id);
    const floodRunning = async () =>
      (await Promise.all(flood.map((id) => call<Job>(flooder, `/v1/jobs/${id}`)))).reduce(
        (counts, job) => ({
          running: counts.running + (job.status === 'running' ? 1 : 0),
          finished: counts.finished + (job.status === 'succeeded' ? 1 : 0),
        }),
        { running: 0, finished: 0 },
      );
    const deadline = Date.now() + 120_000;
    while ((await floodRunning()).running < 2) {
      if (Date.now() > deadline) throw new Error('the flood did not take both regular slots within 120 s');
      await sleep(100);
    }

    const t0 = performance.now();
    const latencies: number[] = [];
    const order: number[] = [];
    let submitted = 0;
    const loop = async (key: string, k: number): Promise<void> => {
      while (submitted < smallJobs) {
        const index = submitted++;
        const created = await call<Job>(key, '/v1/jobs', { ...TINY_ANALYZE, matrix: gaussian(12, 1000 * k + index) });
        let job = created;
        while (job.status === 'queued' || job.status === 'running') {
          await sleep(20);
          job = await call<Job>(key, `/v1/jobs/${created.id}`);
        }
        if (job.status !== 'succeeded' || !job.startedAt)
          throw new Error(`small job ${job.id} ${job.status}: ${JSON.stringify(job.error)}`);
        latencies.push(Date.parse(job.startedAt) - Date.parse(job.createdAt));
        order.push(index);
        await sleep(Math.random() * 500);
      }
    };
    await Promise.all(others.map((other, k) => loop(other.key, k)));
    const seconds = (performance.now() - t0) / 1000;
    const { running, finished } = await floodRunning();

    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      flood: floodJobs,
      smallJobs: latencies.length,
      keys: smallKeys,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted[sorted.length - 1],
      meanMs: Math.round(sorted.reduce((sum, x) => sum + x, 0) / sorted.length),
      slowest: latencies
        .map((ms, k) => ({ ms, submitted: order[k] }))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5),
      floodRunningAtEnd: running,
      floodFinished: finished,
      seconds: Number(seconds.toFixed(1)),
      loadAverage: loadavg().map((x) => Number(x.toFixed(2))),
    };
  } finally {
    for (const child of processes) child.kill('SIGTERM');
    await sleep(1000);
    for (const child of processes) if (child.exitCode === null) child.kill('SIGKILL');
    await redis.stop();
  }
}

const report = await main();
console.log(
  `  small jobs' start latency under a flood of ${report.flood} long solves: p50 ${report.p50Ms} ms, p99 ${report.p99Ms} ms, ` +
    `max ${report.maxMs} ms (${report.smallJobs} jobs of ${report.keys} keys in ${report.seconds} s; ` +
    `flood jobs running at the end ${report.floodRunningAtEnd}, finished ${report.floodFinished})`,
);
console.log(JSON.stringify(report));
