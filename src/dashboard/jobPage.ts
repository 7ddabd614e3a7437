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
  type Solution,
  type StatusEvent,
  type Trace,
} from './apiTypes.js';
import { ConvergenceChart, type ConvergenceSeries } from './convergenceChart.js';
import { announce, clear, h, scrollingTable } from './dom.js';
import { saveFile, solutionCsv, traceCsv, tracesCsv } from './downloads.js';
import { formatDuration, formatInteger, formatLabels, formatMatrix, formatTime } from './format.js';
import { partitionPictures } from './partitionPicture.js';
import { progressBar, runConverged, statusBadge } from './statusBadge.js';
import {
  adviceSection,
  type Advice,
  conditioningSection,
  fact,
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
  private readonly results = h('div', { class: 'results' });
  private chart: ConvergenceChart | null = null;
  private readonly live = new Map<AlgorithmId, { iteration: number[]; values: (number | null)[] }>();
  private liveFrame = 0;
  private traces: Trace[] = [];
  private quantity: Quantity = 'relativeResidual';
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
    const unconverged = runs.filter(([, run]) => !runConverged(run.status));
    const finished = isFinished(job.status);
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
        unconverged.length > 0
          ? h(
              'span',
              { class: 'run-count' },
              ` ${unconverged.length} of ${runs.length} ${runs.length === 1 ? 'run' : 'runs'} did not converge`,
            )
          : null,
      ),
      job.error ? problemBox(new ProblemError(job.error)) : '',
    );
    this.flags.replaceChildren(...(unconverged.length > 0 ? [runFlags(unconverged)] : []));
    this.details.hidden = false;
    this.details.replaceChildren(
      h(
        'dl',
        { class: 'facts' },
        ...fact('Type', job.type),
        ...fact('Matrix', formatMatrix(job.matrix)),
        ...(job.matrix.sha256 ? fact('SHA-256', job.matrix.sha256) : []),
        ...fact('Machines m', formatInteger(job.m)),
        ...fact('Algorithms', job.algorithms.map((a) => ALGORITHM_NAMES[a]).join(', ') || '—'),
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
    try {
      this.traces = await Promise.all(
        runs.map(([algorithm]) => this.api.json<Trace>('GET', `/v1/jobs/${encodeURIComponent(this.id)}/runs/${algorithm}/trace`)),
      );
    } catch (error) {
      this.results.append(problemBox(error));
    }
    // The chart first, drawn before the sections below exist (it is what the user looks at first,
    // and its measured render time is then its own, not the layout of the whole page).
    if (this.traces.length > 0) this.showConvergence(result.runs, result.analysis);
    else this.convergence.hidden = true;
    await new Promise((resolve) => requestAnimationFrame(resolve));
    this.results.replaceChildren(
      heterogeneitySection(result.analysis),
      conditioningSection(result.analysis),
      ratesSection(result.analysis, result.runs),
      recommendationSection(result.analysis),
      timeToSolutionSection(result.analysis),
      result.advice ? adviceSection(result.advice, this.advicePictures(result.advice)) : this.partitionSection(),
      this.downloadsSection(job, runs),
    );
  }

  private showConvergence(runs: Partial<Record<string, Run>>, analysis: Analysis): void {
    const hasError = this.traces.some((trace) => trace.relativeError !== null);
    this.ensureChart('Convergence');
    const title = this.convergence.querySelector('h2')!;
    title.textContent = 'Convergence';
    const draw = (): void => {
      this.chart?.setData(
        this.traces.map((trace) => ({
          algorithm: trace.algorithm,
          iteration: trace.iteration,
          values: (this.quantity === 'relativeError' ? trace.relativeError : trace.relativeResidual) ?? [],
          rate: runs[trace.algorithm]?.theoreticalRate ?? analysis.rates[trace.algorithm].rate,
        })),
      );
    };
    const choices = h(
      'fieldset',
      { class: 'choices inline' },
      h('legend', {}, 'Show'),
      ...(
        [
          ['relativeResidual', 'relative residual |Ax − b| / |b|'],
          ['relativeError', 'relative error |x − x*| / |x*|'],
        ] as [Quantity, string][]
      ).map(([value, label]) => {
        const radio = h('input', {
          type: 'radio',
          name: 'quantity',
          value,
          checked: value === this.quantity,
          disabled: value === 'relativeError' && !hasError,
        });
        radio.addEventListener('change', () => {
          this.quantity = value;
          this.chart?.destroy();
          this.chart = null;
          this.convergence.querySelector('.chart')?.remove();
          const plot = h('div', { class: 'chart', id: 'convergence-chart' });
          choices.after(plot);
          this.chart = new ConvergenceChart(plot, value === 'relativeError' ? 'relative error' : 'relative residual');
          draw();
        });
        return h('label', { class: 'radio' }, radio, ` ${label}`);
      }),
    );
    // The choice next to the title and the explanation under the legend: the chart comes first.
    title.after(choices);
    this.convergence.append(
      h(
        'p',
        { class: 'hint' },
        'Solid: each run as recorded. Dashed: its theoretical rate ρ^t from the first point (ρ = the spectral radius of its iteration). ',
        'Point at the chart to read the values under the cursor; drag across it to zoom, double-click to reset; click a legend entry to hide or show its run.',
      ),
    );
    draw();
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
    const base = `job-${job.id}`;
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
    const solution = (algorithm: AlgorithmId): Promise<Solution> =>
      this.api.json<Solution>('GET', `/v1/jobs/${encodeURIComponent(job.id)}/runs/${algorithm}/solution`);
    const traceOf = (algorithm: AlgorithmId): Trace | undefined => this.traces.find((trace) => trace.algorithm === algorithm);
    return h(
      'section',
      { class: 'card', id: 'downloads', 'aria-labelledby': 'downloads-title' },
      h('h2', { id: 'downloads-title' }, 'Downloads'),
      h(
        'div',
        { class: 'download-row' },
        button('Job and analysis (JSON)', () => saveFile(`${base}.json`, JSON.stringify(job, null, 2), 'application/json')),
        this.traces.length > 0
          ? button('All traces (CSV)', () => saveFile(`${base}-traces.csv`, tracesCsv(this.traces), 'text/csv'))
          : null,
      ),
      runs.length > 0
        ? scrollingTable(
            'Per run',
            ['Run', 'Trace', 'Solution'],
            runs.map(([algorithm]) => {
              const trace = traceOf(algorithm);
              return [
                ALGORITHM_NAMES[algorithm],
                trace
                  ? h(
                      'span',
                      { class: 'download-row' },
                      button(
                        'CSV',
                        () => saveFile(`${base}-${algorithm}-trace.csv`, traceCsv(trace), 'text/csv'),
                        `${ALGORITHM_NAMES[algorithm]} trace as CSV`,
                      ),
                      button(
                        'JSON',
                        () => saveFile(`${base}-${algorithm}-trace.json`, JSON.stringify(trace), 'application/json'),
                        `${ALGORITHM_NAMES[algorithm]} trace as JSON`,
                      ),
                    )
                  : '—',
                h(
                  'span',
                  { class: 'download-row' },
                  button(
                    'CSV',
                    async () => saveFile(`${base}-${algorithm}-solution.csv`, solutionCsv(await solution(algorithm)), 'text/csv'),
                    `${ALGORITHM_NAMES[algorithm]} solution as CSV`,
                  ),
                  button(
                    'JSON',
                    async () =>
                      saveFile(`${base}-${algorithm}-solution.json`, JSON.stringify(await solution(algorithm)), 'application/json'),
                    `${ALGORITHM_NAMES[algorithm]} solution as JSON`,
                  ),
                ),
              ];
            }),
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
function runFlags(runs: [AlgorithmId, Run][]): HTMLElement {
  const byStatus = new Map<string, string[]>();
  for (const [algorithm, run] of runs) byStatus.set(run.status, [...(byStatus.get(run.status) ?? []), ALGORITHM_NAMES[algorithm]]);
  const named = [...byStatus].map(([status, names]) => `${status}: ${names.join(', ')}`).join('; ');
  return h(
    'details',
    {
      class: 'problem run-problems',
      role: 'note',
      'aria-label': 'Runs that did not converge',
      open: matchMedia('(min-width: 641px)').matches,
    },
    h(
      'summary',
      {},
      h('strong', {}, runs.length === 1 ? 'One run did not converge' : `${runs.length} runs did not converge`),
      ` (${named})`,
    ),
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
