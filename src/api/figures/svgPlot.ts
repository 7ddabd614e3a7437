/**
 * A small SVG line-plot renderer (no dependency): panels side by side, each with axes, round ticks,
 * optional log scales, series as polylines with an optional shaded band (a 95% interval), and a
 * legend below the plot (never on the data). Each axis spans its data with a small margin, so what
 * varies is seen; a point that would stretch the axis (APC's exact rate 0 at m = 1) is given as a
 * note under the panel instead (`apart`).
 */

export interface PlotPoint {
  x: number;
  y: number;
  /** Band around y (e.g. the 95% interval); drawn when both are given. */
  low?: number;
  high?: number;
}

export interface PlotSeries {
  label: string;
  points: PlotPoint[];
  dashed?: boolean;
  /** Index into the palette (default: the series' own index), so that related series share a colour. */
  color?: number;
}

export interface PlotPanel {
  title: string;
  xLabel: string;
  yLabel: string;
  logX: boolean;
  logY: boolean;
  series: PlotSeries[];
  /** Values shown apart from the axes (each a line of text under the panel), and why. */
  apart?: string[];
}

const WIDTH = 460;
const PLOT_HEIGHT = 300;
const MARGIN = { left: 70, right: 20, top: 40 };
/** Below the plot: tick labels, the x label, then the legend and the notes, one row each. */
const AXIS_SPACE = 48;
const ROW = 17;
/** A legend character's width at the legend's 12 px (an estimate: the SVG is laid out without a browser). */
const LEGEND_CHAR = 6.8;
const COLORS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'];
/** Each axis spans its data and this fraction of the data's range on either side. */
const PAD = 0.04;

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * A number in a note or label: 4 significant digits, exponent notation (`exponentDigits` significant: 3 for the axes'
 * ticks, 4 where a value is named as the text and the dashboard write it) outside [1e-3, 1e4); 1 - x when it would round
 * to 1 (a rate near 1).
 */
export function formatValue(value: number, exponentDigits = 3): string {
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  if (magnitude !== 1 && Math.abs(magnitude - 1) < 1e-3)
    return `${value < 0 ? '-1' : '1'} ${magnitude < 1 === value > 0 ? '-' : '+'} ${Math.abs(magnitude - 1).toExponential(2)}`;
  return magnitude >= 1e4 || magnitude < 1e-3 ? value.toExponential(exponentDigits - 1) : Number(value.toPrecision(4)).toString();
}

interface Scale {
  map(value: number): number;
  /** The axis's ends, in data units. */
  domain: [number, number];
  ticks: { value: number; text: string }[];
}

/** A round step (1, 2 or 5 times a power of ten) giving about `count` intervals over `span`. */
function niceStep(span: number, count: number): number {
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const mantissa = raw / power;
  return (mantissa < 1.5 ? 1 : mantissa < 3.5 ? 2 : mantissa < 7.5 ? 5 : 10) * power;
}

function linearTicks(low: number, high: number): { value: number; text: string }[] {
  const step = niceStep(high - low, 5);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const ticks: { value: number; text: string }[] = [];
  for (let k = Math.ceil(low / step - 1e-9); k * step <= high + step * 1e-9; k++) {
    const value = k * step;
    const magnitude = Math.abs(value);
    const text =
      value === 0 ? '0' : magnitude >= 1e5 || magnitude < 1e-4 ? value.toExponential(Math.max(0, decimals - 1)) : value.toFixed(decimals);
    ticks.push({ value, text });
  }
  return ticks;
}

function logTicks(low: number, high: number): { value: number; text: string }[] {
  // low and high are log10 of the ends; 1, 2, 5 per decade when there are few decades.
  const decades = high - low;
  const mantissas = decades < 1.2 ? [1, 2, 3, 5, 7] : decades < 3 ? [1, 2, 5] : [1];
  const ticks: { value: number; text: string }[] = [];
  for (let e = Math.floor(low); e <= Math.ceil(high); e++)
    for (const m of mantissas) {
      const value = m * 10 ** e;
      const log = Math.log10(value);
      if (log < low - 1e-9 || log > high + 1e-9) continue;
      const text = e >= -3 && e <= 4 ? Number(value.toPrecision(2)).toString() : value.toExponential(0);
      ticks.push({ value, text });
    }
  return ticks;
}

function scale(values: number[], log: boolean, from: number, to: number): Scale {
  const usable = values.filter((v) => Number.isFinite(v) && (!log || v > 0));
  let low = usable.length ? Math.min(...usable) : log ? 1 : 0;
  let high = usable.length ? Math.max(...usable) : log ? 10 : 1;
  if (log) {
    low = Math.log10(low);
    high = Math.log10(high);
  }
  if (high - low < 1e-12 * Math.max(1, Math.abs(high))) {
    // One value: a small window around it (a tenth of its size, or 1 around 0).
    const half = log ? 0.5 : Math.abs(high) > 0 ? Math.abs(high) * 0.05 : 0.5;
    low -= half;
    high += half;
  } else {
    const pad = (high - low) * PAD;
    low -= pad;
    high += pad;
  }
  const map = (value: number): number => {
    const v = log ? Math.log10(value) : value;
    return from + ((v - low) / (high - low)) * (to - from);
  };
  return {
    map,
    domain: log ? [10 ** low, 10 ** high] : [low, high],
    ticks: log ? logTicks(low, high) : linearTicks(low, high),
  };
}

const colorOf = (series: PlotSeries, k: number): string => COLORS[(series.color ?? k) % COLORS.length];

const round = (value: number): string => String(Math.round(value * 100) / 100);

/** The panel's rows below the plot: legend entries (wrapped to the panel's width) and notes. */
function legendRows(panel: PlotPanel, width: number): { series: number[][]; notes: string[] } {
  const rows: number[][] = [[]];
  let used = 0;
  panel.series.forEach((series, k) => {
    const entry = 30 + series.label.length * LEGEND_CHAR + 14;
    if (used + entry > width && rows[rows.length - 1].length > 0) {
      rows.push([]);
      used = 0;
    }
    rows[rows.length - 1].push(k);
    used += entry;
  });
  return { series: rows.filter((row) => row.length > 0), notes: panel.apart ?? [] };
}

function panelSvg(panel: PlotPanel, offsetX: number, height: number): string {
  const left = offsetX + MARGIN.left;
  const right = offsetX + WIDTH - MARGIN.right;
  const top = MARGIN.top;
  const bottom = MARGIN.top + PLOT_HEIGHT;
  const all = panel.series.flatMap((s) => s.points);
  const visible = (p: PlotPoint): boolean =>
    Number.isFinite(p.y) && Number.isFinite(p.x) && (!panel.logY || p.y > 0) && (!panel.logX || p.x > 0);
  const xs = scale(
    all.filter(visible).map((p) => p.x),
    panel.logX,
    left,
    right,
  );
  const ys = scale(
    all.filter(visible).flatMap((p) => [p.y, ...(p.low !== undefined && p.high !== undefined ? [p.low, p.high] : [])]),
    panel.logY,
    bottom,
    top,
  );
  const parts: string[] = [];
  // data-box: the panel's own region of the document (a page can show each panel as a picture of its own).
  parts.push(
    `<g class="panel" data-box="${offsetX} 0 ${WIDTH} ${height}" data-x-label="${escapeXml(panel.xLabel)}" data-x-domain="${xs.domain.join(' ')}" data-y-domain="${ys.domain.join(' ')}" data-log-y="${panel.logY}">`,
  );
  parts.push(`<text x="${(left + right) / 2}" y="22" text-anchor="middle" font-size="14">${escapeXml(panel.title)}</text>`);
  // Light grid lines at the y ticks, under the data.
  for (const t of ys.ticks) {
    const y = round(ys.map(t.value));
    parts.push(`<line x1="${left}" y1="${y}" x2="${right}" y2="${y}" stroke="#e4e4e4"/>`);
  }
  parts.push(`<rect class="plot-area" x="${left}" y="${top}" width="${right - left}" height="${bottom - top}" fill="none" stroke="#444"/>`);
  for (const t of xs.ticks) {
    const x = round(xs.map(t.value));
    parts.push(`<line x1="${x}" y1="${bottom}" x2="${x}" y2="${bottom + 5}" stroke="#444"/>`);
    parts.push(
      `<text class="x-tick" data-value="${t.value}" x="${x}" y="${bottom + 18}" text-anchor="middle" font-size="12">${t.text}</text>`,
    );
  }
  for (const t of ys.ticks) {
    const y = round(ys.map(t.value));
    parts.push(`<line x1="${left - 5}" y1="${y}" x2="${left}" y2="${y}" stroke="#444"/>`);
    parts.push(
      `<text class="y-tick" data-value="${t.value}" data-y="${y}" x="${left - 8}" y="${Number(y) + 4}" text-anchor="end" font-size="12">${t.text}</text>`,
    );
  }
  parts.push(
    `<text x="${(left + right) / 2}" y="${bottom + 38}" text-anchor="middle" font-size="13">${escapeXml(panel.xLabel)}${panel.logX ? ' (log scale)' : ''}</text>`,
  );
  parts.push(
    `<text x="${offsetX + 16}" y="${(top + bottom) / 2}" text-anchor="middle" font-size="13" transform="rotate(-90 ${offsetX + 16} ${(top + bottom) / 2})">${escapeXml(panel.yLabel)}${panel.logY ? ' (log scale)' : ''}</text>`,
  );
  panel.series.forEach((series, k) => {
    const color = colorOf(series, k);
    const points = series.points.filter(visible).sort((a, b) => a.x - b.x);
    const banded = points.filter((p) => p.low !== undefined && p.high !== undefined);
    // On a log axis a band reaching 0 or below runs to the axis's bottom.
    const bandLow = (p: PlotPoint): number => (panel.logY && !(p.low! > 0) ? ys.domain[0] : p.low!);
    if (banded.length > 1) {
      const upper = banded.map((p) => `${round(xs.map(p.x))},${round(ys.map(Math.max(p.high!, bandLow(p))))}`);
      const lower = banded.map((p) => `${round(xs.map(p.x))},${round(ys.map(bandLow(p)))}`).reverse();
      parts.push(`<polygon class="band" points="${[...upper, ...lower].join(' ')}" fill="${color}" fill-opacity="0.22" stroke="none"/>`);
      // The band's edges, so that a narrow band still shows.
      parts.push(`<polyline points="${upper.join(' ')}" fill="none" stroke="${color}" stroke-opacity="0.5" stroke-width="0.7"/>`);
      parts.push(`<polyline points="${lower.join(' ')}" fill="none" stroke="${color}" stroke-opacity="0.5" stroke-width="0.7"/>`);
    }
    if (points.length > 0) {
      const line = points.map((p) => `${round(xs.map(p.x))},${round(ys.map(p.y))}`).join(' ');
      parts.push(
        `<polyline class="series" data-label="${escapeXml(series.label)}" points="${line}" fill="none" stroke="${color}" stroke-width="1.8"${series.dashed ? ' stroke-dasharray="5,3"' : ''}/>`,
      );
      // Each point carries its values, so that a page can say them under the cursor; a curve of many
      // points (a density) is drawn without its markers, which would hide its shape.
      const radius = points.length > 25 ? 0 : 2.4;
      for (const p of points)
        parts.push(
          `<circle class="point" data-series="${escapeXml(series.label)}" data-x="${p.x}" data-y="${p.y}"${
            p.low !== undefined && p.high !== undefined ? ` data-low="${p.low}" data-high="${p.high}"` : ''
          } cx="${round(xs.map(p.x))}" cy="${round(ys.map(p.y))}" r="${radius}" fill="${color}"/>`,
        );
    }
  });
  // The legend and the notes, below the x label: off the data.
  const { series: rows, notes } = legendRows(panel, right - offsetX - 20);
  rows.forEach((row, r) => {
    const y = bottom + AXIS_SPACE + 8 + r * ROW;
    let x = offsetX + 20;
    for (const k of row) {
      const series = panel.series[k];
      const color = colorOf(series, k);
      parts.push(
        `<line x1="${x}" y1="${y - 4}" x2="${x + 24}" y2="${y - 4}" stroke="${color}" stroke-width="2"${series.dashed ? ' stroke-dasharray="5,3"' : ''}/>`,
      );
      parts.push(`<text class="legend" x="${x + 30}" y="${y}" font-size="12">${escapeXml(series.label)}</text>`);
      x += 30 + series.label.length * LEGEND_CHAR + 14;
    }
  });
  notes.forEach((note, n) => {
    const y = bottom + AXIS_SPACE + 8 + (rows.length + n) * ROW;
    parts.push(`<text class="apart" x="${offsetX + 20}" y="${y}" font-size="12" fill="#333">${escapeXml(note)}</text>`);
  });
  parts.push('</g>');
  return parts.join('\n');
}

/** Rows below the plot the tallest panel needs. */
function extraRows(panels: PlotPanel[]): number {
  return Math.max(1, ...panels.map((panel) => legendRows(panel, WIDTH - MARGIN.right - 20).series.length + (panel.apart?.length ?? 0)));
}

/** An SVG document of the panels side by side, titled. */
export function renderPanels(title: string, panels: PlotPanel[]): string {
  const count = Math.max(1, panels.length);
  const width = WIDTH * count;
  const height = MARGIN.top + PLOT_HEIGHT + AXIS_SPACE + extraRows(panels) * ROW + 8;
  const body = panels.map((panel, k) => panelSvg(panel, k * WIDTH, height)).join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height + 24}" viewBox="0 -24 ${width} ${height + 24}" font-family="sans-serif">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="-24" width="${width}" height="${height + 24}" fill="white"/>`,
    `<text x="${width / 2}" y="-6" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    body,
    '</svg>',
    '',
  ].join('\n');
}
