/**
 * The metrics a study aggregates. A metric names a scalar field of the analysis by its path
 * (`rates.apc.rate`, `heterogeneity.thetaH`, `conditioning.kappaS`, ...) or, for the
 * 'subspace-pair' sampler, a quantity of the principal angle theta_12 (SUBSPACE_PAIR_METRICS).
 * Numbers are aggregated as values; a boolean or string field is aggregated as the share of samples
 * equal to one value (`recommendation.algorithm` is the share of 'apc'; `path=value` picks another).
 *
 * Paths are checked against the shape of a real analysis (a small one, computed once), so every
 * scalar field of `Analysis` is accepted and nothing else.
 */
import { analyze } from '../analysis/analyze.js';
import { InvalidParameterError } from '../errors.js';
import { buildDistributedSystem } from '../distributed/distributedSystem.js';
import { createProblem } from '../input/createProblem.js';
import { generateMatrix } from '../input/generators.js';
import { regressionData } from '../input/regression.js';
import type { StudySampler } from './vocabulary.js';

export interface MetricSpec {
  /** As requested: the path, with `=value` for a share of a string value. */
  name: string;
  path: string;
  kind: 'value' | 'share';
  /** For a share: the value counted ('true' for booleans). */
  of: string | null;
}

/** Quantities of the smallest principal angle theta_12 between the two subspaces of a 'subspace-pair' sample. */
export const SUBSPACE_PAIR_METRICS = ['theta', 'tanInvSqTheta', 'cosSqTheta'] as const;

/** The value a string field is counted for when the metric does not say (`recommendation.algorithm`: APC's share). */
const DEFAULT_SHARE_OF: Record<string, string> = { 'recommendation.algorithm': 'apc', 'recommendation.exact.faster': 'apc' };

type LeafKind = 'number' | 'boolean' | 'string';
let analysisLeaves: Map<string, LeafKind> | null = null;

/** Every scalar field of an analysis, by path (arrays such as theta and phi are not scalars). */
export function analysisScalarPaths(): ReadonlyMap<string, LeafKind> {
  if (analysisLeaves) return analysisLeaves;
  const A = generateMatrix({ generator: 'gaussian', n: 6, mean: 0, std: 1, seed: 1 });
  const analysis = analyze(buildDistributedSystem(createProblem({ A, partition: { machines: 2 } })));
  // A tall, inconsistent system's analysis has more fields (consistency, the least-squares note): regression studies read them.
  const tall = regressionData({ rows: 12, n: 4, machines: 2, sigma: 0.1, seed: 1 });
  const tallAnalysis = analyze(buildDistributedSystem(createProblem({ A: tall.A, rhs: tall.b, partition: { machines: 2 } })));
  const leaves = new Map<string, LeafKind>();
  const walk = (value: unknown, path: string): void => {
    // The square analysis' kind stands; the tall one only adds fields (one null there is not a number).
    if (Array.isArray(value) || leaves.has(path)) return;
    if (value === null || typeof value === 'number') leaves.set(path, 'number');
    else if (typeof value === 'boolean') leaves.set(path, 'boolean');
    else if (typeof value === 'string') leaves.set(path, 'string');
    else if (typeof value === 'object') for (const [key, child] of Object.entries(value)) walk(child, path ? `${path}.${key}` : key);
  };
  walk(analysis, '');
  walk(tallAnalysis, '');
  for (const structural of ['n', 'm', 'rows']) leaves.delete(structural);
  analysisLeaves = leaves;
  return leaves;
}

/** Parse and check requested metric names; throws InvalidParameterError (422) naming an unknown one. */
export function parseMetrics(sampler: StudySampler, names: readonly string[]): MetricSpec[] {
  if (names.length === 0) throw new InvalidParameterError('metrics is empty: name at least one metric.', { parameter: 'metrics' });
  if (new Set(names).size !== names.length) throw new InvalidParameterError('metrics repeats a metric.', { parameter: 'metrics' });
  return names.map((name) => parseMetric(sampler, name));
}

function parseMetric(sampler: StudySampler, name: string): MetricSpec {
  const [path, of = null] = name.split('=', 2) as [string, string | undefined];
  if (sampler === 'subspace-pair') {
    if (!(SUBSPACE_PAIR_METRICS as readonly string[]).includes(path) || of !== null) {
      throw new InvalidParameterError(
        `Unknown metric '${name}' for the subspace-pair sampler; expected one of ${SUBSPACE_PAIR_METRICS.join(', ')}.`,
        {
          parameter: 'metrics',
          metric: name,
        },
      );
    }
    return { name, path, kind: 'value', of: null };
  }
  const kind = analysisScalarPaths().get(path);
  if (kind === undefined) {
    throw new InvalidParameterError(
      `Unknown metric '${name}': not a scalar field of the analysis (e.g. rates.apc.rate, conditioning.kappaS, heterogeneity.thetaH, ` +
        'recommendation.algorithm).',
      { parameter: 'metrics', metric: name },
    );
  }
  if (kind === 'number') {
    if (of !== null)
      throw new InvalidParameterError(`Metric '${name}': ${path} is a number; '=value' is for string and boolean fields.`, {
        parameter: 'metrics',
        metric: name,
      });
    return { name, path, kind: 'value', of: null };
  }
  const counted = of ?? (kind === 'boolean' ? 'true' : DEFAULT_SHARE_OF[path]);
  if (counted === undefined) {
    throw new InvalidParameterError(`Metric '${name}': ${path} is a string; say which value to count, e.g. '${path}=<value>'.`, {
      parameter: 'metrics',
      metric: name,
    });
  }
  if (kind === 'boolean' && counted !== 'true' && counted !== 'false')
    throw new InvalidParameterError(`Metric '${name}': ${path} is true or false.`, { parameter: 'metrics', metric: name });
  return { name, path, kind: 'share', of: counted };
}

/** Re-check already parsed metrics (a definition built in code rather than parsed from a request). */
export function validateMetrics(sampler: StudySampler, metrics: readonly MetricSpec[]): void {
  parseMetrics(
    sampler,
    metrics.map((metric) => metric.name),
  );
}

/** The field at `path` of `source`, as a number: a value, 1/0 for a share, NaN when null (undefined for this sample). */
export function metricValue(source: unknown, metric: MetricSpec): number {
  let value: unknown = source;
  for (const key of metric.path.split('.'))
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  if (metric.kind === 'share') return String(value) === metric.of ? 1 : 0;
  return typeof value === 'number' ? value : Number.NaN;
}
