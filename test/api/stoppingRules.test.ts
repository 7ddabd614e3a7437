/**
 * Warm starts and stopping rules through HTTP, with a real Redis and worker: warm starts (n numbers, or a
 * finished job's run: its solution given back converges within 3 iterations, dense and CSR; the
 * refusals at /options/initialGuess), each stopping rule and status, D-HBM's transient told apart
 * from divergence, and the job's `summary` of converged and unconverged runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ProblemDetails, RunSummary } from '../../src/jobs/types.js';
import { ALGORITHM_IDS } from '../../src/solvers/algorithms/registry.js';
import { createJob, runJob, startTestService, type TestService } from '../support/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
}, 60_000);

afterAll(async () => {
  await service?.close();
});

/** Tridiagonal n = 60: 178 of 3600 entries (< 5%), so its COO form runs on CSR and its dense form on dense storage. */
const N = 60;
const ROWS = Array.from({ length: N }, (_, i) =>
  Array.from({ length: N }, (_, j) => (i === j ? 4 + Math.cos(i) : Math.abs(i - j) === 1 ? -1 : 0)),
);
const ENTRIES = ROWS.flatMap((row, i) => row.flatMap((v, j) => (v === 0 ? [] : [[i, j, v]])));
const MATRICES = {
  dense: { format: 'dense', data: ROWS },
  CSR: { format: 'coo', rows: N, cols: N, entries: ENTRIES },
} as const;

/** diag(sigma_j), sigma over [1, 1e3] geometrically: D-HBM's residual grows ~ 300-fold before it falls. */
const STIFF = Array.from({ length: 16 }, (_, i) => Array.from({ length: 16 }, (_, j) => (i === j ? Math.pow(1e3, i / 15) : 0)));

const run = (job: Job, algorithm: (typeof ALGORITHM_IDS)[number]): RunSummary => {
  const summary = job.result?.runs[algorithm];
  if (!summary) throw new Error(`job ${job.id} has no ${algorithm} run: ${JSON.stringify(job.error ?? job.status)}`);
  return summary;
};

async function refused(body: unknown): Promise<ProblemDetails> {
  const { response } = await createJob(service.app, body);
  expect(response.statusCode, response.body).toBe(422);
  return response.json<ProblemDetails>();
}

describe('warm start: options.initialGuess', () => {
  for (const [storage, matrix] of Object.entries(MATRICES)) {
    it(`${storage}: every algorithm started from a finished APC run converges within 3 iterations`, async () => {
      const cold = await runJob(service.app, { type: 'solve', matrix, partition: { machines: 4 }, options: { tolerance: 1e-10 } });
      expect(cold.status).toBe('succeeded');
      expect(cold.storage).toBe(storage === 'CSR' ? 'csr' : 'dense');
      for (const algorithm of ALGORITHM_IDS) expect(run(cold, algorithm).status).toBe('converged');
      expect(run(cold, 'apc').iterations).toBeGreaterThan(3);

      const warm = await runJob(service.app, {
        type: 'solve',
        matrix,
        partition: { machines: 4 },
        options: { tolerance: 1e-10, initialGuess: { job: cold.id, algorithm: 'apc' } },
      });
      expect(warm.status).toBe('succeeded');
      expect(warm.options.initialGuess).toEqual({ kind: 'job', job: cold.id, algorithm: 'apc' });
      for (const algorithm of ALGORITHM_IDS) {
        expect(run(warm, algorithm).status, algorithm).toBe('converged');
        expect(run(warm, algorithm).iterations, algorithm).toBeLessThanOrEqual(3);
      }
      expect(warm.summary).toEqual({ converged: [...ALGORITHM_IDS], notConverged: [] });
    }, 120_000);
  }

  it('n numbers: the runs start there (x(0) = x* converges at once)', async () => {
    const job = await runJob(service.app, {
      type: 'solve',
      matrix: MATRICES.dense,
      partition: { machines: 4 },
      algorithms: ['dgd', 'cimmino'],
      options: { initialGuess: new Array<number>(N).fill(1) },
    });
    expect(job.options.initialGuess).toEqual({ kind: 'vector' });
    expect(run(job, 'dgd')).toMatchObject({ status: 'converged', iterations: 0 });
    expect(run(job, 'cimmino')).toMatchObject({ status: 'converged', iterations: 0 });
  });

  it('refused with 422 at /options/initialGuess: another length, an unknown job, a job of another n, a run that does not exist', async () => {
    const base = { type: 'solve', matrix: MATRICES.dense, partition: { machines: 4 } };
    const short = await refused({ ...base, options: { initialGuess: [1, 2, 3] } });
    expect(short).toMatchObject({ code: 'dimension-mismatch', errors: [{ pointer: '/options/initialGuess' }] });
    const nan = await refused({ ...base, options: { initialGuess: [...new Array<number>(N - 1).fill(0), 'NaN'] } });
    expect(nan.errors?.[0]?.pointer).toBe(`/options/initialGuess/${N - 1}`);

    const unknown = await refused({ ...base, options: { initialGuess: { job: '01ARZ3NDEKTSV4RRFFQ69G5FAV', algorithm: 'apc' } } });
    expect(unknown).toMatchObject({ code: 'invalid-parameter', errors: [{ pointer: '/options/initialGuess' }] });

    const small = await runJob(service.app, {
      type: 'solve',
      matrix: {
        format: 'dense',
        data: [
          [2, 1],
          [1, 3],
        ],
      },
      partition: { machines: 2 },
      algorithms: ['apc'],
    });
    const otherN = await refused({ ...base, options: { initialGuess: { job: small.id, algorithm: 'apc' } } });
    expect(otherN).toMatchObject({ code: 'dimension-mismatch', errors: [{ pointer: '/options/initialGuess' }] });
    const notRun = await refused({ ...base, options: { initialGuess: { job: small.id, algorithm: 'dgd' } } });
    expect(notRun).toMatchObject({ code: 'invalid-parameter', errors: [{ pointer: '/options/initialGuess' }] });
    expect(notRun.detail).toMatch(/not requested/);

    // A tall system (6 x 2): x has one entry per column, and the refusal says so (it read "n = 2 rows").
    const tall = {
      type: 'solve',
      matrix: {
        format: 'dense',
        data: [
          [1, 0],
          [0, 1],
          [1, 1],
          [1, 2],
          [2, 1],
          [3, 1],
        ],
      },
      partition: { machines: 2 },
    };
    const perRow = await refused({ ...tall, options: { initialGuess: [0, 0, 0, 0, 0, 0] } });
    expect(perRow).toMatchObject({ code: 'dimension-mismatch', errors: [{ pointer: '/options/initialGuess' }] });
    expect(perRow.detail).toBe("options.initialGuess has 6 entries but x has n = 2 (the matrix's columns).");
    const perColumn = await runJob(service.app, { ...tall, algorithms: ['dhbm'], options: { initialGuess: [1, 1] } });
    expect(perColumn.status).toBe('succeeded');
    expect(perColumn.result!.runs.dhbm?.status).toBe('converged');
  });
});

describe('stopping rules and statuses', () => {
  it('stagnated, non-finite, converged by absoluteTolerance; the summary lists the runs that did not converge', async () => {
    const job = await runJob(service.app, {
      type: 'solve',
      matrix: MATRICES.CSR,
      partition: { machines: 4 },
      algorithms: ['apc', 'dgd'],
      options: { tolerance: 1e-30, parameters: { dgd: { alpha: 1e308 } } },
    });
    expect(job.status).toBe('succeeded');
    expect(run(job, 'apc').status).toBe('stagnated');
    expect(run(job, 'apc').attainableAccuracy).toBeGreaterThan(0);
    expect(run(job, 'apc').stopReason).toMatch(/eps kappa\(A\)/);
    expect(run(job, 'dgd').status).toBe('non-finite');
    expect(job.summary?.notConverged.map((entry) => entry.status)).toEqual(['stagnated', 'non-finite']);
    expect(job.summary?.converged).toEqual([]);

    const absolute = await runJob(service.app, {
      type: 'solve',
      matrix: MATRICES.CSR,
      partition: { machines: 4 },
      algorithms: ['cimmino'],
      options: { tolerance: 1e-30, absoluteTolerance: 1e-6 },
    });
    expect(absolute.options).toMatchObject({ tolerance: 1e-30, absoluteTolerance: 1e-6, divergenceTolerance: 1e5 });
    expect(run(absolute, 'cimmino').status).toBe('converged');
    expect(run(absolute, 'cimmino').stopReason).toMatch(/absoluteTolerance/);
  });

  it('max-wall-time, diverged at a divergenceTolerance, converged with errorTolerance (and 422 without a known solution)', async () => {
    const wall = await runJob(service.app, {
      type: 'solve',
      matrix: MATRICES.dense,
      partition: { machines: 4 },
      algorithms: ['apc'],
      options: { tolerance: 1e-300, maxWallTimeMs: 1e-6 },
    });
    expect(run(wall, 'apc').status).toBe('max-wall-time');

    const diverged = await runJob(service.app, {
      type: 'solve',
      matrix: MATRICES.dense,
      partition: { machines: 4 },
      algorithms: ['dgd'],
      options: { parameters: { dgd: { alpha: 1 } }, divergenceTolerance: 10 },
    });
    expect(run(diverged, 'dgd').status).toBe('diverged');
    expect(run(diverged, 'dgd').stopReason).toMatch(/divergenceTolerance 1e\+1 times/);
    expect(run(diverged, 'dgd').growth?.cause).toBe('divergence');
    expect(diverged.status).toBe('succeeded');
    expect(diverged.summary?.notConverged).toEqual([{ algorithm: 'dgd', status: 'diverged', stopReason: run(diverged, 'dgd').stopReason }]);

    const withError = await runJob(service.app, {
      type: 'solve',
      matrix: MATRICES.dense,
      partition: { machines: 4 },
      algorithms: ['cimmino'],
      options: { tolerance: 1e-2, errorTolerance: 1e-10 },
    });
    expect(run(withError, 'cimmino').status).toBe('converged');
    expect(run(withError, 'cimmino').relativeError as number).toBeLessThanOrEqual(1e-10);
    const noSolution = await refused({
      type: 'solve',
      matrix: MATRICES.dense,
      rhs: new Array<number>(N).fill(1),
      partition: { machines: 4 },
      options: { errorTolerance: 1e-8 },
    });
    expect(noSolution.errors?.[0]?.pointer).toBe('/options/errorTolerance');
  });

  it("D-HBM's transient: below the default divergenceTolerance, explained with its predicted peak; the job succeeds with a summary", async () => {
    const job = await runJob(service.app, {
      type: 'solve',
      matrix: { format: 'dense', data: STIFF },
      partition: { machines: 4 },
      algorithms: ['dhbm', 'apc'],
      options: { maxIterations: 600 },
    });
    expect(job.status).toBe('succeeded');
    const dhbm = run(job, 'dhbm');
    expect(dhbm.status).toBe('max-iterations');
    expect(dhbm.growth).toMatchObject({ cause: 'transient' });
    expect(dhbm.growth?.factor).toBeGreaterThan(100);
    expect(dhbm.growth?.predictedFactor).toBeGreaterThanOrEqual(dhbm.growth?.factor as number);
    expect(dhbm.stopReason).toMatch(/transient growth of D-HBM, not divergence/);
    expect(job.summary).toEqual({
      converged: ['apc'],
      notConverged: [{ algorithm: 'dhbm', status: 'max-iterations', stopReason: dhbm.stopReason }],
    });
    // Let run on, the same D-HBM converges: the default divergenceTolerance (1e5) is above its transient.
    const long = await runJob(service.app, {
      type: 'solve',
      matrix: { format: 'dense', data: STIFF },
      partition: { machines: 4 },
      algorithms: ['dhbm'],
    });
    expect(run(long, 'dhbm').status).toBe('converged');
    expect(run(long, 'dhbm').growth?.cause).toBe('transient');
  });
});
