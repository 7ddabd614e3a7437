/**
 * Helpers shared by the algorithm definitions: parameter validation, checks on the spectral data,
 * and the quantity c = (m - 1) cos(theta_H) that Table 1's upper bounds are written in.
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { DimensionMismatchError, InvalidParameterError, SingularMatrixError } from '../errors.js';
import type { HeterogeneityForBounds, Parameters, SpectralData } from './types.js';

export interface ParameterDomain {
  readonly name: string;
  /** True when the value lies in the domain the iteration is defined on. */
  readonly contains: (value: number) => boolean;
  /** The domain in words, e.g. "alpha > 0". */
  readonly description: string;
}

export const positive = (name: string): ParameterDomain => ({
  name,
  contains: (v) => v > 0,
  description: `${name} > 0`,
});

export const momentum = (name: string): ParameterDomain => ({
  name,
  contains: (v) => v >= 0 && v < 1,
  description: `0 <= ${name} < 1`,
});

/**
 * Checks the parameters that are given (a partial set of user overrides is fine): every name must be
 * one of the algorithm's, every value finite and inside its domain.
 */
export function validateAgainst(algorithmId: string, parameters: Parameters, domains: readonly ParameterDomain[]): void {
  const valid = domains.map((d) => d.name);
  for (const [name, value] of Object.entries(parameters)) {
    const domain = domains.find((d) => d.name === name);
    if (domain === undefined) {
      const expected =
        valid.length === 0 ? `${algorithmId} takes no parameters` : `valid parameters for ${algorithmId}: ${valid.join(', ')}`;
      throw new InvalidParameterError(`Unknown parameter "${name}" for ${algorithmId}; ${expected}.`, {
        algorithm: algorithmId,
        parameter: name,
        validParameters: valid,
      });
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new InvalidParameterError(`Parameter ${name} of ${algorithmId} is ${String(value)}; it must be a finite number.`, {
        algorithm: algorithmId,
        parameter: name,
        value: String(value),
      });
    }
    if (!domain.contains(value)) {
      throw new InvalidParameterError(`Parameter ${name} of ${algorithmId} is ${value}; the iteration needs ${domain.description}.`, {
        algorithm: algorithmId,
        parameter: name,
        value,
        domain: domain.description,
      });
    }
  }
}

/** The full parameter set create() needs: validated, with no name missing. */
export function requireParameters(algorithmId: string, parameters: Parameters, domains: readonly ParameterDomain[]): number[] {
  validateAgainst(algorithmId, parameters, domains);
  return domains.map((d) => {
    const value = parameters[d.name];
    if (value === undefined) {
      throw new InvalidParameterError(`Parameter ${d.name} of ${algorithmId} is missing.`, { algorithm: algorithmId, parameter: d.name });
    }
    return value;
  });
}

function checkPositive(name: string, value: number, what: string): void {
  if (!Number.isFinite(value)) {
    throw new InvalidParameterError(`Spectral data ${name} is ${String(value)}; it must be a finite number.`, { [name]: String(value) });
  }
  if (!(value > 0)) {
    throw new SingularMatrixError(`${what} is ${value}: the system is numerically singular, no rate or optimal parameter exists.`, {
      [name]: value,
    });
  }
}

/** mu_min = lambda_min(S)/m and mu_max = lambda_max(S)/m, the extreme eigenvalues of X = S/m. */
export function projectionSpectrum(spectral: SpectralData): {
  m: number;
  lambdaMin: number;
  lambdaMax: number;
  muMin: number;
  muMax: number;
} {
  const { m, lambdaMinS, lambdaMaxS } = spectral;
  if (!Number.isInteger(m) || m < 1)
    throw new InvalidParameterError(`The number of machines is ${m}; it must be a positive integer.`, { m });
  checkPositive('lambdaMinS', lambdaMinS, 'lambda_min(S)');
  checkPositive('lambdaMaxS', lambdaMaxS, 'lambda_max(S)');
  const lambdaMin = Math.min(lambdaMinS, lambdaMaxS);
  const lambdaMax = Math.max(lambdaMinS, lambdaMaxS);
  return { m, lambdaMin, lambdaMax, muMin: lambdaMin / m, muMax: lambdaMax / m };
}

/** mu = lambda_min(A^T A), L = lambda_max(A^T A). */
export function gradientSpectrum(spectral: SpectralData): { mu: number; L: number } {
  checkPositive('mu', spectral.mu, 'lambda_min(A^T A)');
  checkPositive('L', spectral.L, 'lambda_max(A^T A)');
  return { mu: Math.min(spectral.mu, spectral.L), L: Math.max(spectral.mu, spectral.L) };
}

/**
 * eps kappa(A), kappa(A) = sqrt(kappa(A^T A)) = sqrt(L / mu): the relative residual double precision lets an iteration reach (Infinity when
 * unknown). A run whose tolerance is below it stagnates near it (../runner/runAlgorithm.ts); the iterations a rate
 * predicts to such a tolerance are exact arithmetic's.
 */
export function attainableAccuracy(kappaAtA: number): number {
  const kappa = Math.sqrt(kappaAtA);
  return Number.isFinite(kappa) && kappa >= 1 ? Number.EPSILON * kappa : Number.POSITIVE_INFINITY;
}

/** c = (m - 1) cos(theta_H); Table 1's upper bounds (Theorem 3) need c < 1. */
export function crossMachineC(h: HeterogeneityForBounds): number {
  return (h.m - 1) * Math.max(0, h.cosThetaH);
}

/** Largest of the bounds that exist (null when none does). */
export function largest(bounds: Readonly<Record<string, number | null>>): number | null {
  let best: number | null = null;
  for (const v of Object.values(bounds)) if (v !== null && Number.isFinite(v) && (best === null || v > best)) best = v;
  return best;
}

/** The initial guess when one is given: n finite numbers (DimensionMismatchError, InvalidParameterError otherwise). */
export function checkInitialGuess(system: DistributedSystem, guess: Float64Array | undefined): Float64Array | undefined {
  if (guess === undefined) return undefined;
  if (guess.length !== system.n) {
    throw new DimensionMismatchError(`The initial guess has ${guess.length} entries but the system has n = ${system.n} unknowns.`, {
      length: guess.length,
      n: system.n,
    });
  }
  const bad = guess.findIndex((v) => !Number.isFinite(v));
  if (bad >= 0) throw new InvalidParameterError(`Entry ${bad} of the initial guess is ${guess[bad]}; it must be finite.`, { entry: bad });
  return guess;
}
