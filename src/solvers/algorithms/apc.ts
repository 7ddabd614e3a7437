/**
 * APC, Accelerated Projection-based Consensus (Azizan-Ruhi, Lahouti, Avestimehr, Hassibi 2019).
 *
 *   machine i:   x_i <- x_i + gamma P_i (xbar - x_i),      P_i = I - Q_i Q_i^T (null space of A_i)
 *   taskmaster:  xbar <- (eta/m) sum_i x_i + (1 - eta) xbar
 *
 * x_i(0) is the minimum-norm solution of A_i x = b_i (from a guess x0: its projection
 * x0 + A_i^+ (b_i - A_i x0) onto {x : A_i x = b_i}), xbar(0) their mean. The step moves x_i only
 * inside N(A_i), so A_i x_i = b_i, i.e. Q_i^T x_i = R^{-T} b_i (`qtx0`), holds throughout. Hence
 *   w_i := Q_i^T (xbar - x_i) = Q_i^T xbar - qtx0,   A_i xbar - b_i = R^T w_i,
 * and one iteration needs Q_i^T xbar (for w_i, which also yields the residual
 * |A xbar - b|^2 = sum_i |R^T w_i|^2) and Q_i w_i (for the update), no product with A:
 * 4 sum_i p_i c_i + O(sum_i p_i^2 + m n) <= O(n^2) flops. No n x n projector is formed. Both come
 * from one pass over Q_i: row k gives w_k = q_k . xbar - qtx0_k and, while it is in cache, the term
 * -gamma w_k q_k of the update (the update needs only w_k for row k's term).
 * Computing w_i from the constant qtx0 rather than from x_i makes the residual that of xbar itself,
 * and makes any rounding drift of Q_i^T x_i decay like (1 - gamma)^t instead of accumulating.
 *
 * Memory: the m estimates x_i are not m independent n-vectors. With y(0) = 0,
 * y(t + 1) = (1 - gamma) y(t) + gamma xbar(t), every x_i(t) = y(t) + A_i^+ (b_i - A_i y(t)) (the
 * projection of y(t) onto {x : A_i x = b_i}; proof in ../machines/csrConsensusPass.ts). On CSR storage
 * the machines therefore keep y and each machine's offset on its column support, O(n + nnz), not m n
 * (8 GB at n = 10^6, m = 1000), and an iteration costs one Cimmino pass; on dense storage each
 * machine keeps its x_i, m n doubles beside bases that already take n x p_i each.
 *
 * Rate (error recurrence on e_i = x_i - x* in N(A_i), ebar = xbar - x*):
 *   e_i' = (1 - gamma) e_i + gamma P_i ebar,   ebar' = (eta/m) sum_i e_i' + (1 - eta) ebar.
 * For an eigenvector v of X = S/m with eigenvalue mu, (e_i = gamma P_i v / (lambda - 1 + gamma), ebar = v)
 * is an eigenvector when
 *   lambda^2 - (1 + C - gamma eta mu) lambda + C = 0,   C = (1 - gamma)(1 - eta)           (*)
 * giving 2n eigenvalues; the remaining (m - 2) n states (e_i in N(A_i), sum_i e_i = 0, ebar = 0)
 * have eigenvalue 1 - gamma. So rho = max(roots of (*) at mu_min and mu_max, |1 - gamma| if m >= 3);
 * for m = 1, x_1 = x* from the start and rho = |1 - eta|. (*) is symmetric in gamma and eta but the
 * extra eigenvalue is not: at the optimum gamma must be the smaller root, swapped APC diverges
 * (m >= 3, whenever the larger root exceeds 2).
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { createConsensusPass, type ConsensusMachines } from '../machines/consensusPass.js';
import { checkStateLengths, SnapshotMismatchError } from '../runner/snapshot.js';
import { checkInitialGuess, crossMachineC, largest, positive, projectionSpectrum, requireParameters, validateAgainst } from './common.js';
import { shiftedQuadraticRootModulus } from './spectralRadius.js';
import type {
  DistributedAlgorithm,
  HeterogeneityForBounds,
  IterativeMethod,
  OptimalTuning,
  Parameters,
  RateBounds,
  SpectralData,
} from './types.js';

const DOMAINS = [positive('gamma'), positive('eta')];

/** Spectral radius of the APC error iteration for given gamma, eta (see (*) above). */
export function apcRate(spectral: SpectralData, gamma: number, eta: number): number {
  const { m, muMin, muMax } = projectionSpectrum(spectral);
  if (m === 1) return Math.abs(1 - eta);
  const c = (1 - gamma) * (1 - eta);
  // Relative error of c from the roundings of gamma and eta, amplified by the cancellation in 1 - gamma, 1 - eta.
  const cConditioning = 1 + Math.abs(gamma / (1 - gamma)) + Math.abs(eta / (1 - eta));
  const ge = gamma * eta;
  let rho = Math.max(shiftedQuadraticRootModulus(ge * muMin, c, cConditioning), shiftedQuadraticRootModulus(ge * muMax, c, cConditioning));
  if (m >= 3) rho = Math.max(rho, Math.abs(1 - gamma));
  return rho;
}

/**
 * Optimal parameters (Azizan-Ruhi et al., Theorem 2), with D = sqrt(mu_max) + sqrt(mu_min):
 *   gamma* = 2 (1 + sqrt(mu_min mu_max) - sqrt((1-mu_min)(1-mu_max))) / D^2,
 *   eta*   = 2 (1 + sqrt(mu_min mu_max) + sqrt((1-mu_min)(1-mu_max))) / D^2,
 *   rho*   = (sqrt(kappa(S)) - 1) / (sqrt(kappa(S)) + 1).
 * eta* is evaluated as written. For gamma* the identity (gamma* - 1)(eta* - 1) = rho*^2 gives
 * gamma* = 1 + rho*^2 / (eta* - 1) (eta* > 1 whenever m >= 2), which rounds to the float nearest the
 * true gamma* even when gamma* is within an ulp of 1 (S close to a multiple of I): there a one-ulp
 * error in gamma would by itself raise the spectral radius from ~0 to sqrt(ulp) ~ 1e-8.
 */
export function apcOptimal(spectral: SpectralData): OptimalTuning {
  const { muMin, muMax } = projectionSpectrum(spectral);
  const sMin = Math.sqrt(muMin);
  const sMax = Math.sqrt(muMax);
  const d2 = (sMin + sMax) * (sMin + sMax);
  const rate = (sMax - sMin) / (sMax + sMin);
  // mu <= 1 in exact arithmetic (S <= m I); clamp the rounding excess.
  const root = Math.sqrt(Math.max(0, 1 - muMin) * Math.max(0, 1 - muMax));
  const eta = (2 * (1 + sMin * sMax + root)) / d2;
  const gamma = eta > 1 ? 1 + (rate * rate) / (eta - 1) : (2 * (1 + sMin * sMax - root)) / d2;
  return { rate, gap: (2 * sMin) / (sMax + sMin), parameters: { gamma, eta } };
}

/**
 * The APC state machine; MLM is this with gamma = eta = 1. The machines' pass runs on the solver's
 * threads (../machines/consensusPass.ts). Each step is the taskmaster's combination of the
 * machines' new x_i (summed in machine order), then one pass in which every machine measures xbar
 * (residual, consensus distance) and computes its next x_i. The machines' x_i thus run one step
 * ahead of xbar; only xbar is observable.
 */
export class ApcMethod implements IterativeMethod {
  readonly estimate: Float64Array;
  readonly threads: number;
  private readonly m: number;
  private readonly eta: number;
  private readonly machines: ConsensusMachines;
  private readonly sum: Float64Array;
  private residual2 = 0;
  private consensus = 0;

  constructor(system: DistributedSystem, gamma: number, eta: number, initialGuess?: Float64Array) {
    const guess = checkInitialGuess(system, initialGuess);
    const { n, m } = system;
    this.m = m;
    this.eta = eta;
    this.machines = createConsensusPass(system, gamma);
    this.threads = this.machines.threads;
    this.estimate = this.machines.xbar;
    this.sum = new Float64Array(n);
    try {
      // x_i(0): each machine's minimum-norm solution, or the projection of the guess onto its solution set; xbar(0) their mean.
      this.machines.start(guess);
      this.machines.sumOfEstimates(this.sum);
      for (let j = 0; j < n; j++) this.estimate[j] = this.sum[j] / m;
      this.pass();
    } catch (error) {
      this.machines.dispose();
      throw error;
    }
  }

  residualNormSquared(): number {
    return this.residual2;
  }

  consensusDistance(): number {
    return this.consensus;
  }

  step(): void {
    const { m, eta, sum } = this;
    const xbar = this.estimate;
    // xbar <- (eta/m) sum_i x_i + (1 - eta) xbar
    this.machines.sumOfEstimates(sum);
    const scale = eta / m;
    for (let j = 0; j < xbar.length; j++) xbar[j] = scale * sum[j] + (1 - eta) * xbar[j];
    this.pass();
  }

  /**
   * [xbar, ...the machines' state, (residual^2, consensus distance)]: the machines run one step
   * ahead of xbar, so the measures of xbar cannot be taken again without moving them; they are kept.
   */
  state(): Float64Array[] {
    return [this.estimate.slice(), ...this.machines.state(), Float64Array.of(this.residual2, this.consensus)];
  }

  restore(state: readonly Float64Array[]): void {
    if (state.length < 2) throw new SnapshotMismatchError(`APC's state has ${state.length} arrays, at least 2 expected`);
    const measures = state[state.length - 1];
    checkStateLengths('APC', [state[0], measures], [this.estimate.length, 2]);
    this.machines.restore(state.slice(1, -1));
    this.estimate.set(state[0]);
    this.residual2 = measures[0];
    this.consensus = measures[1];
  }

  dispose(): void {
    this.machines.dispose();
  }

  private pass(): void {
    this.machines.run();
    this.residual2 = this.machines.residualNormSquared();
    this.consensus = this.machines.consensusDistance();
  }
}

export const apc: DistributedAlgorithm = {
  id: 'apc',
  name: 'Accelerated Projection-based Consensus',
  family: 'projection',
  parameterNames: ['gamma', 'eta'],
  optimal: apcOptimal,
  rate(spectral: SpectralData, parameters: Parameters): number {
    const [gamma, eta] = requireParameters('apc', parameters, DOMAINS);
    return apcRate(spectral, gamma, eta);
  },
  validateParameters(parameters: Parameters): void {
    validateAgainst('apc', parameters, DOMAINS);
  },
  /** Table 1: 2/(1 + sin theta_H) - 1 <= rho <= c / (1 + sqrt(1 - c^2)), c = (m-1) cos theta_H < 1. */
  rateBounds(h: HeterogeneityForBounds): RateBounds {
    const c = crossMachineC(h);
    const lowerBounds = { thetaH: 2 / (1 + Math.sin(h.thetaH)) - 1 };
    const upperHypothesisHolds = c < 1;
    return {
      lower: largest(lowerBounds),
      upper: upperHypothesisHolds ? c / (1 + Math.sqrt(1 - c * c)) : null,
      upperHypothesisHolds,
      lowerBounds,
    };
  },
  create(system: DistributedSystem, parameters: Parameters, initialGuess?: Float64Array): IterativeMethod {
    const [gamma, eta] = requireParameters('apc', parameters, DOMAINS);
    return new ApcMethod(system, gamma, eta, initialGuess);
  },
};
