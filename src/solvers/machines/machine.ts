/**
 * One machine's operators, built by a thread on its copy of the machine's storage (./storage.ts):
 * the products the algorithms are made of (A_i v, A_i^T w, the null-space projection P_i v, the
 * minimum-norm local solution) and the fused per-machine passes of the iterations, each reading
 * the machine's data once (APC's consensus pass, Cimmino's pass, the gradient methods' pass).
 * Vectors of length n are global (v, x, xbar); a pass's own output ("term") is on the machine's
 * column support, c entries from an offset, for the taskmaster to add up in machine order.
 */
import type { DenseMachineStorage } from './storage.js';
import { accumulateRowCombination, fusedRowPass, multiplyRows } from '../linalg/rowKernels.js';
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
  /**
   * The gradient methods' pass at x: term[offset .. offset + c) = A_i^T (A_i x - b_i) on the
   * support, in one sweep over A_i; returns |A_i x - b_i|^2.
   */
  gradientTerm(x: Float64Array, term: Float64Array, offset: number): number;
  /**
   * APC's pass at xbar, advancing x_i = local[base .. base + n) (whose Q_i^T x_i is qtx0):
   * |xbar - x_i|^2 and |A_i xbar - b_i|^2 into scalars[at + DISTANCE2] and scalars[at + RESIDUAL2],
   * then x_i <- x_i + gamma P_i (xbar - x_i).
   */
  consensusStep(gamma: number, xbar: Float64Array, local: Float64Array, base: number, scalars: Float64Array, at: number): void;
  /** Cimmino's pass at x: term on the support = A_i^T (A_i A_i^T)^{-1} (b_i - A_i x); returns |b_i - A_i x|^2. */
  cimminoTerm(x: Float64Array, term: Float64Array, offset: number): number;
}

/** Offsets of APC's two scalars per machine. */
export const RESIDUAL2 = 0;
export const DISTANCE2 = 1;

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
  readonly p: number;
  private readonly storage: DenseMachineStorage;
  private readonly n: number;
  private readonly scratch: Scratch;
  private readonly kernels: PassKernels;
  /** Nonzero extents of the rows of R (row k: [k, p)), for R^T w with the row kernels. */
  private readonly rStart: Int32Array;
  private readonly rEnd: Int32Array;
  /** Some row of Q_i^T is zero: A_i has dependent rows (a tall system), R has no inverse to solve with. */
  private readonly rankDeficient: boolean;

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
  private onSupport(v: Float64Array): Float64Array {
    const { full, c, cols } = this.storage;
    if (full) return v;
    const { supportX } = this.scratch;
    for (let t = 0; t < c; t++) supportX[t] = v[cols[t]];
    return supportX;
  }

  private rows() {
    const { rows } = this.storage;
    if (rows === null) throw missing('rows of A_i');
    return rows;
  }

  private basis() {
    const { basis } = this.storage;
    if (basis === null) throw missing('basis Q_i');
    return basis;
  }

  /** y[yOffset + j] += scale (X^T w)_j for X = A_i or Q_i^T (p x c on the support). */
  private combineRows(
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

  gradientTerm(x: Float64Array, term: Float64Array, offset: number): number {
    const { p, c } = this.storage;
    const { a, aStart, aEnd, b } = this.rows();
    const residual = this.scratch.rowValues;
    const xs = this.onSupport(x);
    term.fill(0, offset, offset + c);
    fusedRowPass(this.kernels.rows, a, p, c, aStart, aEnd, xs, b, residual, 0, 1, term, offset);
    let residual2 = 0;
    for (let k = 0; k < p; k++) residual2 += residual[k] * residual[k];
    return residual2;
  }

  /**
   * One pass over Q_i: |xbar - x_i|^2; x_i += gamma (xbar - x_i); row by row w_k = q_k . xbar - qtx0_k
   * and x_i -= gamma w_k q_k (= x_i + gamma P_i (xbar - x_i) overall, since Q_i^T x_i = qtx0);
   * |A_i xbar - b_i|^2 = |R^T w_i|^2.
   */
  consensusStep(gamma: number, xbar: Float64Array, local: Float64Array, base: number, scalars: Float64Array, at: number): void {
    const { n, kernels } = this;
    const { p, c, full, cols } = this.storage;
    const { q, qStart, qEnd, r, qtx0, localResidual2 } = this.basis();
    const { supportX, supportUpdate } = this.scratch;
    const w = this.scratch.rowValues;
    let d2 = 0;
    for (let j = 0; j < n; j++) {
      const d = xbar[j] - local[base + j];
      d2 += d * d;
      local[base + j] += gamma * d;
    }
    if (full) {
      fusedRowPass(kernels.rows, q, p, c, qStart, qEnd, xbar, qtx0, w, 0, -gamma, local, base);
    } else {
      for (let t = 0; t < c; t++) {
        supportX[t] = xbar[cols[t]];
        supportUpdate[t] = 0;
      }
      fusedRowPass(kernels.rows, q, p, c, qStart, qEnd, supportX, qtx0, w, 0, gamma, supportUpdate, 0);
      for (let t = 0; t < c; t++) local[base + cols[t]] -= supportUpdate[t];
    }
    // A_i xbar - A_i A_i^+ b_i = R^T w_i (R upper triangular: row k of R is nonzero on [k, p) at most), orthogonal
    // to b_i - A_i A_i^+ b_i, the part of b_i outside the span of dependent rows (localResidual2, else 0).
    const residual = this.scratch.rowValues2;
    residual.fill(0, 0, p);
    accumulateRowCombination(kernels.rows, r, p, p, this.rStart, this.rEnd, w, 0, 1, residual);
    let residual2 = localResidual2;
    for (let k = 0; k < p; k++) residual2 += residual[k] * residual[k];
    scalars[at + RESIDUAL2] = residual2;
    scalars[at + DISTANCE2] = d2;
  }

  /** r_i = b_i - A_i x (one pass over A_i), y = R^{-T} r_i, A_i^+ r_i = Q_i y (one pass over Q_i). */
  cimminoTerm(x: Float64Array, term: Float64Array, offset: number): number {
    const { p, c } = this.storage;
    const { a, aStart, aEnd, b } = this.rows();
    const { q, qStart, qEnd, r } = this.basis();
    const residual = this.scratch.rowValues;
    const solved = this.scratch.rowValues2;
    const xs = this.onSupport(x);
    multiplyRows(this.kernels.rows, a, p, c, aStart, aEnd, xs, residual, 0);
    let residual2 = 0;
    for (let k = 0; k < p; k++) {
      const s = b[k] - residual[k];
      residual[k] = s;
      residual2 += s * s;
    }
    if (this.rankDeficient) {
      // A_i^+ (b_i - A_i x) = Q_i (qtx0 - Q_i^T x) (the pseudo-inverse: the projection onto the local least-squares solutions).
      const { qtx0 } = this.basis();
      multiplyRows(this.kernels.rows, q, p, c, qStart, qEnd, xs, solved, 0);
      for (let k = 0; k < p; k++) solved[k] = qtx0[k] - solved[k];
    } else {
      this.kernels.solveRTransposed(r, p, residual, solved);
    }
    term.fill(0, offset, offset + c);
    accumulateRowCombination(this.kernels.rows, q, p, c, qStart, qEnd, solved, 0, 1, term, offset);
    return residual2;
  }
}
