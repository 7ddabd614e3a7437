/** Typed errors of the job layer; the HTTP layer maps them to problems in its one error handler. */

/** The code of every JobError below, once; src/jobs/problems.ts must catalogue each of them. */
export const JOB_ERROR_CODES = [
  'job-not-found',
  'run-not-found',
  'column-out-of-range',
  'job-not-finished',
  'store-unavailable',
  'invalid-cursor',
  'job-input-missing',
  'matrix-not-found',
  'candidate-not-found',
  'advice-not-ready',
  'study-not-found',
  'study-not-finished',
  'figure-not-found',
  'key-not-found',
  'rate-limited',
  'quota-exceeded',
  'quota-too-large',
  'idempotency-key-reused',
  'idempotency-key-in-use',
] as const;
export type JobErrorCode = (typeof JOB_ERROR_CODES)[number];

export abstract class JobError extends Error {
  abstract readonly code: JobErrorCode;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class JobNotFoundError extends JobError {
  readonly code = 'job-not-found';
  constructor(readonly jobId: string) {
    super(`No job with id '${jobId}' (it may never have existed, or has expired or been deleted).`);
  }
}

export class RunNotFoundError extends JobError {
  readonly code = 'run-not-found';
  constructor(
    readonly jobId: string,
    readonly algorithm: string,
    reason: string,
  ) {
    super(`Job '${jobId}' has no ${algorithm} run: ${reason}.`);
  }
}

/** A trace or solution asked for at ?column=j of a job with fewer right-hand sides. */
export class ColumnOutOfRangeError extends JobError {
  readonly code = 'column-out-of-range';
  constructor(
    readonly jobId: string,
    readonly column: number,
    readonly columns: number,
  ) {
    super(
      `column ${column} is out of range: job '${jobId}' has ${columns} right-hand side${columns === 1 ? '' : 's'} ` +
        `(column 0${columns > 1 ? ` to ${columns - 1}` : ''}).`,
    );
  }
}

export class JobNotFinishedError extends JobError {
  readonly code = 'job-not-finished';
  constructor(
    readonly jobId: string,
    readonly status: string,
  ) {
    super(`Job '${jobId}' is ${status}; only finished jobs can be deleted (cancel it first).`);
  }
}

/** Redis is unreachable or the queue cannot be used (the HTTP layer answers 503). */
export class StoreUnavailableError extends JobError {
  readonly code = 'store-unavailable';
  constructor(reason: string) {
    super(`The store (Redis) is unavailable: ${reason}`);
  }
}

/** A `cursor` that this service did not issue (the HTTP layer answers 400). */
export class InvalidCursorError extends JobError {
  readonly code = 'invalid-cursor';
  constructor(cursor: string, list = 'GET /v1/jobs') {
    super(
      `'${cursor.length > 40 ? `${cursor.slice(0, 40)}...` : cursor}' is not a cursor returned by ${list}; pass the nextCursor of the previous page.`,
    );
  }
}

/** The stored input of a job (matrix, rhs, assignment) expired or was removed before a worker ran it. */
export class JobInputMissingError extends JobError {
  readonly code = 'job-input-missing';
  constructor(
    readonly jobId: string,
    what: string,
  ) {
    super(`The stored ${what} of job '${jobId}' is missing (expired before a worker could run the job).`);
  }
}

/** No stored matrix (POST /v1/matrices) with this id: never uploaded, expired or deleted (the HTTP layer answers 404). */
export class MatrixNotFoundError extends JobError {
  readonly code = 'matrix-not-found';
  constructor(
    readonly matrixId: string,
    context = '',
  ) {
    super(`No stored matrix with id '${matrixId}'${context} (it may never have been uploaded, or has expired or been deleted).`);
  }
}

/** A partition the job does not have (GET /v1/jobs/{id}/figures/partition.svg?strategy=...); names those it has. */
export class CandidateNotFoundError extends JobError {
  readonly code = 'candidate-not-found';
  constructor(
    readonly jobId: string,
    readonly strategy: string,
    strategies: readonly string[],
  ) {
    super(`Job '${jobId}' has no partition '${strategy}'; it has ${strategies.map((name) => `'${name}'`).join(', ')}.`);
  }
}

/** An advise job's candidates asked for before it has succeeded. */
export class AdviceNotReadyError extends JobError {
  readonly code = 'advice-not-ready';
  constructor(
    readonly jobId: string,
    readonly status: string,
  ) {
    super(`Advise job '${jobId}' is ${status}; its candidate partitions exist once it has succeeded (its given partition exists now).`);
  }
}

/** No API key with this id (GET/DELETE /v1/admin/keys/{id}; the HTTP layer answers 404). */
export class ApiKeyNotFoundError extends JobError {
  readonly code = 'key-not-found';
  constructor(readonly keyId: string) {
    super(`No API key with id '${keyId}'.`);
  }
}

/** A limit that frees up with time: the HTTP layer answers 429 with a Retry-After of `retryAfterSeconds`. */
export abstract class RetryLaterError extends JobError {
  abstract readonly retryAfterSeconds: number;
}

/** More requests per second than the key's limit. */
export class RateLimitedError extends RetryLaterError {
  readonly code = 'rate-limited';
  constructor(
    limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`More than ${limit} requests per second with this API key; retry in ${retryAfterSeconds} s.`);
  }
}

/** The key's jobs queued or running, or its stored bytes, are at its limit: nothing was accepted. */
export class QuotaExceededError extends RetryLaterError {
  readonly code = 'quota-exceeded';
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(detail);
  }
}

/** A single request that can never fit the key's limit, however long it waits (the HTTP layer answers 413). */
export class QuotaTooLargeError extends JobError {
  readonly code = 'quota-too-large';
}

/** An Idempotency-Key already used with another request (another body or endpoint): the HTTP layer answers 422. */
export class IdempotencyKeyReusedError extends JobError {
  readonly code = 'idempotency-key-reused';
  constructor() {
    super(
      'This Idempotency-Key was already used with a different request (another body or endpoint); ' +
        'send a new key for a new request, or the same request again to get its answer.',
    );
  }
}

/** Another request with this Idempotency-Key is still being answered (the HTTP layer answers 409). */
export class IdempotencyKeyInUseError extends JobError {
  readonly code = 'idempotency-key-in-use';
  constructor(reason = 'another request with this Idempotency-Key is still in progress') {
    super(`${reason[0].toUpperCase()}${reason.slice(1)}; retry the request shortly to get its answer.`);
  }
}
