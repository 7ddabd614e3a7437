/**
 * Convergence of each run on a log scale against iteration (uPlot), each run with its theoretical
 * rate as a dashed line rho^t started from the run's first value. Every line is labelled by name at
 * its end, so the chart reads without colour. While a job runs, the progress events' residuals are
 * drawn as they come (setData), and the stored traces replace them when it ends.
 */
import uPlot from 'uplot';
import { ALGORITHM_NAMES, type AlgorithmId } from './apiTypes.js';
import { h } from './dom.js';
import { formatInteger, formatNumber } from './format.js';
import { ALGORITHM_COLORS, THEORY_DASH } from './palette.js';

export interface ConvergenceSeries {
  algorithm: AlgorithmId;
  iteration: number[];
  values: (number | null)[];
  /** The run's theoretical rate rho (its iteration's spectral radius); null: no dashed line. */
  rate: number | null;
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
  private readonly resize: ResizeObserver;
  /** Time from receiving the data to the chart's first draw, in ms (the browser test reports it). */
  renderMs: number | null = null;

  constructor(
    readonly element: HTMLElement,
    private readonly yLabel: string,
  ) {
    this.host = h('div', { class: 'chart-host' });
    element.append(this.host);
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
      legend: { live: true },
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
            label: `${ALGORITHM_NAMES[s.algorithm]} theory ρ^t${s.rate === null ? '' : ` (ρ = ${formatNumber(s.rate, 3)})`}`,
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
        draw: [
          (u) => {
            labelLineEnds(u, series);
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
  }
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

/** Each run's name at the end of its line (the label, not the colour, says which line is which). */
function labelLineEnds(u: uPlot, series: ConvergenceSeries[]): void {
  const ctx = u.ctx;
  const ratio = devicePixelRatio || 1;
  ctx.save();
  ctx.font = `${12 * ratio}px system-ui, sans-serif`;
  ctx.textBaseline = 'middle';
  const taken: number[] = [];
  series.forEach((s, k) => {
    if (!u.series[1 + 2 * k].show) return;
    const column = u.data[1 + 2 * k];
    let i = column.length - 1;
    while (i >= 0 && (column[i] === null || column[i] === undefined)) i--;
    if (i < 0) return;
    const x = u.valToPos(u.data[0][i], 'x', true);
    let y = u.valToPos(column[i]!, 'y', true);
    // Nudge labels apart so that runs ending at the same point stay readable.
    while (taken.some((other) => Math.abs(other - y) < 13 * ratio)) y += 13 * ratio;
    taken.push(y);
    const label = ALGORITHM_NAMES[s.algorithm];
    const width = ctx.measureText(label).width;
    const left = Math.min(x + 4 * ratio, u.bbox.left + u.bbox.width - width - 2 * ratio);
    ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
    ctx.fillRect(left - 2 * ratio, y - 8 * ratio, width + 4 * ratio, 16 * ratio);
    ctx.fillStyle = '#111';
    ctx.fillText(label, left, y);
  });
  ctx.restore();
}
