/**
 * The computation of one job, free of Redis and BullMQ: build the distributed system, analyse
 * it, then (advise jobs) compare candidate partitions, all through runCooperatively so that the
 * process stays responsive (cancel messages, progress reports) during long factorizations and runs.
 * A solve job computes what its runs need first, the spectral data (L, mu and S's ends: the
 * analysis' 'conditioning' phase), runs each requested algorithm, then the rest of the analysis
 * ('principal-angles', 'local-angles'), which reuses what the first stage computed; when every
 * requested algorithm's parameters are given, the runs start right after the setup, without the
 * spectral estimates, and their rate, eps kappa(A) and growth diagnosis come from the analysis after
 * them (theoryOfRun); a run among them that converged under parameters the analysis finds unstable
 * is run again with the spectral data, so that it ends as it would have with them (never converged).
 * Either way the result's analysis is the one an analyze job reports. A solve
 * cancelled before its analysis is complete keeps the summaries of its runs, with analysisCompleted
 * false and the spectral data they used instead of the analysis.
 * Each stage runs on the job's share of the host's cores (threadBudget).
 * With checkpoints (./checkpoints.ts) an attempt saves what it has done every interval, and an
 * attempt given an earlier one's checkpoint takes its spectral data, analysis and finished runs as
 * they are and resumes the run under way from its snapshot: the outcome is the uninterrupted attempt's.
 */
import { availableParallelism } from 'node:os';
import type { AlgorithmId } from '../solvers/algorithms/registry.js';
import { algorithms as algorithmRegistry } from '../solvers/algorithms/registry.js';
import type { SpectralData } from '../solvers/algorithms/types.js';
import { analyzeWork, spectralDataOf, spectralStageWork, type StagedAnalysis } from '../solvers/analysis/analyze.js';
import type { Analysis, Calibration } from '../solvers/analysis/types.js';
import { systemCost, timeToSolution, withTimeToSolution } from '../solvers/analysis/timeToSolution.js';
import { calibrationDue, currentCalibration } from '../solvers/analysis/calibration.js';
import { runCooperatively, type CooperativeOptions, type WorkProgress } from '../solvers/cooperative.js';
import { buildDistributedSystemWork, type DistributedSystem } from '../solvers/distributed/distributedSystem.js';
import { CancelledError } from '../solvers/errors.js';
import { createProblem } from '../solvers/input/createProblem.js';
import { activeBackend, giveMemoryBack, nativeBlas } from '../solvers/linalg/backend.js';
import { setSolverThreads } from '../solvers/parallel/threads.js';
import { adviseWork, luHandOver } from '../solvers/partitioning/advisor.js';
import type { DenseProblem, CsrProblem } from '../solvers/problem.js';
import { nnzOf } from '../solvers/sparse/csr.js';
import { startMultipleRhsRun, type ResumableBlockRun } from '../solvers/runner/multipleRhs.js';
import { everyParameterGiven, stableUnder, startRun, theoryOfRun, type ResumableRun } from '../solvers/runner/runAlgorithm.js';
import { isBlockRunSnapshot, SnapshotMismatchError, type BlockRunSnapshot, type RunSnapshot } from '../solvers/runner/snapshot.js';
import type { RunResult } from '../solvers/runner/types.js';
import { partialResult, type JobCheckpointing } from './checkpoints.js';
import { RunningJobs } from './runningJobs.js';
import type { JobCheckpoint } from './store/checkpointCodec.js';
import type { RunOutput } from './store/jobStore.js';
import type { MatrixSource, ReadyJob } from './store/readyJob.js';
import type { JobResult, RunColumnSummary, RunSummary } from './types.js';

/** What the computation reads of a ready job. */
export type ComputeInput = Pick<ReadyJob, 'type' | 'matrix' | 'rhs' | 'partition' | 'algorithms' | 'options'> &
  Partial<Pick<ReadyJob, 'initialGuess' | 'knownSolution'>>;

export interface ComputeSettings {
  signal: AbortSignal;
  onProgress: (progress: WorkProgress) => void;
  traceCap: number;
  /** Longest stretch of computation between two returns to the event loop. */
  sliceMs?: number;
  /** Where the jobs running on this host are counted for the thread budget (default: the host's registry). */
  runningJobs?: RunningJobs;
  /** Checkpoints of this attempt; absent: nothing saved, nothing resumed. */
  checkpoints?: JobCheckpointing;
}

export interface ComputeOutcome {
  status: 'succeeded' | 'cancelled';
  /** Absent when cancelled before the runs could start (the setup, the spectral data). */
  result?: JobResult;
  runs: RunOutput[];
}

/**
 * A run's summary and outputs: of its one column, or (several right-hand sides) column 0's with
 * every column's summary in `columns` and the other columns' outputs.
 */
function endedRun(algorithm: AlgorithmId, columns: RunResult[], several: boolean): { summary: RunSummary; output: RunOutput } {
  const [first, ...others] = columns;
  if (!several) return { summary: summarizeRun(first), output: { algorithm, solution: first.solution, trace: first.trace } };
  return {
    summary: { ...summarizeRun(first), columns: columns.map(summarizeRun) },
    output: {
      algorithm,
      solution: first.solution,
      trace: first.trace,
      otherColumns: others.map((column) => ({ solution: column.solution, trace: column.trace })),
    },
  };
}

function summarizeRun(run: RunResult): RunColumnSummary {
  return {
    status: run.status,
    iterations: run.iterations,
    relativeResidual: run.relativeResidual,
    relativeError: run.relativeError,
    empiricalRate: run.empiricalRate,
    // NaN: a run started without the spectral data, filled in by withTheory once the analysis is done.
    theoreticalRate: Number.isNaN(run.theoreticalRate) ? null : run.theoreticalRate,
    parameters: run.parameters,
    wallTimeMs: run.wallTimeMs,
    stopReason: run.stopReason,
    attainableAccuracy: Number.isFinite(run.attainableAccuracy) ? run.attainableAccuracy : null,
    growth: run.growth,
    tracePoints: run.trace.iteration.length,
    ...(run.target === undefined ? {} : { target: run.target }),
  };
}

/** A summary of a run started without the spectral data, with what the analysis says of it (theoryOfRun). */
function withTheory<T extends RunColumnSummary>(
  summary: T,
  algorithm: AlgorithmId,
  spectral: SpectralData,
  options: ComputeInput['options'],
): T {
  const { status, parameters, relativeResidual, stopReason } = summary;
  const run = {
    algorithm,
    status,
    parameters,
    relativeResidual: relativeResidual ?? Number.NaN,
    stopReason,
    growth: summary.growth ?? null,
  };
  const theory = theoryOfRun(run, spectral, options);
  return { ...summary, ...theory, attainableAccuracy: Number.isFinite(theory.attainableAccuracy) ? theory.attainableAccuracy : null };
}

/** Whether a solve job's runs start without the spectral estimates: every requested algorithm's parameters are given. */
export function runsSkipEstimates(input: Pick<ComputeInput, 'type' | 'algorithms' | 'options'>): boolean {
  return (
    input.type === 'solve' &&
    input.algorithms.length > 0 &&
    input.algorithms.every((id) => everyParameterGiven(algorithmRegistry[id], input.options.parameters[id]))
  );
}

/**
 * Threads for a job's next stage: the host's cores shared by the jobs running on it now. A lone job
 * iterates on every core, as the library does by default, so an iteration costs what the library's
 * does (it had cores / WORKER_CONCURRENCY before: half the cores of a 2-core host by default, and
 * twice the library's time per iteration at n = 2000); jobs running together split the cores,
 * because threads beyond them only wait for each other (the solver engine's barriers, OpenBLAS's
 * spinning threads).
 */
export function threadBudget(runningJobs: number, cores: number = availableParallelism()): number {
  return Math.max(1, Math.floor(cores / Math.max(1, runningJobs)));
}

let hostRunningJobs: RunningJobs | undefined;

/**
 * A job whose matrix stores at most this many entries (dense n <= 128) runs on one thread and is not counted among
 * the host's running jobs: none of its stages reaches a threaded size (a run's least work per iteration is 250,000
 * entries, a sparse setup's tasks 500,000 nonzeros: ../solvers/parallel/threads.ts), and the registry's file calls
 * (~0.15 ms of CPU a job) were a twentieth of a tiny job's service CPU.
 */
export const ONE_THREAD_MAX_ENTRIES = 16_384;

/** A job's share of the host's cores, asked again before each stage; `leave` when the job ends. */
interface ThreadShare {
  threads(): number;
  leave(): void;
}

/** A share counted among the host's running jobs from now until `leave`. */
function countedShare(runningJobs: RunningJobs): ThreadShare {
  const leave = runningJobs.enter();
  return { threads: () => threadBudget(runningJobs.count()), leave };
}

function threadShareOf(matrix: MatrixSource, runningJobs: RunningJobs): ThreadShare {
  const entries = matrix.storage === 'dense' ? matrix.A.rows * matrix.A.cols : nnzOf(matrix.A);
  return entries <= ONE_THREAD_MAX_ENTRIES ? { threads: () => 1, leave: () => undefined } : countedShare(runningJobs);
}

/**
 * Sets the solver's threads (and OpenBLAS's, on the native backend) to the budget, decided again
 * before every stage (the factorizations, the analysis, each run): a job started alone gives cores
 * back at its next stage once others start, and a stage already running keeps its threads.
 */
function applyThreadBudget(share: ThreadShare): number {
  const threads = share.threads();
  setSolverThreads(threads);
  if (activeBackend() === 'native') nativeBlas()?.setThreads(threads);
  return threads;
}

/** Runs `stage` counted among the host's running jobs, on its share of the cores (the parts of a split analysis, ./splitAnalysis/). */
export async function withThreadBudget<T>(stage: () => Promise<T>): Promise<T> {
  const share = countedShare((hostRunningJobs ??= new RunningJobs()));
  try {
    applyThreadBudget(share);
    return await stage();
  } finally {
    share.leave();
  }
}

/**
 * This process' calibration (../solvers/analysis/calibration.ts). A fresh one's blocks (40 MB) are let go of only once
 * the addon's handles to them are finalized, which waits for the event loop: the job turns it once between two
 * collections, so that its process (every later job in it read against JOB_MEMORY_LIMIT_MB) does not keep them.
 */
async function processCalibration(): Promise<Calibration> {
  const measuring = calibrationDue();
  const calibration = currentCalibration();
  if (measuring) {
    giveMemoryBack();
    await new Promise((resolve) => setImmediate(resolve));
    giveMemoryBack();
  }
  return calibration;
}

/**
 * The right-hand sides of a job given several (stored column after column), else null: the system
 * is set up once with the first, and the runs iterate all of them (../solvers/runner/multipleRhs.ts).
 */
function rightHandSides(input: ComputeInput): Float64Array[] | null {
  const { rhs } = input;
  const n = input.matrix.A.rows;
  if (rhs === null || rhs.length <= n) return null;
  return Array.from({ length: rhs.length / n }, (_, j) => rhs.subarray(j * n, (j + 1) * n));
}

function problemOf(input: ComputeInput): DenseProblem | CsrProblem {
  const rhs = rightHandSides(input)?.[0] ?? input.rhs;
  const xTrue = input.knownSolution ?? null;
  switch (input.matrix.storage) {
    case 'dense':
      return createProblem({ A: input.matrix.A, rhs, xTrue, partition: input.partition });
    case 'csr':
      return createProblem({ A: input.matrix.A, rhs, xTrue, partition: input.partition });
  }
}

export async function computeJob(input: ComputeInput, settings: ComputeSettings): Promise<ComputeOutcome> {
  const share = threadShareOf(input.matrix, settings.runningJobs ?? (hostRunningJobs ??= new RunningJobs()));
  try {
    return await computeStages(input, settings, share);
  } finally {
    share.leave();
  }
}

/**
 * When an attempt saves its checkpoint: at most once per interval, looked at while a run waits
 * between two iterations (from the progress path: every time slice) and when a stage ends.
 */
class CheckpointSchedule {
  private lastSave = performance.now();
  /** The analysis and the runs that ended, as saved with every checkpoint. */
  readonly done: JobCheckpoint = { analysis: null, runs: [], current: null };

  constructor(private readonly checkpoints: JobCheckpointing | undefined) {}

  /**
   * Saves the work done when the interval has passed, with the snapshot of the run under way
   * (`running`; null between runs). A run that cannot be snapshotted now is looked at again later:
   * saving without it would replace a checkpoint that has it.
   */
  saveIfDue(running: ResumableRun | ResumableBlockRun | null): void {
    const { checkpoints } = this;
    if (checkpoints === undefined || checkpoints.intervalMs === 0 || performance.now() - this.lastSave < checkpoints.intervalMs) return;
    const current = running === null ? null : running.snapshot();
    if (running !== null && current === null) return;
    checkpoints.save({ ...this.done, current });
    this.lastSave = performance.now();
  }
}

async function computeStages(input: ComputeInput, settings: ComputeSettings, share: ThreadShare): Promise<ComputeOutcome> {
  const { signal } = settings;
  const sliceMs = settings.sliceMs ?? 20;
  const resume = settings.checkpoints?.resumeFrom ?? null;
  const schedule = new CheckpointSchedule(settings.checkpoints);
  let running: ResumableRun | ResumableBlockRun | null = null;
  // Progress is throttled by the caller; hand it every snapshot the work yields, at slice pace.
  const onProgress = (progress: WorkProgress): void => {
    settings.onProgress(progress);
    // runCooperatively reports while the work waits at a yield: a run can be snapshotted now.
    if (running !== null) schedule.saveIfDue(running);
  };
  const cooperative: CooperativeOptions = { signal, onProgress, progressIntervalMs: sliceMs, sliceMs };
  const problem = problemOf(input);
  const spectralFirst = input.type === 'solve';
  const skipEstimates = runsSkipEstimates(input);

  let analysis: Analysis | null = resume?.analysis ?? null;
  let staged: StagedAnalysis | null = null;
  // What the runs read (null: every parameter given, none read); a resumed attempt takes it from its checkpoint.
  let spectral: SpectralData | null = null;
  // An advise job's analysis hands its factorization of A (a sparse LU, a dense D M) to the advice, which would factor again.
  const handOver = input.type === 'advise' ? luHandOver() : null;
  let system: DistributedSystem;
  try {
    applyThreadBudget(share);
    system = await runCooperatively(buildDistributedSystemWork(problem), cooperative);
    if (spectralFirst) {
      if (!skipEstimates) spectral = analysis === null ? (resume?.spectral ?? null) : spectralDataOf(analysis);
      if (!skipEstimates && spectral === null) {
        applyThreadBudget(share);
        staged = await runCooperatively(spectralStageWork(system, { tolerance: input.options.tolerance }), cooperative);
        spectral = staged.spectral;
      }
      schedule.done.spectral = spectral;
      schedule.done.analysis = analysis;
    } else {
      analysis = await completeAnalysis();
      spectral = spectralDataOf(analysis);
    }
  } catch (error) {
    if (error instanceof CancelledError) return { status: 'cancelled', runs: [] };
    throw error;
  }

  /** The whole analysis: the rest of the staged one, else all of it (a resumed attempt, or runs without estimates). */
  async function completeAnalysis(): Promise<Analysis> {
    let done = analysis;
    if (done === null) {
      applyThreadBudget(share);
      done = await runCooperatively(
        staged === null
          ? analyzeWork(system, { tolerance: input.options.tolerance, keepLu: handOver?.keepLu, keepFactored: handOver?.keepFactored })
          : staged.rest(),
        cooperative,
      );
    }
    if (done.timeToSolution === undefined) {
      // Priced on the kernels this worker runs (calibrated once per process), for the job's deployment if it named one.
      const t = timeToSolution({
        system: systemCost(system),
        rates: done.rates,
        tolerance: done.recommendation.tolerance,
        calibration: await processCalibration(),
        deployment: input.options.deployment,
      });
      done = withTimeToSolution(done, t, input.options.maxIterations);
    }
    schedule.done.analysis = done;
    return done;
  }

  const summaries: JobResult['runs'] = {};
  const runs: RunOutput[] = [];
  let cancelled = false;
  // A solve's run of `algorithm` again from its start (the runs that began without the spectral data, below).
  let runAgain: ((algorithm: AlgorithmId) => Promise<{ summary: RunSummary; output: RunOutput }>) | null = null;
  if (input.type === 'advise' && analysis !== null) {
    const result: JobResult = { analysisCompleted: true, analysis, runs: summaries };
    try {
      applyThreadBudget(share);
      result.advice = await runCooperatively(
        adviseWork(problem, {
          imbalance: input.options.imbalance,
          refinementTries: input.options.refinementTries,
          calibration: await processCalibration(),
          tolerance: analysis.recommendation.tolerance,
          // The given partition's kappa(S) and theta_H are the analysis' own: not computed again.
          given: {
            system,
            spectrum: { kappaS: analysis.conditioning.kappaS, thetaH: analysis.heterogeneity.thetaH },
            kappaAtA: analysis.conditioning.kappaAtA,
          },
          takeLu: handOver?.takeLu,
          takeFactored: handOver?.takeFactored,
          // Each candidate's system and the LU of A (~0.4 and ~1 GiB at n = 10^6) given back before the next is made
          // (a collection: ./worker.ts starts job processes with --expose-gc).
          released: giveMemoryBack,
        }),
        cooperative,
      );
    } catch (error) {
      // The analysis of the given partition is done: a cancelled advice keeps it.
      if (error instanceof CancelledError) return { status: 'cancelled', result, runs };
      throw error;
    }
    return { status: 'succeeded', result, runs };
  }
  if (input.type === 'solve') {
    schedule.saveIfDue(null);
    const rhs = rightHandSides(input);
    const runOptions = (algorithm: AlgorithmId) => {
      const { options } = input;
      return {
        tolerance: options.tolerance,
        absoluteTolerance: options.absoluteTolerance,
        errorTolerance: options.errorTolerance,
        maxIterations: options.maxIterations,
        maxWallTimeMs: options.maxWallTimeMs,
        divergenceTolerance: options.divergenceTolerance,
        stopOnStagnation: options.stopOnStagnation,
        initialGuess: input.initialGuess ?? undefined,
        parameters: options.parameters[algorithm],
        traceCap: settings.traceCap,
        signal,
      };
    };
    /** A run of `algorithm` over the job's right-hand side, or all of them: one RunResult per column. */
    const runOnce = async (algorithm: AlgorithmId, resumeFrom: RunSnapshot | BlockRunSnapshot | undefined): Promise<RunResult[]> => {
      applyThreadBudget(share);
      const options = runOptions(algorithm);
      if (rhs === null) {
        const run = startRun(system, algorithm, spectral, { ...options, resumeFrom: resumeFrom as RunSnapshot | undefined });
        running = run;
        try {
          return [await runCooperatively(run.work, cooperative)];
        } finally {
          running = null;
        }
      }
      const run = startMultipleRhsRun(
        system,
        algorithm,
        spectral,
        { ...options, resumeFrom: resumeFrom as BlockRunSnapshot | undefined },
        rhs,
      );
      running = run;
      try {
        return await runCooperatively(run.work, cooperative);
      } finally {
        running = null;
      }
    };
    runAgain = async (algorithm) => endedRun(algorithm, await runOnce(algorithm, undefined), rhs !== null);
    for (const [k, algorithm] of input.algorithms.entries()) {
      if (signal.aborted) {
        cancelled = true;
        break;
      }
      let ended: { summary: RunSummary; output: RunOutput };
      const finished = resume?.runs[k];
      // Several right-hand sides: a finished run holds every column's outputs.
      if (finished?.algorithm === algorithm && (finished.otherColumns?.length ?? 0) === (rhs?.length ?? 1) - 1) {
        const { summary, solution, trace, otherColumns } = finished;
        ended = { summary, output: { algorithm, solution, trace, ...(otherColumns === undefined ? {} : { otherColumns }) } };
      } else {
        // The run the checkpoint caught under way is the one after its finished runs.
        const current = resume?.current ?? null;
        const snapshot =
          k === resume?.runs.length && current?.algorithm === algorithm && isBlockRunSnapshot(current) === (rhs !== null)
            ? current
            : undefined;
        let columns: RunResult[];
        try {
          columns = await runOnce(algorithm, snapshot).catch((error: unknown) => {
            if (!(error instanceof SnapshotMismatchError) || snapshot === undefined) throw error;
            settings.checkpoints?.discarded(error.message);
            return runOnce(algorithm, undefined);
          });
        } catch (error) {
          // Runs report cancellation as a status; a CancelledError here means the run had not started.
          if (error instanceof CancelledError) {
            cancelled = true;
            break;
          }
          throw error;
        }
        ended = endedRun(algorithm, columns, rhs !== null);
      }
      const { summary, output } = ended;
      summaries[algorithm] = summary;
      runs.push(output);
      if (summary.status === 'cancelled' || summary.columns?.some((column) => column.status === 'cancelled')) {
        cancelled = true;
        break;
      }
      schedule.done.runs.push({ ...output, summary });
      schedule.saveIfDue(null);
    }
  }
  // Cancelled before the analysis was complete (during the runs, or during the rest of the analysis after them): the runs as they ended.
  const partial = (): ComputeOutcome => ({ status: 'cancelled', result: partialResult(summaries, spectral), runs });
  if (cancelled && analysis === null) return partial();
  try {
    analysis = await completeAnalysis();
  } catch (error) {
    if (error instanceof CancelledError) return partial();
    throw error;
  }
  if (skipEstimates) {
    const known = spectralDataOf(analysis);
    for (const [k, output] of runs.entries()) {
      const id = output.algorithm;
      const summary = summaries[id]!;
      const converged = summary.status === 'converged' || summary.columns?.some((column) => column.status === 'converged');
      // Parameters the analysis finds unstable (APC's gamma and eta swapped, spectral radius 1.7): a run that met the
      // tolerance before their modes surfaced would read converged, where the same run with the analysis first goes on
      // to diverged. Run again with the spectral data, it ends as that run does, whatever else the job asked for.
      const theory = (): RunSummary => {
        const columns = summary.columns?.map((column) => withTheory(column, id, known, input.options));
        return { ...withTheory(summary, id, known, input.options), ...(columns === undefined ? {} : { columns }) };
      };
      if (!converged || cancelled || stableUnder(algorithmRegistry[id], known, summary.parameters)) {
        summaries[id] = theory();
        continue;
      }
      spectral = known;
      const again = await runAgain!(id).catch((error: unknown) => {
        if (error instanceof CancelledError) return null;
        throw error;
      });
      // Cancelled before it started: the first run, with what the analysis says of it.
      summaries[id] = again?.summary ?? theory();
      if (again !== null) runs[k] = again.output;
      if (again === null || again.summary.status === 'cancelled') cancelled = true;
    }
  }
  return { status: cancelled ? 'cancelled' : 'succeeded', result: { analysisCompleted: true, analysis, runs: summaries }, runs };
}
