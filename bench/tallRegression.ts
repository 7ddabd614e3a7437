/**
 * Measurement (not a test): a random tall sparse regression through the library, as docs/performance.md's "Tall sparse
 * regressions" section measured it: N x n CSR with `perRow` nonzeros a row at random columns (values uniform in
 * [-1, 1], SeededRandom(12345)), contiguous on m machines. Prints the setup's seconds, then each phase of the analysis
 * (or of the advice, with `advise`) as it ends, the total, and the result's headline values.
 *
 *   node --import tsx bench/tallRegression.ts <N> <n> <m> <perRow> [analyze | advise] [native | typescript]
 */
import { analyzeWork, buildDistributedSystem, createProblem, useBackend, type CsrMatrix, type Work } from '../src/solvers/index.js';
import { adviseWork } from '../src/solvers/partitioning/advisor.js';
import { SeededRandom } from '../src/solvers/random.js';

const [N, n, m, perRow] = process.argv.slice(2, 6).map(Number);
const mode = process.argv[6] ?? 'analyze';
if (![N, n, m, perRow].every((x) => Number.isInteger(x) && x > 0) || perRow > n || (mode !== 'analyze' && mode !== 'advise'))
  throw new Error('usage: tallRegression.ts <N> <n> <m> <perRow> [analyze | advise] [native | typescript]');
useBackend((process.argv[7] ?? 'native') as 'native' | 'typescript');

const rng = new SeededRandom(12345);
const rowPtr = new Int32Array(N + 1);
const colIdx = new Int32Array(N * perRow);
const values = new Float64Array(N * perRow);
for (let r = 0; r < N; r++) {
  const columns = new Set<number>();
  while (columns.size < perRow) columns.add(Math.floor(rng.nextDouble() * n));
  [...columns]
    .sort((x, y) => x - y)
    .forEach((c, q) => {
      colIdx[r * perRow + q] = c;
      values[r * perRow + q] = 2 * rng.nextDouble() - 1;
    });
  rowPtr[r + 1] = (r + 1) * perRow;
}
const A: CsrMatrix = { rows: N, cols: n, rowPtr, colIdx, values };
const rhs = new Float64Array(N).map(() => rng.nextDouble() - 0.5);
const problem = createProblem({ A, rhs, partition: { machines: m } });
const seconds = (from: number): string => ((performance.now() - from) / 1000).toFixed(2);

/** Runs `work` to its end, printing each phase's seconds as the next begins. */
function timedPhases<T>(work: Work<T>): T {
  const start = performance.now();
  let phase = '';
  let phaseStart = start;
  for (;;) {
    const step = work.next();
    if (step.done) {
      if (phase) console.log(`  ${phase} ${seconds(phaseStart)} s`);
      console.log(`${mode} ${seconds(start)} s`);
      return step.value;
    }
    const next = (step.value as { phase?: string } | undefined)?.phase;
    if (next === undefined || next === phase) continue;
    if (phase) console.log(`  ${phase} ${seconds(phaseStart)} s`);
    [phase, phaseStart] = [next, performance.now()];
  }
}

if (mode === 'analyze') {
  const start = performance.now();
  const system = buildDistributedSystem(problem);
  console.log(`setup ${seconds(start)} s`);
  const { heterogeneity: h, conditioning: c } = timedPhases(analyzeWork(system));
  console.log(JSON.stringify({ kappaS: c.kappaS, thetaH: h.thetaH, phiMin: h.phiMin, estimates: h.estimates }));
} else {
  const advice = timedPhases(adviseWork(problem));
  for (const c of advice.candidates)
    console.log(
      JSON.stringify({
        strategy: c.strategy,
        kappaS: c.kappaS,
        withinImbalance: c.withinImbalance,
        sizes: [Math.min(...c.sizes), Math.max(...c.sizes)],
      }),
    );
}
