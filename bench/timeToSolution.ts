/**
 * Time to solution (issue 25 §1): the model's predicted seconds per iteration against the runner's
 * measured ones, on one backend, for all six algorithms, and for runs to 1e-8 the predicted against
 * the measured time. Run alone (a few minutes):
 *   node --import tsx bench/timeToSolution.ts <typescript|native> [--dense-n 1000] [--dense-m 10] [--csr-k 200]
 *     [--csr-m 20] [--iterations 1000] [--rounds 3] [--converge 5000] [--skip-dense] [--skip-csr] [--threads auto] [--json]
 * With --json the last line is a TimeToSolutionReport (what bench/run.ts records).
 * An iteration is timed between a run's first and last yield (one per iteration), so the run's start
 * (the method's setup: worker threads, the data copied into shared memory or an arena, the first
 * pass) is left out of it and reported on its own: the time to the first yield less one iteration.
 * The algorithms are interleaved round by round (`--rounds`) so that each sees the same load; the
 * median over the rounds is compared, and the spread (max / min) printed as the noise.
 */
import { parseArgs } from 'node:util';
import {
  analyze,
  buildDistributedSystem,
  createProblem,
  generateMatrix,
  setSolverThreads,
  spectralDataOf,
  type CsrMatrix,
  type DenseMatrix,
} from '../src/solvers/index.js';
import { ALGORITHM_IDS, type AlgorithmId } from '../src/solvers/algorithms/registry.js';
import { systemCost, timeToSolution } from '../src/solvers/analysis/timeToSolution.js';
import { measureCalibration, type Calibration } from '../src/solvers/analysis/calibration.js';
import { runAlgorithmWork } from '../src/solvers/runner/runAlgorithm.js';
import { runSync } from '../src/solvers/cooperative.js';
import { lastPhaseSyncSeconds, lastThreadSlowdown } from '../src/solvers/parallel/engine.js';
import type { RunResult } from '../src/solvers/runner/types.js';
import { poisson2d } from '../src/solvers/sparse/generators.js';
import { selectBackend, type BackendName } from './backends.js';

interface Timed {
  result: RunResult;
  totalMs: number;
  /** Between the first and last yield, per iteration. */
  iterationMs: number;
  /** To the first yield, less one iteration. */
  startMs: number;
  /** The process' CPU time (all threads) between the first and last yield, per iteration: on one solver thread, the work without the waits for a core other processes hold. */
  cpuMs: number;
}

function timed(work: Generator<unknown, RunResult>): Timed {
  const started = performance.now();
  let first = 0;
  let last = 0;
  let yields = 0;
  let cpuFirst = 0;
  // process.cpuUsage is a system call (~2 us here): read at the first yield and after the run only, where one a
  // yield added ~2 us to every measured iteration of a small system (a one-thread n = 200 one takes ~15 us).
  const cpu = (): number => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  let step = work.next();
  for (; !step.done; step = work.next()) {
    last = performance.now();
    if (yields++ === 0) {
      first = last;
      cpuFirst = cpu();
    }
  }
  const cpuEnd = cpu();
  const totalMs = performance.now() - started;
  const iterationMs = yields > 1 ? (last - first) / (yields - 1) : totalMs / Math.max(1, step.value.iterations);
  // From the first yield to the run's end: its iterations after the first, and what the run does after its last.
  const cpuMs = yields > 1 ? (cpuEnd - cpuFirst) / (yields - 1) : Number.NaN;
  return { result: step.value, totalMs, iterationMs, startMs: first - started - iterationMs, cpuMs };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** One algorithm's predicted against measured seconds per iteration (medians over the rounds). */
export interface IterationTiming {
  algorithm: AlgorithmId;
  threads: number;
  predictedSeconds: number;
  measuredSeconds: number;
  /** Largest over smallest of the rounds' measurements: the noise. */
  spread: number;
  /**
   * Predicted with a second calibration taken after the rounds (absent in records before it was): the host's memory
   * rate moves in phases of seconds (docs/performance.md, "The host's memory phases"), so the two tell a phase that
   * mispriced the runs from a model that did. The targets judge `predictedSeconds`, the model's own protocol.
   */
  predictedAfterSeconds?: number;
}

/** A run to 1e-8: predicted against measured time, or how it ended when it did not converge. */
export interface ConvergedRun {
  algorithm: 'apc' | 'dhbm';
  status: string;
  iterations: number;
  predictedIterations: number | null;
  predictedSeconds: number | null;
  measuredSeconds: number;
}

export interface TimeToSolutionProblem {
  problem: string;
  storage: 'dense' | 'csr';
  /** The calibration the predictions used (its rates vary between processes on a shared host: kept to tell why a row missed). */
  calibration: Calibration | null;
  /** The calibration taken after the rounds (IterationTiming.predictedAfterSeconds); absent in older records. */
  calibrationAfter?: Calibration | null;
  phaseSyncSeconds: number;
  perIteration: IterationTiming[];
  converged: ConvergedRun[];
}

/** The last line of `--json`: what bench/run.ts records (bench/targets.ts decides the targets). */
export interface TimeToSolutionReport {
  backend: string;
  problems: TimeToSolutionProblem[];
}

const problems: TimeToSolutionProblem[] = [];

function measure(name: string, A: DenseMatrix | CsrMatrix, m: number, iterations: number, rounds: number, converge: number): void {
  const report: TimeToSolutionProblem = {
    problem: name,
    storage: 'rowPtr' in A ? 'csr' : 'dense',
    calibration: null,
    phaseSyncSeconds: 0,
    perIteration: [],
    converged: [],
  };
  problems.push(report);
  const system = buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
  const analysis = analyze(system);
  const spectral = spectralDataOf(analysis);
  // A worker process prices its jobs with what its earlier threaded runs measured of a phase's
  // synchronisation (../src/solvers/parallel/engine.ts lastPhaseSyncSeconds): one untimed run first, as a
  // worker that has served a job has, as long as the timed ones (a run's mean counts its dearer first phases).
  runSync(runAlgorithmWork(system, 'dhbm', spectral, { tolerance: 1e-300, maxIterations: iterations, stopOnStagnation: false }));
  const calibration = measureCalibration();
  const t = timeToSolution({ system: systemCost(system), rates: analysis.rates, tolerance: 1e-8, calibration });
  report.calibration = calibration;
  report.phaseSyncSeconds = calibration.phaseSyncSeconds;
  console.log(`${name}: calibration ${JSON.stringify(calibration)}`);
  console.log(
    `  phase synchronisation ${(calibration.phaseSyncSeconds * 1e6).toFixed(1)} us (${lastPhaseSyncSeconds() === null ? 'default' : 'measured'}), ` +
      `threads' slowdown ${calibration.threadSlowdown[report.storage].toFixed(2)} (${lastThreadSlowdown(report.storage) === null ? 'default' : 'measured'})`,
  );
  const options = { tolerance: 1e-300, maxIterations: iterations, stopOnStagnation: false, divergenceTolerance: 1e300 };
  const samples = new Map<AlgorithmId, Timed[]>(ALGORITHM_IDS.map((id) => [id, []]));
  for (let r = 0; r < rounds; r++)
    for (const id of ALGORITHM_IDS) samples.get(id)?.push(timed(runAlgorithmWork(system, id, spectral, options)));
  // The kernels' rates taken again; what the rounds' own threaded runs measured (thread start, phase synchronisation,
  // the threads' slowdown) stays as the first calibration had it, so the second prices the runs from the kernels alone.
  const calibrationAfter = {
    ...measureCalibration(),
    threadStartSeconds: calibration.threadStartSeconds,
    phaseSyncSeconds: calibration.phaseSyncSeconds,
    threadSlowdown: calibration.threadSlowdown,
  };
  const tAfter = timeToSolution({ system: systemCost(system), rates: analysis.rates, tolerance: 1e-8, calibration: calibrationAfter });
  report.calibrationAfter = calibrationAfter;
  console.log(
    `  calibration after the rounds: CSR pass in cache ${(calibrationAfter.bytesPerSecondInCache / 1e9).toFixed(1)} GB/s ` +
      `(${(calibration.bytesPerSecondInCache / 1e9).toFixed(1)} before), dense in cache ` +
      `${(calibrationAfter.flopsPerSecondInCache / 1e9).toFixed(1)} GFLOP/s (${(calibration.flopsPerSecondInCache / 1e9).toFixed(1)} before)`,
  );
  for (const id of ALGORITHM_IDS) {
    const runs = samples.get(id) ?? [];
    const perIteration = runs.map((s) => s.iterationMs);
    const measured = median(perIteration) / 1000;
    const start = median(runs.map((s) => s.startMs)) / 1000;
    const predicted = t[id].secondsPerIteration;
    const predictedAfter = tAfter[id].secondsPerIteration;
    const spread = Math.max(...perIteration) / Math.min(...perIteration);
    const cpu = median(runs.map((s) => s.cpuMs)) / 1000;
    report.perIteration.push({
      algorithm: id,
      threads: runs[0].result.threads ?? 1,
      predictedSeconds: predicted,
      measuredSeconds: measured,
      spread,
      predictedAfterSeconds: predictedAfter,
    });
    console.log(
      `  ${id.padEnd(8)} predicted ${(predicted * 1000).toFixed(3)} ms/it, measured ${(measured * 1000).toFixed(3)} ms/it ` +
        `(threads ${runs[0].result.threads ?? 1}, spread ${spread.toFixed(2)}), ratio ${(predicted / measured).toFixed(2)} ` +
        `(${(predictedAfter / measured).toFixed(2)} calibrated after), ` +
        `cpu ${(cpu * 1000).toFixed(3)} ms/it (ratio ${(predicted / cpu).toFixed(2)}); ` +
        `start predicted ${(((t[id] as { startSeconds?: number }).startSeconds ?? 0) * 1000).toFixed(1)} ms, measured ${(start * 1000).toFixed(1)} ms`,
    );
  }
  if (converge <= 0) return;
  for (const id of ['apc', 'dhbm'] as const) {
    const solve = timed(runAlgorithmWork(system, id, spectral, { tolerance: 1e-8, maxIterations: converge }));
    const seconds = t[id].seconds;
    report.converged.push({
      algorithm: id,
      status: solve.result.status,
      iterations: solve.result.iterations,
      predictedIterations: t[id].iterations,
      predictedSeconds: seconds,
      measuredSeconds: solve.totalMs / 1000,
    });
    if (solve.result.status === 'converged' && seconds !== null) {
      console.log(
        `  ${id} to 1e-8: predicted ${t[id].iterations} it ${(seconds * 1000).toFixed(1)} ms, measured ${solve.result.iterations} it ` +
          `${solve.totalMs.toFixed(1)} ms, ratio ${(seconds / (solve.totalMs / 1000)).toFixed(2)}`,
      );
    } else console.log(`  ${id} to 1e-8: ${solve.result.status} after ${solve.result.iterations} (predicted ${String(t[id].iterations)})`);
  }
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'dense-n': { type: 'string', default: '1000' },
      'dense-m': { type: 'string', default: '10' },
      'csr-k': { type: 'string', default: '200' },
      'csr-m': { type: 'string', default: '20' },
      iterations: { type: 'string', default: '1000' },
      rounds: { type: 'string', default: '3' },
      converge: { type: 'string', default: '5000' },
      'skip-dense': { type: 'boolean', default: false },
      'skip-csr': { type: 'boolean', default: false },
      threads: { type: 'string', default: 'auto' },
      json: { type: 'boolean', default: false },
    },
  });
  const backend = (positionals[0] ?? 'typescript') as BackendName;
  console.log(JSON.stringify(selectBackend(backend)));
  if (values.threads !== 'auto') setSolverThreads(Number(values.threads));
  const iterations = Number(values.iterations);
  const rounds = Number(values.rounds);
  const converge = Number(values.converge);
  const n = Number(values['dense-n']);
  if (!values['skip-dense']) {
    measure(
      `dense gaussian n=${n} m=${values['dense-m']}`,
      generateMatrix({ generator: 'gaussian', n, mean: 1, std: 1, seed: 1 }),
      Number(values['dense-m']),
      iterations,
      rounds,
      converge,
    );
  }
  const k = Number(values['csr-k']);
  if (!values['skip-csr'])
    measure(`CSR Poisson n=${k * k} m=${values['csr-m']}`, poisson2d(k), Number(values['csr-m']), iterations, rounds, converge);
  if (values.json) console.log(JSON.stringify({ backend, problems } satisfies TimeToSolutionReport));
}

main();
