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
    type: z.string().describe('A relative URI reference "/problems/<code>"; GET it for a description of the problem type.'),
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

const descriptions: Record<number, string> = {
  400: 'Malformed JSON, or the request does not match the schema (`errors` names each field).',
  404: 'No such job, run or endpoint.',
  408: 'The request body did not arrive completely within UPLOAD_TIMEOUT_MS (the connection is closed shortly after).',
  409: 'The job is not finished.',
  413: 'The body or the problem is too large.',
  415: 'The body is not JSON.',
  422: 'The problem is invalid (not square, NaN/Infinity, bad partition, unsupported matrix...).',
  503: 'Redis is unreachable.',
};

/** Response entries documenting problem answers for some status codes. */
export function problemResponses(
  ...statuses: number[]
): Record<number, { description: string; content: { 'application/problem+json': { schema: typeof ProblemSchema } } }> {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: descriptions[status] ?? 'Problem', content: { 'application/problem+json': { schema: ProblemSchema } } },
    ]),
  );
}
