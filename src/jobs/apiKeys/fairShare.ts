/**
 * A fair share of the workers between API keys. A running job is not preempted (its
 * checkpoints serve a retry after a crash, not time slicing), so a key that was alone and took every slot with long jobs would hold them until
 * they end, whatever the order of what waits. Two rules, both with BullMQ's open-source features:
 *
 * 1. Small-job slots. Each worker process runs, beside its WORKER_CONCURRENCY regular slots,
 *    SMALL_JOB_SLOTS slots of its own on a second queue (`<QUEUE_NAME>-small`, ../queuedJob.ts).
 *    A key's job goes there when it is the key's only job queued or running and it is predicted
 *    small from its size (./smallJobs.ts), so another key's first small job starts at once (the
 *    time to hand it to a child process) while long jobs of a flood hold every regular slot. The
 *    rule is decided at admission (../service/jobRepository.ts), atomically with the key's count.
 *    A flood cannot take these slots: its second job is no longer its key's only one.
 *
 * 2. A per-key cap while others wait (this class). When a regular slot takes a key's job and the key
 *    already holds WORKER_CONCURRENCY - 1 of this worker's regular slots, the job runs only if no
 *    other key has a job waiting in the queue; otherwise it goes back (BullMQ's `moveToWait` and
 *    `WaitingError`: no attempt is counted, the job document is untouched) right behind that other
 *    key's first waiting job, with the key's jobs that were ahead of it, in their order, and the slot
 *    takes the next job. One key alone still gets every slot. The cap is per worker process (each
 *    counts the jobs it runs, so nothing can drift when a process dies) and what waits is read
 *    from Redis, so several worker processes apply it without a coordinator.
 *
 * The BullMQ priority of a job (1 + its key's pending jobs, ./tenantUsage.ts) still orders what
 * waits: keys take turns.
 */
import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { QueuedJobData } from '../queuedJob.js';

/** BullMQ's largest priority (2^21). */
const PRIORITY_LIMIT = 2 ** 21;
/** Waiting jobs read, in queue order, looking for another key's: a key with more ahead keeps its turn. */
const SCAN_WINDOW = 200;

/** A regular slot's admission of the job it took (see LimitedWorker's gate). */
export interface SlotGate<DataType> {
  /**
   * The function to call when the job leaves the slot, or null when the job was put back in the
   * queue (the caller then throws WaitingError so that BullMQ takes the next one).
   */
  enter(job: Job<DataType>, token: string): Promise<(() => void) | null>;
}

export class FairShare implements SlotGate<QueuedJobData> {
  /** Owner -> jobs this worker process runs in its regular slots. */
  private readonly held = new Map<string, number>();
  /** Most regular slots of this worker one key may hold while another key's job waits. */
  readonly cap: number;

  /**
   * @param queue the jobs' main queue (a Queue of its own connection), read and reordered here
   * @param slots WORKER_CONCURRENCY
   */
  constructor(
    private readonly queue: Queue<QueuedJobData>,
    slots: number,
    private readonly log: Logger,
  ) {
    // With one slot there is nothing to share within the process: the queue's order decides.
    this.cap = Math.max(1, slots - 1);
  }

  /** Jobs of `owner` this process runs in its regular slots. */
  private holding(owner: string): number {
    return this.held.get(owner) ?? 0;
  }

  async enter(job: Job<QueuedJobData>, token: string): Promise<(() => void) | null> {
    const owner = job.data.owner;
    // Jobs without a key (AUTH_MODE=none, the parts of a split analysis) are not counted.
    if (owner === undefined) return () => undefined;
    const before = this.holding(owner);
    // Counted before any await: a job taken by another slot meanwhile sees this one.
    this.held.set(owner, before + 1);
    let left = false;
    const leave = (): void => {
      if (left) return;
      left = true;
      const count = this.holding(owner) - 1;
      if (count > 0) this.held.set(owner, count);
      else this.held.delete(owner);
    };
    if (before < this.cap) return leave;

    let waiting: Job<QueuedJobData>[];
    try {
      waiting = (await this.queue.getPrioritized(0, SCAN_WINDOW - 1)).filter((other): other is Job<QueuedJobData> => Boolean(other));
    } catch (err) {
      // Redis trouble: run the job rather than leave the slot idle.
      this.log.warn({ err, jobId: job.id }, 'fair share: could not read the waiting jobs; the job runs');
      return leave;
    }
    const first = waiting.findIndex((other) => other.data.owner !== undefined && other.data.owner !== owner);
    if (first < 0) return leave;

    const other = waiting[first];
    leave();
    await job.moveToWait(token);
    // Behind the other key's job: this one first (it was taken first), then the key's others that were ahead.
    const behind = Math.min(PRIORITY_LIMIT, other.priority + 1);
    try {
      for (const ahead of [job, ...waiting.slice(0, first)]) {
        if (ahead.priority < behind) await ahead.changePriority({ priority: behind });
      }
    } catch (err) {
      // Back in the queue all the same, at its own priority.
      this.log.warn({ err, jobId: job.id }, 'fair share: could not reorder the waiting jobs');
    }
    this.log.debug({ jobId: job.id, owner, before: other.id }, "fair share: job put back behind another key's");
    return null;
  }
}
