/**
 * A job's own CSR matrix (an inline sparse coordinate input) in the job store, on a real Redis:
 * written as binary CSR under the job's keys (no dense key, no temporary key left), handed to the
 * worker as CSR equal bit for bit, removed with the job, refused by the worker above its
 * MAX_N_SPARSE, and a job whose CSR expired fails naming the matrix.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../../src/jobs/embeddedRedis.js';
import { JobInputMissingError } from '../../../src/jobs/errors.js';
import type { NewDocument } from '../../../src/jobs/store/jobDocument.js';
import { JobStore } from '../../../src/jobs/store/jobStore.js';
import { csrKeys } from '../../../src/jobs/store/matrixStore.js';
import { ProblemTooLargeError } from '../../../src/solvers/errors.js';
import { nnzOf } from '../../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { startTestRedis } from '../../support/service.js';
import { newJobDocument } from '../../support/jobDocuments.js';

let redis: EmbeddedRedis;
let connection: Redis;
let store: JobStore;

beforeAll(async () => {
  redis = await startTestRedis();
  connection = new Redis(redis.url);
  store = new JobStore(connection, 'csr-input', 'jobs', 3600);
});

afterAll(async () => {
  connection?.disconnect();
  await redis?.stop();
});

const A = poisson2d(12);
const n = A.rows;
const assignment = Int32Array.from({ length: n }, (_, k) => (k < n / 2 ? 0 : 1));
const limits = { maxN: 10, maxNSparse: 1000 };
const now = (): string => new Date().toISOString();

function newDocument(): NewDocument {
  return newJobDocument({
    type: 'solve',
    n,
    m: 2,
    algorithms: ['apc'],
    options: { tolerance: 1e-8, maxIterations: 10, parameters: {} },
    input: { format: 'coo', nnz: nnzOf(A) },
    storage: 'csr',
    partition: { kind: 'assignment', m: 2, sizes: [n - n / 2, n / 2] },
  });
}

describe('a job whose matrix is CSR', () => {
  it('is stored as binary CSR under the job, handed to the worker bit for bit, and removed with the job', async () => {
    const doc = newDocument();
    await store.create(doc, { matrix: null, csr: A, rhs: null, assignment });
    const keys = csrKeys(store.keys.csr(doc.id));
    expect(await connection.exists(store.keys.matrix(doc.id))).toBe(0);
    expect(await connection.keys(`${store.keys.pendingCsr(doc.id)}*`)).toEqual([]);
    expect(await connection.strlen(keys.values)).toBe(8 * nnzOf(A));
    for (const key of Object.values(keys)) expect(await connection.ttl(key)).toBeGreaterThan(0);

    const start = await store.begin(doc.id, now(), limits);
    expect(start.state).toBe('running');
    if (start.state !== 'running') return;
    const { matrix } = start.job;
    expect(matrix.storage).toBe('csr');
    if (matrix.storage !== 'csr') return;
    expect(Array.from(matrix.A.rowPtr)).toEqual(Array.from(A.rowPtr));
    expect(Array.from(matrix.A.colIdx)).toEqual(Array.from(A.colIdx));
    expect(Buffer.compare(Buffer.from(matrix.A.values.buffer), Buffer.from(A.values.buffer))).toBe(0);

    await store.discard(doc.id);
    for (const key of Object.values(keys)) expect(await connection.exists(key)).toBe(0);
  });

  it('is refused by a worker whose MAX_N_SPARSE is smaller, and missing once its CSR expired', async () => {
    const small = newDocument();
    await store.create(small, { matrix: null, csr: A, rhs: null, assignment });
    await expect(store.begin(small.id, now(), { maxN: 10, maxNSparse: n - 1 })).rejects.toThrow(ProblemTooLargeError);

    const expired = newDocument();
    await store.create(expired, { matrix: null, csr: A, rhs: null, assignment });
    await connection.del(csrKeys(store.keys.csr(expired.id)).colIdx);
    await expect(store.begin(expired.id, now(), limits)).rejects.toThrow(JobInputMissingError);
  });
});
