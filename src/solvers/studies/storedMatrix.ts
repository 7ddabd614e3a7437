/**
 * A study over one given matrix (a matrix uploaded with POST /v1/matrices, named as jobs name it:
 * `{ "format": "stored", "id": "..." }`) instead of a generator.
 *
 * The matrix is fixed, so what a sample varies is its partition: the grid ranges over m only (n is
 * the matrix's; the generators' settings mean, std, sigma, eps, blockSize, p do not exist for it:
 * 422 naming the field). A 'random' partition family draws each sample's assignment from the
 * sample's seed (./sampler.ts samplePartition), so the samples of a point differ; 'contiguous' and
 * 'round-robin' are deterministic: every sample would be the same analysis of the same system, so
 * such a study takes `samples: 1` (one analysis per m) and anything more is a 422 naming `samples`.
 * The metrics are fields of the analysis, which does not involve a right-hand side, so none is drawn.
 *
 * The study computes on the matrix's CSR, as an analyze job on the stored matrix does
 * (src/jobs/storage.ts: a stored matrix runs on CSR), with the same analysis code: its values equal
 * that job's for the same partition.
 */
import { InvalidParameterError } from '../errors.js';
import type { MatrixInput } from '../input/types.js';
import type { GridParameter, PartitionFamily } from './vocabulary.js';

/** How a study request names the matrix: the jobs' shape. */
export type StoredMatrixReference = Extract<MatrixInput, { format: 'stored' }>;

/** What the plan needs to know of the matrix, read once when the study is created and kept with it. */
export interface StudyMatrix {
  id: string;
  n: number;
  /** Stored entries (CSR). */
  nnz: number;
}

/** The only setting a study over a given matrix varies. */
export const STORED_MATRIX_PARAMETERS: readonly GridParameter[] = ['m'];

/** Partition families whose every sample is the same partition. */
export const DETERMINISTIC_PARTITION_FAMILIES: readonly PartitionFamily[] = ['contiguous', 'round-robin'];

/** The parts of a general request this module checks (the request type lives in ./presets.ts). */
export interface StoredMatrixRequestFields {
  sampler?: string;
  generator?: string;
  settings?: Partial<Record<GridParameter, number>>;
  grid: Partial<Record<GridParameter, number[]>>;
  partition?: { family?: PartitionFamily };
  samples: number;
}

/** Throws InvalidParameterError (422) naming the first field a study over a given matrix cannot have. */
export function checkStoredMatrixRequest(request: StoredMatrixRequestFields, matrix: StudyMatrix): void {
  const fixedOnly = (name: GridParameter): boolean => !STORED_MATRIX_PARAMETERS.includes(name);
  if (request.sampler !== undefined && request.sampler !== 'analysis') {
    throw new InvalidParameterError(
      `The ${request.sampler} sampler draws its own blocks; a study over matrix '${matrix.id}' analyzes it.`,
      {
        parameter: 'sampler',
      },
    );
  }
  if (request.generator !== undefined) {
    throw new InvalidParameterError(`A study names either a generator or a matrix, not both (matrix '${matrix.id}').`, {
      parameter: 'generator',
    });
  }
  for (const name of Object.keys(request.grid) as GridParameter[]) {
    if (fixedOnly(name)) {
      throw new InvalidParameterError(
        `grid.${name} cannot vary in a study over matrix '${matrix.id}': the matrix is given (n = ${matrix.n}); ` +
          `only ${STORED_MATRIX_PARAMETERS.join(', ')} and the partition vary.`,
        { parameter: `grid.${name}` },
      );
    }
  }
  for (const name of Object.keys(request.settings ?? {}) as GridParameter[]) {
    if (fixedOnly(name)) {
      throw new InvalidParameterError(
        `settings.${name} does not apply to a study over matrix '${matrix.id}' (n = ${matrix.n} is the matrix's; ` +
          `only ${STORED_MATRIX_PARAMETERS.join(', ')} can be set).`,
        { parameter: `settings.${name}` },
      );
    }
  }
  const family = request.partition?.family ?? 'contiguous';
  if (DETERMINISTIC_PARTITION_FAMILIES.includes(family) && request.samples !== 1) {
    throw new InvalidParameterError(
      `samples = ${request.samples}: with the ${family} partition every sample of matrix '${matrix.id}' is the same analysis; ` +
        "give samples: 1 (one analysis per grid point), or partition.family 'random' for seeded random partitions.",
      { parameter: 'samples', family },
    );
  }
}

/**
 * Cost of one sample of one grid point, in the units of ./definition.ts's chunk sizing (one n = 120
 * dense analysis, ~1.25 ms): a sparse analysis costs Lanczos runs and factorizations over the rows
 * and entries, measured at ~120 units for bfwa62 (n = 62, 450 entries) and ~500 for 1138_bus
 * (n = 1138, 4054 entries); (n + nnz) / 10 is of that order, rounded up to a few units for tiny matrices.
 */
export function storedMatrixSampleCost(matrix: StudyMatrix): number {
  return Math.max(5, (matrix.n + matrix.nnz) / 10);
}
