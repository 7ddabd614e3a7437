/**
 * Runs a study preset in this process (no Redis, no workers: the workers' own functions, one sample
 * after another), prints each point's means and writes the preset's figures as SVG:
 *
 *   npx tsx scripts/runStudyPreset.ts regression-skew 100 docs/figures
 *
 * The same values as POST /v1/studies {"preset": ..., "samples": ...} (samples are seeded).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderStudyFigure } from '../src/api/figures/studyFigure.js';
import { aggregateStudy, type PointSamples } from '../src/solvers/studies/aggregate.js';
import { planStudy } from '../src/solvers/studies/plan.js';
import { STUDY_PRESETS, type StudyPreset } from '../src/solvers/studies/presets.js';
import { SAMPLE_STATUSES, computeGroupSample } from '../src/solvers/studies/sampler.js';

const [preset = 'regression-skew', samplesArgument, outDir] = process.argv.slice(2);
if (!(STUDY_PRESETS as readonly string[]).includes(preset)) throw new Error(`preset: one of ${STUDY_PRESETS.join(', ')}`);
const limits = { maxSamples: 1e7, maxPointSamples: 1e6, maxPoints: 1e4, maxN: 1e4 };
const plan = planStudy({ preset: preset as StudyPreset, ...(samplesArgument ? { samples: Number(samplesArgument) } : {}) }, limits);
const { samples, metrics } = plan.definition;
const collected: PointSamples[] = plan.points.map(() => ({
  status: new Int8Array(samples),
  reasons: new Array<string>(samples).fill(''),
  values: metrics.map(() => new Float64Array(samples)),
}));
const started = performance.now();
for (const group of plan.groups) {
  for (let sample = 0; sample < samples; sample++) {
    const outcomes = computeGroupSample(plan.definition, group, sample);
    group.points.forEach((point, k) => {
      const own = collected[point.index];
      own.status[sample] = SAMPLE_STATUSES.indexOf(outcomes[k].status);
      own.reasons[sample] = outcomes[k].reason ?? '';
      outcomes[k].values.forEach((value, j) => (own.values[j][sample] = value));
    });
  }
}
console.log(`${plan.points.length} points x ${samples} samples in ${((performance.now() - started) / 1000).toFixed(1)} s`);
const result = aggregateStudy(plan.definition, plan.points, collected, plan.reference);
const varied = Object.keys(plan.definition.grid) as (keyof (typeof plan.points)[number]['settings'])[];
for (const point of result.points) {
  const where = varied.map((name) => `${name} ${point.settings[name]}`).join(', ');
  const means = point.metrics.map((metric) => `${metric.metric} ${metric.mean?.toPrecision(4)} ± ${metric.standardError?.toPrecision(2)}`);
  console.log(`${where} (kept ${point.kept}): ${means.join(', ')}`);
}
if (outDir) {
  mkdirSync(outDir, { recursive: true });
  for (const figure of plan.figures) writeFileSync(join(outDir, `${preset}-${figure.name}.svg`), renderStudyFigure(figure, result));
}
