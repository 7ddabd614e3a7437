/**
 * The ways a user can give the service a matrix and a partition (`MatrixInput` and the partition
 * forms of docs/API.md). Builders next to this file turn them into a DenseMatrix / Partition
 * or raise a typed error from ../errors.ts naming what is wrong. The HTTP layer's zod schemas
 * (src/api/schemas/jobRequest.ts) are checked against these types at compile time.
 */

/** Every matrix input format, once. */
export const MATRIX_FORMATS = ['dense', 'coo', 'matrix-market', 'generator', 'stored'] as const;
export type MatrixFormat = (typeof MATRIX_FORMATS)[number];

/** Every matrix generator, once. */
export const GENERATOR_NAMES = ['gaussian', 'block-diagonal', 'structured-gaussian', 'ones-minus-eps', 'regression'] as const;
export type GeneratorName = (typeof GENERATOR_NAMES)[number];

/**
 * A matrix entry as it may arrive from JSON. Strings are accepted only so that "NaN", "Infinity"
 * and "-Infinity" can be rejected with a message naming the entry instead of a type error.
 */
export type EntryValue = number | string;

/** The parameters of each generator. */
interface GeneratorParameters {
  /** i.i.d. N(mean, std^2) entries (the paper's experiments use mean 0 or 1, std 1). */
  gaussian: { n: number; mean?: number; std?: number; seed?: number };
  /**
   * Example 1: A = diag(A_1, ..., A_k) with i.i.d. N(0, 1) square blocks. With `blockSize`, blocks of
   * that many rows (the last block takes the remainder); the partition { sizes: [blockSize, ...] } (or
   * { machines: k } when blockSize divides n) then puts one block on each machine. Without it, the
   * blocks follow the partition the matrix is generated for (generateMatrix's third argument): machine
   * i's rows, in order, form block i over a run of p_i columns, the paper's "machine i stores A_i"
   * for any partition (a row permutation of diag(A_1, ..., A_m) when the rows are not contiguous).
   * Either way the machines' row spaces are mutually orthogonal when each holds whole blocks: total
   * orthogonality, kappa(S) = 1. `permute: true` shuffles the columns (seeded), so A no longer looks
   * block diagonal but the blocks' row spaces stay mutually orthogonal.
   */
  'block-diagonal': { n: number; blockSize?: number; seed?: number; permute?: boolean };
  /**
   * Example 2: blocks A_ij of size blockSize; diagonal blocks i.i.d. N(0, 1), off-diagonal blocks
   * i.i.d. N(0, sigma^2).
   */
  'structured-gaussian': { n: number; blockSize: number; sigma: number; seed?: number };
  /** Example 3: A = J_n - eps I (J_n the all-ones matrix). */
  'ones-minus-eps': { n: number; eps: number };
  /**
   * Federated regression data (./regression.ts): `rows` samples of `n` features (a tall rows x n A),
   * machine i's rows (the partition's) drawn from N(mean + skew d_i, scale_i^2 I), and labels
   * b = A x_true + N(0, sigma^2) noise, which are the system's right-hand side when none is given.
   * `scale`: one number, or one per machine of the partition.
   */
  regression: { rows: number; n: number; mean?: number; skew?: number; scale?: number | number[]; sigma?: number; seed?: number };
}

/** One member per name of GENERATOR_NAMES (a name without parameters above does not compile). */
export type GeneratorSpec = { [G in GeneratorName]: { generator: G } & GeneratorParameters[G] }[GeneratorName];

/** What each matrix format carries besides `format`. */
interface MatrixInputFields {
  /** Row-major rows. */
  dense: { data: EntryValue[][] };
  /**
   * [i, j, value] triplets, 0-based; duplicates are summed (buildMatrix and buildCsrMatrix alike).
   */
  coo: { rows: number; cols: number; entries: [number, number, EntryValue][] };
  /** The text of a Matrix Market file. */
  'matrix-market': { data: string };
  generator: GeneratorSpec;
  /** A matrix the service stores (uploaded once, used by many jobs), by its id; the service reads it, not buildMatrix. */
  stored: { id: string };
}

/** One member per format of MATRIX_FORMATS. */
export type MatrixInput = { [F in MatrixFormat]: { format: F } & MatrixInputFields[F] }[MatrixFormat];

export type PartitionInput =
  /** m contiguous blocks whose sizes differ by at most one, larger blocks first (NumPy's array_split). */
  | { machines: number }
  /** Contiguous blocks of the given sizes. */
  | { sizes: number[] }
  /** assignment[k] = machine of row k; machines 0..m-1 must each own a row. */
  | { assignment: number[] }
  /** groups[i] = the rows machine i holds; every row must appear exactly once. */
  | { groups: number[][] }
  /**
   * A seeded random partition (./partition.ts randomPartition): the block sizes of { machines },
   * rows shuffled by the seed. A study's random partition family draws its samples' partitions so.
   */
  | { family: 'random'; seed: number; machines: number };

export interface InputLimits {
  /** Largest accepted n (ProblemTooLargeError above). */
  maxN?: number;
  /** Most machines (TooManyMachinesError above). */
  maxMachines?: number;
}
