/**
 * Measurement (not a test): the setup and analysis of sparse 2-D Poisson systems in strips with their tasks on one
 * thread and on two (src/solvers/parallel/threads.ts setParallelTasksMinNnz: Infinity against 0), alternating, best of
 * `reps` wall times each, with the process' CPU time (all threads) of that run: where two threads start to pay for
 * their start-up (~50 ms compiled, ~200 ms under tsx per pool), i.e. DEFAULT_PARALLEL_TASKS_MIN_NNZ. Run it compiled
 * (the service's case) or under tsx:
 *
 *   node --import tsx bench/sparseAnalysisThreads.ts <typescript|native> [side:m,...] [reps]
 */
import { analyze } from '../src/solvers/analysis/analyze.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../src/solvers/input/createProblem.js';
import { useBackend } from '../src/solvers/linalg/backend.js';
import { setParallelTasksMinNnz } from '../src/solvers/parallel/threads.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';

const backend = process.argv[2];
if (backend !== 'typescript' && backend !== 'native')
  throw new Error('usage: sparseAnalysisThreads.ts <typescript|native> [side:m,...] [reps]');
useBackend(backend);
const grids = (process.argv[3] ?? '70:10,100:16,150:16,200:20,300:36').split(',').map((g) => g.split(':').map(Number));
const reps = Number(process.argv[4] ?? 3);
const round = (x: number): number => Math.round(x * 1000) / 1000;
for (const [side, m] of grids) {
  const problem = createProblem({ A: poisson2d(side), partition: { machines: m } });
  const best = new Map<string, { setup: number; analysis: number; cpu: number }>();
  for (let r = 0; r < reps; r++) {
    for (const [label, minNnz] of [
      ['one thread', Infinity],
      ['two threads', 0],
    ] as const) {
      const previous = setParallelTasksMinNnz(minNnz);
      try {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        const system = buildDistributedSystem(problem);
        const t1 = performance.now();
        analyze(system);
        const t2 = performance.now();
        const cpu = process.cpuUsage(cpu0);
        const run = { setup: (t1 - t0) / 1e3, analysis: (t2 - t1) / 1e3, cpu: (cpu.user + cpu.system) / 1e6 };
        const held = best.get(label);
        if (held === undefined || run.setup + run.analysis < held.setup + held.analysis) best.set(label, run);
      } finally {
        setParallelTasksMinNnz(previous);
      }
    }
  }
  const row: Record<string, unknown> = { backend, n: side * side, m, nnz: problem.A.rowPtr?.[side * side] };
  for (const [label, run] of best) row[label] = { setup: round(run.setup), analysis: round(run.analysis), cpu: round(run.cpu) };
  console.log(JSON.stringify(row));
}
