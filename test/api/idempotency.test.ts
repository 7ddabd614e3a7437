/**
 * Idempotent submits through HTTP against a real Redis: an Idempotency-Key on
 * POST /v1/jobs, /v1/matrices and /v1/studies answers the first request's resource again (same id,
 * same status code, `Idempotent-Replayed: true`), another body with the key is a 422, concurrent
 * requests over real sockets with one key create one resource, a failed request frees its key, and
 * keys are scoped per API key.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedApiKey } from '../../src/jobs/apiKeys/apiKey.js';
import type { Study } from '../../src/jobs/studies/types.js';
import type { Job, JobPage, MatrixPage, ProblemDetails, StoredMatrix } from '../../src/jobs/types.js';
import { startTestService, type TestService } from '../support/service.js';
import { startStudyTestService, type StudyTestService } from '../support/studyService.js';
import { SMALL_ANALYZE, SMALL_MATRIX_MARKET } from '../support/requests.js';

const OTHER_MATRIX = '%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 5\n2 2 3\n3 3 4\n';

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function post(baseUrl: string, path: string, body: string | Buffer, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

const postJob = (baseUrl: string, body: unknown, key?: string, extra: Record<string, string> = {}) =>
  post(baseUrl, '/v1/jobs', JSON.stringify(body), {
    'content-type': 'application/json',
    ...(key === undefined ? {} : { 'idempotency-key': key }),
    ...extra,
  });

describe('jobs and matrices', () => {
  let service: TestService;

  beforeAll(async () => {
    // No worker: creating is what is checked, and queued jobs stay as they are.
    service = await startTestService({}, { listen: true, worker: false });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('10 parallel POSTs over real sockets with one key create exactly one job, each answered with it', async () => {
    const before = (await service.app.inject({ url: '/v1/jobs?limit=200' })).json<JobPage>().items.length;
    const answers = await Promise.all(Array.from({ length: 10 }, () => postJob(service.baseUrl, SMALL_ANALYZE, 'parallel-key-1')));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(202));
    const ids = new Set(answers.map((a) => (a.body as Job).id));
    expect(ids.size).toBe(1);
    const [id] = ids;
    expect(answers.every((a) => a.headers.get('location') === `/v1/jobs/${id}`)).toBe(true);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(9);
    const after = (await service.app.inject({ url: '/v1/jobs?limit=200' })).json<JobPage>().items;
    expect(after.length - before).toBe(1);
    expect(after.some((job) => job.id === id)).toBe(true);
  });

  it('answers the same job to the same body (members in any order) and 422 to another body with the key', async () => {
    const first = await postJob(service.baseUrl, SMALL_ANALYZE, 'key-2');
    expect(first.status).toBe(202);
    const reordered = { partition: SMALL_ANALYZE.partition, matrix: SMALL_ANALYZE.matrix, type: SMALL_ANALYZE.type };
    const again = await postJob(service.baseUrl, reordered, 'key-2');
    expect(again.status).toBe(202);
    expect((again.body as Job).id).toBe((first.body as Job).id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const other = await postJob(service.baseUrl, { ...SMALL_ANALYZE, partition: { machines: 4 } }, 'key-2');
    expect(other.status).toBe(422);
    expect((other.body as ProblemDetails).code).toBe('idempotency-key-reused');

    // Without a key, every request creates a job.
    const [a, b] = await Promise.all([postJob(service.baseUrl, SMALL_ANALYZE), postJob(service.baseUrl, SMALL_ANALYZE)]);
    expect((a.body as Job).id).not.toBe((b.body as Job).id);
  });

  it('a request that fails creates nothing and frees its key', async () => {
    const bad = await postJob(service.baseUrl, { ...SMALL_ANALYZE, partition: { machines: 40 } }, 'key-3');
    expect(bad.status).toBe(422);
    expect((bad.body as ProblemDetails).code).toBe('too-many-machines');
    const good = await postJob(service.baseUrl, SMALL_ANALYZE, 'key-3');
    expect(good.status).toBe(202);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses a key that is not 1 to 255 printable characters (400)', async () => {
    const tooLong = await postJob(service.baseUrl, SMALL_ANALYZE, 'k'.repeat(256));
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body)).toContain('idempotency-key');
    const upload = await post(service.baseUrl, '/v1/matrices', SMALL_MATRIX_MARKET, {
      'content-type': 'text/plain',
      'idempotency-key': 'k'.repeat(256),
    });
    expect(upload.status).toBe(400);
  });

  it('an upload: the same text again (plain or gzip) answers the same matrix; another text 422; parallel uploads store one', async () => {
    const headers = { 'content-type': 'text/plain', 'idempotency-key': 'upload-1' };
    const first = await post(service.baseUrl, '/v1/matrices', SMALL_MATRIX_MARKET, headers);
    expect(first.status).toBe(201);
    const id = (first.body as StoredMatrix).id;
    const again = await post(service.baseUrl, '/v1/matrices', gzipSync(SMALL_MATRIX_MARKET), { ...headers, 'content-encoding': 'gzip' });
    expect(again.status).toBe(201);
    expect((again.body as StoredMatrix).id).toBe(id);
    expect(again.headers.get('location')).toBe(`/v1/matrices/${id}`);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await post(service.baseUrl, '/v1/matrices', OTHER_MATRIX, headers);
    expect(other.status).toBe(422);
    expect((other.body as ProblemDetails).code).toBe('idempotency-key-reused');

    const before = (await service.app.inject({ url: '/v1/matrices?limit=200' })).json<MatrixPage>().items.length;
    const parallel = await Promise.all(
      Array.from({ length: 6 }, () =>
        post(service.baseUrl, '/v1/matrices', SMALL_MATRIX_MARKET, { ...headers, 'idempotency-key': 'upload-2' }),
      ),
    );
    expect(parallel.map((a) => a.status)).toEqual(Array(6).fill(201));
    expect(new Set(parallel.map((a) => (a.body as StoredMatrix).id)).size).toBe(1);
    const after = (await service.app.inject({ url: '/v1/matrices?limit=200' })).json<MatrixPage>().items.length;
    expect(after - before).toBe(1);
  });

  it('the key belongs to its endpoint: the same key on another endpoint is a 422', async () => {
    const upload = await post(service.baseUrl, '/v1/matrices', SMALL_MATRIX_MARKET, {
      'content-type': 'text/plain',
      'idempotency-key': 'key-5',
    });
    expect(upload.status).toBe(201);
    const job = await postJob(service.baseUrl, SMALL_ANALYZE, 'key-5');
    expect(job.status).toBe(422);
  });
});

describe('scoped per API key (AUTH_MODE=keys)', () => {
  let service: TestService;
  let alice: CreatedApiKey;
  let bob: CreatedApiKey;

  beforeAll(async () => {
    service = await startTestService({ AUTH_MODE: 'keys' }, { listen: true, worker: false });
    alice = await service.jobService.keys.create({ name: 'alice' });
    bob = await service.jobService.keys.create({ name: 'bob' });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("one key's Idempotency-Key is not another's", async () => {
    const byAlice = await postJob(service.baseUrl, SMALL_ANALYZE, 'shared', { authorization: `Bearer ${alice.key}` });
    const byBob = await postJob(service.baseUrl, SMALL_ANALYZE, 'shared', { authorization: `Bearer ${bob.key}` });
    const aliceAgain = await postJob(service.baseUrl, SMALL_ANALYZE, 'shared', { authorization: `Bearer ${alice.key}` });
    expect([byAlice.status, byBob.status, aliceAgain.status]).toEqual([202, 202, 202]);
    expect((byBob.body as Job).id).not.toBe((byAlice.body as Job).id);
    expect((aliceAgain.body as Job).id).toBe((byAlice.body as Job).id);
  });
});

describe('studies', () => {
  let service: StudyTestService;

  beforeAll(async () => {
    service = await startStudyTestService();
  });
  afterAll(async () => {
    await service?.close();
  });

  it('answers the same study again to the same body, 422 to another', async () => {
    const body = { preset: 'experiment-1', samples: 10, grid: { mean: [0], m: [2] } };
    const send = (value: unknown) =>
      post(service.baseUrl, '/v1/studies', JSON.stringify(value), { 'content-type': 'application/json', 'idempotency-key': 'study-1' });
    const answers = await Promise.all([send(body), send(body), send(body)]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(new Set(answers.map((a) => (a.body as Study).id)).size).toBe(1);
    const other = await send({ ...body, samples: 11 });
    expect(other.status).toBe(422);
    expect((other.body as ProblemDetails).code).toBe('idempotency-key-reused');
  });
});
