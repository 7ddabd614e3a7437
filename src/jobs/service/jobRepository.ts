/**
 * Jobs as the API reads and changes them: create (store, then queue), get, list (pages with a
 * cursor), cancel, remove, and the runs' traces and solutions. Every call fails at once with
 * StoreUnavailableError when Redis is unreachable (fail-fast connections, see ./jobQueue.ts and
 * ../store/redisConnection.ts).
 */
import type { Logger } from 'pino';
import type { AlgorithmId } from '../../solvers/algorithms/registry.js';
import { nnzOf } from '../../solvers/sparse/csr.js';
import {
  ColumnOutOfRangeError,
  JobNotFinishedError,
  JobNotFoundError,
  QuotaTooLargeError,
  RunNotFoundError,
  type JobError,
} from '../errors.js';
import { JOB_ID_PATTERN, newJobId } from '../jobId.js';
import { jobFromDocument, jobViewFromDocument, type StoredInput } from '../store/jobDocument.js';
import type { JobStore, RunContext } from '../store/jobStore.js';
import { storeCall } from '../store/redisConnection.js';
import { matrixDigest } from '../matrixDigest.js';
import type { WorkerLimits } from '../store/readyJob.js';
import type { Job, JobListQuery, JobMatrix, JobPage, JobPartition, JobSpec, JobSummary, JobView, TraceView } from '../types.js';
import type { Tenant } from '../apiKeys/apiKey.js';
import { storedBytesOfJob } from '../apiKeys/jobBytes.js';
import { isSmallJob } from '../apiKeys/smallJobs.js';
import type { TenantUsage } from '../apiKeys/tenantUsage.js';
import type { JobQueue, Placement } from './jobQueue.js';
import { hasLabels, pageOfIndex } from './listCursor.js';

/** What tenants (API keys) hold, and what a job's stored bytes are counted with. */
export interface Tenancy {
  usage: TenantUsage;
  ttlSeconds: number;
  traceCap: number;
  /** SMALL_JOB_MAX_FLOPS: which jobs are predicted small (../apiKeys/smallJobs.ts). */
  smallJobMaxFlops: number;
}

export class JobRepository {
  constructor(
    private readonly store: JobStore,
    private readonly queue: JobQueue,
    private readonly log: Logger,
    private readonly tenancy: Tenancy | null = null,
  ) {}

  /**
   * Store the document and inputs, then queue the id; a job that cannot be queued is removed again.
   * For a tenant (an API key), the job is its own and counted against its limits first
   * (QuotaTooLargeError: 413, QuotaExceededError: 429), and queued with its fairness priority, or
   * for the workers' small-job slots when it is the key's only pending job and predicted small
   * (../apiKeys/fairShare.ts).
   */
  async create(spec: JobSpec, tenant: Tenant | null = null): Promise<Job> {
    return storeCall(async () => {
      const now = Date.now();
      const id = newJobId(now);
      const createdAt = new Date(now).toISOString();
      const input: StoredInput =
        spec.matrix.kind === 'generator'
          ? { format: 'generator', spec: spec.matrix.spec }
          : spec.matrix.kind === 'stored'
            ? { format: 'stored', matrixId: spec.matrix.matrixId, ...(spec.matrix.cols === undefined ? {} : { cols: spec.matrix.cols }) }
            : spec.matrix.kind === 'csr'
              ? {
                  format: spec.matrix.format,
                  nnz: nnzOf(spec.matrix.A),
                  ...(spec.matrix.A.cols === spec.matrix.A.rows ? {} : { cols: spec.matrix.A.cols }),
                }
              : { format: spec.matrix.format, ...(spec.matrix.A.cols === spec.matrix.A.rows ? {} : { cols: spec.matrix.A.cols }) };
      const { type, n, m, algorithms, options, storage, partition, labels } = spec;
      // A matrix the request carried is hashed here; a generated or stored one by the worker that reads it.
      const digest = spec.matrix.kind === 'dense' || spec.matrix.kind === 'csr' ? matrixDigest(spec.matrix.A) : null;
      const owner = tenant?.owner ?? null;
      const placement = tenant ? await this.admit(tenant, id, spec) : {};
      const uncount = async (): Promise<void> => {
        if (tenant) await this.tenancy?.usage.release(tenant.owner, this.store.keys.doc(id), id).catch(() => undefined);
      };
      const stored = this.store.create(
        {
          id,
          type,
          n,
          m,
          algorithms,
          options,
          input,
          hasRhs: spec.rhs !== null,
          rhsColumns: spec.rhsColumns,
          createdAt,
          storage,
          owner,
          notifyUrl: spec.notify?.url,
          partition,
          labels,
          digest,
        },
        {
          matrix: spec.matrix.kind === 'dense' ? spec.matrix.A.data : null,
          csr: spec.matrix.kind === 'csr' ? spec.matrix.A : null,
          rhs: spec.rhs,
          initialGuess: spec.initialGuess ?? null,
          assignment: spec.assignment,
        },
        spec.notify,
      );
      await stored.catch(async (error: unknown) => {
        // A write that timed out on a stalled Redis still runs when Redis answers again: the discard queued behind it
        // removes that job then (it stayed queued with no queue entry, though the client was answered 503).
        this.store.discard(id, owner).catch(() => undefined);
        await uncount();
        throw error;
      });
      try {
        await this.queue.add(id, type, placement);
      } catch (error) {
        await this.store.discard(id, owner).catch(() => undefined);
        await uncount();
        throw error;
      }
      return {
        id,
        type,
        status: 'queued',
        progress: null,
        createdAt,
        startedAt: null,
        finishedAt: null,
        n,
        m,
        algorithms,
        options,
        attempts: 0,
        storage,
        backend: null,
        ...(spec.notify ? { notify: { url: spec.notify.url }, deliveries: [] } : {}),
        matrix: {
          format: input.format,
          n,
          ...(input.format === 'generator' ? { generator: input.spec } : {}),
          ...(input.format === 'stored' ? { id: input.matrixId } : {}),
          nnz: digest?.nnz ?? null,
          sha256: digest?.sha256 ?? null,
        },
        partition,
        labels,
      };
    });
  }

  /**
   * Count the job against the tenant's limits; returns where it is queued. A job larger than the
   * key's whole stored-bytes limit can never be accepted: 413, not 429.
   */
  private async admit(tenant: Tenant, id: string, spec: JobSpec): Promise<Placement> {
    if (!this.tenancy) return {};
    const bytes = storedBytesOfJob(spec, this.tenancy.traceCap);
    if (bytes > tenant.quotas.storedBytes) {
      throw new QuotaTooLargeError(
        `The job would store about ${bytes} bytes (inputs, solutions, traces), more than this API key's limit of ` +
          `${tenant.quotas.storedBytes} bytes.`,
      );
    }
    const priority = await this.tenancy.usage.admitJob(tenant, id, this.store.keys.doc(id), bytes, this.tenancy.ttlSeconds);
    // Priority 1: nothing else of this key is queued or running.
    const small = priority === 1 && isSmallJob(spec, this.tenancy.smallJobMaxFlops);
    return { priority, owner: tenant.owner, small };
  }

  /**
   * Throws JobNotFoundError unless job `id` exists and, when `owner` is given, belongs to it (another
   * key's job is not found: its existence is not revealed). Returns the job's owner ('' for none).
   */
  async assertVisible(id: string, owner?: string): Promise<string> {
    const stored = JOB_ID_PATTERN.test(id) ? await this.store.owner(id) : null;
    if (stored === null || (owner !== undefined && stored !== owner)) throw new JobNotFoundError(id);
    return stored;
  }

  async get(id: string, owner?: string): Promise<Job> {
    return storeCall(async () => jobFromDocument(await this.visibleDocument(id, owner)));
  }

  /** The job as get gives it, its result left as the JSON text stored (see JobView). */
  async view(id: string, owner?: string): Promise<JobView> {
    return storeCall(async () => jobViewFromDocument(await this.visibleDocument(id, owner)));
  }

  /** The document's fields; throws JobNotFoundError as assertVisible does. */
  private async visibleDocument(id: string, owner?: string): Promise<Record<string, string>> {
    const fields = JOB_ID_PATTERN.test(id) ? await this.store.document(id) : null;
    if (!fields || (owner !== undefined && (fields.owner ?? '') !== owner)) throw new JobNotFoundError(id);
    return fields;
  }

  /** `owner`: only that key's jobs (from its own index); absent: every job. */
  async list(query: JobListQuery): Promise<JobPage> {
    const { status, owner } = query;
    const labels = query.labels ?? [];
    return storeCall(() =>
      pageOfIndex<JobSummary>(
        {
          indexPage: (before, count) => this.store.indexPage(before, count, owner),
          items: (ids) => this.store.summaries(ids),
          drop: (ids) => this.store.dropFromIndex(ids, owner),
        },
        { limit: query.limit, cursor: query.cursor, filtered: status !== undefined || labels.length > 0, list: 'GET /v1/jobs' },
        (summary) => (status === undefined || summary.status === status) && hasLabels(summary.labels, labels),
      ),
    );
  }

  /** The job as view gives it, after the cancel. */
  async cancel(id: string, owner?: string): Promise<JobView> {
    return storeCall(async () => {
      await this.assertVisible(id, owner);
      const answer = await this.store.cancel(id);
      if (answer === 'missing') throw new JobNotFoundError(id);
      if (answer === 'cancelled-now') {
        // Fails (0) only when a worker has just taken the job: its processor then finds it cancelled.
        await this.queue
          .remove(id)
          .catch((err: unknown) => this.log.warn({ err, jobId: id }, 'could not remove the cancelled job from the queue'));
      } else if (answer === 'running') {
        await this.store.publishCancel(id);
      }
      return this.view(id);
    });
  }

  async remove(id: string, owner?: string): Promise<void> {
    return storeCall(async () => {
      const stored = await this.assertVisible(id, owner);
      const answer = await this.store.delete(id);
      if (answer === 'missing') throw new JobNotFoundError(id);
      if (answer !== 'deleted') throw new JobNotFinishedError(id, answer);
      if (stored !== '') {
        await this.store.dropFromIndex([id], stored);
        await this.tenancy?.usage.release(stored, this.store.keys.doc(id), id);
      }
      await this.queue.remove(id).catch((err: unknown) => this.log.warn({ err, jobId: id }, 'could not remove the job from BullMQ'));
    });
  }

  async trace(id: string, algorithm: AlgorithmId, owner?: string, column = 0): Promise<TraceView> {
    return storeCall(async () => {
      await this.assertVisible(id, owner);
      const trace = await this.store.trace(id, algorithm, column);
      if (!trace) throw explainMissingRun(id, algorithm, await this.store.runContext(id), column);
      return {
        algorithm,
        iteration: Array.from(trace.iteration),
        relativeResidual: Array.from(trace.relativeResidual),
        relativeError: trace.relativeError ? Array.from(trace.relativeError) : null,
        consensusDistance: trace.consensusDistance ? Array.from(trace.consensusDistance) : null,
        totalIterations: trace.totalIterations,
        cap: trace.cap,
        downsampled: trace.downsampled,
      };
    });
  }

  async partition(id: string, owner?: string): Promise<JobPartition> {
    return storeCall(async () => {
      await this.assertVisible(id, owner);
      const [fields, assignment] = await Promise.all([this.store.document(id), this.store.assignment(id)]);
      // Expired between the two reads.
      if (!fields || !assignment) throw new JobNotFoundError(id);
      const m = Number(fields.m);
      const sizes = new Array<number>(m).fill(0);
      for (const machine of assignment) sizes[machine]++;
      return { id, n: assignment.length, m, sizes, assignment };
    });
  }

  /** `limits`: the workers' (a generated matrix is generated again here, as a worker would). */
  async matrix(id: string, limits: WorkerLimits, owner?: string): Promise<JobMatrix> {
    return storeCall(async () => {
      await this.assertVisible(id, owner);
      const stored = await this.store.matrix(id, limits);
      if (!stored) throw new JobNotFoundError(id);
      return stored;
    });
  }

  async solution(id: string, algorithm: AlgorithmId, owner?: string, column = 0): Promise<Float64Array> {
    return storeCall(async () => {
      await this.assertVisible(id, owner);
      const x = await this.store.solution(id, algorithm, column);
      if (!x) throw explainMissingRun(id, algorithm, await this.store.runContext(id), column);
      return x;
    });
  }
}

function explainMissingRun(id: string, algorithm: AlgorithmId, context: RunContext, column = 0): JobError {
  if (!context.exists) return new JobNotFoundError(id);
  if (column >= context.rhsColumns) return new ColumnOutOfRangeError(id, column, context.rhsColumns);
  if (context.type !== 'solve') return new RunNotFoundError(id, algorithm, `${context.type} jobs run no algorithms (submit a solve job)`);
  if (!context.algorithms.includes(algorithm)) {
    return new RunNotFoundError(id, algorithm, `it was not requested (the job runs ${context.algorithms.join(', ') || 'no algorithms'})`);
  }
  if (context.status === 'queued' || context.status === 'running')
    return new RunNotFoundError(id, algorithm, `the job is ${context.status}; runs are stored when it ends`);
  if (context.status === 'cancelled') return new RunNotFoundError(id, algorithm, 'the job was cancelled before this run started');
  if (context.status === 'failed') return new RunNotFoundError(id, algorithm, 'the job failed before this run');
  return new RunNotFoundError(id, algorithm, 'its stored output has expired');
}
