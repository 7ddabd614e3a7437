/**
 * From the per-sample outcomes of every grid point to the study's results: kept / dropped (with
 * why) / failed counts, and per metric the Monte-Carlo summary (./statistics.ts), histogram and
 * exceedance probabilities where the definition asks for them, closed forms beside them where they
 * exist, and the check against a preset's reference values (docs/SPEC.md's table for Experiment 1).
 */
import type { GridParameter, GridPoint, StudyDefinition } from './definition.js';
import type { MetricSpec } from './metrics.js';
import type { ReferenceValue } from './presets.js';
import { SAMPLE_STATUSES, type SampleStatus } from './sampler.js';
import {
  exceedance,
  histogram,
  lineAngleExceedance,
  lineAngleTanInvSqMean,
  summarize,
  type Exceedance,
  type Histogram,
  type Summary,
} from './statistics.js';

/** Every sample of one point, as the chunks stored them. */
export interface PointSamples {
  /** Index into SAMPLE_STATUSES per sample; -1 for a sample no chunk reported (its chunk failed for good). */
  status: Int8Array;
  /** Why each sample was dropped or failed ('' when kept). */
  reasons: string[];
  /** values[metric][sample] (NaN unless kept). */
  values: Float64Array[];
}

export interface MetricResult extends Summary {
  metric: string;
  kind: MetricSpec['kind'];
  of: string | null;
  histogram: Histogram | null;
  exceedance: Exceedance[];
  /** The exact mean where a closed form exists (tan^-2 theta for p = 1: 1 / (n - 3)), else null. */
  closedFormMean: number | null;
}

export interface ReasonCount {
  reason: string;
  count: number;
}

export interface PointResult {
  index: number;
  settings: Record<GridParameter, number>;
  samples: number;
  kept: number;
  dropped: number;
  failed: number;
  /** Why samples were dropped (e.g. "kappa(A^T A) > 10000000"), with counts. */
  dropReasons: ReasonCount[];
  /** Why samples failed (the first line of each distinct error), with counts; a failed sample is not fatal. */
  failures: ReasonCount[];
  metrics: MetricResult[];
}

export interface ReferenceCheck {
  point: number;
  metric: string;
  reference: number;
  mean: number | null;
  standardError: number | null;
  /** (mean - reference) / standardError. */
  deviation: number | null;
  /** |deviation| <= 3. */
  withinThreeStandardErrors: boolean;
}

export interface StudyResult {
  points: PointResult[];
  /** A preset's published values next to the study's (null when the study has none). */
  reference: ReferenceCheck[] | null;
}

function countReasons(samples: PointSamples, status: SampleStatus): ReasonCount[] {
  const code = SAMPLE_STATUSES.indexOf(status);
  const counts = new Map<string, number>();
  for (let s = 0; s < samples.status.length; s++) {
    if (samples.status[s] !== code) continue;
    const reason = samples.reasons[s] || status;
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  return [...counts].map(([reason, count]) => ({ reason, count }));
}

function metricResult(definition: StudyDefinition, point: GridPoint, metric: MetricSpec, values: Float64Array): MetricResult {
  const lineAngles = definition.sampler === 'subspace-pair' && point.settings.p === 1 && point.settings.mean === 0;
  return {
    metric: metric.name,
    kind: metric.kind,
    of: metric.of,
    ...summarize(values),
    histogram: definition.histogramBins > 0 ? histogram(values, definition.histogramBins, definition.histogramScale ?? 'linear') : null,
    exceedance: definition.thresholds.map((eps) => ({
      ...exceedance(values, eps),
      closedForm: lineAngles && metric.path === 'tanInvSqTheta' ? lineAngleExceedance(point.settings.n, eps) : null,
    })),
    closedFormMean: lineAngles && metric.path === 'tanInvSqTheta' ? lineAngleTanInvSqMean(point.settings.n) : null,
  };
}

export function aggregateStudy(
  definition: StudyDefinition,
  points: readonly GridPoint[],
  samples: readonly PointSamples[],
  reference: readonly ReferenceValue[] | null,
): StudyResult {
  const results = points.map((point, p): PointResult => {
    const own = samples[p];
    const count = (status: SampleStatus): number => own.status.filter((code) => code === SAMPLE_STATUSES.indexOf(status)).length;
    const missing = own.status.filter((code) => code < 0).length;
    const failures = countReasons(own, 'failed');
    if (missing > 0) failures.push({ reason: 'its chunk failed on every attempt (see the worker logs)', count: missing });
    return {
      index: point.index,
      settings: point.settings,
      samples: own.status.length,
      kept: count('kept'),
      dropped: count('dropped'),
      failed: count('failed') + missing,
      dropReasons: countReasons(own, 'dropped'),
      failures,
      metrics: definition.metrics.map((metric, k) => metricResult(definition, point, metric, own.values[k])),
    };
  });
  return { points: results, reference: reference ? checkReference(results, reference) : null };
}

function checkReference(points: readonly PointResult[], reference: readonly ReferenceValue[]): ReferenceCheck[] {
  const checks: ReferenceCheck[] = [];
  for (const value of reference) {
    const point = points.find((candidate) =>
      Object.entries(value.settings).every(([name, v]) => candidate.settings[name as GridParameter] === v),
    );
    const metric = point?.metrics.find((candidate) => candidate.metric === value.metric);
    if (!point || !metric) continue;
    const deviation = metric.mean !== null && metric.standardError ? (metric.mean - value.value) / metric.standardError : null;
    checks.push({
      point: point.index,
      metric: value.metric,
      reference: value.value,
      mean: metric.mean,
      standardError: metric.standardError,
      deviation,
      withinThreeStandardErrors: deviation !== null && Math.abs(deviation) <= 3,
    });
  }
  return checks;
}
