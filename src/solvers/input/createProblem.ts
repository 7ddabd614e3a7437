/**
 * Assemble a validated DenseProblem from a matrix, an optional right-hand side and a partition.
 * Without rhs, b = A * ones(n) so that the true solution x* = ones(n) is known.
 * A dense matrix gives a DenseProblem; a CSR matrix (../sparse/csr.ts) gives a CsrProblem, checked
 * and assembled in O(nnz + n) without ever densifying (limits.maxN bounds dense storage only).
 */
import { DimensionMismatchError, NonFiniteValueError, NotSquareError, SingularMatrixError, ZeroRowError } from '../errors.js';
import { matVec, type DenseMatrix } from '../matrix.js';
import type { Partition, DenseProblem, CsrProblem } from '../problem.js';
import { checkCsr, multiply, type CsrMatrix } from '../sparse/csr.js';
import { checkAllFinite, checkDenseSize, entriesToVector, matrixEntryName } from './entries.js';
import { checkMatrixRowMagnitude, checkRhsMagnitude, largestMagnitudeIndex } from './magnitudes.js';
import { buildPartition, checkPartition } from './partition.js';
import type { EntryValue, InputLimits, PartitionInput } from './types.js';

export interface CreateProblemArgs<Matrix extends DenseMatrix | CsrMatrix = DenseMatrix> {
  A: Matrix;
  rhs?: ArrayLike<EntryValue> | null;
  /** The solution known with a given rhs (generated labels: regression data without noise); default none. */
  xTrue?: Float64Array | null;
  partition: PartitionInput | Partition;
  limits?: InputLimits;
}

export function createProblem(args: CreateProblemArgs): DenseProblem;
export function createProblem(args: CreateProblemArgs<CsrMatrix>): CsrProblem;
export function createProblem(args: CreateProblemArgs<DenseMatrix | CsrMatrix>): DenseProblem | CsrProblem;
export function createProblem(args: CreateProblemArgs<DenseMatrix | CsrMatrix>): DenseProblem | CsrProblem {
  const { A, limits } = args;
  // Tall systems (N >= n) are least-squares problems; a wide one has no unique solution for any algorithm here.
  if (A.rows < A.cols) throw new NotSquareError(A.rows, A.cols, 'wide matrix (fewer rows than columns)');
  const n = A.cols;
  const N = A.rows;
  if (n < 1) throw new DimensionMismatchError(`The matrix has no columns (${N} x 0); a system needs at least one unknown.`, { n });
  let sparse: CsrMatrix | null = null;
  if ('rowPtr' in A) {
    checkCsr(A);
    checkSparseEntries(A);
    sparse = A;
  } else {
    if (A.data.length !== N * n) {
      throw new DimensionMismatchError(`The matrix claims to be ${N} x ${n} but holds ${A.data.length} values.`, {
        n,
        length: A.data.length,
      });
    }
    checkDenseSize(N, limits);
    checkAllFinite(A);
    checkNoZeroRowOrColumn(A);
  }

  let b: Float64Array;
  let xTrue: Float64Array | null;
  if (args.rhs === undefined || args.rhs === null) {
    xTrue = new Float64Array(n).fill(1);
    b = sparse !== null ? multiply(sparse, xTrue) : matVec(A as DenseMatrix, xTrue);
  } else {
    if (args.rhs.length !== N) {
      throw new DimensionMismatchError(`rhs has ${args.rhs.length} entries but the matrix has n = ${N} rows.`, {
        length: args.rhs.length,
        n: N,
      });
    }
    b = entriesToVector(args.rhs, 'rhs');
    checkRhsMagnitude(b, 'rhs');
    xTrue = args.xTrue ?? null;
    if (xTrue !== null && xTrue.length !== n) {
      throw new DimensionMismatchError(`The known solution has ${xTrue.length} entries but the matrix has ${n} columns.`, {
        length: xTrue.length,
        n,
      });
    }
  }

  const partition = isPartition(args.partition) ? checkPartition(args.partition, N, limits) : buildPartition(args.partition, N, limits);
  return sparse !== null ? { n, A: sparse, b, xTrue, partition } : { n, A: A as DenseMatrix, b, xTrue, partition };
}

function isPartition(p: PartitionInput | Partition): p is Partition {
  return typeof p === 'object' && p !== null && 'rowsOf' in p && p.assignment instanceof Int32Array;
}

/**
 * A zero row: a square A is singular; a tall A (N > n) may still have full column rank, and the row is refused for
 * what it is (its equation reads 0 = b_k, and the methods need every row nonzero: ZeroRowError).
 */
function zeroRowError(row: number, N: number, n: number): SingularMatrixError | ZeroRowError {
  if (N === n) return new SingularMatrixError(`Row ${row} of A is entirely zero, so A is singular.`, { row });
  return new ZeroRowError(
    `Row ${row} of A is entirely zero: its equation reads 0 = b[${row}], which says nothing about x, and every row must be ` +
      "nonzero (the methods use the row norms and each machine's rows). Remove the row: neither the least-squares " +
      'solution nor the block-weighted one changes.',
    { row },
  );
}

/** A zero column: x_j is undetermined, for a square A (singular) and a tall one (no full column rank) alike. */
function zeroColumnError(column: number, N: number, n: number): SingularMatrixError {
  const why = N === n ? 'so A is singular' : `so A does not have full column rank and x[${column}] is undetermined`;
  return new SingularMatrixError(`Column ${column} of A is entirely zero, ${why}.`, { column });
}

/**
 * A zero row or column makes a square A exactly singular; catching it here gives a message naming it
 * (rank deficiency in general is found later, by the factorizations of the analysis). Each row's
 * largest magnitude must be one the core can square (./magnitudes.ts).
 */
function checkNoZeroRowOrColumn(A: DenseMatrix): void {
  const { rows: N, cols: n, data } = A;
  const columnNonzero = new Uint8Array(n);
  const largestColumn = (i: number): number => largestMagnitudeIndex(data, i * n, (i + 1) * n) - i * n;
  for (let i = 0; i < N; i++) {
    const off = i * n;
    let rowMax = 0;
    for (let j = 0; j < n; j++) {
      const magnitude = Math.abs(data[off + j]);
      if (magnitude !== 0) {
        columnNonzero[j] = 1;
        if (magnitude > rowMax) rowMax = magnitude;
      }
    }
    if (rowMax === 0) throw zeroRowError(i, N, n);
    checkMatrixRowMagnitude(i, rowMax, largestColumn);
  }
  const zeroColumn = columnNonzero.indexOf(0);
  if (zeroColumn !== -1) throw zeroColumnError(zeroColumn, N, n);
}

/** The sparse counterpart of checkAllFinite and checkNoZeroRowOrColumn: over the stored entries only. */
function checkSparseEntries(A: CsrMatrix): void {
  const { rows: N, cols: n, rowPtr, colIdx, values } = A;
  const columnNonzero = new Uint8Array(n);
  const largestColumn = (i: number): number => colIdx[largestMagnitudeIndex(values, rowPtr[i], rowPtr[i + 1])];
  for (let i = 0; i < N; i++) {
    let rowMax = 0;
    for (let e = rowPtr[i]; e < rowPtr[i + 1]; e++) {
      const v = values[e];
      if (!Number.isFinite(v)) throw new NonFiniteValueError(matrixEntryName(i, colIdx[e]), v);
      const magnitude = Math.abs(v);
      if (magnitude !== 0) {
        columnNonzero[colIdx[e]] = 1;
        if (magnitude > rowMax) rowMax = magnitude;
      }
    }
    if (rowMax === 0) throw zeroRowError(i, N, n);
    checkMatrixRowMagnitude(i, rowMax, largestColumn);
  }
  const zeroColumn = columnNonzero.indexOf(0);
  if (zeroColumn !== -1) throw zeroColumnError(zeroColumn, N, n);
}
