/**
 * What one tenant (API key) holds, counted in Redis so that every API instance sees the same
 * figures: its jobs queued or running (a set of ids) and its stored bytes (each job's and matrix's
 * bytes under its document key). Admission is one Lua script, atomic: two requests racing for the
 * last slot cannot both pass, and nothing is counted for a request that is refused.
 *
 * Nothing has to tell this module that a job finished or that stored data expired: the set is
 * pruned of finished (or vanished) jobs by each admission, and the bytes of a document key are
 * released once Redis no longer holds that key (looked at when its expiry comes, then re-scored if
 * its TTL was renewed). So the counts cannot drift when a worker dies or a TTL runs out, and the job
 * scripts stay as they are. The pruning reads one status per set member, so it costs O(the key's
 * active jobs), which the key's limit bounds. A job is admitted before its document is written: an
 * id without a document counts as vanished only ADMITTED_GRACE_MS after its admission (a hash of
 * admission times beside the set), else concurrent admissions pruned each other's just-admitted jobs
 * and a key limited to 2 active jobs had 5 of 20 concurrent submissions accepted. The document keys are named inside the scripts
 * (ARGV): fine for one Redis server, as this service uses (not Redis Cluster).
 *
 * Fairness: the BullMQ priority of a new job is 1 + the number of its key's jobs still queued or
 * running (lower runs first), so the k-th pending job of every key runs before the (k+1)-th of any:
 * keys take turns in what waits. Priority 1 also marks the key's only pending job, which goes to the
 * workers' small-job slots when predicted small; ./fairShare.ts keeps one key from holding every
 * worker slot while others wait.
 */
import type { Redis } from 'ioredis';
import { QuotaExceededError } from '../errors.js';
import type { JobKeys } from '../store/keys.js';
import type { Tenant } from './apiKey.js';

/** BullMQ's largest priority (2^21). */
const PRIORITY_LIMIT = 2 ** 21;
/** Retry-After when a key's job slots are full: jobs end at unknown times, so a short, fixed hint. */
const ACTIVE_RETRY_AFTER_SECONDS = 5;
/**
 * How long an admitted job without a document still counts: its creation writes the document right after admission
 * (a stalled Redis holds it up to the command timeout); one whose creation died with its process frees its slot then.
 */
export const ADMITTED_GRACE_MS = 10 * 60_000;

/**
 * KEYS: active set, bytes hash, expiry zset, total, admission times (hash: id -> ms). ARGV: member (document key), job
 * id ('' for a matrix), active limit (0: not a job), bytes, bytes limit, now (ms), ttl (ms), job document prefix, grace
 * (ms) for an admitted job without a document.
 * Returns {'ok', active count after admission} or {'active', count} or {'bytes', ms until the
 * next stored item may expire}.
 */
const ADMIT = `
local now = tonumber(ARGV[6])
local function pruneBytes()
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
    local pttl = redis.call('PTTL', member)
    if pttl == -1 then redis.call('ZADD', KEYS[3], now + tonumber(ARGV[7]), member)
    elseif pttl > 0 then redis.call('ZADD', KEYS[3], now + pttl, member)
    else
      local counted = tonumber(redis.call('HGET', KEYS[2], member) or '0')
      redis.call('HDEL', KEYS[2], member)
      redis.call('ZREM', KEYS[3], member)
      redis.call('DECRBY', KEYS[4], counted)
    end
  end
end
local function pruneActive()
  for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
    local status = redis.call('HGET', ARGV[8] .. id, 'status')
    local gone = status == 'succeeded' or status == 'failed' or status == 'cancelled'
    if not status then
      local since = tonumber(redis.call('HGET', KEYS[5], id) or '0')
      gone = now - since > tonumber(ARGV[9])
    end
    if gone then
      redis.call('SREM', KEYS[1], id)
      redis.call('HDEL', KEYS[5], id)
    end
  end
end
local activeLimit = tonumber(ARGV[3])
local active = 0
if activeLimit > 0 then
  pruneActive()
  active = redis.call('SCARD', KEYS[1])
  if active >= activeLimit then return {'active', active} end
end
pruneBytes()
local bytes = tonumber(ARGV[4])
local total = tonumber(redis.call('GET', KEYS[4]) or '0')
if total + bytes > tonumber(ARGV[5]) then
  local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  local wait = 1000
  if first[2] then wait = math.max(1000, tonumber(first[2]) - now) end
  return {'bytes', wait}
end
if activeLimit > 0 then
  redis.call('SADD', KEYS[1], ARGV[2])
  redis.call('HSET', KEYS[5], ARGV[2], now)
  active = active + 1
end
if bytes > 0 then
  redis.call('HINCRBY', KEYS[2], ARGV[1], bytes)
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[7]), ARGV[1])
  redis.call('INCRBY', KEYS[4], bytes)
end
return {'ok', active}`;

/** KEYS: active set, bytes hash, expiry zset, total, admission times. ARGV: member, job id (or ''). */
const RELEASE = `
if ARGV[2] ~= '' then
  redis.call('SREM', KEYS[1], ARGV[2])
  redis.call('HDEL', KEYS[5], ARGV[2])
end
local counted = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if counted ~= 0 then redis.call('DECRBY', KEYS[4], counted) end
return counted`;

/** KEYS: bytes hash, expiry zset, total. ARGV: now (ms). Returns the total after pruning. */
const STORED_BYTES = `
local now = tonumber(ARGV[1])
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  local pttl = redis.call('PTTL', member)
  if pttl > 0 then redis.call('ZADD', KEYS[2], now + pttl, member)
  elseif pttl == -2 then
    local counted = tonumber(redis.call('HGET', KEYS[1], member) or '0')
    redis.call('HDEL', KEYS[1], member)
    redis.call('ZREM', KEYS[2], member)
    redis.call('DECRBY', KEYS[3], counted)
  end
end
return tonumber(redis.call('GET', KEYS[3]) or '0')`;

/** What a tenant holds now. */
export interface TenantUsageFigures {
  activeJobs: number;
  storedBytes: number;
}

export class TenantUsage {
  constructor(
    private readonly redis: Redis,
    private readonly keys: JobKeys,
    /** How long an admitted job without a document counts (ADMITTED_GRACE_MS; shorter in tests). */
    private readonly admittedGraceMs = ADMITTED_GRACE_MS,
  ) {}

  /**
   * Count a new job (queued, `bytes` to be stored under `documentKey` for about `ttlSeconds`) for
   * the tenant, or throw QuotaExceededError (429) leaving nothing counted. Returns the job's
   * BullMQ priority (see the file comment).
   */
  async admitJob(tenant: Tenant, id: string, documentKey: string, bytes: number, ttlSeconds: number): Promise<number> {
    const active = await this.admit(tenant, id, documentKey, bytes, ttlSeconds);
    return Math.min(PRIORITY_LIMIT, active);
  }

  /** Count `bytes` of stored data (a matrix under `documentKey`) for the tenant, or throw QuotaExceededError. */
  async admitStored(tenant: Tenant, documentKey: string, bytes: number, ttlSeconds: number): Promise<void> {
    await this.admit(tenant, '', documentKey, bytes, ttlSeconds);
  }

  /** Throw QuotaExceededError when the tenant's stored bytes are already at its limit (before reading an upload). */
  async assertRoomToStore(tenant: Tenant): Promise<void> {
    const stored = await this.storedBytes(tenant.owner);
    if (stored >= tenant.quotas.storedBytes) {
      throw new QuotaExceededError(
        `This API key stores ${stored} bytes, its limit (${tenant.quotas.storedBytes}); delete jobs or matrices, or wait for them to expire.`,
        ACTIVE_RETRY_AFTER_SECONDS,
      );
    }
  }

  /** Uncount a job (`id`) or a stored item that was deleted, or that could not be queued or stored. */
  async release(owner: string, documentKey: string, id = ''): Promise<void> {
    const usage = this.keys.ownerUsage(owner);
    const admitted = this.keys.ownerAdmitted(owner);
    await this.redis.eval(RELEASE, 5, this.keys.ownerActive(owner), usage.bytes, usage.expiry, usage.total, admitted, documentKey, id);
  }

  async figures(owner: string): Promise<TenantUsageFigures> {
    const [activeJobs, storedBytes] = await Promise.all([this.redis.scard(this.keys.ownerActive(owner)), this.storedBytes(owner)]);
    return { activeJobs, storedBytes };
  }

  private async storedBytes(owner: string): Promise<number> {
    const usage = this.keys.ownerUsage(owner);
    return Number(await this.redis.eval(STORED_BYTES, 3, usage.bytes, usage.expiry, usage.total, Date.now()));
  }

  private async admit(tenant: Tenant, id: string, documentKey: string, bytes: number, ttlSeconds: number): Promise<number> {
    const { owner, quotas } = tenant;
    const usage = this.keys.ownerUsage(owner);
    const answer = (await this.redis.eval(
      ADMIT,
      5,
      this.keys.ownerActive(owner),
      usage.bytes,
      usage.expiry,
      usage.total,
      this.keys.ownerAdmitted(owner),
      documentKey,
      id,
      id === '' ? 0 : quotas.activeJobs,
      Math.ceil(bytes),
      quotas.storedBytes,
      Date.now(),
      ttlSeconds * 1000,
      this.keys.doc(''),
      this.admittedGraceMs,
    )) as [string, number];
    const [verdict, value] = answer;
    if (verdict === 'active') {
      throw new QuotaExceededError(
        `This API key has ${value} jobs queued or running, its limit (${quotas.activeJobs}); retry when one has finished.`,
        ACTIVE_RETRY_AFTER_SECONDS,
      );
    }
    if (verdict === 'bytes') {
      throw new QuotaExceededError(
        `Storing ${Math.ceil(bytes)} more bytes would exceed this API key's limit of ${quotas.storedBytes} stored bytes; ` +
          'delete jobs or matrices, or retry when stored data expires.',
        Math.ceil(value / 1000),
      );
    }
    return value;
  }
}
