/**
 * Distributed Nesterov accelerated gradient:
 *   y' = x - alpha g(x);   x <- y' + beta (y' - y);   y <- y',   x(0) = y(0) = 0 or the guess.
 * The estimate is x, the extrapolated point at which the machines evaluate the gradient: the fused
 * pass that computes g(x) also gives |A x - b|^2 exactly, so the residual the runner tests is that of
 * the returned vector with one pass over A per iteration. (y converges at the same rate.)
 * Per eigenvalue lambda of A^T A, with q = 1 - alpha lambda, x_{k+1} = (1 + beta) q x_k - beta q x_{k-1}:
 * r^2 - (1 + beta) q r + beta q = 0; the larger root modulus grows with |q| on either side of 0, so the
 * worst lambda is mu or L. Optimal (Lessard-Recht-Packard): alpha = 4/(3L + mu),
 * beta = (sqrt(3k+1) - 2)/(sqrt(3k+1) + 2), rho = 1 - 2/sqrt(3k+1) (double root at lambda = mu).
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { gradientSpectrum, largest, momentum, positive, requireParameters, validateAgainst } from './common.js';
import { GradientMethod } from './gradientMethod.js';
import { nesterovRootModulus } from './spectralRadius.js';
import { nesterovMode, predictTransient, type TransientPrediction } from './transient.js';
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

export const dnag: DistributedAlgorithm = {
  id: 'dnag',
  name: 'Distributed Nesterov accelerated gradient',
  family: 'gradient',
  parameterNames: ['alpha', 'beta'],
  optimal(spectral: SpectralData): OptimalTuning {
    const { mu, L } = gradientSpectrum(spectral);
    const s = Math.sqrt((3 * L) / mu + 1);
    return { rate: 1 - 2 / s, gap: 2 / s, parameters: { alpha: 4 / (3 * L + mu), beta: (s - 2) / (s + 2) } };
  },
  rate(spectral: SpectralData, parameters: Parameters): number {
    const [alpha, beta] = requireParameters('dnag', parameters, DOMAINS);
    const { mu, L } = gradientSpectrum(spectral);
    return Math.max(nesterovRootModulus(alpha, beta, mu), nesterovRootModulus(alpha, beta, L));
  },
  validateParameters(parameters: Parameters): void {
    validateAgainst('dnag', parameters, DOMAINS);
  },
  /**
   * Table 1 (r = row-norm ratio): the paper's rho >= 1 - 2/sqrt(3 r + 1); the tighter
   * rho >= 1 - 2/sqrt(3 r^2 + 1) (Theorem 4: kappa >= r^2); rho >= 1 - 2 sin phi_min / sqrt(3 + sin^2 phi_min).
   */
  rateBounds(h: HeterogeneityForBounds): RateBounds {
    const r = h.rowNormRatio;
    const s = h.phiMin === null ? null : Math.sin(h.phiMin);
    const lowerBounds = {
      rowNormRatio: 1 - 2 / Math.sqrt(3 * r + 1),
      rowNormRatioSquared: 1 - 2 / Math.sqrt(3 * r * r + 1),
      phiMin: s === null ? null : 1 - (2 * s) / Math.sqrt(3 + s * s),
    };
    return { lower: largest(lowerBounds), upper: null, upperHypothesisHolds: false, lowerBounds };
  },
  create(system: DistributedSystem, parameters: Parameters, initialGuess?: Float64Array): IterativeMethod {
    const [alpha, beta] = requireParameters('dnag', parameters, DOMAINS);
    return new GradientMethod(system, { rule: 'dnag', alpha, beta }, initialGuess);
  },
  transientGrowth(spectral: SpectralData, parameters: Parameters): TransientPrediction | null {
    const [alpha, beta] = requireParameters('dnag', parameters, DOMAINS);
    return predictTransient(gradientSpectrum(spectral), dnag.rate(spectral, parameters), nesterovMode(alpha, beta));
  },
};
