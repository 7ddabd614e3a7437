/**
 * Prints, as JSON, the advisor's 'refined' candidate on the shuffled check cases of
 * test/solvers/partitioning/shuffledCases.json, on each backend (the TypeScript one and, when the addon
 * is built, the native one, whose METIS candidate may change the start): the start (the best other
 * candidate within the imbalance), both assignments and both kappa(S). scripts/refinedPartitionReference.py
 * computes kappa(S) of the same assignments with NumPy.
 *
 *   npx tsx scripts/refinedPartitions.ts > test/solvers/partitioning/refinedPartitions.json
 *   npx prettier --write test/solvers/partitioning/refinedPartitions.json
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSync } from '../src/solvers/cooperative.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { nativeBlas, useBackend, type BackendName } from '../src/solvers/linalg/backend.js';
import { adviseWork } from '../src/solvers/partitioning/advisor.js';
import { shuffledCaseMatrix, type ShuffledCase } from '../test/solvers/partitioning/cases.js';

const shuffled = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'test', 'solvers', 'partitioning', 'shuffledCases.json'), 'utf8'),
) as {
  cases: ShuffledCase[];
};
const backends: BackendName[] = nativeBlas() === null ? ['typescript'] : ['typescript', 'native'];
const cases = [];
for (const backend of backends) {
  useBackend(backend);
  for (const testCase of shuffled.cases) {
    const advice = runSync(adviseWork(createProblem({ A: shuffledCaseMatrix(testCase), partition: { machines: testCase.m } })));
    const refined = advice.candidates.find((c) => c.strategy === 'refined')!;
    let start = advice.candidates[0];
    for (const c of advice.candidates) if (c.strategy !== 'refined' && c.withinImbalance && c.kappaS! < start.kappaS!) start = c;
    cases.push({
      backend,
      name: testCase.name,
      m: testCase.m,
      start: start.strategy,
      startAssignment: start.assignment,
      startKappaS: start.kappaS,
      refinedAssignment: refined.assignment,
      refinedKappaS: refined.kappaS,
    });
  }
}
process.stdout.write(JSON.stringify({ cases }) + '\n');
