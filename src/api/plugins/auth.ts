/**
 * API keys (AUTH_MODE=keys): every /v1 request needs `Authorization: Bearer <key>`, looked up in
 * Redis on each request (so a revoked key is refused at once on every instance; see
 * src/jobs/apiKeys/apiKeyStore.ts); /v1/admin/*, /metrics and /admin/* (the queue board) need an admin
 * key; /healthz, /readyz, /openapi.json, /docs, /problems/* and the dashboard stay open. A missing,
 * unknown or revoked key is a 401 problem, a non-admin key on an admin path a 403; neither says
 * more than that (no key, no stack, no path of the service).
 *
 * Ownership: each job and matrix belongs to the key that created it. Routes pass `ownerFilterOf`
 * to the job layer, which answers 404 for another key's resource and lists only the key's own; an
 * admin key (and AUTH_MODE=none) sees everything. `ownerOf` is the owner to record on a new resource.
 *
 * The OpenAPI document declares the bearer scheme on every operation that needs it (whatever
 * AUTH_MODE the document is generated with), so generated clients send the key; with AUTH_MODE=none
 * the empty requirement `{}` is its alternative (anonymous calls work). Open operations declare
 * `security: []`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Config } from '../../config.js';
import { QuotaTooLargeError, RetryLaterError } from '../../jobs/errors.js';
import { resolveQuotas, type ApiKey, type ApiKeyService, type Tenant } from '../../jobs/apiKeys/apiKey.js';
import { makeProblem } from '../../jobs/problems.js';
import type { MatrixService } from '../../jobs/types.js';
import { problemResponse } from '../schemas/problem.js';
import { sendProblem } from './problems.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's API key (AUTH_MODE=keys, on a path that needs one); null otherwise. */
    apiKey: ApiKey | null;
    /** The key as a tenant: its id and limits (null without a key). */
    tenant: Tenant | null;
  }
}

/** The name of the security scheme in the OpenAPI document. */
export const BEARER_SCHEME = 'bearerAuth';
export const BEARER_SECURITY_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  description:
    'An API key, `Authorization: Bearer <key>` (created with `npm run keys -- create --name ...` or POST /v1/admin/keys). ' +
    'Required when the service runs with AUTH_MODE=keys (the default unless it listens on a loopback address).',
} as const;

/** Who may call a path. */
export type Access = 'open' | 'key' | 'admin';

/** By the route's pattern (or the raw path of an unknown route, so an unknown /v1 path needs a key too). */
export function accessOf(path: string): Access {
  if (path === '/metrics' || path === '/admin' || path.startsWith('/admin/') || path.startsWith('/v1/admin/') || path === '/v1/admin') {
    return 'admin';
  }
  if (path === '/v1' || path.startsWith('/v1/')) return 'key';
  return 'open';
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;
/** RFC 6750 3: the challenge of a 401. */
const CHALLENGE = 'Bearer realm="linear-systems-service"';

export interface AuthOptions {
  config: Pick<
    Config,
    'AUTH_MODE' | 'RATE_LIMIT_PER_SECOND' | 'MAX_ACTIVE_JOBS_PER_KEY' | 'MAX_STORED_BYTES_PER_KEY' | 'MAX_STUDY_SAMPLES_PER_KEY'
  >;
  keys: ApiKeyService;
}

/** Register before any route: its hooks must see every route (fastify applies hooks to routes declared after them). */
export function installAuth(app: FastifyInstance, { config, keys }: AuthOptions): void {
  app.decorateRequest('apiKey', null);
  app.decorateRequest('tenant', null);
  app.addHook('onRoute', (route) => documentSecurity(route, config.AUTH_MODE === 'none'));

  // A limit that frees up with time says when to retry (RFC 9110 10.2.3), whichever route raised it.
  app.addHook('onError', (_request, reply, error, done) => {
    if (error instanceof RetryLaterError) reply.header('retry-after', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
    done();
  });

  if (config.AUTH_MODE === 'none') return;
  app.addHook('onRequest', async (request, reply) => {
    const access = accessOf(request.routeOptions.url ?? request.url.split('?')[0]);
    // A CORS preflight carries no credentials (Fetch standard): it is answered by the CORS plugin, never refused here.
    if (access === 'open' || request.method === 'OPTIONS') return;
    const match = BEARER.exec(request.headers.authorization ?? '');
    if (!match) {
      return refuse(reply, 'unauthorized', 'This endpoint needs an API key: send `Authorization: Bearer <key>`.', CHALLENGE);
    }
    const key = await keys.authenticate(match[1]);
    if (!key) {
      return refuse(reply, 'unauthorized', 'The API key is not valid (unknown or revoked).', `${CHALLENGE}, error="invalid_token"`);
    }
    if (access === 'admin' && !key.admin) return refuse(reply, 'forbidden', 'This endpoint needs an admin API key.');
    request.apiKey = key;
    request.tenant = { owner: key.id, quotas: resolveQuotas(key.quotas, config) };
    request.log.debug({ keyId: key.id }, 'API key');
  });
}

function refuse(reply: FastifyReply, code: 'unauthorized' | 'forbidden', detail: string, challenge?: string): FastifyReply {
  if (challenge) reply.header('www-authenticate', challenge);
  return sendProblem(reply, makeProblem(code, detail, { instance: reply.request.url.split('?')[0] }));
}

/** The owner (API key id) to record on a resource the request creates; null without keys. */
export function ownerOf(request: FastifyRequest): string | null {
  return request.apiKey?.id ?? null;
}

/**
 * The owner the request's reads and changes are confined to: its key's id, or undefined for an
 * admin key and AUTH_MODE=none (they see every owner's). Pass it to the job layer's calls.
 */
export function ownerFilterOf(request: FastifyRequest): string | undefined {
  const key = request.apiKey;
  return key && !key.admin ? key.id : undefined;
}

/** Whether the request may see a resource owned by `owner` (null: created without keys). */
export function canSee(request: FastifyRequest, owner: string | null): boolean {
  const filter = ownerFilterOf(request);
  return filter === undefined || filter === owner;
}

/** The request's key as a tenant (its id and limits), for the calls that count against them; null without keys. */
export function tenantOf(request: FastifyRequest): Tenant | null {
  return request.tenant;
}

/** Throws QuotaTooLargeError (413) when a study of `samples` samples exceeds the key's study-samples limit. */
export function assertStudySamples(request: FastifyRequest, samples: number): void {
  const limit = request.tenant?.quotas.studySamples;
  if (limit !== undefined && samples > limit) {
    throw new QuotaTooLargeError(`The study has ${samples} samples; this API key may run at most ${limit} per study.`);
  }
}

/** The stored matrices as the request may see them: another key's matrix is not found. */
export function matricesSeenBy(request: FastifyRequest, matrices: MatrixService): MatrixService {
  const owner = ownerFilterOf(request);
  return {
    upload: (text) => matrices.upload(text, request.tenant),
    get: (id) => matrices.get(id, owner),
    use: (id) => matrices.use(id, owner),
    remove: (id) => matrices.remove(id, owner),
    list: (query) => matrices.list({ ...query, owner }),
  };
}

const UNAUTHORIZED = problemResponse(401, 'AUTH_MODE=keys: the API key is missing, unknown or revoked (`unauthorized`).');
const FORBIDDEN = problemResponse(403, 'AUTH_MODE=keys: this endpoint needs an admin API key (`forbidden`).');

/** A header holding a number of seconds or requests. */
const count = (description: string, required: boolean) => ({ type: 'string' as const, pattern: '^[0-9]+$', description, required });
/**
 * The answer over a key's limits: Retry-After, and the request-rate headers of the IETF draft
 * (draft-ietf-httpapi-ratelimit-headers, as @fastify/rate-limit sends them: plugins/rateLimit.ts),
 * which every request counted against a key carries, 429s included.
 */
const TOO_MANY = problemResponse(
  429,
  "AUTH_MODE=keys: over the API key's requests per second (`rate-limited`) or its jobs or stored bytes (`quota-exceeded`); " +
    'retry after `Retry-After` seconds.',
  {
    'Retry-After': count('Seconds to wait before retrying.', true),
    'RateLimit-Limit': count('Requests per second the API key may make (its `requestsPerSecond`, else RATE_LIMIT_PER_SECOND).', false),
    'RateLimit-Remaining': count('Requests left in the current one-second window (0 when `rate-limited`).', false),
    'RateLimit-Reset': count('Seconds until the current window ends and the count starts again.', false),
  },
);

/**
 * onRoute: the security requirement of every documented operation, and the 401/403/429 answers of
 * those that need a key. `anonymous` (AUTH_MODE=none): a key is accepted but not needed.
 */
function documentSecurity(route: RouteOptions, anonymous: boolean): void {
  const paths = Array.isArray(route.url) ? route.url : [route.url];
  const access = paths.map(accessOf).find((a) => a !== 'open');
  const schema = route.schema as (Record<string, unknown> & { hide?: boolean; response?: Record<string, unknown> }) | undefined;
  if (!schema || schema.hide) return;
  if (!access) {
    schema.security = [];
    return;
  }
  schema.security = anonymous ? [{ [BEARER_SCHEME]: [] }, {}] : [{ [BEARER_SCHEME]: [] }];
  const response = (schema.response ??= {});
  response[401] ??= UNAUTHORIZED[401];
  if (access === 'admin') response[403] ??= FORBIDDEN[403];
  if (route.url.startsWith('/v1/')) response[429] ??= TOO_MANY[429];
}
