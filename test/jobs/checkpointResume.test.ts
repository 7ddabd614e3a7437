/**
 * A worker process killed (SIGKILL) while a job's second run (APC, after D-HBM) is under way: its
 * sandboxed child exits with it, the job's lock expires, and another worker takes the job again
 * (stalled job recovery) and resumes it from its checkpoint: D-HBM's finished run is not run again,
 * APC goes on from the checkpoint's iteration (not 0), and the job ends with exactly the result,
 * solutions and traces of the same job run without interruption. The checkpoint is gone once the
 * job has finished. Short CHECKPOINT_INTERVAL_MS, LOCK_DURATION_MS and STALLED_INTERVAL_MS keep this
 * to seconds.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/jobs/types.js';
import { killedWorkerSetup } from '../support/killedWorker.js';
import { withoutMeasurements } from '../support/sameAnalysis.js';
import { createJob, getJob, waitForJob } from '../support/service.js';

const SETTINGS = { LOCK_DURATION_MS: 2000, STALLED_INTERVAL_MS: 1000, WORKER_CONCURRENCY: 1, CHECKPOINT_INTERVAL_MS: 300 };
const setup = killedWorkerSetup(SETTINGS, 'lss-checkpoint-tmp-');

/** Seconds of each run (150,000 APC iterations of this system take about a second on one core: too short to kill it midway). */
const MAX_ITERATIONS = 1_000_000;
/** Two such jobs, one of them killed and resumed: 80-120 s on a loaded CI host (two test files on two cores). */
const TEST_TIMEOUT_MS = 300_000;
const JOB = {
  type: 'solve',
  matrix: { format: 'generator', generator: 'gaussian', n: 100, seed: 23 },
  partition: { machines: 4 },
  algorithms: ['dhbm', 'apc'],
  // Seconds of iterations each, to the iteration cap (the tolerance is below the rounding floor).
  options: { tolerance: 1e-300, maxIterations: MAX_ITERATIONS, stopOnStagnation: false },
};

/** The result without wall times, the solutions and the traces of a finished job, through the API. */
async function outputsOf(job: Job): Promise<unknown> {
  const runs = Object.fromEntries(Object.entries(job.result!.runs).map(([id, run]) => [id, { ...run, wallTimeMs: 0 }]));
  const outputs: Record<string, unknown> = {};
  for (const algorithm of job.algorithms) {
    for (const part of ['solution', 'trace']) {
      const response = await setup.service.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/runs/${algorithm}/${part}` });
      expect(response.statusCode).toBe(200);
      outputs[`${algorithm} ${part}`] = response.json();
    }
  }
  return { analysis: withoutMeasurements(job.result!.analysis!), runs, outputs };
}

describe('a worker killed in the middle of a job', () => {
  it(
    "loses no more than a checkpoint interval: the retry resumes the run under way and ends with the uninterrupted job's result",
    async () => {
      const service = setup.service;
      const workerProcess = setup.spawnWorker();
      const { job } = await createJob(service.app, JOB);
      // Wait for a checkpoint taken during APC, the second run: D-HBM's is among the finished ones.
      await setup.checkpointDuring(job.id, 'apc');
      // Where the run is, and how fast it goes (iterations per ms): APC's progress reports over half a
      // second, each report's iteration and time taken together, in the order they were made.
      const reports = new Map<number, number>();
      let before = await getJob(service.app, job.id);
      for (const end = Date.now() + 500; Date.now() < end || reports.size < 2;) {
        const current = await getJob(service.app, job.id);
        expect(current.status).toBe('running');
        const progress = current.progress;
        if (progress?.algorithm === 'apc' && progress.iteration !== undefined) {
          reports.set(Date.parse(progress.updatedAt), progress.iteration);
          if (Date.parse(progress.updatedAt) >= Date.parse(before.progress?.updatedAt ?? '')) before = current;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(before.progress).toMatchObject({ phase: 'solve', algorithm: 'apc' });
      const times = [...reports.keys()].sort((a, b) => a - b);
      const [first, last] = [times[0], times[times.length - 1]];
      const perMs = (reports.get(last)! - reports.get(first)!) / (last - first);
      expect(perMs).toBeGreaterThan(0);

      await setup.kill(workerProcess);
      // Nothing writes it any more: this is what the retry starts from.
      const saved = (await setup.checkpointOf(job.id))!;
      expect(saved.runs.map((run) => run.algorithm)).toEqual(['dhbm']);
      // The runs come before the rest of the analysis: the checkpoint holds the spectral data they use.
      expect(saved.analysis).toBeNull();
      expect(saved.spectral).not.toBeNull();
      // Within one interval (and a progress interval, as the report was read) of where the run was.
      const oneInterval = perMs * (SETTINGS.CHECKPOINT_INTERVAL_MS + 250);
      expect(saved.current!.iteration).toBeGreaterThanOrEqual(before.progress!.iteration! - oneInterval);

      const resumed = await setup.rescue(job.id);
      // APC again, from the checkpoint's iteration on, not from 0; D-HBM is not run again.
      expect(resumed.progress).toMatchObject({ algorithm: 'apc' });
      expect(resumed.progress!.iteration!).toBeGreaterThan(saved.current!.iteration);
      expect(resumed.progress!.iteration!).toBeGreaterThanOrEqual(before.progress!.iteration! - oneInterval);

      const done = await waitForJob(service.app, job.id, { timeoutMs: TEST_TIMEOUT_MS });
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(done.attempts).toBe(2);
      expect(done.result!.runs.dhbm!.iterations).toBe(MAX_ITERATIONS);
      expect(done.result!.runs.apc!.iterations).toBe(MAX_ITERATIONS);
      expect(await setup.checkpointOf(job.id)).toBeNull();

      // The same job, never interrupted: the same result, bit for bit.
      const { job: reference } = await createJob(service.app, JOB);
      const uninterrupted = await waitForJob(service.app, reference.id, { timeoutMs: TEST_TIMEOUT_MS });
      expect(uninterrupted.status).toBe('succeeded');
      expect(uninterrupted.attempts).toBe(1);
      expect(await outputsOf(done)).toEqual(await outputsOf(uninterrupted));
    },
    TEST_TIMEOUT_MS,
  );
});
