/**
 * One sample of a group of grid points: draw the sample's matrix (seeded by the study's seed, the
 * group's settings and the sample's index, so sample s of a setting is the same matrix whichever
 * chunk, worker or retry computes it), then evaluate every metric at every point of the group:
 * through the cheap path (./sampleMetrics.ts) when all metrics are conditioning quantities, else
 * through the full analysis. A sample that throws is recorded as failed with its reason; it is
 * never fatal to the study.
 */
import { analyze } from '../analysis/analyze.js';
import { buildDistributedSystem } from '../distributed/distributedSystem.js';
import { createProblem } from '../input/createProblem.js';
import { selectedKernels } from '../linalg/kernels.js';
import { generateMatrix } from '../input/generators.js';
import { regressionData } from '../input/regression.js';
import { buildPartition, randomPartition } from '../input/partition.js';
import type { DenseMatrix } from '../matrix.js';
import { partitionFromAssignment, type Partition } from '../problem.js';
import { SeededRandom } from '../random.js';
import { GRID_PARAMETERS, REGRESSION_PARAMETERS, sampleRows, type GridPoint, type PointGroup, type StudyDefinition } from './definition.js';
import { metricValue, type MetricSpec } from './metrics.js';
import { conditioningAnalysis, isConditioningPath, matrixConditioning, sExtremes, smallestPrincipalAngle } from './sampleMetrics.js';

export const SAMPLE_STATUSES = ['kept', 'dropped', 'failed'] as const;
export type SampleStatus = (typeof SAMPLE_STATUSES)[number];

export interface SampleOutcome {
  status: SampleStatus;
  /** Why a sample was dropped or failed; null when kept. */
  reason: string | null;
  /** One value per metric (NaN unless kept, or where the field is null for this sample). */
  values: number[];
}

/** FNV-1a over the text, twice with different offsets: a 53-bit seed. */
function hashSeed(text: string): number {
  let low = 0x811c9dc5;
  let high = 0x01000193 ^ 0x5bd1e995;
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    low = Math.imul(low ^ c, 0x01000193);
    high = Math.imul(high ^ c, 0x01000193 + 2 * k + 1);
  }
  return (high >>> 11) * 2 ** 32 + (low >>> 0);
}

/** The matrix seed of sample `sample` of a point: depends on every setting but the partition's, so all m share it. */
export function matrixSeed(definition: StudyDefinition, point: GridPoint, sample: number): number {
  // The regression settings enter only regression seeds: the other generators' samples stay what they were.
  const settings = GRID_PARAMETERS.filter(
    (name) => name !== 'm' && (definition.generator === 'regression' || !REGRESSION_PARAMETERS.includes(name)),
  ).map((name) => `${name}=${point.settings[name]}`);
  return hashSeed(`${definition.seed}|${definition.sampler}|${definition.generator}|${settings.join(',')}|${sample}`);
}

/** The seed of the random partition of sample `sample` at a point (family random). */
export function partitionSeed(definition: StudyDefinition, point: GridPoint, sample: number): number {
  return hashSeed(`${definition.partition.seed}|partition|n=${sampleRows(definition, point.settings)}|m=${point.settings.m}|${sample}`);
}

/**
 * The partition of a sample: contiguous (NumPy array_split), round-robin (row k on machine k mod m)
 * or random: randomPartition with the sample's partitionSeed, which a job replays as
 * `{ family: 'random', seed, machines: m }` (the samples CSV lists the seed).
 */
export function samplePartition(definition: StudyDefinition, point: GridPoint, sample: number): Partition {
  const { m } = point.settings;
  const n = sampleRows(definition, point.settings);
  if (definition.partition.family === 'contiguous') return buildPartition({ machines: m }, n);
  if (definition.partition.family === 'random') return randomPartition(n, m, partitionSeed(definition, point, sample));
  const assignment = new Int32Array(n);
  for (let k = 0; k < n; k++) assignment[k] = k % m;
  return partitionFromAssignment(assignment, m);
}

/**
 * The regression data of sample `sample` at a point: rowsPerFeature * n samples of n features with
 * labels of noise sigma, machine i's rows (the sample's partition's) skewed by `skew`. A job replays it
 * with `{ format: 'generator', generator: 'regression', rows, n, mean, skew, sigma, seed }` and the
 * sample's partition (the samples CSV's seeds).
 */
export function sampleRegression(
  definition: StudyDefinition,
  point: GridPoint,
  sample: number,
): { A: DenseMatrix; b: Float64Array; partition: Partition } {
  const s = point.settings;
  const partition = samplePartition(definition, point, sample);
  const rows = sampleRows(definition, s);
  const seed = matrixSeed(definition, point, sample);
  const data = regressionData({
    rows,
    n: s.n,
    machines: s.m,
    mean: s.mean,
    skew: s.skew,
    sigma: s.sigma,
    seed,
    assignment: partition.assignment,
  });
  return { A: data.A, b: data.b, partition };
}

/**
 * A regression sample: a tall, generally inconsistent system, analyzed in full (the cheap path's
 * factorizations are of square matrices; the full analysis also gives the consistency fields).
 */
function regressionSample(definition: StudyDefinition, point: GridPoint, sample: number): SampleOutcome {
  const metrics = definition.metrics;
  try {
    const { A, b, partition } = sampleRegression(definition, point, sample);
    const analysis = analyze(buildDistributedSystem(createProblem({ A, rhs: b, partition })));
    const limit = definition.dropKappaAtAAbove;
    if (limit !== null && !(analysis.conditioning.kappaAtA <= limit)) {
      return { status: 'dropped', reason: `kappa(A^T A) > ${limit}`, values: new Array<number>(metrics.length).fill(Number.NaN) };
    }
    return { status: 'kept', reason: null, values: metrics.map((metric: MetricSpec) => metricValue(analysis, metric)) };
  } catch (error) {
    return failure(error, metrics.length);
  }
}

function sampleMatrix(definition: StudyDefinition, point: GridPoint, sample: number): DenseMatrix {
  const s = point.settings;
  const seed = matrixSeed(definition, point, sample);
  switch (definition.generator) {
    case 'regression':
      throw new RangeError('regression samples are drawn per point (sampleRegression)');
    case 'gaussian':
      return generateMatrix({ generator: 'gaussian', n: s.n, mean: s.mean, std: s.std, seed });
    case 'structured-gaussian':
      return generateMatrix({ generator: 'structured-gaussian', n: s.n, blockSize: s.blockSize, sigma: s.sigma, seed });
    case 'ones-minus-eps':
      return generateMatrix({ generator: 'ones-minus-eps', n: s.n, eps: s.eps });
    case 'block-diagonal':
      return generateMatrix({ generator: 'block-diagonal', n: s.n, blockSize: s.blockSize, seed, permute: true });
  }
}

function failure(error: unknown, metrics: number): SampleOutcome {
  return {
    status: 'failed',
    reason: error instanceof Error ? error.message : String(error),
    values: new Array<number>(metrics).fill(Number.NaN),
  };
}

/** Evaluate sample `sample` at every point of `group`. */
export function computeGroupSample(definition: StudyDefinition, group: PointGroup, sample: number): SampleOutcome[] {
  const metrics = definition.metrics;
  if (definition.sampler === 'subspace-pair') return group.points.map((point) => subspacePairSample(definition, point, sample));
  if (definition.generator === 'regression') return group.points.map((point) => regressionSample(definition, point, sample));
  let matrix: DenseMatrix;
  try {
    matrix = sampleMatrix(definition, group.points[0], sample);
    // An analysis' input checks (finite entries, no zero row, magnitudes), whichever path computes the metrics: a
    // sample's fate does not depend on the metrics asked (std 1e-150 was kept for kappa(S) alone, failed for theta_H).
    createProblem({ A: matrix, partition: { machines: 1 } });
  } catch (error) {
    return group.points.map(() => failure(error, metrics.length));
  }
  const cheap = metrics.every((metric) => isConditioningPath(metric.path));
  let conditioning: ReturnType<typeof matrixConditioning> | null = null;
  if (cheap || definition.dropKappaAtAAbove !== null) {
    try {
      conditioning = matrixConditioning(selectedKernels(), matrix);
    } catch (error) {
      return group.points.map(() => failure(error, metrics.length));
    }
    const limit = definition.dropKappaAtAAbove;
    if (limit !== null && !(conditioning.kappaAtA <= limit)) {
      const reason = `kappa(A^T A) > ${limit}`;
      return group.points.map(() => ({ status: 'dropped', reason, values: new Array<number>(metrics.length).fill(Number.NaN) }));
    }
  }
  return group.points.map((point) => {
    try {
      const partition = samplePartition(definition, point, sample);
      const source =
        cheap && conditioning
          ? conditioningAnalysis(partition.m, conditioning, sExtremes(selectedKernels(), matrix, partition))
          : analyze(buildDistributedSystem(createProblem({ A: matrix, partition })));
      return { status: 'kept', reason: null, values: metrics.map((metric: MetricSpec) => metricValue(source, metric)) };
    } catch (error) {
      return failure(error, metrics.length);
    }
  });
}

/** Two independent p x n blocks of i.i.d. N(mean, std^2) entries (the paper's Experiment 3 uses N(0, 1)). */
function subspacePairSample(definition: StudyDefinition, point: GridPoint, sample: number): SampleOutcome {
  try {
    const { n, p, mean, std } = point.settings;
    const random = new SeededRandom(matrixSeed(definition, point, sample));
    const first = random.fillNormal(new Float64Array(p * n), mean, std);
    const second = random.fillNormal(new Float64Array(p * n), mean, std);
    const theta = smallestPrincipalAngle(selectedKernels(), first, second, p, n);
    const tan = Math.tan(theta);
    const values: Record<string, number> = { theta, tanInvSqTheta: 1 / (tan * tan), cosSqTheta: Math.cos(theta) ** 2 };
    return { status: 'kept', reason: null, values: definition.metrics.map((metric) => values[metric.path]) };
  } catch (error) {
    return failure(error, definition.metrics.length);
  }
}
