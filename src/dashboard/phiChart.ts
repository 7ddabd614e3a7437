/** phi_i, the smallest angle between two rows of machine i, as bars per machine (uPlot); a machine with one row has none. */
import uPlot from 'uplot';
import { h } from './dom.js';
import { formatAngle, formatInteger, formatNumber } from './format.js';

export function phiChart(phi: (number | null)[]): HTMLElement {
  const defined = phi.filter((value): value is number => value !== null);
  const figure = h(
    'figure',
    { class: 'phi-figure', 'data-machines': phi.length },
    h(
      'figcaption',
      {},
      defined.length > 0
        ? `phi_i in radians, machines 0 to ${phi.length - 1}; smallest ${formatAngle(Math.min(...defined))}.` +
            (defined.length < phi.length ? ` ${phi.length - defined.length} machine(s) hold one row: no phi_i.` : '')
        : 'Every machine holds one row: no phi_i.',
    ),
  );
  if (defined.length === 0) return figure;
  const host = h('div', { class: 'chart', id: 'phi-chart' });
  figure.prepend(host);
  const size = (): { width: number; height: number } => ({ width: Math.max(260, host.clientWidth || 420), height: 220 });
  requestAnimationFrame(() => {
    const plot = new uPlot(
      {
        ...size(),
        scales: {
          x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] },
          y: { range: (_u, _min, max) => [0, Math.max(max, 1e-3) * 1.05] },
        },
        axes: [
          { label: 'machine i', values: (_u, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? formatInteger(tick) : '')) },
          { label: 'phi_i (rad)', size: 60, values: (_u, ticks) => ticks.map((tick) => formatNumber(tick as number | null, 2)) },
        ],
        legend: { show: true },
        series: [
          { label: 'machine' },
          {
            label: 'phi_i',
            stroke: '#333',
            fill: 'rgba(0, 114, 178, 0.55)',
            paths: uPlot.paths.bars!({ size: [0.7, 60] }),
            points: { show: false },
            value: (_u, v) => formatNumber(v, 3),
          },
        ],
      },
      [phi.map((_, i) => i), phi],
      host,
    );
    new ResizeObserver(() => plot.setSize(size())).observe(host);
  });
  return figure;
}
