/**
 * Inline sparse inputs (COO triplets, Matrix Market coordinate text in the JSON body) through HTTP,
 * against a real Redis and a worker: they stay sparse from the request to the worker (binary CSR in
 * the job's Redis data, never a JSON array of numbers) and compute on CSR, with the same analysis
 * and solutions as the same matrix uploaded through POST /v1/matrices, and the same iterates as the
 * dense path; the storage rule (src/jobs/storage.ts); the sparse limits (413 naming the setting) and
 * each 422 naming the entry, line or field.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutMeasurements } from '../support/sameAnalysis.js';
import type { Job, ProblemDetails, StoredMatrix } from '../../src/jobs/types.js';
import { csrKeys } from '../../src/jobs/store/matrixStore.js';
import { spectralDataOf } from '../../src/solvers/analysis/analyze.js';
import { ALGORITHM_IDS } from '../../src/solvers/algorithms/registry.js';
import { buildDistributedSystem } from '../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../src/solvers/input/createProblem.js';
import { runAlgorithm } from '../../src/solvers/runner/runAlgorithm.js';
import { csrToDense, nnzOf, type CsrMatrix } from '../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../src/solvers/sparse/generators.js';
import { createJob, startTestService, waitForJob, type TestService } from '../support/service.js';
import { SYMMETRIC_COO } from '../support/requests.js';

let service: TestService;

beforeAll(async () => {
  // Sparse limits above the n = 10,000 Poisson matrix and small enough to test cheaply.
  service = await startTestService({ MAX_N_SPARSE: 20_000, MAX_NNZ: 60_000 });
});

afterAll(async () => {
  await service?.close();
});

/** A Matrix Market text of a CSR matrix (general, one entry per line, 1-based, full precision). */
function matrixMarketOf(a: CsrMatrix): string {
  const lines = ['%%MatrixMarket matrix coordinate real general', `${a.rows} ${a.cols} ${nnzOf(a)}`];
  for (let i = 0; i < a.rows; i++)
    for (let p = a.rowPtr[i]; p < a.rowPtr[i + 1]; p++) lines.push(`${i + 1} ${a.colIdx[p] + 1} ${a.values[p]}`);
  return `${lines.join('\n')}\n`;
}

/** COO triplets of a CSR matrix, listed column by column (any order is accepted). */
function cooOf(a: CsrMatrix): { format: 'coo'; rows: number; cols: number; entries: [number, number, number][] } {
  const entries: [number, number, number][] = [];
  for (let i = 0; i < a.rows; i++) for (let p = a.rowPtr[i]; p < a.rowPtr[i + 1]; p++) entries.push([i, a.colIdx[p], a.values[p]]);
  entries.sort((x, y) => x[1] - y[1] || x[0] - y[0]);
  return { format: 'coo', rows: a.rows, cols: a.cols, entries };
}

async function post(body: object): Promise<{ status: number; job: Job; problem: ProblemDetails }> {
  const response = await service.app.inject({ method: 'POST', url: '/v1/jobs', payload: body });
  return { status: response.statusCode, job: response.json<Job>(), problem: response.json<ProblemDetails>() };
}

async function solution(id: string, algorithm: string): Promise<number[]> {
  const response = await service.app.inject({ url: `/v1/jobs/${id}/runs/${algorithm}/solution` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ x: number[] }>().x;
}

async function residualTrace(id: string, algorithm: string): Promise<number[]> {
  const response = await service.app.inject({ url: `/v1/jobs/${id}/runs/${algorithm}/trace` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ relativeResidual: number[] }>().relativeResidual;
}

/** Every number of `actual` within `relative` of `expected`'s (relative to max(|expected|, 1e-300); error bounds absolutely), everything else equal. */
function expectClose(actual: unknown, expected: unknown, relative: number, path = '$'): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    // An estimate's error bound is rounding-level (~1e-13) and its digits are rounding noise: compared absolutely.
    const scale = path.endsWith('ErrorBound') ? 1 : Math.max(Math.abs(expected), 1e-300);
    const difference = Math.abs(actual - expected) / scale;
    expect(actual === expected || difference <= relative, `${path}: ${actual} vs ${expected}`).toBe(true);
  } else if (Array.isArray(expected)) {
    expect(Array.isArray(actual), path).toBe(true);
    expect((actual as unknown[]).length, path).toBe(expected.length);
    expected.forEach((value, k) => expectClose((actual as unknown[])[k], value, relative, `${path}[${k}]`));
  } else if (expected !== null && typeof expected === 'object') {
    expect(actual !== null && typeof actual === 'object', path).toBe(true);
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [key, value] of Object.entries(expected))
      expectClose((actual as Record<string, unknown>)[key], value, relative, `${path}.${key}`);
  } else {
    expect(actual, path).toEqual(expected);
  }
}

/**
 * True when `value` (parsed JSON) holds an array of more than `most` items with a number in it, at
 * any depth: data of size n or nnz (the document's own arrays are of size m, e.g. the partition's sizes).
 */
function holdsNumberArray(value: unknown, most: number): boolean {
  if (Array.isArray(value))
    return (value.length > most && value.some((item) => typeof item === 'number')) || value.some((item) => holdsNumberArray(item, most));
  if (value !== null && typeof value === 'object') return Object.values(value).some((item) => holdsNumberArray(item, most));
  return false;
}

function parsedJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

describe('sparse inline inputs: a 2-D Poisson matrix, n = 10,000, nnz 49,600', () => {
  const k = 100;
  const poisson = poisson2d(k);
  const request = { type: 'solve', partition: { machines: 10 }, algorithms: ['apc', 'dhbm'], options: { maxIterations: 30 } } as const;

  it('is accepted as COO and as Matrix Market JSON, runs on CSR, and matches the same matrix uploaded to /v1/matrices', async () => {
    expect(poisson.rows).toBeGreaterThan(service.config.MAX_N);
    const upload = await service.app.inject({
      method: 'POST',
      url: '/v1/matrices',
      payload: matrixMarketOf(poisson),
      headers: { 'content-type': 'text/plain' },
    });
    expect(upload.statusCode, upload.body).toBe(201);
    const stored = upload.json<StoredMatrix>();

    const jobs: Job[] = [];
    for (const matrix of [
      { format: 'stored', id: stored.id },
      cooOf(poisson),
      { format: 'matrix-market', data: matrixMarketOf(poisson) },
    ]) {
      const { response, job } = await createJob(service.app, { ...request, matrix });
      expect(response.statusCode, response.body).toBe(202);
      expect(job).toMatchObject({ n: k * k, storage: 'csr' });
      jobs.push(job);
    }
    const done: Job[] = [];
    for (const job of jobs) done.push(await waitForJob(service.app, job.id, { timeoutMs: 900_000 }));
    for (const job of done) {
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      expect(job.storage).toBe('csr');
    }
    const [reference, ...inline] = done;
    // The sparse path reports how its iterative estimates were obtained.
    expect(reference.result!.analysis!.conditioning.estimates).toBeDefined();
    // Ten contiguous strips of a banded matrix overlap their neighbours only (a bipartite overlap graph):
    // lambda_max(S) = 2 - lambda_min(S), reported as such.
    const { conditioning } = reference.result!.analysis!;
    expect(conditioning.estimates?.lambdaMaxS.method).toBe('bipartite-reflection');
    expect(conditioning.lambdaMaxS).toBe(2 - conditioning.lambdaMinS);
    for (const job of inline) {
      expectClose(withoutMeasurements(job.result!.analysis!), withoutMeasurements(reference.result!.analysis!), 1e-10, 'analysis');
      for (const algorithm of request.algorithms) {
        expect(job.result!.runs[algorithm]!.iterations).toBe(30);
        // Same matrix, same iterations: only the jobs' thread counts (shared cores) can differ, and with them the
        // rounding order of the threaded factorization; seen 1.5e-11 on one small entry. Solutions compare norm-wise.
        const x = await solution(job.id, algorithm);
        const xReference = await solution(reference.id, algorithm);
        expect(x).toHaveLength(xReference.length);
        const norm = xReference.reduce((largest, v) => Math.max(largest, Math.abs(v)), 0);
        const deviation = x.reduce((largest, v, k) => Math.max(largest, Math.abs(v - xReference[k])), 0);
        expect(deviation / norm, `${algorithm} x`).toBeLessThan(1e-10);
        expectClose(await residualTrace(job.id, algorithm), await residualTrace(reference.id, algorithm), 1e-10, `${algorithm} residuals`);
      }
    }
  }, 1_200_000);

  it('is stored in the job as binary CSR, never as a JSON array of numbers (every Redis key of a queued job inspected)', async () => {
    const prefix = 'sparse-inspect';
    // A service without a worker on the same Redis, under its own prefix: the job stays queued as created.
    const queued = await startTestService(
      { KEY_PREFIX: prefix, MAX_N_SPARSE: 20_000, MAX_NNZ: 60_000 },
      { worker: false, redis: service.redis },
    );
    const redis = new Redis(service.redis.url);
    try {
      for (const matrix of [cooOf(poisson), { format: 'matrix-market', data: matrixMarketOf(poisson) }]) {
        const { response, job } = await createJob(queued.app, { ...request, matrix });
        expect(response.statusCode, response.body).toBe(202);
        const jobKey = `${prefix}:store:${queued.config.QUEUE_NAME}:job:${job.id}`;
        const keys = (await redis.keys(`${prefix}:*`)).sort();
        expect(keys).not.toContain(`${jobKey}:A`);
        const csr = csrKeys(`${jobKey}:csr`);
        const nnz = nnzOf(poisson);
        expect(await redis.strlen(csr.rowPtr)).toBe(4 * (k * k + 1));
        expect(await redis.strlen(csr.colIdx)).toBe(4 * nnz);
        expect(await redis.strlen(csr.values)).toBe(8 * nnz);
        expect(Buffer.compare(await redis.getBuffer(csr.values).then((b) => b!), Buffer.from(poisson.values.buffer))).toBe(0);
        expect(JSON.parse((await redis.hget(jobKey, 'input'))!)).toEqual({ format: matrix.format, nnz });
        for (const key of keys) {
          const type = await redis.type(key);
          const values: Buffer[] =
            type === 'string' ? [(await redis.getBuffer(key))!] : type === 'hash' ? Object.values(await redis.hgetallBuffer(key)) : [];
          for (const value of values)
            expect(holdsNumberArray(parsedJson(value), queued.config.MAX_MACHINES), `${key}: ${value.subarray(0, 80).toString()}`).toBe(
              false,
            );
          // The largest value is the CSR's values array itself (8 bytes an entry), nothing textual of that size.
          for (const value of values) expect(value.length, key).toBeLessThanOrEqual(8 * nnz);
        }
      }
    } finally {
      redis.disconnect();
      await queued.close();
    }
  });
});

describe('sparse inline inputs against the dense path', () => {
  it('an n = 3600 COO job (CSR) gives the iterates of the dense path, for each of the six algorithms', async () => {
    const poisson = poisson2d(60);
    const { response, job } = await createJob(service.app, {
      type: 'solve',
      matrix: cooOf(poisson),
      partition: { machines: 8 },
      options: { maxIterations: 100, tolerance: 1e-300 },
    });
    expect(response.statusCode, response.body).toBe(202);
    expect(job.storage).toBe('csr');
    const done = await waitForJob(service.app, job.id, { timeoutMs: 900_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.storage).toBe('csr');

    // The dense path in this process, on the same matrix and partition with the job's spectral data.
    const analysis = done.result!.analysis!;
    const dense = buildDistributedSystem(createProblem({ A: csrToDense(poisson), partition: { machines: 8 } }));
    for (const algorithm of ALGORITHM_IDS) {
      const run = done.result!.runs[algorithm]!;
      expect(run.iterations, algorithm).toBe(100);
      const reference = runAlgorithm(dense, algorithm, spectralDataOf(analysis), { tolerance: 1e-300, maxIterations: 100 });
      expect(run.parameters, algorithm).toEqual(reference.parameters);
      const x = await solution(done.id, algorithm);
      let difference = 0;
      let size = 0;
      for (let i = 0; i < x.length; i++) {
        difference = Math.max(difference, Math.abs(x[i] - reference.solution[i]));
        size = Math.max(size, Math.abs(reference.solution[i]));
      }
      expect(difference / size, algorithm).toBeLessThan(1e-10);
      const residuals = await residualTrace(done.id, algorithm);
      expect(residuals).toHaveLength(reference.trace.relativeResidual.length);
      residuals.forEach((r, t) =>
        expect(Math.abs(r - reference.trace.relativeResidual[t]) / reference.trace.relativeResidual[t], `${algorithm} ${t}`).toBeLessThan(
          1e-8,
        ),
      );
    }
  }, 1_200_000);
});

describe('the storage rule, limits and 422s', () => {
  it('runs a sparse coordinate input on CSR, a dense-ish one on the dense path, and a Matrix Market array dense', async () => {
    const tridiagonal = {
      format: 'coo',
      rows: 100,
      cols: 100,
      entries: Array.from({ length: 100 }, (_, i) => [
        [i, i, 4],
        ...(i > 0 ? [[i, i - 1, -1]] : []),
        ...(i < 99 ? [[i, i + 1, -1]] : []),
      ]).flat(),
    };
    const array = { format: 'matrix-market', data: '%%MatrixMarket matrix array real general\n2 2\n2\n1\n0\n3\n' };
    const expected = [
      [tridiagonal, 'csr'],
      [SYMMETRIC_COO, 'dense'],
      [array, 'dense'],
    ] as const;
    for (const [matrix, storage] of expected) {
      const { status, job } = await post({ type: 'solve', matrix, partition: { machines: 1 }, algorithms: ['apc'] });
      expect(status).toBe(202);
      expect(job.storage).toBe(storage);
      const done = await waitForJob(service.app, job.id);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(done.storage).toBe(storage);
      for (const value of await solution(job.id, 'apc')) expect(Math.abs(value - 1)).toBeLessThan(1e-6);
    }
  });

  it('answers 413 naming MAX_N_SPARSE or MAX_NNZ, before building anything', async () => {
    const base = { type: 'analyze', partition: { machines: 1 } };
    let { status, problem } = await post({ ...base, matrix: { format: 'coo', rows: 20_001, cols: 20_001, entries: [] } });
    expect(status).toBe(413);
    expect(problem.detail).toMatch(/n = 20001.*20000.*MAX_N_SPARSE/);
    const many = Array.from({ length: 60_001 }, (_, t) => [t % 100, Math.floor(t / 100), 1]);
    ({ status, problem } = await post({ ...base, matrix: { format: 'coo', rows: 1000, cols: 1000, entries: many } }));
    expect(status).toBe(413);
    expect(problem.detail).toMatch(/60001.*60000.*MAX_NNZ/);
    ({ status, problem } = await post({
      ...base,
      matrix: { format: 'matrix-market', data: '%%MatrixMarket matrix coordinate real general\n20001 20001 1\n1 1 1\n' },
    }));
    expect(status).toBe(413);
    expect(problem.detail).toMatch(/20001.*MAX_N_SPARSE/);
    ({ status, problem } = await post({
      ...base,
      matrix: { format: 'matrix-market', data: '%%MatrixMarket matrix coordinate real general\n1000 1000 60001\n1 1 1\n' },
    }));
    expect(status).toBe(413);
    expect(problem.detail).toMatch(/60001.*MAX_NNZ/);
    // The dense limit still holds for dense input and Matrix Market arrays.
    const dense = await post({
      ...base,
      matrix: { format: 'matrix-market', data: '%%MatrixMarket matrix array real general\n4001 4001\n1\n' },
    });
    expect(dense.status).toBe(413);
    expect(dense.problem.detail).toMatch(/n = 4001.*dense/);
  });

  it('answers 422 naming the entry, line or field: duplicates that overflow, indices out of range, complex fields, NaN', async () => {
    const base = { type: 'analyze', partition: { machines: 1 } };
    const cases: [object, number, RegExp][] = [
      [
        {
          format: 'coo',
          rows: 3,
          cols: 3,
          entries: [
            [0, 0, 1],
            [1, 2, 1e308],
            [2, 2, 1],
            [1, 1, 1],
            [1, 2, 1e308],
          ],
        },
        422,
        /matrix entry \(1, 2\)/,
      ],
      [
        {
          format: 'coo',
          rows: 3,
          cols: 3,
          entries: [
            [0, 0, 1],
            [3, 1, 1],
          ],
        },
        422,
        /COO entry 1 has row index 3, outside 0\.\.2/,
      ],
      [
        {
          format: 'coo',
          rows: 3,
          cols: 3,
          entries: [
            [0, 0, 1],
            [1, 1, 'NaN'],
          ],
        },
        422,
        /matrix entry \(1, 1\)/,
      ],
      [{ format: 'coo', rows: 3, cols: 4, entries: [] }, 422, /3 x 4|square/],
      [
        { format: 'matrix-market', data: '%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 3 5\n2 3 6\n' },
        422,
        /entry \(2, 3\) is assigned twice, on lines 4 and 5/,
      ],
      [
        { format: 'matrix-market', data: '%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 2 1\n' },
        422,
        /assigned twice.*symmetric/,
      ],
      [
        { format: 'matrix-market', data: '%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n' },
        422,
        /line 3.*row index 4 is outside 1\.\.3|row index 4 is outside 1\.\.3/,
      ],
      [{ format: 'matrix-market', data: '%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 1 1 0\n' }, 422, /complex/],
    ];
    for (const [matrix, expectedStatus, detail] of cases) {
      const { status, problem } = await post({ ...base, matrix });
      expect(status, JSON.stringify(matrix)).toBe(expectedStatus);
      expect(problem.detail, JSON.stringify(matrix)).toMatch(detail);
    }
    const complex = await post({ ...base, matrix: cases[7][0] });
    expect(complex.problem.code).toBe('unsupported-matrix');
  });
});
