/**
 * The study figures as the API renders them, measured in their SVG: each panel's y axis spans its
 * data (within 10% of the data's range, the points shown apart excluded), ticks are round, the
 * legend lies below the plot (off the data), the metrics are named by their symbols, and APC's
 * exact rate at m = 1 is a note instead of an axis stretched to 0.
 */
import { describe, expect, it } from 'vitest';
import { renderStudyFigure } from '../../../src/api/figures/studyFigure.js';
import type { PointResult, StudyResult } from '../../../src/solvers/studies/aggregate.js';
import { normalizeStudyRequest } from '../../../src/solvers/studies/presets.js';

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

interface Panel {
  top: number;
  bottom: number;
  ticks: { value: number; y: number; text: string }[];
  legendYs: number[];
  seriesYs: number[];
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
      return { top, bottom: top + Number(area[2]), ticks, legendYs, seriesYs, text };
    });
}

/** The axis's values at its top and bottom, from two of its ticks (linear axis). */
function axisRange(panel: Panel): [number, number] {
  const [a, b] = [panel.ticks[0], panel.ticks[panel.ticks.length - 1]];
  const perPixel = (b.value - a.value) / (b.y - a.y);
  return [a.value + (panel.bottom - a.y) * perPixel, a.value + (panel.top - a.y) * perPixel];
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
      const [low, high] = [Math.min(...values), Math.max(...values)];
      const [axisLow, axisHigh] = axisRange(panel);
      expect(axisLow).toBeLessThanOrEqual(low);
      expect(axisHigh).toBeGreaterThanOrEqual(high);
      expect(axisHigh - axisLow - (high - low)).toBeLessThanOrEqual(0.1 * (high - low));
      // Round ticks: equally spaced by 1, 2 or 5 times a power of ten, written with no more digits than the step has.
      expect(panel.ticks.length).toBeGreaterThanOrEqual(3);
      const step = panel.ticks[1].value - panel.ticks[0].value;
      const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
      expect([1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-6)).toBe(true);
      for (const tick of panel.ticks) {
        expect(Number(tick.text)).toBeCloseTo(tick.value, 10);
        expect(tick.text.split('.')[1]?.length ?? 0).toBeLessThanOrEqual(Math.max(0, -Math.floor(Math.log10(step) + 1e-9)));
      }
      // The legend under the plot, named by symbols; the curves inside it.
      expect(panel.legendYs.length).toBe(2);
      for (const y of panel.legendYs) expect(y).toBeGreaterThan(panel.bottom);
      for (const y of panel.seriesYs) expect(y).toBeGreaterThanOrEqual(panel.top - 0.01);
      for (const y of panel.seriesYs) expect(y).toBeLessThanOrEqual(panel.bottom + 0.01);
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
});
