/**
 * The body of POST /v1/jobs. The zod schema checks shapes and types (400 naming the field);
 * semantic checks (square, finite, partition against n, limits) follow in ../jobSpec.ts (422/413).
 * These schemas do not depend on the configuration: the size limits it sets are named in their
 * metadata (./limits.ts), and the OpenAPI document states the values the service runs with.
 * The matrix and partition forms are defined by src/solvers/input/types.ts (the builders take
 * them); their schemas are checked against those types at compile time. The rest of the body is an
 * API shape only: its type is the schema's output (CreateJobRequest).
 */
import { z } from 'zod';
import { JOB_TYPES } from '../../jobs/types.js';
import { ALGORITHM_IDS } from '../../solvers/algorithms/registry.js';
import { DEFAULT_REFINEMENT_TRIES, MAX_REFINED_ROWS, MAX_REFINEMENT_TRIES } from '../../solvers/partitioning/refinement.js';
import type { GeneratorSpec, MatrixInput, PartitionInput } from '../../solvers/input/types.js';
import { LabelsSchema } from './labels.js';
import { limitedBy } from './limits.js';
import { assertSameShape } from './sameShape.js';

export const AlgorithmIdSchema = z.enum(ALGORITHM_IDS).meta({ id: 'AlgorithmId' });

/**
 * JSON cannot write NaN or Infinity, and zod's z.number() refuses the Infinity that a literal like
 * 1e999 parses to: both are turned into strings here so that the semantic check names the entry (422).
 */
const nonFiniteToString = (value: unknown): unknown => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value);

export const EntrySchema = z
  .preprocess(nonFiniteToString, z.union([z.number(), z.string()]))
  .describe(
    'A finite real number. Strings are accepted only so that "NaN", "Infinity" and "-Infinity" are answered with a 422 naming the entry.',
  );

const size = z.number().int().min(1);
const index = z.number().int().min(0);
/** n of a generated matrix: generators make dense matrices. */
const generatedN = size.meta(limitedBy('maximum', 'MAX_N'));
const seed = z.number().int().describe('Seed of the generator (same spec and seed: same matrix).').optional();

/**
 * The inner arrays of the two lists of arrays with a minimum length are named components: an inline
 * array there makes openapi-typescript's --array-length (7.13) nest the item type once too often.
 */
const DenseRow = z
  .array(EntrySchema)
  .meta({ id: 'DenseRow', description: 'One row of the matrix: its n entries (n <= MAX_N).', ...limitedBy('maxItems', 'MAX_N') });
const MachineRows = z.array(index).meta({ id: 'MachineRows', description: 'The rows (0-based) one machine holds.' });

const DenseInput = z.strictObject({
  format: z.literal('dense'),
  data: z
    .array(DenseRow)
    .min(1)
    .meta(limitedBy('maxItems', 'MAX_N'))
    .describe('Row-major rows of the n x n matrix; n <= MAX_N (413 above).'),
});
const CooInput = z.strictObject({
  format: z.literal('coo'),
  rows: size.meta(limitedBy('maximum', 'MAX_N_SPARSE')),
  cols: size.meta(limitedBy('maximum', 'MAX_N_SPARSE')),
  entries: z
    .array(z.tuple([index, index, EntrySchema]))
    .meta(limitedBy('maxItems', 'MAX_NNZ'))
    .describe(
      '[i, j, value] triplets, 0-based, in any order; duplicates are summed (a sum that overflows is a 422 naming the entry). ' +
        'At most MAX_NNZ entries and n <= MAX_N_SPARSE (413). Parsed to CSR: computed on CSR (storage "csr", never densified) ' +
        'when at most 5% of the n^2 entries are listed or n > MAX_N, else on the dense path.',
    ),
});
const MatrixMarketInput = z.strictObject({
  format: z.literal('matrix-market'),
  data: z
    .string()
    .min(1)
    .meta(limitedBy('maxLength', 'BODY_LIMIT_BYTES'))
    .describe(
      'The text of a Matrix Market file (coordinate or array; real, integer or pattern; general, symmetric or skew-symmetric). ' +
        'The coordinate format is read as a matrix upload is (POST /v1/matrices): n <= MAX_N_SPARSE and at most MAX_NNZ stored ' +
        'entries (413), an entry given twice or out of range is a 422 naming its line; it then runs on CSR or dense by the rule of ' +
        'the COO input. The array format is dense (n <= MAX_N). The text is bounded by the body, BODY_LIMIT_BYTES.',
    ),
});

/** A matrix stored by POST /v1/matrices, by id (jobs and studies name it alike). */
export const StoredMatrixInput = z.strictObject({
  format: z.literal('stored'),
  id: z.string().min(1).max(64).describe('The id of a matrix uploaded with POST /v1/matrices.'),
});

const GaussianGenerator = z.strictObject({
  format: z.literal('generator'),
  generator: z.literal('gaussian'),
  n: generatedN,
  mean: z.number().optional().describe('Default 0.'),
  std: z.number().min(0).optional().describe('Default 1.'),
  seed,
});
const BlockDiagonalGenerator = z.strictObject({
  format: z.literal('generator'),
  generator: z.literal('block-diagonal'),
  n: generatedN,
  blockSize: size
    .optional()
    .describe(
      'Rows (and columns) of each diagonal block; the last block takes the remainder. ' +
        "Default: one block per machine of the job's partition (machine i's rows, in order, over the next p_i columns), " +
        'so any partition is totally orthogonal: kappa(S) = 1.',
    ),
  seed,
  permute: z.boolean().optional().describe('Shuffle the columns (the blocks stay mutually orthogonal).'),
});
const StructuredGaussianGenerator = z.strictObject({
  format: z.literal('generator'),
  generator: z.literal('structured-gaussian'),
  n: generatedN,
  blockSize: size,
  sigma: z.number().min(0).describe('Standard deviation of the off-diagonal blocks.'),
  seed,
});
const OnesMinusEpsGenerator = z.strictObject({
  format: z.literal('generator'),
  generator: z.literal('ones-minus-eps'),
  n: generatedN,
  eps: z.number(),
});

const RegressionGenerator = z.strictObject({
  format: z.literal('generator'),
  generator: z.literal('regression'),
  rows: generatedN.describe("Samples N (the system's rows, what the partition and rhs cover); N >= n."),
  n: size.describe('Features (the unknowns: the solution has n entries).'),
  mean: z.number().optional().describe('Common mean of every feature (default 0).'),
  skew: z
    .number()
    .min(0)
    .optional()
    .describe("Feature skew: machine i's rows are drawn from N(mean + skew d_i, scale_i^2 I), d_i a random unit direction (default 0)."),
  scale: z
    .union([z.number().positive(), z.array(z.number().positive())])
    .optional()
    .describe("scale_i, the spread of machine i's features: one number, or one per machine of the partition (default 1)."),
  sigma: z
    .number()
    .min(0)
    .optional()
    .describe('Standard deviation of the label noise: b = A x_true + N(0, sigma^2 I) (default 0, a consistent system).'),
  seed,
});

export const GeneratorInputSchema = z
  .discriminatedUnion('generator', [
    GaussianGenerator,
    BlockDiagonalGenerator,
    StructuredGaussianGenerator,
    OnesMinusEpsGenerator,
    RegressionGenerator,
  ])
  .meta({
    id: 'Generator',
    description:
      "A matrix generated by the worker: Gaussian, the paper's Examples 1-3, or federated regression data (a tall system whose " +
      'labels are the right-hand side when rhs is omitted).',
  });

/** A generator's settings without `format`, as a job's document echoes them. */
export const GeneratorSettingsSchema = z
  .discriminatedUnion('generator', [
    GaussianGenerator.omit({ format: true }),
    BlockDiagonalGenerator.omit({ format: true }),
    StructuredGaussianGenerator.omit({ format: true }),
    OnesMinusEpsGenerator.omit({ format: true }),
    RegressionGenerator.omit({ format: true }),
  ])
  .meta({ id: 'GeneratorSettings' });

export const MatrixInputSchema = z
  .discriminatedUnion('format', [DenseInput, CooInput, MatrixMarketInput, GeneratorInputSchema, StoredMatrixInput])
  .meta({
    id: 'Matrix',
    description: 'The matrix A: dense rows, COO triplets, Matrix Market text, a generator, or a matrix stored by POST /v1/matrices.',
  });

/** The partition forms of the numerical core (src/solvers/input/types.ts PartitionInput). */
const SOLVER_PARTITION_FORMS = [
  z.strictObject({
    machines: size
      .meta(limitedBy('maximum', 'MAX_MACHINES'))
      .describe('m contiguous blocks whose sizes differ by at most one, larger blocks first (m <= MAX_MACHINES).'),
  }),
  z.strictObject({ sizes: z.array(index).min(1).describe('Contiguous blocks of these sizes (summing to n).') }),
  z.strictObject({ assignment: z.array(index).min(1).describe('assignment[k] = the machine of row k; machines 0..m-1 each own a row.') }),
  z.strictObject({ groups: z.array(MachineRows).min(1).describe('groups[i] = the rows of machine i; every row exactly once.') }),
  z.strictObject({
    family: z.literal('random'),
    seed: z
      .number()
      .int()
      .min(-Number.MAX_SAFE_INTEGER)
      .max(Number.MAX_SAFE_INTEGER)
      .describe("Seed of the permutation; a study's samples CSV lists the seed of each sample's random partition."),
    machines: size.meta(limitedBy('maximum', 'MAX_MACHINES')).describe('m (m <= n and m <= MAX_MACHINES).'),
  }),
] as const;

/** Another job's assignment: a job-level form, resolved by the API (../jobSpec.ts) into an assignment. */
const FromJobPartition = z.strictObject({
  fromJob: z
    .string()
    .min(1)
    .max(64)
    .describe('The id of a job (yours): its assignment (GET /v1/jobs/{id}/partition), for a matrix with the same n (else 422).'),
});

/** The best candidate of an advise job: a job-level form, resolved by the API (../jobSpec.ts) into an assignment. */
const FromAdvicePartition = z.strictObject({
  fromAdvice: z
    .string()
    .min(1)
    .max(64)
    .describe('The id of a succeeded advise job (yours): the assignment of its best candidate, for a matrix with the same n (else 422).'),
});

export const PartitionInputSchema = z.union([...SOLVER_PARTITION_FORMS, FromJobPartition, FromAdvicePartition]).meta({
  id: 'Partition',
  description:
    'How the rows are spread over the machines. `{ "family": "random", "seed": s, "machines": m }`: the block sizes of ' +
    '`{ "machines": m }`, rows dealt in the order of a permutation seeded by s: the random partition of a study ' +
    '(partition.family random), replayed exactly. `{ "fromJob": id }`: the assignment of job id. `{ "fromAdvice": id }`: the ' +
    'best candidate of advise job id.',
});

/** `{ job, algorithm }`: the solution of a finished run, resolved by the API (../jobSpec.ts) into its vector. */
const InitialGuessFromJob = z.strictObject({
  job: z.string().min(1).max(64).describe('The id of a finished job (yours) that ran `algorithm`, on a matrix with the same n (else 422).'),
  algorithm: AlgorithmIdSchema,
});

export const InitialGuessInputSchema = z
  .union([
    z
      .array(EntrySchema)
      .meta(limitedBy('maxItems', 'LARGEST_N'))
      .describe('x(0) itself: n finite numbers (another length: 422 at /options/initialGuess).'),
    InitialGuessFromJob,
  ])
  .meta({
    id: 'InitialGuess',
    description:
      'Where every run starts (PETSc KSPSetInitialGuessNonzero, SciPy x0): n numbers, or `{ "job": id, "algorithm": "apc" }` for ' +
      "the solution of that job's finished run (copied at submission). DGD, D-HBM, D-NAG and block Cimmino start at x(0) = guess; " +
      'APC and MLM start machine i at the projection of the guess onto its solution set, x0 + A_i^T (A_i A_i^T)^{-1} (b_i - A_i x0). ' +
      'Absent: x(0) = 0.',
  });
export const DeploymentSchema = z
  .object({
    machineGflops: z.number().positive().describe("Each machine's dense floating-point throughput, GFLOP/s (default 50)."),
    memoryBandwidthGBs: z.number().positive().describe("Each machine's memory bandwidth, GB/s (default 20)."),
    latencyMicroseconds: z.number().nonnegative().describe("One message's latency, microseconds (default 50)."),
    bandwidthGBs: z.number().positive().describe("The taskmaster's link, GB/s (default 1.25 = 10 GbE)."),
  })
  .meta({ id: 'Deployment' });

export const JobOptionsInputSchema = z
  .strictObject({
    tolerance: z
      .number()
      .positive()
      .describe('Converged when |A x - b| <= max(tolerance |b|, absoluteTolerance) (default DEFAULT_TOLERANCE).')
      .optional(),
    absoluteTolerance: z.number().min(0).describe('The absolute residual |A x - b| that also passes (SciPy atol; default 0).').optional(),
    errorTolerance: z
      .number()
      .positive()
      .describe('Converging also needs |x - x*| / |x*| <= errorTolerance (x* known: rhs omitted, else 422). Every test given must pass.')
      .optional(),
    maxWallTimeMs: z
      .number()
      .positive()
      .describe("Wall-time limit of each run, in ms: a run that reaches it ends 'max-wall-time'. Default: none.")
      .optional(),
    divergenceTolerance: z
      .number()
      .min(1)
      .describe(
        "A run whose relative residual exceeds divergenceTolerance times its initial value ends 'diverged' (PETSc's dtol; " +
          "default DEFAULT_DIVERGENCE_TOLERANCE, 1e5). D-HBM's transient growth stays well below it at the optimal parameters.",
      )
      .optional(),
    stopOnStagnation: z
      .boolean()
      .describe(
        "Stop a run whose residual stalls near the attainable accuracy eps kappa(A) as 'stagnated' (default true); false runs " +
          'it on to the other rules, e.g. to maxIterations for a benchmark.',
      )
      .optional(),
    initialGuess: InitialGuessInputSchema.optional(),
    maxIterations: z
      .number()
      .int()
      .min(1)
      .describe(
        "Iteration limit of each run: reached, it ends 'max-iterations' (default DEFAULT_MAX_ITERATIONS, at most MAX_ITERATIONS_LIMIT).",
      )
      .optional(),
    parameters: z
      .partialRecord(AlgorithmIdSchema, z.record(z.string(), z.number()))
      .describe('Overrides of the optimal parameters, per algorithm, e.g. { "apc": { "gamma": 1.2, "eta": 1.5 } }.')
      .optional(),
    deployment: DeploymentSchema.partial()
      .describe(
        'A deployment to predict the time to solution on (analysis.timeToSolution.deployment); omitted fields take the defaults of a commodity cluster (50 GFLOP/s and 20 GB/s per machine, 50 us latency, 10 GbE).',
      )
      .optional(),
    imbalance: z
      .number()
      .min(0)
      .max(1)
      .describe(
        'Advise jobs: each machine of a constructed candidate holds between (1 - imbalance) n/m and (1 + imbalance) n/m rows ' +
          '(floor and ceil of n/m always allowed; default 0.1). Ignored by the other types.',
      )
      .optional(),
    refinementTries: z
      .number()
      .int()
      .min(0)
      .max(MAX_REFINEMENT_TRIES)
      .describe(
        `Advise jobs: the exact kappa(S) evaluations the 'refined' candidate may spend (default ${DEFAULT_REFINEMENT_TRIES}, at most ` +
          `${MAX_REFINEMENT_TRIES}). The refinement runs on square systems of at most ${MAX_REFINED_ROWS} rows, where it is most of ` +
          "the advice's time beyond the candidates': 0 leaves it out (no 'refined' candidate), and the advice costs its candidates " +
          'alone (2-3x less time at dense n = 1000-2000, docs/performance.md). ' +
          'Ignored by the other types.',
      )
      .optional(),
  })
  .meta({ id: 'JobRequestOptions' });

/**
 * What the URL check leaves of a callback URL that cannot be right: credentials, which the job would show to anyone
 * who can read it (the signature is what authenticates a callback), and no host after `//` (`http:///path` parses
 * with `path` as its host). Null when fine. Runs only on an http(s) URL that parses: the URL check aborts otherwise.
 */
function callbackUrlProblem(url: string): string | null {
  const parsed = new URL(url);
  if (parsed.username !== '' || parsed.password !== '')
    return 'must not hold credentials (user:password@): the job shows its URL to whoever reads it; the signature authenticates callbacks';
  if (!/^https?:\/\/[^/?#\\]/i.test(url)) return 'must name its host right after "//"';
  return null;
}

/** `notify` of a job or study request. */
export const NotifyRequestSchema = z
  .strictObject({
    url: z
      // abort: a URL that is not one gets this message alone, not also the host check's below.
      .url({ protocol: /^https?$/, error: 'must be an http or https URL (http://host/...)', abort: true })
      .max(2048)
      .superRefine((url, context) => {
        const problem = callbackUrlProblem(url);
        if (problem !== null) context.addIssue({ code: 'custom', message: problem, input: url });
      })
      .describe(
        'Where to POST the summary when the job or study ends (http or https, with a host and no user:password@). Its host ' +
          'must be allowed by WEBHOOK_ALLOWED_HOSTS, checked at delivery time: private, link-local and metadata addresses are ' +
          'refused, redirects are not followed.',
      ),
    secret: z
      .string()
      .min(16)
      .max(1024)
      .describe(
        'Signs each delivery (Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, ' +
          "keyed with the bytes a Standard Webhooks secret `whsec_<base64>` encodes, as their libraries read it, or else the secret's " +
          'UTF-8 bytes). Never returned.',
      ),
  })
  .meta({
    id: 'NotifyRequest',
    description:
      'One POST to `url` when the job or study ends (succeeded, failed or cancelled), its body the summary, retried with ' +
      'backoff for up to WEBHOOK_RETRY_SECONDS while the answer is not 2xx; the attempts are listed in `deliveries`.',
  });

export const CreateJobRequestSchema = z
  .strictObject({
    type: z
      .enum(JOB_TYPES)
      .describe(
        'analyze: heterogeneity, conditioning, optimal rates, bounds, recommendation. solve: the same plus a run of each algorithm. ' +
          'advise: the analysis plus candidate partitions of the rows (result.advice), each with its kappa(S) and theta_H, and the best; ' +
          'a later job takes it as partition { "fromAdvice": id }.',
      ),
    matrix: MatrixInputSchema,
    rhs: z
      .union([
        z.array(EntrySchema).meta(limitedBy('maxItems', 'LARGEST_N')).describe('One right-hand side b (length n).'),
        z
          .array(z.array(EntrySchema).meta(limitedBy('maxItems', 'LARGEST_N')))
          .min(1)
          .meta(limitedBy('maxItems', 'MAX_RHS'))
          .describe(
            'Several right-hand sides b_1 .. b_k (each of length n, k <= MAX_RHS; solve jobs): one setup, the k columns iterated ' +
              'together, each stopped by its own test; `runs[alg].columns[j]` summarizes column j, and the trace and solution ' +
              'downloads take `?column=j`. A list of one vector is the same job as that vector alone.',
          ),
      ])
      .nullable()
      .optional()
      .describe('b (length n), or a list of k right-hand sides. Absent: b = A * ones(n), so the true solution is known.'),
    partition: PartitionInputSchema,
    algorithms: z
      .array(AlgorithmIdSchema)
      .min(1)
      .optional()
      .describe('Algorithms to run (solve jobs; default all six). Ignored for analyze and advise.'),
    options: JobOptionsInputSchema.optional(),
    notify: NotifyRequestSchema.optional(),
    labels: LabelsSchema.optional(),
  })
  .meta({ id: 'CreateJobRequest' });

export type CreateJobRequest = z.output<typeof CreateJobRequestSchema>;

assertSameShape<z.output<typeof GeneratorInputSchema>, { format: 'generator' } & GeneratorSpec>(true);
assertSameShape<z.output<typeof GeneratorSettingsSchema>, GeneratorSpec>(true);
assertSameShape<z.output<typeof MatrixInputSchema>, MatrixInput>(true);
assertSameShape<z.output<z.ZodUnion<typeof SOLVER_PARTITION_FORMS>>, PartitionInput>(true);
