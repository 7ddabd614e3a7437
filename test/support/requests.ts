/**
 * Request bodies and uploads the API tests share: a small valid job that refusal tests alter one
 * field of, a quick Gaussian analyze job, a tiny Matrix Market text, and POST /v1/matrices sent
 * through a transport or fastify's inject.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { StoredMatrix } from '../../src/jobs/types.js';
import type { Request } from './transports.js';

/** A 3 x 3 symmetric matrix as COO triplets (A ones = (5, 4, 2)). */
export const SYMMETRIC_COO = {
  format: 'coo',
  rows: 3,
  cols: 3,
  entries: [
    [0, 0, 4],
    [1, 1, 3],
    [2, 2, 2],
    [0, 1, 1],
    [1, 0, 1],
  ],
};

/** A valid analyze job on a 3 x 3 dense matrix in 3 machines; each refusal test changes one field of it. */
export const GOOD_JOB = {
  type: 'analyze',
  matrix: {
    format: 'dense',
    data: [
      [4, 1, 0],
      [1, 3, 1],
      [0, 1, 2],
    ],
  },
  partition: { machines: 3 },
};

/** An analyze job that takes milliseconds: a seeded Gaussian n = 12 in 3 machines. */
export const SMALL_ANALYZE = {
  type: 'analyze',
  matrix: { format: 'generator', generator: 'gaussian', n: 12, mean: 1, std: 1, seed: 3 },
  partition: { machines: 3 },
};

/** A 3 x 3 diagonal matrix as Matrix Market text. */
export const SMALL_MATRIX_MARKET = '%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 2\n2 2 3\n3 3 4\n';

const UPLOAD_URL = '/v1/matrices';

/** POST /v1/matrices of `body` as a transport request; `text/plain` unless `headers` gives another type. */
export const matrixUpload = (body: string | Buffer, headers: Record<string, string> = {}): Request => ({
  method: 'POST',
  url: UPLOAD_URL,
  headers: { 'content-type': 'text/plain', ...headers },
  body,
});

/** POST /v1/matrices through fastify's inject; `text/plain` unless `headers` gives another type. */
export function injectUpload(
  app: FastifyInstance,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url: UPLOAD_URL, headers: { 'content-type': 'text/plain', ...headers }, payload: body });
}

/** An upload that must be stored (201): its matrix document. */
export async function uploadedMatrix(
  app: FastifyInstance,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<StoredMatrix> {
  const response = await injectUpload(app, body, headers);
  expect(response.statusCode, response.body).toBe(201);
  return response.json<StoredMatrix>();
}
