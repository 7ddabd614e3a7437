/**
 * Several right-hand sides (issue 24 §2): the cost per right-hand side of one block run over k of them
 * (../src/solvers/runner/multipleRhs.ts) against k separate runs, per algorithm, on a dense and a CSR
 * problem. Targets at k = 16: <= 0.4x dense n = 2000, <= 0.6x CSR. Run alone:
 *   node --import tsx bench/multipleRhs.ts <typescript|native> [--k 16] [--dense-n 2000] [--dense-m 8]
 *     [--csr-k 300] [--csr-m 20] [--iterations 30] [--rounds 2] [--algorithms apc,dhbm,...] [--threads auto|N]
 *     [--skip-dense] [--skip-csr] [--json]
 * Every run does exactly `iterations` iterations (no tolerance can be met, stagnation off), so the
 * columns cost alike. A separate run's time does not depend on b: k separate runs cost k times one run
 * (each time the best of `rounds`). `--json`: a last line with the report (MultipleRhsReport; bench/run.ts
 * records it and bench/targets.ts checks it). Prints per algorithm the cost of an iteration per right-hand side
 * against a separate run's (timed between a run's first and last yield, one per iteration, so the
 * runs' starts are left out: the targets' ratio), the same in the process' CPU time (all threads;
 * steadier than wall time when other processes share the cores), the whole runs' ratio, and the whole jobs' (setup
 * once + block, against k jobs each with its setup and one run).
 */
import { parseArgs } from 'node:util';
import { analyze, buildDistributedSystem, createProblem, generateMatrix, setSolverThreads, spectralDataOf } from '../src/solvers/index.js';
import { runAlgorithmWork } from '../src/solvers/runner/runAlgorithm.js';
import { ALGORITHM_IDS, type AlgorithmId } from '../src/solvers/algorithms/registry.js';
import type { Work } from '../src/solvers/cooperative.js';
import type { CsrMatrix, DenseMatrix } from '../src/solvers/matrix.js';
import { SeededRandom } from '../src/solvers/random.js';
import { multipleRhsWork } from '../src/solvers/runner/multipleRhs.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { selectBackend, type BackendName } from './backends.js';

export interface Row {
  algorithm: AlgorithmId;
  oneRunMs: number;
  blockMs: number;
  /** Wall time of an iteration: one vector's, and the block's (k columns). */
  oneIterationMs: number;
  blockIterationMs: number;
  /** Per iteration: the block's / (k x one vector's), the runs' starts left out. */
  iterationRatio: number;
  /** The same with the process' CPU time (every thread's) instead of wall time: steadier on a shared host. */
  cpuRatio: number;
  /** Whole runs: block / (k x one run). */
  runRatio: number;
  /** Whole jobs: setup once + block / (k x (setup + one run)). */
  jobRatio: number;
}

/** One problem's measurement. */
export interface MultipleRhsProblem {
  storage: 'dense' | 'csr';
  problem: string;
  k: number;
  iterations: number;
  setupMs: number;
  rows: Row[];
}

export interface MultipleRhsReport {
  backend: BackendName;
  threads: string;
  problems: MultipleRhsProblem[];
}

function measure(
  name: string,
  A: DenseMatrix | CsrMatrix,
  m: number,
  k: number,
  iterations: number,
  rounds: number,
  ids: readonly AlgorithmId[],
): { setupMs: number; rows: Row[] } {
  const n = A.rows;
  const random = new SeededRandom(5);
  const rhs = Array.from({ length: k }, () => Float64Array.from({ length: n }, () => random.nextDouble() * 2 - 1));
  const started = performance.now();
  const system = buildDistributedSystem(createProblem({ A, rhs: rhs[0], partition: { machines: m } }));
  const spectral = spectralDataOf(analyze(system));
  const setupMs = performance.now() - started;
  console.log(`${name}: setup (system and analysis) ${setupMs.toFixed(0)} ms, k = ${k}, ${iterations} iterations per run`);
  const options = { tolerance: 1e-300, maxIterations: iterations, stopOnStagnation: false, divergenceTolerance: 1e300 };
  const rows: Row[] = [];
  /** Wall time of a run, and of its iterations alone: between its first and last yield (one per iteration or round). */
  type Timing = { totalMs: number; iterationMs: number; iterationCpuMs: number };
  const cpuMs = (): number => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const timed = (work: Work<unknown>): Timing => {
    const started = performance.now();
    let first = 0;
    let last = 0;
    let firstCpu = 0;
    let lastCpu = 0;
    let yields = 0;
    for (let step = work.next(); !step.done; step = work.next()) {
      last = performance.now();
      lastCpu = cpuMs();
      if (yields++ === 0) [first, firstCpu] = [last, lastCpu];
    }
    const per = (from: number, to: number): number => (yields > 1 ? (to - from) / (yields - 1) : NaN);
    return { totalMs: performance.now() - started, iterationMs: per(first, last), iterationCpuMs: per(firstCpu, lastCpu) };
  };
  const best = (make: () => Work<unknown>): Timing => {
    const runs = Array.from({ length: Math.max(1, rounds) }, () => timed(make()));
    return {
      totalMs: Math.min(...runs.map((r) => r.totalMs)),
      iterationMs: Math.min(...runs.map((r) => r.iterationMs)),
      iterationCpuMs: Math.min(...runs.map((r) => r.iterationCpuMs)),
    };
  };
  for (const id of ids) {
    const one = best(() => runAlgorithmWork(system, id, spectral, options));
    const block = best(() => multipleRhsWork(system, id, spectral, options, rhs));
    const row = {
      algorithm: id,
      oneRunMs: one.totalMs,
      blockMs: block.totalMs,
      oneIterationMs: one.iterationMs,
      blockIterationMs: block.iterationMs,
      iterationRatio: block.iterationMs / (k * one.iterationMs),
      cpuRatio: block.iterationCpuMs / (k * one.iterationCpuMs),
      runRatio: block.totalMs / (k * one.totalMs),
      jobRatio: (setupMs + block.totalMs) / (k * (setupMs + one.totalMs)),
    };
    console.log(
      `  ${id.padEnd(8)} an iteration: one vector ${one.iterationMs.toFixed(3)} ms, block of ${k} ${block.iterationMs.toFixed(3)} ms ` +
        `(${(block.iterationMs / k).toFixed(3)} ms per right-hand side) = ${row.iterationRatio.toFixed(2)}x; ` +
        `CPU one ${one.iterationCpuMs.toFixed(3)} ms, block ${block.iterationCpuMs.toFixed(3)} ms = ${row.cpuRatio.toFixed(2)}x; ` +
        `whole runs ${row.runRatio.toFixed(2)}x (one ${one.totalMs.toFixed(0)} ms, block ${block.totalMs.toFixed(0)} ms); ` +
        `whole jobs with setup ${row.jobRatio.toFixed(3)}x`,
    );
    rows.push(row);
  }
  return { setupMs, rows };
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      k: { type: 'string', default: '16' },
      'dense-n': { type: 'string', default: '2000' },
      'dense-m': { type: 'string', default: '8' },
      'csr-k': { type: 'string', default: '300' },
      'csr-m': { type: 'string', default: '20' },
      iterations: { type: 'string', default: '30' },
      algorithms: { type: 'string', default: ALGORITHM_IDS.join(',') },
      threads: { type: 'string', default: 'auto' },
      'skip-dense': { type: 'boolean', default: false },
      'skip-csr': { type: 'boolean', default: false },
      rounds: { type: 'string', default: '2' },
      json: { type: 'boolean', default: false },
    },
  });
  const backend = (positionals[0] ?? 'typescript') as BackendName;
  const selected = selectBackend(backend);
  console.log(JSON.stringify(selected));
  if (values.threads !== 'auto') setSolverThreads(Number(values.threads));
  const k = Number(values.k);
  const iterations = Number(values.iterations);
  const ids = values.algorithms.split(',') as AlgorithmId[];
  const rounds = Number(values.rounds);
  const n = Number(values['dense-n']);
  const problems: MultipleRhsProblem[] = [];
  const run = (storage: 'dense' | 'csr', problem: string, A: DenseMatrix | CsrMatrix, m: number): Row[] => {
    const { setupMs, rows } = measure(problem, A, m, k, iterations, rounds, ids);
    problems.push({ storage, problem, k, iterations, setupMs, rows });
    return rows;
  };
  const denseM = Number(values['dense-m']);
  const dense = values['skip-dense']
    ? []
    : run(
        'dense',
        `dense Gaussian n = ${n}, m = ${denseM}`,
        generateMatrix({ generator: 'gaussian', n, mean: 1, std: 1, seed: 1 }),
        denseM,
      );
  const grid = Number(values['csr-k']);
  const csrM = Number(values['csr-m']);
  const csr = values['skip-csr'] ? [] : run('csr', `CSR Poisson n = ${grid * grid}, m = ${csrM}`, poisson2d(grid), csrM);
  const worst = (rows: Row[]): string => {
    if (rows.length === 0) return 'not measured';
    const row = rows.reduce((a, b) => (b.iterationRatio > a.iterationRatio ? b : a));
    return `${row.iterationRatio.toFixed(2)}x (${row.algorithm})`;
  };
  console.log(
    `targets, per iteration and right-hand side, the worst algorithm: dense ${worst(dense)} (<= 0.4), CSR ${worst(csr)} (<= 0.6)`,
  );
  if (values.json) {
    const report: MultipleRhsReport = { backend, threads: values.threads === 'auto' ? selected.threads : values.threads, problems };
    console.log(JSON.stringify(report));
  }
}

main();
