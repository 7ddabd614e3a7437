/**
 * A validated problem: a matrix (square, or tall N x n of full column rank), a right-hand side and a partition of
 * the rows over `m` machines. Builders in `input/` produce it (DenseProblem for a dense A,
 * CsrProblem for a CSR one) and raise typed errors otherwise.
 */
import type { CsrMatrix, DenseMatrix } from './matrix.js';

export interface Partition {
  /** Number of machines. */
  readonly m: number;
  /** assignment[k] = machine of row k (length n). */
  readonly assignment: Int32Array;
  /** rowsOf[i] = global row indices held by machine i, ascending. */
  readonly rowsOf: readonly Int32Array[];
  /** sizes[i] = p_i = rowsOf[i].length. */
  readonly sizes: readonly number[];
}

export interface DenseProblem {
  readonly n: number;
  readonly A: DenseMatrix;
  readonly b: Float64Array;
  /** The true solution when known (rhs omitted: b = A * ones, so x* = ones); otherwise null. */
  readonly xTrue: Float64Array | null;
  readonly partition: Partition;
}

/** The same problem with A in compressed sparse rows: nothing of it is ever stored densely. */
export interface CsrProblem {
  readonly n: number;
  readonly A: CsrMatrix;
  readonly b: Float64Array;
  readonly xTrue: Float64Array | null;
  readonly partition: Partition;
}

export function isCsrProblem(problem: DenseProblem | CsrProblem): problem is CsrProblem {
  return 'rowPtr' in problem.A;
}

/**
 * An assignment as JSON carries it (an advise job's candidates, GET /v1/jobs/{id}/partition). A loop into a sized
 * array: Array.from over an Int32Array goes through its iterator, 220-450 ms per 10^6 rows against 55-80 ms.
 */
/** Whether two index arrays (assignments, a machine's rows) hold the same entries in the same order. */
export function sameIndices(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

export function assignmentList(assignment: Int32Array): number[] {
  const list = new Array<number>(assignment.length);
  for (let k = 0; k < assignment.length; k++) list[k] = assignment[k];
  return list;
}

/** Build the Partition view from an assignment array already checked to cover 0..m-1. */
export function partitionFromAssignment(assignment: Int32Array, m: number): Partition {
  const sizes = new Array<number>(m).fill(0);
  for (let k = 0; k < assignment.length; k++) sizes[assignment[k]]++;
  const rowsOf = sizes.map((s) => new Int32Array(s));
  const fill = new Array<number>(m).fill(0);
  for (let k = 0; k < assignment.length; k++) {
    const i = assignment[k];
    rowsOf[i][fill[i]++] = k;
  }
  return { m, assignment, rowsOf, sizes };
}
