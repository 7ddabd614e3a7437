/**
 * The Lua scripts of src/jobs/store/scripts.ts, built from JOB_STATUSES / FINISHED_STATUSES, on a
 * real Redis: for a document in each status, which transitions they make and which they refuse.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../../src/jobs/embeddedRedis.js';
import { fieldsFromStatusMessage, progressFromStatusMessage } from '../../../src/jobs/store/jobDocument.js';
import { defineScripts, runScript, STATUS_FIELDS, STATUS_RESULT_MAX_BYTES } from '../../../src/jobs/store/scripts.js';
import { FINISHED_STATUSES, JOB_STATUSES, type JobStatus } from '../../../src/jobs/types.js';
import { createSubscriberConnection, subscribeWhenReady } from '../../../src/jobs/store/redisConnection.js';
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

/** A subscriber connection of its own on `channel`, subscribed, and the messages it receives (disconnect it when done). */
async function listening(channel: string): Promise<{ subscriber: Redis; messages: string[] }> {
  const subscriber = createSubscriberConnection(redis.url, `test-${channel}`);
  const messages: string[] = [];
  subscriber.on('message', (_channel: string, message: string) => messages.push(message));
  const ready = await subscribeWhenReady(subscriber, channel, 5000);
  if (!ready) subscriber.disconnect();
  expect(ready).toBe(true);
  return { subscriber, messages };
}

describe('the status scripts', () => {
  it('lssFinish publishes the document with its result, but for a long result: left out (true), the message short', async () => {
    const { subscriber, messages } = await listening('test:finish-status');
    try {
      const short = JSON.stringify({ analysisCompleted: true, runs: {}, pad: 'x'.repeat(STATUS_RESULT_MAX_BYTES - 100) });
      const long = JSON.stringify({ analysisCompleted: true, runs: {}, pad: 'x'.repeat(STATUS_RESULT_MAX_BYTES) });
      const published: Record<string, { fields: Record<string, string>; leftOut: string[] } | null> = {};
      for (const [name, result] of Object.entries({ short, long })) {
        const { doc, id } = await documentIn('running');
        const finishedAt = new Date().toISOString();
        const args = ['test:finish-status', 'succeeded', finishedAt, 60, result, '', '', 'test:outbox', id];
        expect(await runScript(connection, 'lssFinish', [doc], args)).toBe(1);
        // Stored whole either way.
        expect(await connection.hget(doc, 'result')).toBe(result);
        while (messages.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
        const message = messages.shift()!;
        published[name] = fieldsFromStatusMessage(message, STATUS_FIELDS);
        expect(published[name]?.fields).toMatchObject({ id, status: 'succeeded', finishedAt });
        if (name === 'long') expect(message.length).toBeLessThan(1000);
      }
      expect(published.short?.fields.result).toBe(short);
      expect(published.short?.leftOut).toEqual([]);
      expect(published.long?.fields.result).toBeUndefined();
      expect(published.long?.leftOut).toEqual(['result']);
    } finally {
      subscriber.disconnect();
    }
  });

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

  it("lssProgress stores and publishes a running job's report only, as a message no status reader takes for a status", async () => {
    const { subscriber, messages } = await listening('test:progress-status');
    try {
      const report = { phase: 'solve', fraction: 0.5, algorithm: 'apc', iteration: 7, updatedAt: new Date(0).toISOString() };
      for (const status of JOB_STATUSES) {
        const { doc, id } = await documentIn(status);
        const answer = await runScript(connection, 'lssProgress', [doc], [JSON.stringify(report), 'test:progress-status', id]);
        expect(answer, status).toBe(status === 'running' ? 1 : 0);
        expect(await connection.hget(doc, 'progress'), status).toBe(status === 'running' ? JSON.stringify(report) : null);
      }
      // The running document's report, and nothing for the others (each published before this marker).
      await connection.publish('test:progress-status', 'end');
      while (!messages.includes('end')) await new Promise((resolve) => setTimeout(resolve, 10));
      const published = messages.filter((message) => message !== 'end');
      expect(published).toHaveLength(1);
      const progress = progressFromStatusMessage(published[0]);
      expect(progress?.id).toMatch(/^running-/);
      expect(progress?.progress).toEqual(report);
      expect(fieldsFromStatusMessage(published[0], STATUS_FIELDS)).toBeNull();
    } finally {
      subscriber.disconnect();
    }
  });
});
