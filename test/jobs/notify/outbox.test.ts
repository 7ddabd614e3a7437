/**
 * The callbacks' outbox on a real Redis: a job with `notify` is put in it by the script that ends
 * it, whichever ends it (finish, or a cancel while queued), once; a job without is never; deleting
 * the job removes its secret with it.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../../src/jobs/embeddedRedis.js';
import { notifyOutboxKey } from '../../../src/jobs/notify/notifyKeys.js';
import { JobStore } from '../../../src/jobs/store/jobStore.js';
import { startTestRedis } from '../../support/service.js';
import { newJobDocument } from '../../support/jobDocuments.js';

let redis: EmbeddedRedis;
let connection: Redis;
let store: JobStore;
const outbox = notifyOutboxKey('test');

beforeAll(async () => {
  redis = await startTestRedis();
  connection = new Redis(redis.url);
  store = new JobStore(connection, 'test', 'jobs', 3600);
});

afterAll(async () => {
  connection?.disconnect();
  await redis?.stop();
});

const target = { url: 'http://127.0.0.1:9/hook', secret: 'a-secret-of-sixteen+' };

async function created(notify: boolean): Promise<string> {
  const doc = newJobDocument({ notifyUrl: notify ? target.url : null });
  await store.create(
    doc,
    { matrix: Float64Array.from([1, 0, 0, 1]), rhs: null, assignment: Int32Array.from([0, 0]) },
    notify ? target : null,
  );
  return doc.id;
}

describe('the outbox', () => {
  it('gets a job with notify when it finishes, once; never one without', async () => {
    await connection.del(outbox);
    const withNotify = await created(true);
    const without = await created(false);
    expect(await store.finish(withNotify, { status: 'succeeded' })).toBe(true);
    expect(await store.finish(withNotify, { status: 'failed' })).toBe(false);
    expect(await store.finish(without, { status: 'succeeded' })).toBe(true);
    expect(await connection.lrange(outbox, 0, -1)).toEqual([`job:${withNotify}`]);
    expect((await store.webhookOf(withNotify))?.target).toEqual(target);
    expect(await store.webhookOf(without)).toBeNull();
  });

  it('gets a queued job cancelled, and the secret goes when the job is deleted', async () => {
    await connection.del(outbox);
    const id = await created(true);
    expect(await store.cancel(id)).toBe('cancelled-now');
    expect(await connection.lrange(outbox, 0, -1)).toEqual([`job:${id}`]);
    expect(await store.delete(id)).toBe('deleted');
    expect(await connection.exists(store.keys.notify(id))).toBe(0);
  });
});
