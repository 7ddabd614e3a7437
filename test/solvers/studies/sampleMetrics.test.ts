/**
 * The cheap path of a study sample (kappa(S), kappa(A^T A), the rates and the recommendation from two
 * extreme singular value computations) against the full analysis, on every partition family and on
 * the backends available; and the principal angle of a subspace pair against the full analysis' theta_12.
 */
import { describe, expect, it } from 'vitest';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import { ALGORITHM_IDS } from '../../../src/solvers/algorithms/registry.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { generateMatrix } from '../../../src/solvers/input/generators.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { normalizeStudyRequest } from '../../../src/solvers/studies/presets.js';
import { conditioningAnalysis, matrixConditioning, sExtremes, smallestPrincipalAngle } from '../../../src/solvers/studies/sampleMetrics.js';
import { samplePartition } from '../../../src/solvers/studies/sampler.js';
import { expandGrid, type StudyDefinition } from '../../../src/solvers/studies/definition.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { householderQrWork } from '../../../src/solvers/linalg/householderQr.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { singularValueRange } from '../../../src/solvers/linalg/singularValues.js';
import { describeEachBackend } from '../../support/backends.js';

function definitionFor(family: 'contiguous' | 'round-robin' | 'random'): StudyDefinition {
  return normalizeStudyRequest({
    grid: { m: [1, 3, 10, 40] },
    samples: 2,
    metrics: ['rates.apc.rate'],
    partition: { family, seed: 5 },
    settings: { n: 40 },
  }).definition;
}

describeEachBackend('cheap study path', () => {
  {
    it('equals the full analysis: kappa(S), lambda(S), kappa(A^T A), every rate and the recommendation', () => {
      for (const family of ['contiguous', 'round-robin', 'random'] as const) {
        const definition = definitionFor(family);
        for (const mean of [0, 1]) {
          const A = generateMatrix({ generator: 'gaussian', n: 40, mean, std: 1, seed: 11 + mean });
          const matrix = matrixConditioning(selectedKernels(), A);
          for (const point of expandGrid(definition)) {
            const partition = samplePartition(definition, point, 1);
            const cheap = conditioningAnalysis(partition.m, matrix, sExtremes(selectedKernels(), A, partition));
            const full = analyze(buildDistributedSystem(createProblem({ A, partition })));
            const where = `${family}, mean ${mean}, m ${point.settings.m}`;
            for (const key of ['kappaS', 'lambdaMinS', 'lambdaMaxS', 'kappaAtA', 'L', 'mu'] as const)
              expect(Math.abs(cheap.conditioning[key] - full.conditioning[key]) / full.conditioning[key], `${where}: ${key}`).toBeLessThan(
                1e-9,
              );
            for (const id of ALGORITHM_IDS)
              expect(Math.abs(cheap.rates[id].rate - full.rates[id].rate), `${where}: ${id}`).toBeLessThan(1e-10);
            expect(cheap.recommendation.algorithm).toBe(full.recommendation.algorithm);
          }
        }
      }
    });
  }
});

describeEachBackend('cheap study path against its previous construction', () => {
  it('lambda(S) equals the squared extreme singular values of the explicitly built Q (Householder bases), to 1e-12; m = 1 gives S = I', () => {
    const definition = definitionFor('random');
    for (const mean of [0, 1]) {
      const A = generateMatrix({ generator: 'gaussian', n: 40, mean, std: 1, seed: 21 + mean });
      for (const point of expandGrid(definition)) {
        const partition = samplePartition(definition, point, 2);
        const basis = new Float64Array(40 * 40);
        let row = 0;
        for (const rows of partition.rowsOf) {
          const block = new Float64Array(rows.length * 40);
          rows.forEach((r, k) => block.set(A.data.subarray(r * 40, r * 40 + 40), k * 40));
          basis.set(runSync(householderQrWork(selectedKernels(), block, rows.length, 40)).q, row * 40);
          row += rows.length;
        }
        const reference = singularValueRange(basis, 40, 40);
        const cheap = sExtremes(selectedKernels(), A, partition);
        const where = `mean ${mean}, m ${point.settings.m}`;
        expect(Math.abs(cheap.lambdaMaxS - reference.largest ** 2) / reference.largest ** 2, where).toBeLessThan(1e-12);
        expect(Math.abs(cheap.lambdaMinS - reference.smallest ** 2) / reference.smallest ** 2, where).toBeLessThan(1e-12);
        if (point.settings.m === 1) expect(cheap).toEqual({ lambdaMinS: 1, lambdaMaxS: 1 });
      }
      const conditioning = matrixConditioning(selectedKernels(), A);
      const sigma = singularValueRange(A.data, 40, 40);
      expect(Math.abs(conditioning.kappaAtA - (sigma.largest / sigma.smallest) ** 2) / conditioning.kappaAtA).toBeLessThan(1e-12);
    }
  });
});

describe('partition families', () => {
  it('contiguous, round-robin and random give every machine n/m rows; random is seeded', () => {
    const random = definitionFor('random');
    const point = expandGrid(random)[2]; // m = 10
    const a = samplePartition(random, point, 3);
    expect(a.sizes).toEqual(new Array(10).fill(4));
    expect(Array.from(samplePartition(random, point, 3).assignment)).toEqual(Array.from(a.assignment));
    expect(Array.from(samplePartition(random, point, 4).assignment)).not.toEqual(Array.from(a.assignment));
    const robin = samplePartition(definitionFor('round-robin'), point, 0);
    expect(Array.from(robin.rowsOf[3])).toEqual([3, 13, 23, 33]);
  });
});

describe('subspace pair', () => {
  it('theta_12 equals the full analysis of the two blocks stacked with a complement (principal angle of machines 0 and 1)', () => {
    const n = 12;
    const p = 3;
    const random = new SeededRandom(9);
    const first = random.fillNormal(new Float64Array(p * n));
    const second = random.fillNormal(new Float64Array(p * n));
    const rest = random.fillNormal(new Float64Array((n - 2 * p) * n));
    const rows: number[][] = [];
    for (const block of [first, second, rest])
      for (let k = 0; k < block.length / n; k++) rows.push(Array.from(block.subarray(k * n, k * n + n)));
    const analysis = analyze(buildDistributedSystem(createProblem({ A: fromRows(rows), partition: { sizes: [p, p, n - 2 * p] } })));
    expect(Math.abs(smallestPrincipalAngle(selectedKernels(), first, second, p, n) - analysis.heterogeneity.theta[0][1])).toBeLessThan(
      1e-12,
    );
  });
});
