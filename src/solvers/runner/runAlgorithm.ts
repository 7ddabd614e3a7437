/**
 * The shared driver of every algorithm (in the spirit of PETSc's KSPSolve): merge the user's
 * parameters over the optimal ones, validate them, iterate the method, record the trace, and stop on
 *  - converged:      |A x - b| / |b| <= tolerance (the residual the machines report each step), for
 *                    parameters under which the iteration is stable (theoretical rate < 1). With a
 *                    spectral radius >= 1 some error modes grow; from the standard start they may be
 *                    excited only by rounding (APC with gamma and eta swapped: the machines' null-space
 *                    modes, eigenvalue 1 - gamma, are absent from x_i(0) - x* = -P_i x*), so the estimate
 *                    can meet the tolerance before they surface. Such a run is not reported converged:
 *                    it goes on until the growth is observed (diverged) or maxIterations;
 *  - max-iterations: maxIterations steps done;
 *  - diverged:       a non-finite residual, error or consensus distance, or the relative residual,
 *                    relative error or consensus distance grown past DIVERGENCE_FACTOR (1e8) times
 *                    its initial value (APC's machines can run away while xbar still looks fine);
 *  - cancelled:      options.signal aborted (checked before every iteration), or a CancelledError
 *                    thrown into the generator at a yield by runCooperatively.
 * The generator yields { phase: 'solve', algorithm, iteration, relativeResidual } after every iteration.
 * startRun's handle also snapshots the run whenever it waits at such a yield, and a run given a
 * snapshot (`resumeFrom`) goes on from it to the end the uninterrupted run reaches (./snapshot.ts).
 */
import { getAlgorithm, type AlgorithmId } from '../algorithms/registry.js';
import type { Parameters, SpectralData } from '../algorithms/types.js';
import type { Work, WorkProgress } from '../cooperative.js';
import type { SolverSystem } from '../distributed/distributedSystem.js';
import { CancelledError, InvalidParameterError } from '../errors.js';
import { norm2, relativeResidual } from '../matrix.js';
import { empiricalRateOfTrace } from './empiricalRate.js';
import { sameParameters, SnapshotMismatchError, type RunSnapshot } from './snapshot.js';
import { DEFAULT_TRACE_CAP, TraceRecorder } from './traceRecorder.js';
import type { RunOptions, RunResult, RunStatus } from './types.js';

export { DEFAULT_TRACE_CAP } from './traceRecorder.js';

/** Growth over the initial value (residual, error or consensus distance) that counts as divergence. */
export const DIVERGENCE_FACTOR = 1e8;

/** Default least interval between two onProgress calls of runAlgorithm. */
export const PROGRESS_INTERVAL_MS = 100;

function checkOptions(options: RunOptions): void {
  const { tolerance, maxIterations } = options;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance <= 0) {
    throw new InvalidParameterError(`tolerance is ${String(tolerance)}; it must be a finite number > 0.`, { tolerance: String(tolerance) });
  }
  if (!Number.isSafeInteger(maxIterations) || maxIterations < 0) {
    throw new InvalidParameterError(`maxIterations is ${String(maxIterations)}; it must be an integer >= 0.`, {
      maxIterations: String(maxIterations),
    });
  }
  const { traceCap } = options;
  if (traceCap !== undefined && (!Number.isSafeInteger(traceCap) || traceCap < 2)) {
    throw new InvalidParameterError(
      `traceCap is ${String(traceCap)}; it must be an integer >= 2 (the first and last iterations are always kept).`,
      { traceCap: String(traceCap) },
    );
  }
}

/** Euclidean norm of x - y, relative to |y| (absolute when y = 0). */
function relativeDistance(x: Float64Array, y: Float64Array, normY: number): number {
  let s = 0;
  for (let j = 0; j < x.length; j++) {
    const d = x[j] - y[j];
    s += d * d;
  }
  const d = Math.sqrt(s);
  return normY === 0 ? d : d / normY;
}

const fmt = (x: number): string => (Number.isFinite(x) ? x.toExponential(3) : String(x));

export interface ResumableRunOptions extends RunOptions {
  /**
   * A snapshot of this same run (same system, algorithm, parameters and trace cap) taken by an
   * earlier startRun: the run continues from it. One that does not fit throws SnapshotMismatchError
   * from the first next().
   */
  resumeFrom?: RunSnapshot;
}

/** A run and a way to look at it between iterations. */
export interface ResumableRun {
  readonly work: Work<RunResult>;
  /**
   * The run's state (copies) while its generator waits at a yield, between two iterations; null
   * before the first iteration is done and once the run has ended.
   */
  snapshot(): RunSnapshot | null;
}

export function runAlgorithmWork(system: SolverSystem, id: AlgorithmId, spectral: SpectralData, options: RunOptions): Work<RunResult> {
  return startRun(system, id, spectral, options).work;
}

export function startRun(system: SolverSystem, id: AlgorithmId, spectral: SpectralData, options: ResumableRunOptions): ResumableRun {
  // Set by the generator while it waits at a yield (the only time its state is consistent).
  let takeSnapshot: (() => RunSnapshot) | null = null;
  const work = runWork(system, id, spectral, options, (take) => {
    takeSnapshot = take;
  });
  return { work, snapshot: () => (takeSnapshot === null ? null : takeSnapshot()) };
}

function* runWork(
  system: SolverSystem,
  id: AlgorithmId,
  spectral: SpectralData,
  options: ResumableRunOptions,
  snapshotsAt: (take: (() => RunSnapshot) | null) => void,
): Work<RunResult> {
  const algorithm = getAlgorithm(id);
  checkOptions(options);
  const { tolerance, maxIterations, signal, resumeFrom } = options;
  const parameters: Parameters = { ...algorithm.optimal(spectral).parameters, ...(options.parameters ?? {}) };
  algorithm.validateParameters(parameters);
  const theoreticalRate = algorithm.rate(spectral, parameters);
  const stable = theoreticalRate < 1;
  if (resumeFrom) checkSnapshotFits(resumeFrom, id, parameters, maxIterations);

  const started = performance.now() - (resumeFrom?.elapsedMs ?? 0);
  const method = algorithm.create(system, parameters);
  // The method may hold worker threads: release them however the run ends (stop, cancellation
  // thrown into the generator, an error, or the consumer abandoning the generator via return()).
  try {
    const { A, b, xTrue } = system;
    const normB = norm2(b);
    const residualScale = normB === 0 ? 1 : normB;
    const normXTrue = xTrue === null ? 0 : norm2(xTrue);
    const isConsensus = method.consensusDistance() !== null;
    const recorder = new TraceRecorder(options.traceCap ?? DEFAULT_TRACE_CAP, xTrue !== null, isConsensus);

    let iteration = 0;
    let residual = 0;
    let error: number | null = null;
    let consensus: number | null = null;
    const measure = (): void => {
      residual = Math.sqrt(method.residualNormSquared()) / residualScale;
      error = xTrue === null ? null : relativeDistance(method.estimate, xTrue, normXTrue);
      consensus = method.consensusDistance();
      recorder.record(iteration, residual, error, consensus);
    };

    let initialResidual: number;
    let initialError: number | null;
    let consensusScale: number;
    if (resumeFrom) {
      method.restore(resumeFrom.method);
      recorder.restore(resumeFrom.trace);
      iteration = resumeFrom.iteration;
      ({ residual, error, consensus, initialResidual, initialError, consensusScale } = resumeFrom.measures);
      if ((error === null) !== (xTrue === null) || (consensus === null) !== !isConsensus) {
        throw new SnapshotMismatchError('its measures are not those of this system and method');
      }
    } else {
      measure();
      initialResidual = residual;
      initialError = error;
      // The consensus distance is measured against the size of the machines' estimates at the start.
      consensusScale = consensus === null ? 0 : Math.max(consensus, norm2(method.estimate));
    }
    const snapshot = (): RunSnapshot => ({
      algorithm: id,
      parameters: { ...parameters },
      iteration,
      elapsedMs: performance.now() - started,
      measures: { residual, error, consensus, initialResidual, initialError, consensusScale },
      trace: recorder.state(),
      method: method.state(),
    });

    let status: RunStatus | null = null;
    let stopReason = '';
    const divergence = (): string | null => {
      if (!Number.isFinite(residual)) return `the relative residual became ${residual}`;
      if (error !== null && !Number.isFinite(error)) return `the relative error became ${error}`;
      if (consensus !== null && !Number.isFinite(consensus)) return `the machines' estimates became non-finite`;
      if (residual > DIVERGENCE_FACTOR * initialResidual) {
        return `the relative residual ${fmt(residual)} exceeds ${DIVERGENCE_FACTOR.toExponential(0)} times its initial value ${fmt(initialResidual)}`;
      }
      if (error !== null && initialError !== null && error > DIVERGENCE_FACTOR * Math.max(initialError, Number.MIN_VALUE)) {
        return `the relative error ${fmt(error)} exceeds ${DIVERGENCE_FACTOR.toExponential(0)} times its initial value ${fmt(initialError)}`;
      }
      if (consensus !== null && consensusScale > 0 && consensus > DIVERGENCE_FACTOR * consensusScale) {
        return (
          `the largest distance between a machine's estimate and the taskmaster's, ${fmt(consensus)}, ` +
          `exceeds ${DIVERGENCE_FACTOR.toExponential(0)} times its initial scale ${fmt(consensusScale)}`
        );
      }
      return null;
    };
    const testStop = (): void => {
      const diverged = divergence();
      if (diverged !== null) {
        status = 'diverged';
        stopReason = `Diverged at iteration ${iteration}: ${diverged}.`;
        if (!stable) stopReason += ` The spectral radius of the iteration for these parameters is ${fmt(theoreticalRate)} >= 1.`;
      } else if (residual <= tolerance && stable) {
        status = 'converged';
        stopReason = `Converged after ${iteration} iterations: relative residual ${fmt(residual)} <= tolerance ${fmt(tolerance)}.`;
      }
    };

    // A snapshot is taken when the run was not stopping: a resumed run goes straight to its next iteration.
    if (!resumeFrom) testStop();
    while (status === null) {
      if (signal?.aborted) {
        status = 'cancelled';
        stopReason = `Cancelled after ${iteration} iterations (the abort signal fired); relative residual ${fmt(residual)}.`;
        break;
      }
      if (iteration >= maxIterations) {
        status = 'max-iterations';
        stopReason =
          residual <= tolerance
            ? `Stopped at maxIterations = ${maxIterations}: the relative residual ${fmt(residual)} meets the tolerance, ` +
              `but the iteration is unstable for these parameters (spectral radius ${fmt(theoreticalRate)} >= 1), ` +
              'so this is not reported as convergence.'
            : `Stopped at maxIterations = ${maxIterations}: relative residual ${fmt(residual)} > tolerance ${fmt(tolerance)}.`;
        break;
      }
      method.step();
      iteration++;
      measure();
      testStop();
      if (status !== null) break;
      snapshotsAt(snapshot);
      try {
        yield { phase: 'solve', algorithm: id, iteration, relativeResidual: residual } satisfies WorkProgress;
      } catch (thrown) {
        if (!(thrown instanceof CancelledError)) throw thrown;
        status = 'cancelled';
        stopReason = `Cancelled after ${iteration} iterations; relative residual ${fmt(residual)}.`;
      } finally {
        snapshotsAt(null);
      }
    }

    const solution = Float64Array.from(method.estimate);
    const trace = recorder.finish();
    return {
      algorithm: id,
      status,
      iterations: iteration,
      relativeResidual: relativeResidual(A, solution, b),
      relativeError: xTrue === null ? null : relativeDistance(solution, xTrue, normXTrue),
      empiricalRate: empiricalRateOfTrace(trace),
      theoreticalRate,
      parameters,
      wallTimeMs: performance.now() - started,
      threads: method.threads ?? 1,
      stopReason,
      solution,
      trace,
    };
  } finally {
    method.dispose?.();
  }
}

/** Throws SnapshotMismatchError unless `snapshot` is of a run of `id` with these very parameters that could go on. */
function checkSnapshotFits(snapshot: RunSnapshot, id: AlgorithmId, parameters: Parameters, maxIterations: number): void {
  if (snapshot.algorithm !== id) throw new SnapshotMismatchError(`it is of a ${snapshot.algorithm} run, this run is ${id}`);
  if (!sameParameters(snapshot.parameters, parameters)) {
    throw new SnapshotMismatchError(
      `its parameters ${JSON.stringify(snapshot.parameters)} are not this run's ${JSON.stringify(parameters)}`,
    );
  }
  if (!Number.isSafeInteger(snapshot.iteration) || snapshot.iteration < 1 || snapshot.iteration > maxIterations) {
    throw new SnapshotMismatchError(
      `its iteration ${snapshot.iteration} is not one this run (maxIterations ${maxIterations}) could go on from`,
    );
  }
}

/** Runs to completion synchronously; onProgress is called at most every progressIntervalMs (default 100 ms). */
export function runAlgorithm(
  system: SolverSystem,
  id: AlgorithmId,
  spectral: SpectralData,
  options: RunOptions & { onProgress?: (progress: WorkProgress) => void; progressIntervalMs?: number },
): RunResult {
  const { onProgress } = options;
  const interval = options.progressIntervalMs ?? PROGRESS_INTERVAL_MS;
  const work = runAlgorithmWork(system, id, spectral, options);
  let lastReport = -Infinity;
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
    if (onProgress && step.value !== undefined) {
      const now = performance.now();
      if (now - lastReport >= interval) {
        lastReport = now;
        onProgress(step.value);
      }
    }
  }
}
