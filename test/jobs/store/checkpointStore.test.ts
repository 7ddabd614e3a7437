/**
 * A job's checkpoint key on a real Redis (JobStore.saveCheckpoint / checkpoint, scripts.lssCheckpoint):
 * written only while the job runs, each save replacing the last, expiring with the document;
 * deleted when the job finishes, and with the job's other keys.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../../src/jobs/embeddedRedis.js';
import { JobStore } from '../../../src/jobs/store/jobStore.js';
import { startTestRedis } from '../../support/service.js';
import { newJobDocument } from '../../support/jobDocuments.js';

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

async function newJob(): Promise<string> {
  const doc = newJobDocument({ type: 'solve', algorithms: ['dgd'] });
  await store.create(doc, { matrix: Float64Array.of(1, 0, 0, 1), rhs: null, assignment: Int32Array.of(0, 0) });
  return doc.id;
}

const begin = (id: string) => store.begin(id, new Date().toISOString(), { maxN: 10, maxNSparse: 10 });

describe('the checkpoint key', () => {
  it('is written only while the job runs, replaced by each save, and expires with the document', async () => {
    const id = await newJob();
    expect(await store.saveCheckpoint(id, Buffer.from('early'))).toBe(false); // queued
    expect(await store.checkpoint(id)).toBeNull();

    const first = await begin(id);
    expect(first.state === 'running' && first.checkpoint).toBeNull();
    expect(await store.saveCheckpoint(id, Buffer.from('first'))).toBe(true);
    expect(await store.saveCheckpoint(id, Buffer.from([0, 1, 2, 255]))).toBe(true);
    expect(await store.checkpoint(id)).toEqual(Buffer.from([0, 1, 2, 255]));
    // The same absolute expiry (never a checkpoint outliving its document).
    const [docExpiry, checkpointExpiry] = await Promise.all([
      connection.call('PEXPIRETIME', store.keys.doc(id)) as Promise<number>,
      connection.call('PEXPIRETIME', store.keys.checkpoint(id)) as Promise<number>,
    ]);
    expect(checkpointExpiry).toBeGreaterThan(Date.now());
    expect(checkpointExpiry).toBe(docExpiry);

    // An attempt that failed and waits for its retry keeps it; a late write of that attempt is refused.
    await store.markRetrying(id);
    expect(await store.saveCheckpoint(id, Buffer.from('late'))).toBe(false);
    expect(await store.checkpoint(id)).toEqual(Buffer.from([0, 1, 2, 255]));

    // The retry reads it; once the job has finished it is gone, and cannot come back.
    const retry = await begin(id);
    expect(retry.state === 'running' && retry.checkpoint).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(await store.checkpoint(id)).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(await store.finish(id, { status: 'succeeded' })).toBe(true);
    expect(await store.checkpoint(id)).toBeNull();
    expect(await store.saveCheckpoint(id, Buffer.from('after'))).toBe(false);
    expect(await connection.exists(store.keys.checkpoint(id))).toBe(0);
  });

  it('is deleted with the job, and counted among its keys', async () => {
    const id = await newJob();
    expect(store.keys.allOf(id)).toContain(store.keys.checkpoint(id));
    expect((await begin(id)).state).toBe('running');
    expect(await store.saveCheckpoint(id, Buffer.from('state'))).toBe(true);
    // A finished document whose checkpoint is still there (written by nothing in this service, but a
    // delete must not leave one behind whatever happened).
    await connection.hset(store.keys.doc(id), 'status', 'failed');
    expect(await store.delete(id)).toBe('deleted');
    expect(await connection.exists(store.keys.checkpoint(id), store.keys.doc(id))).toBe(0);
  });

  it('is deleted when a cancelled job finishes', async () => {
    const id = await newJob();
    expect((await begin(id)).state).toBe('running');
    expect(await store.saveCheckpoint(id, Buffer.from('state'))).toBe(true);
    expect(await store.cancel(id)).toBe('running'); // the worker stops it and finishes it
    expect(await store.finish(id, { status: 'cancelled' })).toBe(true);
    expect(await store.checkpoint(id)).toBeNull();
  });
});

describe('a finished job', () => {
  it('keeps its document, inputs and outputs for the TTL from its end', async () => {
    const id = await newJob();
    expect((await begin(id)).state).toBe('running');
    // The inputs as if created long ago: the finish gives them the whole TTL again.
    for (const key of [store.keys.doc(id), store.keys.matrix(id), store.keys.assignment(id)]) await connection.expire(key, 5);
    const trace = {
      iteration: Int32Array.of(0, 1),
      relativeResidual: Float64Array.of(1, 0.5),
      relativeError: null,
      consensusDistance: null,
      totalIterations: 1,
      cap: 10,
      downsampled: false,
    };
    const outcome = { status: 'succeeded' as const, runs: [{ algorithm: 'dgd' as const, solution: Float64Array.of(1, 1), trace }] };
    expect(await store.finish(id, outcome)).toBe(true);
    const kept = [
      store.keys.doc(id),
      store.keys.matrix(id),
      store.keys.assignment(id),
      store.keys.solution(id, 'dgd'),
      store.keys.trace(id, 'dgd'),
    ];
    for (const key of kept) expect(await connection.ttl(key), key).toBeGreaterThan(3500);
  });
});
