/**
 * API keys in Redis, under `${KEY_PREFIX}:keys:`: one hash per key (`key:<id>`: id, name, admin,
 * createdAt, lastUsedAt, revokedAt, quotas as JSON, the secret's SHA-256), the digest's lookup entry
 * (`hash:<sha256>` -> id, deleted on revocation), the ids in creation order (`index`) and the live
 * admin keys (`admins`).
 *
 * Every authenticated request looks its key up here (one round trip: a script that also records the
 * last use), rather than in a per-instance cache invalidated through pub/sub: revocation then
 * takes effect at once on every API instance, with no window where a cache still trusts a revoked
 * key, for the cost of one small Redis call that the request's own work dwarfs.
 */
import type { Redis } from 'ioredis';
import { ApiKeyNotFoundError } from '../errors.js';
import { JOB_ID_PATTERN, newJobId } from '../jobId.js';
import { storeCall } from '../store/redisConnection.js';
import type { ApiKey, ApiKeyService, CreatedApiKey, KeyQuotas, NewApiKey } from './apiKey.js';
import { hashKeySecret, looksLikeKeySecret, newKeySecret } from './keySecret.js';

/** KEYS: digest entry. ARGV: key document prefix, now. The live key's fields (flat), or nil. */
const AUTHENTICATE = `
local id = redis.call('GET', KEYS[1])
if not id then return nil end
local doc = ARGV[1] .. id
if redis.call('EXISTS', doc) == 0 or redis.call('HGET', doc, 'revokedAt') then return nil end
redis.call('HSET', doc, 'lastUsedAt', ARGV[2])
return redis.call('HGETALL', doc)`;

/** KEYS: key document, admins. ARGV: digest entry prefix, now, id. The fields after revocation, or nil. */
const REVOKE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
if not redis.call('HGET', KEYS[1], 'revokedAt') then
  redis.call('HSET', KEYS[1], 'revokedAt', ARGV[2])
  redis.call('DEL', ARGV[1] .. redis.call('HGET', KEYS[1], 'hash'))
  redis.call('SREM', KEYS[2], ARGV[3])
end
return redis.call('HGETALL', KEYS[1])`;

export class ApiKeyStore implements ApiKeyService {
  private readonly base: string;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
  ) {
    this.base = `${keyPrefix}:keys`;
  }

  create(request: NewApiKey): Promise<CreatedApiKey> {
    return storeCall(() => this.insert(request));
  }

  list(): Promise<ApiKey[]> {
    return storeCall(() => this.readAll());
  }

  get(id: string): Promise<ApiKey> {
    return storeCall(() => this.read(id));
  }

  revoke(id: string): Promise<ApiKey> {
    return storeCall(() => this.markRevoked(id));
  }

  authenticate(secret: string): Promise<ApiKey | null> {
    return storeCall(() => this.lookUp(secret));
  }

  async hasAdmin(): Promise<boolean> {
    return storeCall(async () => (await this.redis.scard(this.admins)) > 0);
  }

  private async insert(request: NewApiKey): Promise<CreatedApiKey> {
    const now = Date.now();
    const secret = newKeySecret();
    const key: ApiKey = {
      id: newJobId(now),
      name: request.name,
      admin: request.admin ?? false,
      createdAt: new Date(now).toISOString(),
      lastUsedAt: null,
      revokedAt: null,
      quotas: withoutUndefined(request.quotas ?? {}),
    };
    const digest = hashKeySecret(secret);
    const multi = this.redis
      .multi()
      .hset(this.doc(key.id), {
        id: key.id,
        name: key.name,
        admin: key.admin ? '1' : '0',
        createdAt: key.createdAt,
        quotas: JSON.stringify(key.quotas),
        hash: digest,
      })
      .set(this.digestEntry(digest), key.id)
      .zadd(this.index, 0, key.id);
    if (key.admin) multi.sadd(this.admins, key.id);
    const replies = await multi.exec();
    const failure = replies?.find(([error]) => error !== null)?.[0];
    if (!replies || failure) throw failure ?? new Error('Redis transaction aborted');
    return { ...key, key: secret };
  }

  private async readAll(): Promise<ApiKey[]> {
    const ids = await this.redis.zrangebylex(this.index, '-', '+');
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.doc(id));
    const replies = (await pipeline.exec()) ?? [];
    return replies.flatMap(([error, fields]) => {
      if (error) throw error;
      const document = fields as Record<string, string>;
      return document.id === undefined ? [] : [keyFromFields(document)];
    });
  }

  private async read(id: string): Promise<ApiKey> {
    const fields = JOB_ID_PATTERN.test(id) ? await this.redis.hgetall(this.doc(id)) : {};
    if (fields.id === undefined) throw new ApiKeyNotFoundError(id);
    return keyFromFields(fields);
  }

  private async markRevoked(id: string): Promise<ApiKey> {
    if (!JOB_ID_PATTERN.test(id)) throw new ApiKeyNotFoundError(id);
    const flat = (await this.redis.eval(REVOKE, 2, this.doc(id), this.admins, this.digestEntry(''), new Date().toISOString(), id)) as
      string[] | null;
    if (!flat) throw new ApiKeyNotFoundError(id);
    return keyFromFields(fieldsOf(flat));
  }

  private async lookUp(secret: string): Promise<ApiKey | null> {
    if (!looksLikeKeySecret(secret)) return null;
    const flat = (await this.redis.eval(
      AUTHENTICATE,
      1,
      this.digestEntry(hashKeySecret(secret)),
      this.doc(''),
      new Date().toISOString(),
    )) as string[] | null;
    return flat ? keyFromFields(fieldsOf(flat)) : null;
  }

  private get index(): string {
    return `${this.base}:index`;
  }

  private get admins(): string {
    return `${this.base}:admins`;
  }

  private doc(id: string): string {
    return `${this.base}:key:${id}`;
  }

  private digestEntry(digest: string): string {
    return `${this.base}:hash:${digest}`;
  }
}

function fieldsOf(flat: string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (let k = 0; k + 1 < flat.length; k += 2) fields[flat[k]] = flat[k + 1];
  return fields;
}

function keyFromFields(fields: Record<string, string>): ApiKey {
  return {
    id: fields.id,
    name: fields.name,
    admin: fields.admin === '1',
    createdAt: fields.createdAt,
    lastUsedAt: fields.lastUsedAt || null,
    revokedAt: fields.revokedAt || null,
    quotas: fields.quotas ? (JSON.parse(fields.quotas) as KeyQuotas) : {},
  };
}

function withoutUndefined(quotas: KeyQuotas): KeyQuotas {
  return Object.fromEntries(Object.entries(quotas).filter(([, value]) => value !== undefined));
}
