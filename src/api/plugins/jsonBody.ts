/**
 * JSON request bodies (POST /v1/jobs, /v1/studies, /v1/admin/keys), as sent or gzip-compressed
 * (`Content-Encoding: gzip`, as a Matrix Market upload may be). The compressed body is bounded by
 * fastify's bodyLimit as it arrives, and its decompressed size by the same BODY_LIMIT_BYTES
 * (zlib stops inflating there, so a small "gzip bomb" costs nothing): 413 above. A body that is not
 * gzip data is a 400 naming gzip; any other coding (br, deflate, compress...) a 415 with
 * `Accept-Encoding: gzip` (RFC 9110 15.5.16). Then fastify's own JSON parser (with its
 * prototype-poisoning checks) reads the text.
 *
 * This replaces the root's application/json parser, so every plugin that keeps it inherits it; the
 * upload (routes/matrices.ts) and the bodyless routes install parsers of their own.
 */
import { gunzip } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';

/** The content codings a request body may have (RFC 9110 8.4.1): as sent, or gzip. */
export const ACCEPTED_CONTENT_CODINGS = ['gzip'] as const;

/**
 * A request's content coding, normalized: 'identity' when there is none, 'gzip' for gzip (and its
 * old alias x-gzip), otherwise the header as sent, lower-cased (a list of codings stays a list).
 */
export function contentCodingOf(header: string | string[] | undefined): string {
  const value = (Array.isArray(header) ? header.join(',') : (header ?? '')).trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  return value;
}

/** A request body in a content coding the service does not decode (answered 415 with Accept-Encoding). */
export class UnsupportedContentEncodingError extends Error {
  constructor(
    readonly coding: string,
    what = 'the JSON body',
  ) {
    super(`Content-Encoding '${coding}' is not supported; send ${what} as is or gzip-compressed (Content-Encoding: gzip).`);
    this.name = 'UnsupportedContentEncodingError';
  }
}

/** A body labelled gzip that does not decompress (answered 400). */
export class InvalidGzipBodyError extends Error {
  constructor(reason: string) {
    super(`The body is not valid gzip data (Content-Encoding: gzip): ${reason}.`);
    this.name = 'InvalidGzipBodyError';
  }
}

/**
 * Valid JSON holding a key that could poison prototypes (`__proto__`, or `constructor` with `prototype`), which the
 * JSON parser refuses (fastify's onProtoPoisoning / onConstructorPoisoning: 'error'); answered 400 saying so, where
 * the parser's own error read "not valid JSON".
 */
export class ForbiddenJsonKeyError extends Error {
  constructor() {
    super(
      "The request body holds a key '__proto__' (or 'constructor' with 'prototype'), refused to keep objects' prototypes " +
        'intact; no field of the API has such a name.',
    );
    this.name = 'ForbiddenJsonKeyError';
  }
}

/** A gzip body that decompresses to more than BODY_LIMIT_BYTES (answered 413). */
export class DecompressedBodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The request body exceeds ${limit} bytes (BODY_LIMIT_BYTES) once decompressed (Content-Encoding: gzip).`);
    this.name = 'DecompressedBodyTooLargeError';
  }
}

/** A JSON body with more values than MAX_BODY_VALUES (answered 413). */
export class TooManyBodyValuesError extends Error {
  constructor(readonly limit: number) {
    super(
      `The JSON body holds more than ${limit} values (MAX_BODY_VALUES); send a large matrix as a Matrix Market upload ` +
        '(POST /v1/matrices, then { "format": "stored", "id": ... }).',
    );
    this.name = 'TooManyBodyValuesError';
  }
}

/**
 * Whether `body` (JSON text) may hold more than `limit` values: its commas bound them (one fewer
 * than the values of each array or object). Counted before parsing, because a parsed array costs
 * ~25 bytes per value (JSON.parse's array, then the schema's copy): a 32 MiB body of "0," holds
 * 16 million values, ~400 MiB parsed, where a body of full-precision numbers holds ~1.7 million.
 */
function holdsMoreValues(body: Uint8Array, limit: number): boolean {
  if (body.length <= 2 * limit) return false;
  let commas = 0;
  for (let k = 0; k < body.length; k++) if (body[k] === 0x2c && ++commas >= limit) return true;
  return false;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Register on the root before any route. */
export function installJsonBodies(app: FastifyInstance, config: Pick<Config, 'BODY_LIMIT_BYTES' | 'MAX_BODY_VALUES'>): void {
  const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
  const parseJson = app.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  const limit = config.BODY_LIMIT_BYTES;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    const coding = contentCodingOf(request.headers['content-encoding']);
    const parse = (text: Buffer): void => {
      if (holdsMoreValues(text, config.MAX_BODY_VALUES)) done(new TooManyBodyValuesError(config.MAX_BODY_VALUES), undefined);
      else {
        const json = text.toString('utf8');
        void parseJson(request, json, (error, value) => {
          // The parser says "invalid JSON" for a forbidden key too: tell the two apart.
          if (error && (error as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY' && isJson(json))
            done(new ForbiddenJsonKeyError(), undefined);
          else done(error, value);
        });
      }
    };
    // An empty body is empty in any coding: fastify's parser says a JSON document was expected.
    if (coding === 'identity' || body.length === 0) return parse(body);
    if (coding !== 'gzip') return done(new UnsupportedContentEncodingError(coding), undefined);
    gunzip(body, { maxOutputLength: limit }, (error, text) => {
      if (!error) parse(text);
      else if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') done(new DecompressedBodyTooLargeError(limit), undefined);
      else done(new InvalidGzipBodyError(error.message), undefined);
    });
  });
}
