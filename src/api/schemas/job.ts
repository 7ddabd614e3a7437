/**
 * Jobs as the API returns them. The types of src/jobs/types.ts (Job, JobSummary, JobPage, RunSummary,
 * TraceView...) are the definition; each schema here is checked against its type at compile time.
 */
import { z } from 'zod';
import { queryInteger } from './queryInteger.js';
import { MATRIX_FORMATS } from '../../solvers/input/types.js';
import {
  JOB_STATUSES,
  JOB_TYPES,
  MATRIX_STORAGES,
  NUMERIC_BACKENDS,
  PARTITION_KINDS,
  INITIAL_GUESS_KINDS,
  type Job,
  type MatrixEcho,
  type PartitionEcho,
  type JobOptions,
  type JobPage,
  type JobProgress,
  type JobResult,
  type JobSummary,
  type RunSummary,
  type RunsOutcome,
  type SplitExecution,
  type TraceView,
  type NotifyView,
  type WebhookDelivery,
} from '../../jobs/types.js';
import { RUN_STATUSES } from '../../solvers/runner/types.js';
import { AdviceSchema, AnalysisSchema, ParametersSchema } from './analysis.js';
import { AlgorithmIdSchema, DeploymentSchema, GeneratorSettingsSchema } from './jobRequest.js';
import { LabelQuerySchema, LabelsSchema } from './labels.js';
import { ProblemSchema } from './problem.js';
import { assertSameShape } from './sameShape.js';

export const JobStatusSchema = z.enum(JOB_STATUSES).meta({ id: 'JobStatus' });
export const JobTypeSchema = z.enum(JOB_TYPES).meta({ id: 'JobType' });

export const JobProgressSchema = z
  .object({
    phase: z.string().describe("What is being computed: 'bases', 'principal-angles', 'conditioning', 'solve', 'done'..."),
    algorithm: z.string().optional(),
    iteration: z.number().int().optional(),
    relativeResidual: z.number().nullable().optional(),
    fraction: z.number().optional().describe('Fraction of the current phase done, in [0, 1], when known.'),
    updatedAt: z.string(),
  })
  .meta({ id: 'JobProgress' });

export const InitialGuessEchoSchema = z
  .object({
    kind: z.enum(INITIAL_GUESS_KINDS).describe('vector: n numbers given with the request; job: the solution of a finished run.'),
    job: z.string().optional().describe('kind job: the job whose run the solution was copied from (at submission).'),
    algorithm: AlgorithmIdSchema.optional().describe('kind job: that run.'),
  })
  .meta({ id: 'InitialGuessEcho', description: 'Where the runs started (the vector itself is not echoed).' });

export const JobOptionsSchema = z
  .object({
    tolerance: z.number(),
    absoluteTolerance: z.number().optional(),
    errorTolerance: z.number().optional(),
    maxIterations: z.number().int(),
    maxWallTimeMs: z.number().optional(),
    divergenceTolerance: z.number().optional().describe('Absent in jobs stored before it existed (they ran with a factor of 1e8).'),
    stopOnStagnation: z.boolean().optional().describe("false: runs were not stopped as 'stagnated' (absent: they may be)."),
    parameters: z.partialRecord(AlgorithmIdSchema, ParametersSchema),
    initialGuess: InitialGuessEchoSchema.optional().describe('Absent: every run started at x(0) = 0.'),
    deployment: DeploymentSchema.optional().describe('The deployment the time to solution is predicted on (defaults filled in).'),
    imbalance: z.number().optional().describe('Advise jobs: the balance of the constructed candidates.'),
    refinementTries: z
      .number()
      .int()
      .optional()
      .describe("Advise jobs: the refinement's most tries (absent in advise jobs stored before it existed: they had 8)."),
  })
  .meta({ id: 'JobOptions' });

export const RunStatusSchema = z.enum(RUN_STATUSES).meta({
  id: 'RunStatus',
  description:
    "How a run ended (PETSc's KSPConvergedReason): converged (every test asked for passed: the residual test " +
    '|A x - b| <= max(tolerance |b|, absoluteTolerance), and errorTolerance when given); max-iterations; max-wall-time ' +
    '(maxWallTimeMs); diverged (the relative residual exceeded divergenceTolerance times its initial value, or the error or ' +
    "the machines' consensus distance 1e8 times theirs); stagnated (near the attainable accuracy eps kappa(A), the smallest " +
    'residual did not halve over 10 decades at the theoretical rate, at least 200 iterations); non-finite (NaN or Infinity); ' +
    'cancelled. stopReason says it in words.',
});

export const ResidualGrowthSchema = z
  .object({
    peakRelativeResidual: z.number(),
    peakIteration: z.number().int(),
    factor: z.number().describe('peakRelativeResidual over the initial relative residual.'),
    cause: z
      .enum(['transient', 'divergence', 'unexplained'])
      .describe(
        "transient: D-HBM's or D-NAG's growth before decay (spectral radius < 1; at the optimal parameters the iteration matrix " +
          'has repeated eigenvalues, so an error mode behaves like (1 + c t) rho^t); divergence: spectral radius >= 1 for the ' +
          'parameters used; unexplained: neither.',
      ),
    predictedFactor: z
      .number()
      .nullable()
      .describe('cause transient: the largest growth of the error modes the theory predicts (an estimate, sampling [mu, L]).'),
    predictedIteration: z.number().int().nullable().describe('cause transient: the iteration of that predicted peak.'),
  })
  .meta({ id: 'ResidualGrowth', description: 'The relative residual rose above its initial value: how much, and why.' });

export const RunColumnSummarySchema = z
  .object({
    status: RunStatusSchema,
    iterations: z.number().int(),
    relativeResidual: z.number().nullable().describe('|A x - b| / |b| of the returned solution (null when not finite).'),
    relativeError: z
      .number()
      .nullable()
      .describe(
        "|x - x*| / |x*| when the true solution is known (rhs omitted); on a tall system, to the run's target when the system is inconsistent or x* is unknown.",
      ),
    target: z
      .enum(['least-squares', 'block-weighted'])
      .optional()
      .describe(
        'Present when A is tall (N > n): where this run converges, x_LS = argmin |A x - b| (DGD, D-NAG, D-HBM) or the block-weighted x_W (APC, Cimmino, MLM); the same point when the system is consistent.',
      ),
    empiricalRate: z.number().nullable(),
    theoreticalRate: z.number().nullable(),
    parameters: ParametersSchema,
    wallTimeMs: z.number(),
    stopReason: z.string().describe('Why the run stopped, with the diagnosis of a residual that grew.'),
    attainableAccuracy: z
      .number()
      .nullable()
      .optional()
      .describe('eps kappa(A): the relative residual double precision allows (stagnation is judged near it).'),
    growth: ResidualGrowthSchema.nullable().optional().describe('null: the relative residual never rose above its initial value.'),
    tracePoints: z.number().int(),
  })
  .meta({ id: 'RunColumn', description: 'How a run of one right-hand side ended.' });

export const RunSummarySchema = RunColumnSummarySchema.extend({
  columns: z
    .array(RunColumnSummarySchema)
    .optional()
    .describe(
      'Several right-hand sides (rhs given as a list of k > 1): column j summarized, as a job of rhs[j] alone reports its run ' +
        "(relativeError null: x* is unknown); the top-level fields are column 0's. Absent for one right-hand side.",
    ),
}).meta({ id: 'Run' });

export const RunsOutcomeSchema = z
  .object({
    converged: z.array(AlgorithmIdSchema),
    notConverged: z.array(z.object({ algorithm: AlgorithmIdSchema, status: RunStatusSchema, stopReason: z.string() })),
  })
  .meta({
    id: 'RunsOutcome',
    description: 'Which runs converged and how the others ended; the job itself succeeded either way (it ran).',
  });

export const SplitExecutionSchema = z
  .object({
    parts: z
      .number()
      .int()
      .describe('Child jobs the analysis ran as: groups of machine pairs, ranges of rows, and the two condition numbers.'),
    workers: z.number().int().describe('Distinct worker processes that computed them.'),
  })
  .meta({
    id: 'SplitExecution',
    description:
      "An analysis split over the workers as the paper's Algorithm 2 distributes it (analyze jobs on a dense matrix with " +
      'n >= SPLIT_ANALYSIS_MIN_N and m >= SPLIT_ANALYSIS_MIN_MACHINES); its values equal the one-worker analysis.',
  });

export const RunsSpectralDataSchema = z
  .object({
    L: z.number().describe('lambda_max(A^T A).'),
    mu: z.number().describe('lambda_min(A^T A).'),
    lambdaMinS: z.number().describe('lambda_min(S), S = sum_i Q_i Q_i^T.'),
    lambdaMaxS: z.number().describe('lambda_max(S).'),
  })
  .meta({
    id: 'RunsSpectralData',
    description:
      "The spectral data a solve's runs took their optimal parameters and rates from (analysis.conditioning's fields of the same names).",
  });

export const JobResultSchema = z
  .object({
    analysisCompleted: z
      .boolean()
      .describe(
        'true: `analysis` is the whole analysis, the one an analyze job reports. false: the job ended (cancelled, or failed at a ' +
          'limit) before its analysis was complete (a solve computes the spectral data its runs need, runs, then the rest of the ' +
          'analysis): `analysis` is absent, `runs` holds the runs that started (a failed job: those its last checkpoint held), and ' +
          '`spectral` what they used.',
      ),
    analysis: AnalysisSchema.optional().describe('Absent exactly when analysisCompleted is false.'),
    spectral: RunsSpectralDataSchema.optional().describe(
      'analysisCompleted false: the spectral data the runs used; absent when it was not computed (every parameter given, or cancelled before it).',
    ),
    runs: z.partialRecord(AlgorithmIdSchema, RunSummarySchema),
    advice: AdviceSchema.optional().describe('Advise jobs: the candidate partitions, each with its kappa(S) and theta_H, and the best.'),
    split: SplitExecutionSchema.optional().describe(
      'Present when the analysis ran split over the workers; absent when one worker computed it.',
    ),
  })
  .meta({ id: 'JobResult' });

export const NotifyViewSchema = z.object({ url: z.string() }).meta({ id: 'Notify' });

export const WebhookDeliverySchema = z
  .object({
    attempt: z.number().int(),
    at: z.string().describe('When the attempt ended (its answer, its error, or WEBHOOK_TIMEOUT_MS after it began).'),
    statusCode: z.number().int().nullable().describe("The receiver's HTTP status; null when no answer came."),
    error: z
      .string()
      .nullable()
      .describe('Why the attempt failed (a non-2xx answer, a 3xx not followed, a refused address, a timeout...); null when delivered.'),
    nextRetryAt: z.string().nullable().describe('When the next attempt is due; null when delivered or given up.'),
  })
  .meta({ id: 'WebhookDelivery' });
export const MatrixEchoSchema = z
  .object({
    format: z.enum(MATRIX_FORMATS).describe('How the request gave the matrix.'),
    n: z.number().int(),
    generator: GeneratorSettingsSchema.optional().describe('format generator: its settings, which regenerate the matrix.'),
    id: z.string().optional().describe('format stored: the id of the matrix (POST /v1/matrices).'),
    cols: z
      .number()
      .int()
      .optional()
      .describe('The columns (unknowns) of a tall matrix, whose n counts its rows (a least-squares system); absent on a square one.'),
    nnz: z
      .number()
      .int()
      .nullable()
      .describe('Nonzero entries. null until known: a generated or stored matrix is read by the worker, which records it when it starts.'),
    sha256: z
      .string()
      .nullable()
      .describe(
        'Content hash: hex SHA-256 of the canonical CSR of A (nonzeros only, columns ascending): rowPtr (n + 1 int32), colIdx ' +
          '(nnz int32) and values (nnz float64), little-endian, concatenated. The same matrix has the same hash however it was ' +
          'given (dense, COO, Matrix Market, stored) and whichever storage the job computes on. null until known, as nnz.',
      ),
  })
  .meta({ id: 'MatrixEcho', description: 'The matrix the job runs on.' });

export const PartitionEchoSchema = z
  .object({
    kind: z
      .enum(PARTITION_KINDS)
      .describe(
        "The form the request gave: machines, sizes, assignment, groups, fromJob (another job's), fromAdvice (an advise job's best), random (family random).",
      ),
    m: z.number().int(),
    sizes: z.array(z.number().int()).describe('Rows of each machine.'),
    seed: z.number().int().optional().describe('kind random: its seed; { "family": "random", "seed": seed, "machines": m } replays it.'),
    fromJob: z.string().optional().describe('kind fromJob: the job whose assignment was copied.'),
    fromAdvice: z.string().optional().describe('kind fromAdvice: the advise job whose best candidate was taken.'),
  })
  .meta({
    id: 'PartitionEcho',
    description: 'The partition the job runs on (the assignment itself: GET /v1/jobs/{id}/partition; reuse it as { "fromJob": id }).',
  });

export const JobSchema = z
  .object({
    id: z.string(),
    type: JobTypeSchema,
    status: JobStatusSchema,
    progress: JobProgressSchema.nullable().describe(
      'The last progress report: while running, where the job is; once failed or cancelled, where it was when it stopped ' +
        "(a succeeded job's is phase 'done'); null before its first report.",
    ),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    n: z.number().int(),
    m: z.number().int(),
    algorithms: z.array(AlgorithmIdSchema),
    options: JobOptionsSchema,
    attempts: z.number().int().describe('Times a worker started the job (more than 1 after a retry).'),
    storage: z
      .enum(MATRIX_STORAGES)
      .describe(
        'How the matrix is held: dense n x n, or compressed sparse rows (csr). As planned while queued, as run once started. ' +
          'csr: a stored matrix, or a COO / Matrix Market coordinate input listing at most 5% of its n^2 entries or with n > MAX_N; ' +
          'dense: dense rows, Matrix Market arrays, generators and denser coordinate inputs.',
      ),
    backend: z
      .enum(NUMERIC_BACKENDS)
      .nullable()
      .describe('The numerical backend the job ran on (NUMERIC_BACKEND resolved); null until a worker starts it.'),
    matrix: MatrixEchoSchema,
    partition: PartitionEchoSchema.nullable().describe('null only for jobs stored before the service recorded partitions.'),
    labels: LabelsSchema,
    result: JobResultSchema.optional().describe(
      'Present when the job succeeded; when it was cancelled once its runs could start or its analysis was complete; when it ' +
        'failed (time or memory limit, internal error) after its last checkpoint held a finished run: those runs (see analysisCompleted).',
    ),
    summary: RunsOutcomeSchema.optional().describe('A solve job with a result: its runs that converged and those that did not.'),
    error: ProblemSchema.optional().describe('Present when the job failed.'),
    notify: NotifyViewSchema.optional().describe('Present when the job was submitted with `notify` (the secret is never shown).'),
    deliveries: z
      .array(WebhookDeliverySchema)
      .optional()
      .describe('The attempts to deliver the end of the job to `notify.url`, oldest first (present with `notify`).'),
  })
  .meta({ id: 'Job' });

export const JobSummarySchema = z
  .object({
    id: z.string(),
    type: JobTypeSchema,
    status: JobStatusSchema,
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    n: z.number().int(),
    m: z.number().int(),
    algorithms: z.array(AlgorithmIdSchema),
    matrix: MatrixEchoSchema,
    labels: LabelsSchema,
    error: ProblemSchema.optional().describe('Present when the job failed: why.'),
    summary: RunsOutcomeSchema.optional().describe(
      "A solve job that ended with runs: those that converged and how the others ended, as the job's own `summary` (a job " +
        'that ran is `succeeded` whether its runs converged or not). Absent for jobs finished before the service listed it.',
    ),
  })
  .meta({ id: 'JobSummary' });

export const JobPageSchema = z
  .object({
    items: z.array(JobSummarySchema),
    nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
  })
  .meta({ id: 'JobPage' });

const finiteOrNull = z.array(z.number().nullable());

export const TraceSchema = z
  .object({
    algorithm: AlgorithmIdSchema,
    iteration: z.array(z.number().int()).describe('Iteration numbers of the recorded points (first and last always kept).'),
    relativeResidual: finiteOrNull,
    relativeError: finiteOrNull.nullable(),
    consensusDistance: finiteOrNull.nullable().describe('max_i |x_i - xbar| for APC and MLM; null for the others.'),
    totalIterations: z.number().int(),
    cap: z.number().int(),
    downsampled: z.boolean(),
  })
  .meta({ id: 'Trace' });

export const SolutionSchema = z
  .object({
    algorithm: AlgorithmIdSchema,
    x: finiteOrNull.describe('The solution the run returned (null entries only if it diverged to non-finite values).'),
  })
  .meta({ id: 'Solution' });

/** The solution of a run: an API shape only (the job layer hands out the Float64Array). */
export type Solution = z.output<typeof SolutionSchema>;

/** The `data` of a job's event stream (GET /v1/jobs/{id}/events). */
export const JobEventDataSchema = z
  .union([
    z
      .object({ status: JobStatusSchema, job: JobSchema })
      .describe('`event: status`: the status at subscription time, then each change, with the job.')
      .meta({ id: 'JobStatusEvent' }),
    JobProgressSchema.describe('`event: progress`: about every PROGRESS_INTERVAL_MS while the job runs.'),
  ])
  .describe('The `data` of an event: `status` JobStatusEvent, `progress` JobProgress.')
  .meta({ id: 'JobEventData' });

/**
 * A TraceView as the API sends it: JSON has no NaN or Infinity, so the non-finite values of a run
 * that diverged are sent as null.
 */
type TraceBody = Omit<TraceView, 'relativeResidual' | 'relativeError' | 'consensusDistance'> & {
  relativeResidual: (number | null)[];
  relativeError: (number | null)[] | null;
  consensusDistance: (number | null)[] | null;
};

assertSameShape<z.output<typeof JobProgressSchema>, JobProgress>(true);
assertSameShape<z.output<typeof JobOptionsSchema>, JobOptions>(true);
assertSameShape<z.output<typeof RunSummarySchema>, RunSummary>(true);
assertSameShape<z.output<typeof RunsOutcomeSchema>, RunsOutcome>(true);
assertSameShape<z.output<typeof SplitExecutionSchema>, SplitExecution>(true);
assertSameShape<z.output<typeof JobResultSchema>, JobResult>(true);
assertSameShape<z.output<typeof NotifyViewSchema>, NotifyView>(true);
assertSameShape<z.output<typeof WebhookDeliverySchema>, WebhookDelivery>(true);
assertSameShape<z.output<typeof MatrixEchoSchema>, MatrixEcho>(true);
assertSameShape<z.output<typeof PartitionEchoSchema>, PartitionEcho>(true);
assertSameShape<z.output<typeof JobSchema>, Job>(true);
assertSameShape<z.output<typeof JobSummarySchema>, JobSummary>(true);
assertSameShape<z.output<typeof JobPageSchema>, JobPage>(true);
assertSameShape<z.output<typeof TraceSchema>, TraceBody>(true);

export const JobIdParamsSchema = z.object({ id: z.string().min(1).max(64) });
export const RunParamsSchema = z.object({ id: z.string().min(1).max(64), algorithm: AlgorithmIdSchema });

export const RunColumnQuerySchema = z.object({
  column: queryInteger(z.number().int().min(0).default(0)).describe(
    'The right-hand side (0-based) of a job given several: 0 by default. Not an integer >= 0: 400; past the last: 422 ' +
      '(`column-out-of-range`), both naming `column`.',
  ),
});

export const JobPartitionSchema = z
  .object({
    id: z.string(),
    n: z.number().int(),
    m: z.number().int(),
    sizes: z.array(z.number().int()).describe('Rows of each machine.'),
    assignment: z.array(z.number().int()).describe('assignment[k] = the machine of row k (0-based), as { "assignment": [...] } takes it.'),
  })
  .meta({ id: 'JobPartition' });

/** A JobPartition as the API sends it (the job layer hands out the Int32Array). */
export type JobPartitionBody = z.output<typeof JobPartitionSchema>;

export const PartitionFigureQuerySchema = z.object({
  strategy: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      "Which partition: absent or `given`, the job's own; for a succeeded advise job also a candidate's strategy " +
        '(`contiguous`, `round-robin`, `rcm-contiguous`, `multilevel`, `metis`, `refined`: those in `result.advice.candidates`) or `best`.',
    ),
  order: z
    .enum(['matrix', 'machine'])
    .default('matrix')
    .describe(
      "`matrix`: rows and columns in the matrix's order; `machine`: rows grouped by machine and columns by the machine " +
        'holding most of their nonzeros (a partition whose machines share no columns shows as diagonal blocks).',
    ),
});

export const ListJobsQuerySchema = z.object({
  status: JobStatusSchema.optional(),
  label: LabelQuerySchema,
  limit: queryInteger(z.number().int().min(1).max(200).default(20)),
  cursor: z.string().min(1).max(200).optional(),
});
