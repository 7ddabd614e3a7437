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
  | 'bipartite-reflection';

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
}
