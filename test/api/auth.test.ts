/**
 * AUTH_MODE=keys through HTTP against a real Redis and worker: two tenants (alice, bob) on every
 * endpoint (another key's job, run, event stream and matrix are 404, never listed, never usable),
 * an admin key that sees all, missing / unknown / revoked keys 401 at once (also on a second API
 * instance), admin-only paths 403 for other keys, open paths open, the admin key endpoints, and
 * problems that reveal neither the key nor the service's internals.
 */
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import type { ApiKey, CreatedApiKey } from '../../src/jobs/apiKeys/apiKey.js';
import { RedisJobService } from '../../src/jobs/redisJobService.js';
import type { Job, JobPage, ProblemDetails, StoredMatrix } from '../../src/jobs/types.js';
import { checkContract } from '../support/contract.js';
import { startTestService, type TestService } from '../support/service.js';
import { SMALL_ANALYZE, SMALL_MATRIX_MARKET } from '../support/requests.js';

let service: TestService;
let admin: CreatedApiKey;
let alice: CreatedApiKey;
let bob: CreatedApiKey;
/** The same service without the contract check: answers on paths the document does not describe (unknown ones, the queue board). */
let bare: FastifyInstance;

beforeAll(async () => {
  service = await startTestService({ AUTH_MODE: 'keys' });
  bare = await buildApp({ config: service.config, jobService: service.jobService });
  admin = await service.jobService.keys.create({ name: 'operator', admin: true });
  alice = await service.jobService.keys.create({ name: 'alice' });
  bob = await service.jobService.keys.create({ name: 'bob' });
});

afterAll(async () => {
  await bare?.close();
  await service?.close();
});

function call(app: FastifyInstance, key: CreatedApiKey | string | null, options: InjectOptions): Promise<LightMyRequestResponse> {
  const secret = typeof key === 'string' ? key : key?.key;
  const headers = { ...(options.headers ?? {}), ...(secret === undefined ? {} : { authorization: `Bearer ${secret}` }) };
  return app.inject({ ...options, headers });
}

const as = (key: CreatedApiKey | string | null, options: InjectOptions) => call(service.app, key, options);

const SOLVE = { ...SMALL_ANALYZE, type: 'solve', algorithms: ['apc'] };

async function finished(key: CreatedApiKey, id: string): Promise<Job> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = (await as(key, { url: `/v1/jobs/${id}` })).json<Job>();
    if (['succeeded', 'failed', 'cancelled'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function expectProblem(response: LightMyRequestResponse, status: number, code: string): ProblemDetails {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json<ProblemDetails>();
  expect(problem.code).toBe(code);
  expect(problem.status).toBe(status);
  // Nothing of a key, a stack or a path of the service.
  for (const key of [admin, alice, bob]) expect(response.body).not.toContain(key.key);
  expect(response.body).not.toMatch(/lss_[A-Za-z0-9_-]{20,}|\/work\/|node_modules|at [A-Za-z.]+ \(/);
  return problem;
}

describe('authentication', () => {
  it('refuses /v1 without a key, with a malformed header, an unknown key or a key of the wrong shape: 401 problems with a Bearer challenge', async () => {
    const cases: (InjectOptions['headers'] | undefined)[] = [
      undefined,
      { authorization: 'Basic YWxpY2U6c2VjcmV0' },
      { authorization: 'Bearer' },
      { authorization: `Bearer lss_${'A'.repeat(43)}` },
      { authorization: 'Bearer not-a-key' },
    ];
    for (const headers of cases) {
      const response = await service.app.inject({ url: '/v1/jobs', headers });
      const problem = expectProblem(response, 401, 'unauthorized');
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm=/);
      expect(problem.instance).toBe('/v1/jobs');
    }
    // Unknown /v1 paths need a key too (their existence is not revealed either).
    expectProblem(await call(bare, null, { url: '/v1/nothing-here' }), 401, 'unauthorized');
    expectProblem(await call(bare, alice, { url: '/v1/nothing-here' }), 404, 'not-found');
  });

  it('keeps /healthz, /readyz, /openapi.json, /docs and /problems open', async () => {
    for (const url of ['/healthz', '/readyz', '/openapi.json', '/problems/unauthorized']) {
      expect((await as(null, { url })).statusCode, url).toBe(200);
    }
    expect((await as(null, { url: '/docs' })).statusCode).toBeLessThan(400);
    const document = (await as(null, { url: '/openapi.json' })).json<{ components: { securitySchemes: Record<string, unknown> } }>();
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('needs an admin key for /metrics, /admin/* and /v1/admin/keys: 401 without one, 403 with a tenant key', async () => {
    for (const url of ['/metrics', '/v1/admin/keys', '/admin/queues']) {
      expectProblem(await call(bare, null, { url }), 401, 'unauthorized');
      expectProblem(await call(bare, alice, { url }), 403, 'forbidden');
    }
    expect((await call(bare, admin, { url: '/admin/queues' })).statusCode).toBeLessThan(400);
    const metrics = await as(admin, { url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('lss_http_requests_total');
  });
});

describe('two tenants', () => {
  let aliceJob: Job;
  let bobJob: Job;
  let aliceMatrix: StoredMatrix;

  beforeAll(async () => {
    const created = await as(alice, { method: 'POST', url: '/v1/jobs', payload: SOLVE });
    expect(created.statusCode, created.body).toBe(202);
    aliceJob = await finished(alice, created.json<Job>().id);
    expect(aliceJob.status).toBe('succeeded');
    const other = await as(bob, { method: 'POST', url: '/v1/jobs', payload: SMALL_ANALYZE });
    expect(other.statusCode, other.body).toBe(202);
    bobJob = await finished(bob, other.json<Job>().id);
    const upload = await as(alice, {
      method: 'POST',
      url: '/v1/matrices',
      payload: SMALL_MATRIX_MARKET,
      headers: { 'content-type': 'text/plain' },
    });
    expect(upload.statusCode, upload.body).toBe(201);
    aliceMatrix = upload.json<StoredMatrix>();
  });

  it('lets the owner read its job, runs, events and matrix', async () => {
    expect((await as(alice, { url: `/v1/jobs/${aliceJob.id}` })).statusCode).toBe(200);
    expect((await as(alice, { url: `/v1/jobs/${aliceJob.id}/runs/apc/trace` })).statusCode).toBe(200);
    expect((await as(alice, { url: `/v1/jobs/${aliceJob.id}/runs/apc/solution` })).statusCode).toBe(200);
    const events = await as(alice, { url: `/v1/jobs/${aliceJob.id}/events` });
    expect(events.statusCode).toBe(200);
    expect(events.body).toContain('event: status');
    expect((await as(alice, { url: `/v1/matrices/${aliceMatrix.id}` })).statusCode).toBe(200);
  });

  it('answers 404 to another key for every endpoint of a job, and never lists it', async () => {
    const id = aliceJob.id;
    expectProblem(await as(bob, { url: `/v1/jobs/${id}` }), 404, 'job-not-found');
    expectProblem(await as(bob, { url: `/v1/jobs/${id}/runs/apc/trace` }), 404, 'job-not-found');
    expectProblem(await as(bob, { url: `/v1/jobs/${id}/runs/apc/solution` }), 404, 'job-not-found');
    expectProblem(await as(bob, { url: `/v1/jobs/${id}/events` }), 404, 'job-not-found');
    expectProblem(await as(bob, { method: 'POST', url: `/v1/jobs/${id}/cancel` }), 404, 'job-not-found');
    expectProblem(await as(bob, { method: 'DELETE', url: `/v1/jobs/${id}` }), 404, 'job-not-found');
    // The same answer as for a job that never existed: existence is not revealed.
    const never = await as(bob, { url: `/v1/jobs/${id.slice(0, -4)}ZZZZ` });
    expect(never.statusCode).toBe(404);

    const bobList = (await as(bob, { url: '/v1/jobs?limit=200' })).json<JobPage>();
    expect(bobList.items.map((job) => job.id)).toEqual([bobJob.id]);
    const filtered = (await as(bob, { url: '/v1/jobs?status=succeeded' })).json<JobPage>();
    expect(filtered.items.map((job) => job.id)).not.toContain(id);
    const aliceList = (await as(alice, { url: '/v1/jobs' })).json<JobPage>();
    expect(aliceList.items.map((job) => job.id)).toEqual([id]);
    // Still there for its owner after bob's attempts.
    expect((await as(alice, { url: `/v1/jobs/${id}` })).json<Job>().status).toBe('succeeded');
  });

  it('answers 404 to another key for a matrix: reading, deleting, or naming it in a job', async () => {
    const id = aliceMatrix.id;
    expectProblem(await as(bob, { url: `/v1/matrices/${id}` }), 404, 'matrix-not-found');
    expectProblem(await as(bob, { method: 'DELETE', url: `/v1/matrices/${id}` }), 404, 'matrix-not-found');
    const stolen = await as(bob, {
      method: 'POST',
      url: '/v1/jobs',
      payload: { type: 'analyze', matrix: { format: 'stored', id }, partition: { machines: 1 } },
    });
    expectProblem(stolen, 404, 'matrix-not-found');
    const own = await as(alice, {
      method: 'POST',
      url: '/v1/jobs',
      payload: { type: 'analyze', matrix: { format: 'stored', id }, partition: { machines: 1 } },
    });
    expect(own.statusCode, own.body).toBe(202);
    await finished(alice, own.json<Job>().id);
    expect((await as(alice, { url: `/v1/matrices/${id}` })).statusCode).toBe(200);
  });

  it('lets an admin key see, list and act on every tenant', async () => {
    const all = (await as(admin, { url: '/v1/jobs?limit=200' })).json<JobPage>().items.map((job) => job.id);
    expect(all).toEqual(expect.arrayContaining([aliceJob.id, bobJob.id]));
    expect((await as(admin, { url: `/v1/jobs/${aliceJob.id}/runs/apc/trace` })).statusCode).toBe(200);
    expect((await as(admin, { url: `/v1/matrices/${aliceMatrix.id}` })).statusCode).toBe(200);
    expect((await as(admin, { method: 'DELETE', url: `/v1/jobs/${bobJob.id}` })).statusCode).toBe(204);
    expectProblem(await as(bob, { url: `/v1/jobs/${bobJob.id}` }), 404, 'job-not-found');
  });

  it('lets the owner delete its own job and matrix', async () => {
    const job = (await as(alice, { method: 'POST', url: '/v1/jobs', payload: SMALL_ANALYZE })).json<Job>();
    await finished(alice, job.id);
    expect((await as(alice, { method: 'DELETE', url: `/v1/jobs/${job.id}` })).statusCode).toBe(204);
    expect((await as(alice, { url: '/v1/jobs?limit=200' })).json<JobPage>().items.map((j) => j.id)).not.toContain(job.id);
    expect((await as(alice, { method: 'DELETE', url: `/v1/matrices/${aliceMatrix.id}` })).statusCode).toBe(204);
  });
});

describe('admin key endpoints', () => {
  it('create shows the secret once, list and get never; a tenant key cannot use them', async () => {
    const created = await as(admin, { method: 'POST', url: '/v1/admin/keys', payload: { name: 'carol', quotas: { activeJobs: 3 } } });
    expect(created.statusCode, created.body).toBe(201);
    const carol = created.json<CreatedApiKey>();
    expect(created.headers.location).toBe(`/v1/admin/keys/${carol.id}`);
    expect(carol).toMatchObject({ name: 'carol', admin: false, quotas: { activeJobs: 3 }, lastUsedAt: null, revokedAt: null });
    expect(carol.key).toMatch(/^lss_[A-Za-z0-9_-]{43}$/);

    const listed = await as(admin, { url: '/v1/admin/keys' });
    expect(listed.body).not.toContain(carol.key);
    const items = listed.json<{ items: ApiKey[] }>().items;
    expect(items.map((key) => key.name)).toEqual(expect.arrayContaining(['operator', 'alice', 'bob', 'carol']));
    expect(items.find((key) => key.id === carol.id)).not.toHaveProperty('key');

    expect((await as(carol, { url: '/v1/jobs' })).statusCode).toBe(200);
    const read = (await as(admin, { url: `/v1/admin/keys/${carol.id}` })).json<ApiKey>();
    expect(read.lastUsedAt).not.toBeNull();
    expect(Date.parse(read.lastUsedAt!)).toBeGreaterThanOrEqual(Date.parse(read.createdAt));

    expectProblem(await as(carol, { method: 'POST', url: '/v1/admin/keys', payload: { name: 'mallory', admin: true } }), 403, 'forbidden');
    expectProblem(await as(admin, { url: '/v1/admin/keys/01ARZ3NDEKTSV4RRFFQ69G5FAV' }), 404, 'key-not-found');
    expectProblem(await as(admin, { method: 'POST', url: '/v1/admin/keys', payload: { name: '' } }), 400, 'invalid-request');
    expectProblem(
      await as(admin, { method: 'POST', url: '/v1/admin/keys', payload: { name: 'x', quotas: { activeJobs: 0 } } }),
      400,
      'invalid-request',
    );
  });

  it('revocation takes effect at once, on this instance and on another one sharing the Redis', async () => {
    const dave = (await as(admin, { method: 'POST', url: '/v1/admin/keys', payload: { name: 'dave' } })).json<CreatedApiKey>();
    const otherService = await RedisJobService.start(service.config, pino({ level: 'silent' }));
    const other = await buildApp({ config: service.config, jobService: otherService, responseValidation: 'strict', extend: checkContract });
    try {
      expect((await call(other, dave, { url: '/v1/jobs' })).statusCode).toBe(200);
      expect((await as(dave, { url: '/v1/jobs' })).statusCode).toBe(200);

      const revoked = await as(admin, { method: 'DELETE', url: `/v1/admin/keys/${dave.id}` });
      expect(revoked.statusCode).toBe(200);
      expect(revoked.json<ApiKey>().revokedAt).not.toBeNull();

      expectProblem(await as(dave, { url: '/v1/jobs' }), 401, 'unauthorized');
      expectProblem(await call(other, dave, { url: '/v1/jobs' }), 401, 'unauthorized');
      // Revoking again is harmless; the key stays listed, revoked.
      expect((await as(admin, { method: 'DELETE', url: `/v1/admin/keys/${dave.id}` })).statusCode).toBe(200);
      const listed = (await as(admin, { url: '/v1/admin/keys' })).json<{ items: ApiKey[] }>().items;
      expect(listed.find((key) => key.id === dave.id)?.revokedAt).not.toBeNull();
    } finally {
      await other.close();
      await otherService.close();
    }
  });

  it('an admin key revoked is refused, and hasAdmin sees no live admin once the last one is revoked', async () => {
    const keys = service.jobService.keys;
    const second = await keys.create({ name: 'second admin', admin: true });
    expect(await keys.hasAdmin()).toBe(true);
    await keys.revoke(second.id);
    expectProblem(await as(second, { url: '/metrics' }), 401, 'unauthorized');
    await keys.revoke(admin.id);
    expect(await keys.hasAdmin()).toBe(false);
    expectProblem(await as(admin, { url: '/v1/admin/keys' }), 401, 'unauthorized');
    admin = await keys.create({ name: 'operator again', admin: true });
    expect(await keys.hasAdmin()).toBe(true);
  });
});
