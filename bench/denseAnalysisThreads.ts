/**
 * Measurement (not a test): the dense analysis of Gaussian systems (m = 10) on the TypeScript backend
 * on one thread and on two (src/solvers/analysis/denseAnalysisTasks.ts, its size threshold lowered to
 * 0), alternating, best of `reps` wall times, with the CPU time of the process (both threads) of that
 * run: where two threads start to pay for their start-up (~50 ms compiled, ~250 ms under tsx per pool,
 * two pools per analysis), i.e. DEFAULT_PARALLEL_DENSE_ANALYSIS_MIN_N (src/solvers/parallel/threads.ts).
 *
 * Each size waits (up to 60 s) for the other processes to leave the cores idle; the load they
 * added during the best runs is printed (threads only pay when a core is free).
 *
 *   node --import tsx bench/denseAnalysisThreads.ts [n,n,...] [reps]
 */
import { analyze } from '../src/solvers/analysis/analyze.js';
import { cpuSnapshot, foreignCores, waitForQuiet } from './machineProbe.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { useBackend } from '../src/solvers/linalg/backend.js';
import { setParallelDenseAnalysisMinN, setSolverThreads } from '../src/solvers/parallel/threads.js';
import { partitionFromAssignment } from '../src/solvers/problem.js';
import { SeededRandom } from '../src/solvers/random.js';

useBackend('typescript');
setParallelDenseAnalysisMinN(0);
const sizes = (process.argv[2] ?? '200,300,400,600,1000').split(',').map(Number);
const reps = Number(process.argv[3] ?? 3);
const m = 10;
for (const n of sizes) {
  const rng = new SeededRandom(1);
  const data = Float64Array.from({ length: n * n }, () => rng.nextNormal());
  const assignment = Int32Array.from({ length: n }, (_, k) => Math.floor((k * m) / n));
  const problem = { n, A: { rows: n, cols: n, data }, b: new Float64Array(n).fill(1), xTrue: null };
  const system = buildDistributedSystem({ ...problem, partition: partitionFromAssignment(assignment, m) });
  const best = new Map<number, { wall: number; cpu: number; others: number }>();
  await waitForQuiet(60);
  for (let r = 0; r < reps; r++) {
    for (const threads of [1, 2]) {
      setSolverThreads(threads);
      const snapshot = cpuSnapshot();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      analyze(system);
      const wall = (performance.now() - t0) / 1e3;
      const cpu = process.cpuUsage(cpu0);
      const others = foreignCores(snapshot, cpuSnapshot()) ?? Number.NaN;
      const previous = best.get(threads);
      if (previous === undefined || wall < previous.wall) best.set(threads, { wall, cpu: (cpu.user + cpu.system) / 1e6, others });
    }
  }
  const one = best.get(1)!;
  const two = best.get(2)!;
  console.log(
    `n = ${n}: 1 thread ${one.wall.toFixed(3)} s (${one.cpu.toFixed(3)} s CPU), 2 threads ${two.wall.toFixed(3)} s ` +
      `(${two.cpu.toFixed(3)} s CPU): ${(one.wall / two.wall).toFixed(2)}x; other processes ${one.others.toFixed(2)} / ${two.others.toFixed(2)} cores`,
  );
}
