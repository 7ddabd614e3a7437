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
import {
  formatAngle,
  formatDuration,
  formatInteger,
  formatLabels,
  formatMatrix,
  formatNumber,
  formatRate,
  formatTime,
  yesNo,
} from './format.js';
import { thetaHeatmap } from './heatmap.js';
import { partitionPictures } from './partitionPicture.js';
import { phiChart } from './phiChart.js';
import { progressBar, runConverged, statusBadge } from './statusBadge.js';
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

function fact(term: string, value: string): HTMLElement[] {
  return [h('dt', {}, term), h('dd', {}, value)];
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

function heterogeneitySection(analysis: Analysis): HTMLElement {
  const { heterogeneity } = analysis;
  return h(
    'section',
    { class: 'card', id: 'heterogeneity', 'aria-labelledby': 'heterogeneity-title' },
    h('h2', { id: 'heterogeneity-title' }, 'Heterogeneity'),
    h(
      'dl',
      { class: 'facts' },
      ...fact('theta_H (smallest angle between two machines)', formatAngle(heterogeneity.thetaH)),
      ...fact('Pair', heterogeneity.thetaHPair ? `machines ${heterogeneity.thetaHPair[0]} and ${heterogeneity.thetaHPair[1]}` : '—'),
      ...fact('phi_min (smallest angle between two rows of a machine)', formatAngle(heterogeneity.phiMin)),
      ...fact('Row-norm ratio max |a_k| / min |a_k|', formatNumber(heterogeneity.rowNormRatio)),
    ),
    h(
      'div',
      { class: 'figures' },
      h(
        'div',
        {},
        h('h3', {}, 'theta_ij between machines'),
        thetaHeatmap(heterogeneity.theta, heterogeneity.thetaHPair, heterogeneity.thetaH),
      ),
      h('div', {}, h('h3', {}, 'phi_i per machine'), phiChart(heterogeneity.phi)),
    ),
  );
}

function conditioningSection(analysis: Analysis): HTMLElement {
  const { conditioning, bounds } = analysis;
  const bar = (label: string, value: number, max: number): HTMLElement => {
    const fill = h('span', { class: 'log-bar-fill' });
    // Lengths on a log scale from 1: kappa values span many orders of magnitude.
    fill.style.width = `${Math.max(1, (100 * Math.log10(Math.max(1, value))) / Math.max(1e-9, Math.log10(Math.max(10, max))))}%`;
    return h(
      'div',
      { class: 'log-bar' },
      h('span', { class: 'log-bar-label' }, label),
      h('span', { class: 'log-bar-track' }, fill),
      h('span', {}, formatNumber(value)),
    );
  };
  const max = Math.max(conditioning.kappaS, conditioning.kappaAtA);
  return h(
    'section',
    { class: 'card', id: 'conditioning', 'aria-labelledby': 'conditioning-title' },
    h('h2', { id: 'conditioning-title' }, 'Conditioning: kappa(S) against kappa(AᵀA)'),
    h(
      'div',
      {
        class: 'log-bars',
        role: 'img',
        'aria-label': `kappa(S) = ${formatNumber(conditioning.kappaS)}, kappa(A^T A) = ${formatNumber(conditioning.kappaAtA)} (log scale)`,
      },
      bar('kappa(S)', conditioning.kappaS, max),
      bar('kappa(AᵀA)', conditioning.kappaAtA, max),
    ),
    h(
      'p',
      { class: 'hint' },
      'Bar lengths on a log scale. APC and Cimmino converge at rates set by kappa(S); D-HBM, DGD and D-NAG by kappa(AᵀA).',
    ),
    scrollingTable(
      'Bounds on the condition numbers',
      ['Bound', 'Value', 'Hypothesis holds'],
      [
        [
          'Proposition 1: theta_H = π/2 gives kappa(S) = 1',
          conditioning.kappaS === 1 ? '1' : '—',
          yesNo(bounds.proposition1.hypothesisHolds),
        ],
        ['Proposition 2: kappa(S) ≥ 1 / sin²(theta_H)', formatNumber(bounds.proposition2KappaSLowerBound), 'yes'],
        [
          `Theorem 2: kappa(S) ≤ (1 + s + u) / (1 − s − u), s = √(p (n − p) cos theta_H), u = (n − p) cos theta_H, ${
            bounds.theorem2.p === null ? 'no block size p gives 1 − s − u > 0' : `best at p = ${bounds.theorem2.p}`
          }`,
          formatNumber(bounds.theorem2KappaSUpperBound),
          yesNo(bounds.theorem2.hypothesisHolds),
        ],
        [
          `Theorem 3: kappa(S) ≤ (1 + c) / (1 − c), c = ${formatNumber(bounds.theorem3.c)}`,
          formatNumber(bounds.theorem3KappaSUpperBound),
          yesNo(bounds.theorem3.hypothesisHolds),
        ],
        ['Theorem 4: kappa(A) ≥ max_k |a_k| / min_l (|a_l| sin theta_min^(l))', formatNumber(bounds.theorem4KappaALowerBound), 'yes'],
        [
          'Theorem 4: kappa(AᵀA) ≥ 1 / sin²(phi_min)',
          formatNumber(bounds.theorem4KappaAtALowerBounds.phiMin),
          yesNo(bounds.theorem4KappaAtALowerBounds.phiMin !== null),
        ],
        ['Theorem 4: kappa(AᵀA) ≥ (row-norm ratio)²', formatNumber(bounds.theorem4KappaAtALowerBounds.rowNormRatio), 'yes'],
      ],
    ),
  );
}

function ratesSection(analysis: Analysis, runs: Partial<Record<string, Run>>): HTMLElement {
  const recommended = analysis.recommendation.algorithm;
  const rows = ALGORITHMS.map((algorithm) => {
    const tuning = analysis.rates[algorithm];
    const bounds = analysis.bounds.table1[algorithm];
    const run = runs[algorithm];
    const lowerNames = bounds
      ? Object.entries(bounds.lowerBounds)
          .map(([name, value]) => `${name} ${formatRate(value)}`)
          .join(', ')
      : '';
    return [
      h(
        'span',
        {},
        ALGORITHM_NAMES[algorithm],
        algorithm === recommended ? h('span', { class: 'recommended-tag' }, ' ★ recommended') : null,
      ),
      h('span', { class: 'rate' }, formatRate(tuning.rate)),
      bounds
        ? h(
            'span',
            {},
            `${formatRate(bounds.lower)} to ${formatRate(bounds.upper)}`,
            bounds.upperHypothesisHolds ? '' : ' (upper bound: hypothesis fails)',
            lowerNames ? h('span', { class: 'cell-note' }, `lower: ${lowerNames}`) : null,
          )
        : '—',
      Object.entries(tuning.parameters)
        .map(([name, value]) => `${name} = ${formatRate(value)}`)
        .join(', '),
      formatInteger(analysis.recommendation.predictedIterations[algorithm] ?? null),
      run ? formatInteger(run.iterations) : '—',
      run
        ? h(
            'span',
            {},
            statusBadge(run.status),
            run.empiricalRate !== null ? h('span', { class: 'cell-note' }, `ρ̂ = ${formatRate(run.empiricalRate)}`) : null,
          )
        : '—',
    ];
  });
  return h(
    'section',
    { class: 'card', id: 'rates', 'aria-labelledby': 'rates-title' },
    h('h2', { id: 'rates-title' }, 'Rates of the six algorithms'),
    h(
      'p',
      { class: 'hint' },
      `Optimal rate ρ (smaller is faster) with the bounds of Table 1; the upper bound's hypothesis is (m − 1) cos(theta_H) < 1. `,
      `Predicted iterations to reduce the error by ${formatNumber(analysis.recommendation.tolerance)}: ⌈ln(tol) / ln(ρ)⌉. `,
      'ρ̂: the rate the run showed.',
    ),
    scrollingTable(
      'Rates, Table 1 bounds, predicted and actual iterations',
      ['Algorithm', 'Optimal rate ρ', 'Table 1 bounds on ρ', 'Parameters', 'Predicted iterations', 'Actual iterations', 'Run'],
      rows,
      { class: 'rates' },
    ),
  );
}

function recommendationSection(analysis: Analysis): HTMLElement {
  const { recommendation } = analysis;
  const condition = recommendation.sufficientCondition;
  return h(
    'section',
    { class: 'card', id: 'recommendation', 'aria-labelledby': 'recommendation-title' },
    h(
      'h2',
      { id: 'recommendation-title' },
      'Recommendation: ',
      h('span', { class: 'recommended' }, ALGORITHM_NAMES[recommendation.algorithm]),
    ),
    h('p', { class: 'explanation' }, recommendation.explanation),
    h(
      'dl',
      { class: 'facts' },
      ...fact('Regime', recommendation.regime),
      ...fact(
        'Corollary 1 (sin²(phi_min) < (1 − c)/(1 + c))',
        condition.applicable
          ? `${formatNumber(condition.lhs)} < ${formatNumber(condition.rhs)}: ${condition.holds ? 'holds, APC is faster' : 'does not hold'}`
          : 'not applicable',
      ),
      ...fact(
        'Exact comparison',
        `APC ρ = ${formatRate(recommendation.exact.apcRate)}, D-HBM ρ = ${formatRate(recommendation.exact.dhbmRate)}: ${
          recommendation.exact.tie ? 'a tie' : `${ALGORITHM_NAMES[recommendation.exact.faster]} is faster`
        }`,
      ),
    ),
  );
}

/** Seconds as a duration a reader compares: 4 significant digits and the unit. */
function seconds(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${formatNumber(value)} s`;
}

/**
 * Predicted time to solution: per algorithm, the iterations its optimal rate needs, the seconds one
 * iteration costs here (and on the described deployment), and their product; which of APC and D-HBM
 * finishes first, and why that can differ from the rates.
 */
function timeToSolutionSection(analysis: Analysis): HTMLElement | string {
  const times = analysis.timeToSolution;
  if (!times) return '';
  const deployment = times.deployment;
  const head = ['Algorithm', 'Iterations', 'Seconds per iteration', 'Seconds'];
  if (deployment) head.push('Deployment: seconds per iteration', 'Deployment: seconds');
  const fastest = (of: typeof deployment | typeof times): number =>
    Math.min(...ALGORITHMS.map((algorithm) => of?.[algorithm].seconds ?? Infinity));
  const [bestHere, bestThere] = [fastest(times), fastest(deployment)];
  const rows = ALGORITHMS.map((algorithm) => {
    const here = times[algorithm];
    const there = deployment?.[algorithm];
    const mark = (value: number | null, best: number): HTMLElement | string =>
      value !== null && value === best ? h('strong', { class: 'fastest' }, seconds(value), ' ★') : seconds(value);
    return [
      ALGORITHM_NAMES[algorithm],
      formatInteger(here.iterations),
      seconds(here.secondsPerIteration),
      mark(here.seconds, bestHere),
      ...(there ? [seconds(there.secondsPerIteration), mark(there.seconds, bestThere)] : []),
    ];
  });
  const { calibration } = times;
  const assumptions = deployment?.assumptions;
  return h(
    'section',
    { class: 'card', id: 'time-to-solution', 'aria-labelledby': 'time-to-solution-title' },
    h('h2', { id: 'time-to-solution-title' }, 'Predicted time to solution'),
    analysis.recommendation.finishesFirst ? h('p', { class: 'explanation' }, analysis.recommendation.finishesFirst.explanation) : null,
    h(
      'p',
      { class: 'hint' },
      `Iterations at each optimal rate to reduce the error by ${formatNumber(analysis.recommendation.tolerance)}; `,
      `seconds per iteration priced here on the ${calibration.backend} kernels (measured ${formatTime(calibration.measuredAt)})`,
      assumptions
        ? `, and on the deployment: ${formatNumber(assumptions.machineGflops)} GFLOP/s and ${formatNumber(assumptions.memoryBandwidthGBs)} GB/s per machine, ${formatNumber(assumptions.latencyMicroseconds)} µs latency, ${formatNumber(assumptions.bandwidthGBs)} GB/s links`
        : '',
      '. ★: the fastest.',
    ),
    scrollingTable('Time to solution per algorithm', head, rows, { class: 'time-to-solution' }),
  );
}

type Advice = NonNullable<NonNullable<Job['result']>['advice']>;

/**
 * An advise job's candidate partitions: each strategy's machine sizes, kappa(S), theta_H and predicted
 * time, the best marked; under them the pictures of the given partition and of the best.
 */
function adviceSection(advice: Advice, pictures: HTMLElement): HTMLElement {
  const sizes = (list: number[]): string =>
    list.length <= 8 ? list.join(', ') : `${list.length} machines, ${Math.min(...list)} to ${Math.max(...list)} rows`;
  return h(
    'section',
    { class: 'card', id: 'advice', 'aria-labelledby': 'advice-title' },
    h('h2', { id: 'advice-title' }, 'Partition advice: ', h('span', { class: 'recommended' }, advice.best)),
    h('p', { class: 'explanation' }, advice.summary),
    h(
      'p',
      { class: 'hint' },
      `kappa(S) decides APC's rate (smaller is faster). The given partition's kappa(S) is ${formatNumber(advice.givenRatio)} times the best's; `,
      `constructed candidates keep every machine within ${formatNumber(advice.imbalance * 100, 3)}% of n/m rows. `,
      'Take the best as partition { "fromAdvice": id }.',
    ),
    scrollingTable(
      'Candidate partitions',
      ['Strategy', 'Rows per machine', 'kappa(S)', 'theta_H', 'APC iterations', 'APC time', 'Within imbalance'],
      advice.candidates.map((candidate) => [
        h(
          'span',
          { 'data-strategy': candidate.strategy },
          candidate.strategy,
          candidate.strategy === advice.best ? h('span', { class: 'recommended-tag' }, ' ★ best') : null,
        ),
        sizes(candidate.sizes),
        formatNumber(candidate.kappaS),
        formatAngle(candidate.thetaH),
        formatInteger(candidate.timeToSolution?.iterations ?? null),
        seconds(candidate.timeToSolution?.seconds),
        yesNo(candidate.withinImbalance),
      ]),
      { class: 'advice' },
    ),
    pictures,
  );
}
