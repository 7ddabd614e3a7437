/**
 * The job document: one Redis hash per job, the one source of truth for GET /v1/jobs/{id} and for
 * the worker (the BullMQ job carries only the id). Scalars are stored as strings, structured
 * fields as JSON.
 */
import type { AlgorithmId } from '../../solvers/algorithms/registry.js';
import type { GeneratorSpec } from '../../solvers/input/types.js';
import type {
  Job,
  Labels,
  MatrixDigest,
  MatrixEcho,
  PartitionEcho,
  JobOptions,
  JobProgress,
  JobResult,
  JobStatus,
  JobSummary,
  JobType,
  JobView,
  MatrixStorage,
  NumericBackend,
  ProblemDetails,
  RunsOutcome,
  WebhookDelivery,
} from '../types.js';

/**
 * How the matrix was given; generator specs are run by the worker, stored matrices (POST
 * /v1/matrices) are read by the worker from the matrix store, sparse coordinate inputs from the
 * job's own CSR keys.
 */
export type StoredInput =
  /**
   * `nnz` present: A is stored as binary CSR (JobKeys.csr) with that many entries, else dense
   * (JobKeys.matrix); `cols` present: A is tall (the job's n counts its rows).
   */
  | { format: 'dense' | 'coo' | 'matrix-market'; nnz?: number; cols?: number }
  | { format: 'generator'; spec: GeneratorSpec }
  | { format: 'stored'; matrixId: string; cols?: number };

export const SUMMARY_FIELDS = [
  'id',
  'type',
  'status',
  'createdAt',
  'startedAt',
  'finishedAt',
  'n',
  'm',
  'algorithms',
  'input',
  'digest',
  'labels',
  'error',
  'summary',
] as const;

/** What a worker needs from the document to compute the job (written at creation, never changed). */
export interface StoredJobSpec {
  id: string;
  type: JobType;
  n: number;
  m: number;
  algorithms: AlgorithmId[];
  options: JobOptions;
  input: StoredInput;
  /** False: b = A * ones(n), nothing stored under the rhs key. */
  hasRhs: boolean;
}

/** The fields of a StoredJobSpec, in the order jobSpecFromFields reads them (HMGET). */
export const JOB_SPEC_FIELDS = ['id', 'type', 'n', 'm', 'algorithms', 'options', 'input', 'hasRhs'] as const;

/** What is written when a job is created. */
export interface NewDocument extends StoredJobSpec {
  createdAt: string;
  /** The storage planned at creation; the worker records the one it runs on (and its backend). */
  storage: MatrixStorage;
  /** The API key that created the job (its id); absent with AUTH_MODE=none. */
  owner?: string | null;
  /** The callback's URL (its secret is kept apart: JobKeys.notify). */
  notifyUrl?: string | null;
  partition: PartitionEcho;
  labels: Labels;
  /** The matrix's content hash when the request carried the matrix; a worker records it for the others (`digest`). */
  digest: MatrixDigest | null;
  /** Right-hand sides stored under the rhs key, column after column (absent or 1: one). */
  rhsColumns?: number;
}

export function newDocumentFields(doc: NewDocument): Record<string, string> {
  return {
    id: doc.id,
    type: doc.type,
    status: 'queued',
    n: String(doc.n),
    m: String(doc.m),
    algorithms: JSON.stringify(doc.algorithms),
    options: JSON.stringify(doc.options),
    input: JSON.stringify(doc.input),
    hasRhs: doc.hasRhs ? '1' : '0',
    createdAt: doc.createdAt,
    attempts: '0',
    storage: doc.storage,
    partition: JSON.stringify(doc.partition),
    labels: JSON.stringify(doc.labels),
    ...(doc.digest ? { digest: JSON.stringify(doc.digest) } : {}),
    ...(doc.rhsColumns !== undefined && doc.rhsColumns > 1 ? { rhsColumns: String(doc.rhsColumns) } : {}),
    ...(doc.owner ? { owner: doc.owner } : {}),
    ...(doc.notifyUrl ? { notifyUrl: doc.notifyUrl, deliveries: '[]' } : {}),
  };
}

/** From HMGET of JOB_SPEC_FIELDS; null when the document no longer exists. */
export function jobSpecFromFields(values: (string | null)[]): StoredJobSpec | null {
  const [id, type, n, m, algorithms, options, input, hasRhs] = values;
  if (id === null || type === null || input === null || options === null) return null;
  return {
    id,
    type: type as JobType,
    n: Number(n),
    m: Number(m),
    algorithms: parse<AlgorithmId[]>(algorithms) ?? [],
    options: jobOptionsOf(options),
    input: JSON.parse(input) as StoredInput,
    hasRhs: hasRhs === '1',
  };
}

function jobOptionsOf(text: string | undefined | null): JobOptions {
  return parse<JobOptions>(text) ?? { tolerance: 0, maxIterations: 0, parameters: {} };
}

/** The runs that converged, in the job's order, and the others with how they ended. */
export function runsOutcome(algorithms: readonly AlgorithmId[], result: JobResult): RunsOutcome {
  const outcome: RunsOutcome = { converged: [], notConverged: [] };
  for (const algorithm of algorithms) {
    const run = result.runs[algorithm];
    if (run === undefined) continue;
    // Several right-hand sides: converged when every column did, else how the first other column ended.
    const columns = run.columns ?? [run];
    const unconverged = columns.findIndex((column) => column.status !== 'converged');
    if (unconverged < 0) outcome.converged.push(algorithm);
    else {
      const { status, stopReason } = columns[unconverged];
      outcome.notConverged.push({
        algorithm,
        status,
        stopReason: run.columns ? `Right-hand side ${unconverged}: ${stopReason}` : stopReason,
      });
    }
  }
  return outcome;
}

/** A result as stored: analysisCompleted is absent in results written before it existed. */
type StoredJobResult = Omit<JobResult, 'analysisCompleted'> & { analysisCompleted?: boolean };

function parse<T>(text: string | undefined | null): T | undefined {
  return text === undefined || text === null || text === '' ? undefined : (JSON.parse(text) as T);
}

export function jobFromDocument(fields: Record<string, string>): Job {
  const job: Job = {
    id: fields.id,
    type: fields.type as JobType,
    status: fields.status as JobStatus,
    progress: parse<JobProgress>(fields.progress) ?? null,
    createdAt: fields.createdAt,
    startedAt: fields.startedAt || null,
    finishedAt: fields.finishedAt || null,
    n: Number(fields.n),
    m: Number(fields.m),
    algorithms: parse<AlgorithmId[]>(fields.algorithms) ?? [],
    options: jobOptionsOf(fields.options),
    attempts: Number(fields.attempts ?? 0),
    // Documents written before these fields existed were dense.
    storage: (fields.storage as MatrixStorage | undefined) ?? 'dense',
    backend: (fields.backend as NumericBackend | undefined) || null,
    matrix: matrixEchoOf(fields),
    partition: parse<PartitionEcho>(fields.partition) ?? null,
    labels: parse<Labels>(fields.labels) ?? {},
  };
  const stored = parse<StoredJobResult>(fields.result);
  if (stored) {
    // Results stored before analysisCompleted existed always held the whole analysis.
    const result: JobResult = { ...stored, analysisCompleted: stored.analysisCompleted ?? stored.analysis !== undefined };
    job.result = result;
    if (job.type === 'solve') job.summary = runsOutcome(job.algorithms, result);
  }
  const error = parse<ProblemDetails>(fields.error);
  if (error) job.error = error;
  if (fields.notifyUrl) {
    job.notify = { url: fields.notifyUrl };
    job.deliveries = parse<WebhookDelivery[]>(fields.deliveries) ?? [];
  }
  return job;
}

/**
 * How every result stored since analysisCompleted exists begins (storedResultJson writes that field first). Older
 * ones lack it and are parsed, to fill it in.
 */
export const STORED_RESULT_PREFIX = '{"analysisCompleted":';

/** A result as JobStore.finish stores it: analysisCompleted first, so that reads can serve it as stored. */
export function storedResultJson({ analysisCompleted, ...rest }: JobResult): string {
  return JSON.stringify({ analysisCompleted, ...rest });
}

/** The job as GET sends it (JobView): a result in the stored form above left as its text, an older one parsed. */
export function jobViewFromDocument(fields: Record<string, string>): JobView {
  const resultJson = fields.result;
  if (!resultJson?.startsWith(STORED_RESULT_PREFIX)) return { job: jobFromDocument(fields) };
  const job = jobFromDocument({ ...fields, result: '' });
  // A solve's summary is derived from its runs' outcomes.
  if (job.type === 'solve') job.summary = runsOutcome(job.algorithms, JSON.parse(resultJson) as JobResult);
  return { job, resultJson };
}

/** The matrix echo: how it was given (`input`), n, and its digest once known. */
function matrixEchoOf(fields: Record<string, string>): MatrixEcho {
  const input = parse<StoredInput>(fields.input);
  const digest = parse<MatrixDigest>(fields.digest);
  const echo: MatrixEcho = {
    format: input?.format ?? 'dense',
    n: Number(fields.n),
    nnz: digest?.nnz ?? null,
    sha256: digest?.sha256 ?? null,
  };
  if (input?.format === 'generator') echo.generator = input.spec;
  if (input?.format === 'stored') echo.id = input.matrixId;
  if (input !== undefined && 'cols' in input && input.cols !== undefined) echo.cols = input.cols;
  return echo;
}

/**
 * The document fields in a status-channel message (a JSON array of STATUS_FIELDS values, false
 * for unset ones, true for a field set but left out: a long result, see scripts.STATUS_RESULT_MAX_BYTES),
 * with the names of those left out; null when the message is not one.
 */
export function fieldsFromStatusMessage(
  message: string,
  names: readonly string[],
): { fields: Record<string, string>; leftOut: string[] } | null {
  let values: unknown;
  try {
    values = JSON.parse(message);
  } catch {
    return null;
  }
  if (!Array.isArray(values)) return null;
  const fields: Record<string, string> = {};
  const leftOut: string[] = [];
  names.forEach((name, k) => {
    if (typeof values[k] === 'string') fields[name] = values[k];
    else if (values[k] === true) leftOut.push(name);
  });
  return fields.id && fields.status ? { fields, leftOut } : null;
}

/** A progress report on the status channel (scripts.lssProgress publishes `{"id", "progress"}`), or null when the message is not one. */
export function progressFromStatusMessage(message: string): { id: string; progress: JobProgress } | null {
  if (!message.startsWith('{')) return null;
  try {
    const value = JSON.parse(message) as { id?: unknown; progress?: unknown };
    if (typeof value.id !== 'string' || typeof value.progress !== 'object' || value.progress === null) return null;
    return { id: value.id, progress: value.progress as JobProgress };
  } catch {
    return null;
  }
}

/** From HMGET of SUMMARY_FIELDS; null when the document no longer exists. */
export function summaryFromFields(values: (string | null)[]): JobSummary | null {
  const fields: Record<string, string> = {};
  SUMMARY_FIELDS.forEach((name, k) => {
    if (values[k] !== null && values[k] !== undefined) fields[name] = values[k];
  });
  if (!fields.id || !fields.status) return null;
  return summaryOf(fields);
}

/** A job's summary from its document's fields (SUMMARY_FIELDS, or more). */
export function summaryOf(fields: Record<string, string>): JobSummary {
  const summary: JobSummary = {
    id: fields.id,
    type: fields.type as JobType,
    status: fields.status as JobStatus,
    createdAt: fields.createdAt ?? '',
    startedAt: fields.startedAt || null,
    finishedAt: fields.finishedAt || null,
    n: Number(fields.n),
    m: Number(fields.m),
    algorithms: parse<AlgorithmId[]>(fields.algorithms) ?? [],
    matrix: matrixEchoOf(fields),
    labels: parse<Labels>(fields.labels) ?? {},
  };
  const error = parse<ProblemDetails>(fields.error);
  if (error) summary.error = error;
  // Written when the job ended with runs (JobStore.finish: runsOutcome of the runs it has).
  const outcome = parse<RunsOutcome>(fields.summary);
  if (outcome && summary.type === 'solve') summary.summary = outcome;
  return summary;
}
