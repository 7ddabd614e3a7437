/**
 * Studies over uploaded matrices through HTTP, with a real Redis and a separate worker process
 * (src/jobs/workerMain.ts runs the jobs' and the studies' workers): a study over an uploaded Matrix
 * Market file (bfwa62, sparse) with seeded random partitions, and over a dense matrix uploaded as
 * coordinates with contiguous partitions; every per-sample value equals an analyze job on the same
 * stored matrix and partition (to 1e-12); the study's copy of the matrix (deleting the matrix while
 * the study runs changes nothing; the copy goes when the study ends); 404 and 422 before anything is
 * queued.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrKeys } from '../../src/jobs/store/matrixStore.js';
import type { Study } from '../../src/jobs/studies/types.js';
import type { Job, ProblemDetails, StoredMatrix } from '../../src/jobs/types.js';
import { generateMatrix } from '../../src/solvers/input/generators.js';
import { planStudy } from '../../src/solvers/studies/plan.js';
import { samplePartition } from '../../src/solvers/studies/sampler.js';
import { createJob, waitForJob } from '../support/service.js';
import { createStudy, startStudyTestService, waitForStudy, type StudyTestService } from '../support/studyService.js';
import { uploadedMatrix } from '../support/requests.js';

const WORKER_ENV = { STUDY_WORKER_CONCURRENCY: '1', WORKER_CONCURRENCY: '1' };
const LIMITS = { maxSamples: 1e6, maxPointSamples: 1e4, maxPoints: 1000, maxN: 1000, maxNSparse: 1e6 };
const METRICS = [
  'rates.apc.rate',
  'rates.dhbm.rate',
  'conditioning.kappaS',
  'conditioning.kappaAtA',
  'heterogeneity.thetaH',
  'recommendation.algorithm',
];

let service: StudyTestService;
let redis: Redis;
let bfwa62: StoredMatrix;
let dense: StoredMatrix;

/** Every entry of a dense matrix, as Matrix Market coordinates. */
function denseAsMatrixMarket(n: number, seed: number): string {
  const A = generateMatrix({ generator: 'gaussian', n, mean: 1, std: 1, seed });
  const lines = ['%%MatrixMarket matrix coordinate real general', `${n} ${n} ${n * n}`];
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) lines.push(`${i + 1} ${j + 1} ${A.data[i * n + j]}`);
  return `${lines.join('\n')}\n`;
}

/** The study's CSV rows: point, n, m, sample, seed, status, reason, metrics. */
function csvRows(text: string): string[][] {
  const [header, ...rows] = text.trim().split('\n');
  expect(header).toBe(`point,n,m,sample,seed,status,reason,${METRICS.join(',')}`);
  return rows.map((row) => row.split(','));
}

function fieldAt(source: unknown, path: string): number {
  let value = source;
  for (const key of path.split('.')) value = (value as Record<string, unknown>)[key];
  if (path === 'recommendation.algorithm') return value === 'apc' ? 1 : 0;
  return value as number;
}

/** Runs an analyze job on the stored matrix per (point, sample) and compares every metric with the study's CSV value. */
async function expectEqualToAnalyzeJobs(study: Study, matrix: StoredMatrix, rows: string[][]): Promise<void> {
  const plan = planStudy(study.request, LIMITS, { id: matrix.id, n: matrix.n, nnz: matrix.nnz });
  const jobs: { job: Job; row: string[] }[] = [];
  for (const row of rows) {
    const point = plan.points[Number(row[0])];
    const partition = samplePartition(plan.definition, point, Number(row[3]));
    const { response, job } = await createJob(service.app, {
      type: 'analyze',
      matrix: { format: 'stored', id: matrix.id },
      partition: { assignment: Array.from(partition.assignment) },
    });
    expect(response.statusCode, response.body).toBe(202);
    jobs.push({ job, row });
  }
  for (const { job, row } of jobs) {
    const done = await waitForJob(service.app, job.id, { timeoutMs: 300_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.storage).toBe('csr');
    METRICS.forEach((metric, k) => {
      const expected = fieldAt(done.result!.analysis, metric);
      const got = Number(row[7 + k]);
      expect(Math.abs(got - expected), `${metric} at point ${row[0]} sample ${row[3]}: ${got} vs ${expected}`).toBeLessThanOrEqual(
        1e-12 * Math.abs(expected),
      );
    });
  }
}

beforeAll(async () => {
  service = await startStudyTestService({}, WORKER_ENV);
  service.spawnWorker();
  redis = new Redis(service.redis.url);
  bfwa62 = await uploadedMatrix(
    service.app,
    readFileSync(fileURLToPath(new URL('../reference/matrices/bfwa62.mtx', import.meta.url)), 'utf8'),
  );
  dense = await uploadedMatrix(service.app, denseAsMatrixMarket(30, 11));
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await service?.close();
});

/** GETRANGE calls Redis has served: readCsr reads each of a CSR matrix's three parts with one per 4 MiB piece. */
async function getrangeCalls(): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(/cmdstat_getrange:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

const studyKey = (id: string): string => `${service.config.KEY_PREFIX}:store:${service.config.STUDY_QUEUE_NAME}:study:${id}`;
const copyKeys = (id: string): string[] => Object.values(csrKeys(`${studyKey(id)}:matrix`));

describe('a study over an uploaded matrix', () => {
  it('random partitions (bfwa62): each sample is an analyze job on the same stored matrix and partition, to 1e-12', async () => {
    const readsBefore = await getrangeCalls();
    const created = await createStudy(service.app, {
      matrix: { format: 'stored', id: bfwa62.id },
      grid: { m: [2, 6] },
      partition: { family: 'random', seed: 3 },
      samples: 3,
      metrics: METRICS,
    });
    expect(created.points.map((point) => [point.settings.n, point.settings.m])).toEqual([
      [62, 2],
      [62, 6],
    ]);
    const study = await waitForStudy(service.app, created.id);
    expect(study.status, JSON.stringify(study.error)).toBe('succeeded');
    for (const point of study.result!.points) expect([point.samples, point.kept]).toEqual([3, 3]);
    // The matrix (its copy) is read once per chunk, not once per sample or point.
    expect(await getrangeCalls()).toBe(readsBefore + 3 * study.progress.chunks);

    const csv = await service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/samples.csv` });
    const rows = csvRows(csv.body);
    expect(rows).toHaveLength(6);
    for (const row of rows) expect(row[5]).toBe('kept');
    // The partitions differ from sample to sample (so do the values), and their seeds are listed.
    const thetaH = rows.filter((row) => row[0] === '1').map((row) => row[7 + METRICS.indexOf('heterogeneity.thetaH')]);
    expect(new Set(thetaH).size).toBe(3);
    expect(new Set(rows.map((row) => row[4])).size).toBe(6);
    // The aggregated mean is the mean of the samples.
    const apc = study.result!.points[1].metrics[0];
    const values = rows.filter((row) => row[0] === '1').map((row) => Number(row[7]));
    expect(apc.mean).toBeCloseTo(values.reduce((sum, v) => sum + v, 0) / 3, 14);

    await expectEqualToAnalyzeJobs(study, bfwa62, rows);
  }, 600_000);

  it('contiguous partitions of a dense matrix: one sample per m, equal to the analyze job with m machines', async () => {
    const refused = await service.app.inject({
      method: 'POST',
      url: '/v1/studies',
      payload: { matrix: { format: 'stored', id: dense.id }, grid: { m: [2, 3] }, samples: 5, metrics: METRICS },
    });
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.json<ProblemDetails>().details).toMatchObject({ parameter: 'samples' });

    const created = await createStudy(service.app, {
      matrix: { format: 'stored', id: dense.id },
      grid: { m: [2, 3, 5] },
      samples: 1,
      metrics: METRICS,
    });
    const study = await waitForStudy(service.app, created.id);
    expect(study.status, JSON.stringify(study.error)).toBe('succeeded');
    const csv = await service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/samples.csv` });
    const rows = csvRows(csv.body);
    expect(rows.map((row) => [row[2], row[4], row[5]])).toEqual([
      ['2', '', 'kept'],
      ['3', '', 'kept'],
      ['5', '', 'kept'],
    ]);
    // samplePartition of a contiguous study is buildPartition({ machines: m }): the job gets it as an assignment.
    await expectEqualToAnalyzeJobs(study, dense, rows);
  }, 600_000);
});

describe("the study's copy of the matrix", () => {
  it('deleting the matrix while the study runs changes nothing; the copy is gone when the study ends; the matrix is then unknown', async () => {
    const own = await uploadedMatrix(
      service.app,
      readFileSync(fileURLToPath(new URL('../reference/matrices/bfwa62.mtx', import.meta.url)), 'utf8'),
    );
    const request = {
      matrix: { format: 'stored', id: own.id },
      grid: { m: [2, 4, 6] },
      partition: { family: 'random' },
      samples: 8,
      metrics: METRICS,
    };
    const created = await createStudy(service.app, request);
    expect(await redis.exists(...copyKeys(created.id))).toBe(3);
    // Deleted once a worker computes the study (24 analyses of ~0.1 s: still running when it is seen running).
    const running = await waitForStudy(service.app, created.id, { until: (study) => study.status !== 'queued' });
    expect(running.status).toBe('running');
    const removed = await service.app.inject({ method: 'DELETE', url: `/v1/matrices/${own.id}` });
    expect(removed.statusCode, removed.body).toBe(204);
    expect((await service.app.inject({ url: `/v1/matrices/${own.id}` })).statusCode).toBe(404);

    const study = await waitForStudy(service.app, created.id);
    expect(study.status, JSON.stringify(study.error)).toBe('succeeded');
    for (const point of study.result!.points) expect([point.kept, point.failed]).toEqual([8, 0]);
    expect(await redis.exists(...copyKeys(created.id))).toBe(0);

    // The same study over bfwa62 (the same entries) gives the same values: the copy was the matrix.
    const again = await waitForStudy(
      service.app,
      (await createStudy(service.app, { ...request, matrix: { format: 'stored', id: bfwa62.id } })).id,
    );
    expect(again.result!.points.map((point) => point.metrics.map((metric) => metric.mean))).toEqual(
      study.result!.points.map((point) => point.metrics.map((metric) => metric.mean)),
    );

    const gone = await service.app.inject({ method: 'POST', url: '/v1/studies', payload: request });
    expect(gone.statusCode, gone.body).toBe(404);
    expect(gone.json<ProblemDetails>().code).toBe('matrix-not-found');
  }, 600_000);

  it('a cancelled study drops its copy; deleting the study removes every key it had', async () => {
    const created = await createStudy(service.app, {
      matrix: { format: 'stored', id: bfwa62.id },
      grid: { m: [2, 3, 4, 5, 6, 7, 8, 9] },
      partition: { family: 'random', seed: 9 },
      samples: 50,
      metrics: ['rates.apc.rate'],
    });
    expect(await redis.exists(...copyKeys(created.id))).toBe(3);
    const cancelled = await service.app.inject({ method: 'POST', url: `/v1/studies/${created.id}/cancel` });
    expect(cancelled.json<Study>().status).toBe('cancelled');
    expect(await redis.exists(...copyKeys(created.id))).toBe(0);
    expect((await service.app.inject({ method: 'DELETE', url: `/v1/studies/${created.id}` })).statusCode).toBe(204);
    expect(await redis.keys(`${studyKey(created.id)}*`)).toEqual([]);
    // The matrix itself is untouched.
    expect((await service.app.inject({ url: `/v1/matrices/${bfwa62.id}` })).statusCode).toBe(200);
  });
});

describe('refused before anything is queued', () => {
  it('an unknown matrix is a 404; a setting that cannot vary, the generator, another sampler or m > n a 422 naming it', async () => {
    const index = `${service.config.KEY_PREFIX}:store:${service.config.STUDY_QUEUE_NAME}:index`;
    const before = await redis.zcard(index);
    const base = {
      matrix: { format: 'stored', id: bfwa62.id },
      grid: { m: [2] },
      partition: { family: 'random' },
      samples: 2,
      metrics: METRICS,
    };
    const post = (body: object) => service.app.inject({ method: 'POST', url: '/v1/studies', payload: body });

    for (const id of ['01KAAAAAAAAAAAAAAAAAAAAAAA', 'not-an-id']) {
      const unknown = await post({ ...base, matrix: { format: 'stored', id } });
      expect(unknown.statusCode, unknown.body).toBe(404);
      expect(unknown.json<ProblemDetails>().code).toBe('matrix-not-found');
    }
    const cases: [object, string][] = [
      [{ ...base, grid: { m: [2], n: [62, 100] } }, 'grid.n'],
      [{ ...base, grid: { m: [2], mean: [0, 1] } }, 'grid.mean'],
      [{ ...base, grid: { m: [2], sigma: [1, 2] } }, 'grid.sigma'],
      [{ ...base, settings: { mean: 1 } }, 'settings.mean'],
      [{ ...base, generator: 'gaussian' }, 'generator'],
      [{ ...base, sampler: 'subspace-pair' }, 'sampler'],
      [{ ...base, partition: { family: 'round-robin' } }, 'samples'],
      [{ ...base, grid: { m: [63] } }, 'm'],
    ];
    for (const [body, parameter] of cases) {
      const refused = await post(body);
      expect(refused.statusCode, refused.body).toBe(422);
      expect(refused.json<ProblemDetails>().details, parameter).toMatchObject({ parameter });
    }
    // The jobs' schema: a matrix given inline is not a study input (400).
    expect((await post({ ...base, matrix: { format: 'dense', data: [[1]] } })).statusCode).toBe(400);
    expect(await redis.zcard(index)).toBe(before);
    expect(await redis.keys(`${service.config.KEY_PREFIX}:store:${service.config.STUDY_QUEUE_NAME}:study:*:matrix:*`)).toEqual([]);
  });
});
