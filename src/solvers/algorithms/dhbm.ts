/**
 * Distributed heavy-ball method (Polyak): z <- beta z + g(x); x <- x - alpha z, x(0) = 0 or the guess, z(0) = 0,
 * i.e. x_{k+1} = x_k - alpha g(x_k) + beta (x_k - x_{k-1}).
 * Per eigenvalue lambda of A^T A the error obeys r^2 - (1 + beta - alpha lambda) r + beta = 0, whose
 * larger root modulus is worst at lambda in {mu, L} (see spectralRadius.ts).
 * Optimal: alpha = 4/(sqrt L + sqrt mu)^2, beta = ((sqrt k - 1)/(sqrt k + 1))^2,
 * rho = (sqrt k - 1)/(sqrt k + 1), k = kappa(A^T A); both ends are double roots, so the error
 * decays like t rho^t, after a transient growth near lambda = L (./transient.ts). One fused pass over A per iteration.
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { gradientSpectrum, largest, momentum, positive, requireParameters, validateAgainst } from './common.js';
import { GradientMethod } from './gradientMethod.js';
import { shiftedQuadraticRootModulus } from './spectralRadius.js';
import { heavyBallMode, predictTransient, type TransientPrediction } from './transient.js';
import type {
  DistributedAlgorithm,
  HeterogeneityForBounds,
  IterativeMethod,
  OptimalTuning,
  Parameters,
  RateBounds,
  SpectralData,
} from './types.js';

const DOMAINS = [positive('alpha'), momentum('beta')];

export const dhbm: DistributedAlgorithm = {
  id: 'dhbm',
  name: 'Distributed heavy-ball method',
  family: 'gradient',
  parameterNames: ['alpha', 'beta'],
  optimal(spectral: SpectralData): OptimalTuning {
    const { mu, L } = gradientSpectrum(spectral);
    const sL = Math.sqrt(L);
    const sMu = Math.sqrt(mu);
    const rate = (sL - sMu) / (sL + sMu);
    return { rate, gap: (2 * sMu) / (sL + sMu), parameters: { alpha: 4 / ((sL + sMu) * (sL + sMu)), beta: rate * rate } };
  },
  rate(spectral: SpectralData, parameters: Parameters): number {
    const [alpha, beta] = requireParameters('dhbm', parameters, DOMAINS);
    const { mu, L } = gradientSpectrum(spectral);
    return Math.max(shiftedQuadraticRootModulus(alpha * mu, beta), shiftedQuadraticRootModulus(alpha * L, beta));
  },
  validateParameters(parameters: Parameters): void {
    validateAgainst('dhbm', parameters, DOMAINS);
  },
  /** Table 1 (r = row-norm ratio): rho >= (r - 1)/(r + 1) and rho >= 2/(1 + sin phi_min) - 1. */
  rateBounds(h: HeterogeneityForBounds): RateBounds {
    const r = h.rowNormRatio;
    const lowerBounds = {
      rowNormRatio: (r - 1) / (r + 1),
      phiMin: h.phiMin === null ? null : 2 / (1 + Math.sin(h.phiMin)) - 1,
    };
    return { lower: largest(lowerBounds), upper: null, upperHypothesisHolds: false, lowerBounds };
  },
  create(system: DistributedSystem, parameters: Parameters, initialGuess?: Float64Array): IterativeMethod {
    const [alpha, beta] = requireParameters('dhbm', parameters, DOMAINS);
    return new GradientMethod(system, { rule: 'dhbm', alpha, beta }, initialGuess);
  },
  transientGrowth(spectral: SpectralData, parameters: Parameters): TransientPrediction | null {
    const [alpha, beta] = requireParameters('dhbm', parameters, DOMAINS);
    return predictTransient(gradientSpectrum(spectral), dhbm.rate(spectral, parameters), heavyBallMode(alpha, beta));
  },
};
