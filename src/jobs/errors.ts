/** Typed errors of the job layer; the HTTP layer maps them to problems in its one error handler. */

/** The code of every JobError below, once; src/jobs/problems.ts must catalogue each of them. */
export const JOB_ERROR_CODES = [
  'job-not-found',
  'run-not-found',
  'job-not-finished',
  'store-unavailable',
  'invalid-cursor',
  'job-input-missing',
  'matrix-not-found',
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
    super(`The job store is unavailable: ${reason}`);
  }
}

/** A `cursor` that this service did not issue (the HTTP layer answers 400). */
export class InvalidCursorError extends JobError {
  readonly code = 'invalid-cursor';
  constructor(cursor: string) {
    super(
      `'${cursor.length > 40 ? `${cursor.slice(0, 40)}...` : cursor}' is not a cursor returned by GET /v1/jobs; pass the nextCursor of the previous page.`,
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
