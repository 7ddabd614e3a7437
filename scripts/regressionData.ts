/**
 * Prints, as JSON, the regression data that scripts/regressionReference.py checks with NumPy: the
 * data a regression job generates (the job route: generateSystem on the job's partition) and one
 * sample of a small regression study (the study route: sampleRegression). Same specs as
 * test/api/regression.test.ts and test/solvers/studies/regression.test.ts.
 *
 *   npx tsx scripts/regressionData.ts > /tmp/regression.json
 */
import { generateSystem } from '../src/solvers/input/generators.js';
import { buildPartition } from '../src/solvers/input/partition.js';
import { planStudy } from '../src/solvers/studies/plan.js';
import type { GeneralStudyRequest } from '../src/solvers/studies/presets.js';
import { sampleRegression } from '../src/solvers/studies/sampler.js';

export const JOB_SPEC = { generator: 'regression', rows: 400, n: 20, skew: 2, sigma: 0.1, seed: 26 } as const;
export const JOB_MACHINES = 4;

export const STUDY_REQUEST: GeneralStudyRequest = {
  generator: 'regression',
  settings: { n: 12, rowsPerFeature: 2, m: 4, sigma: 0.1 },
  grid: { skew: [0, 4] },
  samples: 3,
  metrics: ['rates.apc.rate', 'rates.dhbm.rate', 'conditioning.kappaS', 'conditioning.kappaAtA', 'consistency.leastSquaresResidual'],
};

function exported(A: { rows: number; cols: number; data: Float64Array }, b: Float64Array, assignment: Int32Array): unknown {
  const rows = Array.from({ length: A.rows }, (_, k) => Array.from(A.data.subarray(k * A.cols, (k + 1) * A.cols)));
  return { A: rows, b: Array.from(b), assignment: Array.from(assignment) };
}

function main(): void {
  const partition = buildPartition({ machines: JOB_MACHINES }, JOB_SPEC.rows);
  const job = generateSystem(JOB_SPEC, undefined, partition);
  const plan = planStudy(STUDY_REQUEST, { maxSamples: 1000, maxPointSamples: 1000, maxPoints: 100, maxN: 1000 });
  // Point 1 (skew 4), sample 2.
  const sample = sampleRegression(plan.definition, plan.points[1], 2);
  process.stdout.write(
    JSON.stringify({
      job: { spec: JOB_SPEC, machines: JOB_MACHINES, ...(exported(job.A, job.b!, partition.assignment) as object) },
      study: { request: STUDY_REQUEST, point: 1, sample: 2, ...(exported(sample.A, sample.b, sample.partition.assignment) as object) },
    }),
  );
}

main();
