/**
 * A job ready to compute: what JobStore.begin hands the processor, built from the job document
 * (type, options, algorithms, how the matrix was given) and the job's binary inputs. The matrix is
 * decoded here, or generated from its spec: the worker computes from the stored job alone.
 */
import type { AlgorithmId } from '../../solvers/algorithms/registry.js';
import { generateMatrix, generateSystem } from '../../solvers/input/generators.js';
import type { DenseMatrix } from '../../solvers/matrix.js';
import { partitionFromAssignment, type Partition } from '../../solvers/problem.js';
import type { CsrMatrix } from '../../solvers/sparse/csr.js';
import { JobInputMissingError, MatrixNotFoundError } from '../errors.js';
import { checkCsrJobSize, storageOfStoredMatrix } from '../storage.js';
import type { JobOptions, JobType } from '../types.js';
import { float64From, int32From } from './binary.js';
import type { StoredJobSpec } from './jobDocument.js';

/**
 * The matrix of a job, in the storage it is computed from (../storage.ts decides which): dense
 * (row-major) or CSR rows (a stored matrix, or a sparse coordinate input), never densified.
 */
export type MatrixSource = { storage: 'dense'; A: DenseMatrix } | { storage: 'csr'; A: CsrMatrix };

/** The worker's own size limits (MAX_N for dense matrices it decodes or generates, MAX_N_SPARSE for CSR ones). */
export interface WorkerLimits {
  maxN: number;
  maxNSparse: number;
}

export interface ReadyJob {
  id: string;
  type: JobType;
  n: number;
  m: number;
  /** Algorithms to run (solve jobs); empty for analyze jobs. */
  algorithms: AlgorithmId[];
  options: JobOptions;
  matrix: MatrixSource;
  /** Null: b = A * ones(n), so x* = ones(n) is known. Regression data without a given rhs: its labels. */
  rhs: Float64Array | null;
  /** The solution known with a generated rhs (regression labels without noise: x_true); absent or null: none. */
  knownSolution?: Float64Array | null;
  /** x(0) of the runs (options.initialGuess); null: 0. */
  initialGuess: Float64Array | null;
  partition: Partition;
  /** The matrix came from a generator or the matrix store: its digest is the worker's to record (../matrixDigest.ts). */
  digestPending: boolean;
}

/** The binary values stored next to the document (./keys.ts), as read from Redis. */
export interface StoredInputs {
  matrix: Buffer | null;
  rhs: Buffer | null;
  assignment: Buffer | null;
  /** x(0) when options.initialGuess is set (solve jobs read it; an analysis needs none). */
  initialGuess?: Buffer | null;
  /** The CSR matrix of a job on a stored matrix (null when it is gone); undefined for the others. */
  storedMatrix?: CsrMatrix | null;
  /** The job's own CSR matrix (a sparse coordinate input; null when it expired); undefined for the others. */
  csr?: CsrMatrix | null;
}

/**
 * Throws JobInputMissingError when an input the document announces has expired or was removed,
 * and the SolverError of a generator spec that cannot be generated (`limits.maxN` is checked again
 * here: a generated matrix exists only in the worker).
 */
export function readyJobFrom(spec: StoredJobSpec, inputs: StoredInputs, limits: WorkerLimits): ReadyJob {
  const { id, type, n, m, algorithms, options } = spec;
  if (!inputs.assignment) throw new JobInputMissingError(id, 'partition');
  const partition = partitionFromAssignment(int32From(inputs.assignment), m);
  let rhs: Float64Array | null = null;
  if (spec.hasRhs) {
    if (!inputs.rhs) throw new JobInputMissingError(id, 'right-hand side');
    rhs = float64From(inputs.rhs);
  }
  let initialGuess: Float64Array | null = null;
  if (options.initialGuess && type === 'solve') {
    if (!inputs.initialGuess) throw new JobInputMissingError(id, 'initial guess');
    initialGuess = float64From(inputs.initialGuess);
  }
  const digestPending = spec.input.format === 'generator' || spec.input.format === 'stored';
  if (spec.input.format === 'generator' && spec.input.spec.generator === 'regression') {
    // Regression data brings its labels: they are b unless the job gave its own.
    const generated = generateSystem(spec.input.spec, limits, partition);
    const matrix: MatrixSource = { storage: 'dense', A: generated.A };
    const knownSolution = rhs === null ? generated.xTrue : null;
    rhs ??= generated.b;
    return { id, type, n, m, algorithms, options, matrix, rhs, knownSolution, initialGuess, partition, digestPending };
  }
  const matrix = matrixSource(spec, inputs, partition, limits);
  return { id, type, n, m, algorithms, options, matrix, rhs, initialGuess, partition, digestPending };
}

/** The job's matrix from its stored inputs (a generator's generated again, as the worker does). */
export function matrixSource(spec: StoredJobSpec, inputs: StoredInputs, partition: Partition, limits: WorkerLimits): MatrixSource {
  const { input } = spec;
  // A block-diagonal spec without blockSize takes its blocks from the partition.
  if (input.format === 'generator') return { storage: 'dense', A: generateMatrix(input.spec, limits, partition) };
  if (input.format === 'stored') {
    // Deleted or expired after the job was created: the job fails naming it.
    if (!inputs.storedMatrix) throw new MatrixNotFoundError(input.matrixId, ` (named by job '${spec.id}')`);
    storageOfStoredMatrix(input.matrixId, inputs.storedMatrix.rows, limits);
    return { storage: 'csr', A: inputs.storedMatrix };
  }
  if (input.nnz !== undefined) {
    if (!inputs.csr) throw new JobInputMissingError(spec.id, 'matrix');
    checkCsrJobSize(spec.id, inputs.csr.rows, limits);
    return { storage: 'csr', A: inputs.csr };
  }
  const bytes = inputs.matrix;
  if (!bytes) throw new JobInputMissingError(spec.id, 'matrix');
  const data = float64From(bytes);
  // n is the row count; a tall matrix has fewer columns (data.length / n).
  return { storage: 'dense', A: { rows: spec.n, cols: data.length / spec.n, data } };
}
