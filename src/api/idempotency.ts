/**
 * Idempotent submits: an `Idempotency-Key` on POST /v1/jobs, /v1/studies and /v1/matrices. The
 * first request with a key creates the resource, and its answer (status code, Location, body) is
 * kept for IDEMPOTENCY_TTL_SECONDS; the same request again (same endpoint and body) gets that
 * answer again, with `Idempotent-Replayed: true`; another request with the key is a 422. A request
 * arriving while the first is still being answered waits for its answer (concurrent retries create
 * one resource). Keys are scoped per API key (AUTH_MODE=keys), else one global scope. A request
 * that fails creates nothing and keeps nothing: its key may be used again.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '../jobs/errors.js';
import type { IdempotencyClaim, IdempotencyService, IdempotentAnswer } from '../jobs/service/idempotencyStore.js';
import { problemResponse } from './schemas/problem.js';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

export const IdempotencyKeySchema = z
  .string()
  .regex(/^[\x20-\x7e]{1,255}$/, 'an Idempotency-Key is 1 to 255 printable ASCII characters')
  .describe(
    'Makes the request idempotent (1 to 255 printable ASCII characters, e.g. a UUID): the same key with the same body within ' +
      'IDEMPOTENCY_TTL_SECONDS answers the resource the first request created (same id and status code, with ' +
      '`Idempotent-Replayed: true`); the same key with another body or endpoint is a 422. Scoped per API key.',
  );

/** The request headers of a create operation (other headers pass through untouched). */
export const IdempotentHeadersSchema = z.looseObject({ [IDEMPOTENCY_KEY_HEADER]: IdempotencyKeySchema.optional() });

/** Documents `Idempotent-Replayed` on a create operation's success answer. */
export const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    type: 'string',
    description: '`true` when the answer is that of an earlier request with the same Idempotency-Key (nothing new was created).',
    required: false,
  },
} as const;

/** The 409 of a create operation taking an Idempotency-Key. */
export const IDEMPOTENCY_409 = problemResponse(
  409,
  'Another request with the same `Idempotency-Key` is still in progress after 30 s (for an upload, also: it ended without ' +
    "creating anything while this one's body was read) (`idempotency-key-in-use`); retry.",
);

/** How long a request waits for the answer of an earlier one with its key that is still in progress. */
const WAIT_MS = 30_000;
const POLL_MS = 20;

/** The key's scope: the API key (its id), or one scope for everyone without keys. */
export function idempotencyScopeOf(request: FastifyRequest): string {
  return request.apiKey ? `key:${request.apiKey.id}` : 'global';
}

/** JSON with its object keys sorted: the same body however its members were ordered. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The fingerprint of a request: its endpoint and the digest of its body. */
export function requestFingerprint(endpoint: string, bodyDigest: string): string {
  return createHash('sha256').update(`${endpoint}\n${bodyDigest}`).digest('hex');
}

/** The fingerprint of a JSON request (its parsed body, members in any order). */
export function jsonFingerprint(endpoint: string, body: unknown): string {
  return requestFingerprint(endpoint, createHash('sha256').update(canonicalJson(body)).digest('hex'));
}

export function sendAnswer(reply: FastifyReply, answer: IdempotentAnswer, replayed: boolean): FastifyReply {
  if (replayed) reply.header('idempotent-replayed', 'true');
  return reply
    .code(answer.statusCode)
    .header('location', answer.location)
    .send(JSON.parse(answer.body) as unknown);
}

/** Claim the key, waiting while another request holds it; throws IdempotencyKeyInUseError past WAIT_MS. */
export async function claimWhenFree(
  service: IdempotencyService,
  scope: string,
  key: string,
): Promise<Exclude<IdempotencyClaim, { state: 'pending' }>> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const claim = await service.claim(scope, key);
    if (claim.state !== 'pending') return claim;
    if (Date.now() > deadline) throw new IdempotencyKeyInUseError();
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The earlier answer, when its request was this one (its fingerprint); IdempotencyKeyReusedError otherwise. */
export function replayOf(claim: { fingerprint: string; answer: IdempotentAnswer }, fingerprint: string): IdempotentAnswer {
  if (claim.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
  return claim.answer;
}

/**
 * Answer a create request of a JSON body: `create` runs at most once per key and scope (and
 * always without a key); a repeat gets the first answer. The request's fingerprint (a digest of the
 * whole body) is computed only for a request with a key.
 */
export async function createIdempotently(
  request: FastifyRequest,
  reply: FastifyReply,
  service: IdempotencyService,
  fingerprintOf: () => string,
  create: () => Promise<IdempotentAnswer>,
): Promise<FastifyReply> {
  const key = request.headers[IDEMPOTENCY_KEY_HEADER];
  if (typeof key !== 'string') return sendAnswer(reply, await create(), false);
  const fingerprint = fingerprintOf();
  const scope = idempotencyScopeOf(request);
  const claim = await claimWhenFree(service, scope, key);
  if (claim.state === 'done') return sendAnswer(reply, replayOf(claim, fingerprint), true);
  let answer: IdempotentAnswer;
  try {
    answer = await create();
  } catch (error) {
    await service.release(scope, key, claim.token).catch(() => undefined);
    throw error;
  }
  await service
    .complete(scope, key, claim.token, fingerprint, answer)
    .catch((err: unknown) => request.log.error({ err }, 'could not record the answer of an Idempotency-Key'));
  return sendAnswer(reply, answer, false);
}
