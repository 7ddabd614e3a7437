/**
 * Distributed gradient descent: x <- x - alpha g(x), g(x) = sum_i A_i^T (A_i x - b_i), x(0) = 0 or the guess.
 * Error recurrence e <- (I - alpha A^T A) e: rho = max(|1 - alpha mu|, |1 - alpha L|);
 * optimal alpha = 2/(L + mu), rho = (kappa - 1)/(kappa + 1), kappa = kappa(A^T A) = L/mu.
 * One fused pass over A per iteration (the gradient and residual at the new x end the step).
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { gradientSpectrum, largest, positive, requireParameters, validateAgainst } from './common.js';
import { GradientMethod } from './gradientMethod.js';
import type {
  DistributedAlgorithm,
  HeterogeneityForBounds,
  IterativeMethod,
  OptimalTuning,
  Parameters,
  RateBounds,
  SpectralData,
} from './types.js';

const DOMAINS = [positive('alpha')];

export const dgd: DistributedAlgorithm = {
  id: 'dgd',
  name: 'Distributed gradient descent',
  family: 'gradient',
  parameterNames: ['alpha'],
  optimal(spectral: SpectralData): OptimalTuning {
    const { mu, L } = gradientSpectrum(spectral);
    return { rate: (L - mu) / (L + mu), gap: (2 * mu) / (L + mu), parameters: { alpha: 2 / (L + mu) } };
  },
  rate(spectral: SpectralData, parameters: Parameters): number {
    const [alpha] = requireParameters('dgd', parameters, DOMAINS);
    const { mu, L } = gradientSpectrum(spectral);
    return Math.max(Math.abs(1 - alpha * mu), Math.abs(1 - alpha * L));
  },
  validateParameters(parameters: Parameters): void {
    validateAgainst('dgd', parameters, DOMAINS);
  },
  /**
   * Table 1 (lower bounds only; r = row-norm ratio): rho >= (r^2 - 1)/(r^2 + 1) (Theorem 4:
   * kappa >= r^2) and rho >= 2/(1 + sin^2 phi_min) - 1 (kappa >= 1/sin^2 phi_min).
   */
  rateBounds(h: HeterogeneityForBounds): RateBounds {
    const r2 = h.rowNormRatio * h.rowNormRatio;
    const s = h.phiMin === null ? null : Math.sin(h.phiMin);
    const lowerBounds = {
      rowNormRatio: (r2 - 1) / (r2 + 1),
      phiMin: s === null ? null : 2 / (1 + s * s) - 1,
    };
    return { lower: largest(lowerBounds), upper: null, upperHypothesisHolds: false, lowerBounds };
  },
  create(system: DistributedSystem, parameters: Parameters, initialGuess?: Float64Array): IterativeMethod {
    const [alpha] = requireParameters('dgd', parameters, DOMAINS);
    return new GradientMethod(system, { rule: 'dgd', alpha, beta: 0 }, initialGuess);
  },
};
