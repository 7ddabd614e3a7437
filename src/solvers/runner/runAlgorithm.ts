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
 */
import { getAlgorithm, type AlgorithmId } from '../algorithms/registry.js';
import type { Parameters, SpectralData } from '../algorithms/types.js';
import type { Work, WorkProgress } from '../cooperative.js';
import type { SolverSystem } from '../distributed/distributedSystem.js';
import { CancelledError, InvalidParameterError } from '../errors.js';
import { norm2, relativeResidual } from '../matrix.js';
import { empiricalRateOfTrace } from './empiricalRate.js';
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

export function* runAlgorithmWork(system: SolverSystem, id: AlgorithmId, spectral: SpectralData, options: RunOptions): Work<RunResult> {
  const algorithm = getAlgorithm(id);
  checkOptions(options);
  const { tolerance, maxIterations, signal } = options;
  const parameters: Parameters = { ...algorithm.optimal(spectral).parameters, ...(options.parameters ?? {}) };
  algorithm.validateParameters(parameters);
  const theoreticalRate = algorithm.rate(spectral, parameters);
  const stable = theoreticalRate < 1;

  const started = performance.now();
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

    measure();
    const initialResidual = residual;
    const initialError = error;
    // The consensus distance is measured against the size of the machines' estimates at the start.
    const consensusScale = consensus === null ? 0 : Math.max(consensus, norm2(method.estimate));

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

    testStop();
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
      try {
        yield { phase: 'solve', algorithm: id, iteration, relativeResidual: residual } satisfies WorkProgress;
      } catch (thrown) {
        if (!(thrown instanceof CancelledError)) throw thrown;
        status = 'cancelled';
        stopReason = `Cancelled after ${iteration} iterations; relative residual ${fmt(residual)}.`;
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
