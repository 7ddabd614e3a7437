/**
 * A machine on CSR storage (./storage.ts): plain loops over the stored entries (no vector kernels:
 * a sparse row has too few entries for them to pay). The gradient methods' pass reads each stored
 * entry of A_i once per iteration: row k's dot product r_k = a_k . x - b_k, then, with the row
 * still in cache, r_k a_k added to the term. The projections (P_i v, the minimum-norm start, APC's
 * and Cimmino's passes) need a factorization of A_i A_i^T this storage does not hold.
 */
import { UnsupportedMatrixError } from '../errors.js';
import type { MachineOperator, Scratch } from './machine.js';
import type { CsrMachineStorage } from './storage.js';

function noProjection(what: string): Error {
  return new UnsupportedMatrixError(
    `${what} on a sparse machine needs a factorization of A_i A_i^T, which sparse storage does not hold; ` +
      'the gradient methods (dgd, dnag, dhbm) run on sparse systems.',
    { storage: 'csr' },
  );
}

export class CsrMachine implements MachineOperator {
  readonly p: number;
  private readonly storage: CsrMachineStorage;
  private readonly scratch: Scratch;

  constructor(storage: CsrMachineStorage, _n: number, scratch: Scratch) {
    this.storage = storage;
    this.p = storage.p;
    this.scratch = scratch;
  }

  /** v on the support: v itself when the support is full (local = global columns), else gathered into the scratch. */
  private onSupport(v: Float64Array): Float64Array {
    const { full, c, cols } = this.storage;
    if (full) return v;
    const { supportX } = this.scratch;
    for (let t = 0; t < c; t++) supportX[t] = v[cols[t]];
    return supportX;
  }

  multiply(v: Float64Array, out: Float64Array, outOffset: number): void {
    const { p, rowPtr, colIdx, values } = this.storage;
    const vs = this.onSupport(v);
    for (let k = 0; k < p; k++) {
      let s = 0;
      for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) s += values[e] * vs[colIdx[e]];
      out[outOffset + k] = s;
    }
  }

  multiplyTransposeAdd(w: Float64Array, wOffset: number, scale: number, y: Float64Array, yOffset: number): void {
    const { p, cols, rowPtr, colIdx, values } = this.storage;
    for (let k = 0; k < p; k++) {
      const coef = scale * w[wOffset + k];
      for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) y[yOffset + cols[colIdx[e]]] += coef * values[e];
    }
  }

  gradientTerm(x: Float64Array, term: Float64Array, offset: number): number {
    const { p, c, rowPtr, colIdx, values, b } = this.storage;
    const xs = this.onSupport(x);
    term.fill(0, offset, offset + c);
    let residual2 = 0;
    for (let k = 0; k < p; k++) {
      const from = rowPtr[k];
      const to = rowPtr[k + 1];
      let s = 0;
      for (let e = from; e < to; e++) s += values[e] * xs[colIdx[e]];
      const r = s - b[k];
      residual2 += r * r;
      for (let e = from; e < to; e++) term[offset + colIdx[e]] += r * values[e];
    }
    return residual2;
  }

  project(): void {
    throw noProjection('The projection P_i v');
  }

  minimumNormSolution(): void {
    throw noProjection('The minimum-norm local solution');
  }

  consensusStep(): void {
    throw noProjection("APC's consensus pass");
  }

  cimminoTerm(): number {
    throw noProjection("Block Cimmino's pass");
  }
}
