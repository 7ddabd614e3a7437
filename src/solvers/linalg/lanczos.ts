/**
 * Extreme eigenvalues of a symmetric operator by the Lanczos process with full
 * reorthogonalization (classical Gram-Schmidt applied twice, "twice is enough").
 *
 * The operator is only applied to vectors, so the same code serves S's Gram matrix Q^T Q,
 * A^T A, the inverses (A^T A)^{-1} = A^{-1} A^{-T} through LU solves, and the small normal
 * matrices G^T G of the principal angles.
 *
 * Stopping rule: the Ritz pair (theta, y = V_k s) of T_k has residual |Op y - theta y| = |beta_k s_k|
 * (s_k the last component of the eigenvector of T_k). We stop when that bound is at most
 * `tolerance * |theta|` for every requested end of the spectrum, or when the Krylov space is
 * exhausted: beta_k = 0 (an invariant subspace: with a random start every eigenspace contributes a
 * direction, so T_k then holds every distinct eigenvalue, e.g. the identity after one step; beta at
 * rounding level, 4 eps |T_k|, counts as zero) or k = size (T_k is then similar to the operator).
 */
import { runSync, type Work } from '../cooperative.js';
import { SeededRandom } from '../random.js';
import { selectedKernels, type Kernels } from './kernels.js';
import { tridiagonalEigenvalue, tridiagonalEigenvector } from './tridiagonal.js';

export interface SymmetricOperator {
  readonly size: number;
  /** y = Op x; y never aliases x. */
  apply(x: Float64Array, y: Float64Array): void;
}

export interface LanczosOptions {
  which?: 'largest' | 'smallest' | 'both';
  /** Relative residual bound |beta_k s_k| / |theta| at which a Ritz value is accepted. */
  tolerance?: number;
  /** Default: the operator's size (exhaustion gives the exact answer). */
  maxIterations?: number;
  seed?: number;
}

export interface LanczosResult {
  /** Largest Ritz value (NaN when not requested). */
  largest: number;
  /** Smallest Ritz value (NaN when not requested). */
  smallest: number;
  iterations: number;
  /** Every requested Ritz value met the tolerance (or the space was exhausted). */
  converged: boolean;
  /** beta = 0 or k = size: the Ritz values are eigenvalues of the operator up to rounding. */
  exhausted: boolean;
  /** The residual bounds |beta_k s_k| of the returned Ritz values (0 when exhausted). */
  residualLargest: number;
  residualSmallest: number;
}

export const DEFAULT_LANCZOS_TOLERANCE = 1e-13;
const NATIVE_MIN_SIZE = 64;

export function* lanczosWork(kernels: Kernels, op: SymmetricOperator, options: LanczosOptions = {}): Work<LanczosResult> {
  const n = op.size;
  const which = options.which ?? 'largest';
  const tolerance = options.tolerance ?? DEFAULT_LANCZOS_TOLERANCE;
  const maxIterations = Math.min(options.maxIterations ?? n, n);
  const wantLargest = which !== 'smallest';
  const wantSmallest = which !== 'largest';

  const alpha = new Float64Array(maxIterations);
  const beta = new Float64Array(maxIterations);
  const eigvec = new Float64Array(maxIterations);
  let capacity = Math.min(maxIterations, 16);
  let basis = new Float64Array(capacity * n);

  const v = basis.subarray(0, n);
  new SeededRandom(options.seed ?? 0x51ed2701).fillSigned(v);
  normalize(v);
  const w = new Float64Array(n);
  const h = new Float64Array(maxIterations);
  // With the addon's kernels: the two passes over the basis are h = V w and w -= V^T h (V: k x n, by rows);
  // short vectors stay in TypeScript, where the call into the addon would cost more than the loop.
  const blas = n >= NATIVE_MIN_SIZE ? kernels.blas : null;

  let largest = NaN;
  let smallest = NaN;
  let residualLargest = Infinity;
  let residualSmallest = Infinity;
  let k = 0;
  let tNorm = 0;
  let exhausted = false;
  let converged = false;

  while (k < maxIterations) {
    const vk = basis.subarray(k * n, (k + 1) * n);
    op.apply(vk, w);
    alpha[k] = 0;
    // Full reorthogonalization against v_0..v_k (subsumes the three-term recurrence), twice.
    for (let pass = 0; pass < 2; pass++) {
      if (blas) {
        blas.dgemv(false, k + 1, n, 1, basis, 0, n, w, 0, 0, h, 0);
        blas.dgemv(true, k + 1, n, -1, basis, 0, n, h, 0, 1, w, 0);
        alpha[k] += h[k];
        continue;
      }
      for (let j = 0; j <= k; j++) {
        const off = j * n;
        let s = 0;
        for (let i = 0; i < n; i++) s += basis[off + i] * w[i];
        h[j] = s;
      }
      for (let j = 0; j <= k; j++) {
        const off = j * n;
        const s = h[j];
        if (s === 0) continue;
        for (let i = 0; i < n; i++) w[i] -= s * basis[off + i];
      }
      alpha[k] += h[k]; // the coefficient of v_k: alpha_k plus its rounding correction
    }
    let bk = 0;
    for (let i = 0; i < n; i++) bk += w[i] * w[i];
    bk = Math.sqrt(bk);
    beta[k] = bk;
    tNorm = Math.max(tNorm, Math.abs(alpha[k]) + bk + (k > 0 ? beta[k - 1] : 0));
    k++;

    // beta at rounding level: the Krylov space is invariant to working precision.
    const done = k === n || bk <= 4 * Number.EPSILON * tNorm;
    if (wantLargest) {
      largest = tridiagonalEigenvalue(alpha, beta, k, k - 1);
      residualLargest = done ? 0 : bk * Math.abs(tridiagonalEigenvector(alpha, beta, k, largest, eigvec)[k - 1]);
    }
    if (wantSmallest) {
      smallest = tridiagonalEigenvalue(alpha, beta, k, 0);
      residualSmallest = done ? 0 : bk * Math.abs(tridiagonalEigenvector(alpha, beta, k, smallest, eigvec)[k - 1]);
    }
    if (done) {
      exhausted = true;
      converged = true;
      break;
    }
    const okLargest = !wantLargest || residualLargest <= tolerance * Math.abs(largest);
    const okSmallest = !wantSmallest || residualSmallest <= tolerance * Math.abs(smallest);
    if (okLargest && okSmallest) {
      converged = true;
      break;
    }
    if (k === maxIterations) break;
    if (k === capacity) {
      capacity = Math.min(maxIterations, capacity * 2);
      const grown = new Float64Array(capacity * n);
      grown.set(basis);
      basis = grown;
    }
    const next = basis.subarray(k * n, (k + 1) * n);
    const inv = 1 / bk;
    for (let i = 0; i < n; i++) next[i] = w[i] * inv;
    yield undefined;
  }
  return {
    largest,
    smallest,
    iterations: k,
    converged,
    exhausted,
    residualLargest: wantLargest ? residualLargest : NaN,
    residualSmallest: wantSmallest ? residualSmallest : NaN,
  };
}

export function lanczos(op: SymmetricOperator, options: LanczosOptions = {}, kernels: Kernels = selectedKernels()): LanczosResult {
  return runSync(lanczosWork(kernels, op, options));
}

function normalize(x: Float64Array): void {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * x[i];
  const inv = 1 / Math.sqrt(s);
  for (let i = 0; i < x.length; i++) x[i] *= inv;
}
