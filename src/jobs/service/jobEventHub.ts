/**
 * Job events for the API's subscribers (SSE) and listeners of finished jobs (metrics: the job's summary):
 * - status: every document writer publishes the document's fields on the status channel as it
 *   writes them (see ../store/scripts.ts), and subscribers get the job built from the message;
 *   their statuses are also re-read every few seconds, in case a message was lost across a reconnect;
 * - progress: the running job's reports, published on the same channel as they are stored
 *   (scripts.lssProgress; an object where status messages are arrays).
 *
 * Events are not buffered here: until a subscriber has had its first status event (the state read
 * at subscription time), progress events are dropped (the next one follows within
 * PROGRESS_INTERVAL_MS) and a status change only marks it stale, and it gets the job read again
 * right after. Status events are snapshots of the document, so reading it again loses nothing.
 *
 * List-wide subscribers (subscribeAll, for GET /v1/events) get every job's changes: the summary
 * built from the status message itself (no read per change) and every progress report.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { JobNotFoundError } from '../errors.js';
import {
  fieldsFromStatusMessage,
  jobFromDocument,
  jobViewFromDocument,
  progressFromStatusMessage,
  summaryOf,
} from '../store/jobDocument.js';
import { closeConnection, subscribeWhenReady } from '../store/redisConnection.js';
import { STATUS_FIELDS } from '../store/scripts.js';
import {
  FINISHED_STATUSES,
  type AnyJobEvent,
  type JobEvent,
  type JobProgress,
  type JobStatus,
  type JobSummary,
  type JobView,
} from '../types.js';

/** Subscribers' statuses are re-read this often, in case a status message was lost (reconnects). */
const STATUS_RESYNC_MS = 5000;

interface Subscription {
  listener: (event: JobEvent) => void;
  /** The status last sent; null until the first status event. */
  lastStatus: JobStatus | null;
  /** A status change came before the first status event: read the job again after it. */
  stale: boolean;
}

export class JobEventHub {
  private readonly subscriptions = new Map<string, Set<Subscription>>();
  private readonly finishedListeners = new Set<(job: JobSummary) => void>();
  private readonly allListeners = new Set<(event: AnyJobEvent) => void>();
  private readonly resyncTimer: NodeJS.Timeout;

  /**
   * @param statusSubscriber a subscriber connection of its own (./store/redisConnection.ts), closed by close()
   * @param readJob the job as GET sends it, its result as stored (throws JobNotFoundError, StoreUnavailableError)
   * @param resyncMs how often subscribers' statuses are re-read
   */
  constructor(
    private readonly statusSubscriber: Redis,
    private readonly statusChannel: string,
    private readonly readJob: (id: string) => Promise<JobView>,
    private readonly log: Logger,
    resyncMs = STATUS_RESYNC_MS,
  ) {
    statusSubscriber.on('message', (_channel: string, message: string) => this.onStatusMessage(message));
    this.resyncTimer = setInterval(() => {
      for (const id of this.subscriptions.keys()) this.refresh(id);
    }, resyncMs);
    this.resyncTimer.unref();
  }

  /**
   * Subscribe to the status channel (again after every reconnect). Status messages published
   * before the subscription is active are missed: false when it is still pending after `timeoutMs`.
   */
  listen(timeoutMs: number): Promise<boolean> {
    return subscribeWhenReady(this.statusSubscriber, this.statusChannel, timeoutMs);
  }

  /** See JobService.subscribe. */
  async subscribe(id: string, listener: (event: JobEvent) => void): Promise<() => void> {
    const subscription: Subscription = { listener, lastStatus: null, stale: false };
    let set = this.subscriptions.get(id);
    if (!set) this.subscriptions.set(id, (set = new Set()));
    set.add(subscription);
    const unsubscribe = (): void => {
      const current = this.subscriptions.get(id);
      current?.delete(subscription);
      if (current?.size === 0) this.subscriptions.delete(id);
    };
    try {
      // Registered before reading, so that a change after the read is not missed.
      const view = await this.readJob(id);
      subscription.lastStatus = view.job.status;
      this.call(subscription, statusEvent(view));
      if (subscription.stale) this.refresh(id);
      return unsubscribe;
    } catch (error) {
      unsubscribe();
      throw error;
    }
  }

  /** See JobService.subscribeAll. */
  subscribeAll(listener: (event: AnyJobEvent) => void): Promise<() => void> {
    this.allListeners.add(listener);
    return Promise.resolve(() => this.allListeners.delete(listener));
  }

  /** See JobService.onFinished. */
  onFinished(listener: (job: JobSummary) => void): () => void {
    this.finishedListeners.add(listener);
    return () => this.finishedListeners.delete(listener);
  }

  async close(): Promise<void> {
    clearInterval(this.resyncTimer);
    this.subscriptions.clear();
    this.finishedListeners.clear();
    this.allListeners.clear();
    await closeConnection(this.statusSubscriber);
  }

  private deliver(subscription: Subscription, event: JobEvent): void {
    if (subscription.lastStatus === null) {
      if (event.event === 'status') subscription.stale = true;
      return;
    }
    if (event.event === 'status') {
      if (event.data.status === subscription.lastStatus) return;
      subscription.lastStatus = event.data.status;
    }
    this.call(subscription, event);
  }

  private call(subscription: Subscription, event: JobEvent): void {
    try {
      subscription.listener(event);
    } catch (err) {
      this.log.warn({ err }, 'job event listener threw');
    }
  }

  /** Read the job and send its status to its subscribers (those it has not been sent to). */
  private refresh(id: string, ifGone?: JobView): void {
    const send = (view: JobView): void => {
      for (const subscription of this.subscriptions.get(id) ?? []) this.deliver(subscription, statusEvent(view));
    };
    this.readJob(id)
      .then(send)
      .catch((err: unknown) => {
        // Deleted since its message (`ifGone`: what the message had, a long result left out): the stream still ends.
        if (err instanceof JobNotFoundError) {
          if (ifGone) send(ifGone);
        } else this.log.debug({ err, jobId: id }, 'could not read the job after a status change');
      });
  }

  private onStatusMessage(message: string): void {
    const progress = progressFromStatusMessage(message);
    if (progress) return this.onProgress(progress.id, progress.progress);
    const status = fieldsFromStatusMessage(message, STATUS_FIELDS);
    if (!status) return;
    const { fields, leftOut } = status;
    // The message carries every field the job is shown from (STATUS_FIELDS): no read, for metrics or subscribers,
    // unless it left a long result out: then its subscribers get the job read.
    let summary: JobSummary | undefined;
    if (FINISHED_STATUSES.includes(fields.status as JobStatus))
      for (const listener of this.finishedListeners) listener((summary ??= summaryOf(fields)));
    if (leftOut.length > 0) {
      if (this.subscriptions.has(fields.id)) this.refresh(fields.id, { job: jobFromDocument(fields) });
    } else {
      let view: JobView | undefined;
      for (const subscription of this.subscriptions.get(fields.id) ?? [])
        this.deliver(subscription, statusEvent((view ??= jobViewFromDocument(fields))));
    }
    if (this.allListeners.size > 0) {
      this.callAll({ event: 'status', job: summary ?? summaryOf(fields) });
    }
  }

  private callAll(event: AnyJobEvent): void {
    for (const listener of this.allListeners) {
      try {
        listener(event);
      } catch (err) {
        this.log.warn({ err }, 'job event listener threw');
      }
    }
  }

  private onProgress(jobId: string, progress: JobProgress): void {
    for (const subscription of this.subscriptions.get(jobId) ?? []) this.deliver(subscription, { event: 'progress', data: progress });
    if (this.allListeners.size > 0) this.callAll({ event: 'progress', id: jobId, progress });
  }
}

/** A status event of the job as read, its result (when stored as such) beside data.job as the stored text. */
function statusEvent({ job, resultJson }: JobView): JobEvent {
  return { event: 'status', data: { status: job.status, job }, ...(resultJson === undefined ? {} : { resultJson }) };
}
