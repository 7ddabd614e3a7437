/**
 * theta_ij, the smallest principal angle between machines i and j, as an m x m heatmap on a canvas:
 * one pixel per pair in an image scaled up without smoothing, so m = 1000 costs the same as m = 10.
 * The colour scale's lightness grows with the angle (readable in grey); the theta_H pair is marked
 * by a ring and named in the caption. Hovering or moving with the arrow keys (the canvas takes the
 * focus) reads out the selected pair's angle.
 */
import { h } from './dom.js';
import { ringRadius } from './heatmapGeometry.js';
import { formatAngle } from './format.js';
import { viridis } from './palette.js';

const MAX_SIZE = 420;
/** CSS pixels left and above the map for the machines' numbers (the theta_H pair's ring may reach into them). */
const MARGIN = 26;

/** Every step-th machine is numbered: at most about ten numbers on an axis, at 1, 2 or 5 times a power of ten. */
function tickStep(m: number): number {
  const raw = Math.max(1, m / 10);
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((k) => k * power).find((step) => step >= raw) ?? 10 * power;
}

export function thetaHeatmap(theta: number[][], pair: [number, number] | null, thetaH: number): HTMLElement {
  const m = theta.length;
  const readout = h('output', { class: 'readout', 'aria-live': 'polite' }, 'Hover over a cell, or focus the map and use the arrow keys.');
  const canvas = h('canvas', {
    class: 'heatmap',
    tabindex: 0,
    role: 'img',
    'aria-label': `Principal angles theta_ij between the ${m} machines; theta_H = ${formatAngle(thetaH)}${pair ? ` between machines ${pair[0]} and ${pair[1]}` : ''}.`,
  });
  const figure = h(
    'figure',
    { class: 'heatmap-figure', 'data-machines': m },
    canvas,
    legend(),
    h(
      'figcaption',
      {},
      pair
        ? `theta_ij, machine i down, machine j across (dark: nearly parallel row spaces, light: orthogonal). theta_H = ${formatAngle(thetaH)} between machines ${pair[0]} and ${pair[1]} (ringed).`
        : 'One machine: no pair of machines.',
    ),
    readout,
  );

  let selected: [number, number] = pair ?? [0, 0];
  const draw = (): void => {
    const cssSize = Math.min(MAX_SIZE, Math.max(160, (figure.clientWidth || MAX_SIZE) - 8));
    const ratio = devicePixelRatio || 1;
    canvas.width = Math.round(cssSize * ratio);
    canvas.height = Math.round(cssSize * ratio);
    canvas.style.width = `${cssSize}px`;
    canvas.style.height = `${cssSize}px`;
    const ctx = canvas.getContext('2d');
    if (!ctx || m === 0) return;
    const image = new ImageData(m, m);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        const [r, g, b] = i === j ? [200, 200, 200] : viridis(theta[i][j] / (Math.PI / 2));
        const offset = 4 * (i * m + j);
        image.data.set([r, g, b, 255], offset);
      }
    const bitmap = document.createElement('canvas');
    bitmap.width = m;
    bitmap.height = m;
    bitmap.getContext('2d')!.putImageData(image, 0, 0);
    const margin = MARGIN * ratio;
    const map = canvas.width - margin;
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(bitmap, margin, margin, map, map);
    const cell = map / m;
    // The machines' numbers: across the top (j) and down the left (i), at their cells' centres.
    ctx.fillStyle = '#444';
    ctx.font = `${10 * ratio}px sans-serif`;
    const step = tickStep(m);
    for (let k = 0; k < m; k += step) {
      const centre = margin + (k + 0.5) * cell;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'bottom';
      ctx.fillText(String(k), centre, margin - 3 * ratio);
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      ctx.fillText(String(k), margin - 3 * ratio, centre);
    }
    if (pair) for (const [i, j] of [pair, [pair[1], pair[0]]]) ring(ctx, margin + j * cell, margin + i * cell, cell, ratio);
    if (document.activeElement === canvas) outline(ctx, margin + selected[1] * cell, margin + selected[0] * cell, cell, ratio);
  };
  const select = (i: number, j: number): void => {
    selected = [Math.min(m - 1, Math.max(0, i)), Math.min(m - 1, Math.max(0, j))];
    const [a, b] = selected;
    readout.textContent =
      a === b
        ? `machine ${a}: diagonal`
        : `theta(${a}, ${b}) = ${formatAngle(theta[a][b])}${isPair(pair, a, b) ? ' — the theta_H pair' : ''}`;
    draw();
  };
  canvas.addEventListener('mousemove', (event) => {
    const rect = canvas.getBoundingClientRect();
    const map = rect.width - MARGIN;
    const [y, x] = [event.clientY - rect.top - MARGIN, event.clientX - rect.left - MARGIN];
    // Over the numbers, not a cell.
    if (x < 0 || y < 0) return;
    select(Math.floor((y / map) * m), Math.floor((x / map) * m));
  });
  canvas.addEventListener('keydown', (event) => {
    const moves: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    select(selected[0] + move[0], selected[1] + move[1]);
  });
  canvas.addEventListener('focus', () => select(...selected));
  canvas.addEventListener('blur', draw);
  new ResizeObserver(draw).observe(figure);
  requestAnimationFrame(draw);
  return figure;
}

const isPair = (pair: [number, number] | null, i: number, j: number): boolean =>
  pair !== null && ((pair[0] === i && pair[1] === j) || (pair[0] === j && pair[1] === i));

/** A black-and-white ring, visible on any cell colour (its size: ./heatmapGeometry.ts). */
function ring(ctx: CanvasRenderingContext2D, x: number, y: number, cell: number, ratio: number): void {
  const radius = ringRadius(cell, ratio);
  const cx = x + cell / 2;
  const cy = y + cell / 2;
  ctx.lineWidth = 4 * ratio;
  ctx.strokeStyle = '#fff';
  ctx.beginPath();
  ctx.arc(cx, cy, radius, 0, 2 * Math.PI);
  ctx.stroke();
  ctx.lineWidth = 2 * ratio;
  ctx.strokeStyle = '#000';
  ctx.stroke();
}

function outline(ctx: CanvasRenderingContext2D, x: number, y: number, cell: number, ratio: number): void {
  ctx.lineWidth = 2 * ratio;
  ctx.setLineDash([3 * ratio, 2 * ratio]);
  ctx.strokeStyle = '#000';
  ctx.strokeRect(x, y, Math.max(cell, 3 * ratio), Math.max(cell, 3 * ratio));
  ctx.setLineDash([]);
}

/** The colour scale from 0 to pi/2, as a gradient canvas with its end labels. */
function legend(): HTMLElement {
  const bar = h('canvas', { class: 'heatmap-legend', width: 200, height: 12, 'aria-hidden': 'true' });
  const ctx = bar.getContext('2d');
  if (ctx)
    for (let x = 0; x < 200; x++) {
      const [r, g, b] = viridis(x / 199);
      ctx.fillStyle = `rgb(${r}, ${g}, ${b})`;
      ctx.fillRect(x, 0, 1, 12);
    }
  return h('div', { class: 'legend-scale' }, h('span', {}, '0'), bar, h('span', {}, 'π/2 rad'));
}
