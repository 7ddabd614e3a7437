/**
 * Studies as the API takes and returns them. The types of src/solvers/studies (requests, results,
 * figures) and src/jobs/studies/types.ts (Study, StudyPage...) are the definition; each schema here
 * is checked against its type at compile time.
 */
import { z } from 'zod';
import { queryInteger } from './queryInteger.js';
import { STUDY_STATUSES, type Study, type StudyPage, type StudyProgress, type StudySummary } from '../../jobs/studies/types.js';
import type { MetricResult, PointResult, ReferenceCheck, StudyResult } from '../../solvers/studies/aggregate.js';
import { PARTITION_FAMILIES, STUDY_GENERATORS, STUDY_SAMPLERS } from '../../solvers/studies/definition.js';
import {
  FIGURE_KINDS,
  STUDY_PRESETS,
  type FigureSpec,
  type GeneralStudyRequest,
  type PresetStudyRequest,
} from '../../solvers/studies/presets.js';
import { NotifyViewSchema, WebhookDeliverySchema } from './job.js';
import { NotifyRequestSchema, StoredMatrixInput } from './jobRequest.js';
import { LabelQuerySchema, LabelsSchema } from './labels.js';
import { ProblemSchema } from './problem.js';
import { assertSameShape } from './sameShape.js';

const GridParameterSchema = z
  .enum(['mean', 'std', 'sigma', 'eps', 'blockSize', 'p', 'skew', 'rowsPerFeature', 'n', 'm'])
  .meta({ id: 'StudyGridParameter' });
const axis = (what: string): z.ZodOptional<z.ZodArray<z.ZodNumber>> =>
  z.array(z.number()).min(1).max(1000).optional().describe(`Values of ${what} (each grid point takes one).`);
const setting = (what: string): z.ZodOptional<z.ZodNumber> => z.number().optional().describe(what);

export const StudyGridSchema = z
  .object({
    mean: axis("the Gaussian entries' mean (regression: the features' common mean)"),
    std: axis("the Gaussian entries' standard deviation"),
    sigma: axis("sigma (structured-gaussian: off-diagonal blocks' standard deviation; regression: the label noise)"),
    eps: axis('eps (ones-minus-eps)'),
    blockSize: axis('blockSize (structured-gaussian, block-diagonal)'),
    p: axis('p, the rows of each of the two machines (subspace-pair)'),
    skew: axis("skew, the distance of each machine's feature mean from the common one (regression)"),
    rowsPerFeature: axis('rowsPerFeature, N / n: the samples per feature (regression; N = round(rowsPerFeature n))'),
    n: axis('n (regression: the features)'),
    m: axis('m, the number of machines'),
  })
  .strict()
  .meta({ id: 'StudyGrid', description: 'The axes of the grid; the points are their cartesian product (at most MAX_STUDY_POINTS).' });

const StudySettingsSchema = z
  .object({
    mean: setting('Mean of the Gaussian entries (default 0).'),
    std: setting('Standard deviation of the Gaussian entries (default 1).'),
    sigma: setting('structured-gaussian: standard deviation of the off-diagonal blocks; regression: of the label noise (default 1).'),
    eps: setting('ones-minus-eps: eps (default 0.1).'),
    blockSize: setting('structured-gaussian / block-diagonal: block size (default 1).'),
    p: setting('subspace-pair: rows of each machine (default 1).'),
    skew: setting("regression: distance of each machine's feature mean from the common one (default 0)."),
    rowsPerFeature: setting('regression: N / n, samples per feature (default 4).'),
    n: setting('Matrix size (default 120); regression: the features.'),
    m: setting('Machines (default 1).'),
  })
  .strict();

export const GeneralStudyRequestSchema = z
  .object({
    sampler: z
      .enum(STUDY_SAMPLERS)
      .optional()
      .describe("'analysis' (default): seeded n x n matrices analyzed; 'subspace-pair': two p x n Gaussian blocks."),
    generator: z.enum(STUDY_GENERATORS).optional().describe('Generator of the matrices (default gaussian).'),
    matrix: StoredMatrixInput.optional().describe(
      'A matrix stored by POST /v1/matrices instead of a generator (as jobs name it). Only m (settings.m, grid.m) and the ' +
        "partition vary: each sample is the analysis of the matrix (on CSR, as an analyze job computes it) over the sample's " +
        "partition. partition.family 'random' draws a seeded partition per sample; 'contiguous' and 'round-robin' are the " +
        'same partition for every sample, so they take samples: 1. The study computes on its own copy of the matrix: deleting ' +
        'the matrix does not affect it.',
    ),
    settings: StudySettingsSchema.optional(),
    grid: StudyGridSchema,
    partition: z
      .object({
        family: z
          .enum(PARTITION_FAMILIES)
          .optional()
          .describe('contiguous (default, NumPy array_split), round-robin, or random (seeded, same sizes).'),
        seed: z.number().int().optional(),
      })
      .strict()
      .optional(),
    samples: z.number().int().min(1).describe('Seeded samples per grid point (at most MAX_STUDY_POINT_SAMPLES).'),
    seed: z.number().int().optional().describe('Seed of the study (default 1): sample s of a setting is always the same matrix.'),
    metrics: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(32)
      .describe(
        "Scalar fields of the analysis by path (rates.apc.rate, conditioning.kappaS, heterogeneity.thetaH...); a string field as 'path=value' (share).",
      ),
    dropKappaAtAAbove: z.number().positive().nullable().optional().describe('Drop (and count) samples whose kappa(A^T A) exceeds this.'),
    thresholds: z.array(z.number()).max(32).optional().describe('Levels eps of P(value > eps).'),
    histogramBins: z.number().int().min(0).max(200).optional(),
    histogramScale: z
      .enum(['linear', 'log'])
      .optional()
      .describe(
        "`linear` (default): equal-width bins from 0; `log`: bins of equal ratio from the positive values' 1st percentile (for a metric " +
          'spread over decades, as tan^-2 theta; the values below the first edge counted in `below`). Both end at the 99th percentile.',
      ),
    labels: LabelsSchema.optional(),
  })
  .strict()
  .meta({ id: 'GeneralStudyRequest' });

export const PresetStudyRequestSchema = z
  .object({
    preset: z
      .enum(STUDY_PRESETS)
      .describe(
        "The paper's experiments: experiment-1 (rates against m), experiment-2 (against n), experiment-3 (tan^-2 theta_12); " +
          'regression-skew: the rates on federated regression data as the feature skew grows.',
      ),
    samples: z.number().int().min(1).optional().describe("Samples per grid point (default: the paper's)."),
    seed: z.number().int().optional(),
    grid: StudyGridSchema.optional().describe("Replace some of the preset's axes (e.g. a subset of m)."),
    labels: LabelsSchema.optional(),
  })
  .strict()
  .meta({ id: 'PresetStudyRequest' });

export const CreateStudyRequestSchema = z.union([PresetStudyRequestSchema, GeneralStudyRequestSchema]).meta({ id: 'CreateStudyRequest' });

/** The body of POST /v1/studies: a study request and, apart from it (a study's `request` never shows it), its callback. */
const withNotify = { notify: NotifyRequestSchema.optional() };
export const CreateStudyBodySchema = z
  .union([
    PresetStudyRequestSchema.extend(withNotify).meta({ id: 'PresetStudyBody' }),
    GeneralStudyRequestSchema.extend(withNotify).meta({ id: 'GeneralStudyBody' }),
  ])
  .meta({ id: 'CreateStudyBody' });

const SettingsSchema = z.object({
  mean: z.number(),
  std: z.number(),
  sigma: z.number(),
  eps: z.number(),
  blockSize: z.number(),
  p: z.number(),
  skew: z.number(),
  rowsPerFeature: z.number(),
  n: z.number(),
  m: z.number(),
});

const ReasonCountSchema = z.object({ reason: z.string(), count: z.number().int() });

export const MetricResultSchema = z
  .object({
    metric: z.string(),
    kind: z.enum(['value', 'share']),
    of: z.string().nullable(),
    count: z.number().int(),
    mean: z.number().nullable(),
    standardError: z.number().nullable(),
    interval: z.tuple([z.number(), z.number()]).nullable().describe('95% interval: mean -+ 1.96 standard errors.'),
    min: z.number().nullable(),
    max: z.number().nullable(),
    histogram: z
      .object({
        edges: z.array(z.number()),
        density: z.array(z.number()).describe('count / (total * width) per bin: a density per unit of the value on either scale.'),
        above: z.number().int(),
        below: z.number().int(),
        scale: z.enum(['linear', 'log']),
      })
      .nullable(),
    exceedance: z.array(
      z.object({
        eps: z.number(),
        probability: z.number().nullable().describe('Share of the values above eps; null when the metric has no value at all.'),
        standardError: z.number().nullable(),
        interval: z
          .tuple([z.number(), z.number()])
          .nullable()
          .describe("95% interval (Wilson's score interval): honest at 0 and 1, where the standard error is 0."),
        closedForm: z.number().nullable(),
      }),
    ),
    closedFormMean: z.number().nullable(),
  })
  .meta({ id: 'StudyMetricResult' });

export const PointResultSchema = z
  .object({
    index: z.number().int(),
    settings: SettingsSchema,
    samples: z.number().int(),
    kept: z.number().int(),
    dropped: z.number().int(),
    failed: z.number().int(),
    dropReasons: z.array(ReasonCountSchema),
    failures: z.array(ReasonCountSchema),
    metrics: z.array(MetricResultSchema),
  })
  .meta({ id: 'StudyPointResult' });

const ReferenceCheckSchema = z.object({
  point: z.number().int(),
  metric: z.string(),
  reference: z.number(),
  mean: z.number().nullable(),
  standardError: z.number().nullable(),
  deviation: z.number().nullable(),
  withinThreeStandardErrors: z.boolean(),
});

export const StudyResultSchema = z
  .object({
    points: z.array(PointResultSchema),
    reference: z
      .array(ReferenceCheckSchema)
      .nullable()
      .describe(
        "Experiment 1 only: the study's means beside docs/SPEC.md's own NumPy Monte-Carlo run of it (the paper prints " +
          'figures, not these numbers), which carries Monte-Carlo error of a few 1e-4 itself; `deviation` counts the ' +
          "study's standard errors only.",
      ),
  })
  .meta({ id: 'StudyResult' });

export const StudyProgressSchema = z
  .object({
    done: z.int().min(0).describe("Samples done (a grid point's share of a chunk of several points may be fractional in `points`)."),
    total: z.number().int(),
    chunksDone: z.number().int(),
    chunks: z.number().int(),
    points: z.array(z.object({ point: z.number().int(), done: z.number(), total: z.number().int() })),
  })
  .meta({ id: 'StudyProgress' });

const FigureSpecSchema = z.object({
  name: z.string(),
  title: z.string(),
  kind: z.enum(FIGURE_KINDS),
  x: GridParameterSchema,
  panel: GridParameterSchema.nullable(),
  series: GridParameterSchema.nullable(),
  metrics: z.array(z.string()),
  logX: z.boolean(),
  logY: z.boolean(),
});

export const StudyStatusSchema = z.enum(STUDY_STATUSES).meta({ id: 'StudyStatus' });

export const StudySchema = z
  .object({
    id: z.string(),
    owner: z.string().nullable(),
    status: StudyStatusSchema,
    preset: z.enum(STUDY_PRESETS).nullable(),
    request: CreateStudyRequestSchema,
    points: z.array(z.object({ index: z.number().int(), settings: SettingsSchema })),
    samplesPerPoint: z.number().int(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    progress: StudyProgressSchema,
    result: StudyResultSchema.nullable(),
    error: ProblemSchema.nullable(),
    figures: z.array(FigureSpecSchema).describe('GET /v1/studies/{id}/figures/{name} renders each as SVG once the study has succeeded.'),
    notify: NotifyViewSchema.optional().describe('Present when the study was submitted with `notify` (the secret is never shown).'),
    deliveries: z
      .array(WebhookDeliverySchema)
      .optional()
      .describe('The attempts to deliver the end of the study to `notify.url`, oldest first (present with `notify`).'),
    labels: LabelsSchema.describe("The request's labels ({} for none)."),
  })
  .meta({ id: 'Study' });

export const StudySummarySchema = z
  .object({
    id: z.string(),
    owner: z.string().nullable(),
    status: StudyStatusSchema,
    preset: z.enum(STUDY_PRESETS).nullable(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
    progress: z.object({ done: z.int().min(0), total: z.number().int() }),
    labels: LabelsSchema,
    error: ProblemSchema.optional().describe('Present when the study failed: why.'),
  })
  .meta({ id: 'StudySummary' });

/** The `data` of a study's event stream (GET /v1/studies/{id}/events). */
export const StudyEventDataSchema = z
  .union([
    z
      .object({ status: StudyStatusSchema, study: StudySchema })
      .describe('`event: status`: the status at subscription time, then each change, with the study.')
      .meta({ id: 'StudyStatusEvent' }),
    StudyProgressSchema.describe('`event: progress`: samples done of the total, per grid point, after each chunk a worker finishes.'),
  ])
  .describe('The `data` of an event: `status` StudyStatusEvent, `progress` StudyProgress.')
  .meta({ id: 'StudyEventData' });

export const StudyPageSchema = z
  .object({ items: z.array(StudySummarySchema), nextCursor: z.string().nullable() })
  .meta({ id: 'StudyPage' });

export const StudyIdParamsSchema = z.object({ id: z.string().min(1).max(64) });
export const StudyFigureParamsSchema = z.object({ id: z.string().min(1).max(64), name: z.string().min(1).max(64) });

export const ListStudiesQuerySchema = z.object({
  status: StudyStatusSchema.optional(),
  label: LabelQuerySchema,
  limit: queryInteger(z.number().int().min(1).max(200).default(20)),
  cursor: z.string().min(1).max(200).optional(),
});

assertSameShape<z.output<typeof GeneralStudyRequestSchema>, GeneralStudyRequest>(true);
assertSameShape<z.output<typeof PresetStudyRequestSchema>, PresetStudyRequest>(true);
assertSameShape<z.output<typeof MetricResultSchema>, MetricResult>(true);
assertSameShape<z.output<typeof PointResultSchema>, PointResult>(true);
assertSameShape<z.output<typeof ReferenceCheckSchema>, ReferenceCheck>(true);
assertSameShape<z.output<typeof StudyResultSchema>, StudyResult>(true);
assertSameShape<z.output<typeof StudyProgressSchema>, StudyProgress>(true);
assertSameShape<z.output<typeof FigureSpecSchema>, FigureSpec>(true);
assertSameShape<z.output<typeof StudySchema>, Study>(true);
assertSameShape<z.output<typeof StudySummarySchema>, StudySummary>(true);
assertSameShape<z.output<typeof StudyPageSchema>, StudyPage>(true);
