/**
 * The job endpoints end to end, against a real Redis and a worker running jobs in sandboxed
 * children: analyses and solves match the reference fixtures, Matrix Market uploads, every
 * generator, pagination, deletion, traces and solutions, and the operational endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobPageSchema, JobSchema, SolutionSchema, TraceSchema } from '../../src/api/schemas/job.js';
import type { Job, JobPage, ProblemDetails } from '../../src/jobs/types.js';
import { fixtureMatrixInput, loadFixture, relativeDifference, type Fixture } from '../support/fixtures.js';
import { Redis } from 'ioredis';
import { JobKeys } from '../../src/jobs/store/keys.js';
import { createJob, runJob, solveOverSocket, startTestService, waitForJob, type TestService } from '../support/service.js';
import { SYMMETRIC_COO } from '../support/requests.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({}, { listen: true });
});

afterAll(async () => {
  await service?.close();
});

function expectAnalysisMatches(job: Job, fixture: Fixture): void {
  expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
  const analysis = job.result!.analysis!;
  const expected = fixture.expected;
  expect(analysis.n).toBe(expected.n);
  expect(analysis.m).toBe(expected.m);
  expect(analysis.blockSizes).toEqual(expected.blockSizes);
  // Tolerances of fixtures/README.md: relative 1e-6 on condition numbers, 1e-9 on angles and rates.
  expect(relativeDifference(analysis.conditioning.kappaS, expected.kappaS)).toBeLessThan(1e-6);
  expect(relativeDifference(analysis.conditioning.kappaAtA, expected.kappaAtA)).toBeLessThan(1e-6);
  expect(Math.abs(analysis.heterogeneity.thetaH - expected.thetaH)).toBeLessThan(1e-9);
  expect(analysis.heterogeneity.thetaHPair).toEqual(expected.thetaHPair);
  for (const [id, rate] of Object.entries(expected.rates)) {
    expect(Math.abs(analysis.rates[id as keyof typeof expected.rates].rate - rate), id).toBeLessThan(1e-9);
  }
  expect(analysis.recommendation.exact.faster).toBe(expected.fasterOfApcDhbm);
}

describe('analyze and solve', () => {
  it('analyzes a dense fixture and matches its reference values (202 + Location, then succeeded)', async () => {
    const fixture = loadFixture('gaussian-n40-m4-mu0');
    const { response, job: queued } = await createJob(service.app, {
      type: 'analyze',
      matrix: fixtureMatrixInput(fixture),
      partition: fixture.partition,
    });
    expect(response.statusCode).toBe(202);
    expect(response.headers.location).toBe(`/v1/jobs/${queued.id}`);
    expect(queued.status).toBe('queued');
    expect(queued.n).toBe(40);
    expect(queued.m).toBe(4);
    expect(queued.algorithms).toEqual([]);

    const job = await waitForJob(service.app, queued.id);
    JobSchema.parse(job);
    expectAnalysisMatches(job, fixture);
    expect(job.attempts).toBe(1);
    expect(job.startedAt).not.toBeNull();
    expect(job.finishedAt).not.toBeNull();
    expect(job.result!.runs).toEqual({});
  });

  it('analyzes a Matrix Market upload (bfwa62.mtx) and matches the fixture', async () => {
    const fixture = loadFixture('bfwa62-m2');
    const job = await runJob(service.app, { type: 'analyze', matrix: fixtureMatrixInput(fixture), partition: fixture.partition });
    expectAnalysisMatches(job, fixture);
  });

  it('solves with the requested algorithms: runs converge, the solution is close to ones, the trace is served', async () => {
    const fixture = loadFixture('uneven-n27');
    const job = await runJob(service.app, {
      type: 'solve',
      matrix: fixtureMatrixInput(fixture),
      partition: { groups: [[0, 1, 2], [3, 4, 5, 6, 7], Array.from({ length: 19 }, (_, k) => k + 8)] },
      algorithms: ['apc', 'dhbm', 'cimmino'],
      options: { tolerance: 1e-10, maxIterations: 50_000 },
    });
    expectAnalysisMatches(job, fixture);
    expect(job.algorithms).toEqual(['apc', 'dhbm', 'cimmino']);
    expect(Object.keys(job.result!.runs).sort()).toEqual(['apc', 'cimmino', 'dhbm']);
    for (const run of Object.values(job.result!.runs)) {
      expect(run.status).toBe('converged');
      expect(run.relativeResidual).toBeLessThanOrEqual(1e-10);
      expect(run.relativeError).toBeLessThan(1e-6);
    }

    const solution = await service.app.inject({ url: `/v1/jobs/${job.id}/runs/apc/solution` });
    expect(solution.statusCode).toBe(200);
    const { x } = SolutionSchema.parse(solution.json());
    expect(x).toHaveLength(27);
    for (const value of x) expect(Math.abs(value! - 1)).toBeLessThan(1e-6);

    const traceResponse = await service.app.inject({ url: `/v1/jobs/${job.id}/runs/dhbm/trace` });
    expect(traceResponse.statusCode).toBe(200);
    const trace = TraceSchema.parse(traceResponse.json());
    expect(trace.algorithm).toBe('dhbm');
    expect(trace.iteration[0]).toBe(0);
    expect(trace.iteration.at(-1)).toBe(trace.totalIterations);
    expect(trace.totalIterations).toBe(job.result!.runs.dhbm!.iterations);
    expect(trace.relativeResidual).toHaveLength(trace.iteration.length);
    expect(trace.relativeError).toHaveLength(trace.iteration.length);
    expect(trace.relativeResidual.at(-1)!).toBeLessThanOrEqual(1e-10);

    // A run that was not requested, and an algorithm that does not exist.
    const notRun = await service.app.inject({ url: `/v1/jobs/${job.id}/runs/dgd/trace` });
    expect(notRun.statusCode).toBe(404);
    expect(notRun.json()).toMatchObject({ code: 'run-not-found', type: '/problems/run-not-found' });
    expect(notRun.json<ProblemDetails>().detail).toMatch(/not requested/);
    const unknown = await service.app.inject({ url: `/v1/jobs/${job.id}/runs/gmres/solution` });
    expect(unknown.statusCode).toBe(400);
  });

  it('solves with an explicit rhs (no true solution: relativeError null)', async () => {
    const job = await runJob(service.app, {
      type: 'solve',
      matrix: SYMMETRIC_COO,
      rhs: [5, 4, 2],
      partition: { sizes: [2, 1] },
      algorithms: ['apc'],
    });
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    expect(job.result!.runs.apc!.relativeError).toBeNull();
    const { x } = (await service.app.inject({ url: `/v1/jobs/${job.id}/runs/apc/solution` })).json<{ x: number[] }>();
    expect(x.map((v) => Math.round(v * 1e6) / 1e6)).toEqual([1, 1, 1]);
  });

  it('predicts the time to solution of all six algorithms, here and on the described deployment', async () => {
    const job = await runJob(service.app, {
      type: 'analyze',
      matrix: SYMMETRIC_COO,
      partition: { sizes: [2, 1] },
      options: { deployment: { machineGflops: 10 } },
    });
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    const t = job.result!.analysis!.timeToSolution!;
    expect(job.options.deployment).toEqual({ machineGflops: 10, memoryBandwidthGBs: 20, latencyMicroseconds: 50, bandwidthGBs: 1.25 });
    for (const id of ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const) {
      expect(t[id].secondsPerIteration).toBeGreaterThan(0);
      expect(t[id].messagesPerIteration).toBe(4);
      expect(t.deployment![id].secondsPerIteration).toBeGreaterThan(0);
    }
    expect(t.deployment!.assumptions.machineGflops).toBe(10);
    expect(t.calibration.flopsPerSecond).toBeGreaterThan(0);
    // seconds = the run's start + iterations x seconds per iteration (no start on the deployment).
    if (t.apc.iterations !== null) expect(t.apc.seconds).toBeCloseTo(t.apc.startSeconds + t.apc.iterations * t.apc.secondsPerIteration, 12);
    expect(t.deployment!.apc.startSeconds).toBe(0);
    const f = job.result!.analysis!.recommendation.finishesFirst!;
    expect(['apc', 'dhbm']).toContain(f.here);
    expect(['apc', 'dhbm']).toContain(f.deployment);
  });

  it("says which of APC and D-HBM the job's maxIterations stops before the tolerance", async () => {
    const job = await runJob(service.app, {
      type: 'analyze',
      matrix: SYMMETRIC_COO,
      partition: { sizes: [2, 1] },
      options: { maxIterations: 2 },
    });
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    const t = job.result!.analysis!.timeToSolution!;
    const { explanation } = job.result!.analysis!.recommendation.finishesFirst!;
    expect(t.dhbm.iterations).toBeGreaterThan(2);
    const beyond = (['apc', 'dhbm'] as const).filter((id) => (t[id].iterations ?? 0) > 2);
    const names = beyond.map((id) => (id === 'apc' ? 'APC' : 'D-HBM')).join(' and ');
    const counts = beyond.map((id) => String(t[id].iterations)).join(' and ');
    expect(explanation).toContain(
      `${names} ${beyond.length === 1 ? 'needs' : 'need'} ${counts} iterations, more than this job's maxIterations (2)`,
    );
  });

  it('runs every generator (worker-side generation)', async () => {
    const bodies = [
      { matrix: { format: 'generator', generator: 'gaussian', n: 24, mean: 1, std: 1, seed: 7 }, partition: { machines: 4 } },
      {
        matrix: { format: 'generator', generator: 'block-diagonal', n: 30, blockSize: 10, seed: 3, permute: true },
        partition: { machines: 3 },
      },
      {
        matrix: { format: 'generator', generator: 'structured-gaussian', n: 40, blockSize: 8, sigma: 0.1, seed: 2 },
        partition: { machines: 5 },
      },
      { matrix: { format: 'generator', generator: 'ones-minus-eps', n: 20, eps: 0.1 }, partition: { machines: 4 } },
      // Example 1 as docs/API.md names it, without blockSize: one block per machine, here of scattered rows.
      {
        matrix: { format: 'generator', generator: 'block-diagonal', n: 24, seed: 4 },
        partition: { assignment: Array.from({ length: 24 }, (_, k) => (k * 7) % 4) },
      },
    ];
    const jobs = await Promise.all(bodies.map((body) => runJob(service.app, { type: 'analyze', ...body })));
    for (const job of jobs) expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    const [gaussian, blockDiagonal, structured, onesMinusEps, machineBlocks] = jobs;
    expect(gaussian.result!.analysis!.n).toBe(24);
    // Example 1: one block per machine, mutually orthogonal row spaces: kappa(S) = 1, theta_H = pi/2.
    expect(blockDiagonal.result!.analysis!.conditioning.kappaS).toBeCloseTo(1, 8);
    expect(blockDiagonal.result!.analysis!.heterogeneity.thetaH).toBeCloseTo(Math.PI / 2, 8);
    expect(structured.result!.analysis!.m).toBe(5);
    expect(onesMinusEps.result!.analysis!.blockSizes).toEqual([5, 5, 5, 5]);
    expect(machineBlocks.result!.analysis!.conditioning.kappaS).toBeCloseTo(1, 8);
    expect(machineBlocks.result!.analysis!.heterogeneity.thetaH).toBeCloseTo(Math.PI / 2, 8);
  });

  it('solves Example 1 without blockSize: APC is exact after one iteration whatever the partition', async () => {
    const job = await runJob(service.app, {
      type: 'solve',
      matrix: { format: 'generator', generator: 'block-diagonal', n: 40, seed: 9, permute: true },
      partition: { sizes: [7, 13, 20] },
      algorithms: ['apc'],
    });
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    expect(job.result!.analysis!.blockSizes).toEqual([7, 13, 20]);
    expect(job.result!.runs.apc).toMatchObject({ status: 'converged', iterations: 1 });
  });
});

describe('a finished job read over a socket', () => {
  /** GET /v1/jobs/{id} as a client receives it, and the result's text as the worker stored it. */
  async function readBoth(id: string): Promise<{ text: string; job: Job; stored: string }> {
    const response = await fetch(`${service.baseUrl}/v1/jobs/${id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await response.text();
    const redis = new Redis(service.redis.url);
    try {
      const keys = new JobKeys(service.config.KEY_PREFIX, service.config.QUEUE_NAME);
      return { text, job: JSON.parse(text) as Job, stored: (await redis.hget(keys.doc(id), 'result'))! };
    } finally {
      redis.disconnect();
    }
  }

  it('is the document with its result as the worker stored it, and a solve its summary', async () => {
    const job = await solveOverSocket(service, {
      type: 'solve',
      matrix: { format: 'generator', generator: 'gaussian', n: 12, seed: 4 },
      partition: { machines: 3 },
      algorithms: ['apc', 'dgd'],
      options: { maxIterations: 5 },
    });
    const { text, job: read, stored } = await readBoth(job.id);
    // The stored text itself, not a copy parsed and written again (a large result costs seconds a read that way).
    expect(stored.startsWith('{"analysisCompleted":true,')).toBe(true);
    expect(text.endsWith(`,"result":${stored}}`)).toBe(true);
    expect(JobSchema.parse(read)).toEqual(read);
    expect(read.result).toEqual(JSON.parse(stored));
    expect(read.result!.runs.apc!.iterations).toBe(5);
    // DGD's 5 iterations do not reach the default tolerance: the summary, derived from the runs, says so.
    expect(read.summary!.notConverged.map((run) => run.algorithm)).toContain('dgd');
    expect(read.summary).toEqual(job.summary);
    // The list says it too (its `status` is succeeded whatever the runs did): the job's summary, without its result.
    const page = JobPageSchema.parse(await (await fetch(`${service.baseUrl}/v1/jobs?limit=200`)).json());
    const listed = page.items.find((item) => item.id === job.id)!;
    expect(listed.status).toBe('succeeded');
    expect(listed.summary).toEqual(read.summary);
    expect({ ...read, result: undefined }).toEqual({ ...job, result: undefined });
    // Cancelling a finished job answers it unchanged: the same body.
    const cancelled = await fetch(`${service.baseUrl}/v1/jobs/${job.id}/cancel`, { method: 'POST' });
    expect(cancelled.status).toBe(200);
    expect(await cancelled.text()).toBe(text);
  });

  it('a result stored before analysisCompleted existed is served with it (true), parsed', async () => {
    const job = await runJob(service.app, {
      type: 'analyze',
      matrix: { format: 'generator', generator: 'gaussian', n: 10, seed: 5 },
      partition: { machines: 2 },
    });
    const redis = new Redis(service.redis.url);
    try {
      const keys = new JobKeys(service.config.KEY_PREFIX, service.config.QUEUE_NAME);
      const { analysisCompleted, ...older } = job.result!;
      expect(analysisCompleted).toBe(true);
      await redis.hset(keys.doc(job.id), 'result', JSON.stringify(older));
    } finally {
      redis.disconnect();
    }
    const { job: read } = await readBoth(job.id);
    expect(read.result).toEqual(job.result);
    expect(read.result!.analysisCompleted).toBe(true);
  });
});

describe('listing, deleting, unknown ids', () => {
  it('walks all jobs newest first with a cursor, and filters by status', async () => {
    const created: string[] = [];
    for (let k = 0; k < 5; k++) {
      const { job } = await createJob(service.app, {
        type: 'analyze',
        matrix: {
          format: 'dense',
          data: [
            [2, 1],
            [1, 3 + k],
          ],
        },
        partition: { machines: 2 },
      });
      created.push(job.id);
    }
    // A singular matrix: this job ends 'failed'.
    const failing = await runJob(service.app, {
      type: 'analyze',
      matrix: {
        format: 'dense',
        data: [
          [1, 2],
          [2, 4],
        ],
      },
      partition: { machines: 1 },
    });
    expect(failing.status).toBe('failed');
    created.push(failing.id);
    for (const id of created.slice(0, 5)) await waitForJob(service.app, id);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const response = await service.app.inject({ url: `/v1/jobs${query}` });
      expect(response.statusCode).toBe(200);
      const page: JobPage = JobPageSchema.parse(response.json());
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((item) => item.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null && pages < 100);
    expect(cursor).toBeNull();
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort().reverse()).toEqual(seen); // newest first (ids sort by creation time)
    for (const id of created) expect(seen).toContain(id);
    // The six newest, in reverse creation order.
    expect(seen.slice(0, 6)).toEqual([...created].reverse());

    const failed = (await service.app.inject({ url: '/v1/jobs?status=failed&limit=50' })).json<JobPage>();
    expect(failed.items.map((item) => item.id)).toContain(failing.id);
    for (const item of failed.items) expect(item.status).toBe('failed');
    // A summary says what the job ran on and, once failed, why (the dashboard's list shows both).
    const failedSummary = failed.items.find((item) => item.id === failing.id)!;
    expect(failedSummary).toMatchObject({ algorithms: failing.algorithms, matrix: failing.matrix, labels: {} });
    expect(failedSummary.error).toEqual(failing.error);
    expect(failedSummary.error?.detail).toBeTruthy();
    const succeeded = (await service.app.inject({ url: '/v1/jobs?status=succeeded&limit=1' })).json<JobPage>();
    expect(succeeded.items).toHaveLength(1);
    expect(succeeded.items[0]).toMatchObject({ id: created[4], status: 'succeeded', matrix: { format: 'dense', n: 2 } });
    expect(succeeded.items[0].error).toBeUndefined();
    expect(succeeded.nextCursor).not.toBeNull();

    // Empty values, as docs/API.md writes the query and forms send it, mean "not given": the first page of everything.
    const empty = await service.app.inject({ url: '/v1/jobs?status=&limit=&cursor=' });
    expect(empty.statusCode).toBe(200);
    const firstPage = (await service.app.inject({ url: '/v1/jobs' })).json<JobPage>();
    expect(empty.json<JobPage>().items.map((item) => item.id)).toEqual(firstPage.items.map((item) => item.id));
    expect((await service.app.inject({ url: '/v1/jobs?status=&limit=0' })).statusCode).toBe(400);

    const badCursor = await service.app.inject({ url: '/v1/jobs?cursor=not-a-cursor' });
    expect(badCursor.statusCode).toBe(400);
    expect(badCursor.json<ProblemDetails>().code).toBe('invalid-cursor');
  });

  it('deletes a finished job and everything stored for it', async () => {
    const job = await runJob(service.app, {
      type: 'solve',
      matrix: { format: 'generator', generator: 'gaussian', n: 12, seed: 5 },
      partition: { machines: 3 },
      algorithms: ['mlm'],
      options: { maxIterations: 200 },
    });
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    expect((await service.app.inject({ url: `/v1/jobs/${job.id}/runs/mlm/solution` })).statusCode).toBe(200);

    const deleted = await service.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}` });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    for (const url of [`/v1/jobs/${job.id}`, `/v1/jobs/${job.id}/runs/mlm/solution`, `/v1/jobs/${job.id}/runs/mlm/trace`]) {
      const response = await service.app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json<ProblemDetails>().code).toBe('job-not-found');
    }
    expect((await service.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}` })).statusCode).toBe(404);
    const redis = new Redis(service.redis.url);
    try {
      expect(await redis.keys(`*${job.id}*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
    const listed = (await service.app.inject({ url: '/v1/jobs?limit=200' })).json<JobPage>();
    expect(listed.items.map((item) => item.id)).not.toContain(job.id);
  });

  it('cancel and delete take no body: one sent anyway is ignored, whatever its media type', async () => {
    const job = await runJob(service.app, {
      type: 'analyze',
      matrix: { format: 'generator', generator: 'gaussian', n: 8, seed: 9 },
      partition: { machines: 2 },
    });
    for (const [contentType, payload] of [
      ['application/x-www-form-urlencoded', ''], // curl -X POST -d ''
      ['text/plain', 'please'],
      ['application/json', '{"not json'],
    ]) {
      const cancelled = await service.app.inject({
        method: 'POST',
        url: `/v1/jobs/${job.id}/cancel`,
        headers: { 'content-type': contentType },
        payload,
      });
      expect(cancelled.statusCode, contentType).toBe(200);
      expect(cancelled.json<Job>().status).toBe('succeeded'); // finished: returned unchanged
    }
    const deleted = await service.app.inject({
      method: 'DELETE',
      url: `/v1/jobs/${job.id}`,
      headers: { 'content-type': 'application/xml' },
      payload: '<job/>',
    });
    expect(deleted.statusCode).toBe(204);
  });

  it('answers 404 problems for unknown jobs and routes', async () => {
    for (const [method, url] of [
      ['GET', '/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      ['GET', '/v1/jobs/no-such-job'],
      ['POST', '/v1/jobs/no-such-job/cancel'],
      ['DELETE', '/v1/jobs/no-such-job'],
      ['GET', '/v1/jobs/no-such-job/events'],
      ['GET', '/v1/jobs/no-such-job/runs/apc/trace'],
    ] as const) {
      const response = await service.app.inject({ method, url });
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json()).toMatchObject({ status: 404, code: 'job-not-found', type: '/problems/job-not-found' });
    }
    const route = await service.app.inject({ url: '/v2/nothing' });
    expect(route.statusCode).toBe(404);
    expect(route.json<ProblemDetails>().code).toBe('not-found');
  });
});

describe('operations', () => {
  it('serves health, readiness, problem types, metrics and the docs', async () => {
    expect((await service.app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await service.app.inject({ url: '/readyz' })).json()).toEqual({ status: 'ready' });

    const problemType = await service.app.inject({ url: '/problems/singular-matrix' });
    expect(problemType.statusCode).toBe(200);
    expect(problemType.json()).toMatchObject({ type: '/problems/singular-matrix', status: 422 });
    expect((await service.app.inject({ url: '/problems/nope' })).statusCode).toBe(404);

    // Job durations are observed when the status message of a finished job arrives: poll briefly.
    let metrics = await service.app.inject({ url: '/metrics' });
    for (let k = 0; k < 50 && !/^lss_job_duration_seconds_count/m.test(metrics.body); k++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      metrics = await service.app.inject({ url: '/metrics' });
    }
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.body).toMatch(/^lss_queue_jobs\{state="completed"\} \d+/m);
    expect(metrics.body).toMatch(/^lss_http_requests_total\{method="POST",route="\/v1\/jobs",status_code="202"\} \d+/m);
    expect(metrics.body).toMatch(/^lss_job_duration_seconds_count\{type="analyze",status="succeeded"\} [1-9]/m);

    const docs = await service.app.inject({ url: '/docs' });
    expect([200, 302]).toContain(docs.statusCode);
    const docsPage = await service.app.inject({ url: '/docs/' });
    expect(docsPage.statusCode).toBe(200);
    expect(docsPage.body).toMatch(/swagger/i);
    const openapi = await service.app.inject({ url: '/openapi.json' });
    expect(openapi.json<{ openapi: string }>().openapi).toBe('3.1.0');
  });
});
