/**
 * The worker's side of the job store, on a real Redis: JobStore.begin marks an attempt started and
 * returns the job ready to compute from the job document and the stored inputs alone; the BullMQ
 * job the API queues carries only the id. Results read back as stored, those written before
 * `analysisCompleted` existed as completed analyses.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { JobResultSchema } from '../../src/api/schemas/job.js';
import { computeJob } from '../../src/jobs/computeJob.js';
import { JobInputMissingError } from '../../src/jobs/errors.js';
import { newJobId } from '../../src/jobs/jobId.js';
import { jobFromDocument, jobViewFromDocument, STORED_RESULT_PREFIX, type NewDocument } from '../../src/jobs/store/jobDocument.js';
import { JobStore } from '../../src/jobs/store/jobStore.js';
import type { Job, JobResult } from '../../src/jobs/types.js';
import { ProblemTooLargeError } from '../../src/solvers/errors.js';
import { generateMatrix } from '../../src/solvers/input/generators.js';
import { partitionFromAssignment } from '../../src/solvers/problem.js';
import { createJob, startTestRedis, startTestService } from '../support/service.js';
import { newJobDocument } from '../support/jobDocuments.js';

let redis: EmbeddedRedis;
let connection: Redis;
let store: JobStore;

beforeAll(async () => {
  redis = await startTestRedis();
  connection = new Redis(redis.url);
  store = new JobStore(connection, 'test', 'jobs', 3600);
});

afterAll(async () => {
  connection?.disconnect();
  await redis?.stop();
});

const options = { tolerance: 1e-9, maxIterations: 50, parameters: { apc: { gamma: 1.1, eta: 1.2 } } };

/** A solve job on the 3 x 3 matrix below, rows on two machines, with its right-hand side. */
function newDocument(fields: Partial<NewDocument>): NewDocument {
  return newJobDocument({
    type: 'solve',
    n: 3,
    m: 2,
    algorithms: ['apc', 'dgd'],
    options,
    hasRhs: true,
    partition: { kind: 'assignment', m: 2, sizes: [2, 1] },
    ...fields,
  });
}

const A = Float64Array.from([4, 1, 0, 1, 3, 1, 0, 1, 2]);
const rhs = Float64Array.from([1, -2, 0.5]);
const assignment = Int32Array.from([0, 1, 0]);
const now = () => new Date().toISOString();

describe('JobStore.begin', () => {
  it('returns the stored matrix, right-hand side and partition with the options of the document, and marks the job running', async () => {
    const doc = newDocument({});
    await store.create(doc, { matrix: A, rhs, assignment });

    const start = await store.begin(doc.id, now(), { maxN: 10, maxNSparse: 100 });
    if (start.state !== 'running') throw new Error(`begin answered ${start.state}`);
    const { job } = start;
    expect(job).toMatchObject({ id: doc.id, type: 'solve', n: 3, m: 2, algorithms: ['apc', 'dgd'], options });
    expect(job.matrix).toEqual({ storage: 'dense', A: { rows: 3, cols: 3, data: A } });
    expect(job.rhs).toEqual(rhs);
    expect(job.partition).toEqual(partitionFromAssignment(assignment, 2));
    expect(job.partition.rowsOf.map((rows) => Array.from(rows))).toEqual([[0, 2], [1]]);
    expect(await connection.hmget(store.keys.doc(doc.id), 'status', 'attempts')).toEqual(['running', '1']);
  });

  it("generates a generator job's matrix for the stored partition (b = A * ones: no rhs)", async () => {
    const spec = { generator: 'block-diagonal' as const, n: 5, seed: 4 };
    const doc = newDocument({ type: 'analyze', n: 5, algorithms: [], input: { format: 'generator', spec }, hasRhs: false });
    const split = Int32Array.from([0, 0, 1, 1, 1]);
    await store.create(doc, { matrix: null, rhs: null, assignment: split });

    const start = await store.begin(doc.id, now(), { maxN: 10, maxNSparse: 100 });
    if (start.state !== 'running') throw new Error(`begin answered ${start.state}`);
    expect(start.job.rhs).toBeNull();
    // One diagonal block per machine of this partition: rows 0-1 and 2-4.
    expect(start.job.matrix).toEqual({ storage: 'dense', A: generateMatrix(spec, {}, partitionFromAssignment(split, 2)) });
    if (start.job.matrix.storage !== 'dense') throw new Error('a generated matrix is dense');
    const { data } = start.job.matrix.A;
    expect(data[0 * 5 + 2]).toBe(0);
    expect(data[3 * 5 + 1]).toBe(0);
  });

  it('checks MAX_N again for generated matrices, after marking the attempt running (the processor records the failure)', async () => {
    const doc = newDocument({ n: 6, input: { format: 'generator', spec: { generator: 'gaussian', n: 6, seed: 1 } }, hasRhs: false });
    await store.create(doc, { matrix: null, rhs: null, assignment: Int32Array.from([0, 0, 0, 1, 1, 1]) });
    await expect(store.begin(doc.id, now(), { maxN: 5, maxNSparse: 100 })).rejects.toBeInstanceOf(ProblemTooLargeError);
    expect(await connection.hget(store.keys.doc(doc.id), 'status')).toBe('running');
  });

  it('names an input that has expired', async () => {
    const doc = newDocument({});
    await store.create(doc, { matrix: A, rhs, assignment });
    await connection.del(store.keys.rhs(doc.id));
    const error = await store.begin(doc.id, now(), { maxN: 10, maxNSparse: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobInputMissingError);
    expect((error as Error).message).toMatch(/right-hand side/);
  });

  it('does not start a job that was cancelled first, has finished, or is gone', async () => {
    const cancelled = newDocument({});
    await store.create(cancelled, { matrix: A, rhs, assignment });
    expect(await store.cancel(cancelled.id)).toBe('cancelled-now');
    expect(await store.begin(cancelled.id, now(), { maxN: 10, maxNSparse: 100 })).toEqual({ state: 'cancelled' });

    const finished = newDocument({});
    await store.create(finished, { matrix: A, rhs, assignment });
    expect((await store.begin(finished.id, now(), { maxN: 10, maxNSparse: 100 })).state).toBe('running');
    expect(await store.finish(finished.id, { status: 'succeeded' })).toBe(true);
    expect(await store.begin(finished.id, now(), { maxN: 10, maxNSparse: 100 })).toEqual({ state: 'succeeded' });

    expect(await store.begin(newJobId(), now(), { maxN: 10, maxNSparse: 100 })).toEqual({ state: 'missing' });
  });
});

describe('the queued BullMQ job', () => {
  it('carries only the job id (named by the job type): the document is the one source of truth', async () => {
    const service = await startTestService({ KEY_PREFIX: 'payload' }, { redis, worker: false });
    const queue = new Queue(service.config.QUEUE_NAME, { connection: { host: '127.0.0.1', port: redis.port }, prefix: 'payload' });
    try {
      const { response, job } = await createJob(service.app, {
        type: 'solve',
        matrix: { format: 'generator', generator: 'gaussian', n: 8, seed: 2 },
        partition: { machines: 2 },
        algorithms: ['apc'],
      });
      expect(response.statusCode).toBe(202);
      const queued = await queue.getJob(job.id);
      expect(queued?.name).toBe('solve');
      expect(queued?.data).toEqual({ id: job.id });
    } finally {
      await queue.close();
      await service.close();
    }
  });
});

describe('stored results read back', () => {
  /** A solve of the 3 x 3 system computed and finished as `status` with `result`; its document read back. */
  async function finished(
    status: 'succeeded' | 'cancelled',
    result: (complete: JobResult) => JobResult,
  ): Promise<{ job: Job; complete: JobResult }> {
    const doc = newDocument({});
    await store.create(doc, { matrix: A, rhs, assignment });
    const start = await store.begin(doc.id, now(), { maxN: 10, maxNSparse: 100 });
    if (start.state !== 'running') throw new Error(`begin answered ${start.state}`);
    const outcome = await computeJob(start.job, { signal: new AbortController().signal, onProgress: () => {}, traceCap: 16 });
    const complete = outcome.result!;
    expect(await store.finish(doc.id, { status, result: result(complete), runs: outcome.runs })).toBe(true);
    return { job: jobFromDocument((await store.document(doc.id))!), complete };
  }

  it('a result without its analysis (cancelled during the runs) reads back as stored, in the API shape', async () => {
    let stored: JobResult | undefined;
    const { job, complete } = await finished('cancelled', ({ runs, analysis }) => {
      const { L, mu, lambdaMinS, lambdaMaxS } = analysis!.conditioning;
      stored = { analysisCompleted: false, spectral: { L, mu, lambdaMinS, lambdaMaxS }, runs: { apc: runs.apc } };
      return stored;
    });
    expect(job.result).toEqual(stored);
    expect(job.result!.runs.apc).toEqual(complete.runs.apc);
    // The job's summary names the one run it reached (dgd never started).
    expect([...job.summary!.converged, ...job.summary!.notConverged.map((run) => run.algorithm)]).toEqual(['apc']);
    expect(JobResultSchema.safeParse(job.result).success).toBe(true);
  });

  it('a result is stored analysisCompleted first, whatever its key order: its view is that text, with the summary of get', async () => {
    let stored: JobResult | undefined;
    const { job } = await finished('cancelled', ({ runs, analysis }) => {
      const { L, mu, lambdaMinS, lambdaMaxS } = analysis!.conditioning;
      stored = { runs: { apc: runs.apc }, spectral: { L, mu, lambdaMinS, lambdaMaxS }, analysisCompleted: false };
      return stored;
    });
    const fields = (await store.document(job.id))!;
    expect(fields.result.startsWith(STORED_RESULT_PREFIX)).toBe(true);
    const view = jobViewFromDocument(fields);
    expect(view.resultJson).toBe(fields.result);
    expect(JSON.parse(view.resultJson!)).toEqual(stored);
    expect(view.job.result).toBeUndefined();
    expect(view.job).toEqual({ ...job, result: undefined });
    expect([...view.job.summary!.converged, ...view.job.summary!.notConverged.map((run) => run.algorithm)]).toEqual(['apc']);
  });

  it('a result stored before analysisCompleted existed reads as a completed analysis', async () => {
    const { job, complete } = await finished('succeeded', ({ analysis, runs }) => ({ analysis, runs }) as JobResult);
    expect(job.result).toEqual({ ...complete, analysisCompleted: true });
    expect(JobResultSchema.safeParse(job.result).success).toBe(true);
    // Its view parses it, to fill analysisCompleted in.
    expect(jobViewFromDocument((await store.document(job.id))!)).toEqual({ job });
  });
});
