/**
 * JobService over Redis and BullMQ, for the API process: composed of
 * - JobRepository (./service/jobRepository.ts): create, get, list, cancel, remove, traces, solutions;
 * - JobEventHub (./service/jobEventHub.ts): status and progress events for subscribers (SSE) and
 *   finished jobs for metrics;
 * - ServiceHealth (./service/serviceHealth.ts): readiness and queue depth (/readyz, /metrics);
 * over three connections: the store's commands and the BullMQ queue's (each fail-fast, so that with
 * Redis down every call answers StoreUnavailableError at once and the API 503), and the status
 * channel's subscriber (job statuses and progress).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { AlgorithmId } from '../solvers/algorithms/registry.js';
import type { ApiKeyService, Tenant } from './apiKeys/apiKey.js';
import { ApiKeyStore } from './apiKeys/apiKeyStore.js';
import { TenantUsage } from './apiKeys/tenantUsage.js';
import { IdempotencyStore, type IdempotencyService } from './service/idempotencyStore.js';
import { JobEventHub } from './service/jobEventHub.js';
import { JobQueue } from './service/jobQueue.js';
import { JobRepository } from './service/jobRepository.js';
import { MatrixRepository } from './service/matrixRepository.js';
import { ServiceHealth } from './service/serviceHealth.js';
import { JobStore } from './store/jobStore.js';
import { MatrixStore } from './store/matrixStore.js';
import type { WorkerLimits } from './store/readyJob.js';
import {
  closeConnection,
  createFailFastConnection,
  createSubscriberConnection,
  logConnectionErrors,
  storeCall,
  waitUntilConnected,
} from './store/redisConnection.js';
import type {
  AnyJobEvent,
  Job,
  JobEvent,
  JobListQuery,
  JobMatrix,
  JobPage,
  JobSummary,
  JobView,
  JobPartition,
  JobService,
  JobSpec,
  MatrixService,
  TraceView,
} from './types.js';

/** How long start() waits for Redis before starting anyway (readiness then reports it). */
const START_WAIT_MS = 5000;

export class RedisJobService implements JobService {
  private closed = false;

  private constructor(
    private readonly jobs: JobRepository,
    private readonly events: JobEventHub,
    private readonly health: ServiceHealth,
    private readonly queue: JobQueue,
    /** The fail-fast connections, closed last. */
    private readonly connections: Redis[],
    readonly matrices: MatrixService,
    readonly keys: ApiKeyService,
    readonly idempotency: IdempotencyService,
    /** The workers' size limits: a job's generated matrix is generated again within them (matrix()). */
    private readonly limits: WorkerLimits,
  ) {}

  /** Connect, waiting up to START_WAIT_MS for Redis but starting anyway: the API answers 503 until it is reachable. */
  static async start(config: Config, logger: Logger): Promise<RedisJobService> {
    if (!config.REDIS_URL) throw new Error('RedisJobService needs REDIS_URL');
    const log = logger.child({ component: 'jobs' });
    const commands = createFailFastConnection(config.REDIS_URL, 'lss-api');
    const queueConnection = createFailFastConnection(config.REDIS_URL, 'lss-api-queue');
    const subscriber = createSubscriberConnection(config.REDIS_URL, 'lss-api-status');
    logConnectionErrors(commands, log, 'commands');
    logConnectionErrors(queueConnection, log, 'queue');
    logConnectionErrors(subscriber, log, 'status subscriber');

    const store = new JobStore(commands, config.KEY_PREFIX, config.QUEUE_NAME, config.JOB_TTL_SECONDS);
    const queue = new JobQueue(config, queueConnection, log);
    const usage = new TenantUsage(commands, store.keys);
    const jobs = new JobRepository(store, queue, log, {
      usage,
      ttlSeconds: config.JOB_TTL_SECONDS,
      traceCap: config.TRACE_CAP,
      smallJobMaxFlops: config.SMALL_JOB_MAX_FLOPS,
    });
    const events = new JobEventHub(subscriber, store.keys.statusChannel, (id) => jobs.view(id), log);
    const health = new ServiceHealth(commands, queue);
    const [reachable, queueUsable, listening] = await Promise.all([
      waitUntilConnected(commands, START_WAIT_MS),
      queue.waitUntilUsable(START_WAIT_MS),
      events.listen(START_WAIT_MS),
    ]);
    if (!reachable || !queueUsable) log.warn({ redis: config.REDIS_URL }, 'Redis not reachable yet; the API answers 503 until it is');
    else if (!listening) log.warn('status channel subscription pending');
    const matrices = new MatrixRepository(new MatrixStore(commands, config.KEY_PREFIX, config.QUEUE_NAME), config, usage);
    const keys = new ApiKeyStore(commands, config.KEY_PREFIX);
    // A claim outlives the longest upload (a request that died midway frees its key after this).
    const idempotency = new IdempotencyStore(
      commands,
      config.KEY_PREFIX,
      config.IDEMPOTENCY_TTL_SECONDS,
      config.UPLOAD_TIMEOUT_MS + 60_000,
    );
    return new RedisJobService(jobs, events, health, queue, [queueConnection, commands], matrices, keys, idempotency, {
      maxN: config.MAX_N,
      maxNSparse: config.MAX_N_SPARSE,
    });
  }

  create(spec: JobSpec, tenant?: Tenant | null): Promise<Job> {
    return this.jobs.create(spec, tenant);
  }

  get(id: string, owner?: string): Promise<Job> {
    return this.jobs.get(id, owner);
  }

  view(id: string, owner?: string): Promise<JobView> {
    return this.jobs.view(id, owner);
  }

  list(query: JobListQuery): Promise<JobPage> {
    return this.jobs.list(query);
  }

  cancel(id: string, owner?: string): Promise<JobView> {
    return this.jobs.cancel(id, owner);
  }

  remove(id: string, owner?: string): Promise<void> {
    return this.jobs.remove(id, owner);
  }

  trace(id: string, algorithm: AlgorithmId, owner?: string, column = 0): Promise<TraceView> {
    return this.jobs.trace(id, algorithm, owner, column);
  }

  partition(id: string, owner?: string): Promise<JobPartition> {
    return this.jobs.partition(id, owner);
  }

  matrix(id: string, owner?: string): Promise<JobMatrix> {
    return this.jobs.matrix(id, this.limits, owner);
  }

  solution(id: string, algorithm: AlgorithmId, owner?: string, column = 0): Promise<Float64Array> {
    return this.jobs.solution(id, algorithm, owner, column);
  }

  async subscribe(id: string, listener: (event: JobEvent) => void, owner?: string): Promise<() => void> {
    if (owner !== undefined) await storeCall(() => this.jobs.assertVisible(id, owner));
    return this.events.subscribe(id, listener);
  }

  subscribeAll(listener: (event: AnyJobEvent) => void): Promise<() => void> {
    return this.events.subscribeAll(listener);
  }

  onFinished(listener: (job: JobSummary) => void): () => void {
    return this.events.onFinished(listener);
  }

  isReady(): Promise<boolean> {
    return this.health.isReady();
  }

  queueCounts(): Promise<Record<string, number>> {
    return this.health.queueCounts();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.events.close();
    await this.queue.close();
    await Promise.all(this.connections.map((connection) => closeConnection(connection)));
  }
}
