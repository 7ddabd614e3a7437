/**
 * Measurement (not a test): sigma_max of every Gram block of Gaussian systems (the cosines of the principal angles,
 * src/solvers/analysis/principalAngles.ts largestSingularValueWork) with Lanczos capped at BLOCK_LANCZOS_STEPS then a
 * bidiagonalization (the analysis' route), against Lanczos to the end, the bidiagonalization alone and other caps, on
 * one backend's kernels; best of three wall times, and the largest difference of a cosine from the route's.
 *
 *   node --import tsx bench/blockSigmaMax.ts [typescript|native] [--steps 24,48]
 */
import { parseArgs } from 'node:util';
import { gramBlock, gramBlocksWork } from '../src/solvers/analysis/gramBlocks.js';
import { BLOCK_LANCZOS_STEPS, largestSingularValueWork } from '../src/solvers/analysis/principalAngles.js';
import { runSync } from '../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { kernelsOf } from '../src/solvers/linalg/kernels.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { SeededRandom } from '../src/solvers/random.js';
import { selectBackend, type BackendName } from './backends.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { steps: { type: 'string', default: '24,48' } } });
const backend = (positionals[0] ?? 'typescript') as BackendName;
selectBackend(backend);
const kernels = kernelsOf(backend);
const caps: [string, number][] = [
  [`route (${BLOCK_LANCZOS_STEPS} steps)`, BLOCK_LANCZOS_STEPS],
  ['lanczos', Infinity],
  ['bidiagonalization', 0],
  ...values.steps.split(',').map((s): [string, number] => [`${s} steps`, Number(s)]),
];

for (const [n, m] of [
  [400, 2],
  [800, 2],
  [800, 8],
  [1200, 4],
  [2000, 10],
] as const) {
  for (const mean of [0, 1]) {
    const rng = new SeededRandom(3);
    const data = Float64Array.from({ length: n * n }, () => mean + rng.nextNormal());
    const assignment = Int32Array.from({ length: n }, (_, k) => Math.floor((k * m) / n));
    const problem = { n, A: { rows: n, cols: n, data }, b: new Float64Array(n).fill(1), xTrue: null };
    const { machines } = buildDistributedSystem({ ...problem, partition: partitionFromAssignment(assignment, m) }, kernels);
    const gram = runSync(gramBlocksWork(kernels, machines));
    const cosines = (steps: number): number[] => {
      const out: number[] = [];
      for (let i = 0; i < m; i++)
        for (let j = i + 1; j < m; j++) {
          const g = gramBlock(gram, i, j);
          if (g !== null) out.push(runSync(largestSingularValueWork(kernels, g, machines[i].p, machines[j].p, steps)));
        }
      return out;
    };
    const reference = cosines(BLOCK_LANCZOS_STEPS);
    const row: Record<string, number | string> = { n, m, mean };
    let difference = 0;
    for (const [name, steps] of caps) {
      let ms = Infinity;
      for (let rep = 0; rep < 3; rep++) {
        const start = performance.now();
        const c = cosines(steps);
        ms = Math.min(ms, performance.now() - start);
        c.forEach((value, k) => (difference = Math.max(difference, Math.abs(value - reference[k]))));
      }
      row[name] = `${Math.round(ms)} ms`;
    }
    console.log(JSON.stringify({ ...row, largestCosineDifference: difference }));
  }
}
