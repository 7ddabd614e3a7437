// Past 500 lines: the thick-restart Lanczos, its two entry points (dense: both ends; sparse: the largest with
// its bound, ARPACK behind it) and the restart's Ritz vector formation.
/**
 * The one Lanczos of the solvers: extreme eigenvalues of a symmetric operator known only through
 * `apply(x, y)` (./symmetricOperator.ts), with a-posteriori error bounds, for the dense and the sparse
 * analysis alike. The sparse path's every extreme eigenvalue is the largest one of some operator (A^T A, (A^T A)^{-1} through a
 * sparse LU, the block-Jacobi-scaled Gram matrix of S, the cross-Gram blocks of the principal
 * angles). The smallest eigenvalue comes from the largest one of the inverse (shift-invert at 0)
 * when the caller can solve with the operator.
 *
 * Method: thick-restart Lanczos (Wu & Simon, SIAM J. Matrix Anal. Appl. 22 (2000)) with full
 * reorthogonalization (classical Gram-Schmidt, a second pass when the first cancelled, "twice is
 * enough"), as two passes over the basis, h = V w then w -= V^T h (the kernels' dgemv when native;
 * on the TypeScript backend the WebAssembly kernels, the basis and w being placed in their memory by
 * the kernels' krylovStorage).
 * The largest end, the smallest or both (lanczosWork's `which`: a restart keeps Ritz vectors of each
 * end asked for). Without a restart (the dense analysis: the basis may grow to the operator's size,
 * and exhaustion gives the exact answer) the projected matrix is tridiagonal and its end eigenvalues
 * come by bisection (../linalg/tridiagonal.ts). The basis holds at most `basisSize` + 1
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
 * Semi-orthogonality (largestEigenvalueWork on operators of SEMI_ORTHOGONAL_MIN_SIZE and more): a
 * step's pass over the basis first measures h = V^T w, then removes h_i v_i only where |h_i| > eta |w|
 * (eta = sqrt(eps)): in practice the kept Ritz vectors, along which Lanczos loses orthogonality as
 * they converge (Parlett & Scott's selective orthogonalization), so the second pass reads only the
 * rows from the first such vector to the last. The basis stays semi-orthogonal, |v_i . v_k| <= eta,
 * which keeps the projected matrix the projection of Op to working precision and the Ritz values'
 * convergence (Simon, "The Lanczos algorithm with partial reorthogonalization", 1984; the measured h
 * replaces his estimate of it). After a thick restart, that loss is along the kept Ritz vectors, so
 * three steps in four measure h against them and v_start only (MEASURE_ALL_EVERY), and the first
 * pass is cut too; a loss elsewhere is then caught a few steps late, which the verification below
 * guards. It no longer makes beta_m |s_1[last]| the residual of a unit vector,
 * so once some step has left a vector in w, the top end is verified before it is accepted, and at the
 * end of a run: y = V s_1 formed, theta_R = y^T Op y / y^T y (a Rayleigh quotient, <= lambda_max) and
 * rho_R = |Op y - theta_R y| / |y| computed explicitly (one more operator application) replace
 * theta_1 and rho_1 above. The kept vectors are orthogonal to eta only, which sets a floor under
 * rho_R; a verification that fails on it starts the run afresh from y with full reorthogonalization,
 * on an orthogonal basis again.
 *
 * Given ARPACK (options.arpack, where the kernels choose it: their `largeEigensolver`, ../linalg/kernels.ts,
 * eigensolverOptionsOf), operators well above the basis size go to ARPACK's implicitly restarted Lanczos
 * instead (./arpackLanczos.ts: the same estimate and bound); the thick restart below is then its fallback.
 */
import { runSync, type Work } from '../cooperative.js';
import type { NativeArpack } from '../linalg/backend.js';
import type { DenseKernels } from '../linalg/denseKernels.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { dot } from '../matrix.js';
import { TYPESCRIPT_DENSE_KERNELS } from '../linalg/typescriptDenseKernels.js';
import { tridiagonalEigenvalue, tridiagonalEigenvector } from '../linalg/tridiagonal.js';
import { SeededRandom } from '../random.js';
import { arpackLargestEigenvalueWork } from './arpackLanczos.js';
import type { EigenvalueEstimate } from './eigenvalueEstimate.js';
import { symmetricEigen } from './symmetricEigen.js';
import type { SymmetricOperator } from './symmetricOperator.js';

export type { SymmetricOperator } from './symmetricOperator.js';
export type { EigenvalueEstimate, SpectralMethod } from './eigenvalueEstimate.js';

export type LanczosEnd = 'largest' | 'smallest' | 'both';

/** One end of the spectrum as a Lanczos run leaves it. */
export interface RitzEnd {
  /** The Ritz value theta (NaN when this end was not asked for). */
  value: number;
  /** Its residual bound |Op y - theta y| = beta_k |s[last]| (0 when the space is exhausted). */
  residual: number;
  /** Distance from theta to the next Ritz value's residual interval, toward the inside of the spectrum (Kato-Temple's gap). */
  gap: number;
  /** (residual + a rounding floor) / |theta|: the relative bound of the module comment. */
  relativeBound: number;
}

interface LanczosRun {
  which: LanczosEnd;
  /** Lanczos vectors per cycle; at least maxIterations: no restart. */
  basisSize: number;
  kept: number;
  maxIterations: number;
  seed: number;
  /** The kernels of the passes over the basis (Gram-Schmidt, Ritz vectors, restarts). */
  dense: DenseKernels;
  /** Receives the top Ritz vector when given (and `ritzVectorIf` holds for the top Ritz value). */
  ritzVector?: Float64Array;
  ritzVectorIf?: (theta: number) => boolean;
  /** The first Lanczos vector when given (else random from `seed`). */
  startVector?: Float64Array;
  /** The stopping test, on the ends asked for (the other one's value is NaN). */
  accept(largest: RitzEnd, smallest: RitzEnd): boolean;
  /**
   * 0: full reorthogonalization at every step. eta > 0 (only with which = 'largest'): the basis kept
   * semi-orthogonal, |v_i . v_k| <= eta, and the top end's bound verified (the module comment).
   */
  semiOrthogonality: number;
}

interface LanczosRunResult {
  largest: RitzEnd;
  smallest: RitzEnd;
  iterations: number;
  restarts: number;
  /** The Krylov space became invariant or reached the operator's size. */
  exhausted: boolean;
  /** The stopping test accepted. */
  accepted: boolean;
}

const EPS = Number.EPSILON;
const NO_END: RitzEnd = { value: NaN, residual: NaN, gap: NaN, relativeBound: Infinity };
/** Columns of the basis per block of a restart's Ritz vector formation. */
const RESTART_BLOCK = 4096;
/**
 * After a restart the projected matrix is an arrow and each convergence test a small dense eigensolve,
 * so it is run every CHECK_EVERY steps (and at the cycle's end); a tridiagonal one costs a few
 * bisections and is tested every step, unless the operator is small (n <= CHECK_EVERY_STEP_ABOVE):
 * a tridiagonal test of size j (four Sturm bisections of ~52 counts, and four inverse iterations) costs
 * ~800 j flops' time, more than a step's reorthogonalization (4 n j flops) below n = 200, and an
 * analysis of a tiny system spent a third of its time in them (n = 50, m = 5).
 */
const CHECK_EVERY = 4;
const CHECK_EVERY_STEP_ABOVE = 200;
/**
 * Semi-orthogonal basis after a restart: h is measured against the whole basis every MEASURE_ALL_EVERY
 * steps, and in between against the kept Ritz vectors and v_start only, where the loss of orthogonality
 * is (the module comment). On conv.-diff. n = 250,000 and the test's operator the runs are bit for bit
 * those measuring every row at every step (no other row ever passed the threshold), with 40% fewer rows read.
 */
const MEASURE_ALL_EVERY = 4;

/**
 * The Krylov buffers of one Lanczos run: the basis (vectors of length n, by rows) and the small
 * projected matrices. Reuse one across calls (principal angles of many pairs, both ends of a
 * spectrum): it grows when a larger n or basis is asked for and never shrinks.
 */
export class KrylovWorkspace {
  basis: Float64Array = new Float64Array(0);
  w: Float64Array = new Float64Array(0);
  coefficients = new Float64Array(0);
  /** The projected matrix: diagonal, off-diagonal (beta[j] couples j and j + 1) and, after a restart, the arrow couplings of the kept Ritz vectors with vector `kept`. */
  diagonal = new Float64Array(0);
  offDiagonal = new Float64Array(0);
  couplings = new Float64Array(0);
  /** Dense projected matrix and its eigenvectors (size x size), allocated when a restart or a Ritz vector needs them. */
  projected = new Float64Array(0);
  ritzValues = new Float64Array(0);
  eigenScratch = new Float64Array(0);
  tridiagonalVector = new Float64Array(0);
  scratch = new Float64Array(0);

  ensure(basisSize: number): void {
    const m = basisSize;
    for (const key of [
      'coefficients',
      'diagonal',
      'offDiagonal',
      'couplings',
      'ritzValues',
      'eigenScratch',
      'tridiagonalVector',
    ] as const) {
      if (this[key].length < m + 1) this[key] = new Float64Array(m + 1);
    }
  }

  /**
   * The basis with room for `vectors` vectors of length n, its first `used` kept when it grows (at most
   * `most` vectors), and `w` beside it: both where `dense`'s passes over them run fastest (its krylovStorage).
   */
  basisFor(dense: DenseKernels, n: number, vectors: number, used: number, most: number): Float64Array {
    if (this.basis.length >= vectors * n && this.w.length >= n) return this.basis;
    const storage = dense.krylovStorage(Math.min(most, Math.max(vectors, 2 * Math.floor(this.basis.length / n), 16)), n);
    storage.basis.set(this.basis.subarray(0, used * n));
    this.basis = storage.basis;
    this.w = storage.w;
    return storage.basis;
  }

  projectedFor(size: number): Float64Array {
    if (this.projected.length < size * size) this.projected = new Float64Array(size * size);
    return this.projected;
  }

  /** A vector of length n for a Ritz vector formed outside the basis (semi-orthogonality's verification). */
  ritz = new Float64Array(0);
  ritzFor(n: number): Float64Array {
    if (this.ritz.length < n) this.ritz = new Float64Array(n);
    return this.ritz.subarray(0, n);
  }

  scratchFor(length: number): Float64Array {
    if (this.scratch.length < length) this.scratch = new Float64Array(length);
    return this.scratch;
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

/** Indices of values[0..size), ascending by value. */
function ascendingOrder(values: Float64Array, size: number): number[] {
  const order = Array.from({ length: size }, (_, i) => i);
  order.sort((i, j) => values[i] - values[j]);
  return order;
}

/** The residual bound of the module comment, and the gap to the next Ritz value inward (theta2, rho2). */
function ritzEnd(theta1: number, rho1: number, theta2: number, rho2: number, steps: number, scale: number, top: boolean): RitzEnd {
  const gap = top ? theta1 - (theta2 + rho2) : theta2 - rho2 - theta1;
  // Rounding floor: Rayleigh-Ritz and reorthogonalization leave residuals of a few eps |Op| per step.
  const floor = 4 * EPS * Math.sqrt(steps + 1) * scale;
  const size = top ? theta1 : Math.abs(theta1);
  const relativeBound = size > 0 ? (rho1 + floor) / size : Infinity;
  return { value: theta1, residual: rho1, gap: Number.isFinite(gap) ? gap : NaN, relativeBound };
}

/**
 * The Lanczos of the module comment. Yields (undefined) after each operator application and each
 * restart.
 */
function* lanczosRunWork(op: SymmetricOperator, run: LanczosRun, workspace: KrylovWorkspace): Work<LanczosRunResult> {
  const n = op.size;
  const m = run.basisSize;
  const { which, kept, maxIterations, dense } = run;
  const wantLargest = which !== 'smallest';
  const wantSmallest = which !== 'largest';
  // Restarting: the whole basis at once; else it grows with the iterations.
  const mostVectors = Math.min(m, maxIterations, n) + 1;
  workspace.ensure(m);
  let basis = workspace.basisFor(dense, n, m < maxIterations && m < n ? m + 1 : Math.min(16, mostVectors), 0, mostVectors);
  const { coefficients: h, diagonal: alpha, offDiagonal: beta, couplings, ritzValues: theta, eigenScratch, tridiagonalVector } = workspace;

  const v0 = basis.subarray(0, n);
  if (run.startVector) v0.set(run.startVector.subarray(0, n));
  else new SeededRandom(run.seed).fillSigned(v0);
  normalize(v0);

  let start = 0; // vectors 0..start-1 are kept Ritz vectors (the arrow's diagonal block)
  let iterations = 0;
  let restarts = 0;
  let scale = 0; // |Op| estimate: the largest |Ritz value| or |alpha| + beta seen
  let largest = NO_END;
  let smallest = NO_END;
  let exhausted = false;
  let accepted = false;
  let lastBeta = 0;
  let size = 0;
  let vectorsOf = 0; // the size whose full eigen-decomposition `projected` holds (0: none)
  let eta = run.semiOrthogonality;
  let skipped = 0; // steps since the basis' start that left some vector of it in w (semi-orthogonality)

  // The projected matrix of order `size` into `projected` (dense, row-major).
  const denseProjected = (): Float64Array => {
    const s = workspace.projectedFor(size);
    s.fill(0, 0, size * size);
    for (let i = 0; i < size; i++) s[i * size + i] = alpha[i];
    for (let a = 0; a < start; a++) {
      s[a * size + start] = couplings[a];
      s[start * size + a] = couplings[a];
    }
    for (let i = start; i + 1 < size; i++) {
      s[i * size + i + 1] = beta[i];
      s[(i + 1) * size + i] = beta[i];
    }
    return s;
  };

  // The eigen-decomposition of the projected matrix (theta, and the eigenvectors by columns in `projected`).
  const fullEigen = (): Float64Array => {
    const s = denseProjected();
    symmetricEigen(s, size, theta, eigenScratch, false);
    vectorsOf = size;
    return s;
  };

  // The asked-for ends of the projected matrix of order `size`, with residual norm b (the last beta; 0: exhausted).
  const ends = (b: number): void => {
    vectorsOf = 0;
    const last = (index: number, value: number, s: Float64Array | null): number => {
      if (b === 0) return 0;
      if (s !== null) return b * Math.abs(s[(size - 1) * size + index]);
      return b * Math.abs(tridiagonalEigenvector(alpha, beta, size, value, tridiagonalVector)[size - 1]);
    };
    if (start === 0) {
      // Tridiagonal: the end eigenvalues by bisection, each residual from its eigenvector's last component.
      const end = (index: number, inner: number, top: boolean): RitzEnd => {
        const t1 = tridiagonalEigenvalue(alpha, beta, size, index);
        const r1 = last(index, t1, null);
        const t2 = size > 1 ? tridiagonalEigenvalue(alpha, beta, size, inner) : top ? -Infinity : Infinity;
        const r2 = size > 1 ? last(inner, t2, null) : 0;
        scale = Math.max(scale, Math.abs(t1), size > 1 ? Math.abs(t2) : 0);
        return ritzEnd(t1, r1, t2, r2, iterations, scale, top);
      };
      if (wantLargest) largest = end(size - 1, size - 2, true);
      if (wantSmallest) smallest = end(0, 1, false);
      return;
    }
    const s = denseProjected();
    symmetricEigen(s, size, theta, eigenScratch, true);
    const order = ascendingOrder(theta, size);
    const end = (first: number, second: number, top: boolean): RitzEnd => {
      const t1 = theta[order[first]];
      const t2 = size > 1 ? theta[order[second]] : top ? -Infinity : Infinity;
      scale = Math.max(scale, Math.abs(t1), size > 1 ? Math.abs(t2) : 0);
      return ritzEnd(t1, last(order[first], t1, s), t2, size > 1 ? last(order[second], t2, s) : 0, iterations, scale, top);
    };
    if (wantLargest) largest = end(size - 1, size - 2, true);
    if (wantSmallest) smallest = end(0, 1, false);
  };

  // y = V s_1 over the current basis (s_1 the top eigenvector of the projected matrix, not normalized
  // here); h is free after a step.
  const topRitzVector = (y: Float64Array): void => {
    const s = vectorsOf === size ? workspace.projected : fullEigen();
    const top = ascendingOrder(theta, size)[size - 1];
    for (let i = 0; i < size; i++) h[i] = s[i * size + top];
    dense.combineRows(basis, n, size, h, y);
  };

  // Semi-orthogonality's explicit top end (the module comment); y is left in workspace.ritz.
  const explicitTop = (): RitzEnd => {
    const y = workspace.ritzFor(n);
    topRitzVector(y);
    const opY = workspace.w; // free: v_{j+1} is already in the basis
    op.apply(y, opY);
    iterations++;
    const yy = dot(y, y);
    const thetaR = dot(y, opY) / yy;
    let rr = 0;
    for (let i = 0; i < n; i++) {
      const r = opY[i] - thetaR * y[i];
      rr += r * r;
    }
    return ritzEnd(thetaR, Math.sqrt(rr / yy), largest.value - largest.gap, 0, iterations, Math.max(scale, Math.abs(thetaR)), true);
  };
  // After a step whose ends(b) accepted: true when the explicit end accepts too (it replaces `largest`).
  // False: the semi-orthogonal basis's own floor (its kept Ritz vectors are orthogonal to eta only) is
  // above the tolerance, so the run starts afresh from y with full reorthogonalization (`fresh`).
  let fresh = false;
  const verified = (): boolean => {
    const end = explicitTop();
    if (run.accept(end, smallest)) {
      largest = end;
      return true;
    }
    eta = 0;
    fresh = true;
    return false;
  };

  for (;;) {
    let stop = false;
    for (let j = start; j < m; j++) {
      basis = workspace.basisFor(dense, n, j + 2, j + 1, mostVectors);
      const w = workspace.w;
      op.apply(basis.subarray(j * n, (j + 1) * n), w);
      iterations++;
      // Inside a cycle, the three-term recurrence first (w -= alpha_j v_j + beta_{j-1} v_{j-1}: what exact
      // arithmetic would leave), so the pass over the whole basis removes rounding only and one pass
      // suffices; at a cycle's first step w couples with every kept Ritz vector, and the pass does it all.
      const recurrence = j > start || start === 0;
      let a = recurrence ? dense.recurrenceStep(basis, n, j, j > start ? beta[j - 1] : 0, w) : 0;
      const before = dense.norm(w, n);
      // Full reorthogonalization against v_0..v_j, repeated when the pass removed more than
      // 1 - 1/sqrt(2) of |w| (Daniel, Gragg, Kaufman & Stewart's criterion; "twice is enough"):
      // another pass is needed only when cancellation occurred. Semi-orthogonal: only the vectors w is
      // not within eta of orthogonal to (never at a cycle's first step: its couplings), and after a
      // restart measured against the kept Ritz vectors and v_start alone in three steps of four.
      const rows = eta > 0 && start > 0 && j > start + 1 && (j - start) % MEASURE_ALL_EVERY !== 0 ? start + 1 : j + 1;
      if (!dense.projectOut(basis, n, rows, w, h, recurrence ? eta * before : 0)) skipped++;
      if (rows === j + 1) a += h[j];
      let b = dense.norm(w, n);
      if (b < Math.SQRT1_2 * before) {
        dense.projectOut(basis, n, j + 1, w, h);
        a += h[j];
        b = dense.norm(w, n);
      }
      alpha[j] = a;
      lastBeta = b;
      size = j + 1;
      scale = Math.max(scale, Math.abs(a) + b + (j > start ? beta[j - 1] : 0));
      // beta at rounding level (or the whole space spanned): the Ritz values are eigenvalues.
      if (b <= 4 * EPS * scale * Math.sqrt(size) || size === n) {
        ends(0);
        exhausted = true;
        stop = true;
        break;
      }
      beta[j] = b;
      // v_{j+1}; after the cycle's last step, slot m: the residual direction that starts the next cycle.
      dense.scaledCopy(w, n, 1 / b, basis.subarray((j + 1) * n, (j + 2) * n));
      const atEnd = j + 1 === m || iterations >= maxIterations;
      if (atEnd || (start === 0 && n > CHECK_EVERY_STEP_ABOVE) || (j + 1 - start) % CHECK_EVERY === 0) {
        ends(b);
        if (run.accept(largest, smallest) && (skipped === 0 || verified())) {
          accepted = true;
          stop = true;
          break;
        }
        if (fresh) break;
      }
      yield undefined;
      if (iterations >= maxIterations) {
        stop = true;
        break;
      }
    }
    if (stop) break;
    if (fresh) {
      // v_0 = y (explicitTop left it in the workspace's Ritz vector), the rest of the basis dropped: from
      // here the basis is orthogonal (eta = 0), and the bound of an orthogonal basis holds again.
      dense.scaledCopy(workspace.ritz, n, 1 / dense.norm(workspace.ritz, n), basis.subarray(0, n));
      start = 0;
      fresh = false;
      skipped = 0;
      restarts++;
      yield undefined;
      continue;
    }

    // Thick restart: keep the `kept` Ritz vectors Y = V S_kept of the ends asked for, then v_m as the next direction.
    const s = fullEigen();
    const order = ascendingOrder(theta, size);
    const fromTop = which === 'largest' ? kept : which === 'smallest' ? 0 : Math.ceil(kept / 2);
    const keptOrder = [...order.slice(size - fromTop).reverse(), ...order.slice(0, kept - fromTop)];
    restartBasis(dense, basis, n, size, s, keptOrder, workspace);
    basis.copyWithin(kept * n, m * n, (m + 1) * n);
    for (let a = 0; a < kept; a++) {
      const i = keptOrder[a];
      alpha[a] = theta[i];
      couplings[a] = lastBeta * s[(size - 1) * size + i];
    }
    start = kept;
    restarts++;
    yield undefined;
  }

  // A run that ends otherwise (at its cap, or exhausted) reports its explicit top too; a beta at rounding
  // level proves an invariant subspace only for an orthogonal basis, so there the explicit end decides.
  if (skipped > 0 && !accepted && wantLargest) {
    largest = explicitTop();
    if (exhausted) accepted = run.accept(largest, smallest);
    exhausted = false;
  }

  if (run.ritzVector && (run.ritzVectorIf?.(largest.value) ?? true)) {
    const y = run.ritzVector.subarray(0, n);
    topRitzVector(y);
    normalize(y);
  }
  return { largest, smallest, iterations, restarts, exhausted, accepted };
}

/**
 * In place: rows 0..kept-1 of `basis` (vectors of length n) become sum_i s[i, order[a]] v_i over
 * the first `size` vectors. By blocks of columns, so each block of the basis is read once (a dgemm
 * per block with BLAS).
 */
function restartBasis(
  dense: DenseKernels,
  basis: Float64Array,
  n: number,
  size: number,
  s: Float64Array,
  order: number[],
  workspace: KrylovWorkspace,
): void {
  const kept = order.length;
  const block = Math.min(n, RESTART_BLOCK);
  const scratch = workspace.scratchFor(kept * block + kept * size);
  // S_kept^T (kept x size, by rows) after the block's room.
  const keptVectors = scratch.subarray(kept * block, kept * block + kept * size);
  for (let a = 0; a < kept; a++) for (let i = 0; i < size; i++) keptVectors[a * size + i] = s[i * size + order[a]];
  for (let r0 = 0; r0 < n; r0 += block) {
    const len = Math.min(block, n - r0);
    dense.combineRowBlock(keptVectors, kept, size, basis, n, r0, len, scratch);
    for (let a = 0; a < kept; a++) basis.set(scratch.subarray(a * len, (a + 1) * len), a * n + r0);
  }
}

export interface LanczosOptions {
  which?: LanczosEnd;
  /** Relative residual bound |beta_k s_k| / |theta| at which a Ritz value is accepted. */
  tolerance?: number;
  /**
   * Also accept a Ritz value whose Kato-Temple bound on its distance to the eigenvalue, residual^2 / gap (RitzEnd.gap,
   * when above the residual), is at most valueTolerance |theta|: for a caller that needs the eigenvalue alone, which
   * converges about twice as fast as its vector (the residual). Absent: the residual decides alone.
   */
  valueTolerance?: number;
  /** Default: the operator's size (exhaustion gives the exact answer). */
  maxIterations?: number;
  /** Lanczos vectors per cycle before a thick restart. Default: maxIterations (no restart). */
  basisSize?: number;
  seed?: number;
  /** The first Lanczos vector (normalized here), e.g. a nearby operator's eigenvector; absent: random from `seed`. */
  startVector?: Float64Array;
  /** Receives the top Ritz vector (unit norm, length n) when given, and when `ritzVectorIf` holds for its Ritz value. */
  ritzVector?: Float64Array;
  ritzVectorIf?: (theta: number) => boolean;
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
  /** The residual bounds |beta_k s_k| of the returned Ritz values (0 when exhausted, NaN when not requested). */
  residualLargest: number;
  residualSmallest: number;
  /** The largest Ritz value's Kato-Temple gap (RitzEnd.gap; NaN when not requested or unknown). */
  gapLargest: number;
}

export const DEFAULT_LANCZOS_TOLERANCE = 1e-13;

/**
 * The ends of the spectrum asked for (`which`, default the largest), each to a relative residual
 * |beta_k s_k| <= tolerance |theta| (the dense analysis: no restart by default, so the Krylov space may
 * grow to the operator's size and exhaustion gives the exact answer).
 */
export function* lanczosWork(kernels: Kernels, op: SymmetricOperator, options: LanczosOptions = {}): Work<LanczosResult> {
  const n = op.size;
  const which = options.which ?? 'largest';
  const tolerance = options.tolerance ?? DEFAULT_LANCZOS_TOLERANCE;
  const maxIterations = Math.min(options.maxIterations ?? n, n);
  const basisSize = Math.max(which === 'both' ? 3 : 2, Math.min(options.basisSize ?? maxIterations, maxIterations));
  const wantLargest = which !== 'smallest';
  const wantSmallest = which !== 'largest';
  const { valueTolerance } = options;
  const accepted = (end: RitzEnd): boolean =>
    end.residual <= tolerance * Math.abs(end.value) ||
    (valueTolerance !== undefined &&
      end.gap > end.residual &&
      (end.residual * end.residual) / end.gap <= valueTolerance * Math.abs(end.value));
  const result = yield* lanczosRunWork(
    op,
    {
      which,
      basisSize,
      kept: Math.max(which === 'both' ? 2 : 1, Math.floor(basisSize / 2)),
      maxIterations,
      seed: options.seed ?? 0x51ed2701,
      startVector: options.startVector,
      ritzVector: options.ritzVector,
      ritzVectorIf: options.ritzVectorIf,
      dense: kernels.dense,
      accept: (largest, smallest) => (!wantLargest || accepted(largest)) && (!wantSmallest || accepted(smallest)),
      semiOrthogonality: 0,
    },
    new KrylovWorkspace(),
  );
  return {
    largest: result.largest.value,
    smallest: result.smallest.value,
    iterations: result.iterations,
    converged: result.accepted || result.exhausted,
    exhausted: result.exhausted,
    residualLargest: wantLargest ? result.largest.residual : NaN,
    residualSmallest: wantSmallest ? result.smallest.residual : NaN,
    gapLargest: wantLargest ? result.largest.gap : NaN,
  };
}

export function lanczos(op: SymmetricOperator, options: LanczosOptions = {}, kernels: Kernels = selectedKernels()): LanczosResult {
  return runSync(lanczosWork(kernels, op, options));
}

export interface LargestEigenvalueOptions {
  /** Stop when relativeErrorBound <= tolerance. Default 1e-10. */
  tolerance?: number;
  /** Lanczos vectors per cycle (at most the operator's size). Default 40; on a semi-orthogonal basis semiOrthogonalBasisSize(n). */
  basisSize?: number;
  /**
   * Ritz vectors kept at a restart. Default basisSize / 4: each restart forms kept x basisSize x n of
   * Ritz vectors and every step of the next cycle orthogonalizes against them, and keeping 10 of 40
   * instead of 20 took 36% less CPU for 3% more products (lambda_max(A^T A), Poisson n = 40,000,
   * bench/sparseAnalysisProfile.ts). basisSize / 2 with a caller's own test: the principal angles' reads the gap
   * to the second Ritz value, and keeping 10 took 10% more products there. On a semi-orthogonal basis of the
   * default size, SEMI_ORTHOGONAL_KEPT.
   */
  kept?: number;
  /** Cap on operator applications. Default 20000. */
  maxIterations?: number;
  seed?: number;
  /** Keep the top Ritz vector (unit norm, length n) in this buffer (e.g. for the principal angles' sine). */
  ritzVector?: Float64Array;
  /** The first Lanczos vector (length n, normalized here), e.g. an earlier run's Ritz vector; absent: random from `seed`. */
  startVector?: Float64Array;
  /**
   * A stopping test replacing `relativeErrorBound <= tolerance`, given the top Ritz value, its
   * residual and the gap (as in EigenvalueEstimate): e.g. a Kato-Temple accuracy on 1 - theta_1.
   */
  convergedWhen?: (theta1: number, residual: number, gap: number) => boolean;
  /**
   * Stop before convergence once the top Ritz value theta satisfies this (theta <= lambda_max: Rayleigh-Ritz, to
   * rounding): for a caller who needs only to know that lambda_max is at least some value. The run is otherwise the
   * same (the same basis, restarts and tests, so the same value when it does not fire); stopped by it, the estimate
   * says converged: false and abandoned: true, and its value is theta. Not with ARPACK (the thick restart runs instead).
   */
  abandonWhen?: (theta: number) => boolean;
  /** ARPACK to hand large operators to (eigensolverOptionsOf); absent or null: the thick restart. */
  arpack?: NativeArpack | null;
  /** The kernels of the thick restart's passes over the basis (kernels.dense); absent: the TypeScript loops. */
  dense?: DenseKernels;
  /**
   * Smallest operator on which the basis is kept semi-orthogonal instead of orthogonal (the module
   * comment), when the caller has no stopping test of its own. Default SEMI_ORTHOGONAL_MIN_SIZE.
   */
  semiOrthogonalFrom?: number;
}

/**
 * The eigensolver a kernel set chooses for the large operators (its `largeEigensolver`, ../linalg/kernels.ts):
 * ARPACK or the thick restart, and the dense kernels the thick restart runs on. Every caller that has a `Kernels`
 * passes these, so which one runs is decided there and nowhere below.
 */
export function eigensolverOptionsOf(kernels: Kernels): { arpack: NativeArpack | null; dense: DenseKernels } {
  return { arpack: kernels.largeEigensolver === 'arpack' ? kernels.arpack : null, dense: kernels.dense };
}

export const DEFAULT_SPECTRUM_TOLERANCE = 1e-10;
const DEFAULT_BASIS_SIZE = 40;
const DEFAULT_MAX_ITERATIONS = 20000;
/**
 * Smallest operator ARPACK takes: below it the TypeScript Lanczos costs little
 * and reports the gap (ARPACK's single Ritz pair does not); above it ARPACK's BLAS orthogonalization
 * pays (lambda_max(A^T A) at n = 40,000: 2.4 s of CPU against 6.8 s).
 */
const ARPACK_MIN_SIZE = 2000;
/**
 * Smallest operator whose basis is kept semi-orthogonal: there a step's passes over the basis cost
 * more than its product (L = lambda_max(A^T A) of the Poisson system n = 10^6: 200 s of passes, 73 s
 * of products, bench/sparseAnalysisProfile.ts); below it the analyses keep the orthogonal basis' bits.
 */
export const SEMI_ORTHOGONAL_MIN_SIZE = 50_000;
/**
 * Lanczos vectors per cycle on a semi-orthogonal basis: there a step measures the whole basis only every
 * MEASURE_ALL_EVERY steps and removes little more than the kept Ritz vectors, so a longer cycle costs little per
 * step and, restarting less often, takes fewer products. L of the Poisson system n = 10^6 (native,
 * bench/sparseAnalysisProfile.ts --conditioning-only): 2255 products and 100 s with 80 vectors (10 kept), 2555 and
 * 110 s with 60, 3369 and 149 s with 40; conv.-diff. n = 250,000: 1023 products with 80, 991 with 100 and 983 with
 * 120 (no faster), 1215 with 40. Within SEMI_ORTHOGONAL_BASIS_BYTES (80 vectors up to n = 10^6), never below 40.
 */
const SEMI_ORTHOGONAL_BASIS_MAX = 80;
const SEMI_ORTHOGONAL_BASIS_BYTES = 640 * 2 ** 20;
const semiOrthogonalBasisSize = (n: number): number =>
  Math.max(DEFAULT_BASIS_SIZE, Math.min(SEMI_ORTHOGONAL_BASIS_MAX, Math.floor(SEMI_ORTHOGONAL_BASIS_BYTES / (8 * n)) - 1));
/**
 * Ritz vectors kept at a restart of that cycle: every step measures them (the loss of orthogonality is along
 * them), so fewer keep the steps cheap; 20 of 80 took 977 products on conv.-diff. against 1023 with 10, and
 * 14.3 s against 12.0.
 */
const SEMI_ORTHOGONAL_KEPT = 10;
/** eta of the module comment: Simon's semi-orthogonality, sqrt(eps). */
const SEMI_ORTHOGONALITY = Math.sqrt(EPS);

/**
 * lambda_max of a symmetric positive (semi)definite operator, with its relative error bound (thick
 * restart, or ARPACK when given and the operator is large). Yields (undefined) after each operator application.
 */
export function* largestEigenvalueWork(
  op: SymmetricOperator,
  options: LargestEigenvalueOptions = {},
  workspace: KrylovWorkspace = new KrylovWorkspace(),
): Work<EigenvalueEstimate> {
  const n = op.size;
  if (n === 0) throw new RangeError('largestEigenvalue needs an operator of size at least 1');
  const tolerance = options.tolerance ?? DEFAULT_SPECTRUM_TOLERANCE;
  const convergedWhen = options.convergedWhen;
  // A caller's own test reads digits (1 - theta_1 of the principal angles) the verification's sums would blur.
  const semiOrthogonal = convergedWhen === undefined && n >= (options.semiOrthogonalFrom ?? SEMI_ORTHOGONAL_MIN_SIZE);
  const defaultBasis = options.basisSize === undefined && semiOrthogonal;
  const m = Math.max(1, Math.min(n, options.basisSize ?? (semiOrthogonal ? semiOrthogonalBasisSize(n) : DEFAULT_BASIS_SIZE)));
  const defaultKept = defaultBasis ? SEMI_ORTHOGONAL_KEPT : Math.floor(convergedWhen ? m / 2 : m / 4);
  const kept = Math.max(1, Math.min(m - 1, options.kept ?? defaultKept));
  const maxIterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  const seed = options.seed ?? 0x2c1b3c6d;
  // ARPACK (./arpackLanczos.ts) when given (the kernels' choice, eigensolverOptionsOf), for operators well above the
  // basis size, unless the caller has its own stopping test (it reads the gap, which ARPACK's single Ritz pair does
  // not give). Null: busy or not converged, and the Lanczos below runs.
  const arpack = options.arpack ?? null;
  const abandonWhen = options.abandonWhen;
  if (arpack !== null && convergedWhen === undefined && abandonWhen === undefined && n >= ARPACK_MIN_SIZE && n > 4 * m) {
    const estimate = yield* arpackLargestEigenvalueWork(arpack, op, {
      tolerance,
      basisSize: m,
      maxIterations,
      seed,
      ritzVector: options.ritzVector,
    });
    if (estimate?.converged) return estimate;
  }
  const meets = (top: RitzEnd): boolean =>
    convergedWhen ? convergedWhen(top.value, top.residual, top.gap) : top.relativeBound <= tolerance;
  const result = yield* lanczosRunWork(
    op,
    {
      which: 'largest',
      basisSize: m,
      kept,
      maxIterations,
      seed,
      dense: options.dense ?? TYPESCRIPT_DENSE_KERNELS,
      ritzVector: options.ritzVector,
      startVector: options.startVector,
      accept: abandonWhen ? (top) => meets(top) || abandonWhen(top.value) : meets,
      semiOrthogonality: semiOrthogonal ? SEMI_ORTHOGONALITY : 0,
    },
    workspace,
  );
  const top = result.largest;
  // Accepted by abandonWhen alone: theta, not lambda_max.
  const abandoned = abandonWhen !== undefined && result.accepted && !result.exhausted && !meets(top);
  return {
    value: top.value,
    method: result.exhausted ? 'lanczos-exhaustive' : 'lanczos',
    relativeErrorBound: top.relativeBound,
    residualNorm: result.exhausted ? 0 : top.residual,
    gap: top.gap,
    iterations: result.iterations,
    restarts: result.restarts,
    converged: (result.accepted && !abandoned) || result.exhausted,
    ...(abandoned ? { abandoned: true as const } : {}),
  };
}

export function largestEigenvalue(
  op: SymmetricOperator,
  options: LargestEigenvalueOptions = {},
  workspace?: KrylovWorkspace,
): EigenvalueEstimate {
  return runSync(largestEigenvalueWork(op, { ...eigensolverOptionsOf(selectedKernels()), ...options }, workspace));
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
  // Shift-invert converges in a few steps (mu at n = 10^6: 7): the long cycle of a semi-orthogonal basis would only
  // allocate its vectors (a restarting run takes its whole basis at once).
  const top = yield* largestEigenvalueWork(inverse, { ...options, basisSize: options.basisSize ?? DEFAULT_BASIS_SIZE }, workspace);
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
  return runSync(smallestEigenvalueByInverseWork(inverse, { ...eigensolverOptionsOf(selectedKernels()), ...options }, workspace));
}
