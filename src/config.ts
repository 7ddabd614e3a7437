/**
 * Service configuration: every setting is an environment variable, validated here once (zod) when a
 * process starts and passed down from its entry point. docs/operations.md's "Configuration" table lists
 * the same variables. Only the numerical library's own switches (LINALG_NATIVE_ADDON, LINALG_WASM)
 * are read elsewhere, by src/solvers, which must work without this config.
 */
import { z } from 'zod';

const integer = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);
const positive = (fallback: number) => z.coerce.number().positive().default(fallback);

const configSchema = z.object({
  /** Interface and port the HTTP API listens on. */
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: integer(3000).pipe(z.number().max(65535)),
  /** Redis to use (redis://...). Unset: `npm start` launches a private redis-server on a free loopback port. */
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /** redis-server binary used for the embedded default. */
  REDIS_SERVER_BIN: z.string().min(1).default('redis-server'),
  /** Prefix of every Redis key the service writes (BullMQ keys included). */
  KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('lss'),
  QUEUE_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('jobs'),
  /** Largest accepted request body, in bytes; larger bodies get 413. */
  BODY_LIMIT_BYTES: integer(32 * 1024 * 1024, 1024),
  /**
   * Most values in a JSON body (its commas are counted before it is parsed): parsed values cost ~25
   * bytes each, so this bounds a request's memory (~100 MiB) where BODY_LIMIT_BYTES alone lets 16
   * million one-character values through. A full-precision 1400 x 1400 dense matrix holds 2 million.
   */
  MAX_BODY_VALUES: integer(4 * 1024 * 1024, 1024),
  /** Largest accepted n of a dense matrix (dense n x n in memory); larger dense problems get 413. */
  MAX_N: integer(4000, 1),
  /** Largest n of a sparse (CSR) matrix, e.g. a POST /v1/matrices upload; 413 above (from the size line). */
  MAX_N_SPARSE: integer(5_000_000, 1),
  /** Most stored entries of a sparse matrix (symmetric storage mirrored); 413 above (from the size line). */
  MAX_NNZ: integer(20_000_000, 1),
  /** Largest Matrix Market upload (POST /v1/matrices), in bytes, as sent and (gzip) decompressed; 413 above. */
  MAX_UPLOAD_BYTES: integer(2 ** 30, 1024),
  /** Most machines a partition may use. */
  MAX_MACHINES: integer(1024, 1),
  /** Most right-hand sides a solve job's rhs may list (422 above). */
  MAX_RHS: integer(64, 1),
  /** Upper limit on a job's maxIterations. */
  MAX_ITERATIONS_LIMIT: integer(1_000_000, 1),
  DEFAULT_TOLERANCE: positive(1e-8),
  DEFAULT_MAX_ITERATIONS: integer(20_000, 1),
  /** A job's divergenceTolerance when it gives none (PETSc's dtol default): the relative residual's growth that ends a run 'diverged'. */
  DEFAULT_DIVERGENCE_TOLERANCE: z.coerce.number().min(1).default(1e5),
  /** Most points kept in a run's trace (first and last iterations always kept). */
  TRACE_CAP: integer(2048, 16),
  /** How long a job and everything stored for it are kept, in seconds: from its creation, counted again from when it ends. */
  JOB_TTL_SECONDS: integer(24 * 3600, 60),
  /**
   * How long an uploaded matrix (POST /v1/matrices) is kept, in seconds: from its upload, renewed
   * whenever a job names it. Default: JOB_TTL_SECONDS.
   */
  MATRIX_TTL_SECONDS: z.coerce.number().int().min(60).optional(),
  /** Attempts for a job failing on infrastructure errors (mathematical failures are never retried). */
  JOB_ATTEMPTS: integer(3, 1),
  /** First retry delay; later retries back off exponentially. */
  JOB_BACKOFF_MS: integer(1000, 0),
  /** Jobs one worker process runs at once, each in its own sandboxed child process. */
  WORKER_CONCURRENCY: integer(2, 1),
  /** BullMQ job lock: a job whose worker died is picked up by another after this. */
  LOCK_DURATION_MS: integer(30_000, 1000),
  STALLED_INTERVAL_MS: integer(30_000, 1000),
  /** Interval between progress reports of a running job (at most 250 ms). */
  PROGRESS_INTERVAL_MS: integer(200, 10).pipe(z.number().max(250)),
  /**
   * Interval between two checkpoints of a running job (its analysis once done, the runs it finished,
   * the state of the run under way), from which a retried attempt resumes; 0: no checkpoints.
   */
  CHECKPOINT_INTERVAL_MS: integer(30_000, 0),
  /** Interval of the comment lines that keep an idle event stream (GET /v1/jobs/{id}/events) open. */
  SSE_HEARTBEAT_MS: integer(15_000, 100),
  /** Grace period for running jobs on SIGTERM/SIGINT before the process exits. */
  SHUTDOWN_TIMEOUT_MS: integer(10_000, 0),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Numerical backend of the job processes: 'native' = OpenBLAS/LAPACKE through the addon built at
   * install (scripts/buildNative.mjs), 'typescript' = the pure TypeScript kernels, 'auto' = native when
   * the addon is built and loads. 'native' without the addon makes every job fail with the reason.
   */
  NUMERIC_BACKEND: z.enum(['auto', 'typescript', 'native']).default('auto'),
  /**
   * The operators' queue board at /admin/queues (bull-board): read-only unless set to false, so that
   * retrying, promoting or removing BullMQ jobs behind the service's back is a deliberate choice.
   */
  QUEUE_BOARD_READ_ONLY: z.stringbool().default(true),
  /** The dashboard's built files (scripts/buildDashboard.ts), served at `/`. Default: dist/dashboard of this package. */
  DASHBOARD_DIR: z.string().min(1).optional(),
  // Durability, limits and hardening (docs/operations.md).
  /** Directory of the embedded redis-server's append-only file (`npm start` without REDIS_URL); created when missing. */
  DATA_DIR: z.string().min(1).default('./data'),
  /** Longest run of one job attempt; past it the job ends `failed` with a `time-limit` problem and its worker slot is freed. */
  JOB_TIMEOUT_MS: integer(3_600_000, 1000),
  /** Most memory (resident set, MiB) one job's sandboxed process may use; past it the job ends `failed` (`memory-limit`). */
  JOB_MEMORY_LIMIT_MB: integer(4096, 256),
  /**
   * Job processes ask for transparent huge pages for their large arrays (glibc.malloc.hugetlb=1 added to their
   * GLIBC_TUNABLES: src/jobs/sandboxChild.ts), as NumPy does for its own: one page fault per 2 MiB of fresh memory instead
   * of 512 (docs/operations.md). Effective where the host's THP mode is `madvise` or `always`.
   */
  JOB_HUGE_PAGES: z.stringbool().default(true),
  /** Origins allowed by CORS (comma-separated, or `*`); empty: CORS off (no Access-Control-* headers). */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((origin) => origin.trim())
        .filter((origin) => origin.length > 0),
    ),
  /** Longest line of a Matrix Market upload, in characters; a longer one is a 422 naming it. */
  MATRIX_MARKET_MAX_LINE_CHARS: integer(4096, 80),
  /** Longest time a request body (JSON, or a Matrix Market upload to POST /v1/matrices) may take to arrive; past it: 408. */
  UPLOAD_TIMEOUT_MS: integer(300_000, 100),
  // --- API keys, tenants and limits (docs/operations.md "Keys and tenants") ---
  /**
   * 'keys': every /v1 request needs `Authorization: Bearer <key>` (keys made by `npm run keys`);
   * 'none': no authentication. Unset: 'none' when HOST is a loopback address, 'keys' otherwise.
   */
  AUTH_MODE: z.enum(['keys', 'none']).optional(),
  /** Requests per second one key may make (shared by every API instance through Redis); per-key override. */
  RATE_LIMIT_PER_SECOND: integer(100, 1),
  /** Jobs one key may have queued or running at once; per-key override. */
  MAX_ACTIVE_JOBS_PER_KEY: integer(500, 1),
  /** Bytes one key may keep stored (matrices, job inputs, solutions, traces); per-key override. */
  MAX_STORED_BYTES_PER_KEY: integer(2 ** 30, 1024),
  /** Samples one study of a key may have; per-key override. */
  MAX_STUDY_SAMPLES_PER_KEY: integer(100_000, 1),
  // --- Fairness between keys (docs/operations.md "Keys and tenants", src/jobs/apiKeys/fairShare.ts) ---
  /**
   * A key's job is predicted small when its estimated floating-point work (src/jobs/apiKeys/smallJobs.ts)
   * is at most this: the key's first pending job, when small, runs in a worker's small-job slot. 0: no job is.
   */
  SMALL_JOB_MAX_FLOPS: integer(1_000_000_000, 0),
  /** Slots each worker process keeps for small jobs, beside its WORKER_CONCURRENCY slots. */
  SMALL_JOB_SLOTS: integer(1, 1),
  // --- Idempotent submits and callbacks (docs/api-guide.md "Idempotent submits", docs/operations.md "Callbacks") ---
  /** How long an Idempotency-Key of POST /v1/jobs, /v1/studies or /v1/matrices answers its first request's resource again. */
  IDEMPOTENCY_TTL_SECONDS: integer(86_400, 1),
  /**
   * Where `notify` callbacks may go, comma-separated: host names (`hooks.example.com`, `*.example.com`),
   * `*` (any host), `loopback` (hosts whose addresses are loopback ones). Named hosts and `*` must
   * resolve to public addresses; private, link-local, metadata and reserved addresses are always
   * refused. Unset: `loopback` while HOST is a loopback address, else `*`.
   */
  WEBHOOK_ALLOWED_HOSTS: z.string().optional(),
  /** Longest wait for a callback receiver's answer (connection and response). */
  WEBHOOK_TIMEOUT_MS: integer(10_000, 100),
  /** Delay before a failed callback's first retry; each further one doubles, up to WEBHOOK_MAX_BACKOFF_MS. */
  WEBHOOK_BACKOFF_MS: integer(10_000, 10),
  WEBHOOK_MAX_BACKOFF_MS: integer(3_600_000, 10),
  /** How long a callback is retried, counted from when the job or study ended; then it is given up. */
  WEBHOOK_RETRY_SECONDS: integer(86_400, 1),
  /**
   * Callback attempts under way at once in each worker process. An attempt waits on its receiver, not the CPU, and a
   * receiver that never answers holds its slot for WEBHOOK_TIMEOUT_MS: with 8, sixteen such receivers held back every
   * other callback by ~20 s.
   */
  WEBHOOK_CONCURRENCY: integer(64, 1),
  // --- Studies (POST /v1/studies; docs/studies.md) ---
  /** Most sample-analyses one study may ask for (grid points x samples); 413 above, before anything is queued. */
  MAX_STUDY_SAMPLES: integer(200_000, 1),
  /** Most samples per grid point; 413 above. */
  MAX_STUDY_POINT_SAMPLES: integer(10_000, 1),
  /** Most grid points of one study; 422 above. */
  MAX_STUDY_POINTS: integer(1000, 1),
  /** Largest n of a study's generated matrices (each sample is a dense n x n analysis); 413 above. */
  MAX_STUDY_N: integer(1000, 2),
  /** BullMQ queues of the studies: `<STUDY_QUEUE_NAME>` (parents, which aggregate) and `<STUDY_QUEUE_NAME>-chunks` (children). */
  STUDY_QUEUE_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('studies'),
  /** Study chunks one worker process computes at once, each in its own sandboxed child process. */
  STUDY_WORKER_CONCURRENCY: integer(2, 1),
  // --- Split analysis (Algorithm 2 over BullMQ workers; docs/operations.md "Configuration") ---
  /** An `analyze` job on a dense matrix with n at least this and at least SPLIT_ANALYSIS_MIN_MACHINES machines runs split over the workers. */
  SPLIT_ANALYSIS_MIN_N: integer(2000, 1),
  SPLIT_ANALYSIS_MIN_MACHINES: integer(16, 2),
  /** Parts of each divisible kind of a split analysis (machine groups for the pairs, row ranges for the local angles). */
  SPLIT_ANALYSIS_GROUPS: integer(4, 1),
});

/** The settings with their defaults filled in (MATRIX_TTL_SECONDS defaults to another setting). */
const resolvedConfigSchema = configSchema.transform((config) => ({
  ...config,
  MATRIX_TTL_SECONDS: config.MATRIX_TTL_SECONDS ?? config.JOB_TTL_SECONDS,
  AUTH_MODE: config.AUTH_MODE ?? (isLoopbackHost(config.HOST) ? 'none' : 'keys'),
  WEBHOOK_ALLOWED_HOSTS: (config.WEBHOOK_ALLOWED_HOSTS ?? (isLoopbackHost(config.HOST) ? 'loopback' : '*'))
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry.length > 0),
  /** Why AUTH_MODE is what it is, for the start log. */
  AUTH_MODE_REASON:
    config.AUTH_MODE !== undefined
      ? `AUTH_MODE=${config.AUTH_MODE} is set`
      : `AUTH_MODE is unset and HOST ${config.HOST} is ${isLoopbackHost(config.HOST) ? '' : 'not '}a loopback address`,
}));

/** 127.0.0.0/8, ::1 and localhost: only this machine can connect. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) || bare === '::ffff:127.0.0.1';
}

export type Config = z.output<typeof resolvedConfigSchema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = resolvedConfigSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
