/**
 * Block Cimmino: x <- x + nu sum_i A_i^+ (b_i - A_i x), A_i^+ = A_i^T (A_i A_i^T)^{-1}, x(0) = 0.
 * With A_i = R^T Q_i^T, A_i^+ r = Q_i R^{-T} r: machine i solves one triangular system and applies
 * Q_i. Error recurrence e <- (I - nu S) e: rho = max(|1 - nu lambda_min(S)|, |1 - nu lambda_max(S)|);
 * optimal nu = 2/(lambda_min(S) + lambda_max(S)), rho = (kappa(S) - 1)/(kappa(S) + 1).
 * The residuals r_i = b_i - A_i x of the new x end each step, so an iteration is one pass over each
 * A_i and one over each Q_i (4 sum_i p_i c_i + sum_i p_i^2 flops).
 */
import { gather, type DistributedSystem, type MachineData } from '../distributed/distributedSystem.js';
import { solveRTransposed } from '../linalg/householderQr.js';
import { accumulateRowCombination, multiplyRows } from '../linalg/rowKernels.js';
import { crossMachineC, largest, positive, projectionSpectrum, requireParameters, validateAgainst } from './common.js';
import type { DistributedAlgorithm, HeterogeneityForBounds, IterativeMethod, OptimalTuning, Parameters, RateBounds, SpectralData } from './types.js';

const DOMAINS = [positive('nu')];

class CimminoMethod implements IterativeMethod {
  readonly estimate: Float64Array;
  private readonly machines: readonly MachineData[];
  /** r_i = b_i - A_i x for every machine, machine i at [rowOffset[i], rowOffset[i] + p_i). */
  private readonly residual: Float64Array;
  private readonly rowOffset: Int32Array;
  /** R^{-T} r_i of the machine being processed. */
  private readonly solveBuffer: Float64Array;
  /** sum_i A_i^+ r_i. */
  private readonly direction: Float64Array;
  private readonly supportBuffer: Float64Array;
  private residual2 = 0;

  constructor(
    system: DistributedSystem,
    private readonly nu: number,
  ) {
    const { n, m, machines } = system;
    this.machines = machines;
    this.estimate = new Float64Array(n);
    this.rowOffset = new Int32Array(m + 1);
    for (let i = 0; i < m; i++) this.rowOffset[i + 1] = this.rowOffset[i] + machines[i].p;
    this.residual = new Float64Array(this.rowOffset[m]);
    this.solveBuffer = new Float64Array(Math.max(1, ...machines.map((mc) => mc.p)));
    this.direction = new Float64Array(n);
    this.supportBuffer = new Float64Array(Math.max(1, ...machines.map((mc) => (mc.full ? 0 : mc.c))));
    this.measure();
  }

  residualNormSquared(): number {
    return this.residual2;
  }

  consensusDistance(): null {
    return null;
  }

  step(): void {
    const { machines, residual, rowOffset, solveBuffer: y, direction, nu } = this;
    const x = this.estimate;
    direction.fill(0);
    for (let i = 0; i < machines.length; i++) {
      const { p, c, q, qStart, qEnd, r, cols, full } = machines[i];
      const ro = rowOffset[i];
      // y = R^{-T} r_i (forward substitution: R^T is lower triangular)
      solveRTransposed(r, p, residual, y, ro);
      // direction += Q_i y (on a partial support: accumulate contiguously, then scatter once)
      const target = full ? direction : this.supportBuffer;
      if (!full) target.fill(0, 0, c);
      accumulateRowCombination(q, p, c, qStart, qEnd, y, 0, 1, target);
      if (!full) for (let t = 0; t < c; t++) direction[cols[t]] += target[t];
    }
    for (let j = 0; j < x.length; j++) x[j] += nu * direction[j];
    this.measure();
  }

  /** r_i = b_i - A_i x and |A x - b|^2. */
  private measure(): void {
    const { machines, residual, rowOffset, supportBuffer } = this;
    const x = this.estimate;
    let residual2 = 0;
    for (let i = 0; i < machines.length; i++) {
      const machine = machines[i];
      const { p, c, a, aStart, aEnd, b, full } = machine;
      const xs = full ? x : gather(machine, x, supportBuffer);
      const ro = rowOffset[i];
      multiplyRows(a, p, c, aStart, aEnd, xs, residual, ro);
      for (let k = 0; k < p; k++) {
        const s = b[k] - residual[ro + k];
        residual[ro + k] = s;
        residual2 += s * s;
      }
    }
    this.residual2 = residual2;
  }
}

export const cimmino: DistributedAlgorithm = {
  id: 'cimmino',
  name: 'Block Cimmino',
  family: 'projection',
  parameterNames: ['nu'],
  optimal(spectral: SpectralData): OptimalTuning {
    const { lambdaMin, lambdaMax } = projectionSpectrum(spectral);
    return { rate: (lambdaMax - lambdaMin) / (lambdaMax + lambdaMin), parameters: { nu: 2 / (lambdaMin + lambdaMax) } };
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
  create(system: DistributedSystem, parameters: Parameters): IterativeMethod {
    const [nu] = requireParameters('cimmino', parameters, DOMAINS);
    return new CimminoMethod(system, nu);
  },
};
