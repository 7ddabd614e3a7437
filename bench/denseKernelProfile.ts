/**
 * Where the dense analysis spends its time, by phase and by kernel method, on the TypeScript
 * backend: every method of TYPESCRIPT_KERNELS.dense wrapped in a timer (outermost calls only).
 *
 *   node --import tsx bench/denseKernelProfile.ts <problem.json> [threads]
 *
 * threads (default: the solver setting, 'auto'): 1 runs every part on this thread; with more, the parts
 * run on the solver threads above the size threshold (src/solvers/analysis/denseAnalysisTasks.ts) and
 * the kernel table counts this thread's calls only.
 */
import { readFileSync } from 'node:fs';
import {
  analyzeWork,
  buildDistributedSystem,
  createProblem,
  partitionFromAssignment,
  setSolverThreads,
  TYPESCRIPT_KERNELS,
  useBackend,
} from '../src/solvers/index.js';
import type { ProblemFile } from './common.js';
import { readRaw } from './stageIo.js';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8')) as ProblemFile;
useBackend('typescript');
if (process.argv[3] !== undefined) setSolverThreads(Number(process.argv[3]));
const { n, m } = spec;
const A = { rows: n, cols: n, data: readRaw(spec.matrixFile, new Float64Array(n * n)) };
const assignment = readRaw(spec.assignmentFile, new Int32Array(n));
const system = buildDistributedSystem(createProblem({ A, partition: partitionFromAssignment(assignment, m) }));

const dense = TYPESCRIPT_KERNELS.dense as unknown as Record<string, unknown>;
const byKey = new Map<string, { seconds: number; calls: number }>();
let phase = 'setup';
let depth = 0;
for (const [name, value] of Object.entries(dense)) {
  if (typeof value !== 'function' || name === 'productRows') continue;
  const fn = value as (...args: unknown[]) => unknown;
  const isGenerator = fn.constructor.name === 'GeneratorFunction';
  dense[name] = function (this: unknown, ...args: unknown[]) {
    const account = (t0: number): void => {
      const key = `${phase}\t${name}`;
      const entry = byKey.get(key) ?? { seconds: 0, calls: 0 };
      entry.seconds += (performance.now() - t0) / 1e3;
      entry.calls++;
      byKey.set(key, entry);
    };
    if (isGenerator) {
      const inner = fn.apply(this, args) as Generator<unknown, unknown>;
      return (function* () {
        const t0 = performance.now();
        const r: unknown = yield* inner;
        account(t0);
        return r;
      })();
    }
    if (depth > 0) return fn.apply(this, args);
    depth++;
    const t0 = performance.now();
    try {
      return fn.apply(this, args);
    } finally {
      depth--;
      account(t0);
    }
  };
}

/** Wall and CPU seconds per phase: on a busy machine the CPU time of this one-thread analysis is the steadier figure. */
const phases = new Map<string, { wall: number; cpu: number }>();
const seen = new Set<string>();
const work = analyzeWork(system, { kernels: TYPESCRIPT_KERNELS });
let since = performance.now();
let cpuSince = process.cpuUsage();
const start = since;
const cpuStart = cpuSince;
for (;;) {
  const step = work.next();
  const now = performance.now();
  const cpuNow = process.cpuUsage();
  const entry = phases.get(phase) ?? { wall: 0, cpu: 0 };
  entry.wall += (now - since) / 1e3;
  entry.cpu += (cpuNow.user + cpuNow.system - cpuSince.user - cpuSince.system) / 1e6;
  phases.set(phase, entry);
  since = now;
  cpuSince = cpuNow;
  if (step.done) break;
  if (step.value) {
    const p = step.value.phase === 'conditioning' && seen.has('principal-angles') ? 'kappaS' : step.value.phase;
    seen.add(step.value.phase);
    phase = p;
  }
}
const cpuEnd = process.cpuUsage(cpuStart);
console.log(`total ${((performance.now() - start) / 1e3).toFixed(3)} s wall, ${((cpuEnd.user + cpuEnd.system) / 1e6).toFixed(3)} s CPU`);
for (const [p, { wall, cpu }] of phases) console.log(`phase ${p}\t${wall.toFixed(3)} s wall\t${cpu.toFixed(3)} s CPU`);
for (const [key, { seconds, calls }] of [...byKey].sort((a, b) => b[1].seconds - a[1].seconds))
  console.log(`${key}\t${seconds.toFixed(3)} s\t${calls} calls`);
