/**
 * Study requests (the general form and the paper's three experiments as presets) and their
 * normalization into a StudyDefinition, with each preset's reference values and figures.
 *
 * The experiments (the paper's Section "Experiments"; docs/SPEC.md's last section has the settings
 * and the reference table): p_i = n / m, contiguous equal blocks, Gaussian entries.
 *  - Experiment 1: E[rho_APC](m) and E[rho_HBM] at n = 120, mean 0 and 1, m over the 16 divisors of
 *    120, T = 300 samples, samples with kappa(A^T A) > 1e7 dropped and counted.
 *  - Experiment 2: the same against n for m in {10, 20}, mean 1.
 *  - Experiment 3: tan^-2(theta_12) of two machines with p rows each as n grows, p in {1, 2, 3, 4, 6}
 *    (p = 1 has the closed form cos^2 theta ~ Beta(1/2, (n-1)/2) beside it): density and
 *    P(tan^-2 theta_12 > eps).
 * And one the paper motivates but does not run, federated regression (src/solvers/input/regression.ts):
 *  - regression-skew: E[rho_APC] and E[rho_HBM] as the machines' feature skew grows, N = 400 noisy
 *    samples (sigma 0.1) of n = 50 features over m = 16 machines of 25 rows each (p_i < n, so that
 *    each machine's solution set is an affine subspace and kappa(S) is not trivially 1).
 */
import type { GridParameter, PartitionFamily, StudyDefinition, StudyGenerator, StudySampler } from './definition.js';
import { parseMetrics } from './metrics.js';
import type { HistogramScale } from './statistics.js';
import { checkStoredMatrixRequest, type StoredMatrixReference, type StudyMatrix } from './storedMatrix.js';

export const STUDY_PRESETS = ['experiment-1', 'experiment-2', 'experiment-3', 'regression-skew'] as const;
export type StudyPreset = (typeof STUDY_PRESETS)[number];

export type GridAxes = Partial<Record<GridParameter, number[]>>;

export interface GeneralStudyRequest {
  sampler?: StudySampler;
  generator?: StudyGenerator;
  /** A matrix stored by POST /v1/matrices instead of a generator (./storedMatrix.ts: only m and the partition vary). */
  matrix?: StoredMatrixReference;
  /** Settings the grid does not vary (defaults: n 120, m 1, mean 0, std 1, sigma 1, eps 0.1, blockSize 1, p 1, skew 0, rowsPerFeature 4). */
  settings?: Partial<Record<GridParameter, number>>;
  grid: GridAxes;
  partition?: { family?: PartitionFamily; seed?: number };
  samples: number;
  seed?: number;
  metrics: string[];
  dropKappaAtAAbove?: number | null;
  thresholds?: number[];
  histogramBins?: number;
  /** The histogram's bins: equal widths from 0 (default) or equal ratios (`log`, for a metric spread over decades). */
  histogramScale?: HistogramScale;
  /** The client's own string pairs, kept with the study (they change nothing in it). */
  labels?: Record<string, string>;
}

export interface PresetStudyRequest {
  preset: StudyPreset;
  /** Samples per grid point (default: the paper's). */
  samples?: number;
  seed?: number;
  /** Replace some of the preset's axes (a subset of its points, say). */
  grid?: GridAxes;
  labels?: Record<string, string>;
}

export type StudyRequest = GeneralStudyRequest | PresetStudyRequest;

/** A published value a preset's result is checked against. */
export interface ReferenceValue {
  settings: Partial<Record<GridParameter, number>>;
  metric: string;
  value: number;
}

export const FIGURE_KINDS = ['curves', 'density', 'exceedance'] as const;

/** A figure of a study's results: what to draw; src/api/figures renders it as SVG. */
export interface FigureSpec {
  name: string;
  title: string;
  /** curves: each metric's mean against `x` with its 95% band; density: each point's histogram; exceedance: P(value > eps) against `x`. */
  kind: (typeof FIGURE_KINDS)[number];
  x: GridParameter;
  /** One panel per value of this setting (null: one panel). */
  panel: GridParameter | null;
  /** density: one curve per value of this setting. */
  series: GridParameter | null;
  metrics: string[];
  logX: boolean;
  logY: boolean;
}

export interface NormalizedStudy {
  preset: StudyPreset | null;
  definition: StudyDefinition;
  reference: ReferenceValue[] | null;
  figures: FigureSpec[];
}

const DIVISORS_OF_120 = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 60, 120];
const APC = 'rates.apc.rate';
const HBM = 'rates.dhbm.rate';

/** docs/SPEC.md: E[rho_APC](m) and E[rho_HBM] at n = 120 (NumPy, 300 samples, kappa(A^T A) <= 1e7). */
const EXPERIMENT_1_REFERENCE: ReferenceValue[] = [
  ...[
    [2, 0.9883, 0.9884],
    [4, 0.9921, 0.9932],
    [6, 0.9929, 0.9948],
    [10, 0.9934, 0.996],
    [12, 0.9935, 0.9964],
    [20, 0.9937, 0.9972],
    [30, 0.9938, 0.9976],
    [60, 0.9939, 0.9982],
    [120, 0.994, 0.9985],
  ].flatMap(([m, mean0, mean1]) => [
    { settings: { mean: 0, m }, metric: APC, value: mean0 },
    { settings: { mean: 1, m }, metric: APC, value: mean1 },
  ]),
  // E[rho_HBM] does not depend on m: checked at every m of the table (the same matrices).
  ...[2, 4, 6, 10, 12, 20, 30, 60, 120].flatMap((m) => [
    { settings: { mean: 0, m }, metric: HBM, value: 0.9941 },
    { settings: { mean: 1, m }, metric: HBM, value: 0.9985 },
  ]),
];

function preset(name: StudyPreset): { request: GeneralStudyRequest; reference: ReferenceValue[] | null; figures: FigureSpec[] } {
  switch (name) {
    case 'experiment-1':
      return {
        request: {
          generator: 'gaussian',
          settings: { n: 120, std: 1 },
          grid: { mean: [0, 1], m: DIVISORS_OF_120 },
          samples: 300,
          metrics: [APC, HBM],
          dropKappaAtAAbove: 1e7,
        },
        reference: EXPERIMENT_1_REFERENCE,
        figures: [
          {
            name: 'figure-1',
            title: 'Experiment 1: E[ρ_APC] and E[ρ_HBM] against m (n = 120)',
            kind: 'curves',
            x: 'm',
            panel: 'mean',
            series: null,
            metrics: [APC, HBM],
            logX: true,
            logY: false,
          },
        ],
      };
    case 'experiment-2':
      return {
        request: {
          generator: 'gaussian',
          settings: { mean: 1, std: 1 },
          grid: { m: [10, 20], n: [40, 80, 120, 160, 200] },
          samples: 300,
          metrics: [APC, HBM],
          dropKappaAtAAbove: 1e7,
        },
        reference: null,
        figures: [
          {
            name: 'figure-2',
            title: 'Experiment 2: E[ρ_APC] and E[ρ_HBM] against n (mean 1)',
            kind: 'curves',
            x: 'n',
            panel: 'm',
            series: null,
            metrics: [APC, HBM],
            logX: false,
            logY: false,
          },
        ],
      };
    case 'experiment-3':
      return {
        request: {
          sampler: 'subspace-pair',
          settings: { mean: 0, std: 1 },
          grid: { p: [1, 2, 3, 4, 6], n: [16, 32, 64, 128, 256] },
          samples: 2000,
          metrics: ['tanInvSqTheta'],
          thresholds: [0.01, 0.05, 0.1, 0.5],
          histogramBins: 40,
          // tan^-2 theta spans decades: equal-width bins put most of n = 256's samples in the first (Figure 3's log axis).
          histogramScale: 'log',
        },
        reference: null,
        figures: [
          {
            name: 'figure-3',
            title: 'Experiment 3: density of tan⁻²θ₁₂ as n grows (two machines, p rows each)',
            kind: 'density',
            x: 'n',
            panel: 'p',
            series: 'n',
            metrics: ['tanInvSqTheta'],
            logX: true,
            logY: false,
          },
          {
            name: 'figure-4',
            title: 'Experiment 3: P(tan⁻²θ₁₂ > ε) against n',
            kind: 'exceedance',
            x: 'n',
            panel: 'p',
            series: null,
            metrics: ['tanInvSqTheta'],
            logX: true,
            logY: true,
          },
        ],
      };
    case 'regression-skew':
      return {
        request: {
          generator: 'regression',
          settings: { n: 50, rowsPerFeature: 8, m: 16, mean: 0, sigma: 0.1 },
          grid: { skew: [0, 0.5, 1, 2, 4, 8] },
          samples: 100,
          metrics: [
            APC,
            HBM,
            'conditioning.kappaS',
            'conditioning.kappaAtA',
            'consistency.leastSquaresResidual',
            'consistency.weightedDistance',
          ],
        },
        reference: null,
        figures: [
          {
            name: 'figure-1',
            title: 'Regression: E[ρ_APC] and E[ρ_HBM] against skew',
            kind: 'curves',
            x: 'skew',
            panel: null,
            series: null,
            metrics: [APC, HBM],
            logX: false,
            logY: false,
          },
          {
            name: 'figure-2',
            title: 'Regression: E[κ(S)] and E[κ(AᵀA)] against skew',
            kind: 'curves',
            x: 'skew',
            panel: null,
            series: null,
            metrics: ['conditioning.kappaS', 'conditioning.kappaAtA'],
            logX: false,
            logY: true,
          },
        ],
      };
  }
}

/**
 * The definition a request stands for (metrics parsed: an unknown one throws InvalidParameterError, 422).
 * `matrix`: what the service read of the matrix a general request names (its n and entries), kept
 * with the study so that every process derives the same plan; required when the request names one.
 */
export function normalizeStudyRequest(request: StudyRequest, matrix: StudyMatrix | null = null): NormalizedStudy {
  if ('preset' in request) {
    const base = preset(request.preset);
    const general: GeneralStudyRequest = {
      ...base.request,
      samples: request.samples ?? base.request.samples,
      seed: request.seed,
      grid: { ...base.request.grid, ...request.grid },
    };
    return { preset: request.preset, definition: definitionOf(general), reference: base.reference, figures: base.figures };
  }
  return { preset: null, definition: definitionOf(request, matrix), reference: null, figures: generalFigures(request) };
}

function definitionOf(request: GeneralStudyRequest, matrix: StudyMatrix | null = null): StudyDefinition {
  const sampler = request.sampler ?? 'analysis';
  const fixed = { ...request.settings };
  if (request.matrix) {
    if (matrix?.id !== request.matrix.id) throw new RangeError(`normalizeStudyRequest needs the document of matrix '${request.matrix.id}'`);
    checkStoredMatrixRequest(request, matrix);
    fixed.n = matrix.n;
  }
  // A setting the grid varies is not also fixed (a preset's axis replaced by a request's).
  for (const name of Object.keys(request.grid) as GridParameter[]) delete fixed[name];
  return {
    sampler,
    generator: request.generator ?? 'gaussian',
    fixed,
    grid: request.grid,
    partition: { family: request.partition?.family ?? 'contiguous', seed: request.partition?.seed ?? 1 },
    samples: request.samples,
    seed: request.seed ?? 1,
    metrics: parseMetrics(sampler, request.metrics),
    dropKappaAtAAbove: request.dropKappaAtAAbove ?? null,
    thresholds: request.thresholds ?? [],
    histogramBins: request.histogramBins ?? 0,
    ...(request.histogramScale === 'log' ? { histogramScale: 'log' as const } : {}),
    ...(request.matrix && matrix ? { matrix } : {}),
  };
}

/** A general study's figure: its value metrics against its first numeric axis with more than one value. */
function generalFigures(request: GeneralStudyRequest): FigureSpec[] {
  const axes = (Object.keys(request.grid) as GridParameter[]).filter((name) => (request.grid[name]?.length ?? 0) > 1);
  if (axes.length === 0) return [];
  const x = axes[axes.length - 1];
  return [
    {
      name: 'figure-1',
      title: `Mean of each metric against ${x}`,
      kind: 'curves',
      x,
      panel: axes.length > 1 ? axes[0] : null,
      series: null,
      metrics: request.metrics,
      logX: false,
      logY: false,
    },
  ];
}
