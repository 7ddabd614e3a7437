/**
 * A worker process killed (SIGKILL) while a job of three right-hand sides runs its second
 * algorithm (APC, after D-HBM), on dense and on CSR storage: another worker takes the job again
 * (stalled job recovery) and resumes it from its checkpoint. D-HBM's finished block run (its three
 * columns' solutions and traces) is not run again, APC's block run goes on from the checkpoint's
 * iteration, and every column's summary, solution and trace equal those of the same job run without
 * interruption. Short CHECKPOINT_INTERVAL_MS, LOCK_DURATION_MS and STALLED_INTERVAL_MS keep this to
 * seconds (as ./checkpointResume.test.ts for one right-hand side).
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/jobs/types.js';
import { generateMatrix } from '../../src/solvers/input/generators.js';
import { isBlockRunSnapshot, type BlockRunSnapshot } from '../../src/solvers/runner/snapshot.js';
import { killedWorkerSetup } from '../support/killedWorker.js';
import { withoutMeasurements } from '../support/sameAnalysis.js';
import { createJob, waitForJob } from '../support/service.js';

const SETTINGS = { LOCK_DURATION_MS: 2000, STALLED_INTERVAL_MS: 1000, WORKER_CONCURRENCY: 1, CHECKPOINT_INTERVAL_MS: 300 };
/** This file's own TMPDIR: its workers' own registry of running jobs, so that each job runs alone on every core. */
const setup = killedWorkerSetup(SETTINGS, 'lss-rhs-checkpoint-tmp-');

const n = 100;
const K = 3;
const A = generateMatrix({ generator: 'gaussian', n, mean: 0, seed: 23 });
const rows = Array.from({ length: n }, (_, i) => Array.from(A.data.subarray(i * n, (i + 1) * n)));
const entries = rows.flatMap((row, i) => row.map((value, j) => [i, j, value]));
const rhs = Array.from({ length: K }, (_, j) => Array.from({ length: n }, (_, i) => Math.sin((j + 1) * (i + 1))));
/** Seconds of each block run, to the iteration cap (the tolerance is below the rounding floor). */
const MAX_ITERATIONS = 40_000;
const jobOf = (matrix: unknown) => ({
  type: 'solve',
  matrix,
  partition: { machines: 4 },
  rhs,
  algorithms: ['dhbm', 'apc'],
  options: { tolerance: 1e-300, maxIterations: MAX_ITERATIONS, stopOnStagnation: false },
});

/** The result without wall times, and every column's solution and trace, through the API. */
async function outputsOf(job: Job): Promise<unknown> {
  const runs = Object.fromEntries(
    Object.entries(job.result!.runs).map(([id, run]) => [
      id,
      { ...run, wallTimeMs: 0, columns: run.columns!.map((column) => ({ ...column, wallTimeMs: 0 })) },
    ]),
  );
  const outputs: Record<string, unknown> = {};
  for (const algorithm of job.algorithms) {
    for (let column = 0; column < K; column++) {
      for (const part of ['solution', 'trace']) {
        const response = await setup.service.app.inject({
          method: 'GET',
          url: `/v1/jobs/${job.id}/runs/${algorithm}/${part}?column=${column}`,
        });
        expect(response.statusCode).toBe(200);
        outputs[`${algorithm} ${column} ${part}`] = response.json();
      }
    }
  }
  return { analysis: withoutMeasurements(job.result!.analysis!), runs, outputs };
}

describe.each([
  { storage: 'dense', matrix: { format: 'dense', data: rows } },
  { storage: 'CSR', matrix: { format: 'coo', rows: n, cols: n, entries } },
])('a worker killed in the middle of a job of three right-hand sides ($storage)', ({ matrix }) => {
  it(
    "resumes the block run under way without running the finished one again, to the uninterrupted job's columns",
    { timeout: 300_000 },
    async () => {
      const service = setup.service;
      const workerProcess = setup.spawnWorker();
      const { job } = await createJob(service.app, jobOf(matrix));
      // A checkpoint taken during APC's block run, the second: D-HBM's is among the finished ones.
      await setup.checkpointDuring(job.id, 'apc');
      await setup.kill(workerProcess);
      // Nothing writes it any more: this is what the retry starts from.
      const saved = (await setup.checkpointOf(job.id))!;
      expect(saved.runs.map((run) => run.algorithm)).toEqual(['dhbm']);
      expect(saved.runs[0].otherColumns).toHaveLength(K - 1);
      expect(saved.runs[0].summary.columns).toHaveLength(K);
      expect(isBlockRunSnapshot(saved.current!)).toBe(true);
      const current = saved.current as BlockRunSnapshot;
      expect(current.columns.map((column) => ('running' in column ? column.running.iteration : -1))).toEqual(
        Array.from({ length: K }, () => current.iteration),
      );

      const resumed = await setup.rescue(job.id);
      // APC again, from the checkpoint's iteration on, not from 0; D-HBM is not run again.
      expect(resumed.progress).toMatchObject({ algorithm: 'apc' });
      expect(resumed.progress!.iteration!).toBeGreaterThan(current.iteration);

      const done = await waitForJob(service.app, job.id, { timeoutMs: 120_000 });
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(done.attempts).toBe(2);
      for (const algorithm of ['dhbm', 'apc'] as const) {
        expect(done.result!.runs[algorithm]!.columns!.map((column) => column.iterations)).toEqual([
          MAX_ITERATIONS,
          MAX_ITERATIONS,
          MAX_ITERATIONS,
        ]);
      }
      expect(await setup.checkpointOf(job.id)).toBeNull();

      // The same job, never interrupted: the same columns, bit for bit.
      const { job: reference } = await createJob(service.app, jobOf(matrix));
      const uninterrupted = await waitForJob(service.app, reference.id, { timeoutMs: 120_000 });
      expect(uninterrupted.status).toBe('succeeded');
      expect(uninterrupted.attempts).toBe(1);
      expect(await outputsOf(done)).toEqual(await outputsOf(uninterrupted));
      await setup.stopRescuer();
    },
  );
});
