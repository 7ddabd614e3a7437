/**
 * Fault: the whole `npm start` process tree (service, its redis-server, the sandboxed
 * child) killed with SIGKILL in the middle of a long D-HBM run, then of a long APC run, each time
 * started again on the same DATA_DIR. The run resumes from its checkpoint: the first progress
 * report after the restart is within one CHECKPOINT_INTERVAL_MS of where the run was (not at 0), and
 * the job ends with the result, solution and trace of the same job run without interruption.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withoutMeasurements } from '../support/sameAnalysis.js';
import type { Job } from '../../src/jobs/types.js';
import { api, freePort, killTree, spawnService, waitForJob, waitUntilReady, type ServiceProcess } from './serviceProcess.js';

const CHECKPOINT_INTERVAL_MS = 1000;
// Short locks: the interrupted job's lock expires, and the restarted worker takes it back, within seconds.
/**
 * Each run must outlast a kill on the fastest host, so on a loaded CI host (two test files on two
 * cores) the test takes 80-120 s: a timeout of its own, well above that.
 */
const TEST_TIMEOUT_MS = 300_000;
const SETTINGS = {
  LOCK_DURATION_MS: '2000',
  STALLED_INTERVAL_MS: '1000',
  WORKER_CONCURRENCY: '1',
  CHECKPOINT_INTERVAL_MS: String(CHECKPOINT_INTERVAL_MS),
  MAX_ITERATIONS_LIMIT: '10000000',
};

let dataDir = '';
/**
 * The services' own TMPDIR, hence their own registry of running jobs (src/jobs/runningJobs.ts): each
 * job runs alone on every core, whatever else runs on this host. The analysis' last bits depend on
 * the thread count (OpenBLAS), so the uninterrupted reference must have the same threads.
 */
let privateTmp = '';
const started: ServiceProcess[] = [];

afterAll(async () => {
  for (const service of started) if (service.process.exitCode === null && service.process.signalCode === null) await killTree(service);
  for (const dir of [dataDir, privateTmp]) if (dir) await rm(dir, { recursive: true, force: true });
});

async function start(port: number): Promise<ServiceProcess> {
  const service = spawnService({ ...SETTINGS, DATA_DIR: dataDir, PORT: String(port), TMPDIR: privateTmp });
  started.push(service);
  await waitUntilReady(service);
  return service;
}

/** Seconds of iterations, to the cap (the tolerance is below the rounding floor). */
const longSolve = (algorithm: 'dhbm' | 'apc', maxIterations: number) => ({
  type: 'solve',
  matrix: { format: 'generator', generator: 'gaussian', n: 100, seed: 29 },
  partition: { machines: 4 },
  algorithms: [algorithm],
  options: { tolerance: 1e-300, maxIterations, stopOnStagnation: false },
});

async function submit(service: ServiceProcess, body: unknown): Promise<string> {
  const { status, body: job } = await api<Job>(service, 'POST', '/v1/jobs', body);
  expect(status).toBe(202);
  return job.id;
}

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The result without wall times, the solution and the trace of a finished job. */
async function outputsOf(service: ServiceProcess, job: Job): Promise<unknown> {
  const runs = Object.fromEntries(Object.entries(job.result!.runs).map(([id, run]) => [id, { ...run, wallTimeMs: 0 }]));
  const [algorithm] = job.algorithms;
  const solution = await api(service, 'GET', `/v1/jobs/${job.id}/runs/${algorithm}/solution`);
  const trace = await api(service, 'GET', `/v1/jobs/${job.id}/runs/${algorithm}/trace`);
  return { analysis: withoutMeasurements(job.result!.analysis!), runs, solution: solution.body, trace: trace.body };
}

/**
 * Runs `body` on `service` until a few checkpoint intervals into its solve, kills the whole tree,
 * starts the service again and checks where the run goes on. Returns the restarted service and
 * the finished job.
 */
async function killMidRunAndRestart(
  service: ServiceProcess,
  port: number,
  body: unknown,
): Promise<{ restarted: ServiceProcess; done: Job }> {
  const id = await submit(service, body);
  const first = await waitForJob(service, id, (job) => job.progress?.phase === 'solve' || FINISHED.has(job.status));
  expect(first.status).toBe('running');
  await sleep(2 * CHECKPOINT_INTERVAL_MS);
  // How fast the run goes now (iterations per ms): its progress reports over the last half second
  // before the kill, each report's iteration and time taken together (the speed since the solve
  // began is lower: it counts the run's start).
  const reports = new Map<number, number>();
  let before = first;
  for (const end = Date.now() + CHECKPOINT_INTERVAL_MS / 2; Date.now() < end || reports.size < 2;) {
    const current = (await api<Job>(service, 'GET', `/v1/jobs/${id}`)).body;
    expect(current.status).toBe('running');
    const at = Date.parse(current.progress!.updatedAt);
    reports.set(at, current.progress!.iteration!);
    if (at >= Date.parse(before.progress!.updatedAt)) before = current;
    await sleep(50);
  }
  const times = [...reports.keys()].sort((a, b) => a - b);
  const [earliest, latest] = [times[0], times[times.length - 1]];
  const perMs = (reports.get(latest)! - reports.get(earliest)!) / (latest - earliest);
  expect(perMs).toBeGreaterThan(0);

  await killTree(service);
  const restarted = await start(port);
  const resumed = await waitForJob(
    restarted,
    id,
    (job) => (job.attempts === 2 && job.progress?.phase === 'solve') || FINISHED.has(job.status),
  );
  expect(resumed.status).toBe('running');
  // The last checkpoint was at most one interval (plus the time slice that looked at it) before the
  // last report read here; the first report of the new attempt is past it.
  expect(resumed.progress!.iteration!).toBeGreaterThanOrEqual(before.progress!.iteration! - perMs * (CHECKPOINT_INTERVAL_MS + 100));
  const done = await waitForJob(restarted, id);
  expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
  expect(done.attempts).toBe(2);
  return { restarted, done };
}

describe('kill -9 of the whole service mid-run, then a restart on the same DATA_DIR', () => {
  it(
    'resumes a long D-HBM run and a long APC run from their checkpoints, to the results of uninterrupted runs',
    async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'lss-fault-checkpoint-'));
      privateTmp = await mkdtemp(join(tmpdir(), 'lss-fault-tmp-'));
      const port = await freePort();
      const dhbm = longSolve('dhbm', 1_500_000);
      const apc = longSolve('apc', 600_000);

      const first = await start(port);
      const afterDhbm = await killMidRunAndRestart(first, port, dhbm);
      const afterApc = await killMidRunAndRestart(afterDhbm.restarted, port, apc);
      const service = afterApc.restarted;

      for (const [body, interrupted] of [
        [dhbm, afterDhbm.done],
        [apc, afterApc.done],
      ] as const) {
        const reference = await waitForJob(service, await submit(service, body));
        expect(reference.status).toBe('succeeded');
        expect(reference.attempts).toBe(1);
        expect(await outputsOf(service, interrupted)).toEqual(await outputsOf(service, reference));
      }
    },
    TEST_TIMEOUT_MS,
  );
});
