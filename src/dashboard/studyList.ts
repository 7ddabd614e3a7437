/**
 * `#/studies`: the studies, newest first, a page at a time, each unfinished one followed live through
 * its event stream (GET /v1/studies/{id}/events; at most MAX_STREAMS at once, as for jobs).
 */
import { ProblemError, type ApiClient } from './apiClient.js';
import { isFinished, type Study, type StudyPage, type StudyProgress, type StudyStatusEvent, type StudySummary } from './apiTypes.js';
import { announce, clear, h } from './dom.js';
import { formatTime } from './format.js';
import { statusBadge } from './statusBadge.js';
import type { View } from './view.js';

const MAX_STREAMS = 3;
const PAGE_SIZE = 25;

export function studyProgress(progress: { done: number; total: number }): HTMLElement {
  const bar = h('progress', { max: Math.max(1, progress.total), 'aria-label': `${progress.done} of ${progress.total} samples` });
  bar.value = progress.done;
  return h('span', { class: 'progress' }, bar, h('span', { class: 'progress-text' }, `${progress.done} / ${progress.total} samples`));
}

export class StudyListView implements View {
  private readonly rows = new Map<string, { summary: StudySummary; element: HTMLTableRowElement }>();
  private readonly streams = new Map<string, AbortController>();
  private readonly unfollowable = new Set<string>();
  private readonly body = h('tbody');
  private readonly message = h('p', { class: 'message', role: 'status' });
  private readonly more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More studies');
  private cursor: string | null = null;
  private closed = false;

  constructor(
    private readonly api: ApiClient,
    private readonly container: HTMLElement,
  ) {}

  async open(): Promise<void> {
    this.more.addEventListener('click', () => void this.load());
    clear(this.container);
    this.container.append(
      h('div', { class: 'page-title' }, h('h1', {}, 'Studies')),
      h(
        'p',
        { class: 'hint' },
        'Grids of problem settings times seeded samples (POST /v1/studies; the paper’s Experiments 1-3 as presets).',
      ),
      this.message,
      h(
        'div',
        { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': 'Studies' },
        h(
          'table',
          { class: 'study-list' },
          h('caption', { class: 'visually-hidden' }, 'Studies, newest first'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['Study', 'Preset', 'Status', 'Progress', 'Created', 'Actions'].map((label) => h('th', { scope: 'col' }, label)),
            ),
          ),
          this.body,
        ),
      ),
      this.more,
    );
    await this.load();
  }

  close(): void {
    this.closed = true;
    for (const controller of this.streams.values()) controller.abort();
  }

  private async load(): Promise<void> {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (this.cursor) query.set('cursor', this.cursor);
    try {
      const page = await this.api.json<StudyPage>('GET', `/v1/studies?${query.toString()}`);
      if (this.closed) return;
      for (const summary of page.items) this.addRow(summary);
      this.cursor = page.nextCursor;
      this.more.hidden = page.nextCursor === null;
      this.message.textContent = this.rows.size === 0 ? 'No studies yet.' : '';
      this.follow();
    } catch (error) {
      this.message.textContent = error instanceof ProblemError ? `${error.problem.title}: ${error.problem.detail}` : String(error);
    }
  }

  private addRow(summary: StudySummary): void {
    if (this.rows.has(summary.id)) return;
    const row = { summary, element: h('tr', { 'data-study-id': summary.id }) };
    this.rows.set(summary.id, row);
    this.fill(row);
    this.body.append(row.element);
  }

  private fill(row: { summary: StudySummary; element: HTMLTableRowElement }): void {
    const { summary } = row;
    const action = isFinished(summary.status)
      ? h('button', { type: 'button', class: 'danger', 'aria-label': `Delete study ${summary.id}` }, 'Delete')
      : h('button', { type: 'button', class: 'secondary', 'aria-label': `Cancel study ${summary.id}` }, 'Cancel');
    action.addEventListener('click', () => void this.act(summary.id, isFinished(summary.status) ? 'delete' : 'cancel'));
    row.element.replaceChildren(
      h('th', { scope: 'row' }, h('a', { href: `#/studies/${summary.id}`, class: 'job-link' }, h('code', {}, summary.id))),
      h('td', {}, summary.preset ?? 'general'),
      h('td', { class: 'status-cell' }, statusBadge(summary.status)),
      h('td', {}, studyProgress(summary.progress)),
      h('td', {}, h('time', { datetime: summary.createdAt }, formatTime(summary.createdAt))),
      h('td', { class: 'actions' }, action),
    );
  }

  private update(study: Study | StudySummary, progress?: StudyProgress): void {
    const row = this.rows.get(study.id);
    if (!row) return;
    row.summary = {
      id: study.id,
      owner: study.owner,
      status: study.status,
      preset: study.preset,
      createdAt: study.createdAt,
      finishedAt: study.finishedAt,
      progress: progress ? { done: progress.done, total: progress.total } : { done: study.progress.done, total: study.progress.total },
    };
    this.fill(row);
  }

  private async act(id: string, action: 'cancel' | 'delete'): Promise<void> {
    if (action === 'delete' && !confirm(`Delete study ${id}, its samples and figures?`)) return;
    try {
      if (action === 'cancel') this.update(await this.api.json<Study>('POST', `/v1/studies/${id}/cancel`));
      else {
        await this.api.json<undefined>('DELETE', `/v1/studies/${id}`);
        this.rows.get(id)?.element.remove();
        this.rows.delete(id);
      }
      announce(`Study ${id} ${action === 'cancel' ? 'cancelled' : 'deleted'}.`);
    } catch (error) {
      this.message.textContent = error instanceof ProblemError ? `${error.problem.title}: ${error.problem.detail}` : String(error);
    }
  }

  private follow(): void {
    if (this.closed) return;
    const waiting = [...this.rows.values()]
      .filter(({ summary }) => !isFinished(summary.status) && !this.streams.has(summary.id) && !this.unfollowable.has(summary.id))
      .reverse();
    for (const { summary } of waiting) {
      if (this.streams.size >= MAX_STREAMS) break;
      const controller = new AbortController();
      this.streams.set(summary.id, controller);
      this.api.stream(
        `/v1/studies/${summary.id}/events`,
        {
          onEvent: (event, data) => {
            if (event === 'status') this.update((data as StudyStatusEvent).study);
            else if (event === 'progress') {
              const row = this.rows.get(summary.id);
              if (row) this.update(row.summary, data as StudyProgress);
            }
          },
          onEnd: (error) => {
            this.streams.delete(summary.id);
            if (error !== undefined) this.unfollowable.add(summary.id);
            this.follow();
          },
        },
        controller.signal,
      );
    }
  }
}
