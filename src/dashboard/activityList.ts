/**
 * `#/` (and `#/studies`, the studies only): the jobs and studies in one table, newest first, a
 * page of each at a time, filtered by status and kind. Every row is live from one list-wide event
 * stream (GET /v1/events), however many there are: its snapshot and status events add the jobs and
 * studies created meanwhile (by this tab or any other), and its progress events move the bars.
 * On a reconnect the new snapshot says what is still unfinished; a row shown unfinished that is not
 * there is read again (it finished or was deleted while the stream was down).
 */
import { ProblemError, type ApiClient } from './apiClient.js';
import {
  ALGORITHM_NAMES,
  isFinished,
  type Job,
  type JobPage,
  type JobProgress,
  type JobStatus,
  type JobSummary,
  type ListProgressEvent,
  type ListSnapshot,
  type ListStatusEvent,
  type Study,
  type StudyPage,
  type StudySummary,
} from './apiTypes.js';
import { announce, clear, h } from './dom.js';
import { formatLabels, formatMatrix, formatTime, runsConvergedText } from './format.js';
import { progressBar, statusBadge, studyProgress } from './statusBadge.js';
import type { View } from './view.js';

const PAGE_SIZE = 25;
const STATUSES: JobStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
export type ItemKind = 'job' | 'study';

type Item = { kind: 'job'; summary: JobSummary; progress: JobProgress | null } | { kind: 'study'; summary: StudySummary };

interface Row {
  item: Item;
  element: HTMLTableRowElement;
}

const KIND_NAMES: Record<ItemKind, string> = { job: 'Job', study: 'Study' };

/** Under the id: what the job ran (matrix, algorithms) and its labels, to tell rows apart. */
function whatLine(item: Item): HTMLElement | null {
  const parts =
    item.kind === 'job'
      ? [
          item.summary.matrix ? formatMatrix(item.summary.matrix) : '',
          item.summary.algorithms?.map((algorithm) => ALGORITHM_NAMES[algorithm]).join(', ') ?? '',
          formatLabels(item.summary.labels),
        ]
      : [formatLabels(item.summary.labels)];
  const text = parts.filter(Boolean).join(' · ');
  return text ? h('span', { class: 'job-summary-line' }, text) : null;
}

/** Under a solve's status: how many of its runs converged (a job that ran is `succeeded` whether they did or not). */
function runsLine(item: Item): HTMLElement | null {
  const runs = item.kind === 'job' ? runsConvergedText(item.summary) : null;
  return runs === null ? null : h('span', { class: runs.all ? 'runs-line' : 'runs-line run-count' }, runs.text);
}

export class ActivityListView implements View {
  /** By `${kind}:${id}`. */
  private readonly rows = new Map<string, Row>();
  private readonly body = h('tbody');
  private readonly message = h('p', { class: 'message', role: 'status' });
  private readonly more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More');
  private readonly stream = new AbortController();
  private cursors: Record<ItemKind, string | null> = { job: null, study: null };
  private status: JobStatus | '' = '';
  private kind: ItemKind | '' = '';
  private closed = false;

  constructor(
    private readonly api: ApiClient,
    private readonly container: HTMLElement,
    /** The kind the route shows (`#/studies`), unless the query names one. */
    private readonly defaultKind: ItemKind | '' = '',
  ) {}

  async open(query: URLSearchParams): Promise<void> {
    const status = query.get('status') ?? '';
    this.status = (STATUSES as string[]).includes(status) ? (status as JobStatus) : '';
    const kind = query.get('kind') ?? this.defaultKind;
    this.kind = kind === 'job' || kind === 'study' ? kind : '';
    this.render();
    await this.load(true);
    this.follow();
  }

  close(): void {
    this.closed = true;
    this.stream.abort();
  }

  private render(): void {
    const statusFilter = h(
      'select',
      { id: 'status-filter', name: 'status' },
      h('option', { value: '' }, 'all'),
      ...STATUSES.map((status) => h('option', { value: status, selected: status === this.status }, status)),
    );
    const kindFilter = h(
      'select',
      { id: 'kind-filter', name: 'kind' },
      h('option', { value: '' }, 'jobs and studies'),
      h('option', { value: 'job', selected: this.kind === 'job' }, 'jobs'),
      h('option', { value: 'study', selected: this.kind === 'study' }, 'studies'),
    );
    const navigate = (): void => {
      const query = new URLSearchParams();
      if (statusFilter.value) query.set('status', statusFilter.value);
      if (kindFilter.value) query.set('kind', kindFilter.value);
      location.hash = query.toString() ? `#/?${query.toString()}` : '#/';
    };
    statusFilter.addEventListener('change', navigate);
    kindFilter.addEventListener('change', navigate);
    this.more.addEventListener('click', () => void this.load(false));
    clear(this.container);
    const title = this.kind === 'study' ? 'Studies' : this.kind === 'job' ? 'Jobs' : 'Jobs and studies';
    this.container.append(
      h('div', { class: 'page-title' }, h('h1', {}, title), h('a', { href: '#/new', class: 'button' }, 'New job')),
      h(
        'div',
        { class: 'filters' },
        h('label', { for: 'status-filter' }, 'Status '),
        statusFilter,
        ' ',
        h('label', { for: 'kind-filter' }, 'Show '),
        kindFilter,
      ),
      this.message,
      h(
        'div',
        { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': title },
        h(
          'table',
          { class: 'job-list' },
          h('caption', { class: 'visually-hidden' }, `${title}, newest first`),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              // Status beside the id: on a phone's width the columns after the first few scroll out of sight.
              ...['Id', 'Status', 'Kind', 'Type', 'Progress', 'n', 'm', 'Created', 'Actions'].map((label) =>
                h('th', { scope: 'col' }, label),
              ),
            ),
          ),
          this.body,
        ),
      ),
      this.more,
    );
  }

  private shows(kind: ItemKind): boolean {
    return this.kind === '' || this.kind === kind;
  }

  /** The first page of each kind shown (reset), or the next page of those that have one. */
  private async load(reset: boolean): Promise<void> {
    const page = (kind: ItemKind, path: string): Promise<JobPage | StudyPage | null> => {
      if (!this.shows(kind) || (!reset && this.cursors[kind] === null)) return Promise.resolve(null);
      const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (this.status) query.set('status', this.status);
      if (!reset && this.cursors[kind]) query.set('cursor', this.cursors[kind]);
      return this.api.json<JobPage | StudyPage>('GET', `${path}?${query.toString()}`);
    };
    // Each kind on its own: a service without studies (503) still lists its jobs.
    const [jobsRead, studiesRead] = await Promise.allSettled([page('job', '/v1/jobs'), page('study', '/v1/studies')]);
    if (this.closed) return;
    const jobs = jobsRead.status === 'fulfilled' ? jobsRead.value : null;
    const studies = studiesRead.status === 'fulfilled' ? studiesRead.value : null;
    if (reset) {
      clear(this.body);
      this.rows.clear();
    }
    for (const summary of (jobs?.items ?? []) as JobSummary[]) this.upsert({ kind: 'job', summary, progress: null });
    for (const summary of (studies?.items ?? []) as StudySummary[]) this.upsert({ kind: 'study', summary });
    if (jobs) this.cursors.job = jobs.nextCursor;
    if (studies) this.cursors.study = studies.nextCursor;
    this.more.hidden = this.cursors.job === null && this.cursors.study === null;
    this.showEmpty();
    // The studies' refusal matters when only studies are shown (a service without studies answers 503).
    if (jobsRead.status === 'rejected') this.showProblem(jobsRead.reason);
    else if (studiesRead.status === 'rejected' && this.kind === 'study') this.showProblem(studiesRead.reason);
  }

  private showEmpty(): void {
    const what = this.kind === 'study' ? 'studies' : this.kind === 'job' ? 'jobs' : 'jobs or studies';
    this.message.textContent = this.rows.size === 0 ? (this.status ? `No ${this.status} ${what}.` : `No ${what} yet.`) : '';
  }

  private showProblem(error: unknown): void {
    this.message.textContent = error instanceof ProblemError ? `${error.problem.title}: ${error.problem.detail}` : String(error);
  }

  /** Add the item's row in its place (newest first), or refresh the row it has. */
  private upsert(item: Item): void {
    const key = `${item.kind}:${item.summary.id}`;
    const row = this.rows.get(key);
    if (row) {
      // A finished job or study stays finished: an answer read before it ended (a cancel's response,
      // delivered after the stream's `cancelled` event on a loaded machine) must not bring it back.
      if (isFinished(row.item.summary.status) && !isFinished(item.summary.status)) return;
      if (item.kind === 'job' && row.item.kind === 'job' && item.progress === null)
        item.progress = isFinished(item.summary.status) ? null : row.item.progress;
      row.item = item;
      if (this.status && item.summary.status !== this.status) row.element.classList.add('stale');
      this.fill(row);
      return;
    }
    if (!this.shows(item.kind) || (this.status && item.summary.status !== this.status)) return;
    const element = h('tr', { [`data-${item.kind}-id`]: item.summary.id, 'data-created': item.summary.createdAt });
    const added: Row = { item, element };
    this.rows.set(key, added);
    this.fill(added);
    const next = [...this.body.rows].find((other) => (other.dataset.created ?? '') < item.summary.createdAt);
    this.body.insertBefore(element, next ?? null);
    this.showEmpty();
  }

  private fill(row: Row): void {
    const { item } = row;
    const { id, status, createdAt } = item.summary;
    const finished = isFinished(status);
    const noun = item.kind === 'job' ? 'job' : 'study';
    const action = finished
      ? h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${noun} ${id}` }, 'Delete')
      : h('button', { type: 'button', class: 'secondary', 'aria-label': `Cancel ${noun} ${id}` }, 'Cancel');
    action.addEventListener('click', () => void this.act(row, finished ? 'delete' : 'cancel'));
    const href = item.kind === 'job' ? `#/jobs/${id}` : `#/studies/${id}`;
    row.element.replaceChildren(
      h('th', { scope: 'row' }, h('a', { href, class: 'job-link' }, h('code', {}, id)), whatLine(item)),
      h(
        'td',
        { class: 'status-cell' },
        statusBadge(status),
        item.summary.error
          ? h('span', { class: 'job-summary-line failure-reason', title: item.summary.error.detail }, item.summary.error.detail)
          : null,
        runsLine(item),
      ),
      h('td', {}, KIND_NAMES[item.kind]),
      h('td', {}, item.kind === 'job' ? item.summary.type : (item.summary.preset ?? 'general')),
      h('td', {}, item.kind === 'job' ? progressBar(status, item.progress) : studyProgress(item.summary.progress)),
      h('td', { class: 'number' }, item.kind === 'job' ? item.summary.n : ''),
      h('td', { class: 'number' }, item.kind === 'job' ? item.summary.m : ''),
      h(
        'td',
        {},
        h(
          'time',
          { datetime: createdAt },
          ...formatTime(createdAt)
            .split(' ')
            .flatMap((part, k) => [...(k > 0 ? [' '] : []), h('span', { class: 'date-part' }, part)]),
        ),
      ),
      h('td', { class: 'actions' }, action),
    );
  }

  private async act(row: Row, action: 'cancel' | 'delete'): Promise<void> {
    const { kind } = row.item;
    const { id } = row.item.summary;
    const path = kind === 'job' ? `/v1/jobs/${id}` : `/v1/studies/${id}`;
    const noun = kind === 'job' ? 'job' : 'study';
    if (action === 'delete' && !confirm(`Delete ${noun} ${id} and everything stored for it?`)) return;
    try {
      if (action === 'cancel') {
        const updated = await this.api.json<Job | Study>('POST', `${path}/cancel`);
        this.upsert(this.itemOf(kind, updated));
        announce(`${KIND_NAMES[kind]} ${id} ${this.rows.get(`${kind}:${id}`)?.item.summary.status ?? updated.status}.`);
      } else {
        await this.api.json<undefined>('DELETE', path);
        this.remove(`${kind}:${id}`);
        announce(`${KIND_NAMES[kind]} ${id} deleted.`);
      }
    } catch (error) {
      this.showProblem(error);
    }
  }

  private remove(key: string): void {
    this.rows.get(key)?.element.remove();
    this.rows.delete(key);
    this.showEmpty();
  }

  private itemOf(kind: ItemKind, resource: Job | Study): Item {
    if (kind === 'job') {
      const { id, type, status, createdAt, startedAt, finishedAt, n, m, algorithms, matrix, labels, error, summary, progress } =
        resource as Job;
      return {
        kind,
        summary: {
          id,
          type,
          status,
          createdAt,
          startedAt,
          finishedAt,
          n,
          m,
          algorithms,
          matrix,
          labels,
          ...(error ? { error } : {}),
          ...(summary ? { summary } : {}),
        },
        progress: progress ?? null,
      };
    }
    const { id, owner, status, preset, createdAt, finishedAt, progress, labels, error } = resource as Study;
    return {
      kind,
      summary: {
        id,
        owner,
        status,
        preset,
        createdAt,
        finishedAt,
        progress: { done: progress.done, total: progress.total },
        labels,
        ...(error ? { error } : {}),
      },
    };
  }

  /** One stream for every row (reopened after a drop); the status filter is the server's. */
  private follow(): void {
    const query = this.status ? `?status=${this.status}` : '';
    this.api.stream(
      `/v1/events${query}`,
      {
        onEvent: (event, data) => {
          if (this.closed) return;
          if (event === 'snapshot') this.onSnapshot(data as ListSnapshot);
          else if (event === 'status') this.onStatus(data as ListStatusEvent);
          else if (event === 'progress') this.onProgress(data as ListProgressEvent);
        },
      },
      this.stream.signal,
      { reconnect: true },
    );
  }

  private onSnapshot(snapshot: ListSnapshot): void {
    const listed = new Set<string>();
    for (const summary of snapshot.jobs) {
      listed.add(`job:${summary.id}`);
      this.upsert({ kind: 'job', summary, progress: null });
    }
    for (const summary of snapshot.studies) {
      listed.add(`study:${summary.id}`);
      this.upsert({ kind: 'study', summary });
    }
    // Rows shown unfinished that the snapshot no longer lists changed while the stream was down.
    const snapshotStatuses = this.status ? [this.status] : ['queued', 'running'];
    for (const [key, row] of this.rows)
      if (!listed.has(key) && snapshotStatuses.includes(row.item.summary.status) && !snapshot.truncated)
        void this.reread(key, row.item.kind);
  }

  private async reread(key: string, kind: ItemKind): Promise<void> {
    const id = key.slice(kind.length + 1);
    try {
      this.upsert(this.itemOf(kind, await this.api.json<Job | Study>('GET', kind === 'job' ? `/v1/jobs/${id}` : `/v1/studies/${id}`)));
    } catch (error) {
      if (error instanceof ProblemError && error.problem.status === 404) this.remove(key);
    }
  }

  private onStatus(event: ListStatusEvent): void {
    const before = this.rows.get(`${event.kind}:${event.id}`)?.item.summary.status;
    if (event.kind === 'job') this.upsert({ kind: 'job', summary: event.job, progress: null });
    else this.upsert({ kind: 'study', summary: event.study });
    if (before && before !== event.status && isFinished(event.status)) announce(`${KIND_NAMES[event.kind]} ${event.id} ${event.status}.`);
  }

  private onProgress(event: ListProgressEvent): void {
    const row = this.rows.get(`${event.kind}:${event.id}`);
    if (!row || isFinished(row.item.summary.status)) return;
    if (event.kind === 'job' && row.item.kind === 'job') {
      if (row.item.summary.status === 'queued') row.item.summary = { ...row.item.summary, status: 'running' };
      row.item.progress = event.progress;
    } else if (event.kind === 'study' && row.item.kind === 'study') row.item.summary = { ...row.item.summary, progress: event.progress };
    this.fill(row);
  }
}
