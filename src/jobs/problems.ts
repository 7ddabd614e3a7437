/**
 * RFC 9457 problem types of the service: one catalog, used by the job layer (a failed job stores
 * its problem in `error`) and by the HTTP layer (its one error handler, and GET /problems/{code}).
 *
 * Type URIs are relative references `/problems/<code>` (RFC 9457 3.1.1 allows relative URIs; they
 * resolve against the service's own origin, where GET /problems/<code> describes the problem).
 * `code` repeats the last segment as a stable machine-readable member.
 */
import type { SolverErrorCode } from '../solvers/errors.js';
import { SolverError } from '../solvers/errors.js';
import { ColumnOutOfRangeError, JobError, type JobErrorCode } from './errors.js';
import type { FieldProblem, ProblemDetails } from './types.js';

/** What GET /problems/{code} says about a problem type. */
export interface ProblemType {
  code: ProblemCode;
  status: number;
  title: string;
  description: string;
}

type ProblemTypeEntry = Omit<ProblemType, 'code'>;

/**
 * Every problem type, keyed by its code: the keys are the ProblemCode union. Every SolverError and
 * JobError code must have its entry (a missing one does not compile); the others are the problems
 * the HTTP layer raises itself.
 */
const CATALOG = {
  // Request syntax (400)
  'malformed-json': { status: 400, title: 'Malformed JSON', description: 'The request body is not valid JSON.' },
  'invalid-request': {
    status: 400,
    title: 'Invalid request',
    description: 'The request does not match the schema of the endpoint (see `errors` for each offending field, as a JSON pointer).',
  },
  'invalid-cursor': {
    status: 400,
    title: 'Invalid cursor',
    description: 'The `cursor` query parameter is not a `nextCursor` returned by this service.',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported media type',
    description:
      'Request bodies must be `application/json`, as sent or with `Content-Encoding: gzip`; a Matrix Market upload ' +
      '(POST /v1/matrices) is `text/plain` or `application/x-matrix-market`, optionally with `Content-Encoding: gzip`. ' +
      'Any other content coding (br, deflate...) is refused too, with `Accept-Encoding: gzip`.',
  },
  'not-acceptable': {
    status: 406,
    title: 'Not acceptable',
    description:
      'The `Accept` header admits none of the media types this resource comes in (a trace: application/json, text/csv; a ' +
      'solution: also application/x-matrix-market and application/octet-stream).',
  },
  // Semantically invalid problems (422): the SolverError codes of the numerical core
  'not-square': {
    status: 422,
    title: 'Matrix is not square',
    description:
      'A x = b needs a square n x n matrix or a tall N x n one (N > n: least squares); a wide one (fewer rows than columns) is refused.',
  },
  'matrix-market-syntax': {
    status: 422,
    title: 'Malformed Matrix Market data',
    description: 'The Matrix Market text could not be parsed.',
  },
  'unsupported-matrix': {
    status: 422,
    title: 'Unsupported matrix',
    description: 'The Matrix Market field or symmetry is not supported (complex, hermitian or pattern-only matrices, for example).',
  },
  'non-finite-value': { status: 422, title: 'Non-finite value', description: 'An entry of the matrix or of rhs is NaN or infinite.' },
  'magnitude-out-of-range': {
    status: 422,
    title: 'Magnitude out of range',
    description:
      'An entry of the matrix or of rhs above 2^200 (~1.6e60) in magnitude, or a row of the matrix or rhs whose largest entry is below 2^-200 (~6.2e-61): their squares leave double precision. Scaling by a power of 2 is exact.',
  },
  'invalid-entry': { status: 422, title: 'Invalid entry', description: 'An entry of the matrix or of rhs is not a number.' },
  'dimension-mismatch': {
    status: 422,
    title: 'Dimension mismatch',
    description: 'Sizes do not agree (ragged rows, rhs length, COO indices out of range...).',
  },
  'invalid-partition': {
    status: 422,
    title: 'Invalid partition',
    description: 'The partition of the rows over the machines is not valid.',
  },
  'empty-machine': { status: 422, title: 'Machine without rows', description: 'Every machine must own at least one row.' },
  'row-assigned-twice': { status: 422, title: 'Row assigned twice', description: 'Each row belongs to exactly one machine.' },
  'row-unassigned': { status: 422, title: 'Row not assigned', description: 'The partition must cover every row.' },
  'too-many-machines': {
    status: 422,
    title: 'Too many machines',
    description: 'More machines than rows, or more than the service allows (MAX_MACHINES).',
  },
  'singular-matrix': {
    status: 422,
    title: 'Singular matrix',
    description: 'The matrix is singular (or numerically so): A x = b has no unique solution.',
  },
  'zero-row': {
    status: 422,
    title: 'Zero row',
    description:
      'A row of a tall matrix is entirely zero: it carries no equation on x (0 = b_k), and the methods need every row nonzero. ' +
      'Removing it changes neither the least-squares solution nor the block-weighted one.',
  },
  'invalid-parameter': {
    status: 422,
    title: 'Invalid parameter',
    description: 'A generator parameter, an option or an algorithm parameter is unknown or outside its domain.',
  },
  'invalid-problem': {
    status: 422,
    title: 'Invalid problem',
    description: 'The problem is well-formed JSON but cannot be solved as given.',
  },
  // Size limits (413)
  'too-large': {
    status: 413,
    title: 'Problem too large',
    description: 'n exceeds MAX_N (dense storage grows as n^2), or a sparse matrix exceeds MAX_N_SPARSE or MAX_NNZ.',
  },
  'body-too-large': {
    status: 413,
    title: 'Request body too large',
    description:
      'The request body exceeds BODY_LIMIT_BYTES (MAX_UPLOAD_BYTES for a Matrix Market upload), as sent or, with ' +
      '`Content-Encoding: gzip`, once decompressed.',
  },
  // Jobs
  'not-found': { status: 404, title: 'Not found', description: 'No such endpoint.' },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    description: 'The endpoint exists, but not for this method; the `Allow` header lists those it takes.',
  },
  'job-not-found': {
    status: 404,
    title: 'Job not found',
    description: 'No job with this id (it may never have existed, or has expired or been deleted).',
  },
  'column-out-of-range': {
    status: 422,
    title: 'Column out of range',
    description: 'The `column` query parameter names a right-hand side the job does not have (columns are 0 .. k - 1).',
  },
  'run-not-found': {
    status: 404,
    title: 'Run not found',
    description: 'The job has no run of this algorithm (not requested, not reached, or the job is an analysis).',
  },
  'job-not-finished': {
    status: 409,
    title: 'Job not finished',
    description: 'Only finished jobs can be deleted; cancel the job first.',
  },
  cancelled: { status: 409, title: 'Cancelled', description: 'The computation was cancelled.' },
  'study-not-found': {
    status: 404,
    title: 'Study not found',
    description: 'No study with this id: it never existed, has expired or been deleted, or belongs to another API key.',
  },
  'study-not-finished': {
    status: 409,
    title: 'Study not finished',
    description: 'The study is still queued or running: cancel it before deleting it; its figures exist once it has succeeded.',
  },
  'figure-not-found': {
    status: 404,
    title: 'Figure not found',
    description: "The study has no figure of this name (its `figures` list the names it has, e.g. 'figure-1').",
  },
  'job-input-missing': {
    status: 500,
    title: 'Job input missing',
    description: 'The stored input of the job expired or was removed before a worker could run it.',
  },
  'matrix-not-found': {
    status: 404,
    title: 'Matrix not found',
    description: 'No stored matrix with this id (it may never have been uploaded, or has expired or been deleted).',
  },
  'candidate-not-found': {
    status: 422,
    title: 'No such partition',
    description:
      "The job has no partition of this strategy: an advise job has its candidates' (`result.advice.candidates`) and `best`, " +
      'any job its own (`given`).',
  },
  'advice-not-ready': {
    status: 409,
    title: 'Advice not ready',
    description: 'The advise job has not succeeded: its candidate partitions exist once it has (its given partition exists at once).',
  },
  // Limits of one job and of an upload
  'time-limit': {
    status: 422,
    title: 'Time limit exceeded',
    description: 'The job ran longer than JOB_TIMEOUT_MS and was stopped; its worker went on with other jobs.',
  },
  'memory-limit': {
    status: 413,
    title: 'Memory limit exceeded',
    description:
      'The job needs more memory than JOB_MEMORY_LIMIT_MB (estimated before it is queued, or measured while it runs: its process ' +
      'was stopped; the worker went on with other jobs).',
  },
  'upload-timeout': {
    status: 408,
    title: 'Upload timed out',
    description:
      'The request body (a JSON body or a Matrix Market upload) did not arrive completely within UPLOAD_TIMEOUT_MS; nothing was stored.',
  },
  // API keys and limits
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    description: 'AUTH_MODE=keys: send a live API key as `Authorization: Bearer <key>` (it is missing, unknown or revoked).',
  },
  forbidden: { status: 403, title: 'Forbidden', description: 'This endpoint needs an admin API key.' },
  'key-not-found': { status: 404, title: 'API key not found', description: 'No API key with this id.' },
  'rate-limited': {
    status: 429,
    title: 'Too many requests',
    description: "More requests per second than the API key's limit; retry after the `Retry-After` header's seconds.",
  },
  'quota-exceeded': {
    status: 429,
    title: 'Quota exceeded',
    description:
      "The API key's jobs queued or running, or its stored bytes, are at its limit; nothing was accepted. Retry after " +
      'the `Retry-After` header (jobs finish, stored data expires or can be deleted).',
  },
  'quota-too-large': {
    status: 413,
    title: 'Larger than the quota',
    description: "The request alone exceeds the API key's limit (stored bytes, study samples): it can never be accepted.",
  },
  // Idempotent submits (Idempotency-Key)
  'idempotency-key-reused': {
    status: 422,
    title: 'Idempotency key reused',
    description:
      'The Idempotency-Key was already used, within IDEMPOTENCY_TTL_SECONDS, with a different request (another body or ' +
      'endpoint). Nothing was created.',
  },
  'idempotency-key-in-use': {
    status: 409,
    title: 'Idempotency key in use',
    description:
      'Another request with this Idempotency-Key is still being answered (or ended without creating anything while this one ' +
      'waited); retry shortly to get its answer. Nothing was created.',
  },
  // Infrastructure
  'store-unavailable': {
    status: 503,
    title: 'Service unavailable',
    description: 'Redis (the job store and queue) is unreachable; retry later.',
  },
  'internal-error': { status: 500, title: 'Internal error', description: 'An unexpected error; details are in the service logs.' },
} as const satisfies Record<SolverErrorCode | JobErrorCode, ProblemTypeEntry> & Record<string, ProblemTypeEntry>;

/** A problem type's stable code, e.g. 'singular-matrix': `makeProblem('not-foud', ...)` does not compile. */
export type ProblemCode = keyof typeof CATALOG;

export function isProblemCode(code: string): code is ProblemCode {
  return Object.hasOwn(CATALOG, code);
}

/** The catalogue by code, for codes that arrive as plain strings (GET /problems/{code}). */
export const PROBLEM_TYPES: ReadonlyMap<string, ProblemType> = new Map(
  Object.keys(CATALOG)
    .filter(isProblemCode)
    .map((code) => [code, { code, ...CATALOG[code] }]),
);

export function problemTypeUri(code: ProblemCode): string {
  return `/problems/${code}`;
}

/** A problem of a catalogued type. */
export function makeProblem(
  code: ProblemCode,
  detail: string,
  extensions: Omit<Partial<ProblemDetails>, 'type' | 'code' | 'detail'> = {},
): ProblemDetails {
  const { title, status } = CATALOG[code];
  return { type: problemTypeUri(code), title, status, detail, code, ...extensions };
}

/**
 * The problem for a typed error of the numerical core or the job layer; null for anything else
 * (the caller answers 500 without echoing the message).
 */
export function problemFromTypedError(error: unknown): ProblemDetails | null {
  if (error instanceof SolverError) {
    const problem = makeProblem(error.code, error.message);
    if (Object.keys(error.details).length > 0) problem.details = error.details;
    return problem;
  }
  if (error instanceof ColumnOutOfRangeError) {
    return makeProblem(error.code, error.message, { errors: [fieldProblem('query', '/column', error.message)] });
  }
  if (error instanceof JobError) return makeProblem(error.code, error.message);
  return null;
}

/** A field-level problem: `pointer` into the request's `part`, and what is wrong there. */
export function fieldProblem(part: FieldProblem['in'], pointer: string, detail: string): FieldProblem {
  return { in: part, pointer, detail, path: pointer, message: detail };
}
