/**
 * Where an advise job's time and memory go on one sparse bench problem: the analysis' LU and the given
 * partition's kappa(S) and theta_H, then adviseWork given them, as the job runs it; each phase change printed
 * with the time, the resident set and its peak so far. With `--cooperative` the work returns to the event
 * loop every 20 ms, as the job's runCooperatively does (Node runs native handles' finalizers there). With
 * `--gc` (and node --expose-gc) a full collection at each phase change tells garbage from what is held.
 *
 *   node [--expose-gc] --import tsx bench/adviseTimeline.ts <sparse.json> <typescript|native> [--cooperative] [--gc]
 */
import { readFileSync } from 'node:fs';
import { sparseAnglesOfPartitionWork, sparseLuContextWork, sparseSOfPartitionWork } from '../src/solvers/analysis/sparseAnalysis.js';
import type { Work } from '../src/solvers/cooperative.js';
import { buildDistributedSystem, type DistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { selectedKernels } from '../src/solvers/linalg/kernels.js';
import { currentCalibration } from '../src/solvers/analysis/calibration.js';
import { adviseWork } from '../src/solvers/partitioning/advisor.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { selectBackend } from './backends.js';
import type { SparseProblemFile } from './sparseProblems.js';
import { readSparseProblemArrays } from './stageIo.js';

const [path, backend, ...flags] = process.argv.slice(2);
if (!path || (backend !== 'typescript' && backend !== 'native'))
  throw new Error('usage: adviseTimeline.ts <sparse.json> <typescript|native> [--cooperative] [--gc]');
const cooperative = flags.includes('--cooperative');
const collect = flags.includes('--gc') ? (globalThis as { gc?: () => void }).gc : undefined;
const spec = JSON.parse(readFileSync(path, 'utf8')) as SparseProblemFile;
selectBackend(backend);
const t0 = performance.now();
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
const mark = (what: string): void => {
  const { rss, heapTotal, arrayBuffers } = process.memoryUsage();
  const peak = (process.resourceUsage().maxRSS / 1024).toFixed(0);
  const seconds = ((performance.now() - t0) / 1e3).toFixed(1);
  // The JavaScript heap and the array buffers (typed arrays' memory) apart: the rest of rss is native memory and code.
  console.log(`${seconds} s ${what}: rss ${mib(rss)} MiB (heap ${mib(heapTotal)}, array buffers ${mib(arrayBuffers)}), peak ${peak} MiB`);
};
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
/**
 * The given partition's kappa(S) and theta_H as the job's analysis reports them. Its LU is not kept past it (the
 * job's analysis keeps none for its rest, and adviseWork makes its own): holding it would add ~1 GiB to the peak.
 */
async function givenSpectrum(): Promise<{ system: DistributedSystem; spectrum: { kappaS: number; thetaH: number } }> {
  const lu = await drive('lu', sparseLuContextWork(A));
  const system = buildDistributedSystem(problem);
  mark('given system');
  const s = await drive('givenS', sparseSOfPartitionWork(kernels, system, lu));
  const angles = await drive('angles', sparseAnglesOfPartitionWork(system));
  return { system, spectrum: { kappaS: s.kappaS.value, thetaH: angles.thetaH } };
}
const given = await givenSpectrum();
const c0 = process.cpuUsage();
const a0 = performance.now();
const advice = await drive(
  'advise',
  adviseWork(problem, {
    kernels,
    calibration: currentCalibration(),
    given,
  }),
);
const cpu = process.cpuUsage(c0);
console.log(`advise: ${((performance.now() - a0) / 1e3).toFixed(1)} s wall, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU`);
console.log(JSON.stringify(advice.candidates.map(({ strategy, kappaS, thetaH }) => ({ strategy, kappaS, thetaH }))));
