/**
 * A machine on CSR storage (./storage.ts): plain loops over the stored entries (no vector kernels:
 * a sparse row has too few entries for them to pay), except the fused gradient sweep.
 *  - The gradient methods' step (./gradientPass.ts) reads each stored entry of A_i once per
 *    iteration: row k's dot product r_k = a_k . x - b_k, then, with the row still in cache, r_k a_k
 *    added to the term. It runs on the thread's CSR kernel (`csrGradient`, ../linalg/csrKernels.ts:
 *    native, WebAssembly or TypeScript, the same sums), reading x in place when the support is a
 *    range of consecutive columns (`firstColumn`: the strips of a banded matrix), else gathered once
 *    onto the support.
 *  - The projections go through the sparse Cholesky factor L_i of G_i = A_i A_i^T (factored once
 *    per system, ../distributed/sparseSystem.ts): A_i^+ r = A_i^T G_i^{-1} r with
 *    G_i^{-1} = P_i^T L_i^{-T} L_i^{-1} P_i, so P_i v = v - A_i^T G_i^{-1} A_i v costs two passes
 *    over A_i and two triangular solves, O(nnz(A_i) + nnz(L_i)); nothing p x p or n x p is dense.
 * The passes' steps (./cimminoPass.ts, ./consensusPass.ts) are made of rowProducts, solveGram and
 * addTranspose below.
 */
import { UnsupportedMatrixError } from '../errors.js';
import type { MachineOperator, Scratch } from './machine.js';
import { csrAddTranspose, csrRowProducts, type CsrGradientKernel } from '../linalg/csrKernels.js';
import type { GramSolver, PassKernels } from './placement.js';
import type { CsrMachineStorage } from './storage.js';

/**
 * y = G_i^{-1} r (r of length p, kept) with `refinement` corrections s = r - A_i (A_i^T y), y += G_i^{-1} s,
 * for A_i's rows with support-local column indices; u (length c) and correction (length p) are work vectors.
 */
export function refinedGramSolve(
  gram: GramSolver,
  rows: { readonly p: number; readonly c: number; readonly rowPtr: Int32Array; readonly colIdx: Int32Array; readonly values: Float64Array },
  refinement: number,
  r: Float64Array,
  y: Float64Array,
  u: Float64Array,
  correction: Float64Array,
): void {
  const { p, c, rowPtr, colIdx, values } = rows;
  gram.solve(r, y);
  for (let step = 0; step < refinement; step++) {
    u.fill(0, 0, c);
    for (let k = 0; k < p; k++) {
      const yk = y[k];
      for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) u[colIdx[e]] += yk * values[e];
    }
    for (let k = 0; k < p; k++) {
      let s = r[k];
      for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) s -= values[e] * u[colIdx[e]];
      correction[k] = s;
    }
    gram.solve(correction, correction);
    for (let k = 0; k < p; k++) y[k] += correction[k];
  }
}

export class CsrMachine implements MachineOperator {
  readonly kind = 'csr';
  readonly p: number;
  readonly storage: CsrMachineStorage;
  readonly n: number;
  /** The thread's work vectors (shared by its machines). */
  readonly scratch: Scratch;
  /** This thread's solver with G_i's factor (from the run's kernels: solves are not reentrant), or null for a gradient chunk. */
  private readonly gram: GramSolver | null;
  private readonly kernels: PassKernels;
  /** The fused gradient pass on this machine's rows, bound at its first use (projection machines never use it). */
  private gradient: CsrGradientKernel | null = null;
  /** cols[0] when the support is the consecutive columns cols[0] .. cols[0] + c - 1 (x is then read in place), else -1. */
  readonly firstColumn: number;

  constructor(storage: CsrMachineStorage, n: number, scratch: Scratch, kernels: PassKernels) {
    this.storage = storage;
    this.p = storage.p;
    this.n = n;
    this.scratch = scratch;
    this.kernels = kernels;
    this.gram = storage.gram === null ? null : kernels.gramSolver(storage.gram);
    const { c, cols } = storage;
    this.firstColumn = c === 0 ? 0 : cols[c - 1] - cols[0] === c - 1 ? cols[0] : -1;
  }

  /** v on the support: v itself when the support is full (local = global columns), else gathered into the scratch. */
  onSupport(v: Float64Array): Float64Array {
    const { full, c, cols } = this.storage;
    if (full) return v;
    const { supportX } = this.scratch;
    for (let t = 0; t < c; t++) supportX[t] = v[cols[t]];
    return supportX;
  }

  /** out[k] = a_k . v_support - bias[k] for k < p (bias null: 0); returns |out|^2. */
  rowProducts(v: Float64Array, bias: Float64Array | null, out: Float64Array): number {
    return csrRowProducts(this.storage, this.onSupport(v), bias, out);
  }

  /**
   * y = G_i^{-1} r (r of length p, kept): the Cholesky solve, then `refinement` corrections
   * s = r - A_i (A_i^T y), y += G_i^{-1} s. The residual goes through A_i and A_i^T, not through the
   * formed G_i, so each correction divides the error by ~1 / (u kappa(G_i)), where forming G_i
   * squared A_i's condition number (../distributed/sparseSystem.ts chooses the count per machine).
   */
  solveGram(r: Float64Array, y: Float64Array): void {
    const { gram } = this;
    if (gram === null) throw new UnsupportedMatrixError('This sparse machine holds no factor of A_i A_i^T: the run did not ask for it.');
    refinedGramSolve(gram, this.storage, this.storage.refinement, r, y, this.scratch.support, this.scratch.rowValues3);
  }

  /** y[offset + cols[t]] += scale (A_i^T w)_t over the support (global: `global`), else y[offset + t] (support-local). */
  addTranspose(w: Float64Array, wOffset: number, scale: number, y: Float64Array, offset: number, global: boolean): void {
    csrAddTranspose(this.storage, w, wOffset, scale, y, offset, global ? this.storage.cols : null);
  }

  multiply(v: Float64Array, out: Float64Array, outOffset: number): void {
    const products = this.scratch.rowValues;
    this.rowProducts(v, null, products);
    out.set(products.subarray(0, this.p), outOffset);
  }

  multiplyTransposeAdd(w: Float64Array, wOffset: number, scale: number, y: Float64Array, yOffset: number): void {
    this.addTranspose(w, wOffset, scale, y, yOffset, true);
  }

  /** The thread's fused CSR pass A_i^T (A_i x - b_i) on this machine's rows (../linalg/csrKernels.ts), bound on first use. */
  csrGradient(): CsrGradientKernel {
    this.gradient ??= this.kernels.csrGradient(this.storage);
    return this.gradient;
  }

  project(v: Float64Array, out: Float64Array, outOffset: number): void {
    const { rowValues: r, rowValues2: y } = this.scratch;
    this.rowProducts(v, null, r);
    this.solveGram(r, y);
    out.set(v.subarray(0, this.n), outOffset);
    this.addTranspose(y, 0, -1, out, outOffset, true);
  }

  minimumNormSolution(out: Float64Array, outOffset: number): void {
    const y = this.scratch.rowValues2;
    this.solveGram(this.storage.b, y);
    out.fill(0, outOffset, outOffset + this.n);
    this.addTranspose(y, 0, 1, out, outOffset, true);
  }

  /** x0 - A_i^T G_i^{-1} (A_i x0 - b_i). */
  projectOntoSolutions(x0: Float64Array, out: Float64Array, outOffset: number): void {
    const { rowValues: r, rowValues2: y } = this.scratch;
    this.rowProducts(x0, this.storage.b, r);
    this.solveGram(r, y);
    out.set(x0.subarray(0, this.n), outOffset);
    this.addTranspose(y, 0, -1, out, outOffset, true);
  }

  residual(x: Float64Array, out: Float64Array, outOffset: number): number {
    const products = this.scratch.rowValues;
    const residual2 = this.rowProducts(x, this.storage.b, products);
    out.set(products.subarray(0, this.p), outOffset);
    return residual2;
  }
}
