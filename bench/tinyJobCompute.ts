/**
 * What the sandboxed child computes for a tiny job, alone in one process: computeJob (../src/jobs/computeJob.ts,
 * as the processor calls it) on the end-to-end bench's analyze job (./load.ts: a Gaussian n x n, mean 1, std 1, over
 * m contiguous machines; mean 1 gives every pair of machines a near-parallel direction) in a loop, after one untimed
 * job (the calibration, the JIT). Prints per job the wall time and the process' CPU time (every thread's: the garbage
 * collector's and the compiler's too), for `--rounds` rounds:
 *   node --import tsx bench/tinyJobCompute.ts [typescript|native] [--n 50] [--m 5] [--mean 1] [--jobs 400] [--rounds 3]
 * The service's CPU per job (bench/serviceCpu.ts) is this plus the job's HTTP, Redis and BullMQ hops.
 */
import { parseArgs } from 'node:util';
import { computeJob, type ComputeInput } from '../src/jobs/computeJob.js';
import { generateMatrix } from '../src/solvers/input/generators.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { selectBackend, type BackendName } from './backends.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    n: { type: 'string', default: '50' },
    m: { type: 'string', default: '5' },
    mean: { type: 'string', default: '1' },
    jobs: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '3' },
  },
});
console.log(JSON.stringify(selectBackend((positionals[0] ?? 'native') as BackendName)));
const n = Number(values.n);
const m = Number(values.m);
const A = generateMatrix({ generator: 'gaussian', n, mean: Number(values.mean), std: 1, seed: 1 });
const input: ComputeInput = {
  type: 'analyze',
  matrix: { storage: 'dense', A },
  rhs: null,
  partition: partitionFromAssignment(
    Int32Array.from({ length: n }, (_, k) => Math.floor((k * m) / n)),
    m,
  ),
  algorithms: [],
  options: { tolerance: 1e-8, maxIterations: 1000, parameters: {}, stopOnStagnation: false },
};
const once = () => computeJob(input, { signal: new AbortController().signal, onProgress: () => {}, traceCap: 64 });
await once();
const jobs = Number(values.jobs);
for (let round = 0; round < Number(values.rounds); round++) {
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let j = 0; j < jobs; j++) await once();
  const used = process.cpuUsage(cpu);
  const ms = (x: number): string => (x / jobs).toFixed(3);
  console.log(`round ${round + 1}: per job wall ${ms(performance.now() - start)} ms, CPU ${ms((used.user + used.system) / 1000)} ms`);
}
