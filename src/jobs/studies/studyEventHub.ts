/**
 * Study events for the API's subscribers (SSE): one subscription to the studies' event channel per
 * API process; a message "<id> status|progress" makes the hub read the study once and hand the
 * event to that study's listeners. List-wide listeners (addAll, for GET /v1/events) get every
 * study's changes, the study read once per message for all of them.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeConnection, subscribeWhenReady } from '../store/redisConnection.js';
import type { AnyStudyEvent, Study, StudyEvent } from './types.js';

export class StudyEventHub {
  private readonly listeners = new Map<string, Set<(event: StudyEvent) => void>>();
  private readonly allListeners = new Set<(event: AnyStudyEvent) => void>();

  constructor(
    private readonly subscriber: Redis,
    private readonly channel: string,
    /** The study now, or null once it is gone. */
    private readonly read: (id: string) => Promise<Study | null>,
    private readonly log: Logger,
  ) {
    subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      const [id, kind] = message.split(' ');
      if (this.listeners.has(id) || this.allListeners.size > 0) this.deliver(id, kind === 'progress' ? 'progress' : 'status');
    });
  }

  listen(timeoutMs: number): Promise<boolean> {
    return subscribeWhenReady(this.subscriber, this.channel, timeoutMs);
  }

  add(id: string, listener: (event: StudyEvent) => void): () => void {
    const set = this.listeners.get(id) ?? new Set();
    set.add(listener);
    this.listeners.set(id, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(id);
    };
  }

  /** Every study's changes until the returned function is called. */
  addAll(listener: (event: AnyStudyEvent) => void): () => void {
    this.allListeners.add(listener);
    return () => this.allListeners.delete(listener);
  }

  private deliver(id: string, kind: 'status' | 'progress'): void {
    this.read(id)
      .then((study) => {
        if (!study) return;
        for (const listener of this.allListeners) listener({ event: kind, study });
        const set = this.listeners.get(id);
        if (!set) return;
        const event: StudyEvent =
          kind === 'progress' ? { event: 'progress', data: study.progress } : { event: 'status', data: { status: study.status, study } };
        for (const listener of set) listener(event);
      })
      .catch((err: unknown) => this.log.warn({ err, studyId: id }, 'could not read a study for its event'));
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.allListeners.clear();
    await closeConnection(this.subscriber);
  }
}
