/**
 * The service end to end as `npm start` runs it: `node dist/src/main.js` (API, one worker, embedded redis-server),
 * built first, on a free loopback port (bench/service.ts), loaded by bench/load.ts from a second process once per concurrency
 * level, with the CPU the service's process tree and the load generator used at each level. A first load run of
 * WARMUP_JOBS jobs is not counted: each sandboxed child's first job calibrates the time model (~3 s of CPU), and V8
 * compiles for thousands of jobs; both would otherwise weigh on the first level's CPU per job (bench/serviceCpu.ts
 * warms up the same way).
 */
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import type { LoadReport } from './load.js';
import { cpuSnapshot, foreignCores, TICKS_PER_SECOND, treeCpuTicks } from './machineProbe.js';
import { BENCH, type ChildResult, lastJson, log, NODE_TSX, runChild } from './processes.js';
import { buildService, startService, type RunningService } from './service.js';

/**
 * Jobs of the uncounted first load run. The service's CPU per job falls for its first ~3000 jobs, as V8 compiles the
 * paths a job takes in the API process and the sandboxed children (tens of functions a thousand jobs, each run once a
 * job): 10.4 ms over jobs 20-820, 7.8-7.4 after 4,000 (docs/performance.md, "The tiny job: V8's heap growth in the job processes").
 */
export const WARMUP_JOBS = 3000;
/** ... or this many seconds of it, whichever ends first. */
const WARMUP_SECONDS = 60;

export interface EndToEndOptions {
  /** Per level: at most this many jobs and this many seconds of submissions. */
  jobs: number;
  seconds: number;
  /** Closed-loop client counts, one load run each against the same service. */
  concurrency: number[];
  /** Each job: an analyze job of a Gaussian n x n matrix over m machines. */
  n: number;
  m: number;
}

/**
 * A load level with the CPU the service's process tree and the load generator used meanwhile
 * (cores, averaged over the level).
 */
export type MeasuredLoad = LoadReport & { serviceCores: number | null; loadCores: number };

export interface E2eResult {
  config: Record<string, string | number>;
  otherLoadCores: number | null;
  /** One per concurrency level. */
  loads: MeasuredLoad[];
  error: string | null;
  serviceStartSeconds: number;
}

export async function runEndToEnd(options: EndToEndOptions): Promise<E2eResult> {
  const config = loadConfig({ ...process.env, REDIS_URL: undefined });
  const shown: Record<string, string | number> = {
    start: 'node dist/src/main.js, as npm start runs it (API + one worker + embedded redis-server)',
    WORKER_CONCURRENCY: config.WORKER_CONCURRENCY,
    PROGRESS_INTERVAL_MS: config.PROGRESS_INTERVAL_MS,
    JOB_ATTEMPTS: config.JOB_ATTEMPTS,
    LOG_LEVEL: config.LOG_LEVEL,
    REDIS: 'embedded (REDIS_URL unset)',
  };
  const before = cpuSnapshot();
  const loads: MeasuredLoad[] = [];
  let error: string | null = null;
  let serviceStartSeconds = NaN;
  let service: RunningService | null = null;
  try {
    buildService();
    service = await startService({}, 'service.log', { built: true });
    serviceStartSeconds = service.startSeconds;
    const baseUrl = service.baseUrl;
    log(
      `\nend to end: service ready on ${baseUrl} after ${serviceStartSeconds.toFixed(1)} s; ` +
        `per level at most ${options.jobs} jobs / ${options.seconds} s`,
    );
    const warmup = await runLoadGenerator(baseUrl, {
      ...options,
      jobs: WARMUP_JOBS,
      seconds: WARMUP_SECONDS,
      concurrency: Math.max(...options.concurrency),
    });
    const warmed = lastJson<LoadReport>(warmup, 'load.ts (warm-up)');
    if ('error' in warmed) throw new Error(`warm-up: ${warmed.error}`);
    for (const concurrency of options.concurrency) {
      const pid = service.process.pid;
      const serviceTicksBefore = pid ? treeCpuTicks(pid) : null;
      const result = await runLoadGenerator(baseUrl, { ...options, concurrency });
      const parsed = lastJson<LoadReport>(result, 'load.ts');
      if ('error' in parsed) {
        error = parsed.error;
        break;
      }
      const serviceTicksAfter = pid ? treeCpuTicks(pid) : null;
      loads.push({
        ...parsed,
        serviceCores:
          serviceTicksBefore === null || serviceTicksAfter === null
            ? null
            : (serviceTicksAfter - serviceTicksBefore) / TICKS_PER_SECOND / result.seconds,
        loadCores: parsed.loadCpuSeconds / result.seconds,
      });
      log(`  concurrency ${concurrency}: ${describeLoad(loads[loads.length - 1])}`);
    }
  } catch (thrown) {
    error = (thrown as Error).message;
  } finally {
    // Clean shutdown (SIGTERM: stop accepting, finish jobs, stop the embedded Redis); killed only if it hangs.
    await service?.stop();
  }
  return { config: shown, loads, error, serviceStartSeconds, otherLoadCores: foreignCores(before, cpuSnapshot()) };
}

/** bench/load.ts against `baseUrl` in a process of its own (its warm-up jobs: load.ts's default unless given). */
export function runLoadGenerator(
  baseUrl: string,
  load: { jobs: number; seconds: number; concurrency: number; n: number; m: number; warmup?: number },
): Promise<ChildResult> {
  const args = [
    '--base-url',
    baseUrl,
    '--jobs',
    load.jobs,
    '--seconds',
    load.seconds,
    '--concurrency',
    load.concurrency,
    '--n',
    load.n,
    '--m',
    load.m,
  ];
  if (load.warmup !== undefined) args.push('--warmup', load.warmup);
  return runChild(process.execPath, [...NODE_TSX, join(BENCH, 'load.ts'), ...args.map(String)], { timeoutMs: (load.seconds + 120) * 1000 });
}

function describeLoad(l: MeasuredLoad): string {
  const latency = l.latencyMs
    ? `latency p50 ${l.latencyMs.p50.toFixed(0)} ms, p99 ${l.latencyMs.p99.toFixed(0)} ms`
    : 'no latency (nothing succeeded)';
  const cpu = `service ${l.serviceCores === null ? '?' : l.serviceCores.toFixed(2)} cores, load generator ${l.loadCores.toFixed(2)}`;
  return (
    `${l.succeeded} succeeded, ${l.failed} failed, ${l.unfinished} unfinished in ${l.windowSeconds.toFixed(1)} s: ` +
    `${l.throughput.toFixed(1)} jobs/s; ${latency}; CPU ${cpu}`
  );
}
