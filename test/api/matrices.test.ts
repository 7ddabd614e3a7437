/**
 * The matrix resource through HTTP, against a real Redis and a worker: Matrix Market uploads as
 * plain text and gzip, the size limits (413 from the size line, before anything is allocated), each
 * 422 naming its line or field, 415 for other media types and encodings, an interrupted upload
 * storing nothing, one stored matrix reused by two jobs, DELETE, and the TTL of every key.
 */
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ProblemDetails, StoredMatrix } from '../../src/jobs/types.js';
import { parseMatrixMarket } from '../../src/solvers/input/matrixMarket.js';
import { csrToDense, type CsrMatrix } from '../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../src/solvers/sparse/generators.js';
import { MatrixStore } from '../../src/jobs/store/matrixStore.js';
import { loadFixture, matrixMarket, relativeDifference } from '../support/fixtures.js';
import { createJob, startTestService, waitForJob, type TestService } from '../support/service.js';
import { injectUpload, uploadedMatrix } from '../support/requests.js';

let service: TestService;
let redis: Redis;
let store: MatrixStore;

beforeAll(async () => {
  service = await startTestService({}, { listen: true });
  redis = new Redis(service.redis.url);
  store = new MatrixStore(redis, service.config.KEY_PREFIX, service.config.QUEUE_NAME);
});

afterAll(async () => {
  redis?.disconnect();
  await service?.close();
});

const MATRIX_MARKET = 'application/x-matrix-market';

const upload = (body: string | Buffer, headers?: Record<string, string>) => injectUpload(service.app, body, headers);
const uploaded = (body: string | Buffer, headers?: Record<string, string>) => uploadedMatrix(service.app, body, headers);

/** Every key the service holds for matrices (stored or being written). */
async function matrixKeys(): Promise<string[]> {
  const prefix = `${service.config.KEY_PREFIX}:store:${service.config.QUEUE_NAME}`;
  const keys = [...(await redis.keys(`${prefix}:matrix:*`)), ...(await redis.keys(`${prefix}:pending:*`))];
  return keys.sort();
}

/** A Matrix Market text of a CSR matrix (general, one entry per line, 1-based). */
function matrixMarketOf(a: CsrMatrix): string {
  const lines = ['%%MatrixMarket matrix coordinate real general', `${a.rows} ${a.cols} ${a.rowPtr[a.rows]}`];
  for (let i = 0; i < a.rows; i++)
    for (let p = a.rowPtr[i]; p < a.rowPtr[i + 1]; p++) lines.push(`${i + 1} ${a.colIdx[p] + 1} ${a.values[p]}`);
  return `${lines.join('\n')}\n`;
}

describe('POST /v1/matrices', () => {
  it('stores a plain-text upload as CSR: 201 with Location, GET gives the same document, the stored entries are the file', async () => {
    const text = matrixMarket('bfwa62.mtx');
    const response = await upload(text, { 'content-type': `${MATRIX_MARKET}; charset=utf-8` });
    expect(response.statusCode, response.body).toBe(201);
    const matrix = response.json<StoredMatrix>();
    expect(response.headers.location).toBe(`/v1/matrices/${matrix.id}`);
    const dense = parseMatrixMarket(text);
    const nonzeros = Array.from(dense.data).filter((v) => v !== 0).length;
    expect(matrix).toMatchObject({ n: 62, nnz: nonzeros, symmetry: 'general', field: 'real' });
    expect(matrix.bytes).toBe(4 * (62 + 1) + 12 * matrix.nnz);

    const read = await service.app.inject({ method: 'GET', url: `/v1/matrices/${matrix.id}` });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(matrix);
    // The stored CSR, read back from Redis, against the dense reader (an independent parser).
    const stored = await store.csr(matrix.id);
    expect(Array.from(csrToDense(stored!.csr).data)).toEqual(Array.from(dense.data));
  });

  it('stores a gzip upload (Content-Encoding: gzip) the same as the plain text, symmetric storage mirrored', async () => {
    const text = matrixMarket('bcsstk03.mtx');
    const plain = await uploaded(text);
    const gzipped = await uploaded(gzipSync(text), { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
    expect(gzipped.symmetry).toBe('symmetric');
    expect({ ...gzipped, id: '', createdAt: '' }).toEqual({ ...plain, id: '', createdAt: '' });
    const [a, b] = [await store.csr(plain.id), await store.csr(gzipped.id)];
    expect(Array.from(csrToDense(b!.csr).data)).toEqual(Array.from(parseMatrixMarket(text).data));
    expect(Array.from(b!.csr.values)).toEqual(Array.from(a!.csr.values));
  });

  it('answers 413 from the size line, before reading entries: n above MAX_N_SPARSE, entries above MAX_NNZ', async () => {
    const before = await matrixKeys();
    const huge = await upload('%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 1\n1 1 1.0\n2 2 1.0\n');
    expect(huge.statusCode).toBe(413);
    const hugeProblem = huge.json<ProblemDetails>();
    expect(hugeProblem.code).toBe('too-large');
    expect(hugeProblem.detail).toContain('1000000000');
    const dense = await upload('%%MatrixMarket matrix coordinate real general\n5 5 30000000\n1 1 1.0\n');
    expect(dense.statusCode).toBe(413);
    expect(dense.json<ProblemDetails>().detail).toContain('30000000');
    expect(await matrixKeys()).toEqual(before);
  });

  it('answers 413 when the body exceeds MAX_UPLOAD_BYTES, as sent or decompressed', async () => {
    const text = matrixMarket('bfwa62.mtx');
    const compressed = gzipSync(text);
    // A limit between the compressed and the plain size: the plain text is over it as sent, the gzip body once decompressed.
    const limit = compressed.length + 1;
    expect(Buffer.byteLength(text)).toBeGreaterThan(limit);
    const small = await startTestService({ MAX_UPLOAD_BYTES: limit }, { worker: false, redis: service.redis });
    try {
      const before = await matrixKeys();
      const plain = await small.app.inject({
        method: 'POST',
        url: '/v1/matrices',
        payload: text,
        headers: { 'content-type': 'text/plain' },
      });
      expect(plain.statusCode).toBe(413);
      expect(plain.json<ProblemDetails>().detail).toContain('MAX_UPLOAD_BYTES');
      const gzipped = await small.app.inject({
        method: 'POST',
        url: '/v1/matrices',
        payload: compressed,
        headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
      });
      expect(gzipped.statusCode).toBe(413);
      expect(await matrixKeys()).toEqual(before);
    } finally {
      await small.close();
    }
  });

  const HEADER = '%%MatrixMarket matrix coordinate real general';
  const invalid: { name: string; text: string; code: string; line?: number; detail: RegExp; field?: string }[] = [
    {
      name: 'too few entries',
      text: `${HEADER}\n3 3 3\n1 1 1\n2 2 1\n`,
      code: 'matrix-market-syntax',
      detail: /announces 3 entries but only 2/,
    },
    { name: 'too many entries', text: `${HEADER}\n3 3 2\n1 1 1\n2 2 1\n3 3 1\n`, code: 'matrix-market-syntax', line: 5, detail: /line 5/ },
    {
      name: 'row index out of range',
      text: `${HEADER}\n3 3 2\n1 1 1\n4 2 1\n`,
      code: 'matrix-market-syntax',
      line: 4,
      detail: /outside 1\.\.3/,
    },
    { name: 'column index 0', text: `${HEADER}\n3 3 2\n1 1 1\n2 0 1\n`, code: 'matrix-market-syntax', line: 4, detail: /outside 1\.\.3/ },
    {
      name: 'duplicate entry',
      text: `${HEADER}\n3 3 3\n1 1 1\n2 2 1\n1 1 5\n`,
      code: 'matrix-market-syntax',
      line: 5,
      detail: /assigned twice, on lines 3 and 5/,
    },
    {
      name: 'complex field',
      text: '%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n',
      code: 'unsupported-matrix',
      detail: /complex/,
      field: 'complex',
    },
  ];
  it.each(invalid)('answers 422 naming the line or field: $name', async ({ text, code, line, detail, field }) => {
    const before = await matrixKeys();
    const response = await upload(text);
    expect(response.statusCode, response.body).toBe(422);
    const problem = response.json<ProblemDetails>();
    expect(problem.code).toBe(code);
    expect(problem.detail).toMatch(detail);
    if (line !== undefined) expect(problem.details?.line).toBe(line);
    if (code === 'matrix-market-syntax') expect(problem.detail).toMatch(/^Matrix Market line \d+:/);
    if (field !== undefined) expect(problem.details?.field).toBe(field);
    expect(await matrixKeys()).toEqual(before);
  });

  it('answers 415 for other media types and content encodings', async () => {
    const text = matrixMarket('bfwa62.mtx');
    const cases: Record<string, string>[] = [
      { 'content-type': 'application/json' },
      { 'content-type': 'text/csv' },
      { 'content-type': 'text/plain', 'content-encoding': 'br' },
    ];
    for (const headers of cases) {
      const response = await upload(headers['content-type'] === 'application/json' ? JSON.stringify({ data: text }) : text, headers);
      expect(response.statusCode, JSON.stringify(headers)).toBe(415);
      expect(response.json<ProblemDetails>().code).toBe('unsupported-media-type');
    }
    // The JSON routes keep refusing text bodies.
    const job = await service.app.inject({ method: 'POST', url: '/v1/jobs', payload: text, headers: { 'content-type': 'text/plain' } });
    expect(job.statusCode).toBe(415);
  });

  it('stores nothing when the upload is interrupted mid-body (socket destroyed)', async () => {
    const before = await matrixKeys();
    const text = matrixMarketOf(poisson2d(60));
    const { hostname, port } = new URL(service.baseUrl);
    const closed = new Promise<void>((resolve) => {
      const request = httpRequest({
        host: hostname,
        port,
        method: 'POST',
        path: '/v1/matrices',
        headers: { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) },
      });
      request.on('error', () => resolve());
      request.on('close', () => resolve());
      // Half the body, then the connection is cut.
      request.write(text.slice(0, text.length >> 1), () => setImmediate(() => request.destroy()));
    });
    await closed;
    // Wait until the server has seen the connection go (it then has no open connection).
    for (;;) {
      const open = await new Promise<number>((resolve, reject) =>
        service.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
      );
      if (open === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await matrixKeys()).toEqual(before);
    // The same text sent whole is stored.
    const whole = await uploaded(text);
    expect(whole.n).toBe(3600);
  });
});

describe('stored matrices and jobs', () => {
  it('one stored matrix serves two jobs with different partitions and algorithms, both matching the reference', async () => {
    const matrix = await uploaded(matrixMarket('bfwa62.mtx'), { 'content-type': MATRIX_MARKET });
    const jobs: Job[] = [];
    for (const [fixtureName, algorithms] of [
      ['bfwa62-m2', ['apc', 'dhbm']],
      ['bfwa62-m4', ['cimmino', 'dgd']],
    ] as const) {
      const fixture = loadFixture(fixtureName);
      const { response, job } = await createJob(service.app, {
        type: 'solve',
        matrix: { format: 'stored', id: matrix.id },
        partition: fixture.partition,
        algorithms,
        options: { tolerance: 1e-8, maxIterations: 20_000 },
      });
      expect(response.statusCode, response.body).toBe(202);
      expect(job).toMatchObject({ n: 62, storage: 'csr', backend: null });
      const done = await waitForJob(service.app, job.id);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(done.storage).toBe('csr');
      expect(['typescript', 'native']).toContain(done.backend);
      const analysis = done.result!.analysis!;
      expect(analysis.m).toBe(fixture.expected.m);
      expect(relativeDifference(analysis.conditioning.kappaS, fixture.expected.kappaS)).toBeLessThan(1e-6);
      expect(Math.abs(analysis.heterogeneity.thetaH - fixture.expected.thetaH)).toBeLessThan(1e-9);
      expect(Object.keys(done.result!.runs).sort()).toEqual([...algorithms].sort());
      jobs.push(done);
    }
    expect(jobs[0].m).not.toBe(jobs[1].m);
  });

  it('sets a TTL on every key of a stored matrix, renewed when a job names it', async () => {
    const matrix = await uploaded(matrixMarket('bfwa62.mtx'));
    const keys = store.keys.allOf(matrix.id);
    const ttlMs = service.config.MATRIX_TTL_SECONDS * 1000;
    for (const key of keys) {
      const pttl = await redis.pttl(key);
      expect(pttl, key).toBeGreaterThan(0);
      expect(pttl, key).toBeLessThanOrEqual(ttlMs);
    }
    // Shortened by hand, then renewed by a job that names the matrix.
    for (const key of keys) await redis.expire(key, 100);
    const { response } = await createJob(service.app, {
      type: 'analyze',
      matrix: { format: 'stored', id: matrix.id },
      partition: { machines: 2 },
    });
    expect(response.statusCode).toBe(202);
    for (const key of keys) expect(await redis.pttl(key), key).toBeGreaterThan(100_000);
  });

  it('DELETE removes the matrix: 204, then GET, DELETE and jobs naming it answer 404; a queued job on it fails naming it', async () => {
    const matrix = await uploaded(matrixMarket('bfwa62.mtx'));
    const removed = await service.app.inject({ method: 'DELETE', url: `/v1/matrices/${matrix.id}` });
    expect(removed.statusCode).toBe(204);
    for (const key of store.keys.allOf(matrix.id)) expect(await redis.exists(key), key).toBe(0);
    const read = await service.app.inject({ method: 'GET', url: `/v1/matrices/${matrix.id}` });
    expect(read.statusCode).toBe(404);
    expect(read.json<ProblemDetails>().code).toBe('matrix-not-found');
    expect((await service.app.inject({ method: 'DELETE', url: `/v1/matrices/${matrix.id}` })).statusCode).toBe(404);
    const { response } = await createJob(service.app, {
      type: 'analyze',
      matrix: { format: 'stored', id: matrix.id },
      partition: { machines: 2 },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json<ProblemDetails>().detail).toContain(matrix.id);
  });

  it('a job whose stored matrix is deleted before a worker starts it fails with a matrix-not-found problem', async () => {
    // A second service on its own queue, without a worker: the job stays queued while the matrix goes.
    const queued = await startTestService({ QUEUE_NAME: 'held' }, { worker: false, redis: service.redis });
    try {
      const upload = await queued.app.inject({
        method: 'POST',
        url: '/v1/matrices',
        payload: matrixMarket('bfwa62.mtx'),
        headers: { 'content-type': 'text/plain' },
      });
      const matrix = upload.json<StoredMatrix>();
      const { job } = await createJob(queued.app, {
        type: 'analyze',
        matrix: { format: 'stored', id: matrix.id },
        partition: { machines: 2 },
      });
      expect((await queued.app.inject({ method: 'DELETE', url: `/v1/matrices/${matrix.id}` })).statusCode).toBe(204);
      const withWorker = await startTestService({ QUEUE_NAME: 'held' }, { redis: service.redis });
      try {
        const failed = await waitForJob(withWorker.app, job.id);
        expect(failed.status).toBe('failed');
        expect(failed.error?.code).toBe('matrix-not-found');
        expect(failed.error?.detail).toContain(matrix.id);
      } finally {
        await withWorker.close();
      }
    } finally {
      await queued.close();
    }
  });

  it('a stored matrix above the dense limit (2-D Poisson, n = 10,000): stored as CSR, and a job on it runs on CSR', async () => {
    const k = 100;
    const poisson = poisson2d(k);
    const matrix = await uploaded(matrixMarketOf(poisson));
    expect(matrix).toMatchObject({ n: k * k, nnz: poisson.rowPtr[poisson.rows] });
    expect(matrix.n).toBeGreaterThan(service.config.MAX_N);
    const stored = await store.csr(matrix.id);
    expect(Array.from(stored!.csr.colIdx)).toEqual(Array.from(poisson.colIdx));
    expect(Array.from(stored!.csr.values)).toEqual(Array.from(poisson.values));
    const { response, job } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'stored', id: matrix.id },
      partition: { machines: 10 },
      algorithms: ['apc', 'dhbm'],
      options: { maxIterations: 50 },
    });
    expect(response.statusCode).toBe(202);
    expect(job.storage).toBe('csr');
    const done = await waitForJob(service.app, job.id);
    expect(done.status).toBe('succeeded');
    expect(done.storage).toBe('csr');
    // The 5-point Laplacian's eigenvalues are 4 - 2 cos(i pi / (k + 1)) - 2 cos(j pi / (k + 1)):
    // it is symmetric, so kappa(A^T A) = ((1 + cos h) / (1 - cos h))^2 with h = pi / (k + 1).
    const c = Math.cos(Math.PI / (k + 1));
    const analysis = done.result!.analysis!;
    expect(Math.abs(analysis.conditioning.kappaAtA / ((1 + c) / (1 - c)) ** 2 - 1)).toBeLessThan(1e-6);
    expect(analysis.conditioning.estimates).toBeDefined();
    expect(analysis.heterogeneity.thetaH).toBeGreaterThan(0);
    for (const algorithm of ['apc', 'dhbm'] as const) {
      const run = done.result!.runs[algorithm]!;
      // 50 iterations at the analysis's optimal parameters (the momentum methods' residual may
      // still be above its start then: only the iteration itself is checked here).
      expect(run).toMatchObject({ status: 'max-iterations', iterations: 50 });
      expect(run.theoreticalRate).toBeCloseTo(analysis.rates[algorithm].rate, 12);
      expect(Number.isFinite(run.relativeResidual)).toBe(true);
    }
  });
});
