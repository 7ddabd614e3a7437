/**
 * Symmetric tridiagonal eigenvalue tools: Sturm-sequence bisection (LAPACK dstebz style) for
 * selected eigenvalues and inverse iteration for one eigenvector. Used by Lanczos (extreme Ritz
 * values of T_k and the last component of their Ritz vectors, for the residual bound) and by the
 * singular value code (bisection on the Golub-Kahan tridiagonal, which keeps tiny singular values
 * of a bidiagonal matrix to high relative accuracy).
 *
 * T has diagonal d[0..k) and off-diagonal e[0..k-1) (e[i] couples i and i+1).
 */
const EPS = Number.EPSILON;
const SAFE_MIN = 2.2250738585072014e-308;

/** Smallest pivot magnitude allowed in a Sturm sequence (avoids division by zero, as dstebz). */
export function sturmPivotMinimum(e: ArrayLike<number>, k: number): number {
  let maxE2 = 1;
  for (let i = 0; i < k - 1; i++) maxE2 = Math.max(maxE2, e[i] * e[i]);
  return SAFE_MIN * maxE2;
}

/** Number of eigenvalues of T strictly below x (Sturm count of the LDL^T pivots of T - x I). */
export function sturmCount(d: ArrayLike<number>, e: ArrayLike<number>, k: number, x: number, pivmin: number): number {
  let count = 0;
  let q = d[0] - x;
  if (Math.abs(q) <= pivmin) q = -pivmin;
  if (q < 0) count++;
  for (let i = 1; i < k; i++) {
    const ei = e[i - 1];
    q = d[i] - x - (ei * ei) / q;
    if (Math.abs(q) <= pivmin) q = -pivmin;
    if (q < 0) count++;
  }
  return count;
}

/** Gershgorin interval [lower, upper] containing every eigenvalue of T. */
export function gershgorinInterval(d: ArrayLike<number>, e: ArrayLike<number>, k: number): [number, number] {
  let lower = Infinity;
  let upper = -Infinity;
  for (let i = 0; i < k; i++) {
    const radius = (i > 0 ? Math.abs(e[i - 1]) : 0) + (i < k - 1 ? Math.abs(e[i]) : 0);
    lower = Math.min(lower, d[i] - radius);
    upper = Math.max(upper, d[i] + radius);
  }
  return [lower, upper];
}

/**
 * The eigenvalue of T with ascending index `index` (0 = smallest), by bisection to relative
 * width 2 eps (or absolute width `absoluteTolerance`, for eigenvalues at zero).
 */
export function tridiagonalEigenvalue(d: ArrayLike<number>, e: ArrayLike<number>, k: number, index: number, absoluteTolerance = 0): number {
  if (k === 1) return d[0];
  const pivmin = sturmPivotMinimum(e, k);
  let [lo, hi] = gershgorinInterval(d, e, k);
  const width = Math.max(Math.abs(lo), Math.abs(hi));
  lo -= 2 * EPS * width + 2 * pivmin;
  hi += 2 * EPS * width + 2 * pivmin;
  const floor = Math.max(absoluteTolerance, 4 * pivmin);
  for (let iter = 0; iter < 2200; iter++) {
    if (hi - lo <= 2 * EPS * Math.max(Math.abs(lo), Math.abs(hi)) || hi - lo <= floor) break;
    // Geometric midpoint when the interval spans orders of magnitude on one side of zero:
    // tiny eigenvalues (and singular values) are then found in O(log log) more steps.
    let mid = 0.5 * (lo + hi);
    if (lo > 0 && hi > 4 * lo) mid = Math.sqrt(lo) * Math.sqrt(hi);
    else if (hi < 0 && lo < 4 * hi) mid = -Math.sqrt(-lo) * Math.sqrt(-hi);
    if (mid <= lo || mid >= hi) break;
    if (sturmCount(d, e, k, mid, pivmin) > index) hi = mid;
    else lo = mid;
  }
  return 0.5 * (lo + hi);
}

/** The LU's three diagonals and the starting vector of inverse iteration, kept between calls (Lanczos calls it at every check). */
let scratch = { dd: new Float64Array(0), du: new Float64Array(0), du2: new Float64Array(0), start: new Float64Array(0) };

function inverseIterationScratch(k: number): typeof scratch {
  if (scratch.start.length < k) {
    const length = Math.max(k, 2 * scratch.start.length, 64);
    // Starting vector with no special structure (a fixed irrational-looking sequence).
    const start = new Float64Array(length);
    for (let i = 0; i < length; i++) start[i] = 1 + 0.5 * Math.sin(1.7 * i + 0.3);
    scratch = { dd: new Float64Array(length), du: new Float64Array(length), du2: new Float64Array(length), start };
  }
  return scratch;
}

/**
 * A unit eigenvector of T for the (accurate) eigenvalue `lambda`, by inverse iteration with a
 * tridiagonal LU with partial pivoting (dgtsv). Two or three solves suffice because the shift is
 * an eigenvalue to working precision.
 */
export function tridiagonalEigenvector(
  d: ArrayLike<number>,
  e: ArrayLike<number>,
  k: number,
  lambda: number,
  out: Float64Array = new Float64Array(k),
): Float64Array {
  if (k === 1) {
    out[0] = 1;
    return out;
  }
  let scale = 0;
  for (let i = 0; i < k; i++) scale = Math.max(scale, Math.abs(d[i]) + (i < k - 1 ? Math.abs(e[i]) : 0));
  const perturbation = Math.max(EPS * scale, SAFE_MIN);
  const { dd, du, du2, start } = inverseIterationScratch(k);
  const x = out;
  x.set(start.subarray(0, k));
  for (let sweep = 0; sweep < 3; sweep++) {
    for (let i = 0; i < k; i++) dd[i] = d[i] - lambda;
    for (let i = 0; i < k - 1; i++) du[i] = e[i];
    const b = x;
    for (let i = 0; i < k - 1; i++) {
      const sub = e[i];
      if (Math.abs(dd[i]) >= Math.abs(sub)) {
        if (dd[i] === 0) dd[i] = perturbation;
        const fact = sub / dd[i];
        dd[i + 1] -= fact * du[i];
        b[i + 1] -= fact * b[i];
        du2[i] = 0;
      } else {
        const fact = dd[i] / sub;
        dd[i] = sub;
        const temp = dd[i + 1];
        dd[i + 1] = du[i] - fact * temp;
        if (i < k - 2) {
          du2[i] = du[i + 1];
          du[i + 1] = -fact * du2[i];
        } else {
          du2[i] = 0;
        }
        du[i] = temp;
        const tb = b[i];
        b[i] = b[i + 1];
        b[i + 1] = tb - fact * b[i + 1];
      }
    }
    if (dd[k - 1] === 0) dd[k - 1] = perturbation;
    b[k - 1] /= dd[k - 1];
    b[k - 2] = (b[k - 2] - du[k - 2] * b[k - 1]) / dd[k - 2];
    for (let i = k - 3; i >= 0; i--) b[i] = (b[i] - du[i] * b[i + 1] - du2[i] * b[i + 2]) / dd[i];
    let norm = 0;
    for (let i = 0; i < k; i++) norm = Math.max(norm, Math.abs(b[i]));
    for (let i = 0; i < k; i++) b[i] /= norm;
  }
  let ss = 0;
  for (let i = 0; i < k; i++) ss += x[i] * x[i];
  const inv = 1 / Math.sqrt(ss);
  for (let i = 0; i < k; i++) x[i] *= inv;
  return x;
}
