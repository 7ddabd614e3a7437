/**
 * Block Cimmino: x <- x + nu sum_i A_i^+ (b_i - A_i x), A_i^+ = A_i^T (A_i A_i^T)^{-1}, x(0) = 0.
 * With A_i = R^T Q_i^T, A_i^+ r = Q_i R^{-T} r: machine i solves one triangular system and applies
 * Q_i. Error recurrence e <- (I - nu S) e: rho = max(|1 - nu lambda_min(S)|, |1 - nu lambda_max(S)|);
 * optimal nu = 2/(lambda_min(S) + lambda_max(S)), rho = (kappa(S) - 1)/(kappa(S) + 1).
 * The residuals r_i = b_i - A_i x of the new x end each step, so an iteration is one pass over each
 * A_i and one over each Q_i (4 sum_i p_i c_i + sum_i p_i^2 flops).
 */
import type { DistributedSystem, MachineData } from '../distributed/distributedSystem.js';
import { nativeBlasInUse } from '../linalg/backend.js';
import { solveRTransposed } from '../linalg/householderQr.js';
import { accumulateRowCombination, multiplyRows } from '../linalg/rowKernels.js';
import { startShardEngine, type Shard, type ShardEngine } from '../parallel/engine.js';
import { crossMachineC, largest, positive, projectionSpectrum, requireParameters, validateAgainst } from './common.js';
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

/** What a thread needs of one machine for Cimmino: its rows, basis and R on its support. */
export interface CimminoMachine {
  readonly p: number;
  readonly c: number;
  readonly full: boolean;
  readonly cols: Int32Array;
  readonly a: Float64Array;
  readonly aStart: Int32Array;
  readonly aEnd: Int32Array;
  readonly b: Float64Array;
  readonly q: Float64Array;
  readonly qStart: Int32Array;
  readonly qEnd: Int32Array;
  readonly r: Float64Array;
}

export interface CimminoShardSpec {
  readonly machines: readonly CimminoMachine[];
  /** Where machine i's A_i^+ r_i (on its support, c_i entries) starts in the output. */
  readonly outputOffset: Int32Array;
}

const CIMMINO_PASS = 0;
/** Scalar of a machine: |b_i - A_i x|^2. */
const RESIDUAL2 = 0;

/**
 * Runs Cimmino's machines (chunk i = machine i), on whichever thread takes them. At x:
 * r_i = b_i - A_i x (one pass over A_i, and |r_i|^2), y = R^{-T} r_i, and A_i^+ r_i = Q_i y (one
 * pass over Q_i) written on the machine's support at outputOffset[i].
 */
export class CimminoShard implements Shard {
  private readonly machines: readonly CimminoMachine[];
  private readonly outputOffset: Int32Array;
  /** r_i, then R^{-T} r_i, of the machine being processed. */
  private readonly residual: Float64Array;
  private readonly solved: Float64Array;
  private readonly supportX: Float64Array;

  constructor(spec: CimminoShardSpec, _n: number) {
    this.machines = spec.machines;
    this.outputOffset = spec.outputOffset;
    const largestP = Math.max(1, ...spec.machines.map((mc) => mc.p));
    this.residual = new Float64Array(largestP);
    this.solved = new Float64Array(largestP);
    this.supportX = new Float64Array(Math.max(1, ...spec.machines.map((mc) => (mc.full ? 0 : mc.c))));
  }

  run(_phase: number, machine: number, x: Float64Array, output: Float64Array, scalars: Float64Array): void {
    const { residual, solved, supportX } = this;
    const { p, c, a, aStart, aEnd, b, q, qStart, qEnd, r, cols, full } = this.machines[machine];
    if (!full) for (let t = 0; t < c; t++) supportX[t] = x[cols[t]];
    multiplyRows(a, p, c, aStart, aEnd, full ? x : supportX, residual, 0);
    let residual2 = 0;
    for (let k = 0; k < p; k++) {
      const s = b[k] - residual[k];
      residual[k] = s;
      residual2 += s * s;
    }
    // y = R^{-T} r_i (forward substitution: R^T is lower triangular)
    const blas = nativeBlasInUse();
    if (blas !== null) {
      solved.set(residual.subarray(0, p));
      blas.dtrsv(true, true, false, p, r, 0, p, solved, 0);
    } else {
      solveRTransposed(r, p, residual, solved, 0);
    }
    // A_i^+ r_i = Q_i y, on the support
    const offset = this.outputOffset[machine];
    output.fill(0, offset, offset + c);
    accumulateRowCombination(q, p, c, qStart, qEnd, solved, 0, 1, output, offset);
    scalars[machine] = residual2;
  }
}

/** Entries of A_i and Q_i one iteration reads. */
function machineWork(machine: MachineData): number {
  let entries = 0;
  for (let k = 0; k < machine.p; k++)
    entries += Math.max(0, machine.aEnd[k] - machine.aStart[k]) + Math.max(0, machine.qEnd[k] - machine.qStart[k]);
  return entries;
}

function cimminoMachine(machine: MachineData): CimminoMachine {
  const { p, c, full, cols, a, aStart, aEnd, b, q, qStart, qEnd, r } = machine;
  return { p, c, full, cols, a, aStart, aEnd, b, q, qStart, qEnd, r };
}

/**
 * The machines run on the solver's threads (see ../parallel/engine.ts). Each step is the
 * taskmaster's x += nu sum_i A_i^+ r_i (summed in machine order) with the machines' terms from the
 * last pass, then one pass at the new x giving its residual (what the runner tests) and the next terms.
 */
class CimminoMethod implements IterativeMethod {
  readonly estimate: Float64Array;
  readonly threads: number;
  private readonly engine: ShardEngine;
  private readonly machines: readonly MachineData[];
  private readonly outputOffset: Int32Array;
  /** sum_i A_i^+ r_i. */
  private readonly direction: Float64Array;
  private residual2 = 0;

  constructor(
    system: DistributedSystem,
    private readonly nu: number,
  ) {
    const { n, m, machines } = system;
    this.machines = machines;
    this.outputOffset = new Int32Array(m + 1);
    for (let i = 0; i < m; i++) this.outputOffset[i + 1] = this.outputOffset[i] + machines[i].c;
    this.engine = startShardEngine<CimminoShardSpec>({
      kind: 'cimmino',
      n,
      chunks: m,
      outputLength: this.outputOffset[m],
      scalarsPerChunk: 1,
      chunkWork: machines.map(machineWork),
      spec: { machines: machines.map(cimminoMachine), outputOffset: this.outputOffset },
      createShard: (spec, length) => new CimminoShard(spec, length),
    });
    this.threads = this.engine.threads;
    this.estimate = this.engine.input;
    this.direction = new Float64Array(n);
    try {
      this.pass();
    } catch (error) {
      this.engine.dispose();
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
    const { nu, direction, machines, outputOffset } = this;
    const x = this.estimate;
    const terms = this.engine.output;
    direction.fill(0);
    for (let i = 0; i < machines.length; i++) {
      const { c, cols, full } = machines[i];
      const offset = outputOffset[i];
      if (full) for (let t = 0; t < c; t++) direction[t] += terms[offset + t];
      else for (let t = 0; t < c; t++) direction[cols[t]] += terms[offset + t];
    }
    for (let j = 0; j < x.length; j++) x[j] += nu * direction[j];
    this.pass();
  }

  dispose(): void {
    this.engine.dispose();
  }

  private pass(): void {
    this.engine.run(CIMMINO_PASS);
    this.residual2 = this.engine.scalarSum(RESIDUAL2);
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
