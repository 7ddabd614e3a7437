/**
 * APC, Accelerated Projection-based Consensus (Azizan-Ruhi, Lahouti, Avestimehr, Hassibi 2019).
 *
 *   machine i:   x_i <- x_i + gamma P_i (xbar - x_i),      P_i = I - Q_i Q_i^T (null space of A_i)
 *   taskmaster:  xbar <- (eta/m) sum_i x_i + (1 - eta) xbar
 *
 * x_i(0) is the minimum-norm solution of A_i x = b_i, xbar(0) their mean. The step moves x_i only
 * inside N(A_i), so A_i x_i = b_i, i.e. Q_i^T x_i = R^{-T} b_i (`qtx0`), holds throughout. Hence
 *   w_i := Q_i^T (xbar - x_i) = Q_i^T xbar - qtx0,   A_i xbar - b_i = R^T w_i,
 * and one iteration is two passes over each Q_i (Q_i w_i for the update, Q_i^T xbar for the next
 * w_i, which also yields the residual |A xbar - b|^2 = sum_i |R^T w_i|^2) and none over A:
 * 4 sum_i p_i c_i + O(sum_i p_i^2 + m n) <= O(n^2) flops. No n x n projector is formed.
 * Computing w_i from the constant qtx0 rather than from x_i makes the residual that of xbar itself,
 * and makes any rounding drift of Q_i^T x_i decay like (1 - gamma)^t instead of accumulating.
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
import { gather, minimumNormLocalSolution, type DistributedSystem, type MachineData } from '../distributed/distributedSystem.js';
import { multiplyRTransposed } from '../linalg/householderQr.js';
import { accumulateRowCombination, multiplyRows } from '../linalg/rowKernels.js';
import { crossMachineC, largest, positive, projectionSpectrum, requireParameters, validateAgainst } from './common.js';
import { shiftedQuadraticRootModulus } from './spectralRadius.js';
import type { DistributedAlgorithm, HeterogeneityForBounds, IterativeMethod, OptimalTuning, Parameters, RateBounds, SpectralData } from './types.js';

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
  return { rate, parameters: { gamma, eta } };
}

/** The APC state machine; MLM is this with gamma = eta = 1. */
export class ApcMethod implements IterativeMethod {
  readonly estimate: Float64Array;
  private readonly machines: readonly MachineData[];
  private readonly n: number;
  private readonly m: number;
  private readonly gamma: number;
  private readonly eta: number;
  /** x_i for every machine, machine i at [i n, (i + 1) n). */
  private readonly local: Float64Array;
  /** w_i = Q_i^T xbar - qtx0 for every machine, machine i at [rowOffset[i], rowOffset[i] + p_i). */
  private readonly w: Float64Array;
  private readonly rowOffset: Int32Array;
  private readonly sum: Float64Array;
  private readonly supportBuffer: Float64Array;
  /** R^T w_i of the machine being measured. */
  private readonly machineResidual: Float64Array;
  private residual2 = 0;
  private consensus = 0;

  constructor(system: DistributedSystem, gamma: number, eta: number) {
    const { n, m, machines } = system;
    this.machines = machines;
    this.n = n;
    this.m = m;
    this.gamma = gamma;
    this.eta = eta;
    this.local = new Float64Array(m * n);
    this.rowOffset = new Int32Array(m + 1);
    for (let i = 0; i < m; i++) this.rowOffset[i + 1] = this.rowOffset[i] + machines[i].p;
    this.w = new Float64Array(this.rowOffset[m]);
    this.sum = new Float64Array(n);
    this.supportBuffer = new Float64Array(Math.max(1, ...machines.map((mc) => (mc.full ? 0 : mc.c))));
    this.machineResidual = new Float64Array(Math.max(1, ...machines.map((mc) => mc.p)));
    this.estimate = new Float64Array(n);
    for (let i = 0; i < m; i++) {
      const xi = minimumNormLocalSolution(machines[i], n);
      this.local.set(xi, i * n);
      for (let j = 0; j < n; j++) this.estimate[j] += xi[j];
    }
    for (let j = 0; j < n; j++) this.estimate[j] /= m;
    this.measure();
  }

  residualNormSquared(): number {
    return this.residual2;
  }

  consensusDistance(): number {
    return this.consensus;
  }

  step(): void {
    const { n, m, gamma, eta, local, w, sum, machines, rowOffset } = this;
    const xbar = this.estimate;
    sum.fill(0);
    for (let i = 0; i < m; i++) {
      const { p, c, q, qStart, qEnd, cols, full } = machines[i];
      const base = i * n;
      // x_i <- x_i + gamma (xbar - x_i) - gamma Q_i w_i  (= x_i + gamma P_i (xbar - x_i))
      for (let j = 0; j < n; j++) local[base + j] += gamma * (xbar[j] - local[base + j]);
      const wo = rowOffset[i];
      if (full) {
        accumulateRowCombination(q, p, c, qStart, qEnd, w, wo, -gamma, local, base);
      } else {
        // Accumulate gamma Q_i w_i contiguously on the support, then scatter once.
        const u = this.supportBuffer;
        u.fill(0, 0, c);
        accumulateRowCombination(q, p, c, qStart, qEnd, w, wo, gamma, u);
        for (let t = 0; t < c; t++) local[base + cols[t]] -= u[t];
      }
      for (let j = 0; j < n; j++) sum[j] += local[base + j];
    }
    // xbar <- (eta/m) sum_i x_i + (1 - eta) xbar
    const scale = eta / m;
    for (let j = 0; j < n; j++) xbar[j] = scale * sum[j] + (1 - eta) * xbar[j];
    this.measure();
  }

  /** w_i = Q_i^T xbar - qtx0, |A xbar - b|^2 = sum_i |R^T w_i|^2 and max_i |xbar - x_i|. */
  private measure(): void {
    const { n, m, local, w, machines, rowOffset, supportBuffer } = this;
    const xbar = this.estimate;
    let residual2 = 0;
    let maxDistance2 = 0;
    for (let i = 0; i < m; i++) {
      const machine = machines[i];
      const { p, c, q, qStart, qEnd, r, full, qtx0 } = machine;
      const xs = full ? xbar : gather(machine, xbar, supportBuffer);
      const wo = rowOffset[i];
      multiplyRows(q, p, c, qStart, qEnd, xs, w, wo);
      for (let k = 0; k < p; k++) w[wo + k] -= qtx0[k];
      // A_i xbar - b_i = R^T w_i
      const ri = multiplyRTransposed(r, p, w, this.machineResidual, wo);
      for (let j = 0; j < p; j++) residual2 += ri[j] * ri[j];
      const base = i * n;
      let d2 = 0;
      for (let j = 0; j < n; j++) {
        const d = xbar[j] - local[base + j];
        d2 += d * d;
      }
      if (d2 > maxDistance2 || Number.isNaN(d2)) maxDistance2 = d2; // a NaN, once seen, stays
    }
    this.residual2 = residual2;
    this.consensus = Math.sqrt(maxDistance2);
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
  create(system: DistributedSystem, parameters: Parameters): IterativeMethod {
    const [gamma, eta] = requireParameters('apc', parameters, DOMAINS);
    return new ApcMethod(system, gamma, eta);
  },
};
