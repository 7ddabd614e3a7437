/**
 * The raw per-sample values of a study as CSV (RFC 4180): one row per grid point and sample. `seed`
 * is the seed of the sample's matrix; in a study over a given matrix, the seed of its random
 * partition (empty for a deterministic partition family). A generated study with the random
 * partition family has a `partitionSeed` column after `seed`. Either seed replays the sample as a
 * job: the matrix as `{ format: 'generator', ..., seed }`, the partition as
 * `{ family: 'random', seed, machines: m }` (src/solvers/input/partition.ts randomPartition).
 */
import { GRID_PARAMETERS } from '../../solvers/studies/definition.js';
import type { StudyPlan } from '../../solvers/studies/plan.js';
import { SAMPLE_STATUSES, matrixSeed, partitionSeed } from '../../solvers/studies/sampler.js';
import { DETERMINISTIC_PARTITION_FAMILIES } from '../../solvers/studies/storedMatrix.js';
import { collectSamples } from './chunkOutcome.js';

function field(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function samplesCsv(plan: StudyPlan, outcomes: ReadonlyMap<number, string>): string {
  const { definition } = plan;
  const seedOf = (point: StudyPlan['points'][number], sample: number): string => {
    if (!definition.matrix) return String(matrixSeed(definition, point, sample));
    return DETERMINISTIC_PARTITION_FAMILIES.includes(definition.partition.family) ? '' : String(partitionSeed(definition, point, sample));
  };
  const randomGenerated = !definition.matrix && definition.partition.family === 'random';
  const varied = GRID_PARAMETERS.filter((name) => plan.definition.grid[name] !== undefined || plan.definition.fixed[name] !== undefined);
  const header = [
    'point',
    ...varied,
    'sample',
    'seed',
    ...(randomGenerated ? ['partitionSeed'] : []),
    'status',
    'reason',
    ...plan.definition.metrics.map((metric) => metric.name),
  ];
  const lines = [header.map(field).join(',')];
  const samples = collectSamples(plan, outcomes);
  plan.points.forEach((point, p) => {
    const own = samples[p];
    for (let s = 0; s < own.status.length; s++) {
      if (own.status[s] < 0) continue;
      const values = own.values.map((column) => (Number.isFinite(column[s]) ? String(column[s]) : ''));
      const seed = seedOf(point, s);
      const row = [
        String(point.index),
        ...varied.map((name) => String(point.settings[name])),
        String(s),
        seed,
        ...(randomGenerated ? [String(partitionSeed(definition, point, s))] : []),
        SAMPLE_STATUSES[own.status[s]],
        own.reasons[s],
        ...values,
      ];
      lines.push(row.map(field).join(','));
    }
  });
  return `${lines.join('\n')}\n`;
}
