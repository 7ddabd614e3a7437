/**
 * Block Cimmino: x <- x + nu sum_i A_i^+ (b_i - A_i x), A_i^+ = A_i^T (A_i A_i^T)^{-1}, x(0) = 0 or the guess.
 * With A_i = R^T Q_i^T, A_i^+ r = Q_i R^{-T} r: machine i solves one triangular system and applies
 * Q_i. Error recurrence e <- (I - nu S) e: rho = max(|1 - nu lambda_min(S)|, |1 - nu lambda_max(S)|);
 * optimal nu = 2/(lambda_min(S) + lambda_max(S)), rho = (kappa(S) - 1)/(kappa(S) + 1).
 * The residuals r_i = b_i - A_i x of the new x end each step, so an iteration is one pass over each
 * A_i and one over each Q_i (4 sum_i p_i c_i + sum_i p_i^2 flops).
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { CimminoPass } from '../machines/cimminoPass.js';
import { checkStateLengths } from '../runner/snapshot.js';
import { checkInitialGuess, crossMachineC, largest, positive, projectionSpectrum, requireParameters, validateAgainst } from './common.js';
import type {
  DistributedAlgorithm,
  HeterogeneityForBounds,
  IterativeMethod,
  OptimalTuning,
  Parameters,
  RateBounds,
  SpectralData,
} from './types.js';

const DOMAINS = [positive('nu')];

/**
 * The machines' pass runs on the solver's threads (../machines/cimminoPass.ts). Each step is the
 * taskmaster's x += nu sum_i A_i^+ r_i (summed in machine order) with the machines' terms from the
 * last pass, then one pass at the new x giving its residual (what the runner tests) and the next terms.
 */
class CimminoMethod implements IterativeMethod {
  readonly estimate: Float64Array;
  readonly threads: number;
  private readonly machines: CimminoPass;
  /** sum_i A_i^+ r_i. */
  private readonly direction: Float64Array;
  private residual2 = 0;

  constructor(
    system: DistributedSystem,
    private readonly nu: number,
    initialGuess?: Float64Array,
  ) {
    const guess = checkInitialGuess(system, initialGuess);
    this.machines = new CimminoPass(system);
    this.threads = this.machines.threads;
    this.estimate = this.machines.x;
    if (guess) this.estimate.set(guess);
    this.direction = new Float64Array(system.n);
    try {
      this.residual2 = this.machines.evaluate();
    } catch (error) {
      this.machines.dispose();
      throw error;
    }
  }

  residualNormSquared(): number {
    return this.residual2;
  }

  consensusDistance(): null {
    return null;
  }

  step(): void {
    const { nu, direction } = this;
    const x = this.estimate;
    this.machines.direction(direction);
    for (let j = 0; j < x.length; j++) x[j] += nu * direction[j];
    this.residual2 = this.machines.evaluate();
  }

  /** [x]: the machines' terms and the residual are computed again at x on restore. */
  state(): Float64Array[] {
    return [this.estimate.slice()];
  }

  restore(state: readonly Float64Array[]): void {
    checkStateLengths('Block Cimmino', state, [this.estimate.length]);
    this.estimate.set(state[0]);
    this.residual2 = this.machines.evaluate();
  }

  dispose(): void {
    this.machines.dispose();
  }
}

export const cimmino: DistributedAlgorithm = {
  id: 'cimmino',
  name: 'Block Cimmino',
  family: 'projection',
  parameterNames: ['nu'],
  optimal(spectral: SpectralData): OptimalTuning {
    const { lambdaMin, lambdaMax } = projectionSpectrum(spectral);
    return {
      rate: (lambdaMax - lambdaMin) / (lambdaMax + lambdaMin),
      gap: (2 * lambdaMin) / (lambdaMax + lambdaMin),
      parameters: { nu: 2 / (lambdaMin + lambdaMax) },
    };
  },
  rate(spectral: SpectralData, parameters: Parameters): number {
    const [nu] = requireParameters('cimmino', parameters, DOMAINS);
    const { lambdaMin, lambdaMax } = projectionSpectrum(spectral);
    return Math.max(Math.abs(1 - nu * lambdaMin), Math.abs(1 - nu * lambdaMax));
  },
  validateParameters(parameters: Parameters): void {
    validateAgainst('cimmino', parameters, DOMAINS);
  },
  /** Table 1: 2/(1 + sin^2 theta_H) - 1 <= rho <= c = (m-1) cos theta_H, the upper bound when c < 1. */
  rateBounds(h: HeterogeneityForBounds): RateBounds {
    const c = crossMachineC(h);
    const s = Math.sin(h.thetaH);
    const lowerBounds = { thetaH: 2 / (1 + s * s) - 1 };
    const upperHypothesisHolds = c < 1;
    return { lower: largest(lowerBounds), upper: upperHypothesisHolds ? c : null, upperHypothesisHolds, lowerBounds };
  },
  create(system: DistributedSystem, parameters: Parameters, initialGuess?: Float64Array): IterativeMethod {
    const [nu] = requireParameters('cimmino', parameters, DOMAINS);
    return new CimminoMethod(system, nu, initialGuess);
  },
};
