/**
 * Bad input: each answered with the right status and an RFC 9457 problem naming the cause, and
 * the service healthy afterwards (/healthz 200, a good job still succeeds).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { ProblemSchema } from '../../src/api/schemas/problem.js';
import type { ProblemDetails } from '../../src/jobs/types.js';
import { checkContract } from '../support/contract.js';
import { matrixMarket } from '../support/fixtures.js';
import { runJob, startTestService, type TestService } from '../support/service.js';
import { GOOD_JOB as good } from '../support/requests.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ MAX_N: 500, MAX_MACHINES: 8 });
});

afterAll(async () => {
  await service?.close();
});

async function post(payload: unknown, headers: Record<string, string> = {}) {
  const response = await service.app.inject({
    method: 'POST',
    url: '/v1/jobs',
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  const problem = ProblemSchema.parse(response.json());
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(problem.status).toBe(response.statusCode);
  expect(problem.type).toBe(`/problems/${problem.code}`);
  return { status: response.statusCode, problem };
}

describe('400: malformed JSON and schema violations', () => {
  it('rejects malformed JSON', async () => {
    const { status, problem } = await post('{"type": "analyze", "matrix": ');
    expect(status).toBe(400);
    expect(problem.code).toBe('malformed-json');
  });

  it('names the missing or wrong field', async () => {
    let { status, problem } = await post({ matrix: good.matrix, partition: good.partition });
    expect(status).toBe(400);
    expect(problem.code).toBe('invalid-request');
    expect(problem.errors).toContainEqual(expect.objectContaining({ in: 'body', path: '/type' }));
    expect(problem.detail).toContain('/type');

    ({ status, problem } = await post({ ...good, matrix: { format: 'png', data: [] } }));
    expect(status).toBe(400);
    expect(problem.errors![0].path).toBe('/matrix/format');

    ({ status, problem } = await post({ ...good, partition: { machines: 'two' } }));
    expect(status).toBe(400);
    expect(problem.errors).toEqual([expect.objectContaining({ path: '/partition/machines' })]);

    ({ status, problem } = await post({ ...good, partition: {} }));
    expect(status).toBe(400);
    expect(problem.errors![0].path).toBe('/partition');

    ({ status, problem } = await post({
      ...good,
      matrix: {
        format: 'dense',
        data: [
          [1, true],
          [1, 2],
        ],
      },
    }));
    expect(status).toBe(400);
    expect(problem.errors![0].path).toBe('/matrix/data/0/1');

    ({ status, problem } = await post({ ...good, algorithm: ['apc'] }));
    expect(status).toBe(400);
    expect(problem.detail).toMatch(/algorithm/);

    ({ status, problem } = await post({ ...good, type: 'solve', options: { parameters: { gmres: { x: 1 } } } }));
    expect(status).toBe(400);
    expect(problem.errors![0].path).toMatch(/^\/options\/parameters/);

    const query = await service.app.inject({ url: '/v1/jobs?limit=0' });
    expect(query.statusCode).toBe(400);
    expect(query.json<ProblemDetails>().errors?.[0]).toMatchObject({ in: 'query', path: '/limit' });
  });
});

describe('422: invalid problems, with a detail naming the cause', () => {
  it('rejects a non-square dense matrix', async () => {
    const { status, problem } = await post({
      ...good,
      matrix: {
        format: 'dense',
        data: [
          [1, 2, 3],
          [4, 5, 6],
        ],
      },
    });
    expect(status).toBe(422);
    expect(problem.code).toBe('not-square');
    expect(problem.detail).toMatch(/2 x 3/);
  });

  it('rejects a wide Matrix Market matrix (fewer rows than columns)', async () => {
    const wide = '%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1\n2 3 1\n';
    const { status, problem } = await post({ ...good, matrix: { format: 'matrix-market', data: wide } });
    expect(status).toBe(422);
    expect(problem.code).toBe('not-square');
    expect(problem.detail).toMatch(/2 x 3/);
  });

  it('rejects the complex qc324.mtx', async () => {
    const { status, problem } = await post({ ...good, matrix: { format: 'matrix-market', data: matrixMarket('qc324.mtx') } });
    expect(status).toBe(422);
    expect(problem.code).toBe('unsupported-matrix');
    expect(problem.detail).toMatch(/complex/i);
  });

  it('rejects NaN and Infinity written as strings, naming the entry', async () => {
    let { status, problem } = await post({
      ...good,
      matrix: {
        format: 'dense',
        data: [
          [1, 0, 0],
          [0, 'NaN', 0],
          [0, 0, 1],
        ],
      },
    });
    expect(status).toBe(422);
    expect(problem.code).toBe('non-finite-value');
    expect(problem.detail).toContain('matrix entry (1, 1)');

    ({ status, problem } = await post({ ...good, rhs: [1, '-Infinity', 3] }));
    expect(status).toBe(422);
    expect(problem.code).toBe('non-finite-value');
    expect(problem.detail).toContain('rhs[1]');

    ({ status, problem } = await post({
      ...good,
      matrix: {
        format: 'coo',
        rows: 2,
        cols: 2,
        entries: [
          [0, 0, 1],
          [1, 1, 'Infinity'],
        ],
      },
      partition: { machines: 1 },
    }));
    expect(status).toBe(422);
    expect(problem.detail).toContain('matrix entry (1, 1)');
  });

  it('rejects NaN and Infinity written as huge literals (1e999)', async () => {
    let { status, problem } = await post(
      '{"type":"analyze","matrix":{"format":"dense","data":[[1,0],[0,1e999]]},"partition":{"machines":2}}',
    );
    expect(status).toBe(422);
    expect(problem.code).toBe('non-finite-value');
    expect(problem.detail).toContain('matrix entry (1, 1)');

    ({ status, problem } = await post(
      '{"type":"analyze","matrix":{"format":"dense","data":[[1,0],[0,1]]},"rhs":[-1e999,1],"partition":{"machines":2}}',
    ));
    expect(status).toBe(422);
    expect(problem.detail).toContain('rhs[0]');
  });

  it('rejects partitions that skip or repeat rows, empty machines and too many machines', async () => {
    let { status, problem } = await post({
      ...good,
      partition: {
        groups: [
          [0, 1],
          [1, 2],
        ],
      },
    });
    expect(status).toBe(422);
    expect(problem.code).toBe('row-assigned-twice');
    expect(problem.detail).toMatch(/Row 1/);

    ({ status, problem } = await post({ ...good, partition: { groups: [[0], [2]] } }));
    expect(status).toBe(422);
    expect(problem.code).toBe('row-unassigned');
    expect(problem.detail).toMatch(/Row 1/);

    ({ status, problem } = await post({ ...good, partition: { assignment: [0, 2, 2] } }));
    expect(status).toBe(422);
    expect(problem.code).toBe('empty-machine');

    ({ status, problem } = await post({ ...good, partition: { sizes: [1, 1] } }));
    expect(status).toBe(422);
    expect(problem.detail).toMatch(/sum to 2/);

    ({ status, problem } = await post({ ...good, partition: { machines: 4 } }));
    expect(status).toBe(422);
    expect(problem.code).toBe('too-many-machines');

    ({ status, problem } = await post({
      ...good,
      matrix: { format: 'generator', generator: 'gaussian', n: 20 },
      partition: { machines: 9 },
    }));
    expect(status).toBe(422);
    expect(problem.code).toBe('too-many-machines');
    expect(problem.detail).toMatch(/at most 8/);
  });

  it('rejects unknown or invalid algorithm parameters and options', async () => {
    let { status, problem } = await post({ ...good, type: 'solve', options: { parameters: { apc: { gamma: 1, zeta: 2 } } } });
    expect(status).toBe(422);
    expect(problem.code).toBe('invalid-parameter');
    expect(problem.detail).toContain('options.parameters.apc.zeta');

    ({ status, problem } = await post({ ...good, type: 'solve', options: { maxIterations: 2_000_000 } }));
    expect(status).toBe(422);
    expect(problem.detail).toMatch(/MAX_ITERATIONS_LIMIT/);

    ({ status, problem } = await post({ ...good, matrix: { format: 'generator', generator: 'block-diagonal', n: 10, blockSize: 11 } }));
    expect(status).toBe(422);
    expect(problem.detail).toMatch(/blockSize/);
  });

  it('ends a job on a singular matrix as failed, with the problem in `error`', async () => {
    // Row 2 = row 0 + row 1: not caught by the shape checks, found by the worker's factorization.
    const job = await runJob(service.app, {
      type: 'analyze',
      matrix: {
        format: 'dense',
        data: [
          [1, 2, 3],
          [4, 5, 6],
          [5, 7, 9],
        ],
      },
      partition: { machines: 1 },
    });
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({
      status: 422,
      code: 'singular-matrix',
      type: '/problems/singular-matrix',
      instance: `/v1/jobs/${job.id}`,
    });
    expect(job.error!.detail).toMatch(/singular/i);
    expect(job.attempts).toBe(1);
    expect(job.result).toBeUndefined();
  });

  it('refuses magnitudes double precision cannot square, naming the entry or row (not "singular", not "converged")', async () => {
    // A rhs of 1e-200 was reported solved at iteration 0 with a relative residual of 1: now a 422 at submission.
    let { status, problem } = await post({ ...good, type: 'solve', rhs: Array.from({ length: good.matrix.data.length }, () => 1e-200) });
    expect(status).toBe(422);
    expect(problem.code).toBe('magnitude-out-of-range');
    expect(problem.errors).toEqual([expect.objectContaining({ path: '/rhs/0' })]);
    expect(problem.detail).toMatch(/below 2\^-200/);
    ({ status, problem } = await post({
      ...good,
      type: 'solve',
      rhs: [
        [1, 1, 1],
        [1e200, 1, 1],
      ],
    }));
    expect(status).toBe(422);
    expect(problem.detail).toMatch(/rhs\/1\[0\] is 1e\+200, above 2\^200/);
    // A well-conditioned matrix scaled by 1e-160 was reported numerically singular: now refused naming its row.
    const job = await runJob(service.app, {
      type: 'analyze',
      matrix: {
        format: 'dense',
        data: [
          [1e-160, 1e-160],
          [1e-160, -1e-160],
        ],
      },
      partition: { machines: 2 },
    });
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ status: 422, code: 'magnitude-out-of-range', details: { row: 0 } });
    expect(job.error!.detail).toMatch(/^Row 0 of A has no entry larger than 1e-160/);
  });

  it('rejects a generator spec known to be singular at submission (ones-minus-eps with eps = n)', async () => {
    const { status, problem } = await post({
      ...good,
      matrix: { format: 'generator', generator: 'ones-minus-eps', n: 4, eps: 4 },
      partition: { machines: 2 },
    });
    expect(status).toBe(422);
    expect(problem.code).toBe('singular-matrix');
    expect(problem.detail).toMatch(/eps/);
  });
});

describe('413 and 404', () => {
  it('rejects a problem larger than MAX_N', async () => {
    const { status, problem } = await post({ ...good, matrix: { format: 'generator', generator: 'gaussian', n: 501 } });
    expect(status).toBe(413);
    expect(problem.code).toBe('too-large');
    expect(problem.detail).toMatch(/501/);
  });

  it('rejects a body over BODY_LIMIT_BYTES', async () => {
    const small = await buildApp({
      config: { ...service.config, BODY_LIMIT_BYTES: 1024 },
      jobService: service.jobService,
      extend: checkContract,
    });
    try {
      const data = Array.from({ length: 20 }, () => Array.from({ length: 20 }, () => 1.2345678));
      const response = await small.inject({ method: 'POST', url: '/v1/jobs', payload: { ...good, matrix: { format: 'dense', data } } });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toMatchObject({ code: 'body-too-large', status: 413 });
      expect(response.json<ProblemDetails>().detail).toMatch(/1024/);
    } finally {
      await small.close();
    }
  });

  it('answers an unknown job id with 404', async () => {
    const response = await service.app.inject({ url: '/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect(response.statusCode).toBe(404);
    expect(response.json<ProblemDetails>().detail).toContain('01ARZ3NDEKTSV4RRFFQ69G5FAV');
  });

  it('answers 400 for a job id longer than 64 characters, on every operation of /v1/jobs/{id}', async () => {
    const id = 'a'.repeat(65);
    for (const [method, url] of [
      ['GET', `/v1/jobs/${id}`],
      ['DELETE', `/v1/jobs/${id}`],
      ['POST', `/v1/jobs/${id}/cancel`],
      ['GET', `/v1/jobs/${id}/events`],
      ['GET', `/v1/jobs/${id}/runs/apc/trace`],
      ['GET', `/v1/jobs/${id}/runs/apc/solution`],
    ] as const) {
      const response = await service.app.inject({ method, url });
      expect(response.statusCode, `${method} ${url}`).toBe(400);
      expect(response.json()).toMatchObject({ code: 'invalid-request', errors: [{ in: 'path', path: '/id' }] });
    }
  });
});

describe('415', () => {
  it.each([
    ['text/plain', '{"type": "analyze"}'],
    ['text/plain; charset=utf-8', 'hello'],
    ['application/xml', '<job/>'],
    ['text/csv', '1,2\n3,4'],
    ['application/x-www-form-urlencoded', 'type=analyze'],
  ])('answers 415 unsupported-media-type for a %s body', async (contentType, payload) => {
    const response = await service.app.inject({ method: 'POST', url: '/v1/jobs', headers: { 'content-type': contentType }, payload });
    expect(response.statusCode).toBe(415);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({ code: 'unsupported-media-type', status: 415 });
  });

  it('refuses text/plain on the JSON routes only: a route of its own may take it', async () => {
    // As a Matrix Market upload route would: its plugin adds a text/plain parser for itself.
    const app = await buildApp({
      config: service.config,
      jobService: service.jobService,
      extend: (root) => {
        void root.register((upload, _options, done) => {
          upload.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, parsed) => parsed(null, body));
          upload.post('/v1/upload-test', (request, reply) => reply.send({ length: (request.body as string).length }));
          done();
        });
      },
    });
    try {
      const text = { headers: { 'content-type': 'text/plain' }, payload: '%%MatrixMarket matrix coordinate real general\n' };
      const upload = await app.inject({ method: 'POST', url: '/v1/upload-test', ...text });
      expect(upload.statusCode).toBe(200);
      expect(upload.json()).toEqual({ length: text.payload.length });
      const job = await app.inject({ method: 'POST', url: '/v1/jobs', ...text });
      expect(job.statusCode).toBe(415);
      expect(job.json<ProblemDetails>().code).toBe('unsupported-media-type');
    } finally {
      await app.close();
    }
  });
});

describe('after all that', () => {
  it('is healthy and still runs a good job', async () => {
    expect((await service.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    expect((await service.app.inject({ url: '/readyz' })).statusCode).toBe(200);
    const job = await runJob(service.app, good);
    expect(job.status).toBe('succeeded');
  });
});
