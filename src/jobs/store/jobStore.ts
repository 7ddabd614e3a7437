/**
 * Every Redis read and write of the job layer's own data (not BullMQ's): job documents, the
 * creation-time index, and the binary inputs and outputs of each job. Used by the API side
 * (RedisJobService), by the worker process and by the sandboxed processor, each with its own
 * connection. Writes that belong together go in one MULTI; status changes go through ./scripts.ts.
 */
import type { ChainableCommander, Redis } from 'ioredis';
import type { AlgorithmId } from '../../solvers/algorithms/registry.js';
import { partitionFromAssignment } from '../../solvers/problem.js';
import type { CsrMatrix } from '../../solvers/sparse/csr.js';
import type { Trace } from '../../solvers/runner/types.js';
import { JobInputMissingError } from '../errors.js';
import { notifyOutboxKey, outboxMember } from '../notify/notifyKeys.js';
import { appendDelivery, readWebhookTarget } from '../notify/webhookRecords.js';
import type {
  JobProgress,
  JobResult,
  JobStatus,
  JobSummary,
  MatrixDigest,
  MatrixStorage,
  NumericBackend,
  ProblemDetails,
  WebhookDelivery,
  WebhookTarget,
} from '../types.js';
import { bytesOf, float64From, int32From } from './binary.js';
import {
  newDocumentFields,
  jobSpecFromFields,
  JOB_SPEC_FIELDS,
  runsOutcome,
  storedResultJson,
  summaryFromFields,
  SUMMARY_FIELDS,
  type NewDocument,
} from './jobDocument.js';
import { JobKeys } from './keys.js';
import { MatrixStore, queueCsrCommit, readCsr, writePendingCsr } from './matrixStore.js';
import { matrixSource, readyJobFrom, type MatrixSource, type ReadyJob, type StoredInputs, type WorkerLimits } from './readyJob.js';
import { execOrThrow } from './redisBatch.js';
import { defineScripts, queueScript, runScript, STATUS_FIELDS } from './scripts.js';

export interface StoredTrace {
  iteration: Int32Array;
  relativeResidual: Float64Array;
  relativeError: Float64Array | null;
  consensusDistance: Float64Array | null;
  totalIterations: number;
  cap: number;
  downsampled: boolean;
}

export interface RunOutput {
  algorithm: AlgorithmId;
  /** Of the (first) right-hand side. */
  solution: Float64Array;
  trace: Trace;
  /** Several right-hand sides: the solutions and traces of columns 1 .. k - 1 (JobKeys.columns). */
  otherColumns?: { solution: Float64Array; trace: Trace }[];
}

/** What an attempt computes on (JobStore.recordRun). */
export interface RunRecord {
  storage: MatrixStorage;
  backend: NumericBackend;
  digest?: MatrixDigest;
}

export interface Outcome {
  status: Extract<JobStatus, 'succeeded' | 'failed' | 'cancelled'>;
  result?: JobResult;
  error?: ProblemDetails;
  progress?: JobProgress | null;
  runs?: RunOutput[];
  /** What the attempt computed on, when it was not recorded yet: recorded in the same MULTI, before the end. */
  run?: RunRecord;
}

/**
 * The answer of begin: the attempt runs (with the job ready to compute), or why it does not: the
 * document is gone, a cancel came first, or the job already finished (its status).
 */
export type AttemptStart =
  | { state: 'running'; job: ReadyJob; checkpoint: Buffer | null }
  | { state: 'missing' | 'cancel-requested' | Extract<JobStatus, 'succeeded' | 'failed' | 'cancelled'> };

/** What the document says about a job's runs, to explain a missing trace or solution. */
export interface RunContext {
  exists: boolean;
  type: string | null;
  status: string | null;
  algorithms: AlgorithmId[];
  /** Right-hand sides of the job (1 for one, or none). */
  rhsColumns: number;
}

export class JobStore {
  readonly keys: JobKeys;
  /** Matrices uploaded with POST /v1/matrices, which jobs name by id. */
  private readonly matrices: MatrixStore;
  /** Where a job with a callback is put when it ends (../notify/notifyKeys.ts). */
  private readonly outbox: string;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    queueName: string,
    private readonly ttlSeconds: number,
  ) {
    this.keys = new JobKeys(keyPrefix, queueName);
    this.outbox = notifyOutboxKey(keyPrefix);
    this.matrices = new MatrixStore(redis, keyPrefix, queueName);
    defineScripts(redis);
  }

  /**
   * Document, inputs and index entry in one MULTI. A CSR matrix (a sparse coordinate input; the
   * document's input then says its nnz) is first written in pieces under temporary keys, as a stored
   * matrix is (./matrixStore.ts), and renamed in that MULTI: a job exists with all its inputs or not at all.
   */
  async create(
    doc: NewDocument,
    inputs: {
      matrix: Float64Array | null;
      csr?: CsrMatrix | null;
      rhs: Float64Array | null;
      initialGuess?: Float64Array | null;
      assignment: Int32Array;
    },
    notify: WebhookTarget | null = null,
  ): Promise<void> {
    const { keys } = this;
    const ttl = this.ttlSeconds;
    const pending = inputs.csr ? await writePendingCsr(this.redis, keys.pendingCsr(doc.id), inputs.csr) : null;
    const multi = this.redis.multi();
    const fields = newDocumentFields(doc);
    multi.hset(keys.doc(doc.id), fields);
    multi.expire(keys.doc(doc.id), ttl);
    if (inputs.matrix) multi.set(keys.matrix(doc.id), bytesOf(inputs.matrix), 'EX', ttl);
    if (pending) queueCsrCommit(multi, pending, keys.csr(doc.id), ttl);
    if (inputs.rhs) multi.set(keys.rhs(doc.id), bytesOf(inputs.rhs), 'EX', ttl);
    if (inputs.initialGuess) multi.set(keys.initialGuess(doc.id), bytesOf(inputs.initialGuess), 'EX', ttl);
    multi.set(keys.assignment(doc.id), bytesOf(inputs.assignment), 'EX', ttl);
    if (notify) multi.hset(keys.notify(doc.id), { url: notify.url, secret: notify.secret }).expire(keys.notify(doc.id), ttl);
    // Equal scores: the index is ordered by member, and ULIDs sort by creation time.
    multi.zadd(keys.index, 0, doc.id);
    if (doc.owner) multi.zadd(keys.ownerIndex(doc.owner), 0, doc.id);
    // The new job's status, as the scripts publish every later one (list-wide streams show it from its creation on).
    multi.publish(keys.statusChannel, JSON.stringify(STATUS_FIELDS.map((name) => fields[name] ?? false)));
    try {
      await execOrThrow(multi);
    } catch (error) {
      if (pending) await this.redis.del(...Object.values(pending)).catch(() => undefined);
      throw error;
    }
  }

  /** Remove a job that could not be queued (best effort: its keys expire anyway). */
  async discard(id: string, owner?: string | null): Promise<void> {
    const multi = this.redis
      .multi()
      .del(...this.keys.allOf(id))
      .zrem(this.keys.index, id);
    if (owner) multi.zrem(this.keys.ownerIndex(owner), id);
    await multi.exec();
  }

  /** The API key that owns the job ('' with AUTH_MODE=none), or null when there is no such job. */
  async owner(id: string): Promise<string | null> {
    const [status, owner] = await this.redis.hmget(this.keys.doc(id), 'status', 'owner');
    return status === null ? null : (owner ?? '');
  }

  /** The document's fields, or null when there is no such job. */
  async document(id: string): Promise<Record<string, string> | null> {
    const fields = await this.redis.hgetall(this.keys.doc(id));
    return fields.id === undefined ? null : fields;
  }

  async summaries(ids: string[]): Promise<(JobSummary | null)[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hmget(this.keys.doc(id), ...SUMMARY_FIELDS);
    const replies = await execOrThrow(pipeline);
    return replies.map((values) => summaryFromFields(values as (string | null)[]));
  }

  /** Up to `count` ids, newest first, strictly older than `beforeId` when given; only `owner`'s jobs when given. */
  async indexPage(beforeId: string | null, count: number, owner?: string): Promise<string[]> {
    const index = owner === undefined ? this.keys.index : this.keys.ownerIndex(owner);
    return this.redis.zrevrangebylex(index, beforeId === null ? '+' : `(${beforeId}`, '-', 'LIMIT', 0, count);
  }

  async dropFromIndex(ids: string[], owner?: string | null): Promise<void> {
    if (ids.length === 0) return;
    await this.redis.zrem(owner ? this.keys.ownerIndex(owner) : this.keys.index, ...ids);
  }

  /**
   * Mark the attempt started (atomically with the cancel check: scripts.lssBegin) and read the
   * document's job spec and the binary inputs in the same round trip; when the attempt runs, return
   * the job ready to compute and the checkpoint an earlier attempt saved (null: none). Throws (the document then says 'running': the caller records the
   * failure) JobInputMissingError for an input that expired, or the SolverError of a generator spec.
   * `backend`, when given, is recorded with the start.
   */
  async begin(id: string, now: string, limits: WorkerLimits, backend?: NumericBackend): Promise<AttemptStart> {
    const { keys } = this;
    const pipeline = this.redis.pipeline();
    queueScript(pipeline, 'lssBegin', [keys.doc(id)], [keys.statusChannel, now, backend ?? '']);
    pipeline.hmget(keys.doc(id), ...JOB_SPEC_FIELDS);
    // One command for the five binary values (absent ones: null).
    pipeline.mgetBuffer(keys.matrix(id), keys.rhs(id), keys.assignment(id), keys.initialGuess(id), keys.checkpoint(id));
    const [state, fields, values] = await execOrThrow(pipeline);
    const answer = String(state) as AttemptStart['state'];
    if (answer !== 'running') return { state: answer };
    const [matrix, rhs, assignment, initialGuess, checkpoint] = values as (Buffer | null)[];
    const spec = jobSpecFromFields(fields as (string | null)[]);
    if (!spec) throw new JobInputMissingError(id, 'job document');
    const inputs: StoredInputs = { matrix, rhs, assignment, initialGuess };
    if (spec.input.format === 'stored') inputs.storedMatrix = (await this.matrices.csr(spec.input.matrixId))?.csr ?? null;
    else if ('nnz' in spec.input && spec.input.nnz !== undefined) {
      inputs.csr = await readCsr(this.redis, keys.csr(id), spec.n, spec.input.nnz, spec.input.cols);
    }
    return { state: 'running', job: readyJobFrom(spec, inputs, limits), checkpoint };
  }

  /**
   * What the running attempt computes on, for the document (nothing when the job is gone), with the
   * matrix's digest when the worker computed it (a generated or stored matrix).
   */
  async recordRun(id: string, run: RunRecord): Promise<void> {
    await runScript(this.redis, 'lssRecordRun', [this.keys.doc(id)], recordRunArgs(run));
  }

  /**
   * The job's matrix as its worker computes from it, and its assignment; null when the job is gone.
   * Throws as begin does for an input that expired or a stored matrix that was deleted.
   */
  async matrix(id: string, limits: WorkerLimits): Promise<{ matrix: MatrixSource; assignment: Int32Array } | null> {
    const { keys } = this;
    const pipeline = this.redis.pipeline();
    pipeline.hmget(keys.doc(id), ...JOB_SPEC_FIELDS);
    pipeline.getBuffer(keys.matrix(id));
    pipeline.getBuffer(keys.assignment(id));
    const [fields, matrix, assignmentBytes] = await execOrThrow(pipeline);
    const spec = jobSpecFromFields(fields as (string | null)[]);
    if (!spec) return null;
    if (!assignmentBytes) throw new JobInputMissingError(id, 'partition');
    const assignment = int32From(assignmentBytes as Buffer);
    const inputs: StoredInputs = { matrix: matrix as Buffer | null, rhs: null, assignment: assignmentBytes as Buffer };
    if (spec.input.format === 'stored') inputs.storedMatrix = (await this.matrices.csr(spec.input.matrixId))?.csr ?? null;
    else if ('nnz' in spec.input && spec.input.nnz !== undefined) {
      inputs.csr = await readCsr(this.redis, keys.csr(id), spec.n, spec.input.nnz);
    }
    return { matrix: matrixSource(spec, inputs, partitionFromAssignment(assignment, spec.m), limits), assignment };
  }

  /** The job's row -> machine assignment, or null when it is gone. */
  async assignment(id: string): Promise<Int32Array | null> {
    const bytes = await this.redis.getBuffer(this.keys.assignment(id));
    return bytes ? int32From(bytes) : null;
  }

  /**
   * Stores a running job's progress and publishes it on the status channel (the API's event streams);
   * true when a cancel has been requested for it (Redis pub/sub may have lost the message).
   */
  async saveProgress(id: string, progress: JobProgress): Promise<boolean> {
    const answer = await runScript(this.redis, 'lssProgress', [this.keys.doc(id)], [JSON.stringify(progress), this.keys.statusChannel, id]);
    return answer === 2;
  }

  /**
   * Stores a running job's checkpoint (./checkpointCodec.ts), replacing the previous one; false when
   * the job is no longer running (nothing written).
   */
  async saveCheckpoint(id: string, bytes: Buffer): Promise<boolean> {
    return (await runScript(this.redis, 'lssCheckpoint', [this.keys.doc(id), this.keys.checkpoint(id)], [bytes])) === 1;
  }

  /** The job's latest checkpoint, as stored; null when none was saved (or the job finished). */
  async checkpoint(id: string): Promise<Buffer | null> {
    return this.redis.getBuffer(this.keys.checkpoint(id));
  }

  /**
   * Store the runs' solutions and traces and finish the document, in one MULTI; the checkpoint, of
   * no use once the job has ended, is deleted. Returns false when
   * the document was already finished or gone (then nothing about it changed).
   */
  async finish(id: string, outcome: Outcome): Promise<boolean> {
    const { keys } = this;
    const ttl = this.ttlSeconds;
    const multi = this.redis.multi();
    for (const run of outcome.runs ?? []) {
      multi.set(keys.solution(id, run.algorithm), bytesOf(run.solution), 'EX', ttl);
      writeTrace(multi, keys.trace(id, run.algorithm), run.trace, ttl);
      if (run.otherColumns !== undefined && run.otherColumns.length > 0) {
        const key = keys.columns(id, run.algorithm);
        multi.del(key);
        run.otherColumns.forEach((column, j) => {
          multi.hset(key, { [`${j + 1}:x`]: bytesOf(column.solution), ...traceFields(column.trace, `${j + 1}:`) });
        });
        multi.expire(key, ttl);
      }
    }
    multi.del(keys.checkpoint(id));
    if (outcome.run) queueScript(multi, 'lssRecordRun', [keys.doc(id)], recordRunArgs(outcome.run));
    queueScript(multi, 'lssFinish', keys.documentAndInputsOf(id), [
      keys.statusChannel,
      outcome.status,
      new Date().toISOString(),
      ttl,
      outcome.result ? storedResultJson(outcome.result) : '',
      outcome.error ? JSON.stringify(outcome.error) : '',
      outcome.progress ? JSON.stringify(outcome.progress) : '',
      this.outbox,
      outboxMember('job', id),
      // What the job list shows of a solve's runs (jobDocument.ts summaryOf), without reading the result.
      outcome.result !== undefined && Object.keys(outcome.result.runs).length > 0
        ? JSON.stringify(runsOutcome(Object.keys(outcome.result.runs) as AlgorithmId[], outcome.result))
        : '',
    ]);
    const replies = await execOrThrow(multi);
    return replies[replies.length - 1] === 1;
  }

  /** After a failed attempt that BullMQ will retry. */
  async markRetrying(id: string): Promise<void> {
    await runScript(this.redis, 'lssRetry', [this.keys.doc(id)], [this.keys.statusChannel]);
  }

  /** See scripts.lssCancel for the answers. */
  async cancel(id: string): Promise<string> {
    const { keys } = this;
    const answer = await runScript(this.redis, 'lssCancel', keys.allOf(id), [
      keys.statusChannel,
      new Date().toISOString(),
      this.ttlSeconds,
      this.outbox,
      outboxMember('job', id),
    ]);
    return String(answer);
  }

  async publishCancel(id: string): Promise<void> {
    await this.redis.publish(this.keys.cancelChannel, id);
  }

  /** 'deleted', 'missing', or the status of an unfinished job (nothing deleted). */
  async delete(id: string): Promise<string> {
    const { keys } = this;
    const [doc, ...others] = keys.allOf(id);
    return String(await runScript(this.redis, 'lssDelete', [doc, keys.index, ...others], [id]));
  }

  /** The callback of a job and its summary (the body to deliver); null when the job is gone or asked for none. */
  async webhookOf(id: string): Promise<{ target: WebhookTarget; summary: JobSummary } | null> {
    const [target, [summary]] = await Promise.all([readWebhookTarget(this.redis, this.keys.notify(id)), this.summaries([id])]);
    return target && summary ? { target, summary } : null;
  }

  /** Records a delivery attempt on the job's document (one delivery job per job at a time writes it). */
  async recordDelivery(id: string, delivery: WebhookDelivery, keep: number): Promise<void> {
    await appendDelivery(this.redis, this.keys.doc(id), delivery, keep);
  }

  async runContext(id: string): Promise<RunContext> {
    const [type, status, algorithms, rhsColumns] = await this.redis.hmget(this.keys.doc(id), 'type', 'status', 'algorithms', 'rhsColumns');
    return {
      exists: status !== null,
      type,
      status,
      algorithms: algorithms ? (JSON.parse(algorithms) as AlgorithmId[]) : [],
      rhsColumns: rhsColumns ? Number(rhsColumns) : 1,
    };
  }

  /** The trace of right-hand side `column` (0: the first, or only). */
  async trace(id: string, algorithm: AlgorithmId, column = 0): Promise<StoredTrace | null> {
    if (column > 0) {
      const prefix = `${column}:`;
      const names = TRACE_FIELDS.map((name) => prefix + name);
      const values = await this.redis.hmgetBuffer(this.keys.columns(id, algorithm), ...names);
      return traceFrom(Object.fromEntries(TRACE_FIELDS.map((name, k) => [name, values[k] ?? undefined])));
    }
    return traceFrom(await this.redis.hgetallBuffer(this.keys.trace(id, algorithm)));
  }

  async solution(id: string, algorithm: AlgorithmId, column = 0): Promise<Float64Array | null> {
    const bytes =
      column > 0
        ? await this.redis.hgetBuffer(this.keys.columns(id, algorithm), `${column}:x`)
        : await this.redis.getBuffer(this.keys.solution(id, algorithm));
    return bytes ? float64From(bytes) : null;
  }
}

/** lssRecordRun's ARGV. */
const recordRunArgs = (run: RunRecord): string[] => [run.storage, run.backend, run.digest ? JSON.stringify(run.digest) : ''];

const TRACE_FIELDS = ['meta', 'iteration', 'relativeResidual', 'relativeError', 'consensusDistance'] as const;

/** A trace as hash fields (meta JSON, one binary field per array), each name after `prefix`. */
function traceFields(trace: Trace, prefix = ''): Record<string, Buffer | string> {
  const fields: Record<string, Buffer | string> = {
    [`${prefix}meta`]: JSON.stringify({ totalIterations: trace.totalIterations, cap: trace.cap, downsampled: trace.downsampled }),
    [`${prefix}iteration`]: bytesOf(trace.iteration),
    [`${prefix}relativeResidual`]: bytesOf(trace.relativeResidual),
  };
  if (trace.relativeError) fields[`${prefix}relativeError`] = bytesOf(trace.relativeError);
  if (trace.consensusDistance) fields[`${prefix}consensusDistance`] = bytesOf(trace.consensusDistance);
  return fields;
}

function traceFrom(fields: Partial<Record<(typeof TRACE_FIELDS)[number], Buffer>>): StoredTrace | null {
  if (!fields.meta || !fields.iteration || !fields.relativeResidual) return null;
  const meta = JSON.parse(fields.meta.toString('utf8')) as { totalIterations: number; cap: number; downsampled: boolean };
  return {
    iteration: int32From(fields.iteration),
    relativeResidual: float64From(fields.relativeResidual),
    relativeError: fields.relativeError ? float64From(fields.relativeError) : null,
    consensusDistance: fields.consensusDistance ? float64From(fields.consensusDistance) : null,
    ...meta,
  };
}

function writeTrace(multi: ChainableCommander, key: string, trace: Trace, ttl: number): void {
  multi.del(key);
  multi.hset(key, traceFields(trace));
  multi.expire(key, ttl);
}
