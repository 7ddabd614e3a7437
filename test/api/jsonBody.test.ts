/**
 * JSON request bodies and their content coding (src/api/plugins/jsonBody.ts), over a real socket on
 * every operation that takes one (POST /v1/jobs, /v1/studies, /v1/admin/keys): a gzip body is taken
 * as the same body sent plain; `identity` is the body as sent; any other coding (br, deflate) is a
 * 415 with `Accept-Encoding: gzip` and creates nothing; BODY_LIMIT_BYTES bounds the body as sent and
 * once decompressed (a gzip bomb is a 413); a body labelled gzip that is not gzip data is a 400
 * naming gzip. Every answer is also checked against the OpenAPI document (test/support/contract.ts).
 */
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProblemDetails } from '../../src/jobs/types.js';
import { startStudyTestService, type StudyTestService } from '../support/studyService.js';

const LIMIT = 64 * 1024;
let service: StudyTestService;

beforeAll(async () => {
  // No worker: jobs and studies stay queued.
  service = await startStudyTestService({ BODY_LIMIT_BYTES: LIMIT });
}, 60_000);

afterAll(async () => {
  await service?.close();
});

function dense(n: number): number[][] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? n : ((i * 7 + j * 3) % 5) / 4)));
}

/** One body of each operation that takes JSON, and what its answer must repeat. */
const OPERATIONS = [
  { path: '/v1/jobs', status: 202, body: { type: 'analyze', matrix: { format: 'dense', data: dense(40) }, partition: { machines: 4 } } },
  { path: '/v1/studies', status: 202, body: { grid: { m: [2, 3] }, samples: 10, metrics: ['rates.apc.rate'] } },
  { path: '/v1/admin/keys', status: 201, body: { name: 'gzip', quotas: { activeJobs: 3 } } },
] as const;

function post(path: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${service.baseUrl}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
}

/** A created resource without what differs between two creations (its id, secret and times). */
function comparable(resource: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(resource).filter(([key]) => key !== 'id' && key !== 'key' && !key.endsWith('At')));
}

async function problemOf(response: Response): Promise<ProblemDetails> {
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await response.json()) as ProblemDetails;
}

async function counts(): Promise<number[]> {
  const lists = ['/v1/jobs?limit=200', '/v1/studies?limit=200', '/v1/admin/keys'];
  return Promise.all(
    lists.map(async (path) => ((await (await fetch(`${service.baseUrl}${path}`)).json()) as { items: unknown[] }).items.length),
  );
}

describe('a gzip body (Content-Encoding: gzip)', () => {
  it('is taken as the same body sent plain, on every operation that takes JSON', async () => {
    for (const { path, status, body } of OPERATIONS) {
      const text = JSON.stringify(body);
      const plain = await post(path, text);
      expect(plain.status, path).toBe(status);
      const expected = comparable((await plain.json()) as Record<string, unknown>);
      for (const [coding, payload] of [
        ['gzip', gzipSync(text)],
        ['x-gzip', gzipSync(text)],
        ['identity', text],
      ] as const) {
        const sent = await post(path, payload, { 'content-encoding': coding });
        expect(sent.status, `${path} ${coding}`).toBe(status);
        expect(comparable((await sent.json()) as Record<string, unknown>), `${path} ${coding}`).toEqual(expected);
      }
    }
  });

  it('is refused with 400 naming gzip when it is not gzip data (nothing created); gzip of bad JSON is malformed-json', async () => {
    const before = await counts();
    for (const { path, body } of OPERATIONS) {
      const text = JSON.stringify(body);
      for (const payload of [text, gzipSync(text).subarray(0, 20)]) {
        const response = await post(path, payload, { 'content-encoding': 'gzip' });
        expect(response.status, path).toBe(400);
        const problem = await problemOf(response);
        expect(problem.code).toBe('invalid-request');
        expect(problem.detail).toMatch(/not valid gzip data \(Content-Encoding: gzip\)/);
      }
      const malformed = await post(path, gzipSync('{"name": '), { 'content-encoding': 'gzip' });
      expect(malformed.status, path).toBe(400);
      expect((await problemOf(malformed)).code).toBe('malformed-json');
    }
    expect(await counts()).toEqual(before);
  });

  it('is bounded by BODY_LIMIT_BYTES once decompressed: a gzip bomb is a 413, as is a body over it as sent', async () => {
    const before = await counts();
    // 32 MiB of spaces around a JSON document: about 32 KB of gzip, within the limit as sent.
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"name": "bomb"'), Buffer.alloc(32 * 2 ** 20, ' '), Buffer.from('}')]));
    expect(bomb.length).toBeLessThan(LIMIT);
    for (const { path } of OPERATIONS) {
      const response = await post(path, bomb, { 'content-encoding': 'gzip' });
      expect(response.status, path).toBe(413);
      const problem = await problemOf(response);
      expect(problem.code).toBe('body-too-large');
      expect(problem.detail).toBe(`The request body exceeds ${LIMIT} bytes (BODY_LIMIT_BYTES) once decompressed (Content-Encoding: gzip).`);
    }
    // Just over the limit as sent (incompressible once gzip-compressed).
    const over = Buffer.alloc(LIMIT + 10, 0x41);
    const sent = await post('/v1/jobs', over, { 'content-encoding': 'gzip' });
    expect(sent.status).toBe(413);
    expect((await problemOf(sent)).code).toBe('body-too-large');
    expect(await counts()).toEqual(before);
  });
});

describe('other content codings', () => {
  it('br and deflate are 415 with Accept-Encoding: gzip, whatever the body; nothing is created', async () => {
    const before = await counts();
    for (const { path, body } of OPERATIONS) {
      const text = JSON.stringify(body);
      for (const [coding, payload] of [
        ['br', text],
        ['deflate', deflateSync(text)],
        ['gzip, br', gzipSync(text)],
      ] as const) {
        const response = await post(path, payload, { 'content-encoding': coding });
        expect(response.status, `${path} ${coding}`).toBe(415);
        expect(response.headers.get('accept-encoding')).toBe('gzip');
        const problem = await problemOf(response);
        expect(problem.code).toBe('unsupported-media-type');
        expect(problem.detail).toBe(
          `Content-Encoding '${coding}' is not supported; send the JSON body as is or gzip-compressed (Content-Encoding: gzip).`,
        );
      }
    }
    expect(await counts()).toEqual(before);
  });

  it('a Matrix Market upload in br is a 415 with Accept-Encoding: gzip too', async () => {
    const response = await fetch(`${service.baseUrl}/v1/matrices`, {
      method: 'POST',
      body: '%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n',
      headers: { 'content-type': 'text/plain', 'content-encoding': 'br' },
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('accept-encoding')).toBe('gzip');
    expect((await problemOf(response)).detail).toMatch(/Content-Encoding 'br' is not supported; send the Matrix Market text as is/);
  });
});

describe('a JSON key that could poison prototypes', () => {
  it("'__proto__' or 'constructor.prototype' is a 400 saying so, not 'not valid JSON'; nothing is created", async () => {
    const before = await counts();
    for (const { path, body } of OPERATIONS) {
      for (const text of [
        `{"__proto__": {"admin": true}, ${JSON.stringify(body).slice(1)}`,
        `{"constructor": {"prototype": {"admin": true}}, ${JSON.stringify(body).slice(1)}`,
      ]) {
        for (const [coding, payload] of [
          ['identity', text],
          ['gzip', gzipSync(text)],
        ] as const) {
          const response = await post(path, payload, { 'content-encoding': coding });
          expect(response.status, `${path} ${coding}`).toBe(400);
          const problem = await problemOf(response);
          expect(problem.code).toBe('invalid-request');
          expect(problem.detail).toMatch(/^The request body holds a key '__proto__' \(or 'constructor' with 'prototype'\)/);
        }
      }
      // Invalid JSON is still malformed-json.
      const malformed = await post(path, '{"__proto__": ');
      expect((await problemOf(malformed)).code).toBe('malformed-json');
    }
    expect(await counts()).toEqual(before);
  });
});
