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
 */
import type { MachineData } from '../distributed/distributedSystem.js';

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

export type MachineStorage = DenseMachineStorage;

/** Which parts of a machine a run's passes read. */
export interface StorageParts {
  readonly rows: boolean;
  readonly basis: boolean;
}

/** Machine `machine`'s dense storage with the parts a run reads. */
export function denseStorage(machine: MachineData, parts: StorageParts): DenseMachineStorage {
  const { p, c, full, cols, a, aStart, aEnd, b, q, qStart, qEnd, r, qtx0 } = machine;
  return {
    storage: 'dense',
    p,
    c,
    full,
    cols,
    rows: parts.rows ? { a, aStart, aEnd, b } : null,
    basis: parts.basis ? { q, qStart, qEnd, r, qtx0 } : null,
  };
}

/** Rows [from, to) of a machine's A_i and b_i (views, no copy), on the machine's support: a chunk of the gradient pass. */
export function denseRowRange(machine: MachineData, from: number, to: number): DenseMachineStorage {
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

/** Entries of row k of a matrix with the given extents: its work in a pass (zero for an empty extent). */
function extentSum(start: Int32Array, end: Int32Array): number {
  let entries = 0;
  for (let k = 0; k < start.length; k++) entries += Math.max(0, end[k] - start[k]);
  return entries;
}

/** Matrix entries one pass over the storage reads (its parts' nonzero extents): what orders and places the chunks. */
export function entriesRead(storage: MachineStorage): number {
  let entries = 0;
  if (storage.rows !== null) entries += extentSum(storage.rows.aStart, storage.rows.aEnd);
  if (storage.basis !== null) entries += extentSum(storage.basis.qStart, storage.basis.qEnd);
  return entries;
}

/** Entries of each row of A_i (its nonzero extent): the work of cutting a machine's rows into chunks. */
export function rowEntries(machine: MachineData): Float64Array {
  const w = new Float64Array(machine.p);
  for (let k = 0; k < machine.p; k++) w[k] = Math.max(0, machine.aEnd[k] - machine.aStart[k]);
  return w;
}
