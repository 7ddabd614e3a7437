/**
 * What a simulated machine holds for the iterations, as plain data: numbers and typed arrays only,
 * so that a run can copy it once into shared memory or a WebAssembly arena for its threads (see
 * ../parallel/engine.ts) and every thread can rebuild its operators on that copy (./machine.ts).
 *
 * Every storage is on the machine's column support C_i (`cols`, ascending; `full` when it is every
 * column): A_i v and Q_i^T v read v only there, A_i^T w and Q_i w write only there.
 *  - dense: the rows of A_i (p x c, row-major, with each row's nonzero extent) and b_i, and the
 *    orthonormal basis Q_i^T of R(A_i) with R (A_i^T = Q_i R) and qtx0 = R^{-T} b_i, from
 *    ../distributed/distributedSystem.ts. A pass takes only the parts it reads (`rows`, `basis`).
 *  - csr: the rows of A_i in compressed sparse rows with column indices local to the support
 *    (entry e of row k is column cols[colIdx[e]]) and b_i, and for the projection passes the
 *    Cholesky factor of G_i = A_i A_i^T, from ../distributed/sparseSystem.ts. O(nnz + fill)
 *    memory: a chunk of rows has its own (smaller) support, so the terms the taskmaster adds up per
 *    iteration are never more than the chunk's stored entries.
 */
import type { CsrMachineData, DenseMachineData } from './machineData.js';
import { columnSupport, localColumnIndices, nnzOf, zeroedArray, type ArrayPlace, type CsrMatrix } from '../sparse/csr.js';
import type { CholeskySymbolic } from '../sparse/sparseCholesky.js';

/** Rows of A_i on the support (p x c, row-major) and b_i; entries of row k outside [aStart[k], aEnd[k]) are zero. */
export interface DenseRows {
  readonly a: Float64Array;
  readonly aStart: Int32Array;
  readonly aEnd: Int32Array;
  readonly b: Float64Array;
}

/** Q_i^T on the support (p x c, row-major, with extents), R (p x p, upper triangular) and qtx0 = R^{-T} b_i. */
export interface DenseBasis {
  readonly q: Float64Array;
  readonly qStart: Int32Array;
  readonly qEnd: Int32Array;
  readonly r: Float64Array;
  readonly qtx0: Float64Array;
  /** |b_i - A_i A_i^+ b_i|^2 (0 unless the rows are dependent and b_i leaves their span). */
  readonly localResidual2: number;
}

export interface DenseMachineStorage {
  readonly storage: 'dense';
  readonly p: number;
  readonly c: number;
  readonly full: boolean;
  readonly cols: Int32Array;
  /** Null when the run's passes do not read A_i (APC, MLM). */
  readonly rows: DenseRows | null;
  /** Null when the run's passes do not read Q_i (the gradient methods). */
  readonly basis: DenseBasis | null;
}

export interface CsrMachineStorage {
  readonly storage: 'csr';
  readonly p: number;
  readonly c: number;
  readonly full: boolean;
  readonly cols: Int32Array;
  /** Row k's entries are colIdx / values[rowPtr[k] .. rowPtr[k + 1]), colIdx local to `cols`. */
  readonly rowPtr: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
  readonly b: Float64Array;
  /** L_i of G_i = A_i A_i^T (../sparse/sparseCholesky.ts) for the projection passes; null for the gradient pass. */
  readonly gram: { readonly symbolic: CholeskySymbolic; readonly values: Float64Array } | null;
  /** Refinement corrections per solve with G_i (see ../distributed/sparseSystem.ts). */
  readonly refinement: number;
}

export type MachineStorage = DenseMachineStorage | CsrMachineStorage;

/** Which parts of a machine a run's passes read. */
export interface StorageParts {
  readonly rows: boolean;
  readonly basis: boolean;
}

/** Machine `machine`'s dense storage with the parts a run reads. */
export function denseStorage(machine: DenseMachineData, parts: StorageParts): DenseMachineStorage {
  const { p, c, full, cols, a, aStart, aEnd, b, q, qStart, qEnd, r, qtx0, localResidual2 } = machine;
  return {
    storage: 'dense',
    p,
    c,
    full,
    cols,
    rows: parts.rows ? { a, aStart, aEnd, b } : null,
    basis: parts.basis ? { q, qStart, qEnd, r, qtx0, localResidual2 } : null,
  };
}

/** Rows [from, to) of a machine's A_i and b_i (views, no copy), on the machine's support: a chunk of the gradient pass. */
export function denseRowRange(machine: DenseMachineData, from: number, to: number): DenseMachineStorage {
  const { c, full, cols, a, aStart, aEnd, b } = machine;
  return {
    storage: 'dense',
    p: to - from,
    c,
    full,
    cols,
    rows: { a: a.subarray(from * c, to * c), aStart: aStart.subarray(from, to), aEnd: aEnd.subarray(from, to), b: b.subarray(from, to) },
    basis: null,
  };
}

/**
 * CSR storage of `rows` (global columns) on their column support `cols`, with b and the Gram factor given: `rows`' own
 * rowPtr and values (a pass only reads them) and new local column indices, made where `place` says (in shared memory a
 * threaded run's engine copies nothing of them: ../parallel/workerThreads.ts sharedCopy).
 */
function csrOnSupport(
  rows: CsrMatrix,
  cols: Int32Array,
  b: Float64Array,
  gram: CsrMachineStorage['gram'],
  refinement: number,
  place: ArrayPlace = false,
): CsrMachineStorage {
  return {
    storage: 'csr',
    p: rows.rows,
    c: cols.length,
    full: cols.length === rows.cols,
    cols,
    rowPtr: rows.rowPtr,
    colIdx: localColumnIndices(rows, cols, zeroedArray(Int32Array, nnzOf(rows), place)),
    values: rows.values,
    b,
    gram,
    refinement,
  };
}

/** A machine's whole A_i, b_i and Gram factor: a machine of the projection passes. */
export function csrStorage(machine: CsrMachineData): CsrMachineStorage {
  const { symbolic, values } = machine.gram;
  const { a, b } = machine.projection ?? machine;
  return csrOnSupport(a, machine.cols, b, { symbolic, values }, machine.gramRefinement);
}

/**
 * Rows [from, to) of a sparse machine's A_i and b_i, on the support of those rows: a chunk of the gradient pass. Its new
 * arrays (row pointers, local column indices, b) are made where `place` says: shared memory for a run on the solver
 * threads outside a WebAssembly arena (the values are A_i's own, shared already when a setup worker built the
 * machine), or the run's arena before it is laid out (../linalg/wasmRowKernels.ts ArenaStaging).
 */
export function csrRowRange(machine: CsrMachineData, from: number, to: number, place: ArrayPlace = false): CsrMachineStorage {
  const { a, b } = machine;
  const first = a.rowPtr[from];
  const end = a.rowPtr[to];
  const rowPtr = zeroedArray(Int32Array, to - from + 1, place);
  for (let k = 0; k < rowPtr.length; k++) rowPtr[k] = a.rowPtr[from + k] - first;
  const rows = { rows: to - from, cols: a.cols, rowPtr, colIdx: a.colIdx.subarray(first, end), values: a.values.subarray(first, end) };
  const bRows = zeroedArray(Float64Array, to - from, place);
  bRows.set(b.subarray(from, to));
  return csrOnSupport(rows, columnSupport(rows), bRows, null, 0, place);
}

/** Entries of row k of a matrix with the given extents: its work in a pass (zero for an empty extent). */
function extentSum(start: Int32Array, end: Int32Array): number {
  let entries = 0;
  for (let k = 0; k < start.length; k++) entries += Math.max(0, end[k] - start[k]);
  return entries;
}

/** cols[0] when the support is consecutive columns (a strip, as a banded matrix's machines have), else -1. */
export function stripStart(cols: Int32Array): number {
  const c = cols.length;
  return c > 0 && cols[c - 1] - cols[0] === c - 1 ? cols[0] : -1;
}

/**
 * out[j] += values[offset + t] for the t-th column j of a support of c columns, t ascending: j = first + t on a full
 * support or a strip (read without the column list), else cols[t]. How a machine's term or offset, kept on its
 * support, is added into an n-long vector.
 */
export function addOnSupport(
  support: { readonly c: number; readonly cols: Int32Array; readonly full: boolean },
  values: Float64Array,
  offset: number,
  out: Float64Array,
): void {
  const { c, cols, full } = support;
  const first = full ? 0 : stripStart(cols);
  if (first >= 0) for (let t = 0; t < c; t++) out[first + t] += values[offset + t];
  else for (let t = 0; t < c; t++) out[cols[t]] += values[offset + t];
}

/** Matrix entries one pass over the storage reads (its parts' nonzero extents): what orders and places the chunks. */
export function entriesRead(storage: MachineStorage): number {
  // The projection passes read A_i twice and L_i twice (a solve with L_i, one with L_i^T), and as
  // much again per refinement correction.
  if (storage.storage === 'csr') {
    const nnz = storage.rowPtr[storage.p];
    return storage.gram === null ? nnz : 2 * (1 + storage.refinement) * (nnz + storage.gram.symbolic.nnzL);
  }
  let entries = 0;
  if (storage.rows !== null) entries += extentSum(storage.rows.aStart, storage.rows.aEnd);
  if (storage.basis !== null) entries += extentSum(storage.basis.qStart, storage.basis.qEnd);
  return entries;
}

/** Entries of each row of A_i (its nonzero extent, or its stored entries): the work of cutting a machine's rows into chunks. */
export function rowEntries(machine: Pick<DenseMachineData, 'p' | 'aStart' | 'aEnd'> | CsrMachineData): Float64Array {
  const w = new Float64Array(machine.p);
  if ('aStart' in machine) for (let k = 0; k < machine.p; k++) w[k] = Math.max(0, machine.aEnd[k] - machine.aStart[k]);
  else for (let k = 0; k < machine.p; k++) w[k] = machine.a.rowPtr[k + 1] - machine.a.rowPtr[k];
  return w;
}
