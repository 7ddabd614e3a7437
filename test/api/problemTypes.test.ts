/**
 * The problem catalogue (src/jobs/problems.ts) and GET /problems/{code}: one entry per ProblemCode,
 * covering every SolverError and JobError code, each described at its type URI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_ERROR_CODES, JobNotFoundError } from '../../src/jobs/errors.js';
import { isProblemCode, makeProblem, PROBLEM_TYPES, problemFromTypedError } from '../../src/jobs/problems.js';
import { InvalidPartitionError, RowUnassignedError, SOLVER_ERROR_CODES } from '../../src/solvers/errors.js';
import { startTestService, type TestService } from '../support/service.js';

/** Never called: a code is checked at compile time (the catalogue's keys are the ProblemCode union). */
export function typo(): void {
  // @ts-expect-error 'not-foud' is no ProblemCode
  makeProblem('not-foud', 'typo');
}

let service: TestService;

beforeAll(async () => {
  service = await startTestService({}, { worker: false });
});

afterAll(async () => {
  await service?.close();
});

describe('the problem catalogue', () => {
  it('describes every SolverError and JobError code, with a 4xx or 5xx status', () => {
    for (const code of [...SOLVER_ERROR_CODES, ...JOB_ERROR_CODES]) {
      expect(isProblemCode(code), code).toBe(true);
      expect(PROBLEM_TYPES.get(code)?.status, code).toBeGreaterThanOrEqual(400);
    }
    expect(isProblemCode('not-foud')).toBe(false);
    expect(isProblemCode('toString')).toBe(false);
  });

  it('gives a typed error the problem of its own code', () => {
    // InvalidPartitionError's subclasses carry their own codes.
    expect(problemFromTypedError(new RowUnassignedError(3))).toMatchObject({ status: 422, code: 'row-unassigned', details: { row: 3 } });
    expect(problemFromTypedError(new InvalidPartitionError('bad'))).toMatchObject({ status: 422, code: 'invalid-partition' });
    expect(problemFromTypedError(new JobNotFoundError('x'))).toMatchObject({
      status: 404,
      code: 'job-not-found',
      type: '/problems/job-not-found',
    });
  });

  it('answers GET /problems/{code} for every code, 404 for an unknown one', async () => {
    for (const [code, type] of PROBLEM_TYPES) {
      const response = await service.app.inject({ url: `/problems/${code}` });
      expect(response.statusCode, code).toBe(200);
      expect(response.json()).toEqual({ type: `/problems/${code}`, ...type });
    }
    const unknown = await service.app.inject({ url: '/problems/not-foud' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'not-found', status: 404 });
  });
});
