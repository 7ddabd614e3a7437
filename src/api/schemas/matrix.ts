/**
 * Stored matrices (POST /v1/matrices) as the API returns them. StoredMatrix of src/jobs/types.ts is
 * the definition; the schema is checked against it at compile time.
 */
import { z } from 'zod';
import type { StoredMatrix } from '../../jobs/types.js';
import { assertSameShape } from './sameShape.js';

export const StoredMatrixSchema = z
  .object({
    id: z.string().describe('Name it in a job as { "format": "stored", "id": "..." }.'),
    n: z.number().int().describe('Rows and columns.'),
    nnz: z.number().int().describe('Stored entries (symmetric and skew-symmetric storage mirrored; explicit zeros kept).'),
    symmetry: z.enum(['general', 'symmetric', 'skew-symmetric']).describe('As the Matrix Market header declared it.'),
    field: z.enum(['real', 'integer', 'pattern']).describe('As the header declared it (double is read as real).'),
    createdAt: z.string(),
    bytes: z.number().int().describe('Bytes of its compressed sparse row (CSR) storage.'),
  })
  .meta({ id: 'StoredMatrix', description: 'A Matrix Market matrix uploaded once, stored as CSR, for any number of jobs.' });

assertSameShape<z.output<typeof StoredMatrixSchema>, StoredMatrix>(true);

export const MatrixIdParamsSchema = z.object({ id: z.string().min(1).max(64) });

/** The media types POST /v1/matrices takes. */
export const MATRIX_UPLOAD_MEDIA_TYPES = ['text/plain', 'application/x-matrix-market'] as const;
