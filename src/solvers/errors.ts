/**
 * Typed errors of the numerical core. Each carries a stable `code` (kebab-case) and structured
 * `details`; the HTTP layer maps them to RFC 9457 problems in one place, the job layer stores them.
 * Nothing here knows about HTTP status codes.
 */

/**
 * The code of every SolverError below, once. The problem catalogue (src/jobs/problems.ts) must
 * describe each of them: a code added here without a catalogue entry does not compile.
 */
export const SOLVER_ERROR_CODES = [
  'not-square',
  'matrix-market-syntax',
  'unsupported-matrix',
  'non-finite-value',
  'magnitude-out-of-range',
  'invalid-entry',
  'dimension-mismatch',
  'invalid-partition',
  'empty-machine',
  'row-assigned-twice',
  'row-unassigned',
  'too-many-machines',
  'singular-matrix',
  'zero-row',
  'invalid-parameter',
  'too-large',
  'cancelled',
] as const;
export type SolverErrorCode = (typeof SOLVER_ERROR_CODES)[number];

/** The codes an InvalidPartitionError can carry (its own and its subclasses'). */
type PartitionErrorCode = Extract<
  SolverErrorCode,
  'invalid-partition' | 'empty-machine' | 'row-assigned-twice' | 'row-unassigned' | 'too-many-machines'
>;

export abstract class SolverError extends Error {
  abstract readonly code: SolverErrorCode;
  readonly details: Record<string, unknown>;

  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = new.target.name;
    this.details = details;
  }
}

/** The problem is well-formed JSON but mathematically or structurally unusable. */
export abstract class InvalidProblemError extends SolverError {}

export class NotSquareError extends InvalidProblemError {
  readonly code = 'not-square';
  constructor(rows: number, cols: number, what = 'matrix') {
    super(`The ${what} is ${rows} x ${cols}; the system A x = b needs at least as many rows as columns (square, or tall: least squares).`, {
      rows,
      cols,
    });
  }
}

export class MatrixMarketSyntaxError extends InvalidProblemError {
  readonly code = 'matrix-market-syntax';
  constructor(message: string, line?: number) {
    super(line === undefined ? `Matrix Market: ${message}` : `Matrix Market line ${line}: ${message}`, line === undefined ? {} : { line });
  }
}

/** A Matrix Market field or symmetry the service does not support (complex, hermitian...). */
export class UnsupportedMatrixError extends InvalidProblemError {
  readonly code = 'unsupported-matrix';
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
  }
}

export class NonFiniteValueError extends InvalidProblemError {
  readonly code = 'non-finite-value';
  /** `where` names the offending entry, e.g. "matrix entry (3, 7)" or "rhs[2]". */
  constructor(where: string, value: number | string) {
    super(`${where} is ${String(value)}; every entry must be a finite real number.`, { where, value: String(value) });
  }
}

/**
 * Entries of A or b whose magnitude double precision cannot square: the analysis and the runs measure row norms,
 * A^T A and residuals as sums of squares, which overflow above ~1e154 and lose the row below ~1e-154 (a matrix
 * scaled by 1e-160 read as singular, a rhs of 1e-200 as solved at 0 iterations). `where` names the entry or row.
 */
export class MagnitudeOutOfRangeError extends InvalidProblemError {
  readonly code = 'magnitude-out-of-range';
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
  }
}

/**
 * A matrix or rhs entry that is not a number at all (e.g. the string "abc" or null), or a malformed
 * COO triplet. Non-finite numbers and "NaN"/"Infinity" strings raise NonFiniteValueError instead.
 */
export class InvalidEntryError extends InvalidProblemError {
  readonly code = 'invalid-entry';
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
  }
}

export class DimensionMismatchError extends InvalidProblemError {
  readonly code = 'dimension-mismatch';
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
  }
}

export class InvalidPartitionError extends InvalidProblemError {
  readonly code: PartitionErrorCode = 'invalid-partition';
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
  }
}

export class EmptyMachineError extends InvalidPartitionError {
  override readonly code = 'empty-machine';
  constructor(machine: number) {
    super(`Machine ${machine} holds no rows; every machine must own at least one row.`, { machine });
  }
}

export class RowAssignedTwiceError extends InvalidPartitionError {
  override readonly code = 'row-assigned-twice';
  constructor(row: number, machines: [number, number]) {
    super(`Row ${row} is assigned to machines ${machines[0]} and ${machines[1]}; each row belongs to exactly one machine.`, {
      row,
      machines,
    });
  }
}

export class RowUnassignedError extends InvalidPartitionError {
  override readonly code = 'row-unassigned';
  constructor(row: number) {
    super(`Row ${row} is assigned to no machine; the partition must cover every row.`, { row });
  }
}

export class TooManyMachinesError extends InvalidPartitionError {
  override readonly code = 'too-many-machines';
  constructor(m: number, limit: number, reason: string) {
    super(`${m} machines requested, at most ${limit} allowed: ${reason}.`, { machines: m, limit });
  }
}

export class SingularMatrixError extends InvalidProblemError {
  readonly code = 'singular-matrix';
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
  }
}

/**
 * A zero row of a tall A (N > n): A may still have full column rank, so this is not singularity. The row's equation
 * reads 0 = b_k; the methods need every row nonzero (the row norms of the bounds, each machine's local angles).
 */
export class ZeroRowError extends InvalidProblemError {
  readonly code = 'zero-row';
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
  }
}

export class InvalidParameterError extends InvalidProblemError {
  readonly code = 'invalid-parameter';
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
  }
}

/** The input exceeds a configured size limit (the HTTP layer answers 413). */
export class ProblemTooLargeError extends SolverError {
  readonly code = 'too-large';
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
  }
}

/** Work stopped because its AbortSignal fired. */
export class CancelledError extends SolverError {
  readonly code = 'cancelled';
  constructor(message = 'The computation was cancelled.') {
    super(message);
  }
}
