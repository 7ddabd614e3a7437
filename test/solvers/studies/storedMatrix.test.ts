/**
 * Studies over a given matrix (src/solvers/studies/storedMatrix.ts): what the grid may vary, the
 * deterministic partition families, the plan (n is the matrix's), seeded random partitions, and each
 * sample's values against the analysis of the same partition computed directly.
 */
import { createReadStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { nnzOf, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { readMatrixMarketStream } from '../../../src/solvers/sparse/matrixMarketStream.js';
import { planStudy } from '../../../src/solvers/studies/plan.js';
import type { GeneralStudyRequest } from '../../../src/solvers/studies/presets.js';
import { samplePartition } from '../../../src/solvers/studies/sampler.js';
import type { StudyMatrix } from '../../../src/solvers/studies/storedMatrix.js';
import { computeStoredMatrixSample } from '../../../src/solvers/studies/storedMatrixSampler.js';

const LIMITS = { maxSamples: 1e6, maxPointSamples: 1e4, maxPoints: 1000, maxN: 100, maxNSparse: 5000 };
const BFWA62 = fileURLToPath(new URL('../../reference/matrices/bfwa62.mtx', import.meta.url));

let A: CsrMatrix;
let matrix: StudyMatrix;
const request = (extra: Partial<GeneralStudyRequest> = {}): GeneralStudyRequest => ({
  matrix: { format: 'stored', id: matrix.id },
  grid: { m: [2, 5] },
  partition: { family: 'random', seed: 3 },
  samples: 4,
  metrics: ['rates.apc.rate', 'conditioning.kappaS', 'heterogeneity.thetaH', 'recommendation.algorithm'],
  ...extra,
});

beforeAll(async () => {
  A = (await readMatrixMarketStream(createReadStream(BFWA62), { maxN: 1e4, maxNnz: 1e6 })).matrix;
  matrix = { id: '01TESTMATRIX', n: A.rows, nnz: nnzOf(A) };
});

/** The InvalidParameterError (422) `plan` throws, by its `parameter`. */
function refusedParameter(plan: () => unknown): unknown {
  try {
    plan();
  } catch (error) {
    return (error as { code?: string; details?: { parameter?: unknown } }).code === 'invalid-parameter'
      ? (error as { details: { parameter?: unknown } }).details.parameter
      : error;
  }
  return 'accepted';
}

describe('a study over a given matrix', () => {
  it('plans one group of points over m with n the matrix n, above MAX_STUDY_N (a CSR analysis, limited by MAX_N_SPARSE)', () => {
    const plan = planStudy(request(), { ...LIMITS, maxN: 10 }, matrix);
    expect(plan.points.map((point) => [point.settings.n, point.settings.m])).toEqual([
      [62, 2],
      [62, 5],
    ]);
    expect(plan.groups).toHaveLength(1);
    expect(plan.definition.matrix).toEqual(matrix);
    expect(plan.chunks.reduce((total, chunk) => total + chunk.end - chunk.start, 0)).toBe(4);
    expect(() => planStudy(request(), { ...LIMITS, maxNSparse: 50 }, matrix)).toThrow(/MAX_N_SPARSE/);
    // The plan needs the matrix's document: a request naming one is never planned without it.
    expect(() => planStudy(request(), LIMITS)).toThrow(RangeError);
  });

  it('refuses every setting but m with a 422 naming it, and more than one sample of a deterministic partition', () => {
    expect(refusedParameter(() => planStudy(request({ grid: { m: [2], n: [62, 100] } }), LIMITS, matrix))).toBe('grid.n');
    expect(refusedParameter(() => planStudy(request({ grid: { m: [2], mean: [0, 1] } }), LIMITS, matrix))).toBe('grid.mean');
    expect(refusedParameter(() => planStudy(request({ settings: { sigma: 2 } }), LIMITS, matrix))).toBe('settings.sigma');
    expect(refusedParameter(() => planStudy(request({ settings: { n: 62 } }), LIMITS, matrix))).toBe('settings.n');
    expect(refusedParameter(() => planStudy(request({ generator: 'gaussian' }), LIMITS, matrix))).toBe('generator');
    expect(refusedParameter(() => planStudy(request({ sampler: 'subspace-pair' }), LIMITS, matrix))).toBe('sampler');
    for (const family of ['contiguous', 'round-robin'] as const) {
      expect(refusedParameter(() => planStudy(request({ partition: { family } }), LIMITS, matrix))).toBe('samples');
      expect(refusedParameter(() => planStudy(request({ partition: { family }, samples: 1 }), LIMITS, matrix))).toBe('accepted');
    }
    expect(refusedParameter(() => planStudy(request({ partition: undefined, samples: 1 }), LIMITS, matrix))).toBe('accepted');
    expect(refusedParameter(() => planStudy(request({ grid: { m: [63] } }), LIMITS, matrix))).toBe('m');
    expect(refusedParameter(() => planStudy(request({ grid: {}, settings: { m: 4 } }), LIMITS, matrix))).toBe('accepted');
  });

  it('draws a seeded random partition per sample (contiguous sizes) and each value is the analysis of that partition', () => {
    const plan = planStudy(request(), LIMITS, matrix);
    const [group] = plan.groups;
    const seen = new Set<string>();
    for (let sample = 0; sample < 4; sample++) {
      const outcomes = computeStoredMatrixSample(plan.definition, group, sample, A);
      group.points.forEach((point, k) => {
        const partition = samplePartition(plan.definition, point, sample);
        expect(samplePartition(plan.definition, point, sample).assignment).toEqual(partition.assignment);
        expect([...partition.sizes].sort()).toEqual(
          [...samplePartition({ ...plan.definition, partition: { family: 'contiguous', seed: 1 } }, point, 0).sizes].sort(),
        );
        seen.add(Array.from(partition.assignment).join(','));
        const analysis = analyze(buildDistributedSystem(createProblem({ A, partition })));
        expect(outcomes[k].status, outcomes[k].reason ?? '').toBe('kept');
        expect(outcomes[k].values).toEqual([
          analysis.rates.apc.rate,
          analysis.conditioning.kappaS,
          analysis.heterogeneity.thetaH,
          analysis.recommendation.algorithm === 'apc' ? 1 : 0,
        ]);
      });
    }
    expect(seen.size).toBe(8);
  });

  it('drops a sample whose kappa(A^T A) is above the limit, and records a failing one with its reason', () => {
    const plan = planStudy(request({ dropKappaAtAAbove: 10 }), LIMITS, matrix);
    const dropped = computeStoredMatrixSample(plan.definition, plan.groups[0], 0, A);
    expect(dropped.map((outcome) => outcome.status)).toEqual(['dropped', 'dropped']);
    expect(dropped[0].reason).toBe('kappa(A^T A) > 10');
    const singular: CsrMatrix = { ...A, values: new Float64Array(A.values.length) };
    const failed = computeStoredMatrixSample(planStudy(request(), LIMITS, matrix).definition, plan.groups[0], 0, singular);
    expect(failed.map((outcome) => outcome.status)).toEqual(['failed', 'failed']);
    expect(failed[0].reason).toBeTruthy();
  });
});
