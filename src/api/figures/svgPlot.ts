/**
 * A small SVG line-plot renderer (no dependency): panels side by side, each with axes, ticks,
 * optional log scales, series as polylines with an optional shaded band (a 95% interval), a legend.
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
}

export interface PlotPanel {
  title: string;
  xLabel: string;
  yLabel: string;
  logX: boolean;
  logY: boolean;
  series: PlotSeries[];
}

const WIDTH = 460;
const HEIGHT = 340;
const MARGIN = { left: 70, right: 20, top: 40, bottom: 50 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function format(value: number): string {
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  return magnitude >= 1e4 || magnitude < 1e-3 ? value.toExponential(1) : Number(value.toPrecision(4)).toString();
}

interface Scale {
  map(value: number): number;
  ticks: number[];
}

function scale(values: number[], log: boolean, from: number, to: number): Scale {
  const usable = values.filter((v) => Number.isFinite(v) && (!log || v > 0));
  let low = usable.length ? Math.min(...usable) : log ? 1 : 0;
  let high = usable.length ? Math.max(...usable) : log ? 10 : 1;
  if (log) {
    low = Math.log10(low);
    high = Math.log10(high);
  }
  if (high - low < 1e-12) {
    low -= 0.5;
    high += 0.5;
  } else {
    const pad = (high - low) * 0.05;
    low -= pad;
    high += pad;
  }
  const map = (value: number): number => {
    const v = log ? Math.log10(value) : value;
    return from + ((v - low) / (high - low)) * (to - from);
  };
  const ticks: number[] = [];
  if (log) {
    for (let e = Math.ceil(low); e <= Math.floor(high); e++) ticks.push(10 ** e);
    if (ticks.length < 2) ticks.push(10 ** low, 10 ** high);
  } else {
    for (let k = 0; k <= 4; k++) ticks.push(low + ((high - low) * k) / 4);
  }
  return { map, ticks };
}

function panelSvg(panel: PlotPanel, offsetX: number): string {
  const all = panel.series.flatMap((s) => s.points);
  const xs = scale(
    all.map((p) => p.x),
    panel.logX,
    offsetX + MARGIN.left,
    offsetX + WIDTH - MARGIN.right,
  );
  const ys = scale(
    all.flatMap((p) => [p.y, p.low ?? p.y, p.high ?? p.y]),
    panel.logY,
    HEIGHT - MARGIN.bottom,
    MARGIN.top,
  );
  const visible = (p: PlotPoint): boolean => Number.isFinite(p.y) && (!panel.logY || p.y > 0) && (!panel.logX || p.x > 0);
  const parts: string[] = [];
  const left = offsetX + MARGIN.left;
  const right = offsetX + WIDTH - MARGIN.right;
  const bottom = HEIGHT - MARGIN.bottom;
  parts.push(`<text x="${(left + right) / 2}" y="22" text-anchor="middle" font-size="13">${escapeXml(panel.title)}</text>`);
  parts.push(`<rect x="${left}" y="${MARGIN.top}" width="${right - left}" height="${bottom - MARGIN.top}" fill="none" stroke="#444"/>`);
  for (const t of xs.ticks) {
    const x = xs.map(t);
    parts.push(`<line x1="${x}" y1="${bottom}" x2="${x}" y2="${bottom + 5}" stroke="#444"/>`);
    parts.push(`<text x="${x}" y="${bottom + 18}" text-anchor="middle" font-size="10">${format(t)}</text>`);
  }
  for (const t of ys.ticks) {
    const y = ys.map(t);
    parts.push(`<line x1="${left - 5}" y1="${y}" x2="${left}" y2="${y}" stroke="#444"/>`);
    parts.push(`<text x="${left - 8}" y="${y + 3}" text-anchor="end" font-size="10">${format(t)}</text>`);
  }
  parts.push(
    `<text x="${(left + right) / 2}" y="${HEIGHT - 12}" text-anchor="middle" font-size="12">${escapeXml(panel.xLabel)}${panel.logX ? ' (log)' : ''}</text>`,
  );
  parts.push(
    `<text x="${offsetX + 16}" y="${(MARGIN.top + bottom) / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 ${offsetX + 16} ${(MARGIN.top + bottom) / 2})">${escapeXml(panel.yLabel)}${panel.logY ? ' (log)' : ''}</text>`,
  );
  panel.series.forEach((series, k) => {
    const color = COLORS[k % COLORS.length];
    const points = series.points.filter(visible).sort((a, b) => a.x - b.x);
    const banded = points.filter((p) => p.low !== undefined && p.high !== undefined && (!panel.logY || p.low > 0));
    if (banded.length > 1) {
      const upper = banded.map((p) => `${xs.map(p.x)},${ys.map(p.high!)}`);
      const lower = banded.map((p) => `${xs.map(p.x)},${ys.map(p.low!)}`).reverse();
      parts.push(`<polygon points="${[...upper, ...lower].join(' ')}" fill="${color}" fill-opacity="0.18" stroke="none"/>`);
    }
    if (points.length > 0) {
      const line = points.map((p) => `${xs.map(p.x)},${ys.map(p.y)}`).join(' ');
      parts.push(
        `<polyline points="${line}" fill="none" stroke="${color}" stroke-width="1.6"${series.dashed ? ' stroke-dasharray="5,3"' : ''}/>`,
      );
      for (const p of points) parts.push(`<circle cx="${xs.map(p.x)}" cy="${ys.map(p.y)}" r="2.2" fill="${color}"/>`);
    }
    const legendY = MARGIN.top + 14 + 14 * k;
    parts.push(
      `<line x1="${right - 150}" y1="${legendY - 4}" x2="${right - 132}" y2="${legendY - 4}" stroke="${color}" stroke-width="2"${series.dashed ? ' stroke-dasharray="5,3"' : ''}/>`,
    );
    parts.push(`<text x="${right - 128}" y="${legendY}" font-size="10">${escapeXml(series.label)}</text>`);
  });
  return parts.join('\n');
}

/** An SVG document of the panels side by side, titled. */
export function renderPanels(title: string, panels: PlotPanel[]): string {
  const count = Math.max(1, panels.length);
  const width = WIDTH * count;
  const body = panels.map((panel, k) => panelSvg(panel, k * WIDTH)).join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEIGHT + 24}" viewBox="0 -24 ${width} ${HEIGHT + 24}" font-family="sans-serif">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="-24" width="${width}" height="${HEIGHT + 24}" fill="white"/>`,
    `<text x="${width / 2}" y="-6" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    body,
    '</svg>',
    '',
  ].join('\n');
}
