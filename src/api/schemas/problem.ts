/**
 * RFC 9457 problem details: the body of every 4xx/5xx answer, and of a failed job's `error`. The
 * types of src/jobs/types.ts (ProblemDetails, FieldProblem) are the definition; the schemas are
 * checked against them at compile time.
 */
import { z } from 'zod';
import type { FieldProblem, ProblemDetails } from '../../jobs/types.js';
import { assertSameShape } from './sameShape.js';

export const FieldProblemSchema = z.object({
  in: z.enum(['body', 'query', 'path', 'headers']).optional().describe('Which part of the request.'),
  pointer: z
    .string()
    .describe('JSON pointer (RFC 6901) to the offending field within that part, e.g. "/matrix/data/0/1" or "/partition/machines".'),
  detail: z.string().describe('What is wrong with that field.'),
  path: z.string().describe('The same pointer as `pointer` (its earlier name).'),
  message: z.string().describe('The same text as `detail` (its earlier name).'),
});

export const ProblemSchema = z
  .looseObject({
    type: z.string().describe('A relative URI reference `/problems/{code}`; GET it for a description of the problem type.'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().describe('What is wrong with this request, in words (names the field, entry, row or machine).'),
    instance: z.string().optional(),
    code: z.string().optional().describe('Stable machine-readable cause, e.g. "singular-matrix" or "non-finite-value".'),
    errors: z
      .array(FieldProblemSchema)
      .optional()
      .describe('Field-level problems: each schema violation, or the field a semantic refusal (422, 413) concerns.'),
    details: z.record(z.string(), z.unknown()).optional().describe('Structured facts about the cause (row, machine, entry...).'),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details (application/problem+json).' });

export const ProblemTypeSchema = z
  .object({
    type: z.string(),
    code: z.string(),
    status: z.number().int(),
    title: z.string(),
    description: z.string(),
  })
  .meta({ id: 'ProblemType' });

assertSameShape<z.output<typeof FieldProblemSchema>, FieldProblem>(true);
assertSameShape<z.output<typeof ProblemSchema>, ProblemDetails>(true);

type ProblemContent = { 'application/problem+json': { schema: typeof ProblemSchema } };
type ResponseHeader = { type: 'string'; description: string; required: boolean; pattern?: string };
/** A problem answer as a route's schema declares it (its `headers` go into the OpenAPI document, plugins/openapi.ts). */
export interface ProblemResponse {
  description: string;
  content: ProblemContent;
  headers?: Record<string, ResponseHeader>;
}

/**
 * One problem answer of an operation, described for it (what the status means there, with the
 * problem codes it can carry): `...problemResponse(404, 'No such study...')`.
 */
export function problemResponse<S extends number>(
  status: S,
  description: string,
  headers?: Record<string, ResponseHeader>,
): Record<S, ProblemResponse> {
  const response: ProblemResponse = { description, content: { 'application/problem+json': { schema: ProblemSchema } } };
  if (headers) response.headers = headers;
  return { [status]: response };
}

/** Answers worded the same on every operation that can give them. */
const COMMON = {
  ...problemResponse(
    415,
    'The body is not `application/json` (`unsupported-media-type`), or its `Content-Encoding` is neither gzip nor identity ' +
      '(then with `Accept-Encoding: gzip`).',
    {
      'Accept-Encoding': {
        type: 'string',
        description: 'The content codings a request body may have (`gzip`), when the body was refused for its coding.',
        required: false,
      },
    },
  ),
  ...problemResponse(
    408,
    'The request body did not arrive completely within UPLOAD_TIMEOUT_MS (`upload-timeout`); the connection is closed shortly after.',
  ),
  ...problemResponse(503, 'Redis is unreachable (`store-unavailable`); retry later.'),
};

/** Response entries of the answers worded alike everywhere: 408 and 415 for a body, 503. */
export function problemResponses<S extends keyof typeof COMMON>(...statuses: S[]): Record<S, ProblemResponse> {
  return Object.fromEntries(statuses.map((status) => [status, COMMON[status]])) as Record<S, ProblemResponse>;
}

/** Why a JSON body (plugins/jsonBody.ts) can be refused with a 400, before its schema is checked. */
export const JSON_BODY_400 =
  'Malformed JSON (`malformed-json`), a `Content-Encoding: gzip` body that is not gzip data (`invalid-request`), a key ' +
  '`__proto__` (or `constructor` with `prototype`: `invalid-request`), or a body that does not match the schema ' +
  '(`invalid-request`, `errors` names each field)';

/** Why a JSON body can be refused with a 413, whatever the operation. */
export const JSON_BODY_413 =
  'The body exceeds BODY_LIMIT_BYTES, as sent or once gzip-decompressed, or holds more than MAX_BODY_VALUES values (`body-too-large`)';
