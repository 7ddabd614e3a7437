/**
 * /v1/matrices: a Matrix Market matrix uploaded once, stored as CSR, named by any number of jobs
 * ({ "format": "stored", "id": "..." }). The upload is the raw text as the body (text/plain or
 * application/x-matrix-market, optionally Content-Encoding: gzip), read as a stream: never buffered
 * whole, parsed as it arrives (limits from the size line, before anything is allocated), stored only
 * once all of it parsed. Content-type parsers are encapsulated: this plugin's pass-through parser
 * reaches these routes only, and the JSON routes keep refusing text bodies.
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, Writable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { FastifyContentTypeParser, FastifyReply } from 'fastify';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../../config.js';
import { IdempotencyKeyInUseError } from '../../jobs/errors.js';
import { fieldProblem, makeProblem } from '../../jobs/problems.js';
import { MatrixMarketSyntaxError } from '../../solvers/errors.js';
import type { IdempotencyClaim, IdempotencyService } from '../../jobs/service/idempotencyStore.js';
import type { MatrixService, StoredMatrix } from '../../jobs/types.js';
import {
  claimWhenFree,
  IDEMPOTENCY_409,
  IDEMPOTENCY_KEY_HEADER,
  idempotencyScopeOf,
  IdempotentHeadersSchema,
  IdempotencyKeySchema,
  REPLAYED_HEADER,
  replayOf,
  requestFingerprint,
  sendAnswer,
} from '../idempotency.js';
import { ownerFilterOf, tenantOf } from '../plugins/auth.js';
import { sendProblem } from '../plugins/problems.js';
import { contentCodingOf, InvalidGzipBodyError, UnsupportedContentEncodingError } from '../plugins/jsonBody.js';
import { bodyWithin, clientGone, closeAfterAnswer } from '../requestBody.js';
import {
  ListMatricesQuerySchema,
  MATRIX_UPLOAD_MEDIA_TYPES,
  MatrixIdParamsSchema,
  MatrixPageSchema,
  StoredMatrixSchema,
} from '../schemas/matrix.js';
import { problemResponse, problemResponses } from '../schemas/problem.js';
import { jsonResponse } from '../schemas/responses.js';

export interface MatrixRoutesOptions {
  matrices: MatrixService;
  idempotency: IdempotencyService;
  config: Pick<Config, 'MAX_UPLOAD_BYTES' | 'MAX_N_SPARSE' | 'MAX_NNZ' | 'MATRIX_MARKET_MAX_LINE_CHARS' | 'UPLOAD_TIMEOUT_MS'>;
}

/** Hands the handler nothing: it reads `request.raw` itself, as a stream. */
const passThrough: FastifyContentTypeParser = (_request, _payload, done) => done(null, undefined);

/** The upload's body is not validated by a schema (it is a stream); its schema only documents it. */
const noBodyValidation = () => (data: unknown) => ({ value: data });

/** Raised when an upload exceeds MAX_UPLOAD_BYTES (as sent, or decompressed). */
class UploadTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`upload larger than ${limit} bytes`);
  }
}

/** Passes bytes through, failing once more than `limit` went by; feeds them to `hash` if given (the upload's digest, for its Idempotency-Key). */
function byteLimit(limit: number, hash?: Hash): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      total += chunk.length;
      hash?.update(chunk);
      if (total > limit) callback(new UploadTooLargeError(limit));
      else callback(null, chunk);
    },
  });
}

/** Reads and drops: the body of a repeated upload is only hashed. */
function drain(): Writable {
  return new Writable({ write: (_chunk, _encoding, callback) => callback() });
}

/** A block of empty lines, compared at once when skipping a run of them. */
const NEWLINES = Buffer.alloc(256, 10);

/**
 * Passes bytes through, failing (MatrixMarketSyntaxError naming the line) once a line grows past
 * `maxChars` bytes without a newline: such a line is refused as it arrives, never buffered whole.
 * Matrix Market text is ASCII, so bytes are characters.
 */
function lineLengthLimit(maxChars: number): Transform {
  let lineLength = 0;
  let line = 1;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      for (let start = 0; ;) {
        // A run of empty lines in one pass (a bomb of newlines costs little per byte, not a call per line).
        const runStart = start;
        while (start + NEWLINES.length <= chunk.length && NEWLINES.equals(chunk.subarray(start, start + NEWLINES.length)))
          start += NEWLINES.length;
        while (chunk[start] === 10) start++;
        if (start > runStart) {
          line += start - runStart;
          lineLength = 0;
        }
        const newline = chunk.indexOf(10, start);
        lineLength += (newline === -1 ? chunk.length : newline) - start;
        if (lineLength > maxChars) {
          callback(new MatrixMarketSyntaxError(`the line is longer than ${maxChars} characters (MATRIX_MARKET_MAX_LINE_CHARS).`, line));
          return;
        }
        if (newline === -1) break;
        lineLength = 0;
        line++;
        start = newline + 1;
      }
      callback(null, chunk);
    },
  });
}

function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}

const BAD_ID = problemResponse(400, 'The id is longer than 64 characters (`invalid-request`).');
const NO_SUCH_MATRIX = problemResponse(
  404,
  "No such stored matrix (`matrix-not-found`): never uploaded, expired, deleted, or another API key's.",
);

export const matrixRoutes: FastifyPluginCallbackZod<MatrixRoutesOptions> = (app, { matrices, idempotency, config }, done) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', passThrough);

  app.post(
    '/matrices',
    {
      config: { readsOwnBody: true },
      validatorCompiler: noBodyValidation,
      schema: {
        tags: ['matrices'],
        operationId: 'uploadMatrix',
        summary: 'Upload a Matrix Market matrix once, for many jobs',
        description: [
          'The body is the text of a Matrix Market coordinate file (real, integer or pattern; general, symmetric or',
          'skew-symmetric), as `text/plain` or `application/x-matrix-market`, optionally with `Content-Encoding: gzip`',
          '(415 for other media types or encodings). It is parsed as it arrives and stored as compressed sparse rows,',
          'never densified. 413 when the size line declares n > MAX_N_SPARSE or more than MAX_NNZ entries (refused',
          'before anything is allocated), or the body exceeds MAX_UPLOAD_BYTES; 422 naming the line for an entry count',
          'that does not match the size line, an index out of range, a duplicate entry, a value that is not a finite',
          'number, a line longer than MATRIX_MARKET_MAX_LINE_CHARS, and naming the field for a complex (or hermitian)',
          'matrix; 408 when the body has not arrived completely within UPLOAD_TIMEOUT_MS. Nothing is stored unless the whole text',
          'parsed. Answers 201 with the matrix and its URL in `Location`; a job names it as',
          '`{ "format": "stored", "id": "..." }`. The matrix expires MATRIX_TTL_SECONDS after its upload, renewed',
          'whenever a job names it. With an `Idempotency-Key`, a repeat of the upload (the same text, compared once it has',
          'arrived) answers the same matrix again; another text with the key is a 422.',
        ].join(' '),
        consumes: [...MATRIX_UPLOAD_MEDIA_TYPES],
        headers: IdempotentHeadersSchema,
        body: z.string().describe('The Matrix Market text (UTF-8), possibly gzip-compressed (Content-Encoding: gzip).'),
        response: {
          201: {
            description: 'The matrix, stored.',
            headers: {
              Location: {
                type: 'string',
                description: 'The URL of the matrix, `/v1/matrices/{id}` (relative to the service).',
                required: true,
              },
              ...REPLAYED_HEADER,
            },
            content: { 'application/json': { schema: StoredMatrixSchema } },
          },
          ...problemResponse(
            400,
            'With `Content-Encoding: gzip`, a body that is not valid gzip data; or the connection closed before the upload was ' +
              'complete (`invalid-request`; nothing stored).',
          ),
          ...problemResponse(
            408,
            'The body did not arrive completely within UPLOAD_TIMEOUT_MS (`upload-timeout`; the connection is closed shortly after).',
          ),
          ...problemResponse(
            413,
            'The upload exceeds MAX_UPLOAD_BYTES, as sent or decompressed (`body-too-large`); its size line declares n > ' +
              "MAX_N_SPARSE or more than MAX_NNZ entries (`too-large`); or it exceeds the API key's stored bytes (`quota-too-large`).",
          ),
          ...problemResponse(
            415,
            'Not `text/plain` or `application/x-matrix-market`, or a `Content-Encoding` other than gzip (`unsupported-media-type`; ' +
              'then with `Accept-Encoding: gzip`).',
            {
              'Accept-Encoding': {
                type: 'string',
                description: 'The content codings an upload may have (`gzip`), when it was refused for its coding.',
                required: false,
              },
            },
          ),
          ...problemResponse(
            422,
            'The text is not valid Matrix Market data, naming the line (`matrix-market-syntax`: entry count, index out of range, ' +
              'duplicate entry, value not finite, line too long), or a field or symmetry not supported (`unsupported-matrix`: complex, hermitian); ' +
              'an `Idempotency-Key` already used with another upload (`idempotency-key-reused`).',
          ),
          ...IDEMPOTENCY_409,
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      const mediaType = mediaTypeOf(request.headers['content-type']);
      if (!(MATRIX_UPLOAD_MEDIA_TYPES as readonly string[]).includes(mediaType)) {
        return unsupported(
          reply,
          `Content-Type ${mediaType ? `'${mediaType}'` : 'missing'}; send the Matrix Market text as text/plain or application/x-matrix-market.`,
        );
      }
      const encoding = contentCodingOf(request.headers['content-encoding']);
      // The error handler answers 415 with Accept-Encoding.
      if (encoding !== 'identity' && encoding !== 'gzip') throw new UnsupportedContentEncodingError(encoding, 'the Matrix Market text');
      // The body is not validated by a schema here: the Idempotency-Key is checked by hand.
      const key = request.headers[IDEMPOTENCY_KEY_HEADER];
      if (key !== undefined) {
        const checked = IdempotencyKeySchema.safeParse(key);
        if (!checked.success) {
          closeAfterAnswer(request.raw, reply);
          const detail = checked.error.issues[0]?.message ?? 'invalid Idempotency-Key';
          return sendProblem(
            reply,
            makeProblem(
              'invalid-request',
              `The request does not match the schema: headers parameter /${IDEMPOTENCY_KEY_HEADER}: ${detail}.`,
              {
                instance: request.url,
                errors: [fieldProblem('headers', `/${IDEMPOTENCY_KEY_HEADER}`, detail)],
              },
            ),
          );
        }
      }
      const scope = idempotencyScopeOf(request);
      // A key already answered, or being answered: the upload is only hashed, to tell a repeat from another upload.
      let claim: IdempotencyClaim | null = typeof key === 'string' ? await idempotency.claim(scope, key) : null;
      const token = claim?.state === 'claimed' ? claim.token : null;
      const creating = claim === null || token !== null;
      const digest = createHash('sha256');
      let stored: StoredMatrix | undefined;
      const limit = config.MAX_UPLOAD_BYTES;
      // The reader's own error (syntax, limits, quota), kept: when it throws, leaving its `for await`
      // destroys the stream it reads with an AbortError, which the pipeline would report first
      // whenever the body had not ended yet (any upload over a socket still sending).
      let readerError: unknown;
      const store = async (text: AsyncIterable<Buffer>): Promise<void> => {
        try {
          stored = await matrices.upload(text, tenantOf(request));
        } catch (error) {
          readerError = error;
          throw error;
        }
      };
      const body = bodyWithin(request.raw, config.UPLOAD_TIMEOUT_MS);
      const lines = lineLengthLimit(config.MATRIX_MARKET_MAX_LINE_CHARS);
      // The text is hashed as decompressed: the same matrix sent plain or gzip-compressed is the same upload. A repeat is only hashed.
      try {
        if (encoding === 'gzip' && creating) await pipeline(body, byteLimit(limit), createGunzip(), byteLimit(limit, digest), lines, store);
        else if (encoding === 'gzip') await pipeline(body, byteLimit(limit), createGunzip(), byteLimit(limit, digest), drain());
        else if (creating) await pipeline(body, byteLimit(limit, digest), lines, store);
        else await pipeline(body, byteLimit(limit, digest), drain());
      } catch (pipelineError) {
        if (token !== null) await idempotency.release(scope, key as string, token).catch(() => undefined);
        const error = isAbort(pipelineError) && readerError !== undefined ? readerError : pipelineError;
        if (clientGone(request.raw)) {
          // Nobody is left to answer: not a failure of the service.
          request.log.info({ err: error }, 'upload abandoned by the client; nothing stored');
          return sendProblem(
            reply,
            makeProblem('invalid-request', 'The connection closed before the upload was complete; nothing was stored.', {
              instance: request.url,
            }),
          );
        }
        closeAfterAnswer(request.raw, reply);
        if (error instanceof UploadTooLargeError) {
          return sendProblem(
            reply,
            makeProblem('body-too-large', `The upload exceeds ${limit} bytes (MAX_UPLOAD_BYTES), as sent or decompressed.`, {
              instance: request.url,
            }),
          );
        }
        // The error handler answers the stream's own errors: a timeout (408), gzip that is not (400), the reader's.
        if (isZlibError(error)) throw new InvalidGzipBodyError((error as Error).message);
        throw error;
      }
      const fingerprint = requestFingerprint('POST /v1/matrices', digest.digest('hex'));
      if (!creating) {
        if (claim?.state === 'pending') claim = await claimWhenFree(idempotency, scope, key as string);
        if (claim?.state === 'claimed') {
          // The request that held the key failed, and this one's body is read: nothing to create it from.
          await idempotency.release(scope, key as string, claim.token).catch(() => undefined);
          throw new IdempotencyKeyInUseError('the first request with this Idempotency-Key ended without creating a matrix');
        }
        if (claim?.state === 'done') return sendAnswer(reply, replayOf(claim, fingerprint), true);
      }
      const matrix = stored as StoredMatrix;
      request.log.info({ matrixId: matrix.id, n: matrix.n, nnz: matrix.nnz }, 'matrix stored');
      const answer = { statusCode: 201, location: `/v1/matrices/${matrix.id}`, body: JSON.stringify(matrix) };
      if (token !== null) {
        await idempotency
          .complete(scope, key as string, token, fingerprint, answer)
          .catch((err: unknown) => request.log.error({ err }, 'could not record the answer of an Idempotency-Key'));
      }
      return sendAnswer(reply, answer, false);
    },
  );

  app.get(
    '/matrices',
    {
      schema: {
        tags: ['matrices'],
        operationId: 'listMatrices',
        summary: 'List stored matrices, newest first',
        description: [
          "The caller's stored matrices (with AUTH_MODE=keys, the key's own; otherwise all), as pages: pass `nextCursor` as",
          '`cursor` for the next page. Optional filters: `symmetry`, `field`, `minN`, `maxN`. A matrix appears once its whole',
          'upload parsed and was stored (a refused or interrupted upload never does) and until it expires or is deleted.',
          '400 for a bad filter, `limit` or `cursor`.',
        ].join(' '),
        querystring: ListMatricesQuerySchema,
        response: {
          200: jsonResponse('A page of stored matrices, newest first.', MatrixPageSchema),
          ...problemResponse(
            400,
            'A bad `symmetry`, `field`, `minN`, `maxN` or `limit` (`invalid-request`), or a `cursor` this service did not issue (`invalid-cursor`).',
          ),
          ...problemResponses(503),
        },
      },
    },
    async (request) => matrices.list({ ...request.query, owner: ownerFilterOf(request) }),
  );

  app.get(
    '/matrices/:id',
    {
      schema: {
        tags: ['matrices'],
        operationId: 'getMatrix',
        summary: 'A stored matrix: n, nnz, symmetry',
        description: 'The document of a stored matrix. 404 when there is none (never uploaded, expired or deleted).',
        params: MatrixIdParamsSchema,
        response: {
          200: jsonResponse('The stored matrix.', StoredMatrixSchema),
          ...BAD_ID,
          ...NO_SUCH_MATRIX,
          ...problemResponses(503),
        },
      },
    },
    async (request) => matrices.get(request.params.id, ownerFilterOf(request)),
  );

  app.delete(
    '/matrices/:id',
    {
      schema: {
        tags: ['matrices'],
        operationId: 'deleteMatrix',
        summary: 'Delete a stored matrix',
        description: [
          'Removes the matrix at once, whoever uses it. Jobs read their stored matrix when they start: a running job is not',
          'affected, and a job still queued then fails with a `matrix-not-found` problem. Takes no body.',
        ].join(' '),
        params: MatrixIdParamsSchema,
        response: { 204: z.undefined().describe('Deleted.'), ...BAD_ID, ...NO_SUCH_MATRIX, ...problemResponses(503) },
      },
    },
    async (request, reply) => {
      await matrices.remove(request.params.id, ownerFilterOf(request));
      return reply.code(204).send();
    },
  );
  done();
};

function unsupported(reply: FastifyReply, detail: string): FastifyReply {
  return sendProblem(reply, makeProblem('unsupported-media-type', detail, { instance: reply.request.url }));
}

function isAbort(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'AbortError';
}

function isZlibError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}
