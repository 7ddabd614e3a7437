/**
 * The job layer's contract with the HTTP layer. `src/api` talks to jobs only through `JobService`;
 * how jobs are queued (BullMQ), run (sandboxed processor) and stored (Redis) stays in `src/jobs`.
 */
import type { AlgorithmId } from '../solvers/algorithms/registry.js';
import type { Parameters } from '../solvers/algorithms/types.js';
import type { Analysis, Deployment } from '../solvers/analysis/types.js';
import type { WorkProgress } from '../solvers/cooperative.js';
import type { GeneratorSpec, MatrixFormat } from '../solvers/input/types.js';
import type { DenseMatrix } from '../solvers/matrix.js';
import type { CsrMatrix } from '../solvers/sparse/csr.js';
import type { MatrixMarketField, MatrixMarketSymmetry } from '../solvers/sparse/matrixMarketStream.js';
import type { Advice } from '../solvers/partitioning/advisor.js';
import type { RunResult } from '../solvers/runner/types.js';
import type { ApiKeyService, Tenant } from './apiKeys/apiKey.js';
import type { MatrixSource } from './store/readyJob.js';
import type { IdempotencyService } from './service/idempotencyStore.js';

export const JOB_TYPES = ['analyze', 'solve', 'advise'] as const;
export type JobType = (typeof JOB_TYPES)[number];

/**
 * Every job status, once: the API's JobStatus enum and the Lua scripts of ./store/scripts.ts are
 * built from these lists.
 */
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

const FINISHED = ['succeeded', 'failed', 'cancelled'] as const satisfies readonly JobStatus[];
/** The statuses a job never leaves. */
export type FinishedStatus = (typeof FINISHED)[number];
export const FINISHED_STATUSES: readonly JobStatus[] = FINISHED;

/**
 * One field-level problem of a request (a schema violation, or the field a semantic refusal
 * concerns), as a JSON pointer into that part. `pointer` and `detail` are the names of RFC 9457's
 * example (section 3); `path` and `message` carry the same pointer and text under their first names.
 */
export interface FieldProblem {
  /** Which part of the request. */
  in?: 'body' | 'query' | 'path' | 'headers';
  pointer: string;
  detail: string;
  path: string;
  message: string;
}

/** RFC 9457 problem details, as stored in a failed job's `error` and sent by the API. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  /** Stable machine-readable cause, e.g. 'singular-matrix' (a ProblemCode of ./problems.ts). */
  code?: string;
  /** Field-level problems (schema violations; the field a 422 or 413 concerns). */
  errors?: FieldProblem[];
  /** Structured facts about the cause (a SolverError's details: row, machine, entry...). */
  details?: Record<string, unknown>;
  [extension: string]: unknown;
}

/**
 * A job's progress as stored and sent. JSON has no NaN or Infinity: the residual of a diverging run
 * is stored (JSON.stringify) and sent as null.
 */
export interface JobProgress extends Omit<WorkProgress, 'relativeResidual'> {
  relativeResidual?: number | null;
  /** ISO time of this report. */
  updatedAt: string;
}

/** Where a job's runs start: the vector itself is stored beside the job (JobKeys.initialGuess). */
export const INITIAL_GUESS_KINDS = ['vector', 'job'] as const;
export interface InitialGuessEcho {
  /** vector: n numbers given with the request; job: the solution of a finished run, copied at submission. */
  kind: (typeof INITIAL_GUESS_KINDS)[number];
  /** kind job: the job and the run whose solution the runs start from. */
  job?: string;
  algorithm?: AlgorithmId;
}

/**
 * The stopping rules and start of a job's runs (the runner's RunOptions, src/solvers/runner/types.ts).
 * The optional ones are absent when not given (and in documents stored before they existed).
 */
export interface JobOptions {
  tolerance: number;
  /** |A x - b| at most this also converges (absent: the relative test alone). */
  absoluteTolerance?: number;
  /** When set, converging also needs |x - x*| / |x*| at most this (x* known: rhs omitted). */
  errorTolerance?: number;
  maxIterations: number;
  /** Wall-time limit of each run (ms); absent for none. */
  maxWallTimeMs?: number;
  /** PETSc's dtol: a run whose relative residual exceeds this times its initial value ends 'diverged' (absent: the default, 1e5). */
  divergenceTolerance?: number;
  /** false: a run near the attainable accuracy is not stopped as 'stagnated' (absent: it is). */
  stopOnStagnation?: boolean;
  /** Per-algorithm overrides of the optimal parameters. */
  parameters: Partial<Record<AlgorithmId, Parameters>>;
  /** Where the runs start; absent: x(0) = 0. */
  initialGuess?: InitialGuessEcho;
  /** A described deployment to predict the time to solution on (defaults filled in); absent when not asked. */
  deployment?: Deployment;
  /** Advise jobs: each machine holds between (1 - imbalance) n/m and (1 + imbalance) n/m rows in the constructed candidates. */
  imbalance?: number;
  /** Advise jobs: the exact kappa(S) evaluations the refinement may spend. */
  refinementTries?: number;
}

/**
 * Where to POST a job's or study's summary when it ends. The secret signs the
 * deliveries (HMAC-SHA256, Standard Webhooks); it is stored apart from the document, read only by the
 * delivery worker, and never returned.
 */
export interface WebhookTarget {
  url: string;
  secret: string;
}

/** One attempt to deliver the end of a job or study to its `notify.url`. */
export interface WebhookDelivery {
  attempt: number;
  /** When the attempt was made (ISO). */
  at: string;
  /** The receiver's HTTP status, or null when no answer came (refused address, connection error, timeout). */
  statusCode: number | null;
  /** Why the attempt failed (a non-2xx answer, a refused address, a timeout...); null when delivered. */
  error: string | null;
  /** When the next attempt is due (ISO); null when delivered or given up. */
  nextRetryAt: string | null;
}

/** The `notify` of a job or study as it is shown: its URL only. */
export interface NotifyView {
  url: string;
}

/**
 * Up to MAX_LABELS string pairs a client attaches to a job or a study: stored with it, echoed in its
 * document and list summaries, and filtered on (GET /v1/jobs?label=key:value, all must match).
 */
export type Labels = Record<string, string>;
export const MAX_LABELS = 16;
export const LABEL_KEY_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
export const MAX_LABEL_VALUE_LENGTH = 256;

/** Every way a job's partition can be given (the request's forms, `fromJob`, `fromAdvice` and the random family). */
export const PARTITION_KINDS = ['machines', 'sizes', 'assignment', 'groups', 'fromJob', 'fromAdvice', 'random'] as const;
export type PartitionKind = (typeof PARTITION_KINDS)[number];

/** The partition a job ran on, as its document echoes it (the assignment itself: GET /v1/jobs/{id}/partition). */
export interface PartitionEcho {
  kind: PartitionKind;
  m: number;
  /** Rows of each machine. */
  sizes: number[];
  /** kind random: the seed (with m, the partition replays as { family: 'random', seed, machines: m }). */
  seed?: number;
  /** kind fromJob: the job whose assignment was copied. */
  fromJob?: string;
  /** kind fromAdvice: the advise job whose best candidate was taken. */
  fromAdvice?: string;
}

/**
 * The content hash of a matrix (../jobs/matrixDigest.ts): SHA-256 of its canonical CSR, whatever
 * the storage it was given or computed in, and its count of nonzero entries.
 */
export interface MatrixDigest {
  nnz: number;
  sha256: string;
}

/** The matrix a job ran on, as its document echoes it. */
export interface MatrixEcho {
  format: MatrixFormat;
  n: number;
  /** format generator: its settings (seed included), which regenerate the matrix. */
  generator?: GeneratorSpec;
  /** format stored: the id of the matrix uploaded with POST /v1/matrices. */
  id?: string;
  /** The columns (unknowns) of a tall matrix, whose n counts its rows; absent on a square one. */
  cols?: number;
  /** Nonzero entries; null until known (a generated or stored matrix: once a worker has started the job). */
  nnz: number | null;
  /** Hex SHA-256 of the canonical CSR (MatrixDigest); null until known, as nnz. */
  sha256: string | null;
}

/** A job's partition in full: GET /v1/jobs/{id}/partition. */
export interface JobPartition {
  id: string;
  n: number;
  m: number;
  sizes: number[];
  /** assignment[k] = the machine of row k. */
  assignment: Int32Array;
}

/** A job's matrix as its worker computes from it (a generator's generated again), and its partition. */
export interface JobMatrix {
  matrix: MatrixSource;
  /** assignment[k] = the machine of row k. */
  assignment: Int32Array;
}

/** A validated request, ready to be stored and queued. */
export interface JobSpec {
  type: JobType;
  n: number;
  /** The matrix itself (dense, COO and Matrix Market inputs) or a generator run by the worker. */
  matrix:
    | { kind: 'dense'; A: DenseMatrix; format: Exclude<MatrixFormat, 'generator' | 'stored'> }
    /** A sparse coordinate input (COO, Matrix Market coordinate) kept as CSR (./storage.ts says when). */
    | { kind: 'csr'; A: CsrMatrix; format: 'coo' | 'matrix-market' }
    | { kind: 'generator'; spec: GeneratorSpec }
    /** A matrix uploaded with POST /v1/matrices, read by the worker. */
    | { kind: 'stored'; matrixId: string; nnz: number; cols?: number };
  /** The storage the job is planned to compute on (the worker reports the one it ran on). */
  storage: MatrixStorage;
  /** Null: b = A * ones(n), so x* = ones(n) is known. Several right-hand sides: column after column (n rhsColumns values). */
  rhs: Float64Array | null;
  /** Right-hand sides in rhs (absent or 1: one, or none). */
  rhsColumns?: number;
  m: number;
  /** assignment[k] = machine of row k. */
  assignment: Int32Array;
  /** How the partition was given, and its sizes. */
  partition: PartitionEcho;
  /** Algorithms to run (solve jobs); empty for analyze jobs. */
  algorithms: AlgorithmId[];
  options: JobOptions;
  /** x(0) of every run (options.initialGuess resolved to its vector); absent or null: 0. */
  initialGuess?: Float64Array | null;
  /** Where to POST the job's summary when it ends; null for no callback. */
  notify: WebhookTarget | null;
  labels: Labels;
}

/**
 * A run as the API shows it (the solution and the trace have their own endpoints): a RunResult
 * without its arrays. It is stored as JSON, which has no NaN or Infinity, so the residual of a run
 * that diverged to non-finite values, and a rate that is not finite, read back as null.
 */
export type RunColumnSummary = Pick<
  RunResult,
  'status' | 'iterations' | 'relativeError' | 'empiricalRate' | 'parameters' | 'wallTimeMs' | 'stopReason' | 'target'
> & {
  relativeResidual: number | null;
  theoreticalRate: number | null;
  /** eps kappa(A), null when not finite (absent in runs stored before it was recorded). */
  attainableAccuracy?: number | null;
  /** The relative residual's rise above its initial value and its diagnosis; null when it never rose (absent: stored before). */
  growth?: RunResult['growth'];
  /** Points of the stored trace. */
  tracePoints: number;
};

/**
 * A run's summary; with several right-hand sides its top-level fields are column 0's and `columns`
 * summarizes every column (absent for one right-hand side).
 */
export type RunSummary = RunColumnSummary & { columns?: RunColumnSummary[] };

/** Which runs of a finished solve job converged, and how the others ended (derived from result.runs). */
export interface RunsOutcome {
  converged: AlgorithmId[];
  notConverged: { algorithm: AlgorithmId; status: RunResult['status']; stopReason: string }[];
}

/** The spectral data a solve's runs took their optimal parameters and rates from (the conditioning's fields of the same names). */
export interface RunsSpectralData {
  /** L = lambda_max(A^T A), mu = lambda_min(A^T A). */
  L: number;
  mu: number;
  /** The extreme eigenvalues of S = sum_i Q_i Q_i^T. */
  lambdaMinS: number;
  lambdaMaxS: number;
}

export interface JobResult {
  /**
   * true: `analysis` is the whole analysis (an analyze job's, value for value). false: the job ended
   * (cancelled, or failed at a limit with finished runs checkpointed) before the analysis was complete; `analysis` is absent and `spectral` holds what the runs
   * used, when it was computed. Results stored before the field existed read as true.
   */
  analysisCompleted: boolean;
  /** Absent exactly when analysisCompleted is false. */
  analysis?: Analysis;
  /** analysisCompleted false: the spectral data the runs used; absent when it was not computed (every parameter given, or none ran). */
  spectral?: RunsSpectralData;
  runs: Partial<Record<AlgorithmId, RunSummary>>;
  /** Advise jobs: the candidate partitions and the best (the analysis is the given partition's). */
  advice?: Advice;
  /** How a split analysis ran (src/jobs/splitAnalysis/); absent when one worker computed the whole job. */
  split?: SplitExecution;
}

/** An analysis split over BullMQ workers as the paper's Algorithm 2 distributes it. */
export interface SplitExecution {
  /** Child jobs it ran as (groups of machines' pairs, ranges of rows, the two condition numbers). */
  parts: number;
  /** Distinct worker processes that computed them. */
  workers: number;
}

/** How a job's matrix is held while it computes: dense n x n, or CSR rows (never densified). */
export const MATRIX_STORAGES = ['dense', 'csr'] as const;
export type MatrixStorage = (typeof MATRIX_STORAGES)[number];

/** The numerical backends a job can run on (NUMERIC_BACKEND 'auto' resolves to one of them). */
export const NUMERIC_BACKENDS = ['typescript', 'native'] as const;
export type NumericBackend = (typeof NUMERIC_BACKENDS)[number];

export interface Job {
  id: string;
  type: JobType;
  status: JobStatus;
  progress: JobProgress | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  n: number;
  m: number;
  algorithms: AlgorithmId[];
  options: JobOptions;
  /** Times a worker started this job (more than 1 after an infrastructure retry). */
  attempts: number;
  /** The storage of the matrix: as planned while queued, as run once a worker started the job. */
  storage: MatrixStorage;
  /** The numerical backend the job ran on; null until a worker starts it. */
  backend: NumericBackend | null;
  /** The matrix it runs on: how it was given, n, nnz and its content hash. */
  matrix: MatrixEcho;
  /** The partition: how it was given, m and the machines' sizes; null for jobs stored before it was recorded. */
  partition: PartitionEcho | null;
  labels: Labels;
  result?: JobResult;
  /** A solve job with a result: its runs that converged and those that did not (the job succeeded either way: it ran). */
  summary?: RunsOutcome;
  error?: ProblemDetails;
  /** Present when the job was submitted with `notify` (its URL; the secret is never shown). */
  notify?: NotifyView;
  /** The attempts to deliver the job's end to `notify.url`, oldest first (present with `notify`). */
  deliveries?: WebhookDelivery[];
}

/**
 * A job as GET /v1/jobs lists it: enough to tell jobs apart (matrix, algorithms, labels), why one failed (error) and,
 * for a solve, which of its runs converged (summary: a job that ran is `succeeded` whether they did or not).
 */
export type JobSummary = Pick<
  Job,
  'id' | 'type' | 'status' | 'createdAt' | 'startedAt' | 'finishedAt' | 'n' | 'm' | 'algorithms' | 'matrix' | 'labels' | 'error' | 'summary'
>;

/** The filters of GET /v1/jobs. */
export interface JobListQuery {
  status?: JobStatus;
  /** Only jobs carrying every one of these labels, as [key, value] pairs. */
  labels?: [string, string][];
  limit: number;
  cursor?: string;
  owner?: string;
}

export interface JobPage {
  items: JobSummary[];
  nextCursor: string | null;
}

/**
 * A run's stored trace (see Trace in src/solvers/runner/types.ts), as plain arrays. Values of a run
 * that diverged can be non-finite; the API sends those as null.
 */
export interface TraceView {
  algorithm: AlgorithmId;
  iteration: number[];
  relativeResidual: number[];
  relativeError: number[] | null;
  consensusDistance: number[] | null;
  totalIterations: number;
  cap: number;
  downsampled: boolean;
}

/**
 * A job as a client reads it, its result left as the JSON text stored: a finished advise job's result holds its
 * candidates' assignments (~15 MB at n = 10^6), which parsed, checked against the response schema and written again
 * took 2 s of the API's CPU a read (docs/performance.md). `resultJson` absent: `job` is jobFromDocument's, its result
 * (if any) parsed.
 */
export interface JobView {
  /** Without `result` when `resultJson` is given; a solve's `summary` is there either way. */
  job: Job;
  resultJson?: string;
}

export type JobEvent =
  | { event: 'progress'; data: JobProgress }
  /** `resultJson`: the job's result as stored, left out of `data.job` (as JobView's). */
  | { event: 'status'; data: { status: JobStatus; job: Job }; resultJson?: string };

/** A change of any job, for list-wide subscribers (GET /v1/events): its summary, or a progress report. */
export type AnyJobEvent = { event: 'status'; job: JobSummary } | { event: 'progress'; id: string; progress: JobProgress };

/** A matrix uploaded once (POST /v1/matrices) for any number of jobs: its document. */
export interface StoredMatrix {
  id: string;
  /** Rows (and columns unless `cols` is given). */
  n: number;
  /** Columns, present when fewer than the rows (a tall matrix). */
  cols?: number;
  /** Stored entries (symmetric storage mirrored). */
  nnz: number;
  symmetry: MatrixMarketSymmetry;
  field: MatrixMarketField;
  createdAt: string;
  /** Bytes of its binary CSR in the store. */
  bytes: number;
}

/**
 * Ownership: every job and matrix belongs to the API key that created it (AUTH_MODE=keys). The
 * optional `owner` argument of the calls below confines them to that key's own: another key's job
 * or matrix is not found (JobNotFoundError, MatrixNotFoundError), nor listed. Absent, they see
 * everything (an admin key, or AUTH_MODE=none).
 */
export interface MatrixService {
  /**
   * Parse a Matrix Market text (chunks of UTF-8 as they arrive) and store it as CSR: stored only
   * once the whole text parsed. Throws the reader's SolverErrors (limits, syntax) and whatever the
   * source throws (an interrupted upload); nothing is stored then. For a `tenant`, the matrix is
   * its own and counted against its stored-bytes limit (QuotaExceededError, QuotaTooLargeError).
   */
  upload(text: AsyncIterable<Uint8Array | string>, tenant?: Tenant | null): Promise<StoredMatrix>;
  /** Throws MatrixNotFoundError. */
  get(id: string, owner?: string): Promise<StoredMatrix>;
  /** For a job that names the matrix: its document, its TTL renewed. Throws MatrixNotFoundError. */
  use(id: string, owner?: string): Promise<StoredMatrix>;
  /** Throws MatrixNotFoundError. */
  remove(id: string, owner?: string): Promise<void>;
  /** Newest first. `cursor` is the opaque `nextCursor` of the previous page; `owner`: that key's matrices only. */
  list(query: MatrixListQuery & { owner?: string }): Promise<MatrixPage>;
}

/** GET /v1/matrices: a page size, the cursor of the previous page, and optional filters. */
export interface MatrixListQuery {
  limit: number;
  cursor?: string;
  symmetry?: MatrixMarketSymmetry;
  field?: MatrixMarketField;
  /** Only matrices with n >= minN (and <= maxN). */
  minN?: number;
  maxN?: number;
}

export interface MatrixPage {
  items: StoredMatrix[];
  nextCursor: string | null;
}

export interface JobService {
  /** Stored matrices (POST /v1/matrices), which jobs name by id. */
  readonly matrices: MatrixService;
  /** API keys (AUTH_MODE=keys): who may call, and each key's limits. */
  readonly keys: ApiKeyService;
  /** Idempotency-Key records of the create requests (./service/idempotencyStore.ts). */
  readonly idempotency: IdempotencyService;
  /**
   * Store the inputs, queue the job, and return it (status 'queued'). For a `tenant` (an API key),
   * the job is its own, counted against its limits (QuotaExceededError, QuotaTooLargeError) and
   * queued taking turns with other keys' jobs.
   */
  create(spec: JobSpec, tenant?: Tenant | null): Promise<Job>;
  /** Throws JobNotFoundError. */
  get(id: string, owner?: string): Promise<Job>;
  /** The job as get gives it, its result as the JSON text stored, to send as it is. Throws JobNotFoundError. */
  view(id: string, owner?: string): Promise<JobView>;
  /** Newest first. `cursor` is the opaque `nextCursor` of the previous page; `owner`: that key's jobs only. */
  list(query: JobListQuery): Promise<JobPage>;
  /**
   * A queued job ends 'cancelled' at once; a running one as soon as its solver sees the signal. Finished jobs are returned
   * unchanged. The job as view gives it.
   */
  cancel(id: string, owner?: string): Promise<JobView>;
  /** Removes a finished job and everything stored for it. Throws JobNotFoundError, JobNotFinishedError. */
  remove(id: string, owner?: string): Promise<void>;
  /** Throws JobNotFoundError, RunNotFoundError. */
  /** `column`: the right-hand side (default 0; ColumnOutOfRangeError past the job's last). */
  trace(id: string, algorithm: AlgorithmId, owner?: string, column?: number): Promise<TraceView>;
  solution(id: string, algorithm: AlgorithmId, owner?: string, column?: number): Promise<Float64Array>;
  /** The job's partition in full. Throws JobNotFoundError. */
  partition(id: string, owner?: string): Promise<JobPartition>;
  /**
   * The job's matrix and partition. Throws JobNotFoundError, MatrixNotFoundError (its stored matrix was
   * deleted), JobInputMissingError (an input expired).
   */
  matrix(id: string, owner?: string): Promise<JobMatrix>;
  /**
   * Calls `listener` with progress and status changes of job `id` until it finishes; returns the
   * unsubscribe function. The first status event reflects the job's state at subscription time.
   */
  subscribe(id: string, listener: (event: JobEvent) => void, owner?: string): Promise<() => void>;
  /**
   * Calls `listener` with every job's status changes and progress reports, whoever owns it (the
   * caller filters), until the returned function is called.
   */
  subscribeAll(listener: (event: AnyJobEvent) => void): Promise<() => void>;
  /** Redis reachable and the queue usable. */
  isReady(): Promise<boolean>;
  /** Jobs in the queue by state (for /metrics): waiting, active, completed, failed, delayed... */
  queueCounts(): Promise<Record<string, number>>;
  /**
   * Called when any job finishes (for /metrics job durations), with its summary (built from the status message: nothing
   * read, no result parsed). Returns the unsubscribe function.
   */
  onFinished(listener: (job: JobSummary) => void): () => void;
  close(): Promise<void>;
}
