/**
 * One sample of a study over a given matrix (./storedMatrix.ts): at every point of the group (the
 * values of m), the sample's partition (./sampler.ts samplePartition: seeded by the study's
 * partition seed, m and the sample's index, so any chunk, worker or retry draws the same one), then
 * the analysis of the matrix on CSR over that partition, exactly as an analyze job on the stored
 * matrix computes it (createProblem, buildDistributedSystem, analyze). A point that throws is a
 * failed sample with its reason; a kappa(A^T A) above the study's limit drops it.
 */
import { analyze } from '../analysis/analyze.js';
import { buildDistributedSystem } from '../distributed/distributedSystem.js';
import { createProblem } from '../input/createProblem.js';
import type { CsrMatrix } from '../sparse/csr.js';
import type { PointGroup, StudyDefinition } from './definition.js';
import { metricValue } from './metrics.js';
import { samplePartition, type SampleOutcome } from './sampler.js';

export function computeStoredMatrixSample(definition: StudyDefinition, group: PointGroup, sample: number, A: CsrMatrix): SampleOutcome[] {
  const metrics = definition.metrics;
  const none = (): number[] => new Array<number>(metrics.length).fill(Number.NaN);
  return group.points.map((point): SampleOutcome => {
    try {
      const partition = samplePartition(definition, point, sample);
      const analysis = analyze(buildDistributedSystem(createProblem({ A, partition })));
      const limit = definition.dropKappaAtAAbove;
      if (limit !== null && !(analysis.conditioning.kappaAtA <= limit))
        return { status: 'dropped', reason: `kappa(A^T A) > ${limit}`, values: none() };
      return { status: 'kept', reason: null, values: metrics.map((metric) => metricValue(analysis, metric)) };
    } catch (error) {
      return { status: 'failed', reason: error instanceof Error ? error.message : String(error), values: none() };
    }
  });
}
