/** Typed errors of the job layer; the HTTP layer maps them to problems in its one error handler. */

export abstract class JobError extends Error {
  abstract readonly code: string;
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
  constructor(readonly jobId: string, readonly algorithm: string, reason: string) {
    super(`Job '${jobId}' has no ${algorithm} run: ${reason}.`);
  }
}

export class JobNotFinishedError extends JobError {
  readonly code = 'job-not-finished';
  constructor(readonly jobId: string, readonly status: string) {
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
