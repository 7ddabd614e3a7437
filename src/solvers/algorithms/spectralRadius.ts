/**
 * Spectral radii of the two-term recurrences behind APC, D-HBM and D-NAG, from the extreme
 * eigenvalues only.
 *
 * Each of these iterations acts on an eigen-direction of its symmetric matrix (A^T A or S/m) through
 * a 2 x 2 companion matrix whose characteristic polynomial is r^2 - B r + C. For a fixed C the
 * larger root modulus is a non-decreasing function of |B| (it is sqrt(C) while the roots are complex,
 * (|B| + sqrt(B^2 - 4C)) / 2 once they are real, and the two agree on the boundary), and B is affine
 * in the eigenvalue, so the worst eigenvalue of an interval is one of its two ends. (For D-NAG, C
 * varies with the eigenvalue too; nesterovRootModulus shows the same end-point property.)
 *
 * At the optimal parameters both ends are double roots (B^2 = 4C). There the modulus has a
 * square-root branch point: a parameter perturbed by one rounding error e moves the true spectral
 * radius by O(sqrt(e)) ~ 1e-8. A discriminant factor that is zero to within the rounding of its
 * inputs (estimated below, including the cancellation in 1 - sqrt(C)) is therefore treated as exactly
 * zero, so the optimal parameters give back the optimal rate to rounding. The price: parameters
 * within rounding of a double root report the double root's modulus, off by at most ~1e-7.
 */

/** Rounding errors allowed in a discriminant factor that still counts as zero (a double root). */
export const DOUBLE_ROOT_TOLERANCE = 16 * Number.EPSILON;

/**
 * Largest root modulus of r^2 - (1 + c - t) r + c = 0.
 * Heavy ball (per eigenvalue lambda of A^T A): c = beta, t = alpha lambda.
 * APC (per eigenvalue mu of X = S/m): c = (1 - gamma)(1 - eta), t = gamma eta mu.
 * `cConditioning` bounds the relative error of c in units of the machine epsilon (1 when c is a
 * parameter itself; larger when c was formed with cancellation, e.g. from 1 - gamma).
 */
export function shiftedQuadraticRootModulus(t: number, c: number, cConditioning = 1): number {
  // An input that overflowed (APC at gamma = eta = 1e300: c = (1 - gamma)(1 - eta)) makes a root at least sqrt(|c|) or
  // ~t in modulus: beyond double precision too (where b = 1 + c - t would read Infinity - Infinity = NaN).
  if (!Number.isFinite(t) || !Number.isFinite(c)) return Infinity;
  const b = 1 + c - t;
  if (c <= 0) return (Math.abs(b) + sqrtOfSquarePlus(b, -4 * c)) / 2; // real roots of opposite signs (or 0 and b)
  const sc = Math.sqrt(c);
  // B^2 - 4C = (B - 2 sqrt C)(B + 2 sqrt C) = ((1 - sqrt C)^2 - t)((1 + sqrt C)^2 - t): each factor
  // compares t with a square directly instead of cancelling two large terms of B^2 - 4C.
  const lowSquare = (1 - sc) * (1 - sc);
  const highSquare = (1 + sc) * (1 + sc);
  // Absolute rounding of sqrt(C), times 2 |1 -+ sqrt(C)|, is what the squares inherit.
  const scError = sc * (cConditioning + 2);
  let low = lowSquare - t;
  let high = highSquare - t;
  if (Math.abs(low) <= DOUBLE_ROOT_TOLERANCE * (Math.abs(t) + lowSquare + Math.abs(1 - sc) * scError)) low = 0;
  if (Math.abs(high) <= DOUBLE_ROOT_TOLERANCE * (Math.abs(t) + highSquare + (1 + sc) * scError)) high = 0;
  const discriminant = low * high;
  if (discriminant <= 0) return sc; // complex pair or double root: |r| = sqrt(C)
  // The factors' square roots apart: their product overflows for t beyond ~1e154 (alpha = 1e300), the roots do not.
  return (Math.abs(b) + Math.sqrt(Math.abs(low)) * Math.sqrt(Math.abs(high))) / 2;
}

/** sqrt(b^2 + d), d >= 0, without overflowing where b^2 does (|b| beyond ~1e154): then |b| sqrt(1 + (d / b) / b). */
function sqrtOfSquarePlus(b: number, d: number): number {
  const direct = Math.sqrt(b * b + d);
  return Number.isFinite(direct) || !Number.isFinite(b) ? direct : Math.abs(b) * Math.sqrt(1 + d / b / b);
}

/**
 * Largest root modulus of Nesterov's per-eigenvalue recurrence r^2 - (1 + beta) q r + beta q = 0,
 * q = 1 - alpha lambda (x_{k+1} = (1 + beta) q x_k - beta q x_{k-1}). It is non-decreasing in |q| on
 * either side of q = 0 (q <= 0: real roots, ((1 + beta)|q| + sqrt((1 + beta)^2 q^2 + 4 beta |q|)) / 2;
 * 0 < q <= 4 beta/(1 + beta)^2: complex, sqrt(beta q); beyond: real, growing in q), and q is affine
 * in lambda, so over [mu, L] the worst lambda is mu or L.
 */
export function nesterovRootModulus(alpha: number, beta: number, lambda: number): number {
  const t = alpha * lambda;
  const q = 1 - t;
  const b = (1 + beta) * q;
  if (q <= 0) return (Math.abs(b) + sqrtOfSquarePlus(b, -4 * beta * q)) / 2; // C <= 0: real roots
  // B^2 - 4C = q ((1 + beta)^2 q - 4 beta) = q ((1 - beta)^2 - (1 + beta)^2 t).
  const left = (1 - beta) * (1 - beta);
  const right = (1 + beta) * (1 + beta) * t;
  let factor = left - right;
  // A rounding of beta moves (1 - beta)^2 by 2 beta |1 - beta| eps and (1 + beta)^2 t by 2 beta (1 + beta) t eps.
  const scale = left + right + 2 * beta * (Math.abs(1 - beta) + (1 + beta) * Math.abs(t));
  if (Math.abs(factor) <= DOUBLE_ROOT_TOLERANCE * scale) factor = 0;
  if (factor <= 0) return Math.sqrt(beta * q); // complex pair or double root
  return (b + Math.sqrt(q * factor)) / 2;
}
