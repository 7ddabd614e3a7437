// Past 500 lines: one view whose sections (header, live chart, flags, details, results) share the job's live state.
/**
 * `#/jobs/{id}`: one job. Its status and progress come live from its event stream; while it solves,
 * the residuals of the progress events are drawn as they arrive; when it ends, the page shows the
 * stored traces with their theoretical rates, the heterogeneity (theta_ij heatmap, phi_i), the
 * conditioning, the six algorithms' rates against their Table 1 bounds, the recommendation, and
 * the downloads.
 */
import { ProblemError, type ApiClient } from './apiClient.js';
import {
  ALGORITHM_NAMES,
  ALGORITHMS,
  isFinished,
  type AlgorithmId,
  type Analysis,
  type Job,
  type JobProgress,
  type Problem,
  type Run,
  type StatusEvent,
  type Trace,
} from './apiTypes.js';
import { ConvergenceChart, type ConvergenceSeries } from './convergenceChart.js';
import { announce, clear, h, scrollingTable } from './dom.js';
import { downloadFromApi, saveFile, tracesCsv } from './downloads.js';
import {
  formatDuration,
  formatInteger,
  formatLabels,
  formatMatrix,
  formatNumber,
  formatOptions,
  formatPartition,
  formatTime,
} from './format.js';
import { partitionPictures } from './partitionPicture.js';
import { progressBar, runConverged, statusBadge } from './statusBadge.js';
import { formHoldsMatrix } from './submitForm.js';
import {
  adviceSection,
  analysisNotCompletedSection,
  type Advice,
  conditioningSection,
  consistencySection,
  errorLabel,
  fact,
  TARGET_SYMBOLS,
  heterogeneitySection,
  ratesSection,
  recommendationSection,
  timeToSolutionSection,
} from './analysisSections.js';
import type { View } from './view.js';

type Quantity = 'relativeResidual' | 'relativeError';

export class JobPageView implements View {
  private readonly controller = new AbortController();
  private job: Job | null = null;
  private readonly header = h('section', { class: 'job-header', 'aria-labelledby': 'job-title' });
  /** Runs that did not converge, with their diagnosis: above the chart, where they are seen first. */
  private readonly flags = h('div', { class: 'run-flags' });
  /** What the job is (matrix, partition, algorithms, timing): below the chart. */
  private readonly details = h('section', { class: 'card', id: 'job-details', 'aria-label': 'Job details', hidden: true });
  private readonly convergence = h('section', { class: 'card', id: 'convergence', 'aria-labelledby': 'convergence-title', hidden: true });
  /** What a reader needs next to the chart (a tall system's consistency, the right-hand sides): above the details. */
  private readonly summary = h('div', { class: 'results' });
  private readonly results = h('div', { class: 'results' });
  private chart: ConvergenceChart | null = null;
  private readonly live = new Map<AlgorithmId, { iteration: number[]; values: (number | null)[] }>();
  private liveFrame = 0;
  private traces: Trace[] = [];
  private quantity: Quantity = 'relativeResidual';
  /** Whether the reader picked the quantity; until then an inconsistent system shows the error (its residuals level off). */
  private quantityChosen = false;
  /** The right-hand side shown (a job of several: its runs' `columns[j]`, downloads with `?column=j`). */
  private column = 0;
  private columnCount = 1;
  private rendered = false;

  constructor(
    private readonly api: ApiClient,
    private readonly container: HTMLElement,
    private readonly id: string,
  ) {}

  async open(): Promise<void> {
    clear(this.container);
    this.container.append(
      h('p', { class: 'breadcrumb' }, h('a', { href: '#/' }, '← Jobs')),
      this.header,
      this.flags,
      this.convergence,
      this.summary,
      this.details,
      this.results,
    );
    try {
      this.showJob(await this.api.json<Job>('GET', `/v1/jobs/${encodeURIComponent(this.id)}`));
    } catch (error) {
      this.header.replaceChildren(h('h1', { id: 'job-title' }, `Job ${this.id}`), problemBox(error));
      return;
    }
    if (this.job && !isFinished(this.job.status)) this.follow();
    else await this.showResults();
  }

  close(): void {
    this.controller.abort();
    cancelAnimationFrame(this.liveFrame);
    this.chart?.destroy();
  }

  private follow(): void {
    this.api.stream(
      `/v1/jobs/${encodeURIComponent(this.id)}/events`,
      {
        onEvent: (event, data) => {
          if (event === 'status') {
            const { job } = data as StatusEvent;
            this.showJob(job);
            if (isFinished(job.status)) {
              announce(`Job ${job.status}.`);
              void this.showResults();
            }
          } else if (event === 'progress') this.onProgress(data as JobProgress);
        },
      },
      this.controller.signal,
    );
  }

  private showJob(job: Job): void {
    this.job = job;
    const runs = Object.entries(job.result?.runs ?? {}) as [AlgorithmId, Run][];
    const analysis = job.result?.analysis;
    const unconverged = runs.filter(([, run]) => !runConverged(run.status));
    const finished = isFinished(job.status);
    // Asked for but never started: the job was cancelled, or failed, before their turn (a result holds the runs it made).
    const notStarted = finished && job.result ? job.algorithms.filter((algorithm) => !(algorithm in job.result!.runs)) : [];
    const missed = unconverged.length + notStarted.length;
    const total = runs.length + notStarted.length;
    const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel job');
    cancel.addEventListener('click', () => void this.cancel());
    const remove = h('button', { type: 'button', class: 'danger' }, 'Delete job');
    remove.addEventListener('click', () => void this.remove());
    this.header.replaceChildren(
      h(
        'div',
        { class: 'page-title' },
        h('h1', { id: 'job-title' }, 'Job ', h('code', {}, job.id)),
        h('div', { class: 'actions' }, finished ? remove : cancel),
      ),
      h(
        'p',
        { class: 'job-status' },
        statusBadge(job.status),
        ' ',
        progressBar(job.status, job.progress),
        missed > 0 ? h('span', { class: 'run-count' }, ` ${missed} of ${total} ${total === 1 ? 'run' : 'runs'} did not converge`) : null,
      ),
      job.error ? problemBox(new ProblemError(job.error)) : '',
    );
    this.flags.replaceChildren(...(missed > 0 ? [runFlags(unconverged, notStarted)] : []));
    this.details.hidden = false;
    this.details.replaceChildren(
      h(
        'dl',
        { class: 'facts' },
        ...fact('Type', job.type),
        ...fact('Matrix', formatMatrix(job.matrix)),
        ...(job.matrix.sha256 ? fact('SHA-256', job.matrix.sha256) : []),
        ...(analysis?.rows !== undefined
          ? fact('Shape N × n', `${formatInteger(analysis.rows)} × ${formatInteger(analysis.n)} (least squares)`)
          : []),
        ...(this.columnCount > 1 ? fact('Right-hand sides', formatInteger(this.columnCount)) : []),
        ...fact('Machines m', formatInteger(job.m)),
        ...partitionFact(job.partition),
        ...fact('Algorithms', job.algorithms.map((a) => ALGORITHM_NAMES[a]).join(', ') || '—'),
        ...fact('Options', formatOptions(job.type, job.options)),
        ...fact('Labels', formatLabels(job.labels) || '—'),
        ...fact('Storage', job.storage),
        ...fact('Backend', job.backend ?? '—'),
        ...fact('Attempts', String(job.attempts)),
        ...fact('Created', formatTime(job.createdAt)),
        ...fact('Ran for', formatDuration(job.startedAt, job.finishedAt)),
      ),
    );
  }

  private async cancel(): Promise<void> {
    try {
      this.showJob(await this.api.json<Job>('POST', `/v1/jobs/${encodeURIComponent(this.id)}/cancel`));
    } catch (error) {
      this.header.append(problemBox(error));
    }
  }

  private async remove(): Promise<void> {
    if (!confirm(`Delete job ${this.id} and everything stored for it?`)) return;
    try {
      await this.api.json<undefined>('DELETE', `/v1/jobs/${encodeURIComponent(this.id)}`);
      announce(`Job ${this.id} deleted.`);
      location.hash = '#/';
    } catch (error) {
      this.header.append(problemBox(error));
    }
  }

  private ensureChart(title: string): ConvergenceChart {
    if (this.chart) return this.chart;
    this.convergence.hidden = false;
    const plot = h('div', { class: 'chart', id: 'convergence-chart' });
    this.convergence.replaceChildren(h('h2', { id: 'convergence-title' }, title), plot);
    this.chart = new ConvergenceChart(plot, 'relative residual');
    return this.chart;
  }

  /** A solve's progress: the current run's residual, drawn at the next frame. */
  private onProgress(progress: JobProgress): void {
    if (this.job) this.showJob({ ...this.job, progress });
    const algorithm = progress.algorithm as AlgorithmId | undefined;
    if (progress.phase !== 'solve' || !algorithm || !ALGORITHMS.includes(algorithm) || progress.iteration === undefined) return;
    if (this.rendered) return;
    let line = this.live.get(algorithm);
    if (!line) this.live.set(algorithm, (line = { iteration: [], values: [] }));
    line.iteration.push(progress.iteration);
    line.values.push(progress.relativeResidual ?? null);
    cancelAnimationFrame(this.liveFrame);
    this.liveFrame = requestAnimationFrame(() => {
      const series = [...this.live].map(([alg, points]): ConvergenceSeries => ({ algorithm: alg, ...points, rate: null }));
      this.ensureChart('Convergence (live: residuals reported while the job runs)').setData(series);
    });
  }

  private async showResults(): Promise<void> {
    if (this.rendered) return;
    this.rendered = true;
    cancelAnimationFrame(this.liveFrame);
    let job = this.job!;
    // A status event carries the job; read it again if its result is not there.
    if (!job.result && job.status !== 'failed') job = await this.api.json<Job>('GET', `/v1/jobs/${encodeURIComponent(this.id)}`);
    this.showJob(job);
    const result = job.result;
    if (!result) {
      this.convergence.hidden = true;
      return;
    }
    const runs = Object.entries(result.runs) as [AlgorithmId, Run][];
    this.columnCount = Math.max(1, ...runs.map(([, run]) => run.columns?.length ?? 1));
    if (this.columnCount > 1) this.showJob(job);
    try {
      this.traces = await this.fetchTraces(runs.map(([algorithm]) => algorithm));
    } catch (error) {
      this.results.append(problemBox(error));
    }
    // The chart first, drawn before the sections below exist (it is what the user looks at first,
    // and its measured render time is then its own, not the layout of the whole page).
    const { analysis } = result;
    if (this.traces.length > 0) this.showConvergence(result.runs, analysis);
    else this.convergence.hidden = true;
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const columns = this.columnCount > 1 ? this.columnsSection(runs) : '';
    if (!analysis) {
      // Cancelled (or stopped at a limit) before the analysis was complete: the runs, their files and the partition only.
      this.summary.replaceChildren(analysisNotCompletedSection(result, job.status), columns);
      this.results.replaceChildren(this.partitionSection(), this.downloadsSection(job, runs));
      return;
    }
    this.summary.replaceChildren(consistencySection(analysis), columns);
    this.results.replaceChildren(
      heterogeneitySection(analysis),
      conditioningSection(analysis),
      ratesSection(analysis, result.runs),
      recommendationSection(analysis),
      timeToSolutionSection(analysis, job.options.maxIterations, job.type === 'solve'),
      result.advice ? adviceSection(result.advice, this.advicePictures(result.advice), this.solveWithBest(job)) : this.partitionSection(),
      this.downloadsSection(job, runs),
    );
  }

  /** A run's path with the chosen right-hand side (`?column=j` on a job of several). */
  private runPath(algorithm: AlgorithmId, what: 'trace' | 'solution'): string {
    const query = this.columnCount > 1 ? `?column=${this.column}` : '';
    return `/v1/jobs/${encodeURIComponent(this.id)}/runs/${algorithm}/${what}${query}`;
  }

  private fetchTraces(algorithms: AlgorithmId[]): Promise<Trace[]> {
    return Promise.all(algorithms.map((algorithm) => this.api.json<Trace>('GET', this.runPath(algorithm, 'trace'))));
  }

  /** A run's summary for the chosen right-hand side (the run itself for column 0 or a job of one). */
  private runOf(run: Run | undefined): Run | Omit<Run, 'columns'> | undefined {
    return run?.columns?.[this.column] ?? run;
  }

  /** The runs' traces, each with its theoretical rate (the analysis' when the run has none; none without an analysis). */
  private showConvergence(runs: Partial<Record<string, Run>>, analysis: Analysis | undefined): void {
    this.ensureChart('Convergence');
    const title = this.convergence.querySelector('h2')!;
    title.textContent = 'Convergence';
    // The targets the runs measure their error to, x_LS before x_W whatever the runs' order.
    const targets = new Set(
      (['least-squares', 'block-weighted', undefined] as const).filter((target) =>
        this.traces.some((trace) => runs[trace.algorithm]?.target === target),
      ),
    );
    // What the error axis measures: to x* (square), or to each run's target on a tall system.
    const errorAxis = (): string => {
      if (targets.size === 1) return `relative ${errorLabel([...targets][0])}`;
      return `relative error to ${[...targets].map((target) => (target ? TARGET_SYMBOLS[target] : 'x*')).join(' or ')} (legend)`;
    };
    const axisLabel = (): string => (this.quantity === 'relativeError' ? errorAxis() : 'relative residual');
    const draw = (): void => {
      this.chart?.setData(
        this.traces.map((trace) => {
          const run = this.runOf(runs[trace.algorithm]);
          const optimal = analysis?.rates[trace.algorithm];
          const rate = run?.theoreticalRate ?? optimal?.rate ?? null;
          return {
            algorithm: trace.algorithm,
            iteration: trace.iteration,
            values: (this.quantity === 'relativeError' ? trace.relativeError : trace.relativeResidual) ?? [],
            rate,
            // The analysis' gap where the run's rate is the optimal one (a run of other parameters has its own rate).
            gap: optimal !== undefined && rate === optimal.rate ? optimal.gap : undefined,
            note: this.quantity === 'relativeError' && run?.target ? errorLabel(run.target) : undefined,
          };
        }),
      );
      this.convergence.dataset.column = String(this.column);
      this.convergence.dataset.axis = axisLabel();
    };
    const rebuild = (): void => {
      this.chart?.destroy();
      this.chart = null;
      this.convergence.querySelector('.chart')?.remove();
      const plot = h('div', { class: 'chart', id: 'convergence-chart' });
      controls.after(plot);
      this.chart = new ConvergenceChart(plot, axisLabel());
      draw();
    };
    const hasError = (): boolean => this.traces.some((trace) => trace.relativeError !== null);
    // An inconsistent system's residuals level off at |A x_T - b| / |b| whatever the run does: what converges, and what
    // the dashed rates describe, is the error to each run's target, so that is shown first.
    if (!this.quantityChosen)
      this.quantity = analysis?.consistency?.consistent === false && hasError() ? 'relativeError' : 'relativeResidual';
    const errorText = targets.has(undefined)
      ? 'relative error |x − x*| / |x*|'
      : "relative error to each run's target |x − x_T| / |x_T| (x_LS or x_W)";
    const radios = (
      [
        ['relativeResidual', 'relative residual |Ax − b| / |b|'],
        ['relativeError', errorText],
      ] as [Quantity, string][]
    ).map(([value, label]) => {
      const radio = h('input', {
        type: 'radio',
        name: 'quantity',
        value,
        checked: value === this.quantity,
        disabled: value === 'relativeError' && !hasError(),
      });
      radio.addEventListener('change', () => {
        this.quantity = value;
        this.quantityChosen = true;
        rebuild();
      });
      return { value, radio, label: h('label', { class: 'radio' }, radio, ` ${label}`) };
    });
    const choices = h('fieldset', { class: 'choices inline' }, h('legend', {}, 'Show'), ...radios.map((radio) => radio.label));
    const controls = h('div', { class: 'chart-controls' }, choices);
    if (this.columnCount > 1) {
      const select = h(
        'select',
        { id: 'column-select', 'aria-label': 'Right-hand side shown' },
        ...Array.from({ length: this.columnCount }, (_, j) =>
          h('option', { value: j, selected: j === this.column }, `b${j} (column ${j})`),
        ),
      );
      select.addEventListener('change', () => void this.chooseColumn(Number(select.value), runs, rebuild, radios, hasError));
      controls.append(h('label', { class: 'column-choice' }, 'Right-hand side ', select));
    }
    // The choice next to the title and the explanation under the legend: the chart comes first.
    title.after(controls);
    this.convergence.append(
      h(
        'p',
        { class: 'hint' },
        'Solid: each run as recorded. Dashed: its theoretical rate ρ^t from the first point (ρ = the spectral radius of its iteration). ',
        'Point at the chart to read the values under the cursor; drag across it to zoom, double-click to reset; click a legend entry to hide or show its run.',
      ),
    );
    rebuild();
  }

  /** Another right-hand side: its traces fetched (`?column=j`), the chart and the per-run downloads follow it. */
  private async chooseColumn(
    column: number,
    runs: Partial<Record<string, Run>>,
    rebuild: () => void,
    radios: { value: Quantity; radio: HTMLInputElement }[],
    hasError: () => boolean,
  ): Promise<void> {
    this.column = column;
    this.convergence.dataset.loading = 'true';
    try {
      this.traces = await this.fetchTraces(this.traces.map((trace) => trace.algorithm));
    } catch (error) {
      this.convergence.append(problemBox(error));
      return;
    }
    for (const { value, radio } of radios) if (value === 'relativeError') radio.disabled = !hasError();
    if (this.quantity === 'relativeError' && !hasError()) {
      this.quantity = 'relativeResidual';
      for (const { value, radio } of radios) radio.checked = value === 'relativeResidual';
    }
    rebuild();
    for (const row of this.summary.querySelectorAll<HTMLElement>('#columns tbody tr'))
      row.classList.toggle('chosen', row.dataset.column === String(column));
    const downloads = this.results.querySelector('#downloads');
    if (downloads && this.job) downloads.replaceWith(this.downloadsSection(this.job, Object.entries(runs) as [AlgorithmId, Run][]));
    delete this.convergence.dataset.loading;
  }

  /** A job of several right-hand sides: per column, each run's status, iterations and residual. */
  private columnsSection(runs: [AlgorithmId, Run][]): HTMLElement {
    const table = scrollingTable(
      'Status, iterations and relative residual per run',
      ['Right-hand side', ...runs.map(([algorithm]) => ALGORITHM_NAMES[algorithm])],
      Array.from({ length: this.columnCount }, (_, j) => [
        `b${j}`,
        ...runs.map(([algorithm, run]) => {
          const column = run.columns?.[j];
          if (!column) return '—';
          return h(
            'span',
            { class: 'column-run', 'data-algorithm': algorithm },
            statusBadge(column.status),
            h('span', { class: 'cell-note' }, `${formatInteger(column.iterations)} it., residual ${formatNumber(column.relativeResidual)}`),
          );
        }),
      ]),
      { class: 'columns' },
    );
    table.querySelectorAll('tbody tr').forEach((row, j) => {
      (row as HTMLElement).dataset.column = String(j);
      row.classList.toggle('chosen', j === this.column);
    });
    return h(
      'section',
      { class: 'card', id: 'columns', 'aria-labelledby': 'columns-title' },
      h('h2', { id: 'columns-title' }, `Right-hand sides (${this.columnCount})`),
      h(
        'p',
        { class: 'hint' },
        'Each column stopped by its own test. Choose one above the chart to draw its traces and download its files.',
      ),
      table,
    );
  }

  /** Before (the given partition) and after (the best), side by side. */
  private advicePictures(advice: Advice): HTMLElement {
    return partitionPictures(
      this.api,
      this.id,
      [
        { strategy: 'given', caption: 'Before: the given partition' },
        { strategy: 'best', caption: `After: the best (${advice.best})` },
      ],
      problemBox,
    );
  }

  /** A succeeded advise job: the form, set to solve its matrix on the best partition (when the form can give that matrix). */
  private solveWithBest(job: Job): HTMLElement | null {
    if (job.status !== 'succeeded' || !formHoldsMatrix(job.matrix)) return null;
    return h('a', { class: 'button', href: `#/new?fromAdvice=${encodeURIComponent(job.id)}` }, 'Solve with the best partition');
  }

  /** An analysis' or a solve's own partition, in a small card. */
  private partitionSection(): HTMLElement {
    return h(
      'section',
      { class: 'card', id: 'partition', 'aria-labelledby': 'partition-title' },
      h('h2', { id: 'partition-title' }, 'Partition'),
      partitionPictures(this.api, this.id, [{ caption: "The job's partition" }], problemBox),
    );
  }

  private downloadsSection(job: Job, runs: [AlgorithmId, Run][]): HTMLElement {
    const base = `job-${job.id}${this.columnCount > 1 ? `-column${this.column}` : ''}`;
    const button = (label: string, action: () => Promise<void> | void, name?: string): HTMLButtonElement => {
      const element = h('button', { type: 'button', class: 'secondary download', 'aria-label': name }, label);
      element.addEventListener('click', () => {
        void (async () => {
          try {
            await action();
          } catch (error) {
            element.after(problemBox(error));
          }
        })();
      });
      return element;
    };
    // The API's own files, as it sends them by Accept.
    const fetched = (algorithm: AlgorithmId, what: 'trace' | 'solution', accept: string, extension: string): Promise<void> =>
      downloadFromApi(this.api, this.runPath(algorithm, what), accept, `${base}-${algorithm}-${what}.${extension}`);
    const formats = (algorithm: AlgorithmId, what: 'trace' | 'solution'): HTMLElement => {
      const name = `${ALGORITHM_NAMES[algorithm]} ${what}`;
      return h(
        'span',
        { class: 'download-row' },
        button('CSV', () => fetched(algorithm, what, 'text/csv', 'csv'), `${name} as CSV`),
        button('JSON', () => fetched(algorithm, what, 'application/json', 'json'), `${name} as JSON`),
        what === 'solution'
          ? button('MTX', () => fetched(algorithm, what, 'application/x-matrix-market', 'mtx'), `${name} as Matrix Market`)
          : null,
      );
    };
    const traced = runs.filter(([algorithm]) => this.traces.some((trace) => trace.algorithm === algorithm));
    return h(
      'section',
      { class: 'card', id: 'downloads', 'aria-labelledby': 'downloads-title' },
      h('h2', { id: 'downloads-title' }, 'Downloads', this.columnCount > 1 ? ` (right-hand side b${this.column})` : ''),
      h(
        'p',
        { class: 'hint' },
        "The API's files (its trace and solution endpoints by Accept). The API serves one run's trace per request: all traces in one CSV is their rows joined, the algorithm first.",
      ),
      h(
        'div',
        { class: 'download-row' },
        button('Job and analysis (JSON)', () => saveFile(`job-${job.id}.json`, JSON.stringify(job, null, 2), 'application/json')),
        traced.length > 0
          ? button('All traces (CSV)', async () =>
              saveFile(
                `${base}-traces.csv`,
                await tracesCsv(
                  this.api,
                  traced.map(([algorithm]) => ({ algorithm, path: this.runPath(algorithm, 'trace') })),
                ),
                'text/csv',
              ),
            )
          : null,
      ),
      runs.length > 0
        ? scrollingTable(
            'Per run',
            ['Run', 'Trace', 'Solution'],
            runs.map(([algorithm]) => [
              ALGORITHM_NAMES[algorithm],
              traced.some(([traceAlgorithm]) => traceAlgorithm === algorithm) ? formats(algorithm, 'trace') : '—',
              formats(algorithm, 'solution'),
            ]),
            { class: 'downloads' },
          )
        : null,
    );
  }
}

/**
 * The runs that stopped short of the tolerance: a line naming them by status, then each with the
 * solver's own diagnosis. Open on wide screens; on a phone the diagnoses fold away (a tap opens
 * them) so that the chart stays on the first screen.
 */
/** How the partition was given; a partition taken from another job links to it. */
function partitionFact(partition: Job['partition']): HTMLElement[] {
  const { text, job } = formatPartition(partition);
  return [
    h('dt', {}, 'Partition'),
    h('dd', { class: 'partition-source' }, text, ...(job === null ? [] : [' ', h('a', { href: `#/jobs/${job}` }, h('code', {}, job))])),
  ];
}

function runFlags(runs: [AlgorithmId, Run][], notStarted: AlgorithmId[]): HTMLElement {
  const byStatus = new Map<string, string[]>();
  for (const [algorithm, run] of runs) byStatus.set(run.status, [...(byStatus.get(run.status) ?? []), ALGORITHM_NAMES[algorithm]]);
  if (notStarted.length > 0)
    byStatus.set(
      'not started',
      notStarted.map((algorithm) => ALGORITHM_NAMES[algorithm]),
    );
  const named = [...byStatus].map(([status, names]) => `${status}: ${names.join(', ')}`).join('; ');
  const count = runs.length + notStarted.length;
  return h(
    'details',
    {
      class: 'problem run-problems',
      role: 'note',
      'aria-label': 'Runs that did not converge',
      open: matchMedia('(min-width: 641px)').matches,
    },
    h('summary', {}, h('strong', {}, count === 1 ? 'One run did not converge' : `${count} runs did not converge`), ` (${named})`),
    h(
      'ul',
      {},
      ...runs.map(([algorithm, run]) =>
        h(
          'li',
          { 'data-run': algorithm },
          statusBadge(run.status),
          ' ',
          h('strong', {}, ALGORITHM_NAMES[algorithm]),
          // The solver's stop reason says the iterations and the residual it stopped at.
          `: ${run.stopReason}`,
        ),
      ),
      ...notStarted.map((algorithm) =>
        h('li', { 'data-run': algorithm }, h('strong', {}, ALGORITHM_NAMES[algorithm]), ': not started (the job ended before its turn).'),
      ),
    ),
  );
}

export function problemBox(error: unknown): HTMLElement {
  const problem: Problem | null = error instanceof ProblemError ? error.problem : null;
  return h(
    'div',
    { class: 'problem', role: 'alert' },
    h('strong', {}, problem ? problem.title : 'Error'),
    ' ',
    problem ? problem.detail : String(error),
    problem?.code ? h('span', { class: 'problem-code' }, ` (${problem.code})`) : null,
  );
}
