/**
 * The Analysis of a job's result (field names: `Analysis` in docs/API.md). The types of
 * src/solvers/analysis/types.ts are the definition; each schema here is checked against its type at
 * compile time. Values that may be undefined mathematically are nullable.
 */
import { z } from 'zod';
import { ALGORITHM_IDS } from '../../solvers/algorithms/registry.js';
import type { Parameters, RateBounds } from '../../solvers/algorithms/types.js';
import {
  type Deployment,
  type TimeToSolution,
  ESTIMATE_METHODS,
  type AlgorithmTuning,
  type Analysis,
  type AngleEstimate,
  type AngleEstimates,
  type Bounds,
  type Conditioning,
  type ConditioningEstimates,
  type Estimate,
  type Heterogeneity,
  type Recommendation,
  type SufficientCondition,
} from '../../solvers/analysis/types.js';
import { PARTITION_STRATEGIES, type Advice, type PartitionCandidate } from '../../solvers/partitioning/advisor.js';
import { DENSE_ONE_RUN_VERTICES, KWAY_ONLY_VERTICES, ONE_RUN_VERTICES } from '../../solvers/partitioning/multilevel.js';
import { MAX_REFINED_ROWS } from '../../solvers/partitioning/refinement.js';
import { AlgorithmIdSchema, DeploymentSchema } from './jobRequest.js';
import { assertSameShape } from './sameShape.js';

const angle = z.number().describe('radians');
const ParametersSchema = z.record(z.string(), z.number()).meta({ id: 'Parameters' });

const EstimateMethodSchema = z
  .enum(ESTIMATE_METHODS)
  .describe(
    'How the value was obtained: lanczos (thick-restart Lanczos on the operator), lanczos-shift-invert (Lanczos on the inverse ' +
      'operator through a sparse LU, for a smallest eigenvalue), lanczos-exhaustive (the Krylov space became invariant: exact up to ' +
      'rounding), ratio (a quotient of two estimates, their bounds combined), structural (exact from the sparsity pattern alone: ' +
      'S = I, or pi/2 for machines sharing no column), bipartite-reflection (lambda_max(S) = 2 - lambda_min(S), exact when the ' +
      "machines' overlap graph has no odd cycle, e.g. contiguous strips of a banded matrix: S's spectrum is then symmetric about 1; " +
      "the bound is lambda_min(S)'s, carried over), coupling-block (a principal angle from the dense eigenproblem of the " +
      "rows the two machines couple through, certified on the pair's operator), dimension-count (theta = 0 exactly: the two " +
      'machines hold more independent rows than the columns they touch together, so their row spaces share a direction; a tall ' +
      "system whose machines hold more samples than features), dense-bases (a principal angle from the two machines' " +
      'orthonormal bases formed densely, as the dense analysis computes it: a small pair whose angles near 0 the sparse ' +
      'routes cannot separate).',
  )
  .meta({ id: 'EstimateMethod' });

const EstimateSchema = z
  .object({
    method: EstimateMethodSchema,
    relativeErrorBound: z
      .number()
      .nullable()
      .describe(
        'A posteriori bound from the Ritz residual: |value - exact| <= relativeErrorBound * |exact| for the Krylov iteration ' +
          '(the rounding of the factorizations it applies, about eps times their condition number, is not included); null when no ' +
          'finite bound is known.',
      ),
    iterations: z.number().int().describe('Operator applications (of both runs for a ratio).'),
    converged: z.boolean().describe('The bound met the requested tolerance (1e-10) or the Krylov space was exhausted.'),
  })
  .meta({ id: 'Estimate' });

const AngleEstimateSchema = z
  .object({
    method: EstimateMethodSchema,
    absoluteErrorBound: z
      .number()
      .nullable()
      .describe('|theta - exact| <= absoluteErrorBound (radians), from the Krylov residual; null when no finite bound is known.'),
    iterations: z.number().int().describe('Operator applications.'),
    converged: z.boolean(),
  })
  .meta({ id: 'AngleEstimate' });

const AngleEstimatesSchema = z
  .object({
    thetaH: AngleEstimateSchema.describe("theta_H's pair: structural when its machines share no column (theta = pi/2 exactly)."),
    thetaMaxAbsoluteErrorBound: z
      .number()
      .nullable()
      .describe('Largest absoluteErrorBound over every pair of theta (0 when none overlap).'),
    overlappingPairs: z
      .number()
      .int()
      .describe('Pairs i < j whose column supports overlap; the others are exactly pi/2, with no computation.'),
    intersectingPairs: z
      .number()
      .int()
      .describe(
        'Of the overlapping pairs, those whose ranks add up to more than the columns they touch together: their row spaces ' +
          'intersect and theta_ij = 0 exactly, with no computation (dimension-count).',
      ),
    unconvergedPairs: z.number().int().describe('Pairs whose iteration did not meet its tolerance.'),
  })
  .describe('How the principal angles were obtained: present when the analysis ran on CSR storage (iterative), absent on dense storage.')
  .meta({ id: 'AngleEstimates' });

const ConditioningEstimatesSchema = z
  .object({
    kappaS: EstimateSchema,
    lambdaMinS: EstimateSchema,
    lambdaMaxS: EstimateSchema,
    kappaAtA: EstimateSchema,
    L: EstimateSchema,
    mu: EstimateSchema,
  })
  .describe(
    'How each value was obtained, with its error bound: present when the analysis ran on CSR storage (Krylov estimates on sparse ' +
      'operators), absent on dense storage.',
  )
  .meta({ id: 'ConditioningEstimates' });

const HeterogeneitySchema = z.object({
  thetaH: angle.describe('Cross-machine angular heterogeneity: the smallest principal angle between two machines (pi/2 when m = 1).'),
  cosThetaH: z.number(),
  thetaHPair: z
    .tuple([z.number().int(), z.number().int()])
    .nullable()
    .describe('The pair (i, j), i < j, attaining thetaH; null when m = 1.'),
  theta: z.array(z.array(z.number())).describe('theta[i][j]: smallest principal angle between the row spaces of machines i and j.'),
  phi: z.array(z.number().nullable()).describe('phi[i]: smallest angle between two rows of machine i (null when it holds one row).'),
  phiMin: z.number().nullable(),
  rowNormRatio: z.number(),
  estimates: AngleEstimatesSchema.optional(),
});

const ConditioningSchema = z.object({
  kappaS: z.number(),
  lambdaMinS: z.number(),
  lambdaMaxS: z.number(),
  kappaAtA: z.number(),
  L: z.number().describe('lambda_max(A^T A)'),
  mu: z.number().describe('lambda_min(A^T A)'),
  estimates: ConditioningEstimatesSchema.optional(),
});

const TuningSchema = z.object({
  rate: z.number(),
  gap: z
    .number()
    .describe(
      '1 - rate, computed without cancellation: where kappa is beyond ~1/eps the rate rounds to 1 and the gap still says how far below 1 it is (the predicted iterations then come from it).',
    ),
  parameters: ParametersSchema,
});

const RateBoundsSchema = z.object({
  lower: z.number().nullable(),
  upper: z.number().nullable(),
  upperHypothesisHolds: z.boolean(),
  lowerBounds: z.record(z.string(), z.number().nullable()),
});

const BoundsSchema = z.object({
  proposition1: z.object({ hypothesisHolds: z.boolean() }),
  proposition2KappaSLowerBound: z.number().nullable(),
  theorem2KappaSUpperBound: z.number().nullable(),
  theorem2: z.object({ hypothesisHolds: z.boolean(), p: z.number().nullable() }),
  theorem3KappaSUpperBound: z.number().nullable(),
  theorem3: z.object({ hypothesisHolds: z.boolean(), c: z.number() }),
  theorem4KappaALowerBound: z
    .number()
    .nullable()
    .describe(
      "Theorem 4's lower bound on kappa(A); null when infinite, and on a tall system (N > n), where it bounds nothing " +
        '(rows e1, e1, e2, e2: kappa(A) = 1, the value infinite) and is not computed.',
    ),
  theorem4KappaAtALowerBounds: z.object({ phiMin: z.number().nullable(), rowNormRatio: z.number() }),
  table1: z.partialRecord(AlgorithmIdSchema, RateBoundsSchema),
  tall: z
    .object({
      proposition1: z.boolean(),
      proposition2: z.boolean(),
      theorem2: z.boolean(),
      theorem3: z.boolean(),
      theorem4: z.boolean(),
      table1: z.boolean(),
      note: z.string(),
    })
    .optional()
    .describe("Present when A is tall (N > n): whether each bound's proof carries over (the paper's take N = n)."),
});

const ConsistencySchema = z
  .object({
    consistent: z.boolean().describe('|A x_LS - b| / |b| <= 1e-10.'),
    leastSquaresResidual: z.number().describe('|A x_LS - b| / |b|, x_LS the least-squares solution (where DGD, D-NAG, D-HBM converge).'),
    weightedResidual: z
      .number()
      .describe(
        '|A x_W - b| / |b|, x_W = argmin sum_i |L_i^{-1} (A_i x - b_i)|^2, L_i L_i^T = A_i A_i^T (where APC, Cimmino, MLM converge).',
      ),
    weightedDistance: z.number().describe('|x_W - x_LS| / |x_LS|.'),
  })
  .meta({ id: 'Consistency' });

const SufficientConditionSchema = z.object({
  applicable: z.boolean(),
  holds: z.boolean(),
  lhs: z.number().nullable(),
  rhs: z.number().nullable(),
});

const RecommendationSchema = z.object({
  algorithm: z.enum(['apc', 'dhbm']),
  sufficientCondition: SufficientConditionSchema,
  exact: z.object({
    apcRate: z.number(),
    dhbmRate: z.number(),
    kappaS: z.number(),
    kappaAtA: z.number(),
    faster: z.enum(['apc', 'dhbm']),
    tie: z
      .boolean()
      .describe(
        'kappa(S) and kappa(A^T A) equal to what double precision resolves: relative 1e-9, or eps kappa(A) (4 eps sqrt(kappa)) ' +
          'when larger (at kappa above ~1e12); `faster` is then `dhbm`, the cheaper iteration.',
      ),
  }),
  predictedIterations: z.partialRecord(AlgorithmIdSchema, z.number().nullable()),
  tolerance: z.number(),
  regime: z.string(),
  regimeThresholds: z.object({ thetaH: z.number(), phiMin: z.number() }),
  attainableAccuracy: z
    .number()
    .nullable()
    .describe(
      "eps kappa(A): the relative residual double precision lets a run reach (null when kappa(A) is unknown). With a tolerance below it, predictedIterations and timeToSolution are exact arithmetic's, a run stagnates near it, and the explanation says so.",
    ),
  explanation: z.string(),
  finishesFirst: z
    .object({ here: z.enum(['apc', 'dhbm']), deployment: z.enum(['apc', 'dhbm']).nullable(), explanation: z.string() })
    .optional()
    .describe(
      "Which of APC and D-HBM finishes first by predicted seconds, here and on the described deployment, and why it can differ from the per-iteration answer; the explanation names either whose predicted iterations exceed the job's maxIterations (a run of it stops there, before the tolerance).",
    ),
  leastSquaresNote: z
    .string()
    .optional()
    .describe('Present for an inconsistent tall system: the projection methods converge to x_W, not x_LS, and how far apart the two are.'),
});

const AlgorithmTimeSchema = z.object({
  iterations: z
    .number()
    .nullable()
    .describe(
      'ceil(ln tol / ln rho) at the optimal rate (by ln(1 - gap) where rho rounds to 1): a whole number, beyond 2^53 as a double; null when rho >= 1.',
    ),
  secondsPerIteration: z.number(),
  startSeconds: z
    .number()
    .describe(
      "The run's start before its first iteration: its worker threads started (when it takes several) and the setup's first pass; 0 on a deployment.",
    ),
  seconds: z.number().nullable().describe('startSeconds + iterations x secondsPerIteration; null with iterations.'),
  bytesPerIteration: z.number(),
  messagesPerIteration: z.number().int(),
});

const algorithmTimes = Object.fromEntries(ALGORITHM_IDS.map((id) => [id, AlgorithmTimeSchema])) as Record<
  (typeof ALGORITHM_IDS)[number],
  typeof AlgorithmTimeSchema
>;

const FixedCostSchema = z.object({ perIteration: z.number(), perMachine: z.number() });
const StorageOverheadsSchema = z.object({ dense: FixedCostSchema, csr: FixedCostSchema });
const algorithmOverheads = Object.fromEntries(ALGORITHM_IDS.map((id) => [id, StorageOverheadsSchema])) as Record<
  (typeof ALGORITHM_IDS)[number],
  typeof StorageOverheadsSchema
>;

const CalibrationSchema = z.object({
  backend: z.enum(['typescript', 'native']),
  flopsPerSecond: z.number().describe('The dense fused row pass on a block larger than the last-level cache.'),
  flopsPerSecondInCache: z.number().describe('The same pass on a block of inCacheBytes.'),
  productFlopsPerSecond: z
    .number()
    .describe("The dense product passes apart (X v, then X^T w: Cimmino's two passes), 2 flops an entry each, out of cache."),
  productFlopsPerSecondInCache: z.number().describe('The same passes on a block of inCacheBytes.'),
  triangleEntrySeconds: z
    .number()
    .describe("One entry of a pass over a machine's triangle R (Cimmino's solve with R^T, APC's and MLM's R^T w), seconds."),
  bytesPerSecond: z.number().describe('The CSR gradient pass out of cache, bytes of the matrix (12 a stored entry) per second.'),
  bytesPerSecondInCache: z.number(),
  csrLoopBytesPerSecond: z
    .number()
    .describe("The CSR projections' plain loops over A_i (A_i v, A_i^T y) out of cache, bytes of the matrix per second."),
  csrLoopBytesPerSecondInCache: z.number(),
  factorBytesPerSecond: z
    .number()
    .describe("Solves with a Gram factor by the machines' kernel out of cache, bytes of the factor (12 an entry, each sweep) per second."),
  factorBytesPerSecondInCache: z.number(),
  factorColumnSeconds: z
    .number()
    .describe(
      "What each column of a Gram factor costs a sweep beyond its entries' bytes, seconds (fitted from factors of 5 and 40 entries a column).",
    ),
  inCacheBytes: z
    .number()
    .describe("The in-cache blocks' size: an iteration's working set between it and outOfCacheBytes is priced in between."),
  outOfCacheBytes: z.number(),
  vectorBytesPerSecond: z
    .number()
    .describe("A TypeScript vector loop's rate (D-HBM's update, 40 bytes an entry): the taskmaster's sums and updates, gathers."),
  stepBytesPerSecond: z
    .number()
    .describe(
      "The gradient methods' step (terms summed, x and its momentum updated) as the backend runs it: the addon's on the native backend, the WebAssembly one on the TypeScript backend (the TypeScript loops where WebAssembly is off).",
    ),
  consensusEntrySeconds: z
    .number()
    .describe("One entry of APC's and MLM's CSR taskmaster loop that measures the distance to consensus (a compensated sum), seconds."),
  perMachineOverheadSeconds: z.number().describe("One chunk's fixed cost (a kernel call on a tiny block)."),
  threadStartSeconds: z.number().describe("A threaded run's start: the last measured in this worker, else a default."),
  phaseSyncSeconds: z
    .number()
    .describe("One phase's synchronisation of a threaded iteration: the last measured in this worker, else a default."),
  threadSlowdown: z
    .object({ dense: z.number(), csr: z.number() })
    .describe(
      "How much longer a threaded iteration's chunks take side by side on its threads than one after another on one (the threads share caches and memory bandwidth): the last measured in this worker on dense and on CSR machines, else 1. A threaded phase's chunks are priced at their one-thread price times it.",
    ),
  runnerIterationSeconds: z
    .number()
    .describe("The runner's own work per iteration: measures, trace, stopping tests (a constant, used where overheads is null)."),
  overheads: z
    .object(algorithmOverheads)
    .nullable()
    .describe(
      "Each algorithm's fixed costs per iteration beyond the kernels' rates (calls, gathers, measures, the trace), per storage: " +
        'perIteration + perMachine m seconds, measured on tiny systems of 2 and 8 machines.',
    ),
  measuredAt: z.string(),
  refreshAfterSeconds: z.number(),
});

const TimeToSolutionSchema = z
  .object({
    ...algorithmTimes,
    calibration: CalibrationSchema,
    deployment: z.object({ ...algorithmTimes, assumptions: DeploymentSchema }).optional(),
  })
  .meta({ id: 'TimeToSolution' });

export const AnalysisSchema = z
  .object({
    n: z.number().int(),
    m: z.number().int(),
    blockSizes: z.array(z.number().int()),
    rows: z.number().int().optional().describe('Rows N of A, present when A is tall (N > n): a least-squares problem.'),
    machineRanks: z.array(z.number().int()).optional().describe('dim R(A_i) per machine, present when A is tall.'),
    consistency: ConsistencySchema.optional(),
    heterogeneity: HeterogeneitySchema,
    conditioning: ConditioningSchema,
    rates: z.object(
      Object.fromEntries(ALGORITHM_IDS.map((id) => [id, TuningSchema])) as Record<(typeof ALGORITHM_IDS)[number], typeof TuningSchema>,
    ),
    bounds: BoundsSchema,
    recommendation: RecommendationSchema,
    timeToSolution: TimeToSolutionSchema.optional(),
  })
  .meta({ id: 'Analysis' });

export { ParametersSchema };

assertSameShape<z.output<typeof ParametersSchema>, Parameters>(true);
assertSameShape<z.output<typeof EstimateSchema>, Estimate>(true);
assertSameShape<z.output<typeof AngleEstimateSchema>, AngleEstimate>(true);
assertSameShape<z.output<typeof AngleEstimatesSchema>, AngleEstimates>(true);
assertSameShape<z.output<typeof ConditioningEstimatesSchema>, ConditioningEstimates>(true);
assertSameShape<z.output<typeof HeterogeneitySchema>, Heterogeneity>(true);
assertSameShape<z.output<typeof ConditioningSchema>, Conditioning>(true);
assertSameShape<z.output<typeof TuningSchema>, AlgorithmTuning>(true);
assertSameShape<z.output<typeof RateBoundsSchema>, RateBounds>(true);
assertSameShape<z.output<typeof BoundsSchema>, Bounds>(true);
assertSameShape<z.output<typeof SufficientConditionSchema>, SufficientCondition>(true);
assertSameShape<z.output<typeof RecommendationSchema>, Recommendation>(true);
assertSameShape<z.output<typeof AnalysisSchema>, Analysis>(true);
assertSameShape<z.output<typeof DeploymentSchema>, Deployment>(true);
assertSameShape<z.output<typeof TimeToSolutionSchema>, TimeToSolution>(true);

const PartitionStrategySchema = z
  .enum(PARTITION_STRATEGIES)
  .describe(
    'given: the partition of the request; contiguous: m blocks as { machines: m }; round-robin: row k on machine k mod m; ' +
      'rcm-contiguous: contiguous blocks after reverse Cuthill-McKee on the row graph (rows joined when they share a column); ' +
      "multilevel: the service's multilevel partition of the row graph, edges weighted |a_i . a_j| / (|a_i| |a_j|): the graph " +
      'coarsened once by heavy-edge matching, its coarsest graph split by recursive bisection, the m parts refined by k-way ' +
      `Fiduccia-Mattheyses passes within the imbalance (up to ${KWAY_ONLY_VERTICES.toLocaleString('en-US')} rows four runs of ` +
      `it and four of recursive bisection, each bisection multilevel; up to ${ONE_RUN_VERTICES.toLocaleString('en-US')} four ` +
      "runs of it; the least edge cut kept; on a row graph too dense for k-way passes, a dense matrix's, recursive bisection " +
      `alone, four runs below ${DENSE_ONE_RUN_VERTICES.toLocaleString('en-US')} rows and one from it); metis: METIS_PartGraphKway on the same ` +
      'graph (weights scaled to integers 1..1000; listed on the native backend when the addon was built with METIS), then ' +
      "the multilevel partitioner's k-way Fiduccia-Mattheyses passes on it within the imbalance; refined: the " +
      'best candidate within the imbalance with rows moved between machines to lower kappa(S) itself, moves chosen from the ' +
      "eigenvectors of S's extreme eigenvalues and each kept only if the exact kappa(S) drops (listed for square matrices of " +
      `at most ${MAX_REFINED_ROWS} rows).`,
  )
  .meta({ id: 'PartitionStrategy' });

export const PartitionCandidateSchema = z
  .object({
    strategy: PartitionStrategySchema,
    assignment: z.array(z.number().int()).describe('assignment[k] = the 0-based machine of row k.'),
    sizes: z.array(z.number().int()).describe('Rows of each machine.'),
    kappaS: z
      .number()
      .nullable()
      .describe(
        "kappa(S) of this assignment, the value an analyze job on it reports; null when not computed because the candidate cannot be the best (notComputed, kappaSBounds), or because its setup finds a machine's rows numerically dependent, as an analyze job on it would (notComputed; kappaSBounds null).",
      ),
    kappaSBounds: z
      .object({ lower: z.number(), upper: z.number().nullable() })
      .nullable()
      .describe(
        "Bounds on kappa(S) when it was not computed: lower 1 / lambda_min(S), or theta / lambda_min(S) when a top Ritz value theta <= lambda_max(S) of its Lanczos run lifted it above the best candidate's kappa(S), or, when lambda_min(S)'s own run was stopped as soon as that put it above the best's, theta (2 theta - 1 for a bipartite overlap graph) from a top Ritz value theta <= 1 / lambda_min(S) of S^{-1}; upper the overlap graph's colours / lambda_min(S) (lambda_min(S) as the analysis computes it), null when lambda_min(S)'s run was stopped early.",
      ),
    thetaH: angle
      .nullable()
      .describe(
        'theta_H of this assignment, the value an analyze job on it reports (radians); computed for the given partition and the best candidate only, null for the others (notComputed says so).',
      ),
    notComputed: z.string().nullable().describe('What of this candidate was not computed and why; null when everything was.'),
    timeToSolution: z
      .object({
        algorithm: z.literal('apc'),
        iterations: z
          .number()
          .nullable()
          .describe(
            'Iterations APC at its optimal parameters needs on this partition, from kappa(S): a whole number, beyond 2^53 as a double; null: it does not converge in floating point.',
          ),
        secondsPerIteration: z.number().describe("One APC iteration on this partition, priced on this worker's measured kernels."),
        seconds: z.number().nullable().describe('iterations x secondsPerIteration; null with iterations.'),
      })
      .nullable()
      .describe("APC's predicted time to solution on this partition (to the job's tolerance)."),
    withinImbalance: z.boolean().describe('Every machine holds between (1 - imbalance) n/m and (1 + imbalance) n/m rows.'),
    refinement: z
      .object({
        from: PartitionStrategySchema.describe('The candidate the refinement started from: the best other one within the imbalance.'),
        tries: z.number().int().describe('Proposals tried, each by its exact kappa(S).'),
        kept: z.number().int().describe("Proposals kept (each lowered kappa(S)); 0: this is the start's partition, as the summary says."),
      })
      .nullable()
      .describe("On the 'refined' candidate: where it started and what it kept; null on every other candidate."),
  })
  .meta({ id: 'PartitionCandidate' });

export const AdviceSchema = z
  .object({
    imbalance: z.number().describe('The balance the constructed candidates keep.'),
    candidates: z
      .array(PartitionCandidateSchema)
      .describe(
        "The given partition first, then contiguous, round-robin, rcm-contiguous and the row graph's partitions, then 'refined' where it ran. On a tall matrix whose given partition is at kappa(S) = 1 (to 1e-8), the least any partition has, only the given, contiguous and round-robin ones: the row graph is not built.",
      ),
    best: PartitionStrategySchema.describe(
      'The candidate of least kappa(S), which decides APC\'s rate (the given partition on a tie); take it as partition { "fromAdvice": id }.',
    ),
    givenRatio: z.number().describe("kappa(S) of the given partition over the best's (1: nothing found does better)."),
    summary: z.string().describe("The advice: the given partition's kappa(S) against the best's, and APC's predicted iterations on each."),
  })
  .meta({ id: 'Advice' });

assertSameShape<z.output<typeof PartitionCandidateSchema>, PartitionCandidate>(true);
assertSameShape<z.output<typeof AdviceSchema>, Advice>(true);
