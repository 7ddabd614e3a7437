/**
 * One machine's operators, built by a thread on its copy of the machine's storage (./storage.ts):
 * the products the algorithms are made of (A_i v, A_i^T w, A_i x - b_i, the null-space projection
 * P_i v, the minimum-norm local solution), and the parts a pass's fused step reads (the storage,
 * the thread's kernels and scratch, the support gather): the steps themselves live with their
 * passes (./machinePass.ts). Vectors of length n are global (v, x, xbar); a pass's own output
 * ("term") is on the machine's column support, c entries from an offset, for the taskmaster to add
 * up in machine order.
 */
import type { DenseMachineStorage } from './storage.js';
import { accumulateRowCombination, multiplyRows } from '../linalg/rowKernels.js';
import type { PassKernels } from './placement.js';

export interface MachineOperator {
  readonly p: number;
  /** out[outOffset + k] = (A_i v)_k, k < p. */
  multiply(v: Float64Array, out: Float64Array, outOffset: number): void;
  /** y[yOffset + j] += scale (A_i^T w)_j for every column j < n, w read from wOffset. */
  multiplyTransposeAdd(w: Float64Array, wOffset: number, scale: number, y: Float64Array, yOffset: number): void;
  /** out[outOffset + j] = (P_i v)_j, P_i = I - A_i^T (A_i A_i^T)^{-1} A_i the projector onto N(A_i). */
  project(v: Float64Array, out: Float64Array, outOffset: number): void;
  /** out[outOffset + j] = x_i(0)_j, the minimum-norm solution A_i^T (A_i A_i^T)^{-1} b_i of A_i x = b_i. */
  minimumNormSolution(out: Float64Array, outOffset: number): void;
  /** out[outOffset + j] = (x0 + A_i^+ (b_i - A_i x0))_j, the projection of x0 onto {x : A_i x = b_i} (a warm start's x_i(0)). */
  projectOntoSolutions(x0: Float64Array, out: Float64Array, outOffset: number): void;
  /** out[outOffset + k] = (A_i x - b_i)_k, k < p; returns |A_i x - b_i|^2. */
  residual(x: Float64Array, out: Float64Array, outOffset: number): number;
}

/** One thread's work vectors, shared by its machines (they run one at a time): sized for the largest. */
export class Scratch {
  /** A vector gathered on a partial support. */
  readonly supportX: Float64Array;
  /** A product accumulated on a partial support before one scatter. */
  readonly supportUpdate: Float64Array;
  /** A vector on any machine's support (full or not). */
  readonly support: Float64Array;
  /** Three vectors of a machine's row count (residuals, solves, corrections). */
  readonly rowValues: Float64Array;
  readonly rowValues2: Float64Array;
  readonly rowValues3: Float64Array;

  constructor(largestPartialSupport: number, largestSupport: number, largestRows: number) {
    this.supportX = new Float64Array(Math.max(1, largestPartialSupport));
    this.supportUpdate = new Float64Array(Math.max(1, largestPartialSupport));
    this.support = new Float64Array(Math.max(1, largestSupport));
    this.rowValues = new Float64Array(Math.max(1, largestRows));
    this.rowValues2 = new Float64Array(Math.max(1, largestRows));
    this.rowValues3 = new Float64Array(Math.max(1, largestRows));
  }
}

function missing(part: string): Error {
  return new Error(`This machine's storage holds no ${part}: the run did not ask for it.`);
}

/**
 * A machine on dense storage: the row kernels (../linalg/rowKernels.ts) over A_i and Q_i^T, each
 * row read over its nonzero extent only; P_i v = v - Q_i (Q_i^T v), A_i^+ r = Q_i R^{-T} r.
 */
export class DenseMachine implements MachineOperator {
  readonly kind = 'dense';
  readonly p: number;
  readonly storage: DenseMachineStorage;
  readonly n: number;
  /** The thread's work vectors (shared by its machines). */
  readonly scratch: Scratch;
  readonly kernels: PassKernels;
  /** Nonzero extents of the rows of R (row k: [k, p)), for R^T w with the row kernels. */
  readonly rStart: Int32Array;
  readonly rEnd: Int32Array;
  /** Some row of Q_i^T is zero: A_i has dependent rows (a tall system), R has no inverse to solve with. */
  readonly rankDeficient: boolean;

  constructor(storage: DenseMachineStorage, n: number, scratch: Scratch, kernels: PassKernels) {
    this.storage = storage;
    this.p = storage.p;
    this.n = n;
    this.scratch = scratch;
    this.kernels = kernels;
    const { p } = storage;
    this.rStart = storage.basis === null ? new Int32Array(0) : Int32Array.from({ length: p }, (_, k) => k);
    this.rEnd = storage.basis === null ? new Int32Array(0) : new Int32Array(p).fill(p);
    const { basis } = storage;
    let rankDeficient = false;
    if (basis !== null) for (let k = 0; k < p && !rankDeficient; k++) rankDeficient = basis.qEnd[k] <= basis.qStart[k];
    this.rankDeficient = rankDeficient;
  }

  /** v on the support: v itself when the support is full, else gathered into the scratch. */
  onSupport(v: Float64Array): Float64Array {
    const { full, c, cols } = this.storage;
    if (full) return v;
    const { supportX } = this.scratch;
    for (let t = 0; t < c; t++) supportX[t] = v[cols[t]];
    return supportX;
  }

  /** A_i and b_i; throws when the storage does not hold them. */
  rows() {
    const { rows } = this.storage;
    if (rows === null) throw missing('rows of A_i');
    return rows;
  }

  /** Q_i^T, R and qtx0; throws when the storage does not hold them. */
  basis() {
    const { basis } = this.storage;
    if (basis === null) throw missing('basis Q_i');
    return basis;
  }

  /** y[yOffset + j] += scale (X^T w)_j for X = A_i or Q_i^T (p x c on the support). */
  combineRows(
    x: Float64Array,
    start: Int32Array,
    end: Int32Array,
    w: Float64Array,
    wOffset: number,
    scale: number,
    y: Float64Array,
    yOffset: number,
  ): void {
    const { p, c, full, cols } = this.storage;
    if (full) {
      accumulateRowCombination(this.kernels.rows, x, p, c, start, end, w, wOffset, scale, y, yOffset);
      return;
    }
    const { supportUpdate } = this.scratch;
    supportUpdate.fill(0, 0, c);
    accumulateRowCombination(this.kernels.rows, x, p, c, start, end, w, wOffset, scale, supportUpdate, 0);
    for (let t = 0; t < c; t++) y[yOffset + cols[t]] += supportUpdate[t];
  }

  multiply(v: Float64Array, out: Float64Array, outOffset: number): void {
    const { a, aStart, aEnd } = this.rows();
    multiplyRows(this.kernels.rows, a, this.p, this.storage.c, aStart, aEnd, this.onSupport(v), out, outOffset);
  }

  multiplyTransposeAdd(w: Float64Array, wOffset: number, scale: number, y: Float64Array, yOffset: number): void {
    const { a, aStart, aEnd } = this.rows();
    this.combineRows(a, aStart, aEnd, w, wOffset, scale, y, yOffset);
  }

  project(v: Float64Array, out: Float64Array, outOffset: number): void {
    const { q, qStart, qEnd } = this.basis();
    const w = this.scratch.rowValues;
    multiplyRows(this.kernels.rows, q, this.p, this.storage.c, qStart, qEnd, this.onSupport(v), w, 0);
    out.set(v.subarray(0, this.n), outOffset);
    this.combineRows(q, qStart, qEnd, w, 0, -1, out, outOffset);
  }

  minimumNormSolution(out: Float64Array, outOffset: number): void {
    const { n } = this;
    const { p, c, cols } = this.storage;
    const { q, qtx0 } = this.basis();
    out.fill(0, outOffset, outOffset + n);
    // x_i(0) = Q_i R^{-T} b_i = sum_k qtx0_k q_k
    for (let k = 0; k < p; k++) {
      const coef = qtx0[k];
      const qk = k * c;
      for (let t = 0; t < c; t++) out[outOffset + cols[t]] += coef * q[qk + t];
    }
  }

  /** x0 - Q_i (Q_i^T x0 - qtx0), as project() with Q_i^T x0 shifted by qtx0 = R^{-T} b_i. */
  projectOntoSolutions(x0: Float64Array, out: Float64Array, outOffset: number): void {
    const { q, qStart, qEnd, qtx0 } = this.basis();
    const { p } = this;
    const w = this.scratch.rowValues;
    multiplyRows(this.kernels.rows, q, p, this.storage.c, qStart, qEnd, this.onSupport(x0), w, 0);
    for (let k = 0; k < p; k++) w[k] -= qtx0[k];
    out.set(x0.subarray(0, this.n), outOffset);
    this.combineRows(q, qStart, qEnd, w, 0, -1, out, outOffset);
  }

  residual(x: Float64Array, out: Float64Array, outOffset: number): number {
    const { a, aStart, aEnd, b } = this.rows();
    const { p } = this;
    multiplyRows(this.kernels.rows, a, p, this.storage.c, aStart, aEnd, this.onSupport(x), out, outOffset);
    let residual2 = 0;
    for (let k = 0; k < p; k++) {
      const r = out[outOffset + k] - b[k];
      out[outOffset + k] = r;
      residual2 += r * r;
    }
    return residual2;
  }
}
