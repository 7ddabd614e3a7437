/**
 * What a chunk stores: for each point of its group, each sample's status, reason and metric values.
 * JSON (NaN written as null), one Redis hash field per chunk.
 */
import type { PointSamples } from '../../solvers/studies/aggregate.js';
import type { StudyChunk } from '../../solvers/studies/definition.js';
import type { StudyPlan } from '../../solvers/studies/plan.js';
import { SAMPLE_STATUSES, type SampleOutcome } from '../../solvers/studies/sampler.js';

export interface ChunkOutcome {
  start: number;
  /** outcomes[k][s]: point k of the group (group order), sample start + s. */
  points: { status: number[]; reasons: (string | null)[]; values: (number | null)[][] }[];
}

export function encodeChunkOutcome(start: number, samples: SampleOutcome[][]): string {
  // samples[s][k]: sample start + s at point k.
  const pointCount = samples[0]?.length ?? 0;
  const points = Array.from({ length: pointCount }, (_, k) => ({
    status: samples.map((sample) => SAMPLE_STATUSES.indexOf(sample[k].status)),
    reasons: samples.map((sample) => sample[k].reason),
    values: samples.map((sample) => sample[k].values.map((v) => (Number.isFinite(v) ? v : null))),
  }));
  return JSON.stringify({ start, points } satisfies ChunkOutcome);
}

/** Every point's samples from the stored chunks; samples of chunks never stored keep status -1. */
export function collectSamples(plan: StudyPlan, outcomes: ReadonlyMap<number, string>): PointSamples[] {
  const { samples, metrics } = plan.definition;
  const byPoint: PointSamples[] = plan.points.map(() => ({
    status: new Int8Array(samples).fill(-1),
    reasons: new Array<string>(samples).fill(''),
    values: metrics.map(() => new Float64Array(samples).fill(Number.NaN)),
  }));
  for (const [index, text] of outcomes) {
    const chunk: StudyChunk | undefined = plan.chunks[index];
    if (!chunk) continue;
    const outcome = JSON.parse(text) as ChunkOutcome;
    plan.groups[chunk.group].points.forEach((point, k) => {
      const stored = outcome.points[k];
      const target = byPoint[point.index];
      stored.status.forEach((status, s) => {
        const sample = outcome.start + s;
        target.status[sample] = status;
        target.reasons[sample] = stored.reasons[s] ?? '';
        stored.values[s].forEach((value, metric) => (target.values[metric][sample] = value ?? Number.NaN));
      });
    });
  }
  return byPoint;
}
