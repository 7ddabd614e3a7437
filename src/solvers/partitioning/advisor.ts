/**
 * The partition advisor (`type: 'advise'` jobs): candidate assignments of A's rows to the m machines, each with
 * the kappa(S) and theta_H the analysis would report for it, and the best one. kappa(S), S = sum_i
 * Q_i Q_i^T, decides APC's rate (the paper's Theorem on the optimal rate is a function of kappa(S)
 * alone), so the candidate of least kappa(S) is the one APC solves fastest on.
 *
 * Candidates: the given partition; contiguous; round-robin; contiguous after reverse Cuthill-McKee
 * on the row graph; the multilevel partition of the row graph (./multilevel.ts) and, when the kernels
 * have METIS (the native backend's), METIS's (./metis.ts). The last three keep rows with heavy couplings |a_i . a_j| on one
 * machine, which makes the machines' row spaces closer to orthogonal (S closer to I). Last, 'refined'
 * (./refinement.ts): the best candidate within the imbalance with rows moved to lower kappa(S) itself,
 * listed when the refinement applies (square A of at most MAX_REFINED_ROWS rows).
 *
 * Each candidate's time to solution is APC's, priced as ../analysis/timeToSolution.ts prices it: the
 * iterations its kappa(S) predicts (rho = (sqrt(kappa) - 1) / (sqrt(kappa) + 1)) times the cost of one
 * iteration on that partition, on the calibration the caller passes.
 */
import { partitionSpectrumWork, type PartitionSpectrum } from '../analysis/analyze.js';
import { sparseLuContextWork, type SparseLuContext } from '../analysis/sparseAnalysis.js';
import type { Work } from '../cooperative.js';
import { predictIterations } from '../analysis/recommendation.js';
import { iterationCost, secondsHere, systemCost } from '../analysis/timeToSolution.js';
import { buildDistributedSystemWork, type DistributedSystem } from '../distributed/distributedSystem.js';
import { contiguousAssignment } from '../input/partition.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import type { Calibration } from '../machines/placement.js';
import { partitionFromAssignment, type Partition, type DenseProblem, type CsrProblem } from '../problem.js';
import { metisPartition } from './metis.js';
import { DEFAULT_IMBALANCE, machineSizeBounds, multilevelPartition } from './multilevel.js';
import { contiguousInOrder, reverseCuthillMcKee, roundRobinAssignment } from './orderings.js';
import { refineAssignmentWork } from './refinement.js';
import { rowGraph } from './rowGraph.js';

export const PARTITION_STRATEGIES = ['given', 'contiguous', 'round-robin', 'rcm-contiguous', 'multilevel', 'metis', 'refined'] as const;
export type PartitionStrategy = (typeof PARTITION_STRATEGIES)[number];

export interface PartitionCandidate {
  strategy: PartitionStrategy;
  /** assignment[k] = the 0-based machine of row k. */
  assignment: number[];
  /** Rows of each machine. */
  sizes: number[];
  /** kappa(S) of this assignment, as an analysis of it reports it. */
  kappaS: number;
  /** theta_H of this assignment, as an analysis of it reports it. */
  thetaH: number;
  /** APC's predicted time to solution on this partition; null when no calibration was given. */
  timeToSolution: CandidateTime | null;
  /** Every machine holds between (1 - imbalance) n/m and (1 + imbalance) n/m rows (floor/ceil of n/m always allowed). */
  withinImbalance: boolean;
}

/** APC on a candidate partition: predicted iterations (null: kappa(S) too large to converge in floating point), seconds. */
export interface CandidateTime {
  algorithm: 'apc';
  iterations: number | null;
  secondsPerIteration: number;
  seconds: number | null;
}

export interface Advice {
  /** The balance the constructed candidates keep. */
  imbalance: number;
  candidates: PartitionCandidate[];
  /** The strategy of the candidate of least kappa(S) (the given partition on a tie). */
  best: PartitionStrategy;
  /** kappa(S) of the given partition over the best's (1: nothing found does better). */
  givenRatio: number;
  /** The advice in one sentence. */
  summary: string;
}

export interface AdviseOptions {
  imbalance?: number;
  seed?: number;
  /** Prices each candidate's APC iterations (../machines/placement.ts currentCalibration); without it timeToSolution is null. */
  calibration?: Calibration;
  /** The relative residual the predicted iterations reach (default 1e-8). */
  tolerance?: number;
  /** What the products, the analyses and the partitioners run on (default: the selected backend's, ../linalg/kernels.ts). */
  kernels?: Kernels;
  /**
   * The given partition as the caller already has it: its system and the kappa(S) and theta_H its analysis
   * reported (the values partitionSpectrumWork gives), so that it is not built and analysed again.
   */
  given?: { system: DistributedSystem; spectrum: PartitionSpectrum };
}

/** Relative margin under which two kappa(S) count as equal (the estimates' own accuracy is 1e-8 on CSR). */
const TIE = 1e-8;

/** The candidate assignments, in the order they are listed. */
export function candidateAssignments(
  problem: DenseProblem | CsrProblem,
  options: AdviseOptions = {},
): { strategy: PartitionStrategy; assignment: Int32Array }[] {
  const { partition } = problem;
  // The rows are what is partitioned (more than the n unknowns on a tall matrix).
  const n = problem.A.rows;
  const m = partition.m;
  const kernels = options.kernels ?? selectedKernels();
  const graph = rowGraph(kernels, problem.A);
  const imbalance = options.imbalance ?? DEFAULT_IMBALANCE;
  const metis = kernels.metis;
  return [
    { strategy: 'given', assignment: partition.assignment },
    { strategy: 'contiguous', assignment: contiguousAssignment(n, m) },
    { strategy: 'round-robin', assignment: roundRobinAssignment(n, m) },
    { strategy: 'rcm-contiguous', assignment: contiguousInOrder(reverseCuthillMcKee(graph), m) },
    {
      strategy: 'multilevel',
      assignment: multilevelPartition(graph, m, { imbalance, seed: options.seed }),
    },
    ...(metis === null ? [] : [{ strategy: 'metis' as const, assignment: metisPartition(metis, graph, m, imbalance, options.seed) }]),
  ];
}

function withPartition<P extends DenseProblem | CsrProblem>(problem: P, partition: Partition): P {
  return { ...problem, partition };
}

export function* adviseWork(problem: DenseProblem | CsrProblem, options: AdviseOptions = {}): Work<Advice> {
  const imbalance = options.imbalance ?? DEFAULT_IMBALANCE;
  const kernels = options.kernels ?? selectedKernels();
  const m = problem.partition.m;
  const { lo, hi } = machineSizeBounds(problem.A.rows, m, imbalance);
  yield { phase: 'advise', fraction: 0 };
  const assignments = candidateAssignments(problem, { ...options, imbalance, kernels });
  // On CSR one LU of A serves every candidate's lambda_min(S) (A does not depend on the partition).
  let lu: SparseLuContext | undefined;
  // A tall matrix has no LU: its candidates are analysed by ../analysis/tallSparseAnalysis.ts.
  if ('rowPtr' in problem.A && problem.A.rows === problem.A.cols) lu = yield* sparseLuContextWork(problem.A);
  const { calibration } = options;
  const tolerance = options.tolerance ?? 1e-8;
  const secondsPerIteration = (system: DistributedSystem): number | null =>
    calibration === undefined ? null : secondsHere(iterationCost('apc', systemCost(system)), calibration);
  // Each distinct assignment is analysed once: the given partition may come analysed, and it is also the
  // contiguous candidate of { machines: m }.
  const analysed: { assignment: Int32Array; spectrum: PartitionSpectrum; seconds: number | null }[] = [];
  if (options.given !== undefined) {
    const { system, spectrum } = options.given;
    analysed.push({ assignment: problem.partition.assignment, spectrum, seconds: secondsPerIteration(system) });
  }
  function* analysedWork(assignment: Int32Array) {
    let done = analysed.find((earlier) => sameAssignment(earlier.assignment, assignment));
    if (done === undefined) {
      const system = yield* buildDistributedSystemWork(withPartition(problem, partitionFromAssignment(assignment, m)), kernels);
      done = { assignment, spectrum: yield* partitionSpectrumWork(kernels, system, lu), seconds: secondsPerIteration(system) };
      analysed.push(done);
    }
    return done;
  }
  const candidates: PartitionCandidate[] = [];
  const addCandidate = function* (strategy: PartitionStrategy, assignment: Int32Array) {
    const done = yield* analysedWork(assignment);
    const { kappaS, thetaH } = done.spectrum;
    const sizes = [...partitionFromAssignment(assignment, m).sizes];
    candidates.push({
      strategy,
      assignment: Array.from(assignment),
      sizes,
      kappaS,
      thetaH,
      timeToSolution: done.seconds === null ? null : apcTime(kappaS, done.seconds, tolerance),
      withinImbalance: sizes.every((size) => size >= lo && size <= hi),
    });
  };
  // The refinement is one more step of progress.
  const steps = assignments.length + 1;
  for (const [k, { strategy, assignment }] of assignments.entries()) {
    yield* addCandidate(strategy, assignment);
    yield { phase: 'advise', fraction: (k + 1) / steps };
  }
  let start: PartitionCandidate | null = null;
  for (const candidate of candidates)
    if (candidate.withinImbalance && (start === null || candidate.kappaS < start.kappaS)) start = candidate;
  if (start !== null) {
    const refinement = yield* refineAssignmentWork({
      kernels,
      a: problem.A,
      m,
      start: Int32Array.from(start.assignment),
      startKappaS: start.kappaS,
      bounds: { lo, hi },
      evaluate: function* (assignment) {
        return (yield* analysedWork(assignment)).spectrum.kappaS;
      },
    });
    if (refinement !== null) yield* addCandidate('refined', refinement.assignment);
  }
  yield { phase: 'advise', fraction: 1 };
  let best = candidates[0];
  for (const candidate of candidates) if (candidate.kappaS < best.kappaS * (1 - TIE)) best = candidate;
  const given = candidates[0];
  const givenRatio = given.kappaS / best.kappaS;
  const summary =
    best === given
      ? `The given partition is the best found: kappa(S) = ${format(given.kappaS)}; no candidate lowers it.`
      : givenRatio < 2
        ? `The given partition is within ${format(100 * (givenRatio - 1))}% of the best found (${best.strategy}: kappa(S) = ${format(best.kappaS)} against ${format(given.kappaS)}).`
        : `${best.strategy} lowers kappa(S) ${format(givenRatio)}-fold, from ${format(given.kappaS)} (the given partition) to ${format(best.kappaS)}.`;
  return { imbalance, candidates, best: best.strategy, givenRatio, summary };
}

function sameAssignment(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/** APC's optimal rate from kappa(S) (Azizan-Ruhi et al., Theorem 2), its predicted iterations and their seconds. */
function apcTime(kappaS: number, secondsPerIteration: number, tolerance: number): CandidateTime {
  const root = Math.sqrt(kappaS);
  const iterations = predictIterations((root - 1) / (root + 1), tolerance);
  return { algorithm: 'apc', iterations, secondsPerIteration, seconds: iterations === null ? null : iterations * secondsPerIteration };
}

const format = (x: number): string => (Math.abs(x) >= 1e4 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(3) : x.toPrecision(4));
