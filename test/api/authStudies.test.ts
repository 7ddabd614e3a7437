/**
 * Studies under AUTH_MODE=keys, with a real Redis (no worker: the study stays queued): another key
 * gets 404 on every study endpoint and never sees it listed; its owner and an admin key see it; a
 * study over the key's study-samples limit is a 413 before anything is queued; a study may name only
 * its key's own stored matrices (another key's is a 404, as for jobs; an admin key may name any).
 */
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedApiKey } from '../../src/jobs/apiKeys/apiKey.js';
import { ApiKeyStore } from '../../src/jobs/apiKeys/apiKeyStore.js';
import type { ProblemDetails } from '../../src/jobs/types.js';
import { startStudyTestService, type StudyTestService } from '../support/studyService.js';

let service: StudyTestService;
let redis: Redis;
let admin: CreatedApiKey;
let alice: CreatedApiKey;
let bob: CreatedApiKey;
let limited: CreatedApiKey;

beforeAll(async () => {
  service = await startStudyTestService({ AUTH_MODE: 'keys' });
  redis = new Redis(service.redis.url);
  const keys = new ApiKeyStore(redis, service.config.KEY_PREFIX);
  admin = await keys.create({ name: 'operator', admin: true });
  alice = await keys.create({ name: 'alice' });
  bob = await keys.create({ name: 'bob' });
  limited = await keys.create({ name: 'limited', quotas: { studySamples: 10 } });
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await service?.close();
});

function as(key: CreatedApiKey | null, options: InjectOptions): Promise<LightMyRequestResponse> {
  const headers = { ...(options.headers ?? {}), ...(key ? { authorization: `Bearer ${key.key}` } : {}) };
  return service.app.inject({ ...options, headers });
}

const STUDY = { preset: 'experiment-1', samples: 20, grid: { mean: [0], m: [2] } };

function expectNotFound(response: LightMyRequestResponse): void {
  expect(response.statusCode, response.body).toBe(404);
  expect(response.json<ProblemDetails>().code).toBe('study-not-found');
}

describe('studies of two tenants', () => {
  it("answers 404 to another key on every study endpoint, lists only the key's own, and lets an admin see all", async () => {
    expect((await as(null, { method: 'POST', url: '/v1/studies', payload: STUDY })).statusCode).toBe(401);
    const created = await as(alice, { method: 'POST', url: '/v1/studies', payload: STUDY });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<{ id: string }>().id;

    expectNotFound(await as(bob, { url: `/v1/studies/${id}` }));
    expectNotFound(await as(bob, { url: `/v1/studies/${id}/samples.csv` }));
    expectNotFound(await as(bob, { url: `/v1/studies/${id}/events` }));
    expectNotFound(await as(bob, { method: 'POST', url: `/v1/studies/${id}/cancel` }));
    expectNotFound(await as(bob, { method: 'DELETE', url: `/v1/studies/${id}` }));
    const ids = (response: LightMyRequestResponse) => response.json<{ items: { id: string }[] }>().items.map((study) => study.id);
    expect(ids(await as(bob, { url: '/v1/studies' }))).toEqual([]);

    expect((await as(alice, { url: `/v1/studies/${id}` })).statusCode).toBe(200);
    expect(ids(await as(alice, { url: '/v1/studies' }))).toEqual([id]);
    expect((await as(admin, { url: `/v1/studies/${id}` })).statusCode).toBe(200);
    expect(ids(await as(admin, { url: '/v1/studies' }))).toContain(id);

    // Still there, untouched by bob's attempts; its owner cancels it.
    const cancelled = await as(alice, { method: 'POST', url: `/v1/studies/${id}/cancel` });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
  });

  it("names only the key's own stored matrices: another key's is a 404 and nothing is stored; an admin names any", async () => {
    const text = '%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 2\n2 2 3\n3 3 4\n1 3 1\n';
    const upload = await as(alice, { method: 'POST', url: '/v1/matrices', payload: text, headers: { 'content-type': 'text/plain' } });
    expect(upload.statusCode, upload.body).toBe(201);
    const matrix = { format: 'stored', id: upload.json<{ id: string }>().id };
    const study = { matrix, grid: { m: [2, 3] }, samples: 1, metrics: ['rates.apc.rate'] };
    const studyKeys = `${service.config.KEY_PREFIX}:store:${service.config.STUDY_QUEUE_NAME}:study:*`;
    const keysBefore = (await redis.keys(studyKeys)).length;

    const refused = await as(bob, { method: 'POST', url: '/v1/studies', payload: study });
    expect(refused.statusCode, refused.body).toBe(404);
    expect(refused.json<ProblemDetails>().code).toBe('matrix-not-found');
    expect((await as(bob, { url: '/v1/studies' })).json<{ items: unknown[] }>().items).toEqual([]);
    expect((await redis.keys(studyKeys)).length).toBe(keysBefore);

    const own = await as(alice, { method: 'POST', url: '/v1/studies', payload: study });
    expect(own.statusCode, own.body).toBe(202);
    expect(own.json<{ points: { settings: { n: number } }[] }>().points[0].settings.n).toBe(3);
    const operator = await as(admin, { method: 'POST', url: '/v1/studies', payload: study });
    expect(operator.statusCode, operator.body).toBe(202);
    for (const created of [own, operator]) {
      const id = created.json<{ id: string }>().id;
      const owner = created === own ? alice : admin;
      expect((await as(owner, { method: 'POST', url: `/v1/studies/${id}/cancel` })).statusCode).toBe(200);
    }
  });

  it("refuses a study over the key's study-samples limit with 413 before anything is queued", async () => {
    const refused = await as(limited, { method: 'POST', url: '/v1/studies', payload: STUDY });
    expect(refused.statusCode, refused.body).toBe(413);
    expect(refused.json<ProblemDetails>().code).toBe('quota-too-large');
    expect((await as(limited, { url: '/v1/studies' })).json<{ items: unknown[] }>().items).toEqual([]);
    const fits = await as(limited, { method: 'POST', url: '/v1/studies', payload: { ...STUDY, samples: 10 } });
    expect(fits.statusCode, fits.body).toBe(202);
  });
});
