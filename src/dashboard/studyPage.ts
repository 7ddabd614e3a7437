/**
 * `#/studies/{id}`: one study. Status and progress live from its event stream; once it succeeded,
 * its figures (the SVG the API renders, e.g. the paper's Figures 1-3 for the presets), its table
 * (per grid point and metric: kept, dropped, mean, standard error, 95% interval, min, max), the
 * comparison with the reference table when the preset has one, and the raw samples as CSV.
 */
import { ProblemError, type ApiClient } from './apiClient.js';
import { isFinished, type Study, type StudyProgress, type StudyStatusEvent } from './apiTypes.js';
import { announce, clear, h, scrollingTable } from './dom.js';
import { saveFile } from './downloads.js';
import { formatInteger, formatNumber, formatTime, yesNo } from './format.js';
import { problemBox } from './jobPage.js';
import { statusBadge, studyProgress } from './statusBadge.js';
import type { View } from './view.js';

export class StudyPageView implements View {
  private readonly controller = new AbortController();
  private readonly header = h('section', { class: 'job-header', 'aria-labelledby': 'study-title' });
  private readonly results = h('div', { class: 'results' });
  private study: Study | null = null;
  private rendered = false;

  constructor(
    private readonly api: ApiClient,
    private readonly container: HTMLElement,
    private readonly id: string,
  ) {}

  async open(): Promise<void> {
    clear(this.container);
    this.container.append(h('p', { class: 'breadcrumb' }, h('a', { href: '#/studies' }, '← Studies')), this.header, this.results);
    try {
      this.show(await this.api.json<Study>('GET', `/v1/studies/${encodeURIComponent(this.id)}`));
    } catch (error) {
      this.header.replaceChildren(h('h1', { id: 'study-title' }, `Study ${this.id}`), problemBox(error));
      return;
    }
    if (this.study && !isFinished(this.study.status))
      this.api.stream(
        `/v1/studies/${encodeURIComponent(this.id)}/events`,
        {
          onEvent: (event, data) => {
            if (event === 'status') {
              this.show((data as StudyStatusEvent).study);
              if (isFinished((data as StudyStatusEvent).status)) announce(`Study ${(data as StudyStatusEvent).status}.`);
            } else if (event === 'progress' && this.study) this.show({ ...this.study, progress: data as StudyProgress });
          },
        },
        this.controller.signal,
      );
  }

  close(): void {
    this.controller.abort();
  }

  private show(study: Study): void {
    this.study = study;
    const action = isFinished(study.status)
      ? h('button', { type: 'button', class: 'danger' }, 'Delete study')
      : h('button', { type: 'button', class: 'secondary' }, 'Cancel study');
    action.addEventListener('click', () => void this.act(isFinished(study.status) ? 'delete' : 'cancel'));
    this.header.replaceChildren(
      h(
        'div',
        { class: 'page-title' },
        h('h1', { id: 'study-title' }, 'Study ', h('code', {}, study.id)),
        h('div', { class: 'actions' }, action),
      ),
      h('p', { class: 'job-status' }, statusBadge(study.status), ' ', studyProgress(study.progress)),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Preset'),
        h('dd', {}, study.preset ?? 'general'),
        h('dt', {}, 'Grid points'),
        h('dd', {}, formatInteger(study.points.length)),
        h('dt', {}, 'Samples per point'),
        h('dd', {}, formatInteger(study.samplesPerPoint)),
        h('dt', {}, 'Created'),
        h('dd', {}, formatTime(study.createdAt)),
      ),
      study.error ? problemBox(new ProblemError(study.error)) : '',
    );
    if (study.status === 'succeeded' && study.result && !this.rendered) {
      this.rendered = true;
      void this.showResults(study);
    }
  }

  private async act(action: 'cancel' | 'delete'): Promise<void> {
    try {
      if (action === 'cancel') this.show(await this.api.json<Study>('POST', `/v1/studies/${encodeURIComponent(this.id)}/cancel`));
      else if (confirm(`Delete study ${this.id}, its samples and figures?`)) {
        await this.api.json<undefined>('DELETE', `/v1/studies/${encodeURIComponent(this.id)}`);
        location.hash = '#/studies';
      }
    } catch (error) {
      this.header.append(problemBox(error));
    }
  }

  private async showResults(study: Study): Promise<void> {
    const figures = h('div', { class: 'figures' });
    const download = h('button', { type: 'button', class: 'secondary download' }, 'Samples (CSV)');
    download.addEventListener('click', () => {
      void this.api
        .send('GET', `/v1/studies/${encodeURIComponent(study.id)}/samples.csv`, undefined, { accept: 'text/csv' })
        .then(async (response) => saveFile(`study-${study.id}-samples.csv`, await response.text(), 'text/csv'))
        .catch((error: unknown) => download.after(problemBox(error)));
    });
    this.results.replaceChildren(
      h(
        'section',
        { class: 'card', id: 'study-figures', 'aria-labelledby': 'figures-title' },
        h('h2', { id: 'figures-title' }, 'Figures'),
        figures,
      ),
      resultTable(study),
      referenceTable(study),
      h('section', { class: 'card', id: 'study-downloads' }, h('h2', {}, 'Downloads'), h('div', { class: 'download-row' }, download)),
    );
    for (const figure of study.figures) {
      const holder = h('figure', { class: 'study-figure', 'data-figure': figure.name }, h('figcaption', {}, figure.title));
      figures.append(holder);
      try {
        const response = await this.api.send(
          'GET',
          `/v1/studies/${encodeURIComponent(study.id)}/figures/${encodeURIComponent(figure.name)}`,
          undefined,
          {
            accept: 'image/svg+xml',
          },
        );
        holder.append(figurePanels(await response.text(), figure.title));
      } catch (error) {
        holder.append(problemBox(error));
      }
    }
  }
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * The API's SVG as nodes of this page (an <img> could not send the API key), one picture per panel
 * (its `data-box`), so that the panels sit side by side on a wide screen and one under the other on
 * a narrow one, each at a size whose text can be read; the figure's title is the caption. It is drawn
 * with presentation attributes only, so the CSP's style rules leave it alone; anything scripted is
 * dropped. Under the panels, a readout says the values of the point nearest the cursor.
 */
function figurePanels(text: string, title: string): Element {
  const parsed = new DOMParser().parseFromString(text, 'image/svg+xml');
  const source = parsed.documentElement;
  if (source.nodeName !== 'svg') return h('p', {}, 'The figure could not be read.');
  for (const element of source.querySelectorAll('script, foreignObject')) element.remove();
  for (const element of [source, ...source.querySelectorAll('*')])
    for (const attribute of [...element.attributes]) if (/^on/i.test(attribute.name)) element.removeAttribute(attribute.name);
  const readout = h('output', { class: 'readout figure-readout', 'aria-live': 'polite' }, 'Point at a curve to read its values.');
  const panels = [...source.querySelectorAll('g.panel')].map((group) => {
    const [x, y, width, height] = (group.getAttribute('data-box') ?? '').split(' ').map(Number);
    const svg = document.createElementNS(SVG_NS, 'svg');
    for (const [name, value] of Object.entries({ viewBox: `${x} ${y} ${width} ${height}`, width, height, 'font-family': 'sans-serif' }))
      svg.setAttribute(name, String(value));
    const background = document.createElementNS(SVG_NS, 'rect');
    for (const [name, value] of Object.entries({ x, y, width, height, fill: 'white' })) background.setAttribute(name, String(value));
    svg.append(background, document.importNode(group, true));
    svg.setAttribute('role', 'img');
    const panelTitle = group.querySelector('text')?.textContent ?? '';
    svg.setAttribute('aria-label', panelTitle ? `${title}: ${panelTitle}` : title);
    svg.classList.add('study-svg');
    svg.addEventListener('pointermove', (event) => {
      const point = nearestPoint(svg, event.clientX, event.clientY);
      if (point) readout.textContent = describePoint(point, group.getAttribute('data-x-label') ?? 'x', panelTitle);
    });
    return svg;
  });
  if (panels.length === 0) return h('p', {}, 'The figure could not be read.');
  return h('div', { class: 'figure-body' }, h('div', { class: 'figure-panels', role: 'group', 'aria-label': title }, ...panels), readout);
}

/** The point of a panel nearest the cursor (in screen pixels), within 40 px. */
function nearestPoint(svg: SVGSVGElement, clientX: number, clientY: number): SVGCircleElement | null {
  let best: SVGCircleElement | null = null;
  let bestDistance = 40;
  for (const circle of svg.querySelectorAll<SVGCircleElement>('circle.point')) {
    const matrix = circle.getScreenCTM();
    if (!matrix) continue;
    const cx = circle.cx.baseVal.value;
    const cy = circle.cy.baseVal.value;
    const distance = Math.hypot(matrix.a * cx + matrix.c * cy + matrix.e - clientX, matrix.b * cx + matrix.d * cy + matrix.f - clientY);
    if (distance < bestDistance) [best, bestDistance] = [circle, distance];
  }
  return best;
}

/** "mean = 0, m = 4: E[ρ_APC] = 0.9921 (95%: 0.992 to 0.9923)". */
function describePoint(circle: SVGCircleElement, xLabel: string, panelTitle: string): string {
  const value = (name: string): number => Number(circle.getAttribute(name));
  const band = circle.hasAttribute('data-low') ? ` (95%: ${formatNumber(value('data-low'))} to ${formatNumber(value('data-high'))})` : '';
  const where = [panelTitle, `${xLabel} = ${formatNumber(value('data-x'))}`].filter(Boolean).join(', ');
  return `${where}: ${circle.getAttribute('data-series') ?? ''} = ${formatNumber(value('data-y'))}${band}`;
}

/** The settings that differ between grid points (the others are the same everywhere, shown once). */
function varyingSettings(study: Study): string[] {
  const keys = Object.keys(study.points[0]?.settings ?? {}) as (keyof Study['points'][number]['settings'])[];
  return keys.filter((key) => new Set(study.points.map((point) => point.settings[key])).size > 1);
}

/** The paper's symbols for the metrics of its experiments (as the API's figures name them). */
const SYMBOLS: Record<string, string> = { 'rates.apc.rate': 'ρ_APC', 'rates.dhbm.rate': 'ρ_HBM', tanInvSqTheta: 'tan⁻²θ₁₂' };

/** A metric by its symbol, with its path when they differ (the path is what the samples CSV names). */
function metricName(name: string): HTMLElement | string {
  const symbol = SYMBOLS[name];
  return symbol ? h('span', { title: name }, symbol, h('span', { class: 'cell-note' }, name)) : name;
}

type SettingKey = keyof Study['points'][number]['settings'];

/** A grid point by the settings that tell it apart (all of m, mean, n, p it has when none varies). */
function pointLabel(study: Study, settings: Study['points'][number]['settings'] | undefined, index: number): string {
  if (!settings) return `point ${index}`;
  const varying = varyingSettings(study) as SettingKey[];
  const keys = varying.length > 0 ? varying : (['m', 'mean', 'n', 'p'] as SettingKey[]).filter((key) => key in settings);
  return keys.map((key) => `${key} = ${formatNumber(settings[key])}`).join(', ') || `point ${index}`;
}

function resultTable(study: Study): HTMLElement {
  const rows = study.result!.points.flatMap((point) =>
    point.metrics.map((metric) => [
      pointLabel(study, point.settings, point.index),
      metric.kind === 'share'
        ? h('span', {}, metricName(metric.metric), ` (share${metric.of ? ` of ${metric.of}` : ''})`)
        : metricName(metric.metric),
      `${formatInteger(point.kept)} / ${formatInteger(point.samples)}`,
      point.dropped > 0 ? `${formatInteger(point.dropped)} (${point.dropReasons.map((r) => `${r.reason}: ${r.count}`).join('; ')})` : '0',
      formatNumber(metric.mean),
      formatNumber(metric.standardError, 2),
      metric.interval ? `[${formatNumber(metric.interval[0])}, ${formatNumber(metric.interval[1])}]` : '—',
      formatNumber(metric.min),
      formatNumber(metric.max),
    ]),
  );
  return h(
    'section',
    { class: 'card', id: 'study-table', 'aria-labelledby': 'study-table-title' },
    h('h2', { id: 'study-table-title' }, 'Results per grid point'),
    scrollingTable(
      'Per grid point and metric',
      ['Point', 'Metric', 'Kept', 'Dropped', 'Mean', 'Std. error', '95% interval', 'Min', 'Max'],
      rows,
      { class: 'study-results' },
    ),
  );
}

function referenceTable(study: Study): HTMLElement | string {
  const reference = study.result?.reference;
  if (!reference || reference.length === 0) return '';
  return h(
    'section',
    { class: 'card', id: 'study-reference', 'aria-labelledby': 'study-reference-title' },
    h('h2', { id: 'study-reference-title' }, 'Against the reference table'),
    scrollingTable(
      'Reference values and this study',
      ['Point', 'Metric', 'Reference', 'Mean', 'Std. error', 'Within 3 std. errors'],
      reference.map((row) => [
        pointLabel(study, study.result!.points.find((point) => point.index === row.point)?.settings, row.point),
        metricName(row.metric),
        formatNumber(row.reference),
        formatNumber(row.mean),
        formatNumber(row.standardError, 2),
        yesNo(row.withinThreeStandardErrors),
      ]),
    ),
  );
}
