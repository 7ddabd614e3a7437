/**
 * Studies in Redis, next to (not inside) BullMQ's keys, all under `${KEY_PREFIX}:store:${STUDY_QUEUE_NAME}`:
 *  - `study:{id}`: the document, a hash (`doc`: the fixed part as JSON; `status`, `startedAt`,
 *    `finishedAt`, `result`, `error`);
 *  - `study:{id}:chunks`: chunk index -> that chunk's per-sample outcomes (JSON, ./chunkOutcome.ts);
 *    a retried chunk overwrites its own field, so no sample is ever counted twice;
 *  - `study:{id}:done`: chunk index -> samples it finished (the progress);
 *  - `study:{id}:matrix:{rowPtr,colIdx,values}`: for a study over a stored matrix, the study's own
 *    copy of its CSR (Redis COPY when the study is created, checked and copied in one script), so
 *    that deleting or expiring the matrix cannot change a running study; deleted when the study ends;
 *  - `index` and `owner:{key}`: ids by creation (ULIDs in lexical order, as the jobs' index);
 *  - channel `events`: "<id> status|progress" after each change.
 * Transitions are Lua scripts: a late chunk of a cancelled study writes nothing, and a cancel
 * racing with the parent's final write resolves one way. Every key expires JOB_TTL_SECONDS after
 * the last change.
 */
import type { Redis } from 'ioredis';
import type { CsrMatrix } from '../../solvers/sparse/csr.js';
import type { StudyRequest } from '../../solvers/studies/presets.js';
import type { StudyMatrix } from '../../solvers/studies/storedMatrix.js';
import { csrKeys, readCsr, type MatrixKeys } from '../store/matrixStore.js';
import { notifyOutboxKey, outboxMember } from '../notify/notifyKeys.js';
import { appendDelivery, readWebhookTarget } from '../notify/webhookRecords.js';
import type { ProblemDetails, WebhookDelivery, WebhookTarget } from '../types.js';
import { FINISHED_STUDY_STATUSES, type StudyStatus } from './types.js';

/** The document's fixed part, written once at creation. */
export interface StudyRecord {
  id: string;
  owner: string | null;
  createdAt: string;
  request: StudyRequest;
  /** [group, start, end] of each chunk. */
  chunks: [number, number, number][];
  /** The stored matrix the request names, as read when the study was created (the plan needs its n). */
  matrix?: StudyMatrix;
}

export interface StoredStudy {
  record: StudyRecord;
  status: StudyStatus;
  startedAt: string | null;
  finishedAt: string | null;
  result: string | null;
  error: ProblemDetails | null;
  /** chunk index -> samples done. */
  done: Map<number, number>;
  /** The callback's URL (its secret is kept apart: StudyKeys.notify), and its delivery attempts. */
  notifyUrl: string | null;
  deliveries: WebhookDelivery[];
}

const ACTIVE = `local function active(s) return s == 'queued' or s == 'running' end\n`;

const SCRIPTS = {
  /** KEYS: doc. ARGV: time, channel, id. */
  studyStart: `${ACTIVE}
local s = redis.call('HGET', KEYS[1], 'status')
if s ~= 'queued' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'running', 'startedAt', ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3] .. ' status')
return 1`,
  /** KEYS: doc, chunks, done. ARGV: chunk, outcome, count, ttl, channel, id. */
  studyChunk: `${ACTIVE}
if not active(redis.call('HGET', KEYS[1], 'status')) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[4]) end
redis.call('PUBLISH', ARGV[5], ARGV[6] .. ' progress')
return 1`,
  /**
   * KEYS: doc, chunks, done (re-expired), then keys to delete (the matrix copy). ARGV: status, time,
   * field, value, ttl, channel, id, notify outbox, its member, the notify key (re-expired). A study
   * with a callback is put in the outbox in the same script (../notify/notifyWorker.ts).
   */
  studyFinish: `${ACTIVE}
if not active(redis.call('HGET', KEYS[1], 'status')) then return 0 end
if redis.call('HEXISTS', KEYS[1], 'notifyUrl') == 1 then
  redis.call('RPUSH', ARGV[8], ARGV[9])
  redis.call('EXPIRE', ARGV[10], ARGV[5])
end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'finishedAt', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], ARGV[3], ARGV[4]) end
for i = 1, #KEYS do
  if i <= 3 then redis.call('EXPIRE', KEYS[i], ARGV[5]) else redis.call('DEL', KEYS[i]) end
end
redis.call('PUBLISH', ARGV[6], ARGV[7] .. ' status')
return 1`,
  /**
   * KEYS: matrix document, its rowPtr, colIdx, values, then the study's three copies. ARGV: owner
   * ('' for any), ttl. 0 when the matrix is gone (or not the owner's): nothing is copied.
   */
  studyCopyMatrix: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
for i = 2, 4 do
  if redis.call('COPY', KEYS[i], KEYS[i + 3], 'REPLACE') == 0 then
    for j = 5, 7 do redis.call('DEL', KEYS[j]) end
    return 0
  end
  redis.call('EXPIRE', KEYS[i + 3], ARGV[2])
end
return 1`,
} as const;

type ScriptName = keyof typeof SCRIPTS;
type Scripted = Redis & Record<ScriptName, (...args: (string | number)[]) => Promise<number>>;

export class StudyKeys {
  readonly base: string;
  readonly index: string;
  readonly events: string;

  constructor(keyPrefix: string, studyQueueName: string) {
    this.base = `${keyPrefix}:store:${studyQueueName}`;
    this.index = `${this.base}:index`;
    this.events = `${this.base}:events`;
  }

  doc(id: string): string {
    return `${this.base}:study:${id}`;
  }

  chunks(id: string): string {
    return `${this.doc(id)}:chunks`;
  }

  done(id: string): string {
    return `${this.doc(id)}:done`;
  }

  /** A hash: the `notify` url and secret (read only by the delivery worker). */
  notify(id: string): string {
    return `${this.doc(id)}:notify`;
  }

  /** The study's copy of its stored matrix: csrKeys of this base. */
  matrix(id: string): string {
    return `${this.doc(id)}:matrix`;
  }

  /** The three keys of the matrix copy. */
  matrixParts(id: string): string[] {
    return Object.values(csrKeys(this.matrix(id)));
  }

  ownerIndex(owner: string): string {
    return `${this.base}:owner:${owner}`;
  }
}

export class StudyStore {
  readonly keys: StudyKeys;
  private readonly redis: Scripted;
  private readonly outbox: string;

  constructor(
    redis: Redis,
    keyPrefix: string,
    studyQueueName: string,
    private readonly ttlSeconds: number,
  ) {
    this.keys = new StudyKeys(keyPrefix, studyQueueName);
    this.outbox = notifyOutboxKey(keyPrefix);
    for (const [name, lua] of Object.entries(SCRIPTS)) if (!(name in redis)) redis.defineCommand(name, { lua });
    this.redis = redis as Scripted;
  }

  async create(record: StudyRecord, notify: WebhookTarget | null = null): Promise<void> {
    const doc = this.keys.doc(record.id);
    const multi = this.redis
      .multi()
      .hset(doc, { doc: JSON.stringify(record), status: 'queued', ...(notify ? { notifyUrl: notify.url, deliveries: '[]' } : {}) })
      .expire(doc, this.ttlSeconds);
    if (notify)
      multi
        .hset(this.keys.notify(record.id), { url: notify.url, secret: notify.secret })
        .expire(this.keys.notify(record.id), this.ttlSeconds);
    // Equal scores: the index is ordered by member, and ULIDs sort by creation time.
    multi.zadd(this.keys.index, 0, record.id);
    if (record.owner !== null) multi.zadd(this.keys.ownerIndex(record.owner), 0, record.id);
    await multi.exec();
  }

  async get(id: string): Promise<StoredStudy | null> {
    const [fields, done] = await Promise.all([this.redis.hgetall(this.keys.doc(id)), this.redis.hgetall(this.keys.done(id))]);
    if (!fields.doc) return null;
    return {
      record: JSON.parse(fields.doc) as StudyRecord,
      status: fields.status as StudyStatus,
      startedAt: fields.startedAt ?? null,
      finishedAt: fields.finishedAt ?? null,
      result: fields.result ?? null,
      error: fields.error ? (JSON.parse(fields.error) as ProblemDetails) : null,
      done: new Map(Object.entries(done).map(([chunk, count]) => [Number(chunk), Number(count)])),
      notifyUrl: fields.notifyUrl ?? null,
      deliveries: fields.deliveries ? (JSON.parse(fields.deliveries) as WebhookDelivery[]) : [],
    };
  }

  /** The study's callback; null when it asked for none or is gone. */
  async webhookTarget(id: string): Promise<WebhookTarget | null> {
    return readWebhookTarget(this.redis, this.keys.notify(id));
  }

  /** Records a delivery attempt on the study's document (one delivery job per study at a time writes it). */
  async recordDelivery(id: string, delivery: WebhookDelivery, keep: number): Promise<void> {
    await appendDelivery(this.redis, this.keys.doc(id), delivery, keep);
  }

  async status(id: string): Promise<StudyStatus | null> {
    return (await this.redis.hget(this.keys.doc(id), 'status')) as StudyStatus | null;
  }

  /** queued -> running (the first chunk a worker takes). */
  async markRunning(id: string): Promise<boolean> {
    return (await this.redis.studyStart(1, this.keys.doc(id), new Date().toISOString(), this.keys.events, id)) === 1;
  }

  /** A chunk's outcomes; false (nothing written) when the study is no longer active. */
  async recordChunk(id: string, chunk: number, outcome: string, samplesDone: number): Promise<boolean> {
    // The matrix copy and the callback (if any) are re-expired with the rest: they live as long as the running study.
    const keys = [this.keys.doc(id), this.keys.chunks(id), this.keys.done(id), this.keys.notify(id), ...this.keys.matrixParts(id)];
    return (await this.redis.studyChunk(keys.length, ...keys, chunk, outcome, samplesDone, this.ttlSeconds, this.keys.events, id)) === 1;
  }

  /** Every chunk's stored outcome, by chunk index. */
  async chunkOutcomes(id: string): Promise<Map<number, string>> {
    const fields = await this.redis.hgetall(this.keys.chunks(id));
    return new Map(Object.entries(fields).map(([chunk, text]) => [Number(chunk), text]));
  }

  /** An active study ends `status`; false when it had already ended. */
  async finish(id: string, status: StudyStatus, field: 'result' | 'error' | null = null, value = ''): Promise<boolean> {
    if (!FINISHED_STUDY_STATUSES.includes(status)) throw new RangeError(`finish(${status})`);
    // The matrix copy goes with the same script: no chunk computes any more (a late one finds the study ended and stores nothing).
    const keys = [this.keys.doc(id), this.keys.chunks(id), this.keys.done(id), ...this.keys.matrixParts(id)];
    const time = new Date().toISOString();
    return (
      (await this.redis.studyFinish(
        keys.length,
        ...keys,
        status,
        time,
        field ?? '',
        value,
        this.ttlSeconds,
        this.keys.events,
        id,
        this.outbox,
        outboxMember('study', id),
        this.keys.notify(id),
      )) === 1
    );
  }

  /**
   * Copy stored matrix `matrixId` for study `id` (one script: the matrix exists, is `owner`'s when
   * `owner` is given, and its three CSR parts are copied, or nothing is). False when it is not there.
   */
  async copyMatrix(id: string, matrixKeys: MatrixKeys, matrixId: string, owner: string | null): Promise<boolean> {
    const source = csrKeys(matrixKeys.csr(matrixId));
    const keys = [matrixKeys.doc(matrixId), source.rowPtr, source.colIdx, source.values, ...this.keys.matrixParts(id)];
    return (await this.redis.studyCopyMatrix(keys.length, ...keys, owner ?? '', this.ttlSeconds)) === 1;
  }

  /** The study's copy of its matrix (read once per chunk); null when it is gone (the study ended). */
  async matrix(id: string, matrix: StudyMatrix): Promise<CsrMatrix | null> {
    return readCsr(this.redis, this.keys.matrix(id), matrix.n, matrix.nnz);
  }

  async remove(id: string, owner: string | null): Promise<void> {
    const multi = this.redis
      .multi()
      .del(this.keys.doc(id), this.keys.chunks(id), this.keys.done(id), this.keys.notify(id), ...this.keys.matrixParts(id))
      .zrem(this.keys.index, id);
    if (owner !== null) multi.zrem(this.keys.ownerIndex(owner), id);
    await multi.exec();
    await this.redis.publish(this.keys.events, `${id} status`);
  }

  /** Ids older than `beforeId` (newest first), from the owner's index or everyone's. */
  async indexPage(beforeId: string | null, count: number, owner: string | null): Promise<string[]> {
    const index = owner === null ? this.keys.index : this.keys.ownerIndex(owner);
    return this.redis.zrevrangebylex(index, beforeId === null ? '+' : `(${beforeId}`, '-', 'LIMIT', 0, count);
  }

  /** Drop index entries whose documents expired. */
  async forget(ids: string[], owner: string | null): Promise<void> {
    if (ids.length === 0) return;
    await this.redis.zrem(this.keys.index, ...ids);
    if (owner !== null) await this.redis.zrem(this.keys.ownerIndex(owner), ...ids);
  }
}
