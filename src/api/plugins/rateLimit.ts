/**
 * Requests per second per API key (AUTH_MODE=keys): @fastify/rate-limit with its Redis store, so
 * that every API instance counts against the same window (one INCR per request, on a connection of
 * its own). The limit is the key's `requestsPerSecond`, else RATE_LIMIT_PER_SECOND. Requests without
 * a key (open paths) are not counted. Every counted response carries the request-rate headers of
 * the IETF draft (draft-ietf-httpapi-ratelimit-headers): RateLimit-Limit, RateLimit-Remaining and
 * RateLimit-Reset (seconds). Over the limit: a `rate-limited` problem (429) with those and
 * Retry-After. With Redis unreachable the request is let through: the job layer then answers 503.
 */
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import { RateLimitedError } from '../../jobs/errors.js';
import { closeConnection, createFailFastConnection } from '../../jobs/store/redisConnection.js';

const WINDOW_MS = 1000;

/** Register after installAuth (its hook sets the request's key) and before the routes. */
export async function installRateLimit(
  app: FastifyInstance,
  config: Pick<Config, 'AUTH_MODE' | 'REDIS_URL' | 'KEY_PREFIX'>,
): Promise<void> {
  if (config.AUTH_MODE === 'none' || !config.REDIS_URL) return;
  const redis = createFailFastConnection(config.REDIS_URL, 'lss-api-rate-limit');
  redis.on('error', () => undefined); // the job layer's connections log Redis' state
  app.addHook('onClose', async () => {
    await closeConnection(redis);
  });
  await app.register(fastifyRateLimit, {
    global: true,
    // Route-level onRequest hooks run after the root's, so after the key is known.
    hook: 'onRequest',
    // RateLimit-Limit / -Remaining / -Reset rather than the older X-RateLimit-* names.
    enableDraftSpec: true,
    timeWindow: WINDOW_MS,
    max: (request) => request.tenant?.quotas.requestsPerSecond ?? 1,
    allowList: (request) => request.tenant === null,
    keyGenerator: (request) => request.tenant?.owner ?? '',
    redis,
    nameSpace: `${config.KEY_PREFIX}:ratelimit:`,
    skipOnError: true,
    errorResponseBuilder: (_request, context) => new RateLimitedError(context.max, Math.max(1, Math.ceil(context.ttl / 1000))),
  });
}
