/**
 * A study: a grid of problem settings x seeded samples x metrics to aggregate (Monte-Carlo
 * experiments such as the paper's Experiments 1-3, docs/SPEC.md "The paper's experiments").
 *
 * This file holds the normalized definition, its validation (InvalidParameterError: 422;
 * ProblemTooLargeError: 413, both naming the offending field), the expansion of the grid into
 * points, the grouping of points that share one matrix per sample, and the split into chunks.
 */
import { InvalidParameterError, ProblemTooLargeError } from '../errors.js';
import { validateMetrics, type MetricSpec } from './metrics.js';
import type { HistogramScale } from './statistics.js';
import { storedMatrixSampleCost, type StudyMatrix } from './storedMatrix.js';
import { GRID_PARAMETERS, type GridParameter, type PartitionFamily, type StudyGenerator, type StudySampler } from './vocabulary.js';

export {
  GRID_PARAMETERS,
  PARTITION_FAMILIES,
  REGRESSION_PARAMETERS,
  STUDY_GENERATORS,
  STUDY_SAMPLERS,
  type GridParameter,
  type PartitionFamily,
  type StudyGenerator,
  type StudySampler,
} from './vocabulary.js';

export interface StudyDefinition {
  sampler: StudySampler;
  generator: StudyGenerator;
  /** Values of the settings the grid does not vary. */
  fixed: Partial<Record<GridParameter, number>>;
  /** The grid's axes: each listed setting takes each of its values (cartesian product). */
  grid: Partial<Record<GridParameter, number[]>>;
  partition: { family: PartitionFamily; seed: number };
  /** Samples drawn per grid point. */
  samples: number;
  /** Seed of the whole study: sample s of a setting always gets the same matrix. */
  seed: number;
  metrics: MetricSpec[];
  /** Samples whose kappa(A^T A) exceeds this are dropped and counted (the paper drops kappa > 1e7); null: none. */
  dropKappaAtAAbove: number | null;
  /** Levels eps of the exceedance probabilities P(value > eps) reported for every metric (Experiment 3). */
  thresholds: number[];
  /** Bins of the per-point histogram (empirical density) of every metric; 0 for none. */
  histogramBins: number;
  /** Equal-ratio bins (absent: equal widths from 0; studies stored before it have none). */
  histogramScale?: HistogramScale;
  /** A given matrix instead of a generator (./storedMatrix.ts): settings.n is its n, only m and the partition vary. */
  matrix?: StudyMatrix;
}

export interface StudyLimits {
  maxSamples: number;
  maxPointSamples: number;
  maxPoints: number;
  maxN: number;
  /** Largest n of a given matrix (it is analyzed on CSR, as jobs analyze it: MAX_N_SPARSE); absent: maxN. */
  maxNSparse?: number;
}

/** One grid point: every setting resolved. */
export interface GridPoint {
  index: number;
  settings: Record<GridParameter, number>;
}

/** Points that share one matrix per sample (all settings equal but m): Experiment 1 analyzes each matrix for every m. */
export interface PointGroup {
  index: number;
  points: GridPoint[];
}

/** A child's share of the work: samples [start, end) of every point of one group. */
export interface StudyChunk {
  index: number;
  group: number;
  start: number;
  end: number;
}

const DEFAULTS: Record<GridParameter, number> = {
  mean: 0,
  std: 1,
  sigma: 1,
  eps: 0.1,
  blockSize: 1,
  p: 1,
  skew: 0,
  rowsPerFeature: 4,
  n: 120,
  m: 1,
};

/** Settings that only partition a matrix: points differing only in these share their samples' matrices. */
const PARTITION_PARAMETERS: readonly GridParameter[] = ['m'];

function integerSetting(name: GridParameter): boolean {
  return name === 'n' || name === 'm' || name === 'p' || name === 'blockSize';
}

/**
 * The rows of a point's samples: rowsPerFeature * n (rounded) for regression data (n is then its
 * features, the unknowns), n for the square generators.
 */
export function sampleRows(
  definition: Pick<StudyDefinition, 'generator' | 'sampler' | 'matrix'>,
  settings: Record<GridParameter, number>,
): number {
  if (definition.generator !== 'regression' || definition.sampler !== 'analysis' || definition.matrix) return settings.n;
  return Math.round(settings.rowsPerFeature * settings.n);
}

/** Checks every setting and limit; returns the points. Throws before anything is queued. */
export function validateStudy(definition: StudyDefinition, limits: StudyLimits): GridPoint[] {
  validateMetrics(definition.sampler, definition.metrics);
  for (const [name, values] of Object.entries(definition.grid) as [GridParameter, number[]][]) {
    if (values.length === 0)
      throw new InvalidParameterError(`grid.${name} is empty: give at least one value.`, { parameter: `grid.${name}` });
    if (new Set(values).size !== values.length)
      throw new InvalidParameterError(`grid.${name} repeats a value.`, { parameter: `grid.${name}` });
    if (definition.fixed[name] !== undefined)
      throw new InvalidParameterError(`${name} is given both as a fixed setting and as a grid axis.`, { parameter: `grid.${name}` });
  }
  if (!Number.isInteger(definition.samples) || definition.samples < 1)
    throw new InvalidParameterError(`samples must be an integer >= 1; got ${definition.samples}.`, { parameter: 'samples' });
  if (definition.samples > limits.maxPointSamples) {
    throw new ProblemTooLargeError(
      `samples = ${definition.samples} per grid point is above MAX_STUDY_POINT_SAMPLES = ${limits.maxPointSamples}.`,
      {
        parameter: 'samples',
        limit: limits.maxPointSamples,
      },
    );
  }
  const pointCount = Object.values(definition.grid).reduce((product, values) => product * values.length, 1);
  if (pointCount > limits.maxPoints) {
    throw new InvalidParameterError(`The grid has ${pointCount} points, above MAX_STUDY_POINTS = ${limits.maxPoints}.`, {
      parameter: 'grid',
      points: pointCount,
    });
  }
  const total = pointCount * definition.samples;
  if (total > limits.maxSamples) {
    throw new ProblemTooLargeError(
      `The study asks for ${total} sample-analyses (${pointCount} grid points x ${definition.samples} samples), above MAX_STUDY_SAMPLES = ${limits.maxSamples}.`,
      { parameter: 'samples', total, limit: limits.maxSamples },
    );
  }
  const points = expandGrid(definition);
  for (const point of points) checkPoint(definition, point, limits);
  return points;
}

function checkPoint(definition: StudyDefinition, point: GridPoint, limits: StudyLimits): void {
  const s = point.settings;
  const where = `grid point ${point.index} (${describeSettings(definition, point)})`;
  for (const name of GRID_PARAMETERS) {
    const value = s[name];
    if (!Number.isFinite(value)) throw new InvalidParameterError(`${name} must be a finite number at ${where}.`, { parameter: name });
    if (integerSetting(name) && (!Number.isInteger(value) || value < 1))
      throw new InvalidParameterError(`${name} must be an integer >= 1 at ${where}; got ${value}.`, { parameter: name });
  }
  if (s.std < 0 || s.sigma < 0)
    throw new InvalidParameterError(`std and sigma must be >= 0 at ${where}.`, { parameter: s.std < 0 ? 'std' : 'sigma' });
  if (definition.matrix) {
    const maxN = limits.maxNSparse ?? limits.maxN;
    if (s.n > maxN) {
      throw new ProblemTooLargeError(`Matrix '${definition.matrix.id}' has n = ${s.n}, above MAX_N_SPARSE = ${maxN}.`, {
        parameter: 'matrix',
        limit: maxN,
      });
    }
    if (s.m > s.n)
      throw new InvalidParameterError(`m = ${s.m} machines cannot share the n = ${s.n} rows of the matrix at ${where}.`, {
        parameter: 'm',
      });
    return;
  }
  if (s.n > limits.maxN)
    throw new ProblemTooLargeError(`n = ${s.n} at ${where} is above MAX_STUDY_N = ${limits.maxN}.`, { parameter: 'n', limit: limits.maxN });
  if (definition.sampler === 'subspace-pair') {
    if (2 * s.p > s.n)
      throw new InvalidParameterError(`Two p-dimensional subspaces of R^n need 2 p <= n: p = ${s.p}, n = ${s.n} at ${where}.`, {
        parameter: 'p',
      });
    return;
  }
  if (definition.generator === 'regression') {
    if (s.skew < 0) throw new InvalidParameterError(`skew must be >= 0 at ${where}.`, { parameter: 'skew' });
    if (s.rowsPerFeature < 1)
      throw new InvalidParameterError(`rowsPerFeature must be >= 1 (a tall system) at ${where}; got ${s.rowsPerFeature}.`, {
        parameter: 'rowsPerFeature',
      });
    const rows = sampleRows(definition, s);
    if (rows > limits.maxN) {
      throw new ProblemTooLargeError(`rows = rowsPerFeature * n = ${rows} at ${where} is above MAX_STUDY_N = ${limits.maxN}.`, {
        parameter: 'rowsPerFeature',
        limit: limits.maxN,
      });
    }
    if (s.m > rows) throw new InvalidParameterError(`m = ${s.m} machines cannot share the ${rows} rows at ${where}.`, { parameter: 'm' });
    return;
  }
  if (s.m > s.n) throw new InvalidParameterError(`m = ${s.m} machines cannot share n = ${s.n} rows at ${where}.`, { parameter: 'm' });
  if (s.n < 2) throw new InvalidParameterError(`n must be >= 2 at ${where}.`, { parameter: 'n' });
  if (definition.generator === 'gaussian' && s.std === 0)
    throw new InvalidParameterError(`std = 0 makes every gaussian matrix singular (${where}).`, { parameter: 'std' });
  // Both take blockSize from the settings (./sampler.ts).
  if ((definition.generator === 'structured-gaussian' || definition.generator === 'block-diagonal') && s.blockSize > s.n)
    throw new InvalidParameterError(`blockSize = ${s.blockSize} is larger than n = ${s.n} at ${where}.`, { parameter: 'blockSize' });
}

/** The cartesian product of the grid's axes, the last parameter of GRID_PARAMETERS varying fastest. */
export function expandGrid(definition: StudyDefinition): GridPoint[] {
  const axes = GRID_PARAMETERS.filter((name) => definition.grid[name] !== undefined);
  const base: Record<GridParameter, number> = { ...DEFAULTS, ...(definition.fixed as Record<GridParameter, number>) };
  let combos: Record<GridParameter, number>[] = [base];
  for (const name of axes) combos = combos.flatMap((combo) => definition.grid[name]!.map((value) => ({ ...combo, [name]: value })));
  return combos.map((settings, index) => ({ index, settings }));
}

/** Groups of points that differ only in their partition settings (m), in order of their first point. */
export function groupPoints(definition: StudyDefinition, points: readonly GridPoint[]): PointGroup[] {
  const groups = new Map<string, GridPoint[]>();
  for (const point of points) {
    const key =
      // Regression data is drawn machine by machine over the partition: no two values of m share it.
      definition.sampler === 'analysis' && definition.generator !== 'regression'
        ? GRID_PARAMETERS.filter((name) => !PARTITION_PARAMETERS.includes(name))
            .map((name) => point.settings[name])
            .join(',')
        : String(point.index);
    const members = groups.get(key) ?? [];
    members.push(point);
    groups.set(key, members);
  }
  return [...groups.values()].map((members, index) => ({ index, points: members }));
}

/**
 * Relative cost of one sample of a group, in units of one n = 120 analysis: the work is dominated
 * by O(n^3) factorizations, one per point of the group (plus one shared for kappa(A^T A)).
 */
function sampleCost(definition: StudyDefinition, group: PointGroup): number {
  if (definition.matrix) return storedMatrixSampleCost(definition.matrix) * group.points.length;
  const n = group.points[0].settings.n;
  if (definition.generator === 'regression' && definition.sampler === 'analysis') return regressionSampleCost(definition, group.points[0]);
  const perPoint = definition.sampler === 'analysis' ? (n / 120) ** 3 : (n / 120) ** 2 * 0.05;
  return Math.max(1e-3, perPoint * (group.points.length + 1));
}

/**
 * A regression sample's full analysis (the tall path: QR of A and of the stacked bases, O(N n^2), and
 * the m (m - 1) / 2 principal angles between machines of p = N / m rows), in units of one n = 120
 * analysis (~0.6 ms): roughly 30 units (~18 ms) at N = 400, n = 50, m = 16.
 */
function regressionSampleCost(definition: StudyDefinition, point: GridPoint): number {
  const { n, m } = point.settings;
  const rows = sampleRows(definition, point.settings);
  const p = Math.min(n, rows / m);
  return Math.max(1e-3, (20 * rows * n * n + 7 * m * m * p * p * p) / 120 ** 3);
}

/**
 * About this many n = 120 analyses per chunk (~0.25 s on one core at ~0.5-0.7 ms each). A worker loses
 * chunks / workers x f to the chunks' fixed cost f (BullMQ moving each to active and completed, one
 * Redis write of its values: 10-50 ms measured by bench/studies.ts on a loaded host) and about half a
 * chunk to the tail (the last chunks running while a worker has nothing left); the sum is smallest at
 * a chunk of sqrt(2 C f / workers), 0.2-0.3 s for Experiment 1 (C ~ 5 s of computation, 2 workers),
 * which makes 26 chunks of it.
 */
export const CHUNK_TARGET_COST = 400;

/** Split every group's samples into chunks of about CHUNK_TARGET_COST. */
export function chunkStudy(definition: StudyDefinition, groups: readonly PointGroup[]): StudyChunk[] {
  const chunks: StudyChunk[] = [];
  for (const group of groups) {
    const perChunk = Math.max(1, Math.min(definition.samples, Math.round(CHUNK_TARGET_COST / sampleCost(definition, group))));
    const count = Math.ceil(definition.samples / perChunk);
    // Even chunks: the last one is not a small remainder.
    const size = Math.ceil(definition.samples / count);
    for (let start = 0; start < definition.samples; start += size)
      chunks.push({ index: chunks.length, group: group.index, start, end: Math.min(definition.samples, start + size) });
  }
  return chunks;
}

/** "n = 120, m = 4, mean = 1": the settings the grid varies (all of them when it varies none). */
export function describeSettings(definition: StudyDefinition, point: GridPoint): string {
  const varied = GRID_PARAMETERS.filter((name) => definition.grid[name] !== undefined);
  return (varied.length > 0 ? varied : (['n'] as GridParameter[])).map((name) => `${name} = ${point.settings[name]}`).join(', ');
}
