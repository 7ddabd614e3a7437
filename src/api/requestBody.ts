/**
 * How long a request body may take to arrive. The server's own request timeout is off (SSE streams
 * stay open for hours), so without this a client that sends its headers and then part of a body,
 * or nothing more, would hold its connection and a parser forever. Every body, JSON or a Matrix
 * Market upload, must arrive within UPLOAD_TIMEOUT_MS; past it the answer is a 408 problem, and the
 * connection is closed shortly after the answer.
 */
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Raised when a body has not arrived completely within UPLOAD_TIMEOUT_MS. */
export class BodyTimeoutError extends Error {
  /** Read by fastify's body reader, which otherwise answers 400 for a stream error. */
  readonly statusCode = 408;
  constructor(readonly timeoutMs: number) {
    super(`body not complete after ${timeoutMs} ms`);
    this.name = 'BodyTimeoutError';
  }
}

/** How soon the deadline is looked at again while the service, not the client, is behind. */
const BACKLOG_RECHECK_MS = 250;

/**
 * `body` as a stream that fails with BodyTimeoutError once `timeoutMs` have passed (a body that
 * trickles or never ends). The body is piped into it, not handed to a pipeline, so that whatever
 * fails downstream leaves the request (and its connection) usable for the answer.
 *
 * The deadline is the client's: when it passes while data that arrived still waits in this stream
 * for its reader (a gzip bomb inflating, a parser behind on a loaded machine), the service is the
 * slow side, and the deadline moves on until that backlog is read. Each of those bodies is bounded
 * by MAX_UPLOAD_BYTES; a body that does not arrive is still refused once its reader waits on it.
 */
export function bodyWithin(body: Readable, timeoutMs: number): PassThrough {
  const within = new PassThrough();
  const expire = (): void => {
    if (within.readableLength > 0 || within.writableLength > 0) {
      timer = setTimeout(expire, BACKLOG_RECHECK_MS);
      return;
    }
    body.unpipe(within);
    within.destroy(new BodyTimeoutError(timeoutMs));
  };
  let timer = setTimeout(expire, timeoutMs);
  within.once('close', () => clearTimeout(timer));
  // Everything sent has been taken in: what remains is the service's.
  body.once('end', () => clearTimeout(timer));
  body.once('error', (error) => within.destroy(error));
  body.pipe(within);
  return within;
}

/** How long the rest of a body refused midway is read (and dropped) after the answer, before its connection is closed. */
const LINGER_MS = 2000;

/**
 * For a request refused before its body ended (possibly never-ending): once the answer is sent,
 * read and drop what still comes for LINGER_MS, then close the connection (unless the body ended by
 * then). Closing at once, with the client's data still unread, would reset the connection, and the
 * client could lose the answer it is still sending towards.
 */
export function closeAfterAnswer(body: IncomingMessage, reply: FastifyReply): void {
  if (body.complete) return;
  reply.raw.once('finish', () => {
    const timer = setTimeout(() => body.destroy(), LINGER_MS);
    body.once('end', () => clearTimeout(timer));
    body.resume();
  });
}

/** The client closed its connection before its body ended (an answer cannot be delivered). */
export function clientGone(body: IncomingMessage): boolean {
  return !body.complete && body.socket?.destroyed === true;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads `request.raw` itself (the Matrix Market upload): no preParsing stream is put in front of it. */
    readsOwnBody?: boolean;
  }
}

/**
 * Every body parsed by fastify (the JSON routes) arrives within `timeoutMs`, or the request is
 * answered 408 (BodyTimeoutError, through the error handler) and its connection closed after it.
 * Routes that read their body themselves (the upload) apply bodyWithin on their own.
 */
export function limitBodyTime(app: FastifyInstance, timeoutMs: number): void {
  app.addHook('preParsing', async (request, reply, payload) => {
    if (request.routeOptions.config.readsOwnBody) return payload;
    const within = bodyWithin(payload, timeoutMs);
    within.once('error', (error) => {
      if (error instanceof BodyTimeoutError) closeAfterAnswer(request.raw, reply);
    });
    return within;
  });
}
