/**
 * The events of one list-wide stream (GET /v1/events): every job's and study's status changes and
 * progress, as one caller may see them (a key's own; an admin key and AUTH_MODE=none all), filtered
 * by status, after a first snapshot.
 *
 * Nothing is missed between the snapshot and the live events: the hubs are subscribed to first, and
 * their events wait in one queue until the snapshot is sent. An event that the snapshot already
 * shows is sent again (a status event is the whole summary, so a repeat is harmless). A reconnecting
 * client gets a fresh snapshot: a job it showed unfinished that is neither there nor in a later
 * event has finished (or was deleted) meanwhile, and GET /v1/jobs/{id} says which.
 */
import { JobNotFoundError } from '../jobs/errors.js';
import { summaryOf } from '../jobs/studies/studyView.js';
import type { AnyStudyEvent, StudyService, StudySummary } from '../jobs/studies/types.js';
import { FINISHED_STATUSES, type AnyJobEvent, type JobService, type JobStatus, type JobSummary } from '../jobs/types.js';
import type { ListEvent, ListSnapshot } from './schemas/listEvent.js';

/** Most jobs (and, separately, studies) a snapshot lists per status. */
export const SNAPSHOT_LIMIT = 100;
/** The snapshot's statuses when the stream is not filtered: those that still change. */
const UNFINISHED: JobStatus[] = ['queued', 'running'];

export interface ListEventFeedOptions {
  jobs: JobService;
  studies: StudyService | null;
  /** The key whose jobs and studies the caller sees; undefined: everyone's. */
  owner: string | undefined;
  status: JobStatus | undefined;
  /** Called once a task failed (a store error while checking a job's owner): the event is dropped. */
  onError: (err: unknown) => void;
}

export class ListEventFeed {
  /** Jobs whose owner was checked (tenant streams only): dropped once the job finishes. */
  private readonly visibleJobs = new Map<string, Promise<boolean>>();
  /** The status last sent of each unfinished job ('job:<id>') and study ('study:<id>'). */
  private readonly lastStatus = new Map<string, JobStatus>();
  /** Events are handled one after the other, in arrival order, the first ones behind the snapshot. */
  private queue: Promise<void>;
  private releaseQueue: () => void = () => undefined;
  private closed = false;

  constructor(private readonly options: ListEventFeedOptions) {
    this.queue = new Promise((resolve) => (this.releaseQueue = resolve));
  }

  /** Subscribe, send the snapshot, then every event; resolves to the unsubscribe function. */
  async open(deliver: (event: ListEvent) => void): Promise<() => void> {
    const { jobs, studies } = this.options;
    const unsubscribeJobs = await jobs.subscribeAll((event) => this.enqueue(() => this.onJob(event, deliver)));
    const unsubscribeStudies = studies?.subscribeAll?.((event) => this.enqueue(() => this.onStudy(event, deliver))) ?? (() => undefined);
    const close = (): void => {
      this.closed = true;
      unsubscribeJobs();
      unsubscribeStudies();
    };
    try {
      const snapshot = await this.snapshot();
      for (const job of snapshot.jobs) this.remember(`job:${job.id}`, job.status);
      for (const study of snapshot.studies) this.remember(`study:${study.id}`, study.status);
      deliver({ event: 'snapshot', data: snapshot });
    } catch (error) {
      close();
      throw error;
    }
    this.releaseQueue();
    return close;
  }

  private enqueue(task: () => Promise<void> | void): void {
    this.queue = this.queue.then(() => (this.closed ? undefined : task())).catch(this.options.onError);
  }

  private async snapshot(): Promise<ListSnapshot> {
    const { jobs, studies, owner, status } = this.options;
    const statuses = status ? [status] : UNFINISHED;
    const jobPages = await Promise.all(statuses.map((s) => jobs.list({ status: s, limit: SNAPSHOT_LIMIT, owner })));
    const studyPages = studies
      ? await Promise.all(statuses.map((s) => studies.list({ status: s, limit: SNAPSHOT_LIMIT }, owner ?? null)))
      : [];
    const newestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number =>
      b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id);
    return {
      jobs: jobPages.flatMap((page) => page.items).sort(newestFirst),
      studies: studyPages.flatMap((page) => page.items).sort(newestFirst),
      truncated: [...jobPages, ...studyPages].some((page) => page.nextCursor !== null),
    };
  }

  private async onJob(event: AnyJobEvent, deliver: (event: ListEvent) => void): Promise<void> {
    if (event.event === 'status') {
      const job: JobSummary = event.job;
      const visible = await this.canSeeJob(job.id);
      if (FINISHED_STATUSES.includes(job.status)) this.visibleJobs.delete(job.id);
      if (visible && this.passes(`job:${job.id}`, job.status))
        deliver({ event: 'status', data: { kind: 'job', id: job.id, status: job.status, job } });
    } else if (this.wantsProgress() && (await this.canSeeJob(event.id))) {
      deliver({ event: 'progress', data: { kind: 'job', id: event.id, progress: event.progress } });
    }
  }

  private onStudy({ event, study }: AnyStudyEvent, deliver: (event: ListEvent) => void): void {
    const { owner } = this.options;
    if (owner !== undefined && study.owner !== owner) return;
    if (event === 'progress' && study.status === 'running') {
      if (this.wantsProgress()) {
        const { done, total } = study.progress;
        deliver({ event: 'progress', data: { kind: 'study', id: study.id, progress: { done, total } } });
      }
      return;
    }
    const summary: StudySummary = summaryOf(study);
    if (this.passes(`study:${study.id}`, study.status))
      deliver({ event: 'status', data: { kind: 'study', id: study.id, status: study.status, study: summary } });
  }

  /**
   * Whether a status is news for this stream: a change from the status last sent, that enters or
   * leaves the filtered status (any change without a filter).
   */
  private passes(key: string, status: JobStatus): boolean {
    const previous = this.lastStatus.get(key);
    if (previous === status) return false;
    this.remember(key, status);
    const filter = this.options.status;
    return filter === undefined || status === filter || previous === filter;
  }

  private remember(key: string, status: JobStatus): void {
    if (FINISHED_STATUSES.includes(status)) this.lastStatus.delete(key);
    else this.lastStatus.set(key, status);
  }

  private wantsProgress(): boolean {
    return this.options.status === undefined || this.options.status === 'running';
  }

  /** Whether the job is the caller's (always, for an admin key and AUTH_MODE=none). */
  private canSeeJob(id: string): Promise<boolean> {
    const { jobs, owner } = this.options;
    if (owner === undefined) return Promise.resolve(true);
    let visible = this.visibleJobs.get(id);
    if (!visible) {
      visible = jobs.get(id, owner).then(
        () => true,
        (error: unknown) => {
          if (error instanceof JobNotFoundError) return false;
          this.visibleJobs.delete(id);
          throw error;
        },
      );
      this.visibleJobs.set(id, visible);
    }
    return visible;
  }
}
