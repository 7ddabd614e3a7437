/**
 * The partition advisor (`type: 'advise'` jobs): candidate assignments of A's rows to the m machines, each with
 * the kappa(S) and theta_H the analysis would report for it, and the best one. kappa(S), S = sum_i
 * Q_i Q_i^T, decides APC's rate (the paper's Theorem on the optimal rate is a function of kappa(S)
 * alone), so the candidate of least kappa(S) is the one APC solves fastest on.
 *
 * Candidates: the given partition; contiguous; round-robin; contiguous after reverse Cuthill-McKee
 * on the row graph; the multilevel partition of the row graph (./multilevel.ts) and, when the kernels
 * have METIS (the native backend's), METIS's (./metis.ts) polished by our k-way FM passes, alone above
 * MULTILEVEL_BESIDE_METIS_MAX_ROWS rows. The last three keep rows with heavy couplings |a_i . a_j| on one
 * machine, which makes the machines' row spaces closer to orthogonal (S closer to I). Last, 'refined'
 * (./refinement.ts): the best candidate within the imbalance with rows moved to lower kappa(S) itself,
 * listed when the refinement applies (square A of at most MAX_REFINED_ROWS rows) and is given tries
 * (AdviseOptions.refinementTries: the caller trades its gain against the advice's time).
 *
 * On a square dense A each listed candidate's kappa(S) comes from its machines' R alone (../analysis/kappaS.ts
 * sOfFactorsWork), and lambda_min(S) through the given partition's factorization of A. Each R is the Cholesky factor of
 * the machine's block of the rows' Gram matrix A A^T, which the row graph is made from (p^3 / 3 multiply-adds where the
 * QR costs ~2 p^2 n; kappaS.ts triangularFactorFromRowGram), or where that would cost digits the QR's without forming
 * Q. Q is formed for the best (its theta_H; from the QR's reflectors when kept, else by its QR) and the refinement's
 * start only.
 *
 * Every candidate gets its kappa(S), which ranks them; theta_H (the principal angles of every overlapping pair) only
 * the given partition and the best, since the angles do not rank candidates and cost several times what kappa(S) does
 * (dense n = 2000, native: 45 pairs ~0.8 s against ~0.2 s; sparse: most of an analysis).
 *
 * Large square CSR systems (more than ADVISE_EXHAUSTIVE_ROWS rows) are bracketed first: per candidate its
 * setup and lambda_min(S) through the one LU of A (a few solve pairs), which give 1 / lambda_min(S) <= kappa(S) <=
 * colours / lambda_min(S) (exact when the overlap graph is bipartite); lambda_max(S)'s Lanczos run only for the
 * candidates whose lower bound does not exceed the least kappa(S) found. What is not computed is null, with the bounds
 * and the reason in the candidate. Poisson n = 250,000, m = 100: 240 s of CPU for the candidates exhaustively,
 * round-robin's Lanczos (1096 products) and angles 123 s of it (docs/performance.md).
 *
 * Each candidate's time to solution is APC's, priced as ../analysis/timeToSolution.ts prices it: the
 * iterations its kappa(S) predicts (rho = (sqrt(kappa) - 1) / (sqrt(kappa) + 1)) times the cost of one
 * iteration on that partition, on the calibration the caller passes.
 */
import { partitionKappaSWork, partitionThetaHWork, type PartitionSpectrum } from '../analysis/analyze.js';
import { sparseLambdaMaxSAndAnglesWork } from '../analysis/sparseAnalysisTasks.js';
import {
  basisFactoredMatrixWork,
  factoredRouteStands,
  reflectedLambdaMax,
  sEndsOfFactorsWork,
  triangularFactorFromRowGram,
  type SEnds,
  type SEndVectors,
} from '../analysis/kappaS.js';
import { matrixConditioningWork, type FactoredMatrix } from '../analysis/conditioning.js';
import { thetaHFromRowGramWork } from '../analysis/principalAngles.js';
import type { RowGram } from '../analysis/gramBlocks.js';
import { conditionNumberEstimate } from '../eigen/eigenvalueEstimate.js';
import { SingularMatrixError } from '../errors.js';
import {
  sparseKappaSBoundsWork,
  sparseLuContextWork,
  sparseSOfPartitionWork,
  type KappaSBounds,
  type SparseLuContext,
} from '../analysis/sparseAnalysis.js';
import type { CsrSystem } from '../distributed/sparseSystem.js';
import type { Work } from '../cooperative.js';
import type { DenseMatrix } from '../matrix.js';
import { predictIterations, unattainableSentence } from '../analysis/recommendation.js';
import { attainableAccuracy } from '../algorithms/common.js';
import { toleranceText } from '../numberText.js';
import { iterationCost, secondsHere, systemCost } from '../analysis/timeToSolution.js';
import {
  buildDenseFactorsWork,
  buildDenseSystemReusingWork,
  buildDistributedSystemWork,
  denseMachineOfFactorWork,
  denseSystemOfFactorsWork,
  rowSpaceSystem,
  type DenseFactors,
  type DenseSystem,
  type DistributedSystem,
} from '../distributed/distributedSystem.js';
import { contiguousAssignment } from '../input/partition.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import type { NativeMetis } from '../linalg/backend.js';
import type { Calibration } from '../analysis/calibration.js';
import {
  assignmentList,
  isCsrProblem,
  partitionFromAssignment,
  sameIndices,
  type Partition,
  type DenseProblem,
  type CsrProblem,
} from '../problem.js';
import { metisPartition } from './metis.js';
import { balanceParts, DEFAULT_IMBALANCE, kwayRefinable, machineSizeBounds, multilevelPartition, refineKway } from './multilevel.js';
import { contiguousInOrder, reverseCuthillMcKee, roundRobinAssignment } from './orderings.js';
import { refineAssignmentWork, refinementApplies, refinementTries } from './refinement.js';
import { rowGraph, rowGraphAndGram, type WeightedGraph } from './rowGraph.js';

export const PARTITION_STRATEGIES = ['given', 'contiguous', 'round-robin', 'rcm-contiguous', 'multilevel', 'metis', 'refined'] as const;
export type PartitionStrategy = (typeof PARTITION_STRATEGIES)[number];

export interface PartitionCandidate {
  strategy: PartitionStrategy;
  /** assignment[k] = the 0-based machine of row k. */
  assignment: number[];
  /** Rows of each machine. */
  sizes: number[];
  /** kappa(S) of this assignment, as an analysis of it reports it; null when not computed (notComputed says why). */
  kappaS: number | null;
  /**
   * Bounds on kappa(S) when it was not computed (lower: 1 / lambda_min(S), or what ruled it out; upper: the overlap graph's
   * colours / lambda_min(S), null when lambda_min(S)'s run stopped as soon as the lower bound ruled it out).
   */
  kappaSBounds: { lower: number; upper: number | null } | null;
  /** theta_H of this assignment, as an analysis of it reports it; null when not computed (notComputed says why). */
  thetaH: number | null;
  /** What of this candidate was not computed and why; null when everything was. */
  notComputed: string | null;
  /** APC's predicted time to solution on this partition; null when no calibration was given. */
  timeToSolution: CandidateTime | null;
  /** Every machine holds between (1 - imbalance) n/m and (1 + imbalance) n/m rows (floor/ceil of n/m always allowed). */
  withinImbalance: boolean;
  /** The 'refined' candidate's start and its tries (each an exact kappa(S)) and those kept; null on every other candidate. */
  refinement: { from: PartitionStrategy; tries: number; kept: number } | null;
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
  /** The advice: the given partition's kappa(S) against the best's, and APC's predicted iterations on each. */
  summary: string;
}

export interface AdviseOptions {
  imbalance?: number;
  seed?: number;
  /**
   * Exact kappa(S) evaluations the refinement may spend (./refinement.ts; 0 to MAX_REFINEMENT_TRIES, default
   * DEFAULT_REFINEMENT_TRIES). 0: no refinement, no 'refined' candidate; on the systems it applies to (at most
   * MAX_REFINED_ROWS rows) it is most of the advice's time beyond the candidates' (docs/performance.md).
   */
  refinementTries?: number;
  /** Prices each candidate's APC iterations (../machines/placement.ts currentCalibration); without it timeToSolution is null. */
  calibration?: Calibration;
  /** The factor by which the predicted iterations reduce the error, as the analysis' (default 1e-8; rho^k <= tolerance). */
  tolerance?: number;
  /** What the products, the analyses and the partitioners run on (default: the selected backend's, ../linalg/kernels.ts). */
  kernels?: Kernels;
  /**
   * The given partition as the caller already has it: its system and the kappa(S) and theta_H its analysis
   * reported (the values partitionKappaSWork and partitionThetaHWork give), so that it is not built and analysed again.
   */
  given?: {
    system: DistributedSystem;
    spectrum: PartitionSpectrum;
    /** kappa(A^T A) as the analysis reported it: whether a candidate's kappa(S) may go through its factorization (else computed here). */
    kappaAtA?: number;
  };
  /**
   * Hands over the LU of this problem's A as the caller's analysis made it (../analysis/analyze.ts
   * AnalyzeOptions.keepLu), so that a square CSR A is not factored again (at n = 10^6, 46 s of the TypeScript
   * advice). A taker, not a value: the caller forgets it on handing it over, so the advice alone decides when its
   * ~1 GiB goes. Undefined (or returning undefined): the advice factors A itself.
   */
  takeLu?: () => SparseLuContext | undefined;
  /**
   * Hands over a square dense A as the caller's analysis of the given partition factored it (AnalyzeOptions.keepFactored),
   * so that it is not factored again (dense n = 4000: 0.7 s native). Undefined (or returning undefined): the advice
   * factors the given partition's Q^T itself.
   */
  takeFactored?: () => FactoredMatrix | undefined;
  /** Rows above which a square CSR system's candidates are bracketed first (default ADVISE_EXHAUSTIVE_ROWS). */
  exhaustiveRows?: number;
  /**
   * Called each time the bracketed pass (large CSR systems) lets go of something large: a candidate's system (~0.4 GiB
   * at n = 10^6) before it builds the next, the LU of A (~1 GiB) before its exact pass. A caller that can collect
   * garbage (node --expose-gc: globalThis.gc) does it then; otherwise those arrays may stay resident until after the
   * next ones are made. Measured at n = 10^6 native (bench/adviseTimeline.ts): peaks of 3.1-3.5 GiB with these
   * collections and the C heap trimmed after each (../linalg/backend.ts trimNativeHeap, as computeJob does), 3.6-3.8 GiB
   * with the collections alone, 3.9 GiB with only the LU's, against the 4 GiB a job may hold (JOB_MEMORY_LIMIT_MB).
   */
  released?: () => void;
}

/**
 * The two ends of the factorizations' hand-over from an analysis to the advice of the same problem: `keepLu` and
 * `keepFactored` for AnalyzeOptions, `takeLu` and `takeFactored` for AdviseOptions, which return what was kept once and
 * forget it (a sparse A's LU, a dense A's D M).
 */
export function luHandOver(): {
  keepLu: (context: SparseLuContext) => void;
  takeLu: () => SparseLuContext | undefined;
  keepFactored: (factored: FactoredMatrix) => void;
  takeFactored: () => FactoredMatrix | undefined;
} {
  let keptLu: SparseLuContext | undefined;
  let keptFactored: FactoredMatrix | undefined;
  return {
    keepLu: (context) => (keptLu = context),
    takeLu: () => {
      const context = keptLu;
      keptLu = undefined;
      return context;
    },
    keepFactored: (factored) => (keptFactored = factored),
    takeFactored: () => {
      const factored = keptFactored;
      keptFactored = undefined;
      return factored;
    },
  };
}

/** Relative margin under which two kappa(S) count as equal (the estimates' own accuracy is 1e-8 on CSR). */
const TIE = 1e-8;

/** Why a candidate has no kappa(S) when the given partition's is 1 (evaluationWork). */
const LEAST_KAPPA_S_NOTE =
  "kappa(S) not computed: the given partition's kappa(S) is 1 (to 1e-8), the least any partition has (S is then a multiple of I), so no candidate can be better.";

/** Whether a kappa(S) is 1 to TIE, the least any partition has: nothing is lower. */
const isLeastKappaS = (kappaS: number | null | undefined): boolean => kappaS != null && kappaS <= 1 + TIE;

/** The candidates that need no row graph: the given partition, contiguous, round-robin. */
function assignmentsWithoutGraph(problem: DenseProblem | CsrProblem): { strategy: PartitionStrategy; assignment: Int32Array }[] {
  const { partition } = problem;
  const n = problem.A.rows;
  return [
    { strategy: 'given', assignment: partition.assignment },
    { strategy: 'contiguous', assignment: contiguousAssignment(n, partition.m) },
    { strategy: 'round-robin', assignment: roundRobinAssignment(n, partition.m) },
  ];
}

/** The candidate assignments, in the order they are listed. */
export function candidateAssignments(
  problem: DenseProblem | CsrProblem,
  options: AdviseOptions = {},
  graph: WeightedGraph = rowGraph(options.kernels ?? selectedKernels(), problem.A),
): { strategy: PartitionStrategy; assignment: Int32Array }[] {
  const { partition } = problem;
  // The rows are what is partitioned (more than the n unknowns on a tall matrix).
  const n = problem.A.rows;
  const m = partition.m;
  const kernels = options.kernels ?? selectedKernels();
  const imbalance = options.imbalance ?? DEFAULT_IMBALANCE;
  const metis = kernels.metis;
  const multilevel = metis === null || n <= MULTILEVEL_BESIDE_METIS_MAX_ROWS;
  return [
    ...assignmentsWithoutGraph(problem),
    { strategy: 'rcm-contiguous', assignment: contiguousInOrder(reverseCuthillMcKee(graph), m) },
    ...(multilevel
      ? [{ strategy: 'multilevel' as const, assignment: multilevelPartition(graph, m, { imbalance, seed: options.seed }) }]
      : []),
    ...(metis === null
      ? []
      : [{ strategy: 'metis' as const, assignment: polishedMetisPartition(metis, graph, m, imbalance, options.seed) }]),
  ];
}

/**
 * METIS's partition of the row graph, then (on a sparse enough graph) the k-way FM passes of ./multilevel.ts at the finest
 * level within the imbalance (which also lift a part METIS left below (1 - imbalance) n/m rows: METIS bounds parts from
 * above only). On
 * Poisson n = 10^6, m = 100 they take 0.8 s and lower the edge cut from 14,692 to 14,076, kappa(S) from 8.07e8 to 7.06e8,
 * and the Lanczos products of its lambda_max(S) from 181 to 91 (docs/performance.md).
 */
function polishedMetisPartition(metis: NativeMetis, graph: WeightedGraph, m: number, imbalance: number, seed?: number): Int32Array {
  const assignment = metisPartition(metis, graph, m, imbalance, seed);
  const { lo, hi } = machineSizeBounds(graph.n, m, imbalance);
  // On a graph too dense for the k-way passes (a dense matrix's, ./multilevel.ts kwayRefinable) METIS's partition
  // stands, its parts brought within the bounds: METIS keeps the largest under (1 + imbalance) n/m, not the smallest
  // over (1 - imbalance) n/m (arc130 in 4 parts: a part of 29 rows where 30 is the least).
  // refineKway moves only vertices with an edge to another part: what it leaves outside the bounds, balanceParts mends.
  if (kwayRefinable(graph)) refineKway(graph, assignment, m, lo, hi);
  balanceParts(graph, assignment, m, lo, hi);
  return assignment;
}

/**
 * Rows above which, when the kernels have METIS, the multilevel partitioner of ./multilevel.ts is not run beside it:
 * both partition the same row graph, and a second contender's evaluation is what costs. On Poisson n = 10^6, m = 100
 * ours takes 3.6 s against METIS's 0.9 s and gives kappa(S) 6.6e8 against 8.1e8, but its setup and lambda_min(S) take
 * ~13 s and, as it would contend, its exact kappa(S) ~80 s more (TypeScript; bench/adviseTimeline.ts): the advice
 * would outgrow its budget of 2x one analysis. Below it both run: on random geometric graphs of 30,000 and 60,000 rows
 * either beat the other's kappa(S) by up to 1.5x (bench/geometricAdvise.ts; docs/performance.md).
 */
export const MULTILEVEL_BESIDE_METIS_MAX_ROWS = 100_000;

function withPartition<P extends DenseProblem | CsrProblem>(problem: P, partition: Partition): P {
  return { ...problem, partition };
}

/**
 * Rows above which a square CSR system's candidates are bracketed before their kappa(S) is computed (module comment):
 * only a candidate that can be the best gets lambda_max(S)'s Lanczos run. Up to it every candidate gets its kappa(S),
 * as an analysis of it would. Native, Poisson n = 40,000 in 20 strips: round-robin's run took 3.7 s (452 products) of
 * the 10.9 s advice, whose analysis took 2.3 s; bracketed, the advice took 8.2 s, the same kappa(S) for the others. At
 * n = 10,000 bracketing saved nothing.
 */
export const ADVISE_EXHAUSTIVE_ROWS = 20_000;

/** What the advisor has of one distinct assignment. */
interface Evaluation {
  assignment: Int32Array;
  kappaS: number | null;
  thetaH: number | null;
  bounds: KappaSBounds | null;
  notComputed: string[];
  seconds: number | null;
  /** Its setup met numerically dependent rows on a machine (notComputed says where): nothing else of it is computed. */
  setupFailed?: true;
}

export function* adviseWork(problem: DenseProblem | CsrProblem, options: AdviseOptions = {}): Work<Advice> {
  const imbalance = options.imbalance ?? DEFAULT_IMBALANCE;
  const tries = refinementTries(options.refinementTries);
  const kernels = options.kernels ?? selectedKernels();
  const m = problem.partition.m;
  const { lo, hi } = machineSizeBounds(problem.A.rows, m, imbalance);
  yield { phase: 'advise', fraction: 0 };
  // A square dense A's row Gram matrix, which its row graph is made from, also gives most of the best's Gram blocks
  // (thetaHOfBestWork).
  const { graph, gram: rowGram } =
    'data' in problem.A && problem.A.rows === problem.A.cols ? rowGraphAndGram(kernels, problem.A) : { graph: undefined, gram: undefined };
  // On CSR one LU of A serves every candidate's lambda_min(S) (A does not depend on the partition).
  let lu: SparseLuContext | undefined;
  // A tall matrix has no LU: its candidates are analysed by ../analysis/tallSparseAnalysis.ts.
  if ('rowPtr' in problem.A && problem.A.rows === problem.A.cols) lu = options.takeLu?.() ?? (yield* sparseLuContextWork(problem.A));
  const { calibration } = options;
  const tolerance = options.tolerance ?? 1e-8;
  const secondsPerIteration = (system: DistributedSystem | DenseFactors): number | null =>
    calibration === undefined ? null : secondsHere(iterationCost('apc', systemCost(system)), calibration);
  const bracketed = lu !== undefined && problem.A.rows > (options.exhaustiveRows ?? ADVISE_EXHAUSTIVE_ROWS);
  // Each distinct assignment is evaluated once: the given partition may come analysed, and it is also the
  // contiguous candidate of { machines: m }.
  const evaluated: Evaluation[] = [];
  if (options.given !== undefined) {
    const { system, spectrum } = options.given;
    evaluated.push({
      assignment: problem.partition.assignment,
      ...spectrum,
      bounds: null,
      notComputed: [],
      seconds: secondsPerIteration(system),
    });
  }
  // The last system built, kept until another is needed (never two held at once): the bracketed pass's best is most
  // often a contender (METIS's boxes), whose system the exact pass builds and then serves its exact kappa(S) and its
  // theta_H (at n = 10^6, m = 100 each build of METIS's boxes is ~12 s native).
  let last: { assignment: Int32Array; system: DistributedSystem } | null = null;
  // Unbracketed (dense systems and CSR ones up to ADVISE_EXHAUSTIVE_ROWS rows, where a system is at most a few hundred
  // MB), the best candidate's system so far is held too: its theta_H, computed last, needs no rebuild (dense n = 4000:
  // 1.1 s native, 3 s TypeScript). The given partition's is the caller's. A candidate evaluated from its R alone
  // (fromFactorsWork) is held as its factors, which make its system when it is needed (from the QR's reflectors where kept).
  let bestSoFar: { assignment: Int32Array; system: DistributedSystem | null; factors?: DenseFactors; kappaS: number } | null =
    options.given === undefined
      ? null
      : { assignment: problem.partition.assignment, system: options.given.system, kappaS: options.given.spectrum.kappaS };
  function* systemOf(assignment: Int32Array): Work<DistributedSystem> {
    if (last !== null && sameIndices(last.assignment, assignment)) return last.system;
    if (bestSoFar !== null && sameIndices(bestSoFar.assignment, assignment)) {
      if (bestSoFar.system !== null) return bestSoFar.system;
      if (bestSoFar.factors !== undefined) {
        const system = yield* denseSystemOfFactorsWork(bestSoFar.factors, kernels);
        bestSoFar = { assignment: bestSoFar.assignment, system, kappaS: bestSoFar.kappaS };
        return system;
      }
    }
    // A dense machine whose rows a held system's machine has is taken from it (the refinement's proposals move rows
    // between two to four machines of the ten, say; the others keep their QR).
    const known = [last?.system, bestSoFar?.system].filter((system) => system?.storage === 'dense');
    if (last !== null) {
      last = null;
      if (bracketed) options.released?.();
    }
    const partitioned = withPartition(problem, partitionFromAssignment(assignment, m));
    const system = isCsrProblem(partitioned)
      ? yield* buildDistributedSystemWork(partitioned, kernels)
      : yield* buildDenseSystemReusingWork(partitioned, known, kernels);
    last = { assignment, system };
    return system;
  }
  // A square dense A is factored once, as the given partition's A = D M (the job's analysis' own when it hands it over,
  // AdviseOptions.takeFactored): every other candidate's lambda_min(S) goes through it instead of the LU of its own Q^T
  // (dense n = 4000: ~0.7 s native a candidate).
  let factored: FactoredMatrix | undefined;
  function* factoredWork(system: DistributedSystem): Work<FactoredMatrix | undefined> {
    if (system.storage !== 'dense' || system.A.rows !== system.n) return undefined;
    const given = options.given?.system.storage === 'dense' ? options.given.system : system;
    factored ??= options.takeFactored?.() ?? (yield* basisFactoredMatrixWork(kernels, rowSpaceSystem(given)));
    return factored;
  }
  /**
   * A listed candidate of a square dense A, once the given partition's factorization is had: its kappa(S) from its
   * machines' R alone (../analysis/kappaS.ts sOfFactorsWork: the same kappa(S), Q not formed), each R from the rows'
   * Gram matrix where that stands (dense n = 4000: the QR took ~0.3 s a candidate native, ~1.5 s TypeScript), null when
   * that route declines (an ill-conditioned R_i). Its system is built only if it is the best (theta_H) or the
   * refinement's start.
   */
  // kappa(A^T A) of a square dense A, for factoredRouteStands: the caller's analysis', else computed once through `factored`.
  let kappaAtA = options.given?.kappaAtA;
  function* factoredStandsWork(kappaS: number): Work<boolean> {
    kappaAtA ??= (yield* matrixConditioningWork(kernels, problem.A as DenseMatrix, factored)).kappaAtA;
    return factoredRouteStands(kappaS, kappaAtA);
  }
  // Each machine's R from its rows' block of A A^T where that stands (a Cholesky factorization, not the QR).
  const triangularFactorOf = rowGram === undefined ? undefined : (rows: Int32Array) => triangularFactorFromRowGram(kernels, rowGram, rows);
  // A machine whose rows the last factors or the best's hold is taken from them (the refinement's proposals move rows
  // between some of the machines; the move effects keep what they computed of the others by their R).
  const factorsWork = (assignment: Int32Array): Work<DenseFactors> =>
    buildDenseFactorsWork(withPartition(problem as DenseProblem, partitionFromAssignment(assignment, m)), kernels, {
      triangularFactorOf,
      known: [lastFactors?.factors, bestSoFar?.factors].flatMap((factors) => factors?.machines ?? []),
    });
  // The last candidate evaluated from its factors: the refinement's accepted proposal, whose move effects read them, and
  // (a proposal: `near` given) its S's ends with their Ritz vectors.
  let lastFactors: { assignment: Int32Array; factors: DenseFactors; ends: SEnds | null } | null = null;
  function* fromFactorsWork(assignment: Int32Array, near?: SEndVectors): Work<Evaluation | 'own-route' | null> {
    if (bracketed || isCsrProblem(problem) || problem.A.rows !== problem.A.cols || evaluated.length === 0) return null;
    if (factored === undefined && options.given?.system.storage === 'dense') yield* factoredWork(options.given.system);
    if (factored === undefined) return null;
    const factors = yield* factorsWork(assignment);
    lastFactors = { assignment, factors, ends: null };
    const withEnds = yield* sEndsOfFactorsWork(kernels, factors, factored, near, near !== undefined);
    if (withEnds === null) return null;
    const s = withEnds.conditioning;
    lastFactors.ends = withEnds.ends;
    if (!(yield* factoredStandsWork(s.kappaS))) return 'own-route';
    const done: Evaluation = {
      assignment,
      kappaS: s.kappaS,
      thetaH: null,
      bounds: null,
      notComputed: [],
      seconds: secondsPerIteration(factors),
    };
    if (bestSoFar === null || s.kappaS < bestSoFar.kappaS * (1 - TIE)) bestSoFar = { assignment, system: null, factors, kappaS: s.kappaS };
    evaluated.push(done);
    return done;
  }
  /**
   * `factorsFirst`: from the machines' R alone where that stands (fromFactorsWork; a listed candidate, a refinement's
   * proposal). A partition other than the given one whose setup finds a machine's rows numerically dependent (an
   * ill-conditioned A: fs1831, kappa(A) = 2e13, in 8 parts, where the given contiguous one stands and METIS's does not)
   * is listed without kappa(S), saying so: an analysis of it fails the same way, and the others are still advised.
   */
  function* evaluationWork(assignment: Int32Array, near?: SEndVectors, factorsFirst = false): Work<Evaluation> {
    const given = evaluated.length === 0;
    try {
      return yield* uncheckedEvaluationWork(assignment, near, factorsFirst);
    } catch (error) {
      if (given || !(error instanceof SingularMatrixError)) throw error;
      const done: Evaluation = { assignment, kappaS: null, thetaH: null, bounds: null, notComputed: [], seconds: null };
      failedSetup(done, error);
      evaluated.push(done);
      return done;
    }
  }
  function* uncheckedEvaluationWork(assignment: Int32Array, near: SEndVectors | undefined, factorsFirst: boolean): Work<Evaluation> {
    // A partition listed before under other machine numbers (RCM's order of a dense matrix's complete row graph cuts
    // it into the contiguous blocks, reversed) has the same S: its evaluation stands.
    let done = evaluated.find((earlier) => samePartition(earlier.assignment, assignment, m));
    if (done !== undefined) return done;
    // kappa(S) >= 1 for every partition: a given partition at 1 (to TIE) cannot be beaten, so the others' systems are not
    // built (a tall regression whose machines each span R^n: S = m I on any such partition; 200,000 x 500 on 100
    // machines, ~9 s a candidate).
    const given = evaluated[0];
    if (isLeastKappaS(given?.kappaS)) {
      done = { assignment, kappaS: null, thetaH: null, bounds: null, notComputed: [LEAST_KAPPA_S_NOTE], seconds: null };
      evaluated.push(done);
      return done;
    }
    const fromFactors = factorsFirst ? yield* fromFactorsWork(assignment, near) : null;
    if (fromFactors !== null && fromFactors !== 'own-route') return fromFactors;
    // Bracketed, a candidate's bounds come from its rows alone; its system (the machines' factors) only when they settle
    // its kappa(S), for its time per iteration, or in the exact pass if it contends: one ruled out by its bounds is never
    // built (round-robin at n = 10^6: ~4 s on the TypeScript backend).
    const bounds =
      bracketed && isCsrProblem(problem) && evaluated.length > 0
        ? yield* sparseKappaSBoundsWork(
            kernels,
            problem.A,
            partitionFromAssignment(assignment, m).rowsOf,
            lu!,
            ruledOutAbove(leastExactKappaS(evaluated)),
          )
        : null;
    // Contending (its bounds leave kappa(S) open), or ruled out by them already (its lambda_min(S) run stopped early).
    if (bounds !== null && (bounds.colours > 2 || bounds.upper === null)) {
      done = { assignment, kappaS: null, thetaH: null, bounds, notComputed: [], seconds: null };
      evaluated.push(done);
      return done;
    }
    const system = yield* systemOf(assignment);
    done = { assignment, kappaS: null, thetaH: null, bounds: null, notComputed: [], seconds: secondsPerIteration(system) };
    if (!bracketed || system.storage !== 'csr') {
      // Through the factorization of another partition of A while factoredRouteStands, else through its own Q^T.
      const through = fromFactors === 'own-route' ? undefined : yield* factoredWork(system);
      done.kappaS = yield* partitionKappaSWork(kernels, system, { lu, factored: through, startVectors: near });
      const own = through === undefined || through.machines === rowSpaceSystem(system as DenseSystem).machines;
      if (!own && !(yield* factoredStandsWork(done.kappaS)))
        done.kappaS = yield* partitionKappaSWork(kernels, system, { lu, startVectors: near });
      // The rule thetaHOfBestWork picks its best by (the first of least kappa(S)), in the same order.
      if (!bracketed && (bestSoFar === null || done.kappaS < bestSoFar.kappaS * (1 - TIE)))
        bestSoFar = { assignment, system, kappaS: done.kappaS };
    } else {
      // A bipartite (or empty) overlap graph's lambda_max(S) is 2 - lambda_min(S): the exact value costs no more. The
      // given partition's, when it came without its analysis (a library call), is computed whatever its graph: the
      // others are compared with it (the summary's ratio).
      done.kappaS = (yield* sparseSOfPartitionWork(kernels, system, lu!, bounds?.lambdaMinS ?? undefined)).kappaS.value;
    }
    // The given partition's theta_H (when it came without its analysis) while its system is held: it is the one the
    // user has, and the others are compared with it.
    if (evaluated.length === 0) done.thetaH = yield* partitionThetaHWork(kernels, system, rowGram);
    evaluated.push(done);
    return done;
  }
  // A tall A's given partition first (a square one's is rarely at kappa(S) = 1): at 1, to TIE, no partition is lower, and
  // the candidates of the row graph are not made (a 20,000 x 500 sparse regression on 10 machines: ~4 s of its 6 s advice
  // went to a multilevel partition whose kappa(S) was then not computed).
  const tall = problem.A.rows > problem.A.cols;
  if (tall && options.given === undefined) yield* evaluationWork(problem.partition.assignment, undefined, true);
  const leastGiven = tall && isLeastKappaS(evaluated[0]?.kappaS);
  const assignments = leastGiven
    ? assignmentsWithoutGraph(problem)
    : candidateAssignments(problem, { ...options, imbalance, kernels }, graph ?? rowGraph(kernels, problem.A));
  let refinementDeclined = false;
  const listed: {
    strategy: PartitionStrategy;
    assignment: Int32Array;
    evaluation: Evaluation;
    refinement?: PartitionCandidate['refinement'];
  }[] = [];
  // The refinement and, when bracketed, the exact kappa(S) and theta_H are one more step of progress.
  const steps = assignments.length + 1;
  for (const [k, { strategy, assignment }] of assignments.entries()) {
    listed.push({ strategy, assignment, evaluation: yield* evaluationWork(assignment, undefined, true) });
    yield { phase: 'advise', fraction: (k + 1) / steps };
  }
  if (bracketed) {
    const csrSystemOf = (assignment: Int32Array) => systemOf(assignment) as Work<CsrSystem>;
    // The rest needs no LU (every contender's lambda_min(S) is its bounds'): let it go, ~1 GiB at n = 10^6 with its
    // Krylov workspace (0.6 GiB, where lambda_max(S) makes a basis of half that), before the exact pass, where the
    // advice peaks.
    lu = undefined;
    options.released?.();
    yield* exactForContendersWork(evaluated, csrSystemOf, kernels, secondsPerIteration);
  } else {
    // The listed candidate the refinement starts from (its strategy is named in the refined candidate).
    let from: (typeof listed)[number] | null = null;
    for (const entry of listed) {
      const { kappaS, assignment } = entry.evaluation;
      if (kappaS !== null && isWithin(assignment, m, lo, hi) && (from === null || kappaS < from.evaluation.kappaS!)) from = entry;
    }
    // Nothing is below kappa(S) = 1: no refinement from there.
    const start = from === null || isLeastKappaS(from.evaluation.kappaS) ? null : from.evaluation;
    // Told to spend nothing where the refinement would run: the summary says so.
    refinementDeclined = start !== null && tries === 0 && refinementApplies(problem.A, m);
    // The refinement reads its machines' R alone where the candidates were evaluated from it (a square dense A: the rows'
    // Gram matrix and the given partition's factorization of A are had), else their system (basesWork).
    const fromR = rowGram !== undefined && factored !== undefined;
    const refinement =
      start === null
        ? null
        : yield* refineAssignmentWork({
            kernels,
            a: problem.A,
            m,
            start: start.assignment,
            startKappaS: start.kappaS!,
            bounds: { lo, hi },
            tries,
            // Each proposal from its machines' R where that stands, as the listed candidates.
            // A proposal without kappa(S) (a machine's rows numerically dependent: evaluationWork) is rejected.
            evaluate: function* (assignment, near) {
              return (yield* evaluationWork(assignment, near, fromR)).kappaS ?? Infinity;
            },
            // The candidates' factorization of a dense A (when one was made) serves the move effects' lambda_min(S) too.
            factored,
            rowGram,
            // Where the move effects cannot read R alone: a dense assignment's system (held when its evaluation built it;
            // else built reusing the machines of the last one, the previous round's). A CSR machine's basis is the move
            // effects' own.
            basesWork: function* (assignment) {
              if (isCsrProblem(problem)) return undefined;
              const system = yield* systemOf(assignment);
              return system.storage === 'dense' ? system.machines : undefined;
            },
            // The start's and each accepted proposal's factors, just made by its evaluation (else made from the Gram matrix).
            factorsOf: fromR
              ? function* (assignment) {
                  const held = [lastFactors, bestSoFar].find(
                    (entry) => entry?.factors !== undefined && sameIndices(entry.assignment, assignment),
                  );
                  return (held?.factors ?? (yield* factorsWork(assignment))).machines;
                }
              : undefined,
            endsOf: (assignment) =>
              lastFactors !== null && sameIndices(lastFactors.assignment, assignment) ? (lastFactors.ends ?? undefined) : undefined,
          });
    if (refinement !== null)
      listed.push({
        strategy: 'refined',
        assignment: refinement.assignment,
        evaluation: yield* evaluationWork(refinement.assignment),
        refinement: { from: from!.strategy, tries: refinement.evaluations, kept: refinement.accepted },
      });
  }
  // A best held as its R alone (no refinement started from it): its theta_H from the rows' Gram matrix, with the Q of the
  // machines of its nearest pairs only.
  const factorsOf = (assignment: Int32Array): DenseFactors | undefined =>
    bestSoFar !== null && bestSoFar.system === null && sameIndices(bestSoFar.assignment, assignment) ? bestSoFar.factors : undefined;
  yield* thetaHOfBestWork(evaluated, systemOf, kernels, rowGram, factorsOf);
  yield { phase: 'advise', fraction: 1 };
  const candidates = listed.map(({ strategy, assignment, evaluation, refinement }): PartitionCandidate => {
    const sizes = [...partitionFromAssignment(assignment, m).sizes];
    const { kappaS, thetaH, bounds, seconds } = evaluation;
    return {
      strategy,
      assignment: assignmentList(assignment),
      sizes,
      kappaS,
      kappaSBounds: bounds === null ? null : { lower: bounds.lower, upper: bounds.upper },
      thetaH,
      notComputed: evaluation.notComputed.length === 0 ? null : evaluation.notComputed.join(' '),
      timeToSolution: seconds === null || kappaS === null ? null : apcTime(kappaS, seconds, tolerance),
      withinImbalance: sizes.every((size) => size >= lo && size <= hi),
      refinement: refinement ?? null,
    };
  });
  const ranked = candidates.filter((candidate) => candidate.kappaS !== null);
  let best = ranked[0];
  for (const candidate of ranked) if (candidate.kappaS! < best.kappaS! * (1 - TIE)) best = candidate;
  const given = candidates[0];
  const givenRatio = given.kappaS! / best.kappaS!;
  // What the kappa(S) ratio means for a run: APC's predicted iterations on each (rho^k <= tolerance: the error's reduction,
  // as the analysis' recommendation counts them; not the residual's, which an inconsistent tall system never brings near 0).
  const givenIterations = apcIterations(given.kappaS!, tolerance);
  const bestIterations = apcIterations(best.kappaS!, tolerance);
  const iterations =
    givenIterations === null || bestIterations === null
      ? ''
      : ` APC's predicted iterations to reduce the error by a factor ${toleranceText(tolerance)}: ${givenIterations.toLocaleString('en-US')} on the given partition, ${bestIterations.toLocaleString('en-US')} on ${best.strategy}.`;
  // A tolerance below eps kappa(A) is not reached: the counts above are exact arithmetic's (kappa(A) from the caller's
  // analysis or the factoredRouteStands check, when either gave it).
  const unattainable = kappaAtA === undefined ? '' : unattainableSentence(tolerance, attainableAccuracy(kappaAtA));
  // A refinement that kept none of its tries lists its start's partition again: say so, lest it read as a second finding.
  const refined = candidates.find((candidate) => candidate.refinement !== null);
  const unrefined =
    refined?.refinement == null || refined.refinement.kept > 0
      ? ''
      : refined.refinement.tries === 0
        ? ` The refinement from ${refined.refinement.from} found no move predicted to lower kappa(S): 'refined' is ${refined.refinement.from}'s partition.`
        : ` The refinement from ${refined.refinement.from} kept none of its ${refined.refinement.tries} tries (none lowered kappa(S)): 'refined' is ${refined.refinement.from}'s partition.`;
  const declined = refinementDeclined ? ' The refinement was not run (refinementTries 0).' : '';
  const summary =
    (best === given
      ? isLeastKappaS(given.kappaS)
        ? "The given partition is the best found: kappa(S) = 1 (to 1e-8), the least any partition has, so APC's optimal rate is 0: in exact arithmetic it converges in at most one iteration." +
          (leastGiven ? ' No partition of the row graph was made (RCM, graph partitioners): none could be lower.' : '')
        : `The given partition is the best found: kappa(S) = ${format(given.kappaS!)}; no candidate lowers it.`
      : givenRatio < 2
        ? `The given partition is within ${format(100 * (givenRatio - 1))}% of the best found in kappa(S) (${best.strategy}: kappa(S) = ${format(best.kappaS!)} against ${format(given.kappaS!)}, ${format(givenRatio)} times as large).${iterations}`
        : `${best.strategy} lowers kappa(S) ${format(givenRatio)}-fold, from ${format(given.kappaS!)} (the given partition) to ${format(best.kappaS!)}.${iterations}`) +
    unrefined +
    declined +
    (unattainable === '' ? '' : ` ${unattainable}`);
  return { imbalance, candidates, best: best.strategy, givenRatio, summary };
}

/**
 * A candidate whose setup met numerically dependent rows on a machine: no kappa(S) and no bounds (bounds through the LU
 * of A stand for a partition whose machines are not dependent, not this one), and why.
 */
function failedSetup(entry: Evaluation, error: SingularMatrixError): void {
  entry.kappaS = null;
  entry.bounds = null;
  entry.setupFailed = true;
  entry.notComputed.push(
    `kappa(S) not computed: this partition's setup fails as an analysis of it would (${error.message.replace(/\.$/, '')}), so it cannot be the advice.`,
  );
}

/** The least exact kappa(S) among the candidates evaluated so far (Infinity: none yet). */
function leastExactKappaS(evaluated: readonly Evaluation[]): number {
  return Math.min(...evaluated.map((e) => e.kappaS ?? Infinity));
}

/**
 * Whether a lower bound on a candidate's kappa(S) puts it above `least` (beyond TIE): then it cannot be the best. Undefined
 * while no exact kappa(S) is had (nothing rules a candidate out yet).
 */
function ruledOutAbove(least: number): ((kappaSAtLeast: number) => boolean) | undefined {
  return Number.isFinite(least) ? (kappaSAtLeast) => kappaSAtLeast > least * (1 + TIE) : undefined;
}

function isWithin(assignment: Int32Array, m: number, lo: number, hi: number): boolean {
  return partitionFromAssignment(assignment, m).sizes.every((size) => size >= lo && size <= hi);
}

/**
 * The bracketed pass's second half: exact kappa(S) (the analysis' own computation, on the rebuilt system) for the
 * candidates whose lower bound does not exceed the least exact kappa(S) found, in order of lower bound; the others
 * say why they have none. Each lambda_max(S) run stops as soon as its top Ritz value, a lower bound on lambda_max(S),
 * puts the candidate's kappa(S) above the least exact one (its bounds' lower end takes lambda_max(S) >= 1 where Poisson
 * boxes have ~2.05, so their bounds alone rule out none of two contenders a few per cent apart): the candidate is then
 * ruled out with that bound. The first to get an exact kappa(S) (the least lower bound: the likeliest best) gets its
 * principal angles too, after lambda_max(S) on the same threads (../analysis/sparseAnalysisTasks.ts
 * sparseLambdaMaxSAndAnglesWork), so theta_H of the best is most often had here.
 */
function* exactForContendersWork(
  evaluated: Evaluation[],
  systemOf: (assignment: Int32Array) => Work<CsrSystem>,
  kernels: Kernels,
  secondsOf: (system: CsrSystem) => number | null,
): Work<void> {
  let first = true;
  // Those with bounds: a candidate without (not evaluated, the given partition being at kappa(S) = 1; or its setup failed)
  // says why already.
  const open = evaluated.filter((e) => e.kappaS === null && e.bounds !== null);
  for (const entry of open.sort((x, y) => x.bounds!.lower - y.bounds!.lower)) {
    const least = leastExactKappaS(evaluated);
    const above = ruledOutAbove(least);
    if (above?.(entry.bounds!.lower)) {
      const why =
        entry.bounds!.upper === null
          ? "from a top Ritz value of S^{-1}'s shift-invert Lanczos run, at most 1 / lambda_min(S)"
          : '1 / lambda_min(S)';
      entry.notComputed.push(
        `kappa(S) not computed: it is at least ${format(entry.bounds!.lower)} (${why}), above the best candidate's ${format(least)}, so this candidate cannot be the best.`,
      );
      continue;
    }
    // lambda_min(S) is the bounds pass's (the same computation): only lambda_max(S) is computed here. A bracketed
    // entry's bounds always carry it (a block-diagonal partition's kappa(S) = 1 is exact in that pass).
    const lambdaMinS = entry.bounds!.lambdaMinS!;
    let system: CsrSystem;
    try {
      system = yield* systemOf(entry.assignment);
    } catch (error) {
      // Its bounds came from its rows through the LU of A; its machines' own factorizations find them dependent.
      if (!(error instanceof SingularMatrixError)) throw error;
      failedSetup(entry, error);
      continue;
    }
    const exceeds = above && ((theta: number): boolean => above(theta * entry.bounds!.lower));
    const { lambdaMaxS, angles } = yield* sparseLambdaMaxSAndAnglesWork(kernels, system, first, exceeds);
    if (lambdaMaxS?.abandoned) {
      entry.bounds = { ...entry.bounds!, lower: lambdaMaxS.value * entry.bounds!.lower };
      entry.notComputed.push(
        `kappa(S) not computed: it is at least ${format(entry.bounds.lower)} (lambda_max(S) >= ${format(lambdaMaxS.value)}, a top Ritz value of its Lanczos run, over lambda_min(S)), above the best candidate's ${format(least)}, so this candidate cannot be the best.`,
      );
      continue;
    }
    entry.kappaS = conditionNumberEstimate(lambdaMaxS ?? reflectedLambdaMax(lambdaMinS), lambdaMinS).value;
    entry.seconds = secondsOf(system);
    if (angles !== null) entry.thetaH = angles.thetaH;
    entry.bounds = null;
    first = false;
  }
}

/**
 * Then theta_H of the best (the principal angles of all its overlapping pairs: most of a sparse analysis' time, and on
 * a dense system several times its kappa(S)); the others but the given partition say why they have none.
 */
function* thetaHOfBestWork(
  evaluated: Evaluation[],
  systemOf: (assignment: Int32Array) => Work<DistributedSystem>,
  kernels: Kernels,
  rowGram?: RowGram,
  factorsOf: (assignment: Int32Array) => DenseFactors | undefined = () => undefined,
): Work<void> {
  let best: Evaluation | null = null;
  for (const entry of evaluated) if (entry.kappaS !== null && (best === null || entry.kappaS < best.kappaS! * (1 - TIE))) best = entry;
  if (best !== null && best.thetaH === null) {
    const factors = factorsOf(best.assignment);
    if (factors !== undefined && rowGram !== undefined)
      best.thetaH = yield* thetaHFromRowGramWork(kernels, factors.machines, rowGram, (i) => denseMachineOfFactorWork(factors, i, kernels));
    best.thetaH ??= yield* partitionThetaHWork(kernels, yield* systemOf(best.assignment), rowGram);
  }
  for (const entry of evaluated)
    if (entry.thetaH === null && entry.setupFailed !== true)
      entry.notComputed.push(
        "theta_H not computed: only the given partition's and the best candidate's principal angles are (they cost several times what kappa(S) does, and do not rank the candidates).",
      );
}

/** Whether two assignments to m machines group the rows alike, whatever each group's machine number. */
export function samePartition(a: Int32Array, b: Int32Array, m: number): boolean {
  if (a.length !== b.length) return false;
  const forward = new Int32Array(m).fill(-1);
  const backward = new Int32Array(m).fill(-1);
  for (let k = 0; k < a.length; k++) {
    const x = a[k];
    const y = b[k];
    if (forward[x] === -1 && backward[y] === -1) {
      forward[x] = y;
      backward[y] = x;
    } else if (forward[x] !== y) return false;
  }
  return true;
}

/** APC's predicted iterations to `tolerance` at its optimal rate from kappa(S) (Azizan-Ruhi et al., Theorem 2); null: too many to converge. */
function apcIterations(kappaS: number, tolerance: number): number | null {
  const root = Math.sqrt(kappaS);
  return predictIterations((root - 1) / (root + 1), tolerance, 2 / (root + 1));
}

/** APC on a candidate: its predicted iterations and their seconds. */
function apcTime(kappaS: number, secondsPerIteration: number, tolerance: number): CandidateTime {
  const iterations = apcIterations(kappaS, tolerance);
  return { algorithm: 'apc', iterations, secondsPerIteration, seconds: iterations === null ? null : iterations * secondsPerIteration };
}

const format = (x: number): string => (Math.abs(x) >= 1e4 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(3) : x.toPrecision(4));
