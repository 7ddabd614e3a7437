/**
 * A BullMQ Worker whose sandboxed attempts have a time limit and a memory ceiling, enforced from the
 * worker process: a job computing past JOB_TIMEOUT_MS (once its child reports the computation done,
 * ./attemptComputed.ts, writing the outcome has WRITING_ALLOWANCE_MS), or whose child process holds more than
 * JOB_MEMORY_LIMIT_MB resident, is recorded as failed (by the caller's `onLimit`), then its child is
 * killed (SIGKILL). Killing is what frees the slot reliably: a cancel message reaches a child only
 * between two time slices, and a CPU-bound native call (a large factorization) holds its event loop
 * for as long as it runs. The attempt then fails with an UnrecoverableError (never retried), and
 * BullMQ forks a fresh child for the next job.
 *
 * Which child runs which job is BullMQ's business (its ChildPool, retained by `sandbox` for each
 * attempt). `createSandbox` is BullMQ's documented extension point; the pool handed to it here
 * delegates to the Worker's own pool and notes, through an AsyncLocalStorage, the child retained in
 * each attempt's async context.
 *
 * An optional gate (./apiKeys/fairShare.ts) sees each job the worker takes before a child runs it, and
 * may put it back in the queue: the attempt then ends with BullMQ's WaitingError (nothing counted).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { UnrecoverableError, WaitingError, Worker, type Child, type ChildPool, type Job, type Processor, type WorkerOptions } from 'bullmq';
import type { SlotGate } from './apiKeys/fairShare.js';
import { isComputedMessage } from './attemptComputed.js';
import { residentBytes } from './residentMemory.js';

export interface AttemptLimits {
  /** Longest computation of an attempt, from the moment the worker hands it to a child (JOB_TIMEOUT_MS). */
  timeoutMs: number;
  /** Most resident bytes of an attempt's child process (JOB_MEMORY_LIMIT_MB). */
  memoryBytes: number;
  /** How often the child's resident set is read. */
  memoryPollMs?: number;
}

export type LimitKind = 'time-limit' | 'memory-limit';

export interface LimitBreach {
  kind: LimitKind;
  /** A sentence for the job's problem detail. */
  detail: string;
}

/**
 * Records the breach (e.g. the job document set to failed); its child is killed once it resolves.
 * Must not throw (a rejection is ignored: the child is killed all the same).
 */
export type LimitHandler<DataType> = (job: Job<DataType>, breach: LimitBreach) => Promise<void>;

/** An attempt in progress: the child that runs it, once retained, and what its report of a finished computation does. */
interface Attempt {
  child: Child | null;
  computed?: () => void;
  listener?: (message: unknown) => void;
}

/** Each attempt's record, in the async context of its processFn call (where `sandbox` retains its child). */
const currentAttempt = new AsyncLocalStorage<Attempt>();

const DEFAULT_MEMORY_POLL_MS = 250;
/**
 * Once an attempt has computed (./attemptComputed.ts), how long at least its outcome may take to be written before the
 * time limit ends it: Redis's own limits (a command times out after 15 s, a lock after LOCK_DURATION_MS) end a write
 * that cannot be made well before.
 */
export const WRITING_ALLOWANCE_MS = 120_000;
/** After a breach is recorded, how long an attempt that is just finishing may take before its child is killed. */
const FINISHING_GRACE_MS = 1000;

export class LimitedWorker<DataType, ResultType> extends Worker<DataType, ResultType> {
  private readonly limits: AttemptLimits;
  private readonly onLimit: LimitHandler<DataType>;
  private readonly gate: SlotGate<DataType> | null;
  private readonly processorFile: string;

  /** `gate`: decides, before a child runs it, whether a job the worker took keeps its slot (./apiKeys/fairShare.ts). */
  constructor(
    name: string,
    processorFile: string,
    opts: WorkerOptions,
    limits: AttemptLimits,
    onLimit: LimitHandler<DataType>,
    gate: SlotGate<DataType> | null = null,
  ) {
    super(name, processorFile, opts);
    this.processorFile = processorFile;
    this.limits = limits;
    this.onLimit = onLimit;
    this.gate = gate;
  }

  /**
   * Start `count` child processes now, before any job, and leave them in BullMQ's pool for the first
   * jobs: those then wait for no process to start and load the processor (about a second).
   */
  async prestart(count: number): Promise<void> {
    const pool = (this as unknown as { childPool?: ChildPool }).childPool;
    if (!pool) return;
    // The sandbox retains children under the processor file the worker was given.
    const children = await Promise.all(Array.from({ length: count }, () => pool.retain(this.processorFile)));
    for (const child of children) pool.release(child);
  }

  protected override createSandbox(processor: string | URL | null | Processor<DataType, ResultType>): void {
    // BullMQ keeps its pool private; `sandbox` only calls retain and release on it.
    const self = this as unknown as { childPool?: ChildPool };
    const pool = self.childPool;
    if (!pool) {
      super.createSandbox(processor);
      return;
    }
    const tracking = {
      async retain(file: string): Promise<Child> {
        const child = await pool.retain(file);
        const attempt = currentAttempt.getStore();
        if (attempt) {
          attempt.child = child;
          attempt.listener = (message: unknown) => {
            if (isComputedMessage(message)) attempt.computed?.();
          };
          child.on('message', attempt.listener);
        }
        return child;
      },
      release: (child: Child) => pool.release(child),
    };
    self.childPool = tracking as unknown as ChildPool;
    super.createSandbox(processor);
    self.childPool = pool;
    const sandboxed = this.processFn;
    const limited: Processor<DataType, ResultType> = (job, token, signal) => {
      const attempt: Attempt = { child: null };
      return currentAttempt.run(attempt, () => this.runLimited(attempt, pool, () => sandboxed(job, token, signal), job));
    };
    this.processFn = async (job, token, signal) => {
      // Set after super() returns, as createSandbox runs inside it.
      const gate = this.gate;
      if (!gate || token === undefined) return limited(job, token, signal);
      const leave = await gate.enter(job, token);
      // The gate put the job back in the queue: BullMQ neither completes nor fails it, and takes the next.
      if (!leave) throw new WaitingError();
      try {
        return await limited(job, token, signal);
      } finally {
        leave();
      }
    };
  }

  private async runLimited(attempt: Attempt, pool: ChildPool, run: () => Promise<ResultType>, job: Job<DataType>): Promise<ResultType> {
    const { timeoutMs, memoryBytes } = this.limits;
    let settled = false;
    let breach: LimitBreach | null = null;
    let settle: () => void = () => undefined;
    const settledSignal = new Promise<void>((resolve) => (settle = resolve));

    const enforce = async (found: LimitBreach): Promise<void> => {
      if (breach || settled) return;
      breach = found;
      clearTimeout(timer);
      clearInterval(poll);
      await this.onLimit(job, found).catch(() => undefined);
      // An attempt that finished meanwhile (its outcome recorded first) is left to end by itself.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([settledSignal, new Promise<void>((resolve) => (grace = setTimeout(resolve, FINISHING_GRACE_MS)))]);
      clearTimeout(grace);
      if (!settled && attempt.child) await pool.kill(attempt.child, 'SIGKILL');
    };

    const began = Date.now();
    const overTime = (): void => {
      void enforce({ kind: 'time-limit', detail: `The job ran longer than ${timeoutMs} ms (JOB_TIMEOUT_MS) and was stopped.` });
    };
    let timer = setTimeout(overTime, timeoutMs);
    // Computed: the rest is writing its outcome, the store's time, not the job's.
    attempt.computed = () => {
      if (breach || settled) return;
      clearTimeout(timer);
      timer = setTimeout(overTime, Math.max(timeoutMs - (Date.now() - began), WRITING_ALLOWANCE_MS));
    };
    let reading = false;
    const poll = setInterval(() => {
      const pid = attempt.child?.pid;
      if (reading || pid === undefined) return;
      reading = true;
      void residentBytes(pid)
        .then((bytes) => {
          if (bytes !== null && bytes > memoryBytes) {
            const mib = (value: number): string => `${Math.round(value / 2 ** 20)} MiB`;
            return enforce({
              kind: 'memory-limit',
              detail: `The job's process held ${mib(bytes)} of memory, more than ${mib(memoryBytes)} (JOB_MEMORY_LIMIT_MB), and was stopped.`,
            });
          }
        })
        .finally(() => (reading = false));
    }, this.limits.memoryPollMs ?? DEFAULT_MEMORY_POLL_MS);

    try {
      return await run();
    } catch (error) {
      const found = breach as LimitBreach | null;
      if (found) throw new UnrecoverableError(found.detail);
      throw error;
    } finally {
      settled = true;
      settle();
      clearTimeout(timer);
      clearInterval(poll);
      if (attempt.child && attempt.listener) attempt.child.off('message', attempt.listener);
    }
  }
}
