/**
 * The callbacks' delivery worker on a real Redis, against a real receiver: an attempt cut short by a
 * stop is attempted again after each restart, however often (BullMQ's default stall limit failed it
 * for good at the second stop, with no record and no log line); a job deleted while its callback is
 * retried ends the retries, and the log says so.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../src/config.js';
import type { EmbeddedRedis } from '../../../src/jobs/embeddedRedis.js';
import { notifiedResources } from '../../../src/jobs/notify/notifiedResources.js';
import { startNotifyWorker, type NotifyWorker } from '../../../src/jobs/notify/notifyWorker.js';
import { JobStore } from '../../../src/jobs/store/jobStore.js';
import { StudyStore } from '../../../src/jobs/studies/studyStore.js';
import { newJobDocument } from '../../support/jobDocuments.js';
import { startTestRedis } from '../../support/service.js';

const PREFIX = 'notifytest';

let redis: EmbeddedRedis;
let connection: Redis;
let store: JobStore;
let config: Config & { REDIS_URL: string };
const lines: Record<string, unknown>[] = [];
let logger: Logger;

/** A receiver that answers each path by its mode: `hang` never answers, `fail` answers 500. */
class Receiver {
  readonly ids: { path: string; id: string }[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        this.ids.push({ path: request.url ?? '/', id: String(request.headers['webhook-id']) });
        if (request.url?.startsWith('/fail')) {
          response.statusCode = 500;
          response.end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async until(path: string, count: number, timeoutMs = 30_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.ids.filter((r) => r.path === path).map((r) => r.id);
      if (at.length >= count) return at;
      if (Date.now() > deadline) throw new Error(`${path}: ${at.length} of ${count} attempts after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const receiver = new Receiver();

beforeAll(async () => {
  redis = await startTestRedis();
  connection = new Redis(redis.url);
  store = new JobStore(connection, PREFIX, 'jobs', 3600);
  config = {
    ...loadConfig({}),
    REDIS_URL: redis.url,
    KEY_PREFIX: PREFIX,
    WEBHOOK_ALLOWED_HOSTS: ['loopback'],
    WEBHOOK_TIMEOUT_MS: 60_000,
    WEBHOOK_BACKOFF_MS: 300,
    WEBHOOK_MAX_BACKOFF_MS: 300,
    // A stopped worker's attempt is taken up again within ~2 s, not BullMQ's 30.
    LOCK_DURATION_MS: 1000,
    STALLED_INTERVAL_MS: 1000,
  };
  logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  await receiver.start();
});

afterAll(async () => {
  await receiver.close();
  connection?.disconnect();
  await redis?.stop();
});

/** A job that has ended, its callback to `path`, in the outbox (as the script that ends a job puts it). */
async function endedJob(path: string): Promise<string> {
  const doc = newJobDocument({ notifyUrl: `${receiver.url}${path}` });
  await store.create(
    doc,
    { matrix: Float64Array.from([1, 0, 0, 1]), rhs: null, assignment: Int32Array.from([0, 0]) },
    { url: `${receiver.url}${path}`, secret: 'a-secret-of-sixteen+' },
  );
  expect(await store.finish(doc.id, { status: 'succeeded' })).toBe(true);
  return doc.id;
}

const started = (): Promise<NotifyWorker> =>
  startNotifyWorker(config, notifiedResources(store, new StudyStore(connection, PREFIX, 'studies', 3600), config), logger);

describe('the callbacks delivery worker', () => {
  it('attempts a delivery cut short by a stop again after each restart, the same webhook-id each time', async () => {
    const id = await endedJob('/hang');
    let worker = await started();
    await receiver.until('/hang', 1);
    // Stopped twice while its receiver hangs: the attempt under way is given 50 ms, then left (a stall).
    for (const attempts of [2, 3]) {
      await worker.close(50);
      worker = await started();
      await receiver.until('/hang', attempts);
    }
    await worker.close(50);
    expect(new Set(await receiver.until('/hang', 3))).toEqual(new Set([`msg_job_${id}`]));
  });

  it('ends the retries of a job deleted meanwhile, and logs it', async () => {
    const worker = await started();
    const id = await endedJob('/fail');
    await receiver.until('/fail', 1);
    expect(await store.delete(id)).toBe('deleted');
    const deadline = Date.now() + 10_000;
    while (!lines.some((line) => line.id === id && String(line.msg).startsWith('callback dropped')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(lines.find((line) => line.id === id && String(line.msg).startsWith('callback dropped'))).toMatchObject({
      level: 30,
      kind: 'job',
      msg: 'callback dropped: the job was deleted or has expired',
    });
    const attempts = (await receiver.until('/fail', 1)).length;
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(await receiver.until('/fail', 1)).toHaveLength(attempts);
    await worker.close();
  });
});
