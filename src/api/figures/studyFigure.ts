/**
 * The figures of a study (the paper's Figures 1-3 for its presets) from its results, as SVG:
 *  - curves: each metric's mean against x with its 95% band, one panel per value of `panel`;
 *  - density: each point's histogram of the metric (the empirical density), one curve per `series` value;
 *  - exceedance: P(value > eps) against x, one curve per eps, the closed form dashed where it exists.
 */
import type { FigureSpec } from '../../solvers/studies/presets.js';
import type { MetricResult, PointResult, StudyResult } from '../../solvers/studies/aggregate.js';
import { formatValue, renderPanels, type PlotPanel, type PlotSeries } from './svgPlot.js';

/** The paper's symbols for the metrics its figures draw; any other metric keeps its path. */
const SYMBOLS: Record<string, string> = {
  'rates.apc.rate': 'ρ_APC',
  'rates.dhbm.rate': 'ρ_HBM',
  'conditioning.kappaS': 'κ(S)',
  'conditioning.kappaAtA': 'κ(AᵀA)',
  tanInvSqTheta: 'tan⁻²θ₁₂',
};

export const metricSymbol = (name: string): string => SYMBOLS[name] ?? name;

/**
 * A mean shown apart from the axes rather than on them: APC's rate at m = 1 is 0 (one machine
 * projects straight onto the solution), and on the axis it would flatten every other point.
 */
function isApart(figure: FigureSpec, point: PointResult, name: string): boolean {
  return figure.x === 'm' && point.settings.m === 1 && name === 'rates.apc.rate';
}

function apartNotes(figure: FigureSpec, points: PointResult[]): string[] {
  return points.flatMap((point) =>
    figure.metrics.flatMap((name) => {
      const mean = metricOf(point, name)?.mean;
      if (!isApart(figure, point, name) || mean === null || mean === undefined) return [];
      return [`Not drawn: at m = 1, E[${metricSymbol(name)}] = ${formatValue(mean)} (one machine: APC is exact).`];
    }),
  );
}

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
    label: `E[${metricSymbol(name)}]`,
    points: points.flatMap((point) => {
      const metric = metricOf(point, name);
      if (!metric || metric.mean === null || isApart(figure, point, name)) return [];
      return [{ x: point.settings[figure.x], y: metric.mean, low: metric.interval?.[0], high: metric.interval?.[1] }];
    }),
  }));
}

/** Of the density curves' mass, what the x axis shows: the rest of a long tail would squeeze the curves into one corner. */
const DENSITY_SHOWN_MASS = 0.99;

/**
 * Each point's histogram as a curve through its bins' centres, up to the largest bin edge below which
 * every curve has DENSITY_SHOWN_MASS of its samples (the note says what is cut).
 */
function densities(figure: FigureSpec, points: PointResult[]): { series: PlotSeries[]; notes: string[] } {
  const name = figure.metrics[0];
  const histograms = points.flatMap((point) => {
    const histogram = metricOf(point, name)?.histogram;
    return histogram ? [{ point, histogram }] : [];
  });
  let upTo = -Infinity;
  for (const { histogram } of histograms) {
    let mass = 0;
    for (let k = 0; k < histogram.density.length; k++) {
      mass += histogram.density[k] * (histogram.edges[k + 1] - histogram.edges[k]);
      if (mass >= DENSITY_SHOWN_MASS || k === histogram.density.length - 1) {
        upTo = Math.max(upTo, histogram.edges[k + 1]);
        break;
      }
    }
  }
  const beyond = histograms.some(({ histogram }) => histogram.edges[histogram.edges.length - 1] > upTo);
  const series = histograms.map(({ point, histogram }) => ({
    label: `${figure.series ?? figure.x} = ${formatValue(point.settings[figure.series ?? figure.x])}`,
    points: histogram.density.flatMap((density, k) => {
      const [low, high] = [histogram.edges[k], histogram.edges[k + 1]];
      // Equal-ratio bins: each at its geometric centre, as the share per decade (the area under the curve on the log
      // axis is the probability), where the density per unit would fall by the bins' growing widths alone.
      if (histogram.scale === 'log') {
        const center = Math.sqrt(low * high);
        return center <= upTo ? [{ x: center, y: (density * (high - low)) / Math.log10(high / low) }] : [];
      }
      const center = (low + high) / 2;
      return center <= upTo ? [{ x: center, y: density }] : [];
    }),
  }));
  const fromFirstPercentile = histograms.some(({ histogram }) => histogram.scale === 'log' && histogram.below > 0);
  const notes = [
    ...(beyond ? [`Shown up to ${formatValue(upTo)}, below which each curve has ${DENSITY_SHOWN_MASS * 100}% of its samples.`] : []),
    ...(fromFirstPercentile ? ["Each curve starts at its positive values' 1st percentile."] : []),
  ];
  return { series, notes };
}

/**
 * The estimates of 0 a log axis cannot show, said under the panel: none of the samples exceeded eps there, which is not
 * a probability of 0 but one below the upper end of its 95% interval, the one the result reports (Wilson's, ~3.84 /
 * samples). The curves stopped without a word before.
 */
function zeroNotes(figure: FigureSpec, points: PointResult[]): string[] {
  if (!figure.logY) return [];
  const name = figure.metrics[0];
  return points.flatMap((point) => {
    const metric = metricOf(point, name);
    const zero = metric?.exceedance.filter((e) => e.probability === 0 && e.interval !== null) ?? [];
    if (!metric || zero.length === 0) return [];
    // Short enough for a panel's width (a longer one was cut at the panel's edge).
    return [
      `${figure.x} = ${formatValue(point.settings[figure.x])}: 0 of ${metric.count} above ${zero.map((e) => e.eps).join(', ')} ` +
        `(P < ${formatValue(zero[0].interval![1])}), not drawn`,
    ];
  });
}

function exceedances(figure: FigureSpec, points: PointResult[]): PlotSeries[] {
  const name = figure.metrics[0];
  const levels = metricOf(points[0], name)?.exceedance.map((e) => e.eps) ?? [];
  // An eps's estimate and its closed form share a colour (the closed form dashed).
  return levels.flatMap((eps, k) => {
    const empirical: PlotSeries = {
      label: `P(${metricSymbol(name)} > ${eps})`,
      color: k,
      points: points.flatMap((point) => {
        const e = metricOf(point, name)?.exceedance[k];
        // No value (the metric never defined), or 0 on a log axis (zeroNotes says so): not drawn.
        if (!e || e.probability === null || e.interval === null || (figure.logY && e.probability === 0)) return [];
        return [{ x: point.settings[figure.x], y: e.probability, low: e.interval[0], high: e.interval[1] }];
      }),
    };
    const exact = points.flatMap((point) => {
      const closed = metricOf(point, name)?.exceedance[k]?.closedForm;
      return closed === null || closed === undefined ? [] : [{ x: point.settings[figure.x], y: closed }];
    });
    return exact.length > 0 ? [empirical, { label: `P(> ${eps}), closed form`, points: exact, dashed: true, color: k }] : [empirical];
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
          yLabel: 'mean, 95% band',
          logX: figure.logX,
          logY: figure.logY,
          series: curves(figure, sorted),
          apart: apartNotes(figure, sorted),
        };
      case 'density': {
        const { series, notes } = densities(figure, sorted);
        const perDecade = sorted.some((point) => metricOf(point, figure.metrics[0])?.histogram?.scale === 'log');
        return {
          title: label,
          xLabel: metricSymbol(figure.metrics[0]),
          yLabel: perDecade ? 'share of samples per decade' : 'empirical density',
          logX: figure.logX,
          logY: figure.logY,
          series,
          apart: notes,
        };
      }
      case 'exceedance':
        return {
          title: label,
          xLabel: figure.x,
          yLabel: 'probability',
          logX: figure.logX,
          logY: figure.logY,
          series: exceedances(figure, sorted),
          apart: zeroNotes(figure, sorted),
        };
    }
  });
  return renderPanels(figure.title, panels);
}
