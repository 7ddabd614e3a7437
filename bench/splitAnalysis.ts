/**
 * The split analysis (Algorithm 2 over BullMQ workers, src/jobs/splitAnalysis/) against the analysis
 * on one worker, end to end: a private redis-server, the API (src/api/server.ts) and worker processes
 * (src/jobs/workerMain.ts, WORKER_CONCURRENCY=1 each), one `analyze` job of a generated Gaussian
 * matrix, timed from POST /v1/jobs to the job's end as a client sees it.
 *  - one worker: the job's analysis in one piece (SPLIT_ANALYSIS_MIN_N above n), as before the split;
 *  - N workers: the same job split (SPLIT_ANALYSIS_MIN_N = n), on N worker processes.
 * Target (issue 12 §3): n = 4000, m = 400 split over 2 worker processes at least 1.5 x faster than on one.
 *
 *   node --import tsx bench/splitAnalysis.ts [--n 4000] [--m 400] [--mean 1] [--workers 2]
 *
 * Prints one JSON line: both wall times, the ratio, and the split job's parts and workers; both
 * analyses' theta_H and kappa(S) (they must be equal).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbeddedRedis } from '../src/jobs/embeddedRedis.js';
import type { Job } from '../src/jobs/types.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

const n = option('n', 4000);
const m = option('m', 400);
const mean = option('mean', 1);
const splitWorkers = option('workers', 2);

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
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

interface Measurement {
  seconds: number;
  job: Job;
}

/** One job on a fresh Redis, API and `workers` worker processes; `split` chooses the analysis' rule. */
async function measure(workers: number, split: boolean): Promise<Measurement> {
  const redis = await startEmbeddedRedis({ bin: process.env.REDIS_SERVER_BIN ?? 'redis-server' });
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    REDIS_URL: redis.url,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    WORKER_CONCURRENCY: '1',
    SPLIT_ANALYSIS_MIN_N: String(split ? n : n + 1),
    SPLIT_ANALYSIS_MIN_MACHINES: '2',
    JOB_TIMEOUT_MS: String(4 * 3600_000),
  };
  const processes = [start('src/api/server.ts', env), ...Array.from({ length: workers }, () => start('src/jobs/workerMain.ts', env))];
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitReady(`${base}/readyz`);
    // Let the workers connect before the job is queued.
    await new Promise((r) => setTimeout(r, 3000));
    const body = {
      type: 'analyze',
      matrix: { format: 'generator', generator: 'gaussian', n, mean, std: 1, seed: 1 },
      partition: { machines: m },
    };
    const t0 = performance.now();
    const created = (await (
      await fetch(`${base}/v1/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    ).json()) as Job;
    for (;;) {
      const job = (await (await fetch(`${base}/v1/jobs/${created.id}`)).json()) as Job;
      if (job.status === 'succeeded' || job.status === 'failed' || job.status === 'cancelled') {
        const seconds = (performance.now() - t0) / 1000;
        if (job.status !== 'succeeded') throw new Error(`job ${job.status}: ${JSON.stringify(job.error)}`);
        return { seconds, job };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    for (const child of processes) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    for (const child of processes) if (child.exitCode === null) child.kill('SIGKILL');
    await redis.stop();
  }
}

const one = await measure(1, false);
const split = await measure(splitWorkers, true);
const h = (job: Job) => job.result!.analysis!;
console.log(
  JSON.stringify({
    n,
    m,
    mean,
    oneWorkerSeconds: Number(one.seconds.toFixed(2)),
    splitSeconds: Number(split.seconds.toFixed(2)),
    workers: splitWorkers,
    speedup: Number((one.seconds / split.seconds).toFixed(3)),
    target: 1.5,
    split: split.job.result!.split,
    thetaH: [h(one.job).heterogeneity.thetaH, h(split.job).heterogeneity.thetaH],
    kappaS: [h(one.job).conditioning.kappaS, h(split.job).conditioning.kappaS],
  }),
);
