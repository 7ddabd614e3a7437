/**
 * The paper's Experiment 1 (preset experiment-1: 2 x 16 x 300 = 9,600 sample-analyses at the default
 * 300 samples) through the HTTP API, end to end (POST, the flow's chunks on separate worker processes,
 * the parent's aggregation, GET until it has succeeded), with 1 and with 2 worker processes
 * (STUDY_WORKER_CONCURRENCY=1 each, one Redis), next to the straightforward NumPy script on one core
 * (bench/studiesReference.py). Targets (issue 12 §3): HTTP with 2 workers <= 1.0 x NumPy and <= 60 s;
 * 2 workers >= 1.6 x faster than 1.
 *
 *   npx tsx bench/studies.ts [samples] [--rounds 2] [--workers 1,2] [--no-numpy]
 *
 * The sides run interleaved, `rounds` times (NumPy, 1 worker, 2 workers, then again), each on a fresh
 * Redis and fresh worker processes; the report keeps each side's best and median. A small warm-up
 * study first starts each worker's sandboxed child (a fleet's children stay up between studies).
 * The client is a real one over HTTP: POST /v1/studies, then the study's event stream
 * (GET /v1/studies/{id}/events) until its last status event. For each timed study it also reports
 * where the CPU went (this process, which hosts the API and the client; redis-server; the worker processes' main threads; their chunk children; other processes on
 * the machine) and the chunks' timeline from BullMQ (first chunk started after the POST, the workers'
 * utilization while chunks ran, the tail where a worker idled, the aggregation after the last chunk).
 * Prints a table, then the figures as one JSON line (the last line, read by bench/run.ts --studies).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { buildApp } from '../src/api/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { startEmbeddedRedis } from '../src/jobs/embeddedRedis.js';
import { RedisJobService } from '../src/jobs/redisJobService.js';
import { RedisStudyService } from '../src/jobs/studies/redisStudyService.js';
import type { ChunkReturn } from '../src/jobs/studies/chunkProcessor.js';
import type { Study } from '../src/jobs/studies/types.js';
import { childPids, cpuSnapshot, processTicks, TICKS_PER_SECOND } from './machineProbe.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    samples: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    workers: { type: 'string', default: '1,2' },
    'no-numpy': { type: 'boolean', default: false },
  },
});
const SAMPLES = Number(args.samples ?? positionals[0] ?? 300);
const ROUNDS = Number(args.rounds);
const WORKER_COUNTS = args.workers.split(',').map(Number);

export interface NumpyRun {
  seconds: number;
  analyses: number;
}

/** CPU seconds spent during one timed study, by part. */
export interface CpuShare {
  /** This process: the API (fastify, the study service, its Redis clients) and the polling client. */
  api: number;
  redis: number;
  /** The worker processes' main threads (BullMQ workers, the parent's aggregation). */
  workerMains: number;
  /** The sandboxed children that compute the chunks. */
  chunkChildren: number;
  /** Every other process on the machine (other users' load). */
  others: number | null;
}

export interface StudyRun {
  workers: number;
  seconds: number;
  chunks: number;
  /** Mean wall time of a chunk (BullMQ processedOn to finishedOn). */
  chunkSeconds: number;
  /** A chunk's time in BullMQ (active to completed) less its samples' computation: reading the study, storing the outcome. */
  chunkFixedMs: number;
  /** From the POST to the first chunk's start. */
  startSeconds: number;
  /** Busy time of the chunks over workers x the time from the first chunk's start to the last one's end. */
  utilization: number;
  /** From the last chunk but (workers - 1) ending to the last ending: when some worker had nothing left. */
  tailSeconds: number;
  /** From the last chunk's end to the study's `succeeded` as the client sees it (the parent's aggregation included). */
  endSeconds: number;
  /** Of which: the parent waiting for a worker after its last child, and its run (reading the outcomes, aggregating, storing the result). */
  parentWaitSeconds: number;
  /** Null when the parent was not yet recorded as finished when read. */
  parentRunSeconds: number | null;
  cpu: CpuShare;
}

function numpyRun(): NumpyRun {
  const run = spawnSync('python3', ['bench/studiesReference.py', String(SAMPLES)], {
    cwd: ROOT,
    env: { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1' },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`studiesReference.py failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as NumpyRun;
}

interface TreeTicks {
  mains: number;
  children: number;
}

function workerTicks(mains: readonly ChildProcess[]): TreeTicks {
  let children = 0;
  for (const main of mains) for (const child of childPids(main.pid!)) children += processTicks(child);
  return { mains: mains.reduce((sum, main) => sum + processTicks(main.pid!), 0), children };
}

async function timeStudy(workers: number): Promise<StudyRun> {
  const redis = await startEmbeddedRedis({ bin: process.env.REDIS_SERVER_BIN ?? 'redis-server' });
  const config: Config = { ...loadConfig({}), LOG_LEVEL: 'silent', REDIS_URL: redis.url };
  const logger = pino({ level: 'silent' });
  const jobService = await RedisJobService.start(config, logger);
  const studyService = await RedisStudyService.start(config, logger);
  const app = await buildApp({ config, jobService, studyService, logger });
  const children: ChildProcess[] = [];
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const chunkQueue = new Queue(`${config.STUDY_QUEUE_NAME}-chunks`, { connection, prefix: config.KEY_PREFIX });
  const parentQueue = new Queue(config.STUDY_QUEUE_NAME, { connection, prefix: config.KEY_PREFIX });
  try {
    for (let k = 0; k < workers; k++) {
      const env = { ...process.env, REDIS_URL: redis.url, LOG_LEVEL: 'warn', STUDY_WORKER_CONCURRENCY: '1', WORKER_CONCURRENCY: '1' };
      children.push(
        spawn(process.execPath, ['--import', 'tsx', 'src/jobs/workerMain.ts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] }),
      );
    }
    while ((await chunkQueue.getWorkers()).length < workers) await new Promise((resolve) => setTimeout(resolve, 100));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    // A client as the README shows one: POST, then the study's event stream until its last status event.
    const run = async (body: object): Promise<{ id: string; postedAt: number; succeededAt: number }> => {
      const postedAt = Date.now();
      const created = await fetch(`${base}/v1/studies`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (created.status !== 202) throw new Error(await created.text());
      const { id } = (await created.json()) as Study;
      const events = await fetch(`${base}/v1/studies/${id}/events`);
      const text = await events.text(); // The stream ends after the study's last status event.
      const succeededAt = Date.now();
      const statuses = [...text.matchAll(/^event: status\ndata: (.*)$/gm)].map(
        (match) => (JSON.parse(match[1]) as { status: string }).status,
      );
      const last = statuses[statuses.length - 1];
      if (last !== 'succeeded') throw new Error(`study ${last ?? 'without a status event'}`);
      return { id, postedAt, succeededAt };
    };
    // Warm-up: a few chunks per worker start every sandboxed child.
    await run({ preset: 'experiment-1', samples: 25 * workers, grid: { mean: [0] } });

    const machineBefore = cpuSnapshot();
    const apiBefore = process.cpuUsage();
    const redisBefore = processTicks(redis.pid);
    const workersBefore = workerTicks(children);
    const { id, postedAt, succeededAt } = await run({ preset: 'experiment-1', samples: SAMPLES });
    const apiUsage = process.cpuUsage(apiBefore);
    const workersAfter = workerTicks(children);
    const redisTicks = processTicks(redis.pid) - redisBefore;
    const machineAfter = cpuSnapshot();

    const ours =
      (apiUsage.user + apiUsage.system) / 1e6 +
      (redisTicks + workersAfter.mains - workersBefore.mains + workersAfter.children - workersBefore.children) / TICKS_PER_SECOND;
    const machineSeconds =
      machineBefore && machineAfter ? (machineAfter.machineBusyTicks - machineBefore.machineBusyTicks) / TICKS_PER_SECOND : null;

    const parent = await parentQueue.getJob(id);
    const jobs = (await chunkQueue.getJobs(['completed'], 0, -1)).filter((job) => job.id?.startsWith(`${id}-`));
    const spans = jobs.map((job) => [job.processedOn ?? 0, job.finishedOn ?? 0] as const);
    const computed = jobs.reduce((sum, job) => sum + ((job.returnvalue as ChunkReturn | null)?.computeMs ?? 0), 0);
    const firstStart = Math.min(...spans.map(([start]) => start));
    const ends = spans.map(([, end]) => end).sort((a, b) => a - b);
    const lastEnd = ends[ends.length - 1];
    const busy = spans.reduce((sum, [start, end]) => sum + (end - start), 0);
    return {
      workers,
      seconds: (succeededAt - postedAt) / 1e3,
      chunks: jobs.length,
      chunkSeconds: busy / jobs.length / 1e3,
      chunkFixedMs: (busy - computed) / jobs.length,
      startSeconds: (firstStart - postedAt) / 1e3,
      utilization: busy / (workers * (lastEnd - firstStart)),
      tailSeconds: (lastEnd - ends[Math.max(0, ends.length - workers)]) / 1e3,
      endSeconds: (succeededAt - lastEnd) / 1e3,
      parentWaitSeconds: ((parent?.processedOn ?? lastEnd) - lastEnd) / 1e3,
      // The study's last status event can arrive before BullMQ has recorded the parent as finished.
      parentRunSeconds: parent?.finishedOn && parent.processedOn ? (parent.finishedOn - parent.processedOn) / 1e3 : null,
      cpu: {
        api: (apiUsage.user + apiUsage.system) / 1e6,
        redis: redisTicks / TICKS_PER_SECOND,
        workerMains: (workersAfter.mains - workersBefore.mains) / TICKS_PER_SECOND,
        chunkChildren: (workersAfter.children - workersBefore.children) / TICKS_PER_SECOND,
        others: machineSeconds === null ? null : Math.max(0, machineSeconds - ours),
      },
    };
  } finally {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    await chunkQueue.close();
    await parentQueue.close();
    connection.disconnect();
    await app.close();
    await studyService.close();
    await jobService.close();
    await redis.stop();
  }
}

function best(values: number[]): number {
  return Math.min(...values);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function describe(run: StudyRun): string {
  const c = run.cpu;
  return (
    `${run.workers} worker(s): ${run.seconds.toFixed(2)} s; ${run.chunks} chunks of ${run.chunkSeconds.toFixed(2)} s ` +
    `(fixed ${run.chunkFixedMs.toFixed(1)} ms), ` +
    `first after ${run.startSeconds.toFixed(2)} s, utilization ${(100 * run.utilization).toFixed(1)}%, tail ${run.tailSeconds.toFixed(2)} s, ` +
    `end ${run.endSeconds.toFixed(2)} s (parent waited ${run.parentWaitSeconds.toFixed(2)}, ran ${run.parentRunSeconds?.toFixed(2) ?? 'n/a'}); CPU s: chunks ${c.chunkChildren.toFixed(2)}, worker mains ${c.workerMains.toFixed(2)}, ` +
    `API ${c.api.toFixed(2)}, redis ${c.redis.toFixed(2)}, other processes ${c.others?.toFixed(2) ?? '?'}`
  );
}

const numpyRuns: NumpyRun[] = [];
const studyRuns = new Map<number, StudyRun[]>(WORKER_COUNTS.map((count) => [count, []]));
for (let round = 0; round < ROUNDS; round++) {
  if (!args['no-numpy']) {
    numpyRuns.push(numpyRun());
    console.log(`  round ${round + 1}: NumPy ${numpyRuns[numpyRuns.length - 1].seconds.toFixed(2)} s`);
  }
  for (const count of WORKER_COUNTS) {
    const run = await timeStudy(count);
    studyRuns.get(count)!.push(run);
    console.log(`  round ${round + 1}: ${describe(run)}`);
  }
}

const seconds = (count: number) => studyRuns.get(count)?.map((run) => run.seconds) ?? [];
const numpySeconds = numpyRuns.map((run) => run.seconds);
const most = Math.max(...WORKER_COUNTS);
const least = Math.min(...WORKER_COUNTS);
const report = {
  samples: SAMPLES,
  analyses: 2 * 16 * SAMPLES,
  rounds: ROUNDS,
  loadAverage: (await import('node:os')).loadavg(),
  numpySeconds: numpySeconds.length ? best(numpySeconds) : null,
  numpyMedianSeconds: numpySeconds.length ? median(numpySeconds) : null,
  httpOneWorkerSeconds: studyRuns.has(1) ? best(seconds(1)) : null,
  httpOneWorkerMedianSeconds: studyRuns.has(1) ? median(seconds(1)) : null,
  httpTwoWorkersSeconds: studyRuns.has(2) ? best(seconds(2)) : null,
  httpTwoWorkersMedianSeconds: studyRuns.has(2) ? median(seconds(2)) : null,
  /** The most workers' best time over NumPy's best. */
  ratioToNumpy: numpySeconds.length ? best(seconds(most)) / best(numpySeconds) : null,
  /** Per round (side by side): fewest workers' time over most workers', best and median. */
  scaling: most > least ? best(seconds(least)) / best(seconds(most)) : null,
  scalingMedian: most > least ? median(seconds(least).map((t, k) => t / seconds(most)[k])) : null,
  runs: Object.fromEntries(studyRuns),
};
console.log(
  `Experiment 1, ${report.analyses} analyses, best of ${ROUNDS}: NumPy (one core) ${report.numpySeconds?.toFixed(1) ?? '-'} s; ` +
    WORKER_COUNTS.map((count) => `HTTP ${count} worker(s) ${best(seconds(count)).toFixed(1)} s`).join(', '),
);
console.log(
  `  ratio to NumPy (${most} workers) ${report.ratioToNumpy?.toFixed(2) ?? '-'} (target <= 1.0, and <= 60 s); ` +
    `scaling ${least} -> ${most} workers ${report.scaling?.toFixed(2) ?? '-'}x best, ${report.scalingMedian?.toFixed(2) ?? '-'}x median of rounds (target >= 1.6)`,
);
console.log(JSON.stringify(report));
