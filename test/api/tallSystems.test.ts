/**
 * Tall systems (N > n) through HTTP, against a real Redis and a worker: ash608 (608 x 188, rows
 * dependent on every machine) uploaded to POST /v1/matrices and solved on CSR, and a noisy 400 x 100
 * Gaussian system inline (dense JSON rows with its rhs), whose analysis reports it inconsistent and
 * whose runs reach their own targets, checked against NumPy (scripts/tallReference.py).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, StoredMatrix } from '../../src/jobs/types.js';
import { readMatrixText, relativeDifference as relativeDistance } from '../solvers/sparse/support.js';
import { createJob, solveOverSocket, startTestService, waitForJob, type TestService } from '../support/service.js';

const ALL = ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const;

interface TallFixture {
  A: number[][];
  b: number[];
  leastSquares: number[];
  blockWeighted: number[];
  kappaS: number;
  kappaAtA: number;
  weightedDistance: number;
}
const gaussian = JSON.parse(readFileSync(new URL('../fixtures/tallGaussian.json', import.meta.url), 'utf8')) as TallFixture;
const ash608 = JSON.parse(readFileSync(new URL('../fixtures/ash608.json', import.meta.url), 'utf8')) as { ranks: number[] };

let service: TestService;

beforeAll(async () => {
  service = await startTestService({}, { listen: true });
});

afterAll(async () => {
  await service?.close();
});

async function solution(id: string, algorithm: string): Promise<number[]> {
  const response = await service.app.inject({ url: `/v1/jobs/${id}/runs/${algorithm}/solution` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ x: number[] }>().x;
}

describe('tall systems over HTTP', () => {
  it('ash608 uploaded as Matrix Market: all six algorithms reach x = ones on CSR, machine ranks reported', async () => {
    const upload = await service.app.inject({
      method: 'POST',
      url: '/v1/matrices',
      payload: readMatrixText('ash608.mtx'),
      headers: { 'content-type': 'text/plain' },
    });
    expect(upload.statusCode, upload.body).toBe(201);
    const stored = upload.json<StoredMatrix>();
    const { response, job } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'stored', id: stored.id },
      partition: { machines: 4 },
      algorithms: ALL,
      options: { tolerance: 1e-12, maxIterations: 5000 },
    });
    expect(response.statusCode, response.body).toBe(202);
    const done = await waitForJob(service.app, job.id, { timeoutMs: 300_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.storage).toBe('csr');
    // The echo says the shape (its n counts the rows; the list and the job page read "n = 608" alone before).
    expect(done.matrix).toMatchObject({ format: 'stored', id: stored.id, n: 608, cols: 188 });
    const analysis = done.result!.analysis!;
    expect(analysis.rows).toBe(608);
    expect(analysis.n).toBe(188);
    expect(analysis.machineRanks).toEqual(ash608.ranks);
    expect(analysis.consistency?.consistent).toBe(true);
    for (const algorithm of ALL) {
      const run = done.result!.runs[algorithm]!;
      expect(run.status, run.stopReason).toBe('converged');
      const x = await solution(job.id, algorithm);
      expect(Math.max(...x.map((v) => Math.abs(v - 1))), algorithm).toBeLessThan(1e-8);
    }
  }, 600_000);

  it('a noisy 400 x 100 dense system inline: inconsistent, D-HBM reaches lstsq and APC the block-weighted solution', async () => {
    const { response, job } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'dense', data: gaussian.A },
      rhs: gaussian.b,
      partition: { machines: 5 },
      algorithms: ['apc', 'dhbm'],
      options: { tolerance: 1e-12, maxIterations: 5000 },
    });
    expect(response.statusCode, response.body).toBe(202);
    const done: Job = await waitForJob(service.app, job.id, { timeoutMs: 300_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.matrix).toMatchObject({ format: 'dense', n: 400, cols: 100 });
    const { runs } = done.result!;
    const analysis = done.result!.analysis!;
    expect(analysis.consistency?.consistent).toBe(false);
    expect(Math.abs(analysis.conditioning.kappaS / gaussian.kappaS - 1)).toBeLessThan(1e-9);
    expect(Math.abs(analysis.conditioning.kappaAtA / gaussian.kappaAtA - 1)).toBeLessThan(1e-9);
    expect(analysis.recommendation.leastSquaresNote).toContain('x_W');
    expect(runs.dhbm!.target).toBe('least-squares');
    expect(runs.apc!.target).toBe('block-weighted');
    expect(relativeDistance(await solution(job.id, 'dhbm'), gaussian.leastSquares)).toBeLessThan(1e-8);
    expect(relativeDistance(await solution(job.id, 'apc'), gaussian.blockWeighted)).toBeLessThan(1e-8);
  }, 600_000);

  it('two parallel rows on a machine: the job reads back (200), its Theorem 4 bound null (infinite), every run at x_LS', async () => {
    // Rows 0 and 1 are parallel: machine 0 has rank 1, and row 1's angle to the other rows' span is 0.
    const data = [
      [1, 2, 0],
      [2, 4, 0],
      [0, 1, 1],
      [1, 0, 1],
      [1, 1, 1],
      [2, 0, 1],
    ];
    const { response, job } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'dense', data },
      partition: { machines: 3 },
      options: { tolerance: 1e-10, maxIterations: 20_000 },
    });
    expect(response.statusCode, response.body).toBe(202);
    const done: Job = await waitForJob(service.app, job.id, { timeoutMs: 120_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    const read = await service.app.inject({ url: `/v1/jobs/${job.id}` });
    expect(read.statusCode, read.body).toBe(200);
    const { runs } = done.result!;
    const analysis = done.result!.analysis!;
    expect(analysis.machineRanks).toEqual([1, 2, 2]);
    expect(analysis.bounds.theorem4KappaALowerBound).toBeNull();
    for (const [algorithm, run] of Object.entries(runs)) {
      expect(run.status, `${algorithm}: ${run.stopReason}`).toBe('converged');
      expect(relativeDistance(await solution(job.id, algorithm), [1, 1, 1])).toBeLessThan(1e-8);
    }
  }, 300_000);

  it('a zero row of a tall system, over the socket: a zero-row problem naming the row, not "singular"; the service goes on', async () => {
    // [[1, 0], [0, 0], [0, 1], [1, 1]] has full column rank: its zero row is not singularity, and is named for what it is.
    const bodies = [
      {
        format: 'dense',
        data: [
          [1, 0],
          [0, 0],
          [0, 1],
          [1, 1],
        ],
      },
      {
        format: 'coo',
        rows: 4,
        cols: 2,
        entries: [
          [0, 0, 1],
          [2, 1, 1],
          [3, 0, 1],
          [3, 1, 1],
        ],
      },
    ];
    for (const matrix of bodies) {
      const posted = await fetch(`${service.baseUrl}/v1/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'solve', matrix, rhs: [1, 0, 1, 2], partition: { machines: 2 } }),
      });
      expect(posted.status, matrix.format).toBe(202);
      const done = await waitForJob(service.app, ((await posted.json()) as Job).id, { timeoutMs: 60_000 });
      const read = await fetch(`${service.baseUrl}/v1/jobs/${done.id}`);
      expect(read.status).toBe(200);
      const job = (await read.json()) as Job;
      expect(job.status).toBe('failed');
      expect(job.error).toMatchObject({ status: 422, code: 'zero-row', type: '/problems/zero-row', details: { row: 1 } });
      expect(job.error!.detail).toMatch(/^Row 1 of A is entirely zero: its equation reads 0 = b\[1\]/);
      expect(job.error!.detail).not.toMatch(/singular/);
    }
    const problemType = await fetch(`${service.baseUrl}/problems/zero-row`);
    expect(problemType.status).toBe(200);
    expect(await problemType.json()).toMatchObject({ type: '/problems/zero-row', status: 422, title: 'Zero row' });
    // Without the zero row the same system solves.
    const solved = await solveOverSocket(service, {
      type: 'solve',
      matrix: {
        format: 'dense',
        data: [
          [1, 0],
          [0, 1],
          [1, 1],
        ],
      },
      rhs: [1, 1, 2],
      partition: { machines: 2 },
      algorithms: ['dhbm'],
    });
    expect(solved.result!.runs.dhbm?.status).toBe('converged');
  }, 120_000);
});
