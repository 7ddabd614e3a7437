/**
 * Measurement (not a test): the dense analysis alone, ours (TypeScript backend, or native) against
 * NumPy's (bench/reference.py's analysis through bench/denseAnalysisRatio.py), back to back in
 * alternating child processes on the same cached problem files (bench/problems.ts writeProblemCache),
 * so both see the same load, both with the environment of the service's job processes (./processes.ts
 * CHILD_ENV). Per side: the best of `reps` wall times, that run's CPU time (all threads: OpenBLAS uses
 * both cores) and the child's peak RSS; the ratios of the medians over `rounds`.
 *
 *   node --import tsx bench/denseAnalysisRatio.ts <problem.json,...> [--rounds 3] [--reps 2] [--backend typescript]
 *     [--threads 1]
 *   node --import tsx bench/denseAnalysisRatio.ts --child <problem.json> <reps> <backend> [threads]   (one side)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { analyzeWork } from '../src/solvers/analysis/analyze.js';
import { buildDistributedSystem } from '../src/solvers/distributed/distributedSystem.js';
import { useBackend } from '../src/solvers/linalg/backend.js';
import { setSolverThreads } from '../src/solvers/parallel/threads.js';
import { createProblem, generateMatrix, partitionFromAssignment } from '../src/solvers/index.js';
import type { ProblemFile } from './common.js';
import { BENCH, CHILD_ENV, NODE_STAGES } from './processes.js';
import { readRaw } from './stageIo.js';
import { runSync } from '../src/solvers/cooperative.js';

interface Side {
  wall: number;
  cpu: number;
  peakRssBytes: number;
  phases: Record<string, number>;
}

function child(path: string, reps: number, backend: string, threads: string | undefined): void {
  useBackend(backend as 'typescript' | 'native');
  if (threads !== undefined) setSolverThreads(Number(threads));
  const spec = JSON.parse(readFileSync(path, 'utf8')) as ProblemFile;
  const { n, m } = spec;
  const A = { rows: n, cols: n, data: readRaw(spec.matrixFile, new Float64Array(n * n)) };
  const assignment = readRaw(spec.assignmentFile, new Int32Array(n));
  const warm = createProblem({ A: generateMatrix({ generator: 'gaussian', n: 64, mean: 1, seed: 1 }), partition: { machines: 4 } });
  runSync(analyzeWork(buildDistributedSystem(warm)));
  const system = buildDistributedSystem(createProblem({ A, partition: partitionFromAssignment(assignment, m) }));
  let best: Side | null = null;
  for (let r = 0; r < reps; r++) {
    const phases: Record<string, number> = {};
    const work = analyzeWork(system);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let current = '';
    let since = t0;
    for (;;) {
      const step = work.next();
      const now = performance.now();
      if (current) phases[current] = (phases[current] ?? 0) + (now - since) / 1e3;
      since = now;
      if (step.done) break;
      if (step.value) current = step.value.phase;
    }
    const wall = (performance.now() - t0) / 1e3;
    const cpu = process.cpuUsage(c0);
    if (best === null || wall < best.wall) best = { wall, cpu: (cpu.user + cpu.system) / 1e6, peakRssBytes: 0, phases };
  }
  best!.peakRssBytes = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify(best));
}

function lastJson(text: string): Side {
  const lines = text.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as Side;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (process.argv[2] === '--child') {
  child(process.argv[3], Number(process.argv[4]), process.argv[5], process.argv[6]);
} else {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { rounds: { type: 'string' }, reps: { type: 'string' }, backend: { type: 'string' }, threads: { type: 'string' } },
  });
  const rounds = Number(values.rounds ?? 3);
  const reps = values.reps ?? '2';
  const backend = values.backend ?? 'typescript';
  for (const path of positionals.flatMap((p) => p.split(','))) {
    const ours: Side[] = [];
    const numpy: Side[] = [];
    for (let r = 0; r < rounds; r++) {
      const args = [...NODE_STAGES, join(BENCH, 'denseAnalysisRatio.ts'), '--child', path, reps, backend];
      if (values.threads !== undefined) args.push(values.threads);
      ours.push(lastJson(execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24, env: CHILD_ENV })));
      numpy.push(
        lastJson(execFileSync('python3', [join(BENCH, 'denseAnalysisRatio.py'), path, reps], { encoding: 'utf8', env: CHILD_ENV })),
      );
    }
    const wall = median(ours.map((s, i) => s.wall / numpy[i].wall));
    const cpu = median(ours.map((s, i) => s.cpu / numpy[i].cpu));
    const fmt = (sides: Side[]): string =>
      `wall ${median(sides.map((s) => s.wall)).toFixed(3)} s, CPU ${median(sides.map((s) => s.cpu)).toFixed(3)} s, ` +
      `peak RSS ${(Math.max(...sides.map((s) => s.peakRssBytes)) / 2 ** 20).toFixed(0)} MiB`;
    const phaseLine = (sides: Side[]): string =>
      Object.keys(sides[0].phases)
        .map((k) => `${k} ${(median(sides.map((s) => s.phases[k] ?? 0)) * 1e3).toFixed(0)}`)
        .join(', ');
    console.log(
      `${path}: ours/NumPy wall ${wall.toFixed(2)}x (per round ${ours.map((s, i) => (s.wall / numpy[i].wall).toFixed(2)).join(' ')}), CPU ${cpu.toFixed(2)}x`,
    );
    console.log(`  ours  ${fmt(ours)}; ms: ${phaseLine(ours)}`);
    console.log(`  numpy ${fmt(numpy)}; ms: ${phaseLine(numpy)}`);
  }
}
