/**
 * The contract check itself (test/support/contract.ts): it passes responses that keep the
 * OpenAPI document, and fails each kind of break (an undeclared status, field, media type or
 * body, a wrong type, a missing required header), on fabricated responses and through the hook the
 * test service installs. Event streams, which the hook cannot see, are checked here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import type { Job } from '../../src/jobs/types.js';
import { assertContractKept, checkContract, contract, type ObservedResponse } from '../support/contract.js';
import { createJob, startTestService, waitForJob, type TestService } from '../support/service.js';
import { openEventStream } from '../support/sse.js';

let service: TestService;
let job: Job;
let location: string;

beforeAll(async () => {
  service = await startTestService({}, { listen: true });
  const created = await createJob(service.app, {
    type: 'analyze',
    matrix: { format: 'generator', generator: 'gaussian', n: 12, seed: 3 },
    partition: { machines: 3 },
  });
  job = created.job;
  location = String(created.response.headers.location);
  await waitForJob(service.app, job.id);
});

afterAll(async () => {
  await service?.close();
});

const json = (value: unknown): string => JSON.stringify(value);
const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
const notFound = { type: '/problems/job-not-found', title: 'Job not found', status: 404, detail: 'No job x.', code: 'job-not-found' };

function check(response: Partial<ObservedResponse> & Pick<ObservedResponse, 'url' | 'statusCode'>): string[] {
  return contract().violations({ method: 'GET', headers: { 'content-type': JSON_TYPE }, body: '', ...response });
}

describe('the contract check', () => {
  it('passes responses that keep the document', () => {
    expect(check({ url: '/healthz', statusCode: 200, body: json({ status: 'ok' }) })).toEqual([]);
    expect(check({ url: `/v1/jobs/${job.id}?x=1`, statusCode: 200, body: json(job) })).toEqual([]);
    expect(check({ method: 'DELETE', url: `/v1/jobs/${job.id}`, statusCode: 204, headers: {} })).toEqual([]);
    expect(
      check({ method: 'POST', url: '/v1/jobs', statusCode: 202, headers: { 'content-type': JSON_TYPE, location }, body: json(job) }),
    ).toEqual([]);
    const problem = { headers: { 'content-type': PROBLEM_TYPE }, body: json(notFound) };
    expect(check({ url: '/v1/jobs/x', statusCode: 404, ...problem })).toEqual([]);
    expect(check({ url: '/no/such/endpoint', statusCode: 404, ...problem })).toEqual([]);
    expect(
      check({ url: '/metrics', statusCode: 200, headers: { 'content-type': 'text/plain; version=0.0.4' }, body: '# metrics\n' }),
    ).toEqual([]);
  });

  it('fails an undeclared status', () => {
    const problem = { headers: { 'content-type': PROBLEM_TYPE }, body: json({ ...notFound, status: 409 }) };
    expect(check({ url: '/healthz', statusCode: 409, ...problem })).toEqual([expect.stringMatching(/health does not declare 409/)]);
    expect(check({ url: '/no/such/endpoint', statusCode: 200, body: '{}' })).toEqual([expect.stringMatching(/no operation/)]);
  });

  it('fails an undeclared field, a wrong type and a missing required field, naming them', () => {
    expect(check({ url: '/healthz', statusCode: 200, body: json({ status: 'ok', uptime: 3 }) })).toEqual([
      expect.stringMatching(/must NOT have additional properties/),
    ]);
    expect(check({ url: `/v1/jobs/${job.id}`, statusCode: 200, body: json({ ...job, n: 'twelve' }) })).toEqual([
      expect.stringMatching(/\/n must be integer/),
    ]);
    const { attempts: _attempts, ...withoutAttempts } = job;
    expect(check({ url: `/v1/jobs/${job.id}`, statusCode: 200, body: json(withoutAttempts) })).toEqual([
      expect.stringMatching(/must have required property 'attempts'/),
    ]);
    expect(check({ url: '/v1/jobs/x', statusCode: 404, headers: { 'content-type': PROBLEM_TYPE }, body: json({ title: 'x' }) })).toEqual([
      expect.stringMatching(/required property 'type'/),
    ]);
  });

  it("fails a missing required header (the 202's Location), an undeclared media type, a body where none is declared", () => {
    expect(check({ method: 'POST', url: '/v1/jobs', statusCode: 202, body: json(job) })).toEqual([
      expect.stringMatching(/required header Location is missing/),
    ]);
    expect(check({ url: '/healthz', statusCode: 200, headers: { 'content-type': 'text/html' }, body: '<p>ok</p>' })).toEqual([
      expect.stringMatching(/media type text\/html is not declared/),
    ]);
    expect(check({ url: `/v1/jobs/${job.id}`, statusCode: 200, body: '{"id": ' })).toEqual([expect.stringMatching(/is not JSON/)]);
    expect(check({ method: 'DELETE', url: `/v1/jobs/${job.id}`, statusCode: 204, body: json(job) })).toEqual([
      expect.stringMatching(/declares no content, but a body was sent/),
    ]);
  });

  it('through the hook of the test service: a response broken on its way out fails the check', async () => {
    const seen: string[] = [];
    const app = await buildApp({
      config: service.config,
      jobService: service.jobService,
      responseValidation: 'strict',
      extend: (root) => {
        // Break /healthz's answer after serialization (an undeclared field), and answer /readyz with
        // a status no operation declares; the contract hook runs after these.
        root.addHook('onSend', async (request, reply, payload) => {
          if (request.url === '/healthz') return json({ status: 'ok', uptime: 1 });
          if (request.url === '/readyz') void reply.code(418);
          return payload;
        });
        checkContract(root, (violations) => seen.push(...violations));
      },
    });
    try {
      expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
      expect(seen).toEqual([expect.stringMatching(/GET \/healthz -> 200: .*additional properties/)]);
      expect((await app.inject({ url: '/readyz' })).statusCode).toBe(418);
      expect(seen[1]).toMatch(/GET \/readyz -> 418: ready does not declare 418/);
      // Untouched answers keep the contract, errors included.
      seen.length = 0;
      await app.inject({ url: `/v1/jobs/${job.id}` });
      await app.inject({ url: `/v1/jobs/${'x'.repeat(65)}` });
      await app.inject({ method: 'POST', url: '/v1/jobs', headers: { 'content-type': 'text/plain' }, payload: 'x' });
      await app.inject({ url: '/metrics' });
      expect(seen).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe('a violation fails the test that received it', () => {
  it('the default report keeps it for the afterEach check, which throws it once', async () => {
    const app = await buildApp({
      config: service.config,
      jobService: service.jobService,
      extend: (root) => {
        root.addHook('onSend', async (request, _reply, payload) => (request.url === '/healthz' ? json({ status: 'fine' }) : payload));
        checkContract(root);
      },
    });
    try {
      await app.inject({ url: '/healthz' });
      // What the afterEach of test/support/contract.ts runs after every test of the file:
      expect(() => assertContractKept()).toThrow(
        /GET \/healthz -> 200: the body does not match the schema: .*status must be equal to one of the allowed values/,
      );
      expect(() => assertContractKept()).not.toThrow();
    } finally {
      await app.close();
    }
  });
});

describe('event streams (not seen by the hook)', () => {
  it("a job's events, status and progress, each match the stream's declared data (JobEventData)", async () => {
    const solve = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'generator', generator: 'gaussian', n: 60, seed: 4 },
      partition: { machines: 4 },
      algorithms: ['dgd', 'apc'],
      options: { maxIterations: 20_000, tolerance: 1e-12 },
    });
    const stream = await openEventStream(`${service.baseUrl}/v1/jobs/${solve.job.id}/events`);
    await stream.ended;
    expect(stream.events.map((event) => event.event)).toContain('status');
    for (const event of stream.events) expect(contract().eventViolations('/v1/jobs/{id}/events', event.data)).toEqual([]);
    // A status event with a job that is not one, or progress without its phase, is refused.
    const status = stream.events.find((event) => event.event === 'status')!.data as { job: Job };
    expect(contract().eventViolations('/v1/jobs/{id}/events', { ...status, job: { ...status.job, n: 'twelve' } })).toEqual([
      expect.stringMatching(/does not match the schema/),
    ]);
    expect(contract().eventViolations('/v1/jobs/{id}/events', { fraction: 0.5, updatedAt: '2026-12-07T00:00:00Z' })).toEqual([
      expect.stringMatching(/does not match the schema/),
    ]);
  });

  it('GET /v1/jobs/{id}/events answers 200 text/event-stream as declared', async () => {
    const controller = new AbortController();
    const response = await fetch(`${service.baseUrl}/v1/jobs/${job.id}/events`, { signal: controller.signal });
    try {
      const observed = {
        method: 'GET',
        url: `/v1/jobs/${job.id}/events`,
        statusCode: response.status,
        headers: { 'content-type': response.headers.get('content-type') ?? undefined },
        body: undefined,
      };
      expect(response.status).toBe(200);
      expect(contract().violations(observed)).toEqual([]);
      expect(contract().violations({ ...observed, headers: { 'content-type': 'application/json' } })).toEqual([
        expect.stringMatching(/media type application\/json is not declared/),
      ]);
    } finally {
      controller.abort();
    }
  });
});
