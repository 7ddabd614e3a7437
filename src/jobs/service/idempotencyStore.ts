/**
 * Idempotency keys (the `Idempotency-Key` of POST /v1/jobs, /v1/studies, /v1/matrices): per scope
 * (an API key's id, or one global scope without keys) and key, a Redis hash that is first `pending`
 * (claimed by the one request creating the resource; it expires should that process die) and then
 * `done`, holding the fingerprint of the request and the answer it got, kept for
 * IDEMPOTENCY_TTL_SECONDS. Claiming is one script, so of concurrent requests with one key exactly one
 * creates the resource; the others wait for its answer (see the HTTP layer, src/api/idempotency.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { storeCall } from '../store/redisConnection.js';

/** What a request created: replayed as is to a repeat of that request. */
export interface IdempotentAnswer {
  statusCode: number;
  location: string;
  /** The resource as it was answered (JSON). */
  body: string;
}

/**
 * `claimed`: this request creates the resource (then complete or release with `token`); `done`: a
 * request with this key got `answer`, and its fingerprint was `fingerprint`; `pending`: another
 * request with this key is creating its resource.
 */
export type IdempotencyClaim =
  { state: 'claimed'; token: string } | { state: 'done'; fingerprint: string; answer: IdempotentAnswer } | { state: 'pending' };

/** KEYS: record. ARGV: token, pending ttl (ms). */
const CLAIM = `
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  redis.call('HSET', KEYS[1], 'state', 'pending', 'token', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'claimed'}
end
if state == 'pending' then return {'pending'} end
return {'done', redis.call('HGET', KEYS[1], 'fingerprint'), redis.call('HGET', KEYS[1], 'statusCode'),
  redis.call('HGET', KEYS[1], 'location'), redis.call('HGET', KEYS[1], 'body')}`;

/** KEYS: record. ARGV: token, fingerprint, statusCode, location, body, ttl (s). Only the claim's holder completes it. */
const COMPLETE = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'done', 'fingerprint', ARGV[2], 'statusCode', ARGV[3], 'location', ARGV[4], 'body', ARGV[5])
redis.call('HDEL', KEYS[1], 'token')
redis.call('EXPIRE', KEYS[1], ARGV[6])
return 1`;

/** KEYS: record. ARGV: token. A claim whose request failed: the key is free again. */
const RELEASE = `
if redis.call('HGET', KEYS[1], 'token') == ARGV[1] and redis.call('HGET', KEYS[1], 'state') == 'pending' then
  return redis.call('DEL', KEYS[1])
end
return 0`;

type Scripted = Redis & {
  lssIdemClaim(key: string, token: string, ttlMs: number): Promise<(string | null)[]>;
  lssIdemComplete(key: string, ...args: (string | number)[]): Promise<number>;
  lssIdemRelease(key: string, token: string): Promise<number>;
};

/** What the HTTP layer uses (JobService.idempotency); every call throws StoreUnavailableError when Redis is unreachable. */
export interface IdempotencyService {
  claim(scope: string, key: string): Promise<IdempotencyClaim>;
  complete(scope: string, key: string, token: string, fingerprint: string, answer: IdempotentAnswer): Promise<void>;
  release(scope: string, key: string, token: string): Promise<void>;
}

export class IdempotencyStore implements IdempotencyService {
  private readonly redis: Scripted;

  /**
   * @param ttlSeconds IDEMPOTENCY_TTL_SECONDS: how long an answer is replayed
   * @param pendingMs how long a claim holds without an answer (a request that died midway frees its key after this)
   */
  constructor(
    redis: Redis,
    private readonly keyPrefix: string,
    private readonly ttlSeconds: number,
    private readonly pendingMs: number,
  ) {
    const scripts = { lssIdemClaim: CLAIM, lssIdemComplete: COMPLETE, lssIdemRelease: RELEASE };
    for (const [name, lua] of Object.entries(scripts)) if (!(name in redis)) redis.defineCommand(name, { numberOfKeys: 1, lua });
    this.redis = redis as Scripted;
  }

  /** The key is hashed: a client's key may hold any characters, and its length is bounded. */
  private record(scope: string, key: string): string {
    return `${this.keyPrefix}:idempotency:${scope}:${createHash('sha256').update(key).digest('hex')}`;
  }

  async claim(scope: string, key: string): Promise<IdempotencyClaim> {
    const token = randomUUID();
    const record = this.record(scope, key);
    const reply = await storeCall(() => this.redis.lssIdemClaim(record, token, this.pendingMs)).catch((error: unknown) => {
      // A claim that timed out on a stalled Redis still runs when Redis answers again, and its token is known here
      // only: the release queued behind it frees the key then (it held every retry 30 s, then 409, for pendingMs).
      this.redis.lssIdemRelease(record, token).catch(() => undefined);
      throw error;
    });
    const [state, fingerprint, statusCode, location, body] = reply;
    if (state === 'claimed') return { state, token };
    if (state === 'pending') return { state };
    return {
      state: 'done',
      fingerprint: fingerprint ?? '',
      answer: { statusCode: Number(statusCode), location: location ?? '', body: body ?? 'null' },
    };
  }

  async complete(scope: string, key: string, token: string, fingerprint: string, answer: IdempotentAnswer): Promise<void> {
    const { statusCode, location, body } = answer;
    await storeCall(() =>
      this.redis.lssIdemComplete(this.record(scope, key), token, fingerprint, statusCode, location, body, this.ttlSeconds),
    );
  }

  async release(scope: string, key: string, token: string): Promise<void> {
    await storeCall(() => this.redis.lssIdemRelease(this.record(scope, key), token));
  }
}
