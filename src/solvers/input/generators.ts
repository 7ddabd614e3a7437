/**
 * Seeded matrix generators: the paper's Gaussian experiments and its Examples 1-3.
 * Same spec (seed included) => bit-identical matrix; see ./random.ts for the generator used.
 * Entries are drawn in row-major order of the final matrix unless stated otherwise.
 */
import { DimensionMismatchError, InvalidParameterError, SingularMatrixError } from '../errors.js';
import type { DenseMatrix } from '../matrix.js';
import type { Partition } from '../problem.js';
import { checkDenseSize, describeValue } from './entries.js';
import { SeededRandom } from '../random.js';
import { checkRegressionSpec, regressionData } from './regression.js';
import { GENERATOR_NAMES, type GeneratorSpec, type InputLimits } from './types.js';

const DEFAULT_SEED = 1;
const MACHINE_EPSILON = 2 ** -52;

export { GENERATOR_NAMES };

/** A generator spec with every parameter checked and defaulted. */
export type ValidatedGeneratorSpec =
  | { generator: 'gaussian'; n: number; mean: number; std: number; seed: number }
  /** blockSize null: one block per machine of the partition the matrix is generated for. */
  | { generator: 'block-diagonal'; n: number; blockSize: number | null; seed: number; permute: boolean }
  | { generator: 'structured-gaussian'; n: number; blockSize: number; sigma: number; seed: number }
  | { generator: 'ones-minus-eps'; n: number; eps: number }
  /** n: the features (columns); rows: the samples (the partition's rows). */
  | {
      generator: 'regression';
      rows: number;
      n: number;
      mean: number;
      skew: number;
      scale: number | number[];
      sigma: number;
      seed: number;
    };

/**
 * Every check generateMatrix makes, without generating: parameters, size limits, and the specs
 * known to give a singular matrix. The HTTP layer calls it to answer 422/413 before queueing a job.
 */
export function validateGeneratorSpec(
  spec: GeneratorSpec,
  limits?: InputLimits,
  partition?: Pick<Partition, 'm' | 'assignment'>,
): ValidatedGeneratorSpec {
  if (spec === null || typeof spec !== 'object')
    throw new InvalidParameterError(`A generator spec must be an object; got ${describeValue(spec)}.`);
  switch (spec.generator) {
    case 'gaussian': {
      const n = sizeParameter(spec.n, limits);
      const mean = finiteParameter('mean', spec.mean ?? 0);
      const std = nonNegativeParameter('std', spec.std ?? 1);
      const seed = seedParameter(spec.seed);
      if (std === 0 && (n > 1 || mean === 0)) {
        throw new SingularMatrixError(
          `gaussian with std = 0 makes every entry equal to mean = ${mean}, so A = mean * J_${n} has rank ${mean === 0 ? 0 : 1} < n = ${n}: A is singular.`,
          { generator: 'gaussian', n, mean, std },
        );
      }
      return { generator: 'gaussian', n, mean, std, seed };
    }
    case 'block-diagonal': {
      const n = sizeParameter(spec.n, limits);
      const blockSize = spec.blockSize === undefined ? null : blockSizeParameter(spec.blockSize, n);
      const seed = seedParameter(spec.seed);
      if (spec.permute !== undefined && typeof spec.permute !== 'boolean') {
        throw new InvalidParameterError(`permute must be true or false; got ${describeValue(spec.permute)}.`, { parameter: 'permute' });
      }
      return { generator: 'block-diagonal', n, blockSize, seed, permute: spec.permute === true };
    }
    case 'structured-gaussian': {
      const n = sizeParameter(spec.n, limits);
      const blockSize = blockSizeParameter(spec.blockSize, n);
      const sigma = nonNegativeParameter('sigma', spec.sigma);
      const seed = seedParameter(spec.seed);
      return { generator: 'structured-gaussian', n, blockSize, sigma, seed };
    }
    case 'ones-minus-eps': {
      const n = sizeParameter(spec.n, limits);
      const eps = finiteParameter('eps', spec.eps);
      checkOnesMinusEpsNonsingular(n, eps);
      return { generator: 'ones-minus-eps', n, eps };
    }
    case 'regression': {
      const rows = sizeParameter(spec.rows, limits, 'rows');
      const n = sizeParameter(spec.n, limits);
      const mean = finiteParameter('mean', spec.mean ?? 0);
      const skew = nonNegativeParameter('skew', spec.skew ?? 0);
      const sigma = nonNegativeParameter('sigma', spec.sigma ?? 0);
      const seed = seedParameter(spec.seed);
      const scale = spec.scale ?? 1;
      // The machines are the partition's: without it, a list of scales is checked for its entries only.
      const machines = partition?.m ?? (typeof scale === 'object' ? scale.length : 1);
      checkRegressionSpec({ rows, n, machines, mean, skew, sigma, seed, scale, assignment: partition?.assignment });
      return { generator: 'regression', rows, n, mean, skew, scale, sigma, seed };
    }
    default: {
      const name = (spec as { generator?: unknown }).generator;
      throw new InvalidParameterError(
        `Unknown generator ${typeof name === 'string' ? JSON.stringify(name) : describeValue(name)}; expected one of ${GENERATOR_NAMES.join(', ')}.`,
        {
          parameter: 'generator',
        },
      );
    }
  }
}

/**
 * The matrix of a generator spec. `partition` is the one the matrix is generated for: a
 * block-diagonal spec without blockSize takes its blocks from it (one per machine); the other
 * specs ignore it.
 */
export function generateMatrix(spec: GeneratorSpec, limits?: InputLimits, partition?: Pick<Partition, 'm' | 'assignment'>): DenseMatrix {
  return generateSystem(spec, limits, partition).A;
}

/**
 * A generated system: the matrix, and the right-hand side and solution the generator makes with it
 * (regression: its labels b, and x_true when sigma = 0, the labels then being exactly A x_true), else
 * null for both (b = A * ones). Regression data needs the partition: machine i's rows are its own.
 */
export function generateSystem(
  spec: GeneratorSpec,
  limits?: InputLimits,
  partition?: Pick<Partition, 'm' | 'assignment'>,
): { A: DenseMatrix; b: Float64Array | null; xTrue: Float64Array | null } {
  const valid = validateGeneratorSpec(spec, limits, partition);
  if (valid.generator === 'regression') {
    const { rows, n, mean, skew, scale, sigma, seed } = valid;
    const data = regressionData({
      rows,
      n,
      machines: partition?.m ?? 1,
      mean,
      skew,
      scale,
      sigma,
      seed,
      assignment: partition?.assignment,
    });
    return { A: data.A, b: data.b, xTrue: sigma === 0 ? data.xTrue : null };
  }
  return { A: generatedMatrix(valid, partition), b: null, xTrue: null };
}

function generatedMatrix(
  valid: Exclude<ValidatedGeneratorSpec, { generator: 'regression' }>,
  partition: Pick<Partition, 'm' | 'assignment'> | undefined,
): DenseMatrix {
  switch (valid.generator) {
    case 'gaussian':
      return gaussian(valid.n, valid.mean, valid.std, valid.seed);
    case 'block-diagonal':
      return blockDiagonal(valid.n, blockOfRows(valid.n, valid.blockSize, partition), valid.seed, valid.permute);
    case 'structured-gaussian':
      return structuredGaussian(valid.n, valid.blockSize, valid.sigma, valid.seed);
    case 'ones-minus-eps':
      return onesMinusEps(valid.n, valid.eps);
  }
}

/** i.i.d. N(mean, std^2) entries. */
function gaussian(n: number, mean: number, std: number, seed: number): DenseMatrix {
  const rng = new SeededRandom(seed);
  return { rows: n, cols: n, data: rng.fillNormal(new Float64Array(n * n), mean, std) };
}

/** The block of each row, and how many blocks: runs of blockSize rows, or the partition's machines. */
function blockOfRows(
  n: number,
  blockSize: number | null,
  partition: Pick<Partition, 'm' | 'assignment'> | undefined,
): { block: Int32Array; count: number } {
  if (blockSize !== null) {
    const block = new Int32Array(n);
    for (let k = 0; k < n; k++) block[k] = Math.floor(k / blockSize);
    return { block, count: Math.ceil(n / blockSize) };
  }
  if (partition === undefined) {
    throw new InvalidParameterError(
      'block-diagonal without blockSize makes one block per machine, so it needs the partition; give blockSize, or generate it for a partition.',
      {
        parameter: 'blockSize',
      },
    );
  }
  if (partition.assignment.length !== n) {
    throw new DimensionMismatchError(
      `The partition assigns ${partition.assignment.length} rows but the block-diagonal matrix has n = ${n}.`,
      {
        rows: partition.assignment.length,
        n,
      },
    );
  }
  return { block: partition.assignment, count: partition.m };
}

/**
 * Example 1: A = diag(A_1, ..., A_k) up to a row permutation: block b is the rows with block[k] = b,
 * in order, over the next run of as many columns, i.i.d. N(0, 1), drawn block after block (row-major
 * inside each block). With `permute`, the columns are then shuffled by one seeded permutation: the
 * blocks' row spaces stay mutually orthogonal (disjoint column supports), rows keep their places.
 */
function blockDiagonal(n: number, rows: { block: Int32Array; count: number }, seed: number, permute: boolean): DenseMatrix {
  const rng = new SeededRandom(seed);
  const data = new Float64Array(n * n);
  // First column of each block (prefix sums of the block sizes), and the rows grouped by block.
  const firstColumn = new Int32Array(rows.count + 1);
  for (let k = 0; k < n; k++) firstColumn[rows.block[k] + 1]++;
  for (let b = 0; b < rows.count; b++) firstColumn[b + 1] += firstColumn[b];
  const byBlock = new Int32Array(n);
  const filled = firstColumn.slice(0, rows.count);
  for (let k = 0; k < n; k++) byBlock[filled[rows.block[k]]++] = k;
  for (let b = 0; b < rows.count; b++) {
    const start = firstColumn[b];
    const size = firstColumn[b + 1] - start;
    for (let r = start; r < start + size; r++) rng.fillNormal(data, 0, 1, byBlock[r] * n + start, size);
  }
  if (!permute) return { rows: n, cols: n, data };
  // Column j of the result is column perm[j] of the block-diagonal matrix.
  const perm = rng.permutation(n);
  const shuffled = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const off = i * n;
    for (let j = 0; j < n; j++) shuffled[off + j] = data[off + perm[j]];
  }
  return { rows: n, cols: n, data: shuffled };
}

/** Example 2: diagonal blocks i.i.d. N(0, 1), off-diagonal blocks i.i.d. N(0, sigma^2). */
function structuredGaussian(n: number, blockSize: number, sigma: number, seed: number): DenseMatrix {
  const rng = new SeededRandom(seed);
  const data = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const rowBlock = Math.floor(i / blockSize);
    const off = i * n;
    for (let j = 0; j < n; j++) {
      const z = rng.nextNormal();
      data[off + j] = Math.floor(j / blockSize) === rowBlock ? z : sigma * z;
    }
  }
  return { rows: n, cols: n, data };
}

/** Example 3: A = J_n - eps I. */
function onesMinusEps(n: number, eps: number): DenseMatrix {
  const data = new Float64Array(n * n).fill(1);
  for (let i = 0; i < n; i++) data[i * n + i] = 1 - eps;
  return { rows: n, cols: n, data };
}

/**
 * J_n - eps I is symmetric with eigenvalues n - eps (once) and -eps (n - 1 times), so its singular
 * values are |n - eps| and |eps|. It is singular exactly when eps = n, or eps = 0 with n >= 2; we
 * also refuse numerical singularity by NumPy's matrix_rank rule: sigma_min <= n * eps_mach * sigma_max.
 */
function checkOnesMinusEpsNonsingular(n: number, eps: number): void {
  const onesEigenvalue = Math.abs(n - eps);
  const sigmaMax = n === 1 ? onesEigenvalue : Math.max(onesEigenvalue, Math.abs(eps));
  const sigmaMin = n === 1 ? onesEigenvalue : Math.min(onesEigenvalue, Math.abs(eps));
  const details = { generator: 'ones-minus-eps', n, eps };
  if (eps === n) {
    throw new SingularMatrixError(
      `ones-minus-eps with eps = n = ${n} is singular: J_n - n I maps the all-ones vector to 0 (eigenvalue n - eps = 0).`,
      details,
    );
  }
  if (eps === 0 && n >= 2) {
    throw new SingularMatrixError(
      `ones-minus-eps with eps = 0 is the all-ones matrix J_${n}, which has rank 1 (eigenvalue -eps = 0 with multiplicity n - 1): singular.`,
      details,
    );
  }
  if (sigmaMin <= n * MACHINE_EPSILON * sigmaMax) {
    throw new SingularMatrixError(
      `ones-minus-eps with n = ${n}, eps = ${eps} is numerically singular: its singular values are ` +
        `|n - eps| = ${onesEigenvalue} and |eps| = ${Math.abs(eps)}, ` +
        `condition number ${sigmaMax / sigmaMin} beyond 1 / (n * machine epsilon).`,
      details,
    );
  }
}

function sizeParameter(n: unknown, limits: InputLimits | undefined, name = 'n'): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
    throw new InvalidParameterError(`${name} must be an integer >= 1; got ${describeValue(n)}.`, { parameter: name });
  }
  checkDenseSize(n, limits, 'generated matrix');
  return n;
}

function blockSizeParameter(blockSize: unknown, n: number): number {
  if (typeof blockSize !== 'number' || !Number.isInteger(blockSize) || blockSize < 1 || blockSize > n) {
    throw new InvalidParameterError(`blockSize must be an integer between 1 and n = ${n}; got ${describeValue(blockSize)}.`, {
      parameter: 'blockSize',
    });
  }
  return blockSize;
}

function finiteParameter(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidParameterError(`${name} must be a finite number; got ${describeValue(value)}.`, { parameter: name });
  }
  return value;
}

function nonNegativeParameter(name: string, value: unknown): number {
  const v = finiteParameter(name, value);
  if (v < 0) throw new InvalidParameterError(`${name} must be >= 0; got ${v}.`, { parameter: name });
  return v;
}

function seedParameter(seed: unknown): number {
  if (seed === undefined) return DEFAULT_SEED;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) {
    throw new InvalidParameterError(`seed must be an integer (at most 2^53 - 1 in magnitude); got ${describeValue(seed)}.`, {
      parameter: 'seed',
    });
  }
  return seed;
}
