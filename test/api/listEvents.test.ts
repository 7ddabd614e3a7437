/**
 * GET /v1/events, the list-wide event stream, under AUTH_MODE=keys with a real Redis and a separate
 * worker process: a snapshot first (the unfinished jobs and studies the key may see), then the
 * events of two jobs and a study on one stream; each key sees only its own, an admin key all; a
 * status filter; the stream outlives a deleted job; app.close() ends every open stream.
 */
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedApiKey } from '../../src/jobs/apiKeys/apiKey.js';
import { ApiKeyStore } from '../../src/jobs/apiKeys/apiKeyStore.js';
import { ListEventDataSchema, type ListEvent, type ListSnapshot, type ListStatusEvent } from '../../src/api/schemas/listEvent.js';
import { openEventStream, type EventStream, type SseEvent } from '../support/sse.js';
import { startStudyTestService, type StudyTestService } from '../support/studyService.js';

let service: StudyTestService;
let redis: Redis;
let admin: CreatedApiKey;
let alice: CreatedApiKey;
let bob: CreatedApiKey;
const streams: EventStream[] = [];

beforeAll(async () => {
  service = await startStudyTestService({ AUTH_MODE: 'keys', SSE_HEARTBEAT_MS: 200 });
  redis = new Redis(service.redis.url);
  const keys = new ApiKeyStore(redis, service.config.KEY_PREFIX);
  admin = await keys.create({ name: 'operator', admin: true });
  alice = await keys.create({ name: 'alice' });
  bob = await keys.create({ name: 'bob' });
}, 60_000);

afterAll(async () => {
  for (const stream of streams) stream.close();
  redis?.disconnect();
  await service?.close();
});

function as(key: CreatedApiKey, options: InjectOptions): Promise<LightMyRequestResponse> {
  return service.app.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: `Bearer ${key.key}` } });
}

async function open(key: CreatedApiKey, query = ''): Promise<EventStream> {
  const stream = await openEventStream(`${service.baseUrl}/v1/events${query}`, { authorization: `Bearer ${key.key}` });
  streams.push(stream);
  expect(stream.status).toBe(200);
  expect(stream.contentType).toMatch(/^text\/event-stream/);
  await stream.waitFor((event) => event.event === 'snapshot');
  return stream;
}

async function create(key: CreatedApiKey, url: '/v1/jobs' | '/v1/studies', payload: object): Promise<string> {
  const response = await as(key, { method: 'POST', url, payload });
  expect(response.statusCode, response.body).toBe(202);
  return response.json<{ id: string }>().id;
}

const JOB = {
  type: 'solve',
  matrix: { format: 'generator', generator: 'gaussian', n: 24, seed: 5 },
  partition: { machines: 3 },
  algorithms: ['apc', 'dhbm'],
};
const STUDY = { preset: 'experiment-1', samples: 12, grid: { mean: [0], m: [2, 3] } };

const ofItem = (id: string) => (event: SseEvent) =>
  (event.event === 'status' || event.event === 'progress') && (event.data as { id: string }).id === id;
const finished =
  (id: string, status = 'succeeded') =>
  (event: SseEvent) =>
    event.event === 'status' && (event.data as ListStatusEvent).id === id && (event.data as ListStatusEvent).status === status;

function snapshotOf(stream: EventStream): ListSnapshot {
  expect(stream.events[0].event).toBe('snapshot');
  return stream.events[0].data as ListSnapshot;
}

describe('the list-wide event stream', () => {
  it('needs a key', async () => {
    const response = await service.app.inject({ url: '/v1/events' });
    expect(response.statusCode).toBe(401);
    expect(
      (await service.app.inject({ url: '/v1/events?status=done', headers: { authorization: `Bearer ${admin.key}` } })).statusCode,
    ).toBe(400);
  });

  it("answers HEAD at once over the socket with the stream's head, no body (it held the socket, unanswered, until the client gave up)", async () => {
    const headers = { authorization: `Bearer ${admin.key}` };
    const list = await fetch(`${service.baseUrl}/v1/events`, { method: 'HEAD', headers, signal: AbortSignal.timeout(5000) });
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await list.text()).toBe('');
    // A job's stream too, while the job is unfinished (a finished job's ends at its first event anyway).
    const id = await create(alice, '/v1/jobs', JOB);
    const job = await fetch(`${service.baseUrl}/v1/jobs/${id}/events`, { method: 'HEAD', headers, signal: AbortSignal.timeout(5000) });
    expect(job.status).toBe(200);
    expect(job.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const missing = await fetch(`${service.baseUrl}/v1/jobs/01NOSUCHJOB0000000000000000/events`, { method: 'HEAD', headers });
    expect(missing.status).toBe(404);
    // Gone before the next tests, whose snapshots list the unfinished jobs (no worker yet: it is still queued).
    expect((await as(alice, { method: 'POST', url: `/v1/jobs/${id}/cancel` })).statusCode).toBe(200);
    expect((await as(alice, { method: 'DELETE', url: `/v1/jobs/${id}` })).statusCode).toBe(204);
  });

  it("carries two jobs and a study on one stream, each key's own only, after a snapshot of the unfinished ones", async () => {
    const adminStream = await open(admin);
    const aliceStream = await open(alice);
    const bobStream = await open(bob);
    const aliceSucceeded = await open(alice, '?status=succeeded');
    const adminRunning = await open(admin, '?status=running');

    // No worker yet: everything stays queued.
    const aliceJob = await create(alice, '/v1/jobs', JOB);
    const bobJob = await create(bob, '/v1/jobs', { ...JOB, matrix: { ...JOB.matrix, seed: 6 } });
    const aliceStudy = await create(alice, '/v1/studies', STUDY);

    // Created: a status event each, to the streams that may see them.
    await adminStream.waitFor(finished(aliceJob, 'queued'));
    await adminStream.waitFor(finished(bobJob, 'queued'));
    await aliceStream.waitFor(finished(aliceJob, 'queued'));

    // A stream opened now (a reconnecting client) starts from a snapshot of what is unfinished.
    const late = await open(alice);
    const snapshot = snapshotOf(late);
    expect(snapshot.jobs.map((job) => job.id)).toEqual([aliceJob]);
    expect(snapshot.jobs[0].status).toBe('queued');
    expect(snapshot.studies.map((study) => study.id)).toEqual([aliceStudy]);
    expect(snapshot.truncated).toBe(false);
    expect(
      snapshotOf(await open(admin))
        .jobs.map((job) => job.id)
        .sort(),
    ).toEqual([aliceJob, bobJob].sort());

    service.spawnWorker();
    for (const id of [aliceJob, bobJob, aliceStudy]) await adminStream.waitFor(finished(id), 240_000);
    for (const id of [aliceJob, aliceStudy]) {
      await aliceStream.waitFor(finished(id));
      await late.waitFor(finished(id));
      await aliceSucceeded.waitFor(finished(id));
    }
    await bobStream.waitFor(finished(bobJob));

    // Each key sees its own only.
    expect(aliceStream.events.some(ofItem(bobJob))).toBe(false);
    expect(bobStream.events.some(ofItem(aliceJob))).toBe(false);
    expect(bobStream.events.some(ofItem(aliceStudy))).toBe(false);
    // The filtered stream: no snapshot entries of other statuses, only the entries into `succeeded`, no progress.
    expect(snapshotOf(aliceSucceeded)).toEqual({ jobs: [], studies: [], truncated: false });
    const filtered = aliceSucceeded.events.slice(1);
    expect(filtered.every((event) => event.event === 'status' && (event.data as ListStatusEvent).status === 'succeeded')).toBe(true);
    expect(filtered.map((event) => (event.data as ListStatusEvent).id).sort()).toEqual([aliceJob, aliceStudy].sort());

    const statusesOf = (stream: EventStream, id: string) =>
      stream.events.filter((event) => event.event === 'status' && ofItem(id)(event)).map((event) => (event.data as ListStatusEvent).status);
    // Filtered on `running`: an item's entry into it and its exit from it, never its creation.
    await adminRunning.waitFor(finished(bobJob));
    expect(statusesOf(adminRunning, aliceJob)).toEqual(['running', 'succeeded']);
    expect(statusesOf(adminRunning, bobJob)).toEqual(['running', 'succeeded']);

    // Each item's statuses arrive in order, and the study's progress reaches its total.
    expect(statusesOf(adminStream, aliceJob)).toEqual(['queued', 'running', 'succeeded']);
    expect(statusesOf(adminStream, aliceStudy)).toEqual(['running', 'succeeded']);
    const studyDone = adminStream.events.find(finished(aliceStudy))!.data as Extract<ListStatusEvent, { kind: 'study' }>;
    expect(studyDone.study.progress).toEqual({ done: 2 * STUDY.samples, total: 2 * STUDY.samples });

    // Every event is what the OpenAPI document declares.
    for (const stream of [adminStream, aliceStream, bobStream, aliceSucceeded, adminRunning, late])
      for (const event of stream.events) {
        expect(['snapshot', 'status', 'progress']).toContain(event.event);
        expect(ListEventDataSchema.safeParse(event.data).success, JSON.stringify(event)).toBe(true);
      }
    expect(adminStream.comments).toContain('heartbeat');
  }, 300_000);

  it('outlives a deleted job and carries the next one; app.close() ends every open stream', async () => {
    const aliceStream = await open(alice);
    const first = await create(alice, '/v1/jobs', JOB);
    await aliceStream.waitFor(finished(first), 120_000);
    expect((await as(alice, { method: 'DELETE', url: `/v1/jobs/${first}` })).statusCode).toBe(204);
    const next = await create(alice, '/v1/jobs', { ...JOB, matrix: { ...JOB.matrix, seed: 9 } });
    const done = (await aliceStream.waitFor(finished(next), 120_000)).data as ListEvent['data'];
    expect(done).toMatchObject({ kind: 'job', id: next, job: { id: next, status: 'succeeded', n: 24, m: 3 } });

    await service.app.close();
    await Promise.all(streams.map((stream) => stream.ended));
  }, 300_000);
});
