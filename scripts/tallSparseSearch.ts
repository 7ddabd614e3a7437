/**
 * Checks the cases of scripts/tallSparseSearch.py on each backend (TypeScript, and native when the addon is built): every
 * machine's rank, x_W and x_LS against NumPy's. Prints each case that differs (ranks, or a relative error above 1e-8) or
 * fails, then the worst x_W error per backend; exits 1 if any case did.
 *
 *   python3 scripts/tallSparseSearch.py <seed> > /tmp/cases.json
 *   node --import tsx scripts/tallSparseSearch.ts /tmp/cases.json
 */
import { readFileSync } from 'node:fs';
import { leastSquaresPoints } from '../src/solvers/distributed/leastSquares.js';
import { buildSparseSystem } from '../src/solvers/distributed/sparseSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { nativeBlas, useBackend, type BackendName } from '../src/solvers/linalg/backend.js';
import { relativeDifference, tallSparseCaseMatrix, type TallSparseCase } from '../test/solvers/sparse/support.js';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8')) as TallSparseCase[];
let failed = false;
const backends: BackendName[] = nativeBlas() === null ? ['typescript'] : ['typescript', 'native'];
for (const backend of backends) {
  useBackend(backend);
  let worst = 0;
  cases.forEach((c, t) => {
    const A = tallSparseCaseMatrix(c);
    const label = `${backend} case ${t} (${c.rows} x ${c.cols}, m = ${c.machines})`;
    try {
      const system = buildSparseSystem(createProblem({ A, rhs: c.b, partition: { machines: c.machines } }));
      const ranks = system.machines.map((machine) => machine.rank);
      const points = leastSquaresPoints(system);
      const [w, ls] = [relativeDifference(points.blockWeighted, c.blockWeighted), relativeDifference(points.leastSquares, c.leastSquares)];
      worst = Math.max(worst, w);
      if (ranks.join() !== c.ranks.join() || !(w <= 1e-8) || !(ls <= 1e-8)) {
        failed = true;
        console.log(`${label}: ranks ${ranks.join()} (NumPy ${c.ranks.join()}), x_W ${w.toExponential(2)}, x_LS ${ls.toExponential(2)}`);
      }
    } catch (error) {
      failed = true;
      console.log(`${label}: ${(error as Error).message}`);
    }
  });
  console.log(`${backend}: ${cases.length} cases, worst x_W error ${worst.toExponential(2)}`);
}
process.exitCode = failed ? 1 : 0;
