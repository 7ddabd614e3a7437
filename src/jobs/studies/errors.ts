/** Typed errors of the studies; the HTTP layer maps them to problems (src/jobs/problems.ts) in its one handler. */
import { JobError } from '../errors.js';

export class StudyNotFoundError extends JobError {
  readonly code = 'study-not-found';
  constructor(readonly studyId: string) {
    super(`No study with id '${studyId}' (it may never have existed, or has expired or been deleted).`);
  }
}

export class StudyNotFinishedError extends JobError {
  readonly code = 'study-not-finished';
  constructor(
    readonly studyId: string,
    readonly status: string,
    action: string,
  ) {
    super(`Study '${studyId}' is ${status}; ${action}.`);
  }
}

/** A figure name that the study does not have (GET /v1/studies/{id}/figures/{name}); names those it has. */
export class StudyFigureNotFoundError extends JobError {
  readonly code = 'figure-not-found';
  constructor(
    readonly studyId: string,
    readonly figure: string,
    figures: readonly string[],
  ) {
    super(
      `Study '${studyId}' has no figure '${figure}'; ` +
        (figures.length > 0 ? `its figures are ${figures.map((figure) => `'${figure}'`).join(', ')}.` : 'it has no figures.'),
    );
  }
}
