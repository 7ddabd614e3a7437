/**
 * The study figures as the API renders them, measured in their SVG: each panel's y axis spans its
 * data (within 10% of the data's range, the points shown apart excluded), ticks are round, the
 * legend lies below the plot (off the data), the metrics are named by their symbols, and APC's
 * exact rate at m = 1 is a note instead of an axis stretched to 0.
 */
import { describe, expect, it } from 'vitest';
import { renderStudyFigure } from '../../../src/api/figures/studyFigure.js';
import { aggregateStudy, type PointResult, type PointSamples, type StudyResult } from '../../../src/solvers/studies/aggregate.js';
import { planStudy } from '../../../src/solvers/studies/plan.js';
import { normalizeStudyRequest, type FigureSpec, type StudyRequest } from '../../../src/solvers/studies/presets.js';
import { computeGroupSample, SAMPLE_STATUSES } from '../../../src/solvers/studies/sampler.js';

const M = [1, 2, 4, 6, 10, 12, 20, 30, 60, 120];

/** Experiment 1's shape: E[rho_APC] = 0 at m = 1, then rising towards 0.994; E[rho_HBM] = 0.9941 throughout; narrow intervals. */
function experiment1(): StudyResult {
  const points = [0, 1].flatMap((mean) =>
    M.map((m, k): PointResult => {
      const apc = m === 1 ? 0 : 0.988 + 0.006 * (1 - 1 / m) + mean * 0.004;
      const hbm = 0.9941 + mean * 0.0044;
      const metric = (name: string, value: number, halfWidth: number) => ({
        metric: name,
        kind: 'value',
        of: null,
        count: 300,
        mean: value,
        standardError: halfWidth / 1.96,
        interval: [value - halfWidth, value + halfWidth],
        min: value - 3 * halfWidth,
        max: value + 3 * halfWidth,
        histogram: null,
        exceedance: [],
        closedFormMean: null,
      });
      return {
        index: mean * M.length + k,
        settings: { n: 120, m, mean, std: 1, sigma: 1, eps: 0.1, blockSize: 1, p: 1 },
        samples: 300,
        kept: 300,
        dropped: 0,
        failed: 0,
        dropReasons: [],
        failures: [],
        metrics: [metric('rates.apc.rate', apc, m === 1 ? 0 : 0.0004), metric('rates.dhbm.rate', hbm, 0.0003)],
      } as unknown as PointResult;
    }),
  );
  return { points, reference: null };
}

/** A preset study computed here, as the workers would (fewer samples): its figures and result. */
function computeStudy(request: StudyRequest): { figures: FigureSpec[]; result: StudyResult } {
  const plan = planStudy(request, { maxSamples: 1e6, maxPointSamples: 1e4, maxPoints: 1000, maxN: 1000 });
  const count = plan.definition.samples;
  const samples: PointSamples[] = plan.points.map(() => ({
    status: new Int8Array(count),
    reasons: new Array<string>(count).fill(''),
    values: plan.definition.metrics.map(() => new Float64Array(count)),
  }));
  for (const group of plan.groups)
    for (let sample = 0; sample < count; sample++)
      computeGroupSample(plan.definition, group, sample).forEach((outcome, k) => {
        const own = samples[group.points[k].index];
        own.status[sample] = SAMPLE_STATUSES.indexOf(outcome.status);
        own.reasons[sample] = outcome.reason ?? '';
        outcome.values.forEach((value, metric) => (own.values[metric][sample] = value));
      });
  return { figures: plan.figures, result: aggregateStudy(plan.definition, plan.points, samples, plan.reference) };
}

interface Panel {
  top: number;
  bottom: number;
  ticks: { value: number; y: number; text: string }[];
  legendYs: number[];
  seriesYs: number[];
  /** Each series' drawn points (SVG units) by its label. */
  series: Map<string, [number, number][]>;
  /** Each band polygon's largest height (SVG units). */
  bandHeights: number[];
  logY: boolean;
  text: string;
}

function panelsOf(svg: string): Panel[] {
  return svg
    .split('<g class="panel"')
    .slice(1)
    .map((text) => {
      const area = /class="plot-area" x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"/.exec(text)!;
      const top = Number(area[1]);
      const ticks = [...text.matchAll(/class="y-tick" data-value="([^"]+)" data-y="([^"]+)"[^>]*>([^<]*)</g)].map((match) => ({
        value: Number(match[1]),
        y: Number(match[2]),
        text: match[3],
      }));
      const legendYs = [...text.matchAll(/class="legend" x="[\d.]+" y="([\d.]+)"/g)].map((match) => Number(match[1]));
      const seriesYs = [...text.matchAll(/class="series"[^>]*points="([^"]+)"/g)].flatMap((match) =>
        match[1].split(' ').map((pair) => Number(pair.split(',')[1])),
      );
      const pairs = (points: string): [number, number][] =>
        points.split(' ').map((pair) => pair.split(',').map(Number) as [number, number]);
      const series = new Map(
        [...text.matchAll(/class="series" data-label="([^"]+)" points="([^"]+)"/g)].map((match) => [match[1], pairs(match[2])]),
      );
      const bandHeights = [...text.matchAll(/class="band" points="([^"]+)"/g)].map((match) => {
        const points = pairs(match[1]);
        const half = points.length / 2;
        // Upper edge left to right, then the lower edge right to left.
        return Math.max(...points.slice(0, half).map(([, y], k) => points[points.length - 1 - k][1] - y));
      });
      const logY = /data-log-y="true"/.test(text);
      return { top, bottom: top + Number(area[2]), ticks, legendYs, seriesYs, series, bandHeights, logY, text };
    });
}

/** The axis's values at its top and bottom, from two of its ticks (on a log axis: their log10). */
function axisRange(panel: Panel): [number, number] {
  const value = (tick: { value: number }): number => (panel.logY ? Math.log10(tick.value) : tick.value);
  const [a, b] = [panel.ticks[0], panel.ticks[panel.ticks.length - 1]];
  const perPixel = (value(b) - value(a)) / (b.y - a.y);
  return [value(a) + (panel.bottom - a.y) * perPixel, value(a) + (panel.top - a.y) * perPixel];
}

/** Round ticks: linear ones equally spaced by 1, 2 or 5 times a power of ten, written with no more digits than the step has; log ones 1, 2, 3, 5 or 7 times a power of ten. */
function expectRoundTicks(panel: Panel): void {
  expect(panel.ticks.length).toBeGreaterThanOrEqual(3);
  if (panel.logY) {
    for (const tick of panel.ticks) {
      const mantissa = tick.value / 10 ** Math.floor(Math.log10(tick.value) + 1e-9);
      expect(
        [1, 2, 3, 5, 7].some((m) => Math.abs(mantissa - m) < 1e-6),
        tick.text,
      ).toBe(true);
      expect(Number(tick.text)).toBeCloseTo(tick.value, 12);
      expect(tick.text.length).toBeLessThanOrEqual(6);
    }
    return;
  }
  const step = panel.ticks[1].value - panel.ticks[0].value;
  const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
  expect([1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-6)).toBe(true);
  for (const tick of panel.ticks) {
    expect(Number(tick.text)).toBeCloseTo(tick.value, 10);
    expect(tick.text.split('.')[1]?.length ?? 0).toBeLessThanOrEqual(Math.max(0, -Math.floor(Math.log10(step) + 1e-9)));
  }
}

/** The y axis spans the values drawn, with no more than 10% of their range to spare (log axes: in decades). */
function expectAxisAtDataScale(panel: Panel, values: number[]): void {
  const drawn = (panel.logY ? values.filter((v) => v > 0).map(Math.log10) : values).filter(Number.isFinite);
  const [low, high] = [Math.min(...drawn), Math.max(...drawn)];
  const [axisLow, axisHigh] = axisRange(panel);
  expect(axisLow).toBeLessThanOrEqual(low + 1e-9);
  expect(axisHigh).toBeGreaterThanOrEqual(high - 1e-9);
  expect(axisHigh - axisLow - (high - low)).toBeLessThanOrEqual(0.1 * (high - low));
}

/** The legend below the plot and every curve inside it: the two never meet. */
function expectLegendOffTheData(panel: Panel): void {
  expect(panel.legendYs.length).toBeGreaterThan(0);
  for (const y of panel.legendYs) expect(y - 11).toBeGreaterThan(panel.bottom);
  for (const y of panel.seriesYs) expect(y).toBeGreaterThanOrEqual(panel.top - 0.01);
  for (const y of panel.seriesYs) expect(y).toBeLessThanOrEqual(panel.bottom + 0.01);
}

describe('study figures', () => {
  it('Figure 1 at the scale of its data: m = 1 shown apart, round ticks, a legend of symbols below the plot', () => {
    const figure = normalizeStudyRequest({ preset: 'experiment-1' }).figures[0];
    const result = experiment1();
    const svg = renderStudyFigure(figure, result);
    const panels = panelsOf(svg);
    expect(panels).toHaveLength(2);
    panels.forEach((panel, p) => {
      // The data drawn: every mean and interval end but APC's at m = 1.
      const values = result.points
        .filter((point) => point.settings.mean === p)
        .flatMap((point) =>
          point.metrics
            .filter((metric) => !(point.settings.m === 1 && metric.metric === 'rates.apc.rate'))
            .flatMap((metric) => [metric.mean!, ...metric.interval!]),
        );
      expectAxisAtDataScale(panel, values);
      expectRoundTicks(panel);
      // The legend under the plot, named by symbols; the curves inside it.
      expect(panel.legendYs.length).toBe(2);
      expectLegendOffTheData(panel);
      expect(panel.text).toContain('E[ρ_APC]');
      expect(panel.text).toContain('E[ρ_HBM]');
      expect(panel.text).not.toContain('rates.apc.rate');
      expect(panel.text).toMatch(/at m = 1, E\[ρ_APC\] = 0 \(one machine: APC is exact\)/);
      // The band is visible: its polygon spans more than a pixel.
      expect(panel.text).toContain('class="band"');
    });
    // The curves are not flat: APC's spans most of the plot's height.
    const apcYs = [...panels[0].text.matchAll(/class="series" data-label="E\[ρ_APC\]" points="([^"]+)"/g)].flatMap((match) =>
      match[1].split(' ').map((pair) => Number(pair.split(',')[1])),
    );
    expect(Math.max(...apcYs) - Math.min(...apcYs)).toBeGreaterThan(0.5 * (panels[0].bottom - panels[0].top));
  });

  it('Figure 2 (against n, a panel per m): round ticks, visible bands, the legend off the data, symbols, the axis at the data', () => {
    const { figures, result } = computeStudy({ preset: 'experiment-2', samples: 24 });
    const figure = figures.find((candidate) => candidate.name === 'figure-2')!;
    const panels = panelsOf(renderStudyFigure(figure, result));
    expect(panels).toHaveLength(2);
    panels.forEach((panel, p) => {
      const m = [10, 20][p];
      const values = result.points
        .filter((point) => point.settings.m === m)
        .flatMap((point) => point.metrics.flatMap((metric) => [metric.mean!, ...(metric.interval ?? [])]));
      expectAxisAtDataScale(panel, values);
      expectRoundTicks(panel);
      expectLegendOffTheData(panel);
      expect([...panel.series.keys()]).toEqual(['E[ρ_APC]', 'E[ρ_HBM]']);
      expect(panel.text).not.toContain('rates.');
      // Both bands show: each at least 3 units high somewhere (the plot is 300 high).
      expect(panel.bandHeights).toHaveLength(2);
      for (const height of panel.bandHeights) expect(height).toBeGreaterThan(3);
    });
  });

  it('Figures 3 and 4 (Experiment 3): densities on a log x axis, exceedances with their closed form, at the data scale', () => {
    const { figures, result } = computeStudy({ preset: 'experiment-3', samples: 200 });
    const byP = (p: number): PointResult[] => result.points.filter((point) => point.settings.p === p);
    const ps = [1, 2, 3, 4, 6];
    const figurePanels = (name: string): Panel[] =>
      panelsOf(
        renderStudyFigure(
          figures.find((candidate) => candidate.name === name)!,
          result,
        ),
      );

    // Figure 3: one density per n, x on a log scale (tan^-2 theta shrinks like 1/n), y from 0 to the highest bin.
    const density = figurePanels('figure-3');
    expect(density).toHaveLength(ps.length);
    density.forEach((panel, k) => {
      const histograms = byP(ps[k]).map((point) => point.metrics[0].histogram!);
      // Equal-ratio bins, drawn as the share per decade: with 40 equal widths from 0, most of n = 256's samples sat in
      // the first bin, one point at the left of the log axis (35% even at p = 1, n = 16).
      for (const histogram of histograms) {
        expect(histogram.scale).toBe('log');
        const shares = histogram.density.map((d, b) => d * (histogram.edges[b + 1] - histogram.edges[b]));
        expect(Math.max(...shares)).toBeLessThan(0.15);
      }
      expect(panel.text).toContain('share of samples per decade');
      expect(panel.text).toContain("Each curve starts at its positive values' 1st percentile.");
      expectAxisAtDataScale(
        panel,
        histograms.flatMap((histogram) =>
          histogram.density.map(
            (d, b) => (d * (histogram.edges[b + 1] - histogram.edges[b])) / Math.log10(histogram.edges[b + 1] / histogram.edges[b]),
          ),
        ),
      );
      expectRoundTicks(panel);
      expectLegendOffTheData(panel);
      expect([...panel.series.keys()]).toEqual(['n = 16', 'n = 32', 'n = 64', 'n = 128', 'n = 256']);
      expect(panel.text).toContain('tan⁻²θ₁₂ (log scale)');
      expect(panel.text).not.toContain('tanInvSqTheta');
      // The x axis holds at least 99% of every curve's samples.
      const axisEnd = Number(/data-x-domain="[^ ]+ ([^"]+)"/.exec(panel.text)![1]);
      for (const histogram of histograms) {
        const shown = histogram.density.reduce(
          (mass, d, b) => mass + (histogram.edges[b] <= axisEnd ? d * (histogram.edges[b + 1] - histogram.edges[b]) : 0),
          0,
        );
        // On equal-ratio bins the values below the first edge (the positive values' 1st percentile) are left of the curve.
        expect(shown + histogram.below / 200).toBeGreaterThanOrEqual(0.99 - 1e-9);
      }
    });

    // Figure 4: P(tan^-2 theta > eps) on log-log axes; p = 1 has the closed form, dashed in the estimate's colour.
    const exceedance = figurePanels('figure-4');
    expect(exceedance).toHaveLength(ps.length);
    exceedance.forEach((panel, k) => {
      const points = byP(ps[k]);
      const values = points.flatMap((point) =>
        point.metrics[0].exceedance.flatMap((e) => {
          // Drawn: the estimate with its 95% (Wilson) interval where it is above 0 (the log axis), and the closed form.
          const [p, [low, high]] = [e.probability ?? 0, e.interval ?? [0, 0]];
          return [...(p > 0 ? [p, high] : []), ...(p > 0 && low > 0 ? [low] : []), ...(e.closedForm !== null ? [e.closedForm] : [])];
        }),
      );
      // An estimate of 0 cannot be drawn on the log axis: the panel says so (the curve stopped without a word).
      const zeros = points.filter((point) => point.metrics[0].exceedance.some((e) => e.probability === 0));
      for (const point of zeros) {
        const note = new RegExp(`n = ${point.settings.n}: 0 of (\\d+) above [\\d., ]+ \\(P &lt; ([\\d.e-]+)\\), not drawn`).exec(
          panel.text,
        );
        expect(note).not.toBeNull();
        // The bound said is the upper end of the interval the result reports (Wilson's at 0 of N: z^2 / (N + z^2)).
        const zero = point.metrics[0].exceedance.find((e) => e.probability === 0)!;
        expect(Number(note![1])).toBe(point.metrics[0].count);
        expect(Number(note![2]) / zero.interval![1]).toBeCloseTo(1, 2);
        expect(Number(note![2]) / (1.959964 ** 2 / (point.metrics[0].count + 1.959964 ** 2))).toBeCloseTo(1, 2);
      }
      expect(zeros.length, `p = ${ps[k]}`).toBeGreaterThan(0);
      expect(panel.logY).toBe(true);
      expectAxisAtDataScale(panel, values);
      expectRoundTicks(panel);
      expectLegendOffTheData(panel);
      expect(panel.text).toContain('P(tan⁻²θ₁₂ &gt; 0.01)');
      expect(panel.bandHeights.length).toBeGreaterThan(0);
      expect(Math.max(...panel.bandHeights)).toBeGreaterThan(3);
      if (ps[k] === 1) {
        const colour = (label: string): string =>
          new RegExp(`class="series" data-label="${label.replace(/[()>.]/g, '\\$&')}"[^>]*stroke="([^"]+)"`).exec(
            panel.text.replace(/&gt;/g, '>'),
          )![1];
        expect(colour('P(> 0.1), closed form')).toBe(colour('P(tan⁻²θ₁₂ > 0.1)'));
        expect(panel.text).toMatch(/data-label="P\(&gt; 0.1\), closed form"[^>]*stroke-dasharray/);
      }
    });
  });
});
