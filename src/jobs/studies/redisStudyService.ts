/**
 * StudyService over Redis and BullMQ, for the API process. A study is validated and planned
 * (./studyQueues.ts limits: 413/422 before anything is stored or queued), stored, then queued as
 * one BullMQ flow: a parent in the parents' queue whose children are the plan's chunks. Children
 * run on any worker (retried with backoff when they fail or their worker dies); a child that fails
 * for good does not block the parent (ignoreDependencyOnFailure), whose aggregation then reports
 * its samples as failed.
 *
 * A study over a stored matrix (`matrix: { format: 'stored', id }`) is planned with the matrix's
 * document (a tenant sees only its own matrices: another key's is a 404, as for jobs) and copies the
 * matrix's CSR under its own keys when it is created (StudyStore.copyMatrix): deleting the matrix,
 * or its expiry, never changes a study already created; the copy is deleted when the study ends.
 */
import { FlowProducer, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { planStudy, type StudyPlan } from '../../solvers/studies/plan.js';
import type { StudyRequest } from '../../solvers/studies/presets.js';
import type { StudyMatrix } from '../../solvers/studies/storedMatrix.js';
import { MatrixNotFoundError } from '../errors.js';
import { JOB_ID_PATTERN, newJobId } from '../jobId.js';
import { hasLabels, pageOfIndex } from '../service/listCursor.js';
import type { WebhookTarget } from '../types.js';
import { MatrixStore } from '../store/matrixStore.js';
import {
  closeBullmq,
  closeConnection,
  createFailFastConnection,
  createSubscriberConnection,
  logConnectionErrors,
  storeCall,
  waitUntilConnected,
} from '../store/redisConnection.js';
import { StudyNotFinishedError, StudyNotFoundError } from './errors.js';
import { samplesCsv } from './samplesCsv.js';
import { StudyEventHub } from './studyEventHub.js';
import { planOfRecord } from './studyPlan.js';
import { chunkJobId, studyLimits, studyQueueNames, type StudyChunkData, type StudyParentData } from './studyQueues.js';
import { StudyStore, type StoredStudy } from './studyStore.js';
import { studyOf, summaryOf } from './studyView.js';
import {
  FINISHED_STUDY_STATUSES,
  type AnyStudyEvent,
  type Study,
  type StudyEvent,
  type StudyPage,
  type StudyService,
  type StudyStatus,
} from './types.js';

const START_WAIT_MS = 5000;
/**
 * Plans kept by study id. A study's record never changes, so neither does its plan; planning
 * Experiment 1 takes ~2 ms, which every GET, list row and progress event would otherwise repeat
 * (a client polling a running study then costs the API process a core's tenth, taken from the workers).
 */
const PLAN_CACHE_SIZE = 256;

export class RedisStudyService implements StudyService {
  private closed = false;
  private readonly plans = new Map<string, StudyPlan>();

  private constructor(
    private readonly config: Config,
    private readonly store: StudyStore,
    private readonly flow: FlowProducer,
    private readonly parents: Queue<StudyParentData>,
    private readonly hub: StudyEventHub,
    private readonly connections: Redis[],
    /** The stored matrices (POST /v1/matrices) studies may name. */
    private readonly matrices: MatrixStore,
  ) {}

  static async start(config: Config, logger: Logger): Promise<RedisStudyService> {
    if (!config.REDIS_URL) throw new Error('RedisStudyService needs REDIS_URL');
    const log = logger.child({ component: 'studies' });
    const commands = createFailFastConnection(config.REDIS_URL, 'lss-api-studies');
    const queueConnection = createFailFastConnection(config.REDIS_URL, 'lss-api-studies-queue');
    const subscriber = createSubscriberConnection(config.REDIS_URL, 'lss-api-studies-events');
    logConnectionErrors(commands, log, 'studies');
    logConnectionErrors(queueConnection, log, 'studies queue');
    const store = new StudyStore(commands, config.KEY_PREFIX, config.STUDY_QUEUE_NAME, config.JOB_TTL_SECONDS);
    const names = studyQueueNames(config);
    const flow = new FlowProducer({ connection: queueConnection, prefix: config.KEY_PREFIX });
    const parents = new Queue<StudyParentData>(names.parents, { connection: queueConnection, prefix: config.KEY_PREFIX });
    flow.on('error', (err: Error) => log.debug({ err: err.message }, 'flow producer error'));
    parents.on('error', (err: Error) => log.debug({ err: err.message }, 'study queue error'));
    let service: RedisStudyService | null = null;
    const hub = new StudyEventHub(subscriber, store.keys.events, (id) => service!.read(id), log);
    const matrices = new MatrixStore(commands, config.KEY_PREFIX, config.QUEUE_NAME);
    service = new RedisStudyService(config, store, flow, parents, hub, [queueConnection, commands], matrices);
    await Promise.all([waitUntilConnected(commands, START_WAIT_MS), hub.listen(START_WAIT_MS)]);
    return service;
  }

  private plan(stored: StoredStudy): StudyPlan {
    const { id } = stored.record;
    let plan = this.plans.get(id);
    if (!plan) {
      plan = planOfRecord(stored.record, this.config);
      // Oldest first out (Map keeps insertion order).
      if (this.plans.size >= PLAN_CACHE_SIZE) this.plans.delete(this.plans.keys().next().value!);
      this.plans.set(id, plan);
    }
    return plan;
  }

  /** The study, or null when it does not exist (any owner). */
  private async read(id: string): Promise<Study | null> {
    const stored = JOB_ID_PATTERN.test(id) ? await this.store.get(id) : null;
    return stored ? studyOf(this.plan(stored), stored) : null;
  }

  /** The document of stored matrix `id` as `requester` may see it (null: any owner's); MatrixNotFoundError (404) otherwise. */
  private async storedMatrix(id: string, requester: string | null): Promise<StudyMatrix> {
    return storeCall(async () => {
      const owner = JOB_ID_PATTERN.test(id) ? await this.matrices.owner(id) : null;
      if (owner === null || (requester !== null && owner !== requester)) throw new MatrixNotFoundError(id, ' (named by the study)');
      // Renewed as a job naming it renews it (the study itself computes on its own copy).
      const matrix = await this.matrices.use(id, this.config.MATRIX_TTL_SECONDS ?? this.config.JOB_TTL_SECONDS);
      if (!matrix) throw new MatrixNotFoundError(id, ' (named by the study)');
      return { id: matrix.id, n: matrix.n, nnz: matrix.nnz };
    });
  }

  /** The stored study, if it exists and the requester may see it (a key sees its own; no key sees all). */
  private async visible(id: string, requester: string | null): Promise<StoredStudy> {
    const stored = JOB_ID_PATTERN.test(id) ? await this.store.get(id) : null;
    if (!stored || (requester !== null && stored.record.owner !== requester)) throw new StudyNotFoundError(id);
    return stored;
  }

  async create(
    request: StudyRequest,
    owner: string | null,
    checkSamples?: (samples: number) => void,
    requester: string | null = owner,
    notify: WebhookTarget | null = null,
  ): Promise<Study> {
    const named = 'preset' in request ? undefined : request.matrix;
    const matrix = named ? await this.storedMatrix(named.id, requester) : null;
    // Throws InvalidParameterError (422) or ProblemTooLargeError (413) before anything is stored.
    const plan = planStudy(request, studyLimits(this.config), matrix);
    checkSamples?.(plan.points.length * plan.definition.samples);
    return storeCall(async () => {
      const now = Date.now();
      const id = newJobId(now);
      const chunks = plan.chunks.map((chunk): [number, number, number] => [chunk.group, chunk.start, chunk.end]);
      // The matrix may have been deleted since it was read: then nothing is copied and nothing stored.
      if (matrix && !(await this.store.copyMatrix(id, this.matrices.keys, matrix.id, requester)))
        throw new MatrixNotFoundError(matrix.id, ' (named by the study)');
      await this.store
        .create({ id, owner, createdAt: new Date(now).toISOString(), request, chunks, ...(matrix ? { matrix } : {}) }, notify)
        .catch(async (error: unknown) => {
          await this.store.remove(id, owner).catch(() => undefined);
          throw error;
        });
      const names = studyQueueNames(this.config);
      const retention = { removeOnComplete: { age: this.config.JOB_TTL_SECONDS }, removeOnFail: { age: this.config.JOB_TTL_SECONDS } };
      try {
        await this.flow.add({
          name: 'study',
          queueName: names.parents,
          data: { id } satisfies StudyParentData,
          opts: {
            jobId: id,
            attempts: this.config.JOB_ATTEMPTS,
            backoff: { type: 'exponential', delay: this.config.JOB_BACKOFF_MS },
            ...retention,
          },
          children: plan.chunks.map((chunk) => ({
            name: 'chunk',
            queueName: names.chunks,
            data: { id, chunk: chunk.index } satisfies StudyChunkData,
            opts: {
              jobId: chunkJobId(id, chunk.index),
              attempts: this.config.JOB_ATTEMPTS,
              backoff: { type: 'exponential', delay: this.config.JOB_BACKOFF_MS },
              // A chunk failed for good is reported by the parent's aggregation, not a reason to drop the study.
              ignoreDependencyOnFailure: true,
              ...retention,
            },
          })),
        });
      } catch (error) {
        await this.store.remove(id, owner).catch(() => undefined);
        throw error;
      }
      const stored = await this.store.get(id);
      return studyOf(plan, stored!);
    });
  }

  async get(id: string, requester: string | null): Promise<Study> {
    return storeCall(async () => {
      const stored = await this.visible(id, requester);
      return studyOf(this.plan(stored), stored);
    });
  }

  async list(
    query: { status?: StudyStatus; labels?: [string, string][]; limit: number; cursor?: string },
    requester: string | null,
  ): Promise<StudyPage> {
    const labels = query.labels ?? [];
    return storeCall(async () => {
      const page = await pageOfIndex<StoredStudy>(
        {
          indexPage: (before, count) => this.store.indexPage(before, count, requester),
          items: (ids) => Promise.all(ids.map((id) => this.store.get(id))),
          drop: (ids) => this.store.forget(ids, requester),
        },
        { limit: query.limit, cursor: query.cursor, filtered: query.status !== undefined || labels.length > 0, list: 'GET /v1/studies' },
        (stored) =>
          (requester === null || stored.record.owner === requester) &&
          (!query.status || stored.status === query.status) &&
          hasLabels(stored.record.request.labels ?? {}, labels),
      );
      return { items: page.items.map((stored) => summaryOf(studyOf(this.plan(stored), stored))), nextCursor: page.nextCursor };
    });
  }

  async cancel(id: string, requester: string | null): Promise<Study> {
    return storeCall(async () => {
      await this.visible(id, requester);
      if (await this.store.finish(id, 'cancelled')) await this.dropQueued(id);
      return this.get(id, requester);
    });
  }

  /** Remove the parent and the children no worker has taken (running ones stop at their next check). */
  private async dropQueued(id: string): Promise<void> {
    const parent = await this.parents.getJob(id);
    if (!parent) return;
    await parent.removeUnprocessedChildren().catch(() => undefined);
    // Fails while a child is still locked by its worker: that child then finds the study cancelled, and the parent has nothing to do.
    await parent.remove({ removeChildren: true }).catch(() => undefined);
  }

  async remove(id: string, requester: string | null): Promise<void> {
    return storeCall(async () => {
      const stored = await this.visible(id, requester);
      if (!FINISHED_STUDY_STATUSES.includes(stored.status))
        throw new StudyNotFinishedError(id, stored.status, 'cancel it before deleting it');
      await this.dropQueued(id);
      await this.store.remove(id, stored.record.owner);
      this.plans.delete(id);
    });
  }

  async samplesCsv(id: string, requester: string | null): Promise<string> {
    return storeCall(async () => {
      const stored = await this.visible(id, requester);
      return samplesCsv(this.plan(stored), await this.store.chunkOutcomes(id));
    });
  }

  async subscribe(id: string, requester: string | null, listener: (event: StudyEvent) => void): Promise<() => void> {
    return storeCall(async () => {
      const stored = await this.visible(id, requester);
      const unsubscribe = this.hub.add(id, listener);
      const study = studyOf(this.plan(stored), stored);
      listener({ event: 'status', data: { status: study.status, study } });
      return unsubscribe;
    });
  }

  subscribeAll(listener: (event: AnyStudyEvent) => void): () => void {
    return this.hub.addAll(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.hub.close();
    await Promise.all([closeBullmq(this.flow), closeBullmq(this.parents)]);
    await Promise.all(this.connections.map((connection) => closeConnection(connection)));
  }
}
