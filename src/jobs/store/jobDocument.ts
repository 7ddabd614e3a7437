/**
 * The job document: one Redis hash per job, the source of truth for GET /v1/jobs/{id}.
 * Scalars are stored as strings, structured fields as JSON.
 */
import type { AlgorithmId } from '../../solvers/algorithms/registry.js';
import type { GeneratorSpec } from '../../solvers/input/types.js';
import type { QueuedJobData } from '../queuedJob.js';
import type { Job, JobOptions, JobProgress, JobResult, JobStatus, JobSummary, JobType, ProblemDetails } from '../types.js';

/** How the matrix was given; generator specs are run by the worker. */
export type StoredInput = { format: 'dense' | 'coo' | 'matrix-market' } | { format: 'generator'; spec: GeneratorSpec };

export const SUMMARY_FIELDS = ['id', 'type', 'status', 'createdAt', 'startedAt', 'finishedAt', 'n', 'm'] as const;

/** What is written when a job is created: the queued job's data and its creation time. */
export interface NewDocument extends QueuedJobData {
  createdAt: string;
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
  };
}

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
    options: parse<JobOptions>(fields.options) ?? { tolerance: 0, maxIterations: 0, parameters: {} },
    attempts: Number(fields.attempts ?? 0),
  };
  const result = parse<JobResult>(fields.result);
  if (result) job.result = result;
  const error = parse<ProblemDetails>(fields.error);
  if (error) job.error = error;
  return job;
}

/**
 * The document fields in a status-channel message (a JSON array of STATUS_FIELDS values, false
 * for unset ones); null when the message is not one.
 */
export function fieldsFromStatusMessage(message: string, names: readonly string[]): Record<string, string> | null {
  let values: unknown;
  try {
    values = JSON.parse(message);
  } catch {
    return null;
  }
  if (!Array.isArray(values)) return null;
  const fields: Record<string, string> = {};
  names.forEach((name, k) => {
    if (typeof values[k] === 'string') fields[name] = values[k];
  });
  return fields.id && fields.status ? fields : null;
}

/** From HMGET of SUMMARY_FIELDS; null when the document no longer exists. */
export function summaryFromFields(values: (string | null)[]): JobSummary | null {
  const [id, type, status, createdAt, startedAt, finishedAt, n, m] = values;
  if (id === null || status === null) return null;
  return {
    id,
    type: type as JobType,
    status: status as JobStatus,
    createdAt: createdAt ?? '',
    startedAt: startedAt || null,
    finishedAt: finishedAt || null,
    n: Number(n),
    m: Number(m),
  };
}
