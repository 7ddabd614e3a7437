/**
 * Convergence of each run on a log scale against iteration (uPlot), each run with its theoretical
 * rate as a dashed line rho^t started from the run's first value. Every run is labelled by name on
 * its own line, at a place where the label covers no other label and as few other lines as can be,
 * so the chart reads without colour; a legend below (no hover needed) shows each run's line style
 * and its rate. While a job runs, the progress events' residuals are drawn as they come (setData),
 * and the stored traces replace them when it ends.
 */
import uPlot from 'uplot';
import { ALGORITHM_NAMES, type AlgorithmId } from './apiTypes.js';
import { h } from './dom.js';
import { formatInteger, formatNumber, formatRate } from './format.js';
import { ALGORITHM_COLORS, THEORY_DASH } from './palette.js';

export interface ConvergenceSeries {
  algorithm: AlgorithmId;
  iteration: number[];
  values: (number | null)[];
  /** The run's theoretical rate rho (its iteration's spectral radius); null: no dashed line. */
  rate: number | null;
  /** 1 - rho without cancellation, when known (the analysis' optimal rate): shown where rho rounds to 1. */
  gap?: number;
  /** Said beside the run's name in the legend ("error to x_W": what its values measure). */
  note?: string;
}

/** Theory lines stop this far below the smallest measured value, so they do not stretch the axis to 1e-300. */
const THEORY_FLOOR_FACTOR = 1e-2;
const HEIGHT = 340;

/** A log axis's tick as 1e-8; uPlot passes null for the ticks it leaves unlabelled (despite its types). */
const logTick = (tick: number | null): string => (tick === null ? '' : tick.toExponential(0));

/** Only positive finite values have a place on a log axis. */
const positiveOrNull = (value: number | null): number | null => (value !== null && Number.isFinite(value) && value > 0 ? value : null);

export class ConvergenceChart {
  private plot: uPlot | null = null;
  private signature = '';
  private readonly host: HTMLElement;
  private readonly legend: HTMLElement;
  /** The values under the cursor: each run's at the iteration pointed at. */
  private readonly readout: HTMLElement;
  private readonly resize: ResizeObserver;
  /** Time from receiving the data to the chart's first draw, in ms (the browser test reports it). */
  renderMs: number | null = null;

  constructor(
    readonly element: HTMLElement,
    private readonly yLabel: string,
  ) {
    this.host = h('div', { class: 'chart-host' });
    this.legend = h('ul', { class: 'chart-legend', 'aria-label': 'Legend' });
    this.readout = h('output', { class: 'readout chart-readout', 'aria-live': 'polite' }, 'Point at the chart to read each run’s value.');
    element.append(this.host, this.readout, this.legend);
    this.resize = new ResizeObserver(() => this.plot?.setSize(this.size()));
    this.resize.observe(element);
  }

  destroy(): void {
    this.resize.disconnect();
    this.plot?.destroy();
    this.plot = null;
  }

  private size(): { width: number; height: number } {
    return { width: Math.max(280, this.element.clientWidth), height: HEIGHT };
  }

  setData(series: ConvergenceSeries[]): void {
    // Reading the size first lays out whatever the page added meanwhile: that is not the chart's time.
    const size = this.size();
    const started = performance.now();
    const data = alignedData(series);
    const signature = series.map((s) => `${s.algorithm}:${s.rate !== null}`).join(',');
    this.element.dataset.series = String(data.length - 1);
    this.element.dataset.runs = String(series.length);
    this.element.dataset.points = String(series.reduce((sum, s) => sum + s.iteration.length, 0));
    if (this.plot && signature === this.signature) {
      this.plot.setData(data);
      return;
    }
    this.signature = signature;
    this.plot?.destroy();
    let firstDraw = true;
    const options: uPlot.Options = {
      ...size,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [
        { label: 'iteration', values: (_u, ticks) => ticks.map((tick) => formatInteger(tick as number | null)) },
        { label: this.yLabel, size: 60, values: (_u, ticks) => ticks.map(logTick) },
      ],
      // The legend below is the page's own: readable without hover, with each line's style.
      legend: { show: false },
      cursor: { drag: { x: true, y: false } },
      series: [
        { label: 'iteration', value: (_u, v) => formatInteger(v) },
        ...series.flatMap((s): uPlot.Series[] => [
          {
            label: ALGORITHM_NAMES[s.algorithm],
            stroke: ALGORITHM_COLORS[s.algorithm],
            width: 2,
            spanGaps: true,
            points: { show: false },
            value: (_u, v) => formatNumber(v, 3),
          },
          {
            label: `${ALGORITHM_NAMES[s.algorithm]} theory ρ^t${s.rate === null ? '' : ` (ρ = ${formatRate(s.rate, s.gap)})`}`,
            stroke: ALGORITHM_COLORS[s.algorithm],
            width: 1.5,
            dash: THEORY_DASH,
            spanGaps: true,
            points: { show: false },
            value: (u, _v, _series, idx) => (idx === null ? '' : formatNumber(theoryValueAt(s, u.data[0][idx]), 3)),
          },
        ]),
      ],
      hooks: {
        setCursor: [(u) => this.showValues(u, series)],
        draw: [
          (u) => {
            const placed = labelLines(u, series);
            this.element.dataset.labels = JSON.stringify(placed);
            this.element.dataset.plot = JSON.stringify(plotGeometry(u));
            if (firstDraw) {
              firstDraw = false;
              this.renderMs = performance.now() - started;
              this.element.dataset.renderMs = this.renderMs.toFixed(1);
            }
          },
        ],
      },
    };
    this.plot = new uPlot(options, data, this.host);
    this.showLegend(series);
  }

  /** Each shown run's value at the iteration under the cursor (its last recorded value at or before it). */
  private showValues(u: uPlot, series: ConvergenceSeries[]): void {
    const index = u.cursor.idx;
    if (index === null || index === undefined) return;
    const iteration = u.data[0][index];
    const values = series.flatMap((s, k) => {
      if (!u.series[1 + 2 * k].show) return [];
      const value = valueAt(s, iteration);
      return value === null ? [] : [`${ALGORITHM_NAMES[s.algorithm]} ${formatNumber(value, 3)}`];
    });
    this.readout.dataset.iteration = String(iteration);
    this.readout.textContent = `iteration ${formatInteger(iteration)}: ${values.join(' · ')}`;
  }

  /** One entry per run: its solid line and name, its dashed theory line and rate; a click hides or shows both. */
  private showLegend(series: ConvergenceSeries[]): void {
    this.legend.replaceChildren(
      ...series.map((s, k) => {
        const name = ALGORITHM_NAMES[s.algorithm];
        const toggle = h(
          'button',
          { type: 'button', class: 'legend-entry', 'aria-pressed': 'true', 'data-algorithm': s.algorithm },
          swatch(ALGORITHM_COLORS[s.algorithm], false),
          h('span', { class: 'legend-name' }, name),
          s.note ? h('span', { class: 'legend-note' }, ` (${s.note})`) : null,
          s.rate === null ? null : swatch(ALGORITHM_COLORS[s.algorithm], true),
          s.rate === null ? null : h('span', { class: 'legend-rate' }, `theory ρ^t, ρ = ${formatRate(s.rate, s.gap)}`),
        );
        toggle.addEventListener('click', () => {
          const show = toggle.getAttribute('aria-pressed') !== 'true';
          toggle.setAttribute('aria-pressed', String(show));
          this.plot?.setSeries(1 + 2 * k, { show });
          this.plot?.setSeries(2 + 2 * k, { show });
        });
        return h('li', {}, toggle);
      }),
    );
  }
}

/** A run's last recorded value at or before iteration x (null before its first). */
function valueAt(s: ConvergenceSeries, x: number): number | null {
  let low = 0;
  let high = s.iteration.length - 1;
  if (high < 0 || s.iteration[0] > x) return null;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (s.iteration[middle] <= x) low = middle;
    else high = middle - 1;
  }
  return s.values[low];
}

/**
 * One x column (every iteration any run recorded) and, per run, its values and its theory line.
 * The theory line rho^t is straight on the log axis, so it is given by its two ends only (the
 * points between are gaps that the line spans; the legend computes its value at any iteration):
 * uPlot then builds 2 points' path instead of one per iteration. A run recorded at every x with
 * only positive values is passed as it is, without a copy.
 */
export function alignedData(series: ConvergenceSeries[]): uPlot.AlignedData {
  const x = unionOfIterations(series.map((s) => s.iteration));
  const columns: (number | null)[][] = [];
  for (const s of series) {
    const aligned = s.iteration.length === x.length;
    let floor = Infinity;
    let measured: (number | null)[];
    let position: (k: number) => number;
    if (aligned && s.values.every((value) => value !== null && value > 0 && value < Infinity)) {
      measured = s.values;
      for (const value of s.values) if (value! < floor) floor = value!;
      position = (k) => k;
    } else {
      // Both ascending: walk them together to place each recorded point at its x.
      measured = new Array<number | null>(x.length).fill(null);
      const positions = new Int32Array(s.iteration.length);
      for (let k = 0, i = 0; k < s.iteration.length; k++) {
        while (x[i] < s.iteration[k]) i++;
        positions[k] = i;
        const value = positiveOrNull(s.values[k]);
        measured[i] = value;
        if (value !== null && value < floor) floor = value;
      }
      position = (k) => positions[k];
    }
    const theory = new Array<number | null>(x.length).fill(null);
    const start = s.iteration.findIndex((_, k) => positiveOrNull(s.values[k]) !== null);
    if (s.rate !== null && s.rate >= 0 && start >= 0) {
      const { t0, y0 } = theoryStart(s, start);
      const first = position(start);
      theory[first] = y0;
      // The last x of the run where the line is still above the floor.
      const lowest = floor * THEORY_FLOOR_FACTOR;
      const last = s.iteration[s.iteration.length - 1];
      let end = first;
      for (let i = position(s.iteration.length - 1); i > first; i--) {
        if (x[i] <= last && theoryValue(s.rate, t0, y0, x[i]) >= lowest) {
          end = i;
          break;
        }
      }
      if (end > first) theory[end] = theoryValue(s.rate, t0, y0, x[end]);
    }
    columns.push(measured, theory);
  }
  return [x, ...columns];
}

/** Where a run's theory line starts: its first positive value. */
function theoryStart(s: ConvergenceSeries, start: number): { t0: number; y0: number } {
  return { t0: s.iteration[start], y0: s.values[start]! };
}

/** y0 * rho^(t - t0). */
function theoryValue(rate: number, t0: number, y0: number, t: number): number {
  return y0 * Math.exp(Math.log(rate) * (t - t0));
}

/** The theory line's value at the x of data index `idx` (the column holds its ends only). */
export function theoryValueAt(s: ConvergenceSeries, x: number): number | null {
  const start = s.iteration.findIndex((_, k) => positiveOrNull(s.values[k]) !== null);
  if (s.rate === null || s.rate < 0 || start < 0) return null;
  const { t0, y0 } = theoryStart(s, start);
  return x < t0 || x > s.iteration[s.iteration.length - 1] ? null : theoryValue(s.rate, t0, y0, x);
}

/** The sorted union of ascending iteration lists; the common case (every run recorded the same iterations) costs one comparison pass. */
function unionOfIterations(lists: number[][]): Float64Array {
  if (lists.length === 0) return new Float64Array(0);
  const first = lists[0];
  if (lists.every((list) => list.length === first.length && list.every((value, k) => value === first[k]))) return Float64Array.from(first);
  const all = Float64Array.from(lists.flat()).sort();
  let unique = 0;
  for (let k = 0; k < all.length; k++) if (k === 0 || all[k] !== all[unique - 1]) all[unique++] = all[k];
  return all.slice(0, unique);
}

/** A legend's sample of a line: solid (the run) or dashed (its theory), in the run's colour. */
function swatch(color: string, dashed: boolean): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('width', '28');
  svg.setAttribute('height', '10');
  svg.setAttribute('aria-hidden', 'true');
  svg.classList.add('legend-swatch');
  const line = document.createElementNS(ns, 'line');
  for (const [name, value] of Object.entries({
    x1: '1',
    y1: '5',
    x2: '27',
    y2: '5',
    stroke: color,
    'stroke-width': dashed ? '1.5' : '2.5',
  }))
    line.setAttribute(name, value);
  if (dashed) line.setAttribute('stroke-dasharray', THEORY_DASH.map((d) => d * 0.6).join(' '));
  svg.append(line);
  return svg;
}

/** A placed label in CSS pixels, relative to the chart's canvas (the browser test measures these). */
export interface PlacedLabel {
  algorithm: AlgorithmId;
  x: number;
  y: number;
  width: number;
  height: number;
  /** A label set away from its line (no room beside it) is tied to it by a leader from the line's point to the box. */
  leader?: { x0: number; y0: number; x1: number; y1: number };
}

/** The plotting area and the scales' ranges, in CSS pixels relative to the canvas (for the browser test). */
function plotGeometry(u: uPlot): { left: number; top: number; width: number; height: number; x: number[]; y: number[] } {
  const ratio = uPlot.pxRatio || 1;
  return {
    left: u.bbox.left / ratio,
    top: u.bbox.top / ratio,
    width: u.bbox.width / ratio,
    height: u.bbox.height / ratio,
    x: [u.scales.x.min!, u.scales.x.max!],
    y: [u.scales.y.min!, u.scales.y.max!],
  };
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const overlaps = (a: Box, b: Box, gap = 0): boolean =>
  a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap && b.y < a.y + a.height + gap;

/** Points of a segment inside a box (sampled), so that a label over a long straight segment counts it. */
function segmentHits(box: Box, x0: number, y0: number, x1: number, y1: number): number {
  const steps = Math.max(1, Math.ceil(Math.hypot(x1 - x0, y1 - y0) / 4));
  let hits = 0;
  for (let k = 0; k <= steps; k++) {
    const x = x0 + ((x1 - x0) * k) / steps;
    const y = y0 + ((y1 - y0) * k) / steps;
    if (x >= box.x && x <= box.x + box.width && y >= box.y && y <= box.y + box.height) hits++;
  }
  return hits;
}

/** The point of a box nearest to (x, y): where a leader from the line meets the label. */
const nearestOnBox = (box: Box, x: number, y: number): [number, number] => [
  Math.min(Math.max(x, box.x), box.x + box.width),
  Math.min(Math.max(y, box.y), box.y + box.height),
];

/**
 * Each run's name next to a point of its own line (canvas pixels): the candidates are points along
 * the line from its end back to its start, each with the label to the right, left, above or below;
 * a candidate is refused if it leaves the plot or touches a label already placed, and the one that
 * covers the fewest points of the other lines wins (ties: the nearest to the line's end). Drawn
 * with a white halo, not a box, so that it hides no more of the lines than its letters. Lines that
 * lie on one another (runs done in a step or two, a corner of the plot) can leave no room beside a
 * short line: its label then goes on rings farther from the line's end, tied to it by a leader.
 */
function labelLines(u: uPlot, series: ConvergenceSeries[]): PlacedLabel[] {
  const ctx = u.ctx;
  const ratio = uPlot.pxRatio || 1;
  const { left, top, width, height } = u.bbox;
  const xs = u.data[0];
  // Every drawn line as pixel polylines (the measured ones and the theory ones).
  const lines = u.data.slice(1).map((column, c): [number, number][] => {
    if (!u.series[1 + c].show) return [];
    const points: [number, number][] = [];
    for (let i = 0; i < column.length; i++) {
      const value = column[i];
      if (value === null || value === undefined || !(value > 0)) continue;
      points.push([u.valToPos(xs[i], 'x', true), u.valToPos(value, 'y', true)]);
    }
    return points;
  });
  const coveredBy = (box: Box, own: number): number => {
    let hits = 0;
    lines.forEach((points, c) => {
      if (c === own) return;
      for (let k = 1; k < points.length; k++) {
        const [x0, y0] = points[k - 1];
        const [x1, y1] = points[k];
        if (Math.max(x0, x1) < box.x || Math.min(x0, x1) > box.x + box.width) continue;
        hits += segmentHits(box, x0, y0, x1, y1);
      }
    });
    return hits;
  };
  ctx.save();
  ctx.font = `${12 * ratio}px system-ui, sans-serif`;
  ctx.textBaseline = 'middle';
  // uPlot leaves the state of its last axis: its y values are drawn right-aligned, and the boxes above are the text's from x.
  ctx.textAlign = 'left';
  const placed: (Box & Pick<PlacedLabel, 'algorithm' | 'leader'>)[] = [];
  const gap = 3 * ratio;
  const boxHeight = 14 * ratio;
  series.forEach((s, k) => {
    const own = 2 * k;
    const points = lines[own];
    if (points.length === 0) return;
    const label = ALGORITHM_NAMES[s.algorithm];
    const boxWidth = ctx.measureText(label).width + 2 * ratio;
    let best: { box: Box; score: number } | null = null;
    const candidates = Math.min(points.length, 60);
    for (let c = 0; c < candidates; c++) {
      const index = points.length - 1 - Math.round((c * (points.length - 1)) / Math.max(1, candidates - 1));
      const [px, py] = points[index];
      if (px < left || px > left + width || py < top || py > top + height) continue;
      const boxes: Box[] = [
        { x: px + gap, y: py - boxHeight / 2, width: boxWidth, height: boxHeight },
        { x: px - gap - boxWidth, y: py - boxHeight / 2, width: boxWidth, height: boxHeight },
        { x: px - boxWidth / 2, y: py - gap - boxHeight, width: boxWidth, height: boxHeight },
        { x: px - boxWidth / 2, y: py + gap, width: boxWidth, height: boxHeight },
        { x: px + gap, y: py - gap - boxHeight, width: boxWidth, height: boxHeight },
        { x: px + gap, y: py + gap, width: boxWidth, height: boxHeight },
        { x: px - gap - boxWidth, y: py - gap - boxHeight, width: boxWidth, height: boxHeight },
        { x: px - gap - boxWidth, y: py + gap, width: boxWidth, height: boxHeight },
      ];
      for (const box of boxes) {
        if (box.x < left || box.y < top || box.x + box.width > left + width || box.y + box.height > top + height) continue;
        if (placed.some((other) => overlaps(box, other, 2 * ratio))) continue;
        // Covering other lines costs most; being far from the line's end a little.
        const score = coveredBy(box, own) * 10 + c;
        if (!best || score < best.score) best = { box, score };
      }
      // Later candidates score at least their distance c: none can beat this one.
      if (best && best.score <= c) break;
    }
    let leader: PlacedLabel['leader'];
    if (!best) {
      const [px, py] = points[points.length - 1];
      for (let radius = 24 * ratio; !best && radius <= Math.max(width, height); radius += 12 * ratio) {
        for (let step = 0; step < 16; step++) {
          const angle = (step * Math.PI) / 8;
          const cx = px + radius * Math.cos(angle);
          const cy = py + radius * Math.sin(angle);
          const box = { x: cx - boxWidth / 2, y: cy - boxHeight / 2, width: boxWidth, height: boxHeight };
          if (box.x < left || box.y < top || box.x + box.width > left + width || box.y + box.height > top + height) continue;
          if (placed.some((other) => overlaps(box, other, 2 * ratio))) continue;
          const score = coveredBy(box, own) * 10 + step;
          if (!best || score < best.score) best = { box, score };
        }
      }
      if (!best) return;
      const [x1, y1] = nearestOnBox(best.box, px, py);
      leader = { x0: px, y0: py, x1, y1 };
      ctx.beginPath();
      ctx.moveTo(px, py);
      ctx.lineTo(x1, y1);
      ctx.lineWidth = ratio;
      ctx.strokeStyle = '#555';
      ctx.stroke();
    }
    placed.push({ ...best.box, algorithm: s.algorithm, ...(leader ? { leader } : {}) });
    const textY = best.box.y + best.box.height / 2;
    ctx.lineWidth = 3 * ratio;
    ctx.lineJoin = 'round';
    ctx.strokeStyle = 'rgba(255, 255, 255, 0.9)';
    ctx.strokeText(label, best.box.x + ratio, textY);
    ctx.fillStyle = '#111';
    ctx.fillText(label, best.box.x + ratio, textY);
  });
  ctx.restore();
  return placed.map(({ algorithm, x, y, width: w, height: hh, leader }) => ({
    algorithm,
    x: x / ratio,
    y: y / ratio,
    width: w / ratio,
    height: hh / ratio,
    ...(leader ? { leader: { x0: leader.x0 / ratio, y0: leader.y0 / ratio, x1: leader.x1 / ratio, y1: leader.y1 / ratio } } : {}),
  }));
}
