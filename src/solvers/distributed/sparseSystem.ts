/**
 * What each machine holds when A is sparse (a SparseProblem): its rows A_i in compressed sparse
 * rows and b_i, with its column support C_i. Built in O(nnz(A) + m n) time and O(nnz(A) + n) memory:
 * nothing n x n and nothing p_i x c_i is ever stored densely.
 *
 * The gradient methods need nothing more (../machines/: one CSR pass per machine per iteration).
 */
import { runSync, type Work } from '../cooperative.js';
import { SingularMatrixError } from '../errors.js';
import type { Partition, SparseProblem } from '../problem.js';
import { columnSupport, selectRows, type CsrMatrix } from '../sparse/csr.js';

export interface CsrMachineData {
  readonly index: number;
  /** Global row indices held by this machine, ascending (length p). */
  readonly rows: Int32Array;
  readonly p: number;
  /** A_i: p x n, global column indices. */
  readonly a: CsrMatrix;
  /** b_i (length p). */
  readonly b: Float64Array;
  /** Column support C_i (columns where some row of A_i has a stored entry), ascending (length c). */
  readonly cols: Int32Array;
  readonly c: number;
  /** True when C_i is every column. */
  readonly full: boolean;
}

export interface SparseDistributedSystem {
  readonly storage: 'csr';
  readonly n: number;
  readonly m: number;
  readonly A: CsrMatrix;
  readonly b: Float64Array;
  readonly xTrue: Float64Array | null;
  readonly partition: Partition;
  readonly machines: readonly CsrMachineData[];
}

function sparseMachine(problem: SparseProblem, index: number): CsrMachineData {
  const { A, b } = problem;
  const rows = problem.partition.rowsOf[index];
  const p = rows.length;
  const a = selectRows(A, rows);
  const cols = columnSupport(a);
  const c = cols.length;
  if (c < p) {
    throw new SingularMatrixError(
      `The matrix is singular: the ${p} rows of machine ${index} are nonzero in only ${c} columns, so they are linearly dependent.`,
      { machine: index, rows: p, supportColumns: c },
    );
  }
  const bi = new Float64Array(p);
  for (let k = 0; k < p; k++) bi[k] = b[rows[k]];
  return { index, rows, p, a, b: bi, cols, c, full: c === problem.n };
}

export function* buildSparseSystemWork(problem: SparseProblem): Work<SparseDistributedSystem> {
  const { m } = problem.partition;
  const machines: CsrMachineData[] = [];
  for (let i = 0; i < m; i++) {
    machines.push(sparseMachine(problem, i));
    yield { phase: 'bases', fraction: (i + 1) / m };
  }
  return { storage: 'csr', n: problem.n, m, A: problem.A, b: problem.b, xTrue: problem.xTrue, partition: problem.partition, machines };
}

export function buildSparseSystem(problem: SparseProblem): SparseDistributedSystem {
  return runSync(buildSparseSystemWork(problem));
}
