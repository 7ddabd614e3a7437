/**
 * From a schema-valid request body to a JobSpec: the semantic checks of the numerical core
 * (square, finite entries, partition against n, size limits) raise typed SolverErrors that the
 * error handler answers with 422 or 413. Generated matrices are only checked here; the worker
 * generates them.
 */
import type { Config } from '../config.js';
import type { JobOptions, JobSpec } from '../jobs/types.js';
import { ALGORITHM_IDS, getAlgorithm, type AlgorithmId } from '../solvers/algorithms/registry.js';
import type { Parameters } from '../solvers/algorithms/types.js';
import { DimensionMismatchError, InvalidParameterError } from '../solvers/errors.js';
import { buildMatrix } from '../solvers/input/buildMatrix.js';
import { checkDenseSize, entriesToVector } from '../solvers/input/entries.js';
import { buildPartition } from '../solvers/input/partition.js';
import type { GeneratorSpec, InputLimits, MatrixInput } from '../solvers/input/types.js';
import type { CreateJobRequest } from './schemas/jobRequest.js';

export function toJobSpec(body: CreateJobRequest, config: Config): JobSpec {
  const limits: InputLimits = { maxN: config.MAX_N, maxMachines: config.MAX_MACHINES };

  let n: number;
  let matrix: JobSpec['matrix'];
  if (body.matrix.format === 'generator') {
    const { format: _format, ...spec } = body.matrix;
    checkGeneratorSpec(spec, limits);
    n = spec.n;
    matrix = { kind: 'generator', spec };
  } else {
    const A = buildMatrix(body.matrix as MatrixInput, limits);
    n = A.rows;
    matrix = { kind: 'dense', A, format: body.matrix.format };
  }

  const partition = buildPartition(body.partition, n, limits);

  let rhs: Float64Array | null = null;
  if (body.rhs !== undefined && body.rhs !== null) {
    if (body.rhs.length !== n) throw new DimensionMismatchError(`rhs has ${body.rhs.length} entries but the matrix has n = ${n} rows.`, { length: body.rhs.length, n });
    rhs = entriesToVector(body.rhs, 'rhs');
  }

  const algorithms: AlgorithmId[] = body.type === 'analyze' ? [] : [...new Set(body.algorithms ?? ALGORITHM_IDS)];
  return { type: body.type, n, matrix, rhs, m: partition.m, assignment: partition.assignment, algorithms, options: jobOptions(body.options, config) };
}

function jobOptions(options: CreateJobRequest['options'], config: Config): JobOptions {
  const tolerance = options?.tolerance ?? config.DEFAULT_TOLERANCE;
  const maxIterations = options?.maxIterations ?? config.DEFAULT_MAX_ITERATIONS;
  if (maxIterations > config.MAX_ITERATIONS_LIMIT) {
    throw new InvalidParameterError(`options.maxIterations is ${maxIterations}; at most ${config.MAX_ITERATIONS_LIMIT} (MAX_ITERATIONS_LIMIT) is allowed.`, {
      parameter: 'options.maxIterations',
      limit: config.MAX_ITERATIONS_LIMIT,
    });
  }
  const parameters: Partial<Record<AlgorithmId, Parameters>> = {};
  for (const [id, given] of Object.entries(options?.parameters ?? {}) as [AlgorithmId, Parameters | undefined][]) {
    if (!given) continue;
    const algorithm = getAlgorithm(id);
    const known = algorithm.parameterNames;
    for (const name of Object.keys(given)) {
      if (!known.includes(name)) {
        throw new InvalidParameterError(
          `options.parameters.${id}.${name} is not a parameter of ${id}; ${known.length === 0 ? `${id} takes no parameters` : `${id} takes ${known.join(', ')}`}.`,
          { parameter: `options.parameters.${id}.${name}`, algorithm: id },
        );
      }
    }
    algorithm.validateParameters(given);
    parameters[id] = { ...given };
  }
  return { tolerance, maxIterations, parameters };
}

/** Cheap checks of a generator spec (the worker's generateMatrix repeats them all). */
function checkGeneratorSpec(spec: GeneratorSpec, limits: InputLimits): void {
  checkDenseSize(spec.n, limits, 'generated matrix');
  if ('blockSize' in spec && spec.blockSize > spec.n) {
    throw new InvalidParameterError(`blockSize must be an integer between 1 and n = ${spec.n}; got ${spec.blockSize}.`, { parameter: 'blockSize' });
  }
  if ('seed' in spec && spec.seed !== undefined && !Number.isSafeInteger(spec.seed)) {
    throw new InvalidParameterError(`seed must be an integer (at most 2^53 - 1 in magnitude); got ${spec.seed}.`, { parameter: 'seed' });
  }
}
