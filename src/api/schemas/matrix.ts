/**
 * Stored matrices (POST /v1/matrices) as the API returns them. StoredMatrix of src/jobs/types.ts is
 * the definition; the schema is checked against it at compile time.
 */
import { z } from 'zod';
import { queryInteger } from './queryInteger.js';
import type { MatrixListQuery, MatrixPage, StoredMatrix } from '../../jobs/types.js';
import { assertSameShape } from './sameShape.js';

const SymmetrySchema = z.enum(['general', 'symmetric', 'skew-symmetric']);
const FieldSchema = z.enum(['real', 'integer', 'pattern']);

export const StoredMatrixSchema = z
  .object({
    id: z.string().describe('Name it in a job as { "format": "stored", "id": "..." }.'),
    n: z.number().int().describe('Rows (and columns, unless cols is given).'),
    cols: z.number().int().optional().describe('Columns, present when fewer than the rows (a tall matrix: a least-squares system).'),
    nnz: z.number().int().describe('Stored entries (symmetric and skew-symmetric storage mirrored; explicit zeros kept).'),
    symmetry: SymmetrySchema.describe('As the Matrix Market header declared it.'),
    field: FieldSchema.describe('As the header declared it (double is read as real).'),
    createdAt: z.string(),
    bytes: z.number().int().describe('Bytes of its compressed sparse row (CSR) storage.'),
  })
  .meta({ id: 'StoredMatrix', description: 'A Matrix Market matrix uploaded once, stored as CSR, for any number of jobs.' });

assertSameShape<z.output<typeof StoredMatrixSchema>, StoredMatrix>(true);

export const MatrixPageSchema = z
  .object({
    items: z.array(StoredMatrixSchema),
    nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
  })
  .meta({ id: 'MatrixPage' });

assertSameShape<z.output<typeof MatrixPageSchema>, MatrixPage>(true);

export const ListMatricesQuerySchema = z
  .object({
    limit: queryInteger(z.number().int().min(1).max(200).default(20)),
    cursor: z.string().min(1).max(200).optional(),
    symmetry: SymmetrySchema.optional(),
    field: FieldSchema.optional(),
    minN: queryInteger(z.number().int().min(1)).optional().describe('Only matrices with at least this many rows.'),
    maxN: queryInteger(z.number().int().min(1)).optional().describe('Only matrices with at most this many rows.'),
  })
  .refine((q) => q.minN === undefined || q.maxN === undefined || q.minN <= q.maxN, {
    message: 'minN must not exceed maxN',
    path: ['minN'],
  });

assertSameShape<z.output<typeof ListMatricesQuerySchema>, MatrixListQuery>(true);

export const MatrixIdParamsSchema = z.object({ id: z.string().min(1).max(64) });

/** The media types POST /v1/matrices takes. */
export const MATRIX_UPLOAD_MEDIA_TYPES = ['text/plain', 'application/x-matrix-market'] as const;
