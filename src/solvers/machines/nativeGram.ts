/**
 * The machines' Gram factors on the native backend's sparse part (CHOLMOD, native/src/sparse_native.c):
 *  - `factorGramNative`: P_i G_i P_i^T = L_i L_i^T by CHOLMOD (its AMD ordering, supernodal where it
 *    pays), adopted as an ordinary CholeskyFactor (../sparse/sparseCholesky.ts adoptCholesky: the same
 *    layout, the same pivot test, the same SingularMatrixError; CHOLMOD's analysis stands, none is
 *    redone in TypeScript), so the analysis and the storage that carries it to the solver threads do
 *    not depend on where it was computed. CHOLMOD's own objects are freed inside the call.
 *  - `NativeGramSolver`: x = G_i^{-1} b (or either half, L^{-1} P b and P^T L^{-T} y) by the addon's triangular solves, on a handle the addon
 *    checked once; its finalizer releases it when the machine that owns it is collected, or `release` at once
 *    (a factor made for a few solves: Node runs such finalizers only on a later turn of the event loop).
 * placement.ts decides when these are used; nothing else imports this file.
 */
import type { NativeSolverHandle, NativeSparse } from '../linalg/backend.js';
import type { CsrMatrix } from '../sparse/csr.js';
import { adoptCholesky, type CholeskyFactor, type CholeskySymbolic } from '../sparse/sparseCholesky.js';

export function factorGramNative(sparse: NativeSparse, g: CsrMatrix): CholeskyFactor {
  return adoptCholesky(g, sparse.cholmodFactor(g.rows, g.rowPtr, g.colIdx, g.values));
}

/** Solves with one machine's factor (one per thread: the handle's work vector is not shared). */
export class NativeGramSolver {
  private readonly sparse: NativeSparse;
  private readonly handle: NativeSolverHandle;

  constructor(sparse: NativeSparse, factor: { readonly symbolic: CholeskySymbolic; readonly values: Float64Array }) {
    const { n, colPtr, rowIdx, ordering } = factor.symbolic;
    this.sparse = sparse;
    this.handle = sparse.choleskySolver(n, colPtr, rowIdx, factor.values, ordering.perm);
  }

  /** x = G^{-1} b (b and x may be the same array). */
  solve(b: Float64Array, x: Float64Array): void {
    this.sparse.choleskySolve(this.handle, b, 0, x, 0);
  }

  /** y = B^{-1} b = L^{-1} P b (B = P^T L, B B^T = G). */
  solveLower(b: Float64Array, y: Float64Array): void {
    this.sparse.choleskySolveLower(this.handle, b, 0, y, 0);
  }

  /** x = B^{-T} y = P^T L^{-T} y. */
  solveUpper(y: Float64Array, x: Float64Array): void {
    this.sparse.choleskySolveUpper(this.handle, y, 0, x, 0);
  }

  /** Lets go of the factor now (a factor made for a few solves); the solver refuses solves after. */
  release(): void {
    this.sparse.choleskyRelease(this.handle);
  }
}
