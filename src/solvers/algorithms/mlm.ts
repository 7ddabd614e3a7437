/**
 * Mou-Liu-Morse projection consensus: APC with gamma = eta = 1, i.e.
 *   x_i <- x_i + P_i (xbar - x_i)   (x_i becomes the projection of xbar onto {x : A_i x = b_i}),
 *   xbar <- (1/m) sum_i x_i.
 * No parameters. Rate (APC's (*) with gamma = eta = 1: roots 0 and 1 - mu): rho = 1 - lambda_min(S)/m.
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { ApcMethod, apcRate } from './apc.js';
import { crossMachineC, largest, projectionSpectrum, validateAgainst } from './common.js';
import type {
  DistributedAlgorithm,
  HeterogeneityForBounds,
  IterativeMethod,
  OptimalTuning,
  Parameters,
  RateBounds,
  SpectralData,
} from './types.js';

export const mlm: DistributedAlgorithm = {
  id: 'mlm',
  name: 'Mou-Liu-Morse projection consensus',
  family: 'projection',
  parameterNames: [],
  optimal(spectral: SpectralData): OptimalTuning {
    const { muMin } = projectionSpectrum(spectral);
    return { rate: 1 - muMin, gap: muMin, parameters: {} };
  },
  rate(spectral: SpectralData, parameters: Parameters): number {
    validateAgainst('mlm', parameters, []);
    return apcRate(spectral, 1, 1);
  },
  validateParameters(parameters: Parameters): void {
    validateAgainst('mlm', parameters, []);
  },
  /** Table 1: 1 - sin^2 theta_H <= rho <= (1 - 1/m)(1 + cos theta_H), the upper bound when c < 1. */
  rateBounds(h: HeterogeneityForBounds): RateBounds {
    const c = crossMachineC(h);
    const s = Math.sin(h.thetaH);
    const lowerBounds = { thetaH: 1 - s * s };
    const upperHypothesisHolds = c < 1;
    return {
      lower: largest(lowerBounds),
      upper: upperHypothesisHolds ? (1 - 1 / h.m) * (1 + Math.max(0, h.cosThetaH)) : null,
      upperHypothesisHolds,
      lowerBounds,
    };
  },
  create(system: DistributedSystem, parameters: Parameters, initialGuess?: Float64Array): IterativeMethod {
    validateAgainst('mlm', parameters, []);
    return new ApcMethod(system, 1, 1, initialGuess);
  },
};
