// Past 500 lines: thick-restart Lanczos with the small tridiagonal eigensolver its restarts need.
/**
 * The largest eigenvalue of a symmetric positive (semi)definite operator known only through
 * `apply(x, y)`, with an a-posteriori relative error bound, for the sparse path (nothing dense): every
 * extreme eigenvalue it needs is the largest one of some operator (A^T A, (A^T A)^{-1} through a
 * sparse LU, the block-Jacobi-scaled Gram matrix of S, the cross-Gram blocks of the principal
 * angles). The smallest eigenvalue comes from the largest one of the inverse (shift-invert at 0)
 * when the caller can solve with the operator.
 *
 * Method: thick-restart Lanczos (Wu & Simon, SIAM J. Matrix Anal. Appl. 22 (2000)) with full
 * reorthogonalization (classical Gram-Schmidt twice). The basis holds at most `basisSize` + 1
 * vectors of length n, allocated once (a KrylovWorkspace can be reused across calls): memory
 * O(basisSize n), never n x n. When the basis is full, the `kept` best Ritz vectors and the last
 * Lanczos vector become the start of the next cycle; the projected matrix is then diagonal plus one
 * "arrow" row (the Ritz values and the couplings beta_m s_i) and tridiagonal after it, so its
 * eigenpairs come from a small dense symmetric eigensolver (Householder tridiagonalization and QL).
 *
 * Error bound. Let (theta_1, y_1) be the top Ritz pair (|y_1| = 1) and rho_1 = |Op y_1 - theta_1 y_1|,
 * which equals beta_m |s_1[last]| in exact arithmetic (s_1 the eigenvector of the projected matrix).
 *  - theta_1 = y_1^T Op y_1 is a Rayleigh quotient, so theta_1 <= lambda_max (Courant-Fischer).
 *  - Some eigenvalue lies within rho_1 of theta_1 (the Krylov-Bogoliubov / Weinberger residual bound
 *    for symmetric matrices). Taking it to be lambda_max (the Krylov space from a random start has
 *    not missed the top of the spectrum: the standing assumption of every Krylov method, ARPACK's
 *    included, whose own test is this residual against tol |theta|): 0 <= lambda_max - theta_1 <= rho_1.
 * relativeErrorBound = (rho_1 + a rounding floor of a few eps theta_1 for the Rayleigh-Ritz step and
 * the reorthogonalization) / theta_1, and theta_1 <= lambda_max makes it a bound relative to the
 * exact value. For the inverse, with mu = 1/lambda, the same relative bound carries over to 1/theta
 * (smallestEigenvalueByInverse). The bound covers the Krylov iteration on the operator as applied;
 * the rounding errors of applying it (a solve with a condition number kappa costs about kappa eps)
 * are the caller's to add.
 *
 * Gap refinement (Kato-Temple): when every other eigenvalue is at most alpha < theta_1,
 * lambda_max - theta_1 <= rho_1^2 / (theta_1 - alpha). The estimate reports gap = theta_1 - (theta_2
 * + rho_2) (alpha from the second Ritz pair) but does not use it in relativeErrorBound: an eigenvalue
 * just below lambda_max that the Krylov space has not yet separated from it (a cluster: several
 * nearly parallel machine pairs give S a cluster of eigenvalues just below m) makes alpha an
 * underestimate, and the quadratic bound then fails by orders of magnitude (measured on the
 * bcsstk03-m4 fixture), whereas such a neighbour only mixes into y_1 and keeps the error of order
 * rho_1. Callers that know the gap is real may use it (the principal angles, whose tiny-angle digits
 * need it, through convergedWhen).
 *
 * Given ARPACK (options.arpack: the native kernels' eigen part, ../linalg/kernels.ts), operators well
 * above the basis size go to ARPACK's implicitly restarted Lanczos instead (./arpackLanczos.ts: the
 * same estimate and bound); the Lanczos below is the TypeScript kernels' one and ARPACK's fallback.
 */
import { runSync, type Work } from '../cooperative.js';
import type { NativeArpack } from '../linalg/backend.js';
import { selectedKernels } from '../linalg/kernels.js';
import type { SymmetricOperator } from '../linalg/lanczos.js';
import { SeededRandom } from '../random.js';
import { arpackLargestEigenvalueWork } from './arpackLanczos.js';

import type { EigenvalueEstimate } from './eigenvalueEstimate.js';

export type { SymmetricOperator } from '../linalg/lanczos.js';
export type { EigenvalueEstimate, SpectralMethod } from './eigenvalueEstimate.js';

export interface LargestEigenvalueOptions {
  /** Stop when relativeErrorBound <= tolerance. Default 1e-10. */
  tolerance?: number;
  /** Lanczos vectors per cycle (at most the operator's size). Default 40. */
  basisSize?: number;
  /** Ritz vectors kept at a restart. Default basisSize / 2. */
  kept?: number;
  /** Cap on operator applications. Default 20000. */
  maxIterations?: number;
  seed?: number;
  /** Keep the top Ritz vector (unit norm, length n) in this buffer (e.g. for the principal angles' sine). */
  ritzVector?: Float64Array;
  /**
   * A stopping test replacing `relativeErrorBound <= tolerance`, given the top Ritz value, its
   * residual and the gap (as in EigenvalueEstimate): e.g. a Kato-Temple accuracy on 1 - theta_1.
   */
  convergedWhen?: (theta1: number, residual: number, gap: number) => boolean;
  /** ARPACK to hand large operators to (kernels.arpack); absent or null: the TypeScript Lanczos. */
  arpack?: NativeArpack | null;
}

export const DEFAULT_SPECTRUM_TOLERANCE = 1e-10;
const DEFAULT_BASIS_SIZE = 40;
const DEFAULT_MAX_ITERATIONS = 20000;
const EPS = Number.EPSILON;
/**
 * Smallest operator ARPACK takes: below it the TypeScript Lanczos costs little
 * and reports the gap (ARPACK's single Ritz pair does not); above it ARPACK's BLAS orthogonalization
 * pays (lambda_max(A^T A) at n = 40,000: 2.4 s of CPU against 6.8 s).
 */
const ARPACK_MIN_SIZE = 2000;
/** Convergence is tested every CHECK_EVERY steps within a cycle (and at its end): each test costs a small eigensolve. */
const CHECK_EVERY = 4;

/**
 * The Krylov buffers of one Lanczos run: (basisSize + 1) vectors of length n and the small dense
 * projected matrices. Reuse one across calls (principal angles of many pairs, both ends of a
 * spectrum): it grows when a larger n or basis is asked for and never shrinks.
 */
export class KrylovWorkspace {
  basis = new Float64Array(0);
  w = new Float64Array(0);
  coefficients = new Float64Array(0);
  projected = new Float64Array(0);
  eigenvectors = new Float64Array(0);
  ritzValues = new Float64Array(0);
  offDiagonal = new Float64Array(0);
  scratch = new Float64Array(0);

  ensure(n: number, basisSize: number): void {
    const m = basisSize;
    if (this.basis.length < (m + 1) * n) this.basis = new Float64Array((m + 1) * n);
    if (this.w.length < n) this.w = new Float64Array(n);
    if (this.coefficients.length < m + 1) this.coefficients = new Float64Array(m + 1);
    if (this.projected.length < m * m) {
      this.projected = new Float64Array(m * m);
      this.eigenvectors = new Float64Array(m * m);
    }
    // Restart products by blocks of up to 1024 positions of every kept vector.
    const scratchLength = Math.max(m * m, m * Math.min(n, 1024));
    if (this.scratch.length < scratchLength) this.scratch = new Float64Array(scratchLength);
    if (this.ritzValues.length < m) {
      this.ritzValues = new Float64Array(m);
      this.offDiagonal = new Float64Array(m);
    }
  }
}

/**
 * Eigenvalues and eigenvectors of the symmetric m x m matrix `a` (row-major; overwritten with the
 * eigenvectors: column j of `a` belongs to values[j], unsorted): Householder tridiagonalization and
 * the implicit QL iteration (EISPACK tred2 / tql2, as JAMA writes them). The reduction works from
 * the last row up and leaves e_{m-1} fixed, so with `lastRowOnly` the QL rotations are applied to the
 * last row alone: the eigenvalues and the last component of each eigenvector (the Ritz residuals)
 * for about a third of the work. `d`, `e`: scratch of length m (`d` may be `values`).
 */
export function symmetricEigen(a: Float64Array, m: number, values: Float64Array, e: Float64Array, lastRowOnly = false): void {
  const d = values;
  const V = a;
  for (let j = 0; j < m; j++) d[j] = V[(m - 1) * m + j];
  for (let i = m - 1; i > 0; i--) {
    let scale = 0;
    let h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(d[k]);
    if (scale === 0) {
      e[i] = d[i - 1];
      for (let j = 0; j < i; j++) {
        d[j] = V[(i - 1) * m + j];
        V[i * m + j] = 0;
        V[j * m + i] = 0;
      }
    } else {
      for (let k = 0; k < i; k++) {
        d[k] /= scale;
        h += d[k] * d[k];
      }
      let f = d[i - 1];
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      d[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      for (let j = 0; j < i; j++) {
        f = d[j];
        V[j * m + i] = f;
        g = e[j] + V[j * m + j] * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += V[k * m + j] * d[k];
          e[k] += V[k * m + j] * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j] /= h;
        f += e[j] * d[j];
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j] -= hh * d[j];
      for (let j = 0; j < i; j++) {
        f = d[j];
        g = e[j];
        for (let k = j; k <= i - 1; k++) V[k * m + j] -= f * e[k] + g * d[k];
        d[j] = V[(i - 1) * m + j];
        V[i * m + j] = 0;
      }
    }
    d[i] = h;
  }
  // Accumulate the transformations (the last row and column stay e_{m-1}).
  for (let i = 0; i < m - 1; i++) {
    V[(m - 1) * m + i] = V[i * m + i];
    V[i * m + i] = 1;
    const h = d[i + 1];
    if (h !== 0) {
      for (let k = 0; k <= i; k++) d[k] = V[k * m + i + 1] / h;
      for (let j = 0; j <= i; j++) {
        let g = 0;
        for (let k = 0; k <= i; k++) g += V[k * m + i + 1] * V[k * m + j];
        for (let k = 0; k <= i; k++) V[k * m + j] -= g * d[k];
      }
    }
    for (let k = 0; k <= i; k++) V[k * m + i + 1] = 0;
  }
  for (let j = 0; j < m; j++) {
    d[j] = V[(m - 1) * m + j];
    V[(m - 1) * m + j] = 0;
  }
  V[(m - 1) * m + m - 1] = 1;
  e[0] = 0;

  // Implicit QL with Wilkinson-like shifts on the tridiagonal (d, e).
  for (let i = 1; i < m; i++) e[i - 1] = e[i];
  e[m - 1] = 0;
  const firstRow = lastRowOnly ? m - 1 : 0;
  let f = 0;
  let tst1 = 0;
  for (let l = 0; l < m; l++) {
    tst1 = Math.max(tst1, Math.abs(d[l]) + Math.abs(e[l]));
    let mm = l;
    while (mm < m) {
      if (Math.abs(e[mm]) <= EPS * tst1) break;
      mm++;
    }
    if (mm > l) {
      for (let iter = 0; iter < 100; iter++) {
        let g = d[l];
        let p = (d[l + 1] - g) / (2 * e[l]);
        let r = Math.hypot(p, 1);
        if (p < 0) r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        const dl1 = d[l + 1];
        let h = g - d[l];
        for (let i = l + 2; i < m; i++) d[i] -= h;
        f += h;
        p = d[mm];
        let c = 1;
        let c2 = c;
        let c3 = c;
        const el1 = e[l + 1];
        let s = 0;
        let s2 = 0;
        for (let i = mm - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i];
          h = c * p;
          r = Math.hypot(p, e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          for (let k = firstRow; k < m; k++) {
            const off = k * m;
            h = V[off + i + 1];
            V[off + i + 1] = s * V[off + i] + c * h;
            V[off + i] = c * V[off + i] - s * h;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]) / dl1;
        e[l] = s * p;
        d[l] = c * p;
        if (!(Math.abs(e[l]) > EPS * tst1)) break;
      }
    }
    d[l] += f;
    e[l] = 0;
  }
}

function norm2(x: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += x[i] * x[i];
  return Math.sqrt(s);
}

/**
 * h[i] = v_i . w for the first `count` basis vectors, then w -= sum_i h[i] v_i; four vectors per
 * pass over w, so w is loaded and stored once per four basis vectors.
 */
function orthogonalize(basis: Float64Array, n: number, count: number, w: Float64Array, h: Float64Array): void {
  let i = 0;
  for (; i + 4 <= count; i += 4) {
    const o0 = i * n;
    const o1 = o0 + n;
    const o2 = o1 + n;
    const o3 = o2 + n;
    let d0 = 0;
    let d1 = 0;
    let d2 = 0;
    let d3 = 0;
    for (let r = 0; r < n; r++) {
      const wr = w[r];
      d0 += basis[o0 + r] * wr;
      d1 += basis[o1 + r] * wr;
      d2 += basis[o2 + r] * wr;
      d3 += basis[o3 + r] * wr;
    }
    h[i] = d0;
    h[i + 1] = d1;
    h[i + 2] = d2;
    h[i + 3] = d3;
  }
  for (; i < count; i++) {
    const off = i * n;
    let d = 0;
    for (let r = 0; r < n; r++) d += basis[off + r] * w[r];
    h[i] = d;
  }
  i = 0;
  for (; i + 4 <= count; i += 4) {
    const o0 = i * n;
    const o1 = o0 + n;
    const o2 = o1 + n;
    const o3 = o2 + n;
    const c0 = h[i];
    const c1 = h[i + 1];
    const c2 = h[i + 2];
    const c3 = h[i + 3];
    for (let r = 0; r < n; r++) w[r] -= c0 * basis[o0 + r] + c1 * basis[o1 + r] + c2 * basis[o2 + r] + c3 * basis[o3 + r];
  }
  for (; i < count; i++) {
    const off = i * n;
    const c = h[i];
    for (let r = 0; r < n; r++) w[r] -= c * basis[off + r];
  }
}

function normalize(x: Float64Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * x[i];
  const norm = Math.sqrt(s);
  const inv = 1 / norm;
  for (let i = 0; i < x.length; i++) x[i] *= inv;
  return norm;
}

/** Indices of the `count` largest of values[0..size), descending. */
function topIndices(values: Float64Array, size: number, count: number): number[] {
  const order = Array.from({ length: size }, (_, i) => i);
  order.sort((i, j) => values[j] - values[i]);
  return order.slice(0, count);
}

interface RitzSummary {
  theta1: number;
  rho1: number;
  gap: number;
  relativeBound: number;
}

/** The residual bound of the module comment, and the gap for the Kato-Temple refinement. */
function ritzBound(theta1: number, rho1: number, theta2: number, rho2: number, steps: number, scale: number): RitzSummary {
  const gap = theta1 - (theta2 + rho2);
  // Rounding floor: Rayleigh-Ritz and reorthogonalization leave residuals of a few eps |Op| per step.
  const floor = 4 * EPS * Math.sqrt(steps + 1) * scale;
  const relativeBound = theta1 > 0 ? (rho1 + floor) / theta1 : Infinity;
  return { theta1, rho1, gap: Number.isFinite(gap) ? gap : NaN, relativeBound };
}

/**
 * lambda_max of a symmetric positive (semi)definite operator, with its relative error bound.
 * Yields (undefined) after each operator application.
 */
export function* largestEigenvalueWork(
  op: SymmetricOperator,
  options: LargestEigenvalueOptions = {},
  workspace: KrylovWorkspace = new KrylovWorkspace(),
): Work<EigenvalueEstimate> {
  const n = op.size;
  if (n === 0) throw new RangeError('largestEigenvalue needs an operator of size at least 1');
  const tolerance = options.tolerance ?? DEFAULT_SPECTRUM_TOLERANCE;
  const m = Math.max(1, Math.min(n, options.basisSize ?? DEFAULT_BASIS_SIZE));
  const kept = Math.max(1, Math.min(m - 1, options.kept ?? Math.floor(m / 2)));
  const maxIterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  // ARPACK (./arpackLanczos.ts) when given, for operators well above the basis size, unless the caller has its own
  // stopping test (it reads the gap, which ARPACK's single Ritz pair does not give). Null: busy or not converged,
  // and the Lanczos below runs.
  const arpack = options.arpack ?? null;
  if (arpack !== null && options.convergedWhen === undefined && n >= ARPACK_MIN_SIZE && n > 4 * m) {
    const estimate = yield* arpackLargestEigenvalueWork(arpack, op, {
      tolerance,
      basisSize: m,
      maxIterations,
      seed: options.seed ?? 0x2c1b3c6d,
      ritzVector: options.ritzVector,
    });
    if (estimate?.converged) return estimate;
  }
  workspace.ensure(n, m);
  const { basis, w, coefficients: h, projected: tCycle, eigenvectors: s, ritzValues: theta, offDiagonal, scratch } = workspace;
  tCycle.fill(0, 0, m * m);

  const v0 = basis.subarray(0, n);
  new SeededRandom(options.seed ?? 0x2c1b3c6d).fillSigned(v0);
  normalize(v0);

  let start = 0; // vectors 0..start-1 are kept Ritz vectors (diagonal block of tCycle)
  let iterations = 0;
  let restarts = 0;
  let scale = 0; // |Op| estimate: the largest |Ritz value| seen
  let best: RitzSummary = { theta1: NaN, rho1: Infinity, gap: NaN, relativeBound: Infinity };
  const convergedWhen = options.convergedWhen ?? ((_theta1: number, _residual: number, _gap: number) => best.relativeBound <= tolerance);
  let bestSize = 0;
  let exhausted = false;
  let converged = false;
  let lastBeta = 0;
  let fullVectors = false;

  // Eigen-decomposition of tCycle[0..size) into theta and s (size x size; with `full` false only
  // its last row is right); returns the summary of the top pair.
  const solveProjected = (size: number, beta: number, full: boolean): RitzSummary => {
    for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) s[i * size + j] = tCycle[i * m + j];
    symmetricEigen(s, size, theta, offDiagonal, !full);
    fullVectors = full;
    const order = topIndices(theta, size, 2);
    const theta1 = theta[order[0]];
    const rho1 = beta * Math.abs(s[(size - 1) * size + order[0]]);
    const theta2 = order.length > 1 ? theta[order[1]] : -Infinity;
    const rho2 = order.length > 1 ? beta * Math.abs(s[(size - 1) * size + order[1]]) : 0;
    scale = Math.max(scale, Math.abs(theta1), order.length > 1 ? Math.abs(theta2) : 0);
    return ritzBound(theta1, rho1, theta2, rho2, iterations, scale);
  };

  for (;;) {
    let size = start;
    let cycleDone = false;
    for (let j = start; j < m; j++) {
      const vj = basis.subarray(j * n, (j + 1) * n);
      op.apply(vj, w);
      iterations++;
      // Full reorthogonalization against v_0..v_j (classical Gram-Schmidt), repeated when the first
      // pass removed more than 1 - 1/sqrt(2) of |w| (Daniel, Gragg, Kaufman & Stewart's criterion;
      // "twice is enough"): the second pass is needed only when cancellation occurred.
      const before = norm2(w, n);
      orthogonalize(basis, n, j + 1, w, h);
      let alpha = h[j];
      let beta = norm2(w, n);
      if (beta < Math.SQRT1_2 * before) {
        orthogonalize(basis, n, j + 1, w, h);
        alpha += h[j];
        beta = norm2(w, n);
      }
      tCycle[j * m + j] = alpha;
      lastBeta = beta;
      size = j + 1;
      scale = Math.max(scale, Math.abs(alpha) + beta);
      // beta at rounding level (or the whole space spanned): the Ritz values are eigenvalues.
      if (beta <= 4 * EPS * scale * Math.sqrt(size) || size === n) {
        best = solveProjected(size, 0, options.ritzVector !== undefined);
        bestSize = size;
        exhausted = true;
        cycleDone = true;
        break;
      }
      if (j + 1 < m) {
        tCycle[j * m + j + 1] = beta;
        tCycle[(j + 1) * m + j] = beta;
        const next = basis.subarray((j + 1) * n, (j + 2) * n);
        const inv = 1 / beta;
        for (let r = 0; r < n; r++) next[r] = w[r] * inv;
      } else {
        // The residual direction v_m (slot m of the basis) starts the next cycle.
        const next = basis.subarray(m * n, (m + 1) * n);
        const inv = 1 / beta;
        for (let r = 0; r < n; r++) next[r] = w[r] * inv;
      }
      const atEnd = j + 1 === m || iterations >= maxIterations;
      if (atEnd || (j + 1 - start) % CHECK_EVERY === 0) {
        best = solveProjected(size, beta, j + 1 === m);
        bestSize = size;
        if (convergedWhen(best.theta1, best.rho1, best.gap)) {
          converged = true;
          cycleDone = true;
          break;
        }
      }
      yield undefined;
      if (iterations >= maxIterations) {
        cycleDone = true;
        break;
      }
    }
    if (exhausted || converged || cycleDone) break;

    // Thick restart (theta, s hold the cycle's eigen-decomposition, computed at its last step): keep
    // the `kept` top Ritz vectors Y = V S_kept, then v_m as the next direction.
    const order = topIndices(theta, size, kept);
    restartBasis(basis, n, size, s, order, scratch);
    basis.copyWithin(kept * n, m * n, (m + 1) * n);
    tCycle.fill(0, 0, m * m);
    for (let a = 0; a < kept; a++) {
      const i = order[a];
      tCycle[a * m + a] = theta[i];
      const coupling = lastBeta * s[(size - 1) * size + i];
      tCycle[a * m + kept] = coupling;
      tCycle[kept * m + a] = coupling;
    }
    start = kept;
    restarts++;
    yield undefined;
  }

  if (options.ritzVector) {
    // y_1 = V s_1 over the final basis (s, theta: the last projected eigen-decomposition).
    if (!fullVectors) solveProjected(bestSize, lastBeta, true);
    const order = topIndices(theta, bestSize, 1);
    const y = options.ritzVector;
    y.fill(0, 0, n);
    for (let i = 0; i < bestSize; i++) {
      const c = s[i * bestSize + order[0]];
      if (c === 0) continue;
      const off = i * n;
      for (let r = 0; r < n; r++) y[r] += c * basis[off + r];
    }
    normalize(y.subarray(0, n));
  }
  return {
    value: best.theta1,
    method: exhausted ? 'lanczos-exhaustive' : 'lanczos',
    relativeErrorBound: best.relativeBound,
    residualNorm: exhausted ? 0 : best.rho1,
    gap: best.gap,
    iterations,
    restarts,
    converged: converged || exhausted,
  };
}

/**
 * In place: rows 0..kept-1 of `basis` (vectors of length n) become sum_i s[i, order[a]] v_i over
 * the first `size` vectors. Done by blocks of positions so each block of the basis is read once.
 */
function restartBasis(basis: Float64Array, n: number, size: number, s: Float64Array, order: number[], scratch: Float64Array): void {
  const kept = order.length;
  const block = Math.max(1, Math.min(n, Math.floor(scratch.length / Math.max(1, kept))));
  for (let r0 = 0; r0 < n; r0 += block) {
    const len = Math.min(block, n - r0);
    scratch.fill(0, 0, kept * len);
    for (let i = 0; i < size; i++) {
      const off = i * n + r0;
      for (let a = 0; a < kept; a++) {
        const c = s[i * size + order[a]];
        if (c === 0) continue;
        const dst = a * len;
        for (let r = 0; r < len; r++) scratch[dst + r] += c * basis[off + r];
      }
    }
    for (let a = 0; a < kept; a++) basis.set(scratch.subarray(a * len, (a + 1) * len), a * n + r0);
  }
}

export function largestEigenvalue(
  op: SymmetricOperator,
  options: LargestEigenvalueOptions = {},
  workspace?: KrylovWorkspace,
): EigenvalueEstimate {
  return runSync(largestEigenvalueWork(op, { arpack: selectedKernels().arpack, ...options }, workspace));
}

/**
 * lambda_min of a symmetric positive definite operator from lambda_max of its inverse (shift-invert
 * at 0): `inverse.apply(x, y)` must set y = Op^{-1} x (e.g. two triangular solves with a sparse
 * factorization). With theta <= mu = lambda_max(Op^{-1}) and mu - theta <= b mu, the estimate
 * 1 / theta of lambda_min = 1 / mu satisfies |1/theta - 1/mu| = (mu - theta) / (theta mu) and the
 * bound b' = (mu - theta) / theta, which is the absolute bound over theta: the relative bound above.
 */
export function* smallestEigenvalueByInverseWork(
  inverse: SymmetricOperator,
  options: LargestEigenvalueOptions = {},
  workspace?: KrylovWorkspace,
): Work<EigenvalueEstimate> {
  const top = yield* largestEigenvalueWork(inverse, options, workspace);
  return {
    ...top,
    value: 1 / top.value,
    method: top.method === 'lanczos-exhaustive' ? 'lanczos-exhaustive' : 'lanczos-shift-invert',
  };
}

export function smallestEigenvalueByInverse(
  inverse: SymmetricOperator,
  options: LargestEigenvalueOptions = {},
  workspace?: KrylovWorkspace,
): EigenvalueEstimate {
  return runSync(smallestEigenvalueByInverseWork(inverse, { arpack: selectedKernels().arpack, ...options }, workspace));
}
