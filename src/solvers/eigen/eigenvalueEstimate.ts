/**
 * What an eigenvalue estimate reports, whichever method made it: the thick-restart Lanczos of
 * ./lanczos.ts or ARPACK's (./arpackLanczos.ts), and the quotients and structural values
 * built on them.
 */

/** How an eigenvalue (or singular value) estimate was obtained. */
export type SpectralMethod =
  /** Thick-restart Lanczos on the operator itself (largest eigenvalue). */
  | 'lanczos'
  /** Thick-restart Lanczos on the inverse operator, applied through a factorization (shift-invert at 0). */
  | 'lanczos-shift-invert'
  /** The Krylov space became invariant or reached the operator's size: exact up to rounding. */
  | 'lanczos-exhaustive'
  /** A quotient of two estimates (kappa = lambda_max / lambda_min), their bounds combined. */
  | 'ratio'
  /** Exact from the sparsity structure alone (S = I, theta_ij = pi/2 for disjoint supports). */
  | 'structural'
  /**
   * lambda_max(S) = 2 - lambda_min(S): exact when the machines' overlap graph is bipartite (S's
   * spectrum is then symmetric about 1, ../analysis/kappaS.ts), the bound carried over from lambda_min(S).
   */
  | 'bipartite-reflection'
  /**
   * A principal angle from the dense eigenproblem of its pair's coupling block (the rows that share columns with the
   * other machine, ../sparse/couplingBlock.ts), certified on the pair's operator (../sparse/spectrumOfS.ts).
   */
  | 'coupling-block'
  /**
   * theta_ij = 0 exactly: machines i and j hold r_i + r_j independent rows in fewer columns than that, so their row
   * spaces share a direction (../sparse/spectrumOfS.ts pairsByDimensionCount).
   */
  | 'dimension-count'
  /**
   * A principal angle from the pair's orthonormal bases formed densely (their Householder QR on their column supports),
   * as the dense analysis computes it: a small CSR pair the sparse routes leave unconverged (../analysis/csrPairAngle.ts).
   */
  | 'dense-bases';

export interface EigenvalueEstimate {
  value: number;
  method: SpectralMethod;
  /** |value - exact| <= relativeErrorBound * |exact| (see the module comment for the assumption). */
  relativeErrorBound: number;
  /** Residual norm |Op y - theta y| of the unit Ritz vector (for the inverse: of the inverse operator). */
  residualNorm: number;
  /**
   * theta_1 - (theta_2 + rho_2), the gap estimate of the Kato-Temple refinement (NaN without a second
   * Ritz value); for shift-invert estimates, of the inverse operator.
   */
  gap: number;
  /** Operator applications. */
  iterations: number;
  restarts: number;
  /** The bound met the requested tolerance (or the space was exhausted). */
  converged: boolean;
  /**
   * Stopped before converging by the caller's test (LargestEigenvalueOptions.abandonWhen), which the top Ritz value
   * `value` met (for the inverse: `1 / value`'s): a bound on the end, not the end. Absent otherwise.
   */
  abandoned?: true;
}

/** A derived estimate (a singular value, a ratio): its value, how it was obtained and a relative error bound. */
export interface SpectralEstimate {
  value: number;
  method: SpectralMethod;
  /** |value - exact| <= relativeErrorBound * |exact| (Krylov error only). */
  relativeErrorBound: number;
  /** Operator applications (of both runs for a ratio). */
  iterations: number;
  converged: boolean;
  /** EigenvalueEstimate.abandoned: a bound that met the caller's stopping test, not the end. */
  abandoned?: true;
}

/** An eigenvalue estimate as a SpectralEstimate. */
export function spectralEstimateOf(e: EigenvalueEstimate): SpectralEstimate {
  const { value, method, relativeErrorBound, iterations, converged, abandoned } = e;
  return { value, method, relativeErrorBound, iterations, converged, ...(abandoned ? { abandoned } : {}) };
}

/**
 * The estimate of sigma = sqrt(lambda) from one of lambda: the relative bound b of lambda is kept, as
 * |sigma_hat - sigma| = |lambda_hat - lambda| / (sigma_hat + sigma) <= b sigma.
 */
export function squareRootEstimate(e: SpectralEstimate): SpectralEstimate {
  return { ...e, value: Math.sqrt(e.value) };
}

/** lambda_max / lambda_min, at least 1 (conditionNumberEstimate: a quotient of estimated ends below 1 reads 1). */
export function conditionNumber(largest: number, smallest: number): number {
  return Math.max(1, largest / smallest);
}

/**
 * A condition number lambda_max / lambda_min (kappa(S), kappa(A^T A)) from estimates of its two ends, with relative
 * bounds b1, b2: the quotient lies within a factor [(1 - b1) / (1 + b2), (1 + b1) / (1 - b2)] of the exact one, so
 * its relative bound is (b1 + b2) / (1 - b2) (infinite when b2 >= 1). A condition number is at least 1: a quotient
 * below it (S = m I when every machine's rows span R^n: its two ends' rounding gave 1 - 3e-11) reads 1, which is
 * nearer the exact value and within the same bound.
 */
export function conditionNumberEstimate(numerator: SpectralEstimate, denominator: SpectralEstimate): SpectralEstimate {
  const b1 = numerator.relativeErrorBound;
  const b2 = denominator.relativeErrorBound;
  return {
    value: conditionNumber(numerator.value, denominator.value),
    method: 'ratio',
    relativeErrorBound: b2 < 1 ? (b1 + b2) / (1 - b2) : Infinity,
    iterations: numerator.iterations + denominator.iterations,
    converged: numerator.converged && denominator.converged,
  };
}
