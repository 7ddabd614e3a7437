/**
 * Where an advise job's time and memory go on one sparse bench problem: the analysis of the given partition, then
 * adviseWork given its kappa(S), theta_H and LU of A, as the job runs them (--no-handover: the advice factors A
 * again, as before the hand-over); each phase change printed
 * with the time, the process' CPU seconds so far (all threads), the resident set and its peak so far. With `--cooperative` the work returns to the event
 * loop every 20 ms, as the job's runCooperatively does (Node runs native handles' finalizers there). With
 * `--gc` (and node --expose-gc) a full collection at each phase change tells garbage from what is held. The advice
 * collects garbage (with node --expose-gc, as a job's process runs) and trims the C heap where it lets go, as
 * computeJob has it do. At the end: the resident set's peak as sampled every 100 ms, with what it held then.
 *
 *   node [--expose-gc] --import tsx bench/adviseTimeline.ts <sparse.json> <typescript|native> [--cooperative] [--gc] [--no-handover]
 */
import { readFileSync } from 'node:fs';
import { analyzeWork } from '../src/solvers/analysis/analyze.js';
import type { Work } from '../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { giveMemoryBack } from '../src/solvers/linalg/backend.js';
import { currentCalibration } from '../src/solvers/analysis/calibration.js';
import { adviseWork, luHandOver } from '../src/solvers/partitioning/advisor.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { selectBackend } from './backends.js';
import type { SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

const [path, backend, ...flags] = process.argv.slice(2);
if (!path || (backend !== 'typescript' && backend !== 'native'))
  throw new Error('usage: adviseTimeline.ts <sparse.json> <typescript|native> [--cooperative] [--gc] [--no-handover]');
const cooperative = flags.includes('--cooperative');
const handover = !flags.includes('--no-handover');
const collect = flags.includes('--gc') ? (globalThis as { gc?: () => void }).gc : undefined;
const spec = JSON.parse(readFileSync(path, 'utf8')) as SparseProblemFile;
selectBackend(backend);
const t0 = performance.now();
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
const mark = (what: string): void => {
  const { rss, heapTotal, arrayBuffers } = process.memoryUsage();
  const peak = (process.resourceUsage().maxRSS / 1024).toFixed(0);
  const seconds = ((performance.now() - t0) / 1e3).toFixed(1);
  const { user, system } = process.cpuUsage();
  const cpu = ((user + system) / 1e6).toFixed(1);
  // The JavaScript heap and the array buffers (typed arrays' memory) apart: the rest of rss is native memory and code.
  console.log(
    `${seconds} s (CPU ${cpu} s) ${what}: rss ${mib(rss)} MiB (heap ${mib(heapTotal)}, array buffers ${mib(arrayBuffers)}), peak ${peak} MiB`,
  );
};
// The resident set's peak as sampled every 100 ms, and what it held then (array buffers, heap): where the peak is.
let sampled = { rss: 0, arrayBuffers: 0, heapTotal: 0, at: 0 };
const sampler = setInterval(() => {
  const { rss, arrayBuffers, heapTotal } = process.memoryUsage();
  if (rss > sampled.rss) sampled = { rss, arrayBuffers, heapTotal, at: (performance.now() - t0) / 1e3 };
}, 100);
sampler.unref();
let sliceStart = performance.now();
async function drive<T>(name: string, work: Work<T>): Promise<T> {
  let last = '';
  for (;;) {
    if (cooperative && performance.now() - sliceStart >= 20) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
    const step = work.next();
    if (step.done) {
      mark(`${name} done`);
      return step.value;
    }
    const progress = step.value;
    if (progress !== undefined && (progress.phase !== last || progress.phase === 'advise')) {
      last = progress.phase;
      collect?.();
      mark(`${name} ${progress.phase} ${(progress.fraction ?? 0).toFixed(2)}`);
    }
  }
}

const { A, assignment } = readSparseProblemArrays(spec);
const problem = createProblem({ A, partition: partitionFromAssignment(assignment, spec.m) });
const kernels = selectedKernels();
mark('read');
// The job's analysis of the given partition (on the solver threads at this size), handing its LU of A to the advice
// as computeJob does (AnalyzeOptions.keepLu, AdviseOptions.takeLu); with --no-handover the advice factors A again.
const handOver = handover ? luHandOver() : null;
let handed = false;
const system = buildDistributedSystem(problem);
mark('given system');
const analysis = await drive(
  'analysis',
  analyzeWork(system, {
    kernels,
    keepLu: handOver === null ? undefined : (context) => (handOver.keepLu(context), (handed = true)),
  }),
);
console.log(`analysis: ${((performance.now() - t0) / 1e3).toFixed(1)} s from the start; LU handed over: ${handed}`);
const given = { system, spectrum: { kappaS: analysis.conditioning.kappaS, thetaH: analysis.heterogeneity.thetaH } };

const c0 = process.cpuUsage();
const a0 = performance.now();
const advice = await drive(
  'advise',
  adviseWork(problem, {
    kernels,
    calibration: currentCalibration(),
    given,
    takeLu: handOver?.takeLu,
    // As computeJob: a full collection (with node --expose-gc) and the C heap trimmed, each time the advice lets go.
    released: giveMemoryBack,
  }),
);
const cpu = process.cpuUsage(c0);
console.log(`advise: ${((performance.now() - a0) / 1e3).toFixed(1)} s wall, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU`);
console.log(
  `sampled peak: rss ${mib(sampled.rss)} MiB at ${sampled.at.toFixed(1)} s (heap ${mib(sampled.heapTotal)}, array buffers ${mib(sampled.arrayBuffers)})`,
);
console.log(JSON.stringify(advice.candidates.map(({ strategy, kappaS, thetaH }) => ({ strategy, kappaS, thetaH }))));
