/**
 * The Analysis of a job's result (field names: `Analysis` in docs/API.md). The types of
 * src/solvers/analysis/types.ts are the definition; each schema here is checked against its type at
 * compile time. Values that may be undefined mathematically are nullable.
 */
import { z } from 'zod';
import { ALGORITHM_IDS } from '../../solvers/algorithms/registry.js';
import type { Parameters, RateBounds } from '../../solvers/algorithms/types.js';
import type {
  AlgorithmTuning,
  Analysis,
  Bounds,
  Conditioning,
  Heterogeneity,
  Recommendation,
  SufficientCondition,
} from '../../solvers/analysis/types.js';
import { AlgorithmIdSchema } from './jobRequest.js';
import { assertSameShape } from './sameShape.js';

const angle = z.number().describe('radians');
const ParametersSchema = z.record(z.string(), z.number()).meta({ id: 'Parameters' });

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
});

const ConditioningSchema = z.object({
  kappaS: z.number(),
  lambdaMinS: z.number(),
  lambdaMaxS: z.number(),
  kappaAtA: z.number(),
  L: z.number().describe('lambda_max(A^T A)'),
  mu: z.number().describe('lambda_min(A^T A)'),
});

const TuningSchema = z.object({ rate: z.number(), parameters: ParametersSchema });

const RateBoundsSchema = z.object({
  lower: z.number().nullable(),
  upper: z.number().nullable(),
  upperHypothesisHolds: z.boolean(),
  lowerBounds: z.record(z.string(), z.number().nullable()),
});

const BoundsSchema = z.object({
  proposition1: z.object({ hypothesisHolds: z.boolean() }),
  proposition2KappaSLowerBound: z.number(),
  theorem2KappaSUpperBound: z.number().nullable(),
  theorem2: z.object({ hypothesisHolds: z.boolean(), p: z.number().nullable() }),
  theorem3KappaSUpperBound: z.number().nullable(),
  theorem3: z.object({ hypothesisHolds: z.boolean(), c: z.number() }),
  theorem4KappaALowerBound: z.number(),
  theorem4KappaAtALowerBounds: z.object({ phiMin: z.number().nullable(), rowNormRatio: z.number() }),
  table1: z.partialRecord(AlgorithmIdSchema, RateBoundsSchema),
});

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
    tie: z.boolean(),
  }),
  predictedIterations: z.partialRecord(AlgorithmIdSchema, z.number().nullable()),
  tolerance: z.number(),
  regime: z.string(),
  regimeThresholds: z.object({ thetaH: z.number(), phiMin: z.number() }),
  explanation: z.string(),
});

export const AnalysisSchema = z
  .object({
    n: z.number().int(),
    m: z.number().int(),
    blockSizes: z.array(z.number().int()),
    heterogeneity: HeterogeneitySchema,
    conditioning: ConditioningSchema,
    rates: z.object(
      Object.fromEntries(ALGORITHM_IDS.map((id) => [id, TuningSchema])) as Record<(typeof ALGORITHM_IDS)[number], typeof TuningSchema>,
    ),
    bounds: BoundsSchema,
    recommendation: RecommendationSchema,
  })
  .meta({ id: 'Analysis' });

export { ParametersSchema };

assertSameShape<z.output<typeof ParametersSchema>, Parameters>(true);
assertSameShape<z.output<typeof HeterogeneitySchema>, Heterogeneity>(true);
assertSameShape<z.output<typeof ConditioningSchema>, Conditioning>(true);
assertSameShape<z.output<typeof TuningSchema>, AlgorithmTuning>(true);
assertSameShape<z.output<typeof RateBoundsSchema>, RateBounds>(true);
assertSameShape<z.output<typeof BoundsSchema>, Bounds>(true);
assertSameShape<z.output<typeof SufficientConditionSchema>, SufficientCondition>(true);
assertSameShape<z.output<typeof RecommendationSchema>, Recommendation>(true);
assertSameShape<z.output<typeof AnalysisSchema>, Analysis>(true);
