/**
 * `#/`: the jobs, newest first, filtered by status, a page at a time. Unfinished jobs are followed
 * live through their event streams (GET /v1/jobs/{id}/events), at most MAX_STREAMS at once (a
 * browser keeps about six connections per host over HTTP/1.1, and the page still needs some for its
 * requests): the oldest unfinished jobs first, as they start first; when one finishes, the next
 * one is followed.
 */
import { ProblemError, type ApiClient } from './apiClient.js';
import { isFinished, type Job, type JobPage, type JobStatus, type JobSummary, type StatusEvent, type JobProgress } from './apiTypes.js';
import { announce, clear, h } from './dom.js';
import { formatTime } from './format.js';
import { progressBar, statusBadge } from './statusBadge.js';
import type { View } from './view.js';

const MAX_STREAMS = 4;
const PAGE_SIZE = 25;
const STATUSES: JobStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

interface Row {
  summary: JobSummary;
  progress: JobProgress | null;
  element: HTMLTableRowElement;
}

export class JobListView implements View {
  private readonly rows = new Map<string, Row>();
  private readonly streams = new Map<string, AbortController>();
  /** Jobs whose stream failed for good (deleted meanwhile, or a refused key): not opened again. */
  private readonly unfollowable = new Set<string>();
  private readonly body = h('tbody');
  private readonly message = h('p', { class: 'message', role: 'status' });
  private readonly more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More jobs');
  private cursor: string | null = null;
  private status: JobStatus | '' = '';
  private closed = false;

  constructor(
    private readonly api: ApiClient,
    private readonly container: HTMLElement,
  ) {}

  async open(query: URLSearchParams): Promise<void> {
    const requested = query.get('status') ?? '';
    this.status = (STATUSES as string[]).includes(requested) ? (requested as JobStatus) : '';
    this.render();
    await this.load(true);
  }

  close(): void {
    this.closed = true;
    for (const controller of this.streams.values()) controller.abort();
    this.streams.clear();
  }

  private render(): void {
    const filter = h(
      'select',
      { id: 'status-filter', name: 'status' },
      h('option', { value: '' }, 'all'),
      ...STATUSES.map((status) => h('option', { value: status, selected: status === this.status }, status)),
    );
    filter.addEventListener('change', () => {
      location.hash = filter.value ? `#/?status=${filter.value}` : '#/';
    });
    this.more.addEventListener('click', () => void this.load(false));
    clear(this.container);
    this.container.append(
      h('div', { class: 'page-title' }, h('h1', {}, 'Jobs'), h('a', { href: '#/new', class: 'button' }, 'New job')),
      h('div', { class: 'filters' }, h('label', { for: 'status-filter' }, 'Status '), filter),
      this.message,
      h(
        'div',
        { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': 'Jobs' },
        h(
          'table',
          { class: 'job-list' },
          h('caption', { class: 'visually-hidden' }, 'Jobs, newest first'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['Job', 'Type', 'Status', 'Progress', 'n', 'm', 'Created', 'Actions'].map((label) => h('th', { scope: 'col' }, label)),
            ),
          ),
          this.body,
        ),
      ),
      this.more,
    );
  }

  private async load(reset: boolean): Promise<void> {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (this.status) query.set('status', this.status);
    if (!reset && this.cursor) query.set('cursor', this.cursor);
    try {
      const page = await this.api.json<JobPage>('GET', `/v1/jobs?${query.toString()}`);
      if (this.closed) return;
      if (reset) {
        clear(this.body);
        this.rows.clear();
      }
      for (const summary of page.items) this.addRow(summary);
      this.cursor = page.nextCursor;
      this.more.hidden = page.nextCursor === null;
      this.message.textContent = this.rows.size === 0 ? (this.status ? `No ${this.status} jobs.` : 'No jobs yet.') : '';
      this.follow();
    } catch (error) {
      this.message.textContent = error instanceof ProblemError ? `${error.problem.title}: ${error.problem.detail}` : String(error);
    }
  }

  private addRow(summary: JobSummary): void {
    if (this.rows.has(summary.id)) return;
    const element = h('tr', { 'data-job-id': summary.id });
    const row: Row = { summary, progress: null, element };
    this.rows.set(summary.id, row);
    this.fill(row);
    this.body.append(element);
  }

  private fill(row: Row): void {
    const { summary } = row;
    const finished = isFinished(summary.status);
    const cancel = h('button', { type: 'button', class: 'secondary', 'aria-label': `Cancel job ${summary.id}` }, 'Cancel');
    cancel.addEventListener('click', () => void this.act(row, 'cancel'));
    const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete job ${summary.id}` }, 'Delete');
    remove.addEventListener('click', () => void this.act(row, 'delete'));
    row.element.replaceChildren(
      h('th', { scope: 'row' }, h('a', { href: `#/jobs/${summary.id}`, class: 'job-link' }, h('code', {}, summary.id))),
      h('td', {}, summary.type),
      h('td', { class: 'status-cell' }, statusBadge(summary.status)),
      h('td', {}, progressBar(summary.status, row.progress)),
      h('td', { class: 'number' }, summary.n),
      h('td', { class: 'number' }, summary.m),
      h('td', {}, h('time', { datetime: summary.createdAt }, formatTime(summary.createdAt))),
      h('td', { class: 'actions' }, finished ? remove : cancel),
    );
  }

  private async act(row: Row, action: 'cancel' | 'delete'): Promise<void> {
    const id = row.summary.id;
    if (action === 'delete' && !confirm(`Delete job ${id} and everything stored for it?`)) return;
    try {
      if (action === 'cancel') {
        const job = await this.api.json<Job>('POST', `/v1/jobs/${id}/cancel`);
        this.update(job);
        announce(`Job ${id} ${job.status}.`);
      } else {
        await this.api.json<undefined>('DELETE', `/v1/jobs/${id}`);
        row.element.remove();
        this.rows.delete(id);
        announce(`Job ${id} deleted.`);
      }
    } catch (error) {
      this.message.textContent = error instanceof ProblemError ? `${error.problem.title}: ${error.problem.detail}` : String(error);
    }
  }

  private update(job: Job | JobSummary, progress?: JobProgress | null): void {
    const row = this.rows.get(job.id);
    if (!row) return;
    const { id, type, status, createdAt, startedAt, finishedAt, n, m } = job;
    row.summary = { id, type, status, createdAt, startedAt, finishedAt, n, m };
    if (progress !== undefined) row.progress = progress;
    if (this.status && status !== this.status) row.element.classList.add('stale');
    this.fill(row);
  }

  /** Open streams for the oldest unfinished jobs not yet followed, up to MAX_STREAMS. */
  private follow(): void {
    if (this.closed) return;
    const unfinished = [...this.rows.values()]
      .filter((row) => !isFinished(row.summary.status) && !this.streams.has(row.summary.id) && !this.unfollowable.has(row.summary.id))
      .reverse();
    for (const row of unfinished) {
      if (this.streams.size >= MAX_STREAMS) break;
      const id = row.summary.id;
      const controller = new AbortController();
      this.streams.set(id, controller);
      this.api.stream(
        `/v1/jobs/${id}/events`,
        {
          onEvent: (event, data) => {
            if (event === 'status') {
              const { job } = data as StatusEvent;
              this.update(job, job.progress);
              if (isFinished(job.status)) announce(`Job ${id} ${job.status}.`);
            } else if (event === 'progress') {
              const current = this.rows.get(id);
              if (current) this.update(current.summary, data as JobProgress);
            }
          },
          onEnd: (error) => {
            this.streams.delete(id);
            if (error !== undefined) this.unfollowable.add(id);
            this.follow();
          },
        },
        controller.signal,
      );
    }
  }
}
