/**
 * The figures of a study (the paper's Figures 1-3 for its presets) from its results, as SVG:
 *  - curves: each metric's mean against x with its 95% band, one panel per value of `panel`;
 *  - density: each point's histogram of the metric (the empirical density), one curve per `series` value;
 *  - exceedance: P(value > eps) against x, one curve per eps, the closed form dashed where it exists.
 */
import type { FigureSpec } from '../../solvers/studies/presets.js';
import type { MetricResult, PointResult, StudyResult } from '../../solvers/studies/aggregate.js';
import { renderPanels, type PlotPanel, type PlotSeries } from './svgPlot.js';

function panelsOf(points: readonly PointResult[], panel: FigureSpec['panel']): { label: string; points: PointResult[] }[] {
  if (panel === null) return [{ label: '', points: [...points] }];
  const values = [...new Set(points.map((p) => p.settings[panel]))].sort((a, b) => a - b);
  return values.map((value) => ({ label: `${panel} = ${value}`, points: points.filter((p) => p.settings[panel] === value) }));
}

function metricOf(point: PointResult, name: string): MetricResult | undefined {
  return point.metrics.find((metric) => metric.metric === name);
}

function curves(figure: FigureSpec, points: PointResult[]): PlotSeries[] {
  return figure.metrics.map((name) => ({
    label: `E[${name}]`,
    points: points.flatMap((point) => {
      const metric = metricOf(point, name);
      if (!metric || metric.mean === null) return [];
      return [{ x: point.settings[figure.x], y: metric.mean, low: metric.interval?.[0], high: metric.interval?.[1] }];
    }),
  }));
}

function densities(figure: FigureSpec, points: PointResult[]): PlotSeries[] {
  const name = figure.metrics[0];
  return points.flatMap((point) => {
    const histogram = metricOf(point, name)?.histogram;
    if (!histogram) return [];
    const centers = histogram.density.map((density, k) => ({ x: (histogram.edges[k] + histogram.edges[k + 1]) / 2, y: density }));
    return [{ label: `${figure.series ?? figure.x} = ${point.settings[figure.series ?? figure.x]}`, points: centers }];
  });
}

function exceedances(figure: FigureSpec, points: PointResult[]): PlotSeries[] {
  const name = figure.metrics[0];
  const levels = metricOf(points[0], name)?.exceedance.map((e) => e.eps) ?? [];
  return levels.flatMap((eps, k) => {
    const empirical: PlotSeries = {
      label: `P(> ${eps})`,
      points: points.flatMap((point) => {
        const e = metricOf(point, name)?.exceedance[k];
        return e
          ? [
              {
                x: point.settings[figure.x],
                y: e.probability,
                low: e.probability - 1.96 * e.standardError,
                high: e.probability + 1.96 * e.standardError,
              },
            ]
          : [];
      }),
    };
    const exact = points.flatMap((point) => {
      const closed = metricOf(point, name)?.exceedance[k]?.closedForm;
      return closed === null || closed === undefined ? [] : [{ x: point.settings[figure.x], y: closed }];
    });
    return exact.length > 0 ? [empirical, { label: `P(> ${eps}) exact`, points: exact, dashed: true }] : [empirical];
  });
}

export function renderStudyFigure(figure: FigureSpec, result: StudyResult): string {
  const panels: PlotPanel[] = panelsOf(result.points, figure.panel).map(({ label, points }) => {
    const sorted = [...points].sort((a, b) => a.settings[figure.x] - b.settings[figure.x]);
    switch (figure.kind) {
      case 'curves':
        return {
          title: label,
          xLabel: figure.x,
          yLabel: 'mean (95% band)',
          logX: figure.logX,
          logY: figure.logY,
          series: curves(figure, sorted),
        };
      case 'density':
        return {
          title: label,
          xLabel: figure.metrics[0],
          yLabel: 'empirical density',
          logX: false,
          logY: figure.logY,
          series: densities(figure, sorted),
        };
      case 'exceedance':
        return {
          title: label,
          xLabel: figure.x,
          yLabel: 'probability',
          logX: figure.logX,
          logY: figure.logY,
          series: exceedances(figure, sorted),
        };
    }
  });
  return renderPanels(figure.title, panels);
}
