/**
 * From a schema-valid request body to a JobSpec: the semantic checks of the numerical core
 * (square, finite entries, partition against n, size limits) raise typed SolverErrors that the
 * error handler answers with 422 or 413. Generator specs get every check generateMatrix makes
 * (singular specs included); the worker generates the matrix.
 */
import { DEFAULT_DEPLOYMENT } from '../solvers/analysis/timeToSolution.js';
import type { Config } from '../config.js';
import { storageOfCoordinateMatrix, storageOfStoredMatrix } from '../jobs/storage.js';
import { JobNotFoundError, RunNotFoundError } from '../jobs/errors.js';
import type {
  InitialGuessEcho,
  Job,
  JobOptions,
  JobPartition,
  JobSpec,
  MatrixService,
  MatrixStorage,
  PartitionEcho,
  PartitionKind,
} from '../jobs/types.js';
import { ALGORITHM_IDS, getAlgorithm, isAlgorithmId, type AlgorithmId } from '../solvers/algorithms/registry.js';
import type { Parameters } from '../solvers/algorithms/types.js';
import {
  DimensionMismatchError,
  InvalidParameterError,
  InvalidPartitionError,
  ProblemTooLargeError,
  SolverError,
} from '../solvers/errors.js';
import { buildMatrix } from '../solvers/input/buildMatrix.js';
import { buildCsrMatrix, isCoordinateInput, type CoordinateInput } from '../solvers/input/coordinateInput.js';
import type { MatrixInput } from '../solvers/input/types.js';
import { entriesToVector } from '../solvers/input/entries.js';
import { checkRhsMagnitude } from '../solvers/input/magnitudes.js';
import { validateGeneratorSpec } from '../solvers/input/generators.js';
import { buildPartition, checkPartition } from '../solvers/input/partition.js';
import { DEFAULT_IMBALANCE } from '../solvers/partitioning/multilevel.js';
import { DEFAULT_REFINEMENT_TRIES } from '../solvers/partitioning/refinement.js';
import { partitionFromAssignment, type Partition } from '../solvers/problem.js';
import type { InputLimits } from '../solvers/input/types.js';
import { csrToDense, nnzOf } from '../solvers/sparse/csr.js';
import { atField, atFieldAsync, matrixPointer, optionsPointer, partitionPointer, vectorPointer } from './requestFields.js';
import type { CreateJobRequest } from './schemas/jobRequest.js';

/**
 * A stored matrix ({ format: 'stored', id }) is looked up (MatrixNotFoundError: 404) and its TTL
 * renewed; its size decides the storage the job runs on (../jobs/storage.ts). A coordinate input (COO,
 * Matrix Market coordinate) is parsed to CSR within MAX_N_SPARSE and MAX_NNZ, duplicates refused, and
 * stays CSR when it is sparse (../jobs/storage.ts's rule); dense rows and Matrix Market arrays are
 * built dense within MAX_N.
 */
/** A job's partition, as the caller may see it (JobNotFoundError otherwise). */
export type PartitionSource = (jobId: string) => Promise<JobPartition>;
/** A job's document, as the caller may see it (JobNotFoundError otherwise): an advise job's advice. */
export type JobSource = (jobId: string) => Promise<Job>;

/** The solution of a job's run, as the caller may see it (JobNotFoundError, RunNotFoundError otherwise). */
export type SolutionSource = (jobId: string, algorithm: AlgorithmId) => Promise<Float64Array>;

export async function toJobSpec(
  body: CreateJobRequest,
  config: Config,
  matrices: MatrixService,
  partitions: PartitionSource,
  solutions: SolutionSource,
  jobs: JobSource,
): Promise<JobSpec> {
  const limits: InputLimits = { maxN: config.MAX_N, maxMachines: config.MAX_MACHINES };

  // n: the rows (what the partition and rhs cover); cols: the unknowns (fewer on a tall matrix).
  let n: number;
  let cols: number;
  let matrix: JobSpec['matrix'];
  let storage: MatrixStorage = 'dense';
  if (body.matrix.format === 'stored') {
    const stored = await matrices.use(body.matrix.id);
    n = stored.n;
    cols = stored.cols ?? n;
    storage = storageOfStoredMatrix(stored.id, n, { maxNSparse: config.MAX_N_SPARSE });
    matrix = { kind: 'stored', matrixId: stored.id, nnz: stored.nnz, ...(cols === n ? {} : { cols }) };
  } else if (body.matrix.format === 'generator') {
    const { format: _format, ...spec } = body.matrix;
    atField(matrixPointer('generator'), () => validateGeneratorSpec(spec, limits));
    // Regression data is tall: its rows are the samples, its n the features.
    n = spec.generator === 'regression' ? spec.rows : spec.n;
    cols = spec.n;
    matrix = { kind: 'generator', spec };
  } else if (coordinateInput(body.matrix)) {
    const input = body.matrix;
    const A = atField(matrixPointer(input.format), () =>
      withLimitNames(() => buildCsrMatrix(input, { maxN: config.MAX_N_SPARSE, maxNnz: config.MAX_NNZ })),
    );
    n = A.rows;
    cols = A.cols;
    storage = storageOfCoordinateMatrix(n, nnzOf(A), { maxN: config.MAX_N });
    matrix = storage === 'csr' ? { kind: 'csr', A, format: input.format } : { kind: 'dense', A: csrToDense(A), format: input.format };
  } else {
    const input = body.matrix;
    const A = atField(matrixPointer(input.format), () => buildMatrix(input, limits));
    n = A.rows;
    cols = A.cols;
    matrix = { kind: 'dense', A, format: body.matrix.format };
  }

  const { partition, echo } = await jobPartition(body.partition, n, limits, partitions, jobs);
  // Regression data is drawn machine by machine: its scales (one per machine) are checked against the partition.
  if (matrix.kind === 'generator' && matrix.spec.generator === 'regression') {
    const spec = matrix.spec;
    atField(matrixPointer('generator'), () => validateGeneratorSpec(spec, limits, partition));
  }

  const { rhs, rhsColumns } = rightHandSides(body, n, cols, config);

  const algorithms: AlgorithmId[] = body.type === 'solve' ? [...new Set(body.algorithms ?? ALGORITHM_IDS)] : [];
  const options = atField(optionsPointer, () => jobOptions(body.options, config, body.type));
  // Square regression data with noisy labels: x_true does not solve it and there is no least-squares target to measure against.
  const noisySquare = matrix.kind === 'generator' && matrix.spec.generator === 'regression' && (matrix.spec.sigma ?? 0) > 0 && cols === n;
  if (options.errorTolerance !== undefined && (rhs !== null || noisySquare)) {
    atField('/options/errorTolerance', () => {
      throw new InvalidParameterError(
        noisySquare
          ? 'options.errorTolerance needs the true solution: square regression data with sigma > 0 has labels no x_true solves.'
          : 'options.errorTolerance needs the true solution, which is known only when b = A * ones (rhs omitted).',
        { parameter: 'options.errorTolerance' },
      );
    });
  }
  const initialGuess = await initialGuessOf(body.options?.initialGuess, cols, solutions);
  if (initialGuess !== null) options.initialGuess = initialGuess.echo;
  return {
    type: body.type,
    n,
    matrix,
    rhs,
    rhsColumns,
    m: partition.m,
    assignment: partition.assignment,
    partition: echo,
    algorithms,
    options,
    initialGuess: initialGuess?.vector ?? null,
    storage,
    notify: body.notify ?? null,
    labels: body.labels ?? {},
  };
}

/** One vector's entries (length n), its errors at `field`. */
function rightHandSide(given: readonly (number | string)[], n: number, field: string): Float64Array {
  return atField(vectorPointer(field), () => {
    if (given.length !== n)
      throw new DimensionMismatchError(`${field} has ${given.length} entries but the matrix has n = ${n} rows.`, {
        length: given.length,
        n,
      });
    const vector = entriesToVector(given, field);
    checkRhsMagnitude(vector, field);
    return vector;
  });
}

/**
 * b of the request: one vector, or a list of k (solve jobs on square systems, k <= MAX_RHS) stored column
 * after column (n k values); a list of one is that vector alone.
 */
function rightHandSides(body: CreateJobRequest, n: number, cols: number, config: Config): { rhs: Float64Array | null; rhsColumns: number } {
  const given = body.rhs;
  if (given === undefined || given === null) return { rhs: null, rhsColumns: 1 };
  if (!given.some((entry) => Array.isArray(entry))) return { rhs: rightHandSide(given as (number | string)[], n, 'rhs'), rhsColumns: 1 };
  const columns = given as (number | string)[][];
  atField('/rhs', () => {
    if (columns.length > config.MAX_RHS) {
      throw new InvalidParameterError(`rhs lists ${columns.length} right-hand sides; at most MAX_RHS = ${config.MAX_RHS} are allowed.`, {
        parameter: 'rhs',
        columns: columns.length,
        maxRhs: config.MAX_RHS,
      });
    }
    if (columns.length > 1 && body.type !== 'solve') {
      throw new InvalidParameterError(`Several right-hand sides are for solve jobs; a ${body.type} job takes one rhs (or none).`, {
        parameter: 'rhs',
      });
    }
    // A tall system's runs aim at x_LS or x_W, which depend on b: computed for one b per job.
    if (columns.length > 1 && cols < n) {
      throw new InvalidParameterError(
        `Several right-hand sides are not supported on a tall (${n} x ${cols}) system; give one rhs per job.`,
        { parameter: 'rhs', rows: n, columns: cols },
      );
    }
  });
  const rhs = new Float64Array(n * columns.length);
  columns.forEach((column, j) => rhs.set(rightHandSide(column, n, `rhs/${j}`), j * n));
  return { rhs, rhsColumns: columns.length };
}

/**
 * The partition of the request over n rows, and how the job's document echoes it. `fromJob` reads
 * that job's assignment (404 for a job the caller cannot see) and must be for n rows (422 at
 * /partition/fromJob); `fromAdvice` the best candidate of a succeeded advise job (404 as fromJob; a job
 * that is not an advise job, has not succeeded, or has another n: 422 at /partition/fromAdvice); the
 * other forms are the core's (buildPartition).
 */
async function jobPartition(
  given: CreateJobRequest['partition'],
  n: number,
  limits: InputLimits,
  partitions: PartitionSource,
  jobs: JobSource,
): Promise<{ partition: Partition; echo: PartitionEcho }> {
  const pointer = partitionPointer(given);
  if ('fromAdvice' in given) {
    const source = await atFieldAsync(pointer, () => jobs(given.fromAdvice));
    const partition = atField(pointer, () => {
      const advice = source.result?.advice;
      if (source.type !== 'advise' || source.status !== 'succeeded' || advice === undefined) {
        throw new InvalidPartitionError(
          source.type !== 'advise'
            ? `Job '${source.id}' is an ${source.type} job; fromAdvice needs an advise job.`
            : `Advise job '${source.id}' is ${source.status}; fromAdvice needs one that succeeded.`,
          { fromAdvice: source.id, type: source.type, status: source.status },
        );
      }
      if (source.n !== n) {
        throw new DimensionMismatchError(
          `Advise job '${source.id}' partitions n = ${source.n} rows but this matrix has n = ${n}; fromAdvice needs a job on a matrix of the same size.`,
          { n, fromAdviceN: source.n },
        );
      }
      const best = advice.candidates.find((candidate) => candidate.strategy === advice.best)!;
      return checkPartition(partitionFromAssignment(Int32Array.from(best.assignment), source.m), n, limits);
    });
    return { partition, echo: { kind: 'fromAdvice', m: partition.m, sizes: Array.from(partition.sizes), fromAdvice: source.id } };
  }
  if ('fromJob' in given) {
    const source = await atFieldAsync(pointer, () => partitions(given.fromJob));
    const partition = atField(pointer, () => {
      if (source.n !== n) {
        throw new DimensionMismatchError(
          `Job '${source.id}' partitions n = ${source.n} rows but this matrix has n = ${n}; fromJob needs a job on a matrix of the same size.`,
          { n, fromJobN: source.n },
        );
      }
      return checkPartition(partitionFromAssignment(source.assignment, source.m), n, limits);
    });
    return { partition, echo: { kind: 'fromJob', m: partition.m, sizes: Array.from(partition.sizes), fromJob: source.id } };
  }
  const partition = atField(pointer, () => buildPartition(given, n, limits));
  const kind: PartitionKind = 'family' in given ? 'random' : (Object.keys(given)[0] as PartitionKind);
  const echo: PartitionEcho = { kind, m: partition.m, sizes: Array.from(partition.sizes) };
  if ('family' in given) echo.seed = given.seed;
  return { partition, echo };
}

const INITIAL_GUESS = '/options/initialGuess';

/**
 * options.initialGuess: n finite numbers, or the solution of a finished run of a job the caller can
 * see, on a matrix of the same n. Any refusal is a 422 at /options/initialGuess (an entry: /options/initialGuess/k).
 */
async function initialGuessOf(
  given: NonNullable<CreateJobRequest['options']>['initialGuess'],
  n: number,
  solutions: SolutionSource,
): Promise<{ vector: Float64Array; echo: InitialGuessEcho } | null> {
  if (given === undefined) return null;
  const sameLength = (length: number, what: string): void => {
    if (length !== n) {
      // One entry per unknown: the matrix's columns (a tall system has more rows than that).
      throw new DimensionMismatchError(`${what} has ${length} entries but x has n = ${n} (the matrix's columns).`, { length, n });
    }
  };
  if (Array.isArray(given)) {
    const vector = atField(
      (error) => {
        const where =
          error instanceof SolverError && typeof error.details.where === 'string' ? /\[(\d+)\]$/.exec(error.details.where) : null;
        return where ? `${INITIAL_GUESS}/${where[1]}` : INITIAL_GUESS;
      },
      () => {
        sameLength(given.length, 'options.initialGuess');
        return entriesToVector(given, 'initialGuess');
      },
    );
    return { vector, echo: { kind: 'vector' } };
  }
  const { job, algorithm } = given;
  const vector = await atFieldAsync(INITIAL_GUESS, async () => {
    let solution: Float64Array;
    try {
      solution = await solutions(job, algorithm);
    } catch (error) {
      // The guess names a run that cannot be used: the request is what is wrong (422), not a missing resource.
      if (!(error instanceof JobNotFoundError || error instanceof RunNotFoundError)) throw error;
      throw new InvalidParameterError(`options.initialGuess: ${error.message}`, { parameter: 'options.initialGuess', job, algorithm });
    }
    sameLength(solution.length, `The solution of job '${job}' (${algorithm})`);
    return solution;
  });
  return { vector, echo: { kind: 'job', job, algorithm } };
}

/** isCoordinateInput, whose reading of a Matrix Market banner refuses a complex or hermitian one at /matrix/data. */
function coordinateInput(input: MatrixInput): input is CoordinateInput {
  return atField(matrixPointer(input.format), () => isCoordinateInput(input));
}

/** The sparse readers' 413 names the limit's value; this adds the setting that holds it. */
function withLimitNames<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof ProblemTooLargeError)) throw error;
    const setting = 'maxNnz' in error.details ? 'MAX_NNZ' : 'MAX_N_SPARSE';
    throw new ProblemTooLargeError(`${error.message.replace(/\.$/, '')} (${setting}).`, error.details);
  }
}

function jobOptions(options: CreateJobRequest['options'], config: Config, type: CreateJobRequest['type']): JobOptions {
  const tolerance = options?.tolerance ?? config.DEFAULT_TOLERANCE;
  const maxIterations = options?.maxIterations ?? config.DEFAULT_MAX_ITERATIONS;
  if (maxIterations > config.MAX_ITERATIONS_LIMIT) {
    throw new InvalidParameterError(
      `options.maxIterations is ${maxIterations}; at most ${config.MAX_ITERATIONS_LIMIT} (MAX_ITERATIONS_LIMIT) is allowed.`,
      {
        parameter: 'options.maxIterations',
        limit: config.MAX_ITERATIONS_LIMIT,
      },
    );
  }
  const parameters: Partial<Record<AlgorithmId, Parameters>> = {};
  for (const [id, given] of Object.entries(options?.parameters ?? {})) {
    // The schema admits algorithm ids only as keys; the guard narrows the key's type.
    if (!given || !isAlgorithmId(id)) continue;
    try {
      getAlgorithm(id).validateParameters(given);
    } catch (error) {
      // Name the request field: the core's message knows the parameter, not where it came from.
      if (!(error instanceof InvalidParameterError)) throw error;
      const path = `options.parameters.${id}${typeof error.details.parameter === 'string' ? `.${error.details.parameter}` : ''}`;
      throw new InvalidParameterError(`${path}: ${error.message}`, { ...error.details, parameter: path });
    }
    parameters[id] = { ...given };
  }
  const result: JobOptions = { tolerance, maxIterations, parameters };
  // Given ones only: an absent rule is absent from the job's document too.
  if (options?.absoluteTolerance !== undefined) result.absoluteTolerance = options.absoluteTolerance;
  if (options?.errorTolerance !== undefined) result.errorTolerance = options.errorTolerance;
  if (options?.maxWallTimeMs !== undefined) result.maxWallTimeMs = options.maxWallTimeMs;
  if (options?.stopOnStagnation !== undefined) result.stopOnStagnation = options.stopOnStagnation;
  result.divergenceTolerance = options?.divergenceTolerance ?? config.DEFAULT_DIVERGENCE_TOLERANCE;
  if (options?.deployment !== undefined) result.deployment = { ...DEFAULT_DEPLOYMENT, ...options.deployment };
  // Only advise jobs build candidates: the others do not echo a balance they do not use.
  if (type === 'advise') {
    result.imbalance = options?.imbalance ?? DEFAULT_IMBALANCE;
    result.refinementTries = options?.refinementTries ?? DEFAULT_REFINEMENT_TRIES;
  }
  return result;
}
