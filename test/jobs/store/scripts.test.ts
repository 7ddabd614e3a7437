/**
 * The Lua scripts of src/jobs/store/scripts.ts, built from JOB_STATUSES / FINISHED_STATUSES, on a
 * real Redis: for a document in each status, which transitions they make and which they refuse.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../../src/jobs/embeddedRedis.js';
import { defineScripts, runScript } from '../../../src/jobs/store/scripts.js';
import { FINISHED_STATUSES, JOB_STATUSES, type JobStatus } from '../../../src/jobs/types.js';
import { startTestRedis } from '../../support/service.js';

let redis: EmbeddedRedis;
let connection: Redis;

beforeAll(async () => {
  redis = await startTestRedis();
  connection = new Redis(redis.url);
  defineScripts(connection);
});

afterAll(async () => {
  connection?.disconnect();
  await redis?.stop();
});

/** A job document in `status`, listed in the index; returns its keys. */
async function documentIn(status: JobStatus): Promise<{ doc: string; index: string; id: string }> {
  const id = `${status}-${Math.random().toString(36).slice(2)}`;
  const keys = { doc: `test:job:${id}`, index: 'test:index', id };
  await connection.hset(keys.doc, { id, status, createdAt: new Date().toISOString() });
  await connection.zadd(keys.index, Date.now(), id);
  return keys;
}

describe('the status scripts', () => {
  it('know exactly the finished statuses: lssDelete removes those documents and refuses the others', async () => {
    expect(FINISHED_STATUSES.length).toBeGreaterThan(0);
    for (const status of JOB_STATUSES) {
      const { doc, index, id } = await documentIn(status);
      const answer = await runScript(connection, 'lssDelete', [doc, index], [id]);
      if (FINISHED_STATUSES.includes(status)) {
        expect(answer, status).toBe('deleted');
        expect(await connection.exists(doc)).toBe(0);
      } else {
        expect(answer, status).toBe(status);
        expect(await connection.hget(doc, 'status')).toBe(status);
      }
    }
  });

  it('lssCancel: a queued job is cancelled at once, a running one asked to stop, a finished one left alone', async () => {
    for (const status of JOB_STATUSES) {
      const { doc } = await documentIn(status);
      const answer = await runScript(connection, 'lssCancel', [doc], ['test:status', new Date().toISOString(), 60]);
      const expected = status === 'queued' ? 'cancelled-now' : status;
      expect(answer, status).toBe(expected);
      expect(await connection.hget(doc, 'status'), status).toBe(status === 'queued' ? 'cancelled' : status);
    }
  });

  it('lssBegin starts a queued job and returns a finished status unchanged', async () => {
    for (const status of JOB_STATUSES) {
      const { doc } = await documentIn(status);
      const answer = await runScript(connection, 'lssBegin', [doc], ['test:status', new Date().toISOString()]);
      const finished = FINISHED_STATUSES.includes(status);
      expect(answer, status).toBe(finished ? status : 'running');
      expect(await connection.hget(doc, 'status'), status).toBe(finished ? status : 'running');
    }
  });
});
