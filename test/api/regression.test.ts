/**
 * Regression jobs through HTTP (a real Redis and a worker): the `regression` generator makes a tall
 * system of noisy labels, solved without an rhs, against NumPy's lstsq of the same data
 * (scripts/regressionReference.py regenerates it through scripts/regressionData.ts and writes
 * test/fixtures/regression.json). With sigma = 0 the labels are exactly A x_true and the errors are
 * measured against x_true; bad settings are a 422 naming the field.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/jobs/types.js';
import { relativeDifference as relativeDistance } from '../solvers/sparse/support.js';
import { createJob, getSolution, startTestService, waitForJob, type TestService } from '../support/service.js';

interface Reference {
  leastSquares: number[];
  blockWeighted: number[];
  kappaS: number;
  kappaAtA: number;
  leastSquaresResidual: number;
}
const fixture = JSON.parse(readFileSync(new URL('../fixtures/regression.json', import.meta.url), 'utf8')) as {
  job: Reference & { spec: Record<string, number | string>; machines: number };
};

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

const solution = (id: string, algorithm: string): Promise<number[]> => getSolution(service.app, id, algorithm);

describe('regression jobs over HTTP', () => {
  it('rows 400, n 20, m 4, skew 2, sigma 0.1 without rhs: the labels are b, D-HBM reaches lstsq, APC x_W', async () => {
    const { spec, machines } = fixture.job;
    const { response, job } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'generator', ...spec },
      partition: { machines },
      algorithms: ['apc', 'dhbm'],
      options: { tolerance: 1e-12, maxIterations: 5000 },
    });
    expect(response.statusCode, response.body).toBe(202);
    // The job counts rows; its document echoes the generator's settings as given.
    expect(job.n).toBe(400);
    expect(job.matrix).toMatchObject({ format: 'generator', n: 400, generator: spec });
    const done: Job = await waitForJob(service.app, job.id, { timeoutMs: 300_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    const { runs } = done.result!;
    const analysis = done.result!.analysis!;
    expect(analysis.rows).toBe(400);
    expect(analysis.n).toBe(20);
    expect(analysis.consistency?.consistent).toBe(false);
    expect(Math.abs(analysis.consistency!.leastSquaresResidual / fixture.job.leastSquaresResidual - 1)).toBeLessThan(1e-8);
    expect(Math.abs(analysis.conditioning.kappaAtA / fixture.job.kappaAtA - 1)).toBeLessThan(1e-9);
    expect(Math.abs(analysis.conditioning.kappaS / fixture.job.kappaS - 1)).toBeLessThan(1e-9);
    expect(runs.dhbm!.target).toBe('least-squares');
    expect(runs.apc!.target).toBe('block-weighted');
    expect(relativeDistance(await solution(job.id, 'dhbm'), fixture.job.leastSquares)).toBeLessThan(1e-8);
    expect(relativeDistance(await solution(job.id, 'apc'), fixture.job.blockWeighted)).toBeLessThan(1e-8);
  }, 600_000);

  it('sigma 0: a consistent system whose errors are measured against x_true (errorTolerance accepted)', async () => {
    const { response, job } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'generator', generator: 'regression', rows: 120, n: 30, skew: 1, scale: [1, 2, 0.5], seed: 3 },
      partition: { machines: 3 },
      algorithms: ['apc', 'dhbm'],
      options: { tolerance: 1e-10, errorTolerance: 1e-8, maxIterations: 5000 },
    });
    expect(response.statusCode, response.body).toBe(202);
    const done = await waitForJob(service.app, job.id, { timeoutMs: 300_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.result!.analysis!.consistency?.consistent).toBe(true);
    for (const algorithm of ['apc', 'dhbm'] as const) {
      const run = done.result!.runs[algorithm]!;
      expect(run.status, run.stopReason).toBe('converged');
      expect(run.relativeError).toBeLessThan(1e-8);
    }
  }, 600_000);

  it('a given rhs replaces the labels', async () => {
    const rhs = Array.from({ length: 60 }, (_, k) => Math.sin(k));
    const { response, job } = await createJob(service.app, {
      type: 'analyze',
      matrix: { format: 'generator', generator: 'regression', rows: 60, n: 10, seed: 4 },
      partition: { machines: 3 },
      rhs,
    });
    expect(response.statusCode, response.body).toBe(202);
    const done = await waitForJob(service.app, job.id, { timeoutMs: 300_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    // sin(k) is not in the range of a 60 x 10 A: far from consistent, unlike the default noiseless labels.
    expect(done.result!.analysis!.consistency!.leastSquaresResidual).toBeGreaterThan(0.1);
  }, 600_000);

  it('answers 422 naming the field: fewer rows than features, scales not one per machine', async () => {
    const wide = await createJob(service.app, {
      type: 'analyze',
      matrix: { format: 'generator', generator: 'regression', rows: 10, n: 20 },
      partition: { machines: 2 },
    });
    expect(wide.response.statusCode, wide.response.body).toBe(422);
    expect(wide.response.body).toContain('/matrix/rows');
    const scales = await createJob(service.app, {
      type: 'analyze',
      matrix: { format: 'generator', generator: 'regression', rows: 40, n: 4, scale: [1, 2] },
      partition: { machines: 4 },
    });
    expect(scales.response.statusCode, scales.response.body).toBe(422);
    expect(scales.response.body).toContain('/matrix/scale');
    const negative = await createJob(service.app, {
      type: 'analyze',
      matrix: { format: 'generator', generator: 'regression', rows: 40, n: 4, skew: -1 },
      partition: { machines: 4 },
    });
    expect(negative.response.statusCode).toBe(400);
  }, 60_000);
});
