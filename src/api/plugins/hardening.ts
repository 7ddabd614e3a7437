/**
 * What a service exposed beyond loopback is expected to send, for every route (the API, the
 * dashboard at `/`, Swagger UI at /docs, the event streams):
 *  - security headers (helmet, its middleware built once: @fastify/helmet built it again for every request,
 *    ~0.1 ms of CPU each) with a Content-Security-Policy that allows scripts and
 *    styles from the service itself only: no inline scripts, no other origins. The dashboard and
 *    Swagger UI load theirs as files, so they live with it;
 *  - CORS (@fastify/cors) off unless CORS_ORIGINS lists origins (or `*`);
 *  - a request id in the `x-request-id` response header and in every log line of the request
 *    (pino's `reqId`): the caller's own `x-request-id` when it is sane (1-128 visible ASCII
 *    characters without separators), else a new UUID.
 * Headers go on the raw response too, so that the event streams (hijacked replies) carry them.
 */
import { randomUUID } from 'node:crypto';
import fastifyCors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import helmet from 'helmet';
import type { Config } from '../../config.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** An incoming request id worth keeping: it ends up in logs and headers, so no spaces, quotes or control characters. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function requestIdOf(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** The SHA-256 of the one <style> element Swagger UI's bundle inserts (test/api/hardening.test.ts renders /docs in Chromium). */
const SWAGGER_UI_INLINE_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/**
 * The Content-Security-Policy: everything from the service itself, nothing inline but images as
 * data: URLs. No upgrade-insecure-requests: the service is also served over plain HTTP on a LAN.
 */
export const CONTENT_SECURITY_POLICY = {
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    scriptSrcAttr: ["'none'"],
    // Swagger UI (@fastify/swagger-ui, pinned) renders one fixed <style> element; its hash, and no other inline style.
    styleSrc: ["'self'", SWAGGER_UI_INLINE_STYLE],
    imgSrc: ["'self'", 'data:'],
    fontSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
};

/**
 * Headers a cross-origin client may read (CORS): the request id, where a created resource is, when to
 * retry, the request rate (RateLimit-*), the content codings a request body may have.
 */
const EXPOSED_HEADERS = [
  REQUEST_ID_HEADER,
  'location',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'accept-encoding',
];
/** CORS response headers copied onto the raw response for hijacked replies (event streams). */
const CORS_RESPONSE_HEADERS = ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers', 'vary'];

export async function installHardening(app: FastifyInstance, config: Pick<Config, 'CORS_ORIGINS'>): Promise<void> {
  app.setGenReqId((request) => requestIdOf(request.headers[REQUEST_ID_HEADER]));
  app.addHook('onRequest', (request, reply, done) => {
    reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    done();
  });

  const corsOn = config.CORS_ORIGINS.length > 0;
  const securityHeaders = helmet({
    contentSecurityPolicy: CONTENT_SECURITY_POLICY,
    // Cross-origin clients allowed by CORS_ORIGINS must be able to read the responses.
    crossOriginResourcePolicy: { policy: corsOn ? 'cross-origin' : 'same-origin' },
  });
  // On the raw response: the hijacked replies (event streams) carry them too.
  app.addHook('onRequest', (request, reply, done) => securityHeaders(request.raw, reply.raw, () => done()));

  if (!corsOn) return;
  const anyOrigin = config.CORS_ORIGINS.includes('*');
  await app.register(fastifyCors, {
    origin: anyOrigin ? '*' : config.CORS_ORIGINS,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
  app.addHook('preHandler', (_request, reply, done) => {
    for (const name of CORS_RESPONSE_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
    done();
  });
}
