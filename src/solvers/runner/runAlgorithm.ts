// Past 500 lines: one driver, whose stopping tests, growth diagnosis and snapshots all read the same run's state.
/**
 * The shared driver of every algorithm (in the spirit of PETSc's KSPSolve): merge the user's
 * parameters over the optimal ones, validate them, iterate the method from x(0) (0 or the initial
 * guess), record the trace, and stop on (PETSc's KSPConvergedReason, SciPy's rtol/atol):
 *  - converged:      |A x - b| <= max(tolerance |b|, absoluteTolerance) (the residual the machines
 *                    report each step) and, when errorTolerance is given, |x - x*| / |x*| <= it, for
 *                    parameters under which the iteration is stable (theoretical rate < 1). With a
 *                    spectral radius >= 1 some error modes grow; from the standard start they may be
 *                    excited only by rounding (APC with gamma and eta swapped: the machines' null-space
 *                    modes, eigenvalue 1 - gamma, are absent from x_i(0) - x* = -P_i x*), so the estimate
 *                    can meet the tolerance before they surface. Such a run is not reported converged:
 *                    it goes on until the growth is observed (diverged) or a limit;
 *  - max-iterations: maxIterations steps done;
 *  - max-wall-time:  the run has taken maxWallTimeMs (looked at between iterations);
 *  - non-finite:     the residual, error or consensus distance became NaN or infinite;
 *  - diverged:       the relative residual exceeds divergenceTolerance (PETSc's dtol, default 1e5)
 *                    times its initial value, or the relative error or the consensus distance
 *                    DIVERGENCE_FACTOR (1e8) times theirs (APC's machines can run away while xbar
 *                    still looks fine);
 *  - stagnated:      near the attainable accuracy eps kappa(A) (within STAGNATION_NEAR of it), the
 *                    smallest residual seen has not halved over a window of STAGNATION_DECADES decades
 *                    at the theoretical rate (at least STAGNATION_MIN_WINDOW iterations): rounding, not
 *                    the iteration, sets the residual there, so the tolerance is out of reach;
 *  - cancelled:      options.signal aborted (checked before every iteration), or a CancelledError
 *                    thrown into the generator at a yield by runCooperatively.
 * A run that ends unconverged after its residual grew says why when the theory knows: a spectral
 * radius >= 1 (true divergence), or the transient growth of D-HBM and D-NAG, with its predicted size
 * (../algorithms/transient.ts).
 * The generator yields { phase: 'solve', algorithm, iteration, relativeResidual } after every iteration.
 * startRun's handle also snapshots the run whenever it waits at such a yield, and a run given a
 * snapshot (`resumeFrom`) goes on from it to the end the uninterrupted run reaches (./snapshot.ts).
 */
import { getAlgorithm, type AlgorithmId } from '../algorithms/registry.js';
import { attainableAccuracy } from '../algorithms/common.js';
import type { DistributedAlgorithm, IterativeMethod, OptimalTuning, Parameters, SpectralData } from '../algorithms/types.js';
import type { Work, WorkProgress } from '../cooperative.js';
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { isTall, leastSquaresPointsWork } from '../distributed/leastSquares.js';
import { CancelledError, InvalidParameterError } from '../errors.js';
import { norm2, relativeResidual } from '../matrix.js';
import { empiricalRateOfTrace } from './empiricalRate.js';
import { initialMeasures, updateMeasures, type LiveRunMeasures, type RunMeasures } from './runMeasures.js';
import { sameParameters, SnapshotMismatchError, type RunSnapshot } from './snapshot.js';
import { DEFAULT_TRACE_CAP, TraceRecorder } from './traceRecorder.js';
import type { ResidualGrowth, RunOptions, RunResult, RunStatus, RunTarget } from './types.js';
import { closeToOneText, toleranceText } from '../numberText.js';

export { DEFAULT_TRACE_CAP } from './traceRecorder.js';

/** Growth of the relative error or the consensus distance over its initial value that counts as divergence. */
export const DIVERGENCE_FACTOR = 1e8;

/** Default divergenceTolerance: growth of the relative residual over its initial value that counts as divergence (PETSc's dtol). */
export const DEFAULT_DIVERGENCE_TOLERANCE = 1e5;

/** Stagnation is looked for only when the smallest residual is within this factor of eps kappa(A). */
export const STAGNATION_NEAR = 100;
/** The stagnation window: the iterations the theoretical rate needs for this many decades... */
export const STAGNATION_DECADES = 10;
/** ...and at least this many. */
export const STAGNATION_MIN_WINDOW = 200;

/** Default least interval between two onProgress calls of runAlgorithm. */
export const PROGRESS_INTERVAL_MS = 100;

function positiveNumber(name: string, value: number | undefined, least = 0, orEqual = false): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || (orEqual ? value < least : value <= least)) {
    throw new InvalidParameterError(`${name} is ${String(value)}; it must be a finite number ${orEqual ? '>=' : '>'} ${least}.`, {
      [name]: String(value),
    });
  }
}

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
  positiveNumber('absoluteTolerance', options.absoluteTolerance, 0, true);
  positiveNumber('errorTolerance', options.errorTolerance);
  positiveNumber('maxWallTimeMs', options.maxWallTimeMs);
  positiveNumber('divergenceTolerance', options.divergenceTolerance, 1, true);
  const { traceCap } = options;
  if (traceCap !== undefined && (!Number.isSafeInteger(traceCap) || traceCap < 2)) {
    throw new InvalidParameterError(
      `traceCap is ${String(traceCap)}; it must be an integer >= 2 (the first and last iterations are always kept).`,
      { traceCap: String(traceCap) },
    );
  }
}

/**
 * Euclidean norm of x - y, relative to |y| (absolute when y = 0). Measured every iteration when x* is
 * known: four partial sums, so that the loop is not one chain of dependent additions (one sum took
 * ~1.3 ns an entry, 41-54 us an iteration at n = 40,000, a seventh of a CSR gradient method's iteration; now 27-31 us).
 */
function relativeDistance(x: Float64Array, y: Float64Array, normY: number): number {
  const n = x.length;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 4 <= n; j += 4) {
    const d0 = x[j] - y[j];
    const d1 = x[j + 1] - y[j + 1];
    const d2 = x[j + 2] - y[j + 2];
    const d3 = x[j + 3] - y[j + 3];
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; j < n; j++) {
    const d = x[j] - y[j];
    s0 += d * d;
  }
  let d = Math.sqrt(s0 + s1 + (s2 + s3));
  // The squares overflow for a distance above ~1e154 between finite vectors: then scaled (norm2).
  if (d === Infinity && x.every(Number.isFinite)) d = norm2(x.map((value, k) => value - y[k]));
  return normY === 0 ? d : d / normY;
}

const fmt = (x: number): string => (Number.isFinite(x) ? x.toExponential(3) : String(x));
/** "1 iteration", "12 iterations". */
const iterationsText = (k: number): string => `${k} iteration${k === 1 ? '' : 's'}`;
/**
 * A rate, or a relative residual or error: near 1 as 1 - d or 1 + d (../numberText.ts), so that a rate just below 1, or
 * the residual of a run that has barely moved, is not written 1.000e+0; a rate that rounds to 1 with a known gap (1 - rho,
 * rateGap) as 1 - gap.
 */
const nearOneText = (x: number, gap = 0): string => closeToOneText(x, 3, gap) ?? fmt(x);
/** "is 7.000e+0 >= 1"; a radius whose computation overflowed (parameters like alpha = 1e300) said so, not "Infinity". */
const unstableRadiusText = (x: number): string =>
  x === Infinity ? 'is too large to compute in double precision (far above 1)' : `is ${nearOneText(x)} >= 1`;

/**
 * 1 - rho for a run's parameters: at the algorithm's optimal parameters its tuning's gap, computed without cancellation
 * (theory puts rho below 1 there, even where kappa beyond ~1/eps rounds it to 1: Cimmino on a Hilbert matrix of
 * kappa(S) = 5.8e23 was called unstable and "true divergence"); for other parameters 1 - rho as computed.
 */
function rateGap(tuning: OptimalTuning, parameters: Parameters, rate: number): number {
  return sameParameters(parameters, tuning.parameters) ? tuning.gap : 1 - rate;
}

/**
 * Whether an iteration of spectral radius `rate` is stable: rate < 1, or at the optimal parameters a rate that rounds to
 * 1 with a gap > 0 (rateGap). A run under unstable parameters is never reported converged, and its growth is divergence.
 */
const isStable = (rate: number, gap: number): boolean => rate < 1 || gap > 0;

/** isStable for these parameters (the run's, merged) on these spectral data. */
export function stableUnder(algorithm: DistributedAlgorithm, spectral: SpectralData, parameters: Parameters): boolean {
  const rate = algorithm.rate(spectral, parameters);
  return isStable(rate, rateGap(algorithm.optimal(spectral), parameters, rate));
}

/** The stagnation window for rate rho: STAGNATION_DECADES decades' worth of iterations, at least STAGNATION_MIN_WINDOW; null when rho >= 1. */
export function stagnationWindow(rho: number): number | null {
  if (!(rho < 1)) return null;
  if (!(rho > 0)) return STAGNATION_MIN_WINDOW;
  return Math.max(STAGNATION_MIN_WINDOW, Math.ceil((STAGNATION_DECADES * Math.log(10)) / -Math.log(rho)));
}

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

export function runAlgorithmWork(
  system: DistributedSystem,
  id: AlgorithmId,
  spectral: SpectralData | null,
  options: RunOptions,
): Work<RunResult> {
  return startRun(system, id, spectral, options).work;
}

/**
 * `spectral` null: a run of given parameters (every one of the algorithm's) started before the
 * analysis. It takes them at their word (judged stable), has no stagnation test (eps kappa(A) is not
 * known), and reports NaN for theoreticalRate and attainableAccuracy and no cause of a residual
 * growth; theoryOfRun gives those once the spectral data is known.
 */
export function startRun(
  system: DistributedSystem,
  id: AlgorithmId,
  spectral: SpectralData | null,
  options: ResumableRunOptions,
): ResumableRun {
  // Set by the generator while it waits at a yield (the only time its state is consistent).
  let takeSnapshot: (() => RunSnapshot) | null = null;
  const work = runWork(system, id, spectral, options, (take) => {
    takeSnapshot = take;
  });
  return { work, snapshot: () => (takeSnapshot === null ? null : takeSnapshot()) };
}

const DISPLAY_NAMES: Partial<Record<AlgorithmId, string>> = { dhbm: 'D-HBM', dnag: 'D-NAG' };

/** What the theory says of a residual that rose above its initial value (null when it never did). */
function residualGrowth(
  algorithm: DistributedAlgorithm,
  spectral: SpectralData | null,
  parameters: Parameters,
  theoreticalRate: number,
  gap: number,
  measures: Pick<RunMeasures, 'initialResidual' | 'peakResidual' | 'peakIteration'>,
): ResidualGrowth | null {
  const { initialResidual, peakResidual, peakIteration } = measures;
  if (!(peakResidual > initialResidual) || !(initialResidual > 0)) return null;
  const growth = { peakRelativeResidual: peakResidual, peakIteration, factor: peakResidual / initialResidual };
  // No spectral data yet: the cause is theoryOfRun's to tell.
  if (spectral === null) return { ...growth, cause: 'unexplained', predictedFactor: null, predictedIteration: null };
  return growthWithCause(algorithm, spectral, parameters, theoreticalRate, gap, growth);
}

function growthWithCause(
  algorithm: DistributedAlgorithm,
  spectral: SpectralData,
  parameters: Parameters,
  theoreticalRate: number,
  gap: number,
  growth: Pick<ResidualGrowth, 'peakRelativeResidual' | 'peakIteration' | 'factor'>,
): ResidualGrowth {
  if (!isStable(theoreticalRate, gap)) return { ...growth, cause: 'divergence', predictedFactor: null, predictedIteration: null };
  const predicted = algorithm.transientGrowth?.(spectral, parameters) ?? null;
  if (predicted === null || predicted === undefined)
    return { ...growth, cause: 'unexplained', predictedFactor: null, predictedIteration: null };
  return { ...growth, cause: 'transient', predictedFactor: predicted.factor, predictedIteration: predicted.iteration };
}

/** What a run started without the spectral data (startRun) reports once the analysis has it. */
export type RunTheory = Pick<RunResult, 'theoreticalRate' | 'attainableAccuracy' | 'growth' | 'stopReason'>;

/**
 * The rate of a run's parameters, eps kappa(A), the cause of its residual's growth and the stop
 * reason's sentence on it, for a run that iterated without the spectral data: what the run would
 * have reported with it. Its stopping decisions stay what they were: a run reported converged whose
 * parameters turn out unstable (rate >= 1, stableUnder) says so in its stop reason (a job runs such a run
 * again with the spectral data instead: ../../jobs/computeJob.ts).
 */
export function theoryOfRun(
  run: Pick<RunResult, 'algorithm' | 'status' | 'parameters' | 'relativeResidual' | 'growth' | 'stopReason'>,
  spectral: SpectralData,
  options: Pick<RunOptions, 'tolerance' | 'divergenceTolerance'>,
): RunTheory {
  const algorithm = getAlgorithm(run.algorithm);
  const theoreticalRate = algorithm.rate(spectral, run.parameters);
  const gap = rateGap(algorithm.optimal(spectral), run.parameters, theoreticalRate);
  let { stopReason } = run;
  const growth = run.growth === null ? null : growthWithCause(algorithm, spectral, run.parameters, theoreticalRate, gap, run.growth);
  if (growth !== null && run.status !== 'converged' && run.status !== 'cancelled') {
    const divergenceTolerance = options.divergenceTolerance ?? DEFAULT_DIVERGENCE_TOLERANCE;
    stopReason = withGrowthSentence(
      stopReason,
      run.algorithm,
      growth,
      run.status,
      run.relativeResidual,
      options.tolerance,
      theoreticalRate,
      divergenceTolerance,
      gap,
    );
  }
  if (run.status === 'converged' && !isStable(theoreticalRate, gap)) {
    stopReason +=
      ` The spectral radius of the iteration for these parameters, known after the run (it started before the analysis), ` +
      `is ${nearOneText(theoreticalRate)} >= 1: a run with the analysis would not have reported convergence.`;
  }
  return { theoreticalRate, attainableAccuracy: attainableAccuracy(spectral.L / spectral.mu), growth, stopReason };
}

/**
 * The stop reason of a run that ended unconverged after its residual grew, with the sentence on why. A run stopped by
 * the divergence test within D-HBM's or D-NAG's transient growth opens "Stopped by the divergence test", not
 * "Diverged": its status names the test (`diverged`), the sentence says it is not divergence.
 */
function withGrowthSentence(
  stopReason: string,
  id: AlgorithmId,
  growth: ResidualGrowth,
  status: RunStatus,
  residual: number,
  tolerance: number,
  rate: number,
  divergenceTolerance: number,
  gap: number,
  radiusSaid = false,
): string {
  const opened =
    growth.cause === 'transient' && status === 'diverged'
      ? stopReason.replace(/^Diverged at iteration/, 'Stopped by the divergence test at iteration')
      : stopReason;
  // Near 1 as 1 + d, as a rate: a rise by 4e-4 is not written 1.000e+0 times.
  const rose =
    `${opened} The relative residual rose to ${nearOneText(growth.peakRelativeResidual)} at iteration ${growth.peakIteration}, ` +
    `${nearOneText(growth.factor)} times its initial value`;
  if (growth.cause === 'divergence') {
    // A non-finite stop of an unstable run has said its spectral radius already.
    if (radiusSaid) return `${rose}: true divergence.`;
    return `${rose}: true divergence, the spectral radius of the iteration for these parameters ${unstableRadiusText(rate)}.`;
  }
  if (growth.cause === 'unexplained') return `${rose}; the spectral radius for these parameters is ${nearOneText(rate, gap)} < 1.`;
  const name = DISPLAY_NAMES[id] ?? id;
  let text =
    `${rose}: the transient growth of ${name}, not divergence. Its spectral radius for these parameters is ${nearOneText(rate, gap)} < 1, ` +
    'but its iteration matrix is not normal (at the optimal parameters it has repeated eigenvalues, so an error mode ' +
    `behaves like (1 + c t) rho^t and grows before it falls); predicted growth of the modes up to about ${fmt(growth.predictedFactor ?? 1)} ` +
    `times their start, near iteration ${growth.predictedIteration ?? 0}.`;
  if (status === 'diverged' && (growth.predictedFactor ?? 0) > divergenceTolerance / 10) {
    text += ` The divergence test (divergenceTolerance ${fmt(divergenceTolerance)}) fired within that transient: a larger divergenceTolerance lets it run on.`;
  } else if (status !== 'diverged' && residual > tolerance && rate > 0) {
    const more = Math.ceil(Math.log(tolerance / residual) / Math.log1p(-gap));
    text += ` At that rate the tolerance is about ${more} more iterations away.`;
  }
  return text;
}

/**
 * One column of a run over several right-hand sides (./multipleRhs.ts): its b and x* (null when
 * unknown), and its view of the block method, which stands in for the algorithm's own.
 */
export interface BlockColumn {
  readonly b: Float64Array;
  readonly xTrue: Float64Array | null;
  create(parameters: Parameters): IterativeMethod;
}

export function* runWork(
  system: DistributedSystem,
  id: AlgorithmId,
  spectral: SpectralData | null,
  options: ResumableRunOptions,
  snapshotsAt: (take: (() => RunSnapshot) | null) => void,
  column?: BlockColumn,
): Work<RunResult> {
  const algorithm = getAlgorithm(id);
  checkOptions(options);
  const { tolerance, maxIterations, signal, resumeFrom } = options;
  const absoluteTolerance = options.absoluteTolerance ?? 0;
  const errorTolerance = options.errorTolerance ?? null;
  const maxWallTimeMs = options.maxWallTimeMs ?? null;
  const divergenceTolerance = options.divergenceTolerance ?? DEFAULT_DIVERGENCE_TOLERANCE;
  const { A } = system;
  const b = column?.b ?? system.b;
  // A tall system: the run's own target, x_LS (gradient methods) or x_W (projection methods), ../distributed/leastSquares.ts.
  // Both depend on b, and are computed for the system's own b: several right-hand sides are refused on tall systems.
  if (column !== undefined && isTall(system)) {
    throw new InvalidParameterError('Several right-hand sides are not supported on a tall (N > n) system: give one rhs per job.', {
      rows: A.rows,
      columns: A.cols,
    });
  }
  const points = isTall(system) ? yield* leastSquaresPointsWork(system) : null;
  const target: RunTarget | undefined = points === null ? undefined : algorithm.family === 'gradient' ? 'least-squares' : 'block-weighted';
  // Inconsistent: no x solves A x = b, the residual stops at the target's, and convergence is judged by the error to the target.
  const inconsistent = points !== null && !points.consistent;
  const givenXTrue = column === undefined ? system.xTrue : column.xTrue;
  const xTrue =
    points === null
      ? givenXTrue
      : inconsistent || givenXTrue === null
        ? points[target === 'least-squares' ? 'leastSquares' : 'blockWeighted']
        : givenXTrue;
  if (errorTolerance !== null && xTrue === null) {
    throw new InvalidParameterError('errorTolerance needs the true solution, which is known only when b = A * ones (rhs omitted).', {
      errorTolerance,
    });
  }
  if (spectral === null) checkEveryParameterGiven(algorithm, options.parameters);
  const tuning = spectral === null ? null : algorithm.optimal(spectral);
  const optimal = tuning?.parameters ?? {};
  const parameters: Parameters = { ...optimal, ...(options.parameters ?? {}) };
  algorithm.validateParameters(parameters);
  const theoreticalRate = spectral === null ? Number.NaN : algorithm.rate(spectral, parameters);
  // At the optimal parameters rho < 1 even where it rounds to 1 (rateGap): such a run may converge, and is not unstable.
  const gap = tuning === null ? Number.NaN : rateGap(tuning, parameters, theoreticalRate);
  const stable = spectral === null || isStable(theoreticalRate, gap);
  const attainable = spectral === null ? Number.NaN : attainableAccuracy(spectral.L / spectral.mu);
  const window = options.stopOnStagnation === false || spectral === null ? null : stagnationWindow(theoreticalRate);
  if (resumeFrom) checkSnapshotFits(resumeFrom, id, parameters, maxIterations);

  const started = performance.now() - (resumeFrom?.elapsedMs ?? 0);
  const method = column?.create(parameters) ?? algorithm.create(system, parameters, options.initialGuess);
  // The method may hold worker threads: release them however the run ends (stop, cancellation
  // thrown into the generator, an error, or the consumer abandoning the generator via return()).
  try {
    const normB = norm2(b);
    const residualScale = normB === 0 ? 1 : normB;
    const normXTrue = xTrue === null ? 0 : norm2(xTrue);
    const isConsensus = method.consensusDistance() !== null;
    const recorder = new TraceRecorder(options.traceCap ?? DEFAULT_TRACE_CAP, xTrue !== null, isConsensus);

    let iteration = 0;
    // The residual, error and consensus distance of x(iteration), into the trace.
    const measureEstimate = (): [number, number | null, number | null] => {
      let residual = Math.sqrt(method.residualNormSquared()) / residualScale;
      // The methods' measure is a sum of squares, which overflows for a residual above ~1e154 (an initial guess far
      // from the solution's scale) while x is finite: measured again from x with scaling (norm2), as the final one is.
      if (residual === Infinity && method.estimate.every(Number.isFinite)) residual = relativeResidual(A, method.estimate, b);
      const error = xTrue === null ? null : relativeDistance(method.estimate, xTrue, normXTrue);
      const consensus = method.consensusDistance();
      recorder.record(iteration, residual, error, consensus);
      return [residual, error, consensus];
    };

    let measures: LiveRunMeasures;
    if (resumeFrom) {
      method.restore(resumeFrom.method);
      recorder.restore(resumeFrom.trace);
      iteration = resumeFrom.iteration;
      measures = { ...resumeFrom.measures };
      if ((measures.error === null) !== (xTrue === null) || (measures.consensus === null) !== !isConsensus) {
        throw new SnapshotMismatchError('its measures are not those of this system and method');
      }
    } else {
      // The consensus distance is measured against the size of the machines' estimates at the start.
      measures = initialMeasures(...measureEstimate(), norm2(method.estimate));
    }
    const snapshot = (): RunSnapshot => ({
      algorithm: id,
      parameters: { ...parameters },
      iteration,
      elapsedMs: performance.now() - started,
      measures: { ...measures },
      trace: recorder.state(),
      method: method.state(),
    });

    let status: RunStatus | null = null;
    let stopReason = '';
    const nonFinite = (): string | null => {
      const { residual, error, consensus } = measures;
      if (!Number.isFinite(residual)) return `the relative residual became ${residual}`;
      if (error !== null && !Number.isFinite(error)) return `the relative error became ${error}`;
      if (consensus !== null && !Number.isFinite(consensus)) {
        // An infinite distance between finite estimates is its square's overflow (the passes measure it as one).
        return consensus === Infinity && method.estimate.every(Number.isFinite)
          ? "the machines' estimates are too far apart to measure their distance in double precision (its square " +
              `overflowed)${iteration === 0 ? ': x(0) is far from the scale of the solution' : ''}`
          : "the machines' estimates became non-finite";
      }
      return null;
    };
    const divergence = (): string | null => {
      const { residual, error, consensus, initialResidual, initialError, consensusScale } = measures;
      // Below eps a relative residual is rounding: growth is judged from there at least.
      if (residual > divergenceTolerance * Math.max(initialResidual, Number.EPSILON)) {
        return `the relative residual ${fmt(residual)} exceeds divergenceTolerance ${toleranceText(divergenceTolerance)} times its initial value ${fmt(initialResidual)}`;
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
    const residualMet = (): boolean => {
      const { residual, error } = measures;
      return inconsistent ? error !== null && error <= tolerance : meetsResidualTest(residual, residualScale, tolerance, absoluteTolerance);
    };
    const errorMet = (): boolean => errorTolerance === null || (measures.error !== null && measures.error <= errorTolerance);
    const convergedReason = (): string => {
      const { residual, error } = measures;
      const tests = [
        inconsistent
          ? `relative error to the ${target} solution ${fmt(error ?? Number.NaN)} <= tolerance ${toleranceText(tolerance)} (the system is inconsistent)`
          : residual <= tolerance
            ? `relative residual ${fmt(residual)} <= tolerance ${toleranceText(tolerance)}`
            : `residual |A x - b| = ${fmt(residual * residualScale)} <= absoluteTolerance ${toleranceText(absoluteTolerance)}`,
      ];
      if (errorTolerance !== null)
        tests.push(`relative error ${fmt(error ?? Number.NaN)} <= errorTolerance ${toleranceText(errorTolerance)}`);
      return `Converged after ${iterationsText(iteration)}: ${tests.join(', ')}.`;
    };
    const testStop = (): void => {
      const bad = nonFinite();
      if (bad !== null) {
        status = 'non-finite';
        stopReason = `Non-finite values at iteration ${iteration}: ${bad}.`;
        if (!stable) stopReason += ` The spectral radius of the iteration for these parameters ${unstableRadiusText(theoreticalRate)}.`;
        return;
      }
      const diverged = divergence();
      if (diverged !== null) {
        status = 'diverged';
        stopReason = `Diverged at iteration ${iteration}: ${diverged}.`;
        return;
      }
      if (residualMet() && errorMet() && stable) {
        status = 'converged';
        stopReason = convergedReason();
        return;
      }
      const { bestResidual, referenceIteration } = measures;
      if (window !== null && iteration - referenceIteration >= window && bestResidual <= STAGNATION_NEAR * attainable) {
        status = 'stagnated';
        stopReason =
          `Stagnated at iteration ${iteration}: the smallest relative residual, ${fmt(bestResidual)}, has not halved over the last ` +
          `${iteration - referenceIteration} iterations (the window: ${STAGNATION_DECADES} decades at the rate ${nearOneText(theoreticalRate, gap)}, ` +
          `${window} iterations), near the attainable accuracy eps kappa(A) = ${fmt(attainable)}: rounding sets the residual there, ` +
          'so the tolerance is out of reach in double precision.';
      }
    };

    // A snapshot is taken when the run was not stopping: a resumed run goes straight to its next iteration.
    if (!resumeFrom) testStop();
    while (status === null) {
      if (signal?.aborted) {
        status = 'cancelled';
        stopReason = `Cancelled after ${iterationsText(iteration)} (the abort signal fired); relative residual ${nearOneText(measures.residual)}.`;
        break;
      }
      if (iteration >= maxIterations) {
        status = 'max-iterations';
        stopReason =
          residualMet() && errorMet()
            ? `Stopped at maxIterations = ${maxIterations}: the relative residual ${nearOneText(measures.residual)} meets the tolerance, ` +
              `but the iteration is unstable for these parameters (its spectral radius ${unstableRadiusText(theoreticalRate)}), ` +
              'so this is not reported as convergence.'
            : inconsistent
              ? // The residual stops at the target's there: the error to it is what the tolerance judges, as when converged.
                `Stopped at maxIterations = ${maxIterations}: relative error to the ${target} solution ` +
                `${nearOneText(measures.error ?? Number.NaN)} > tolerance ${fmt(tolerance)} (the system is inconsistent: ` +
                `its relative residual, ${nearOneText(measures.residual)}, stops at the ${target} solution's, not at 0).`
              : `Stopped at maxIterations = ${maxIterations}: relative residual ${nearOneText(measures.residual)}` +
                (residualMet()
                  ? `, relative error ${nearOneText(measures.error ?? Number.NaN)} > errorTolerance ${fmt(errorTolerance ?? 0)}.`
                  : ` > tolerance ${fmt(tolerance)}.`);
        break;
      }
      if (maxWallTimeMs !== null && performance.now() - started >= maxWallTimeMs) {
        status = 'max-wall-time';
        stopReason = `Stopped at maxWallTimeMs = ${maxWallTimeMs} after ${iterationsText(iteration)}: relative residual ${nearOneText(measures.residual)}.`;
        break;
      }
      method.step();
      iteration++;
      updateMeasures(measures, iteration, ...measureEstimate());
      testStop();
      if (status !== null) break;
      snapshotsAt(snapshot);
      try {
        yield { phase: 'solve', algorithm: id, iteration, relativeResidual: measures.residual } satisfies WorkProgress;
      } catch (thrown) {
        if (!(thrown instanceof CancelledError)) throw thrown;
        status = 'cancelled';
        stopReason = `Cancelled after ${iterationsText(iteration)}; relative residual ${nearOneText(measures.residual)}.`;
      } finally {
        snapshotsAt(null);
      }
    }

    // testStop sets it from a closure, which the control-flow analysis does not follow.
    const finalStatus = status as RunStatus;
    const growth = residualGrowth(algorithm, spectral, parameters, theoreticalRate, gap, measures);
    if (growth !== null && spectral !== null && finalStatus !== 'converged' && finalStatus !== 'cancelled') {
      const radiusSaid = finalStatus === 'non-finite' && !stable;
      stopReason = withGrowthSentence(
        stopReason,
        id,
        growth,
        finalStatus,
        measures.residual,
        tolerance,
        theoreticalRate,
        divergenceTolerance,
        gap,
        radiusSaid,
      );
    }
    const solution = Float64Array.from(method.estimate);
    const trace = recorder.finish();
    const finalResidual = relativeResidual(A, solution, b);
    if (finalStatus === 'converged' && !inconsistent)
      stopReason += recomputedResidualSentence(finalResidual, residualScale, tolerance, absoluteTolerance, attainable);
    return {
      algorithm: id,
      status: finalStatus,
      iterations: iteration,
      relativeResidual: finalResidual,
      relativeError: xTrue === null ? null : relativeDistance(solution, xTrue, normXTrue),
      empiricalRate: empiricalRateOfTrace(trace),
      theoreticalRate,
      parameters,
      wallTimeMs: performance.now() - started,
      threads: method.threads ?? 1,
      stopReason,
      attainableAccuracy: attainable,
      growth,
      solution,
      trace,
      ...(target === undefined ? {} : { target }),
    };
  } finally {
    method.dispose?.();
  }
}

/** The residual test of a consistent system: |A x - b| <= max(tolerance |b|, absoluteTolerance), from the relative residual and |b|. */
function meetsResidualTest(relative: number, residualScale: number, tolerance: number, absoluteTolerance: number): boolean {
  return relative <= tolerance || relative * residualScale <= absoluteTolerance;
}

/**
 * What a converged run's stopReason adds when the relative residual recomputed from its final x fails the test the
 * iteration's own measure passed: with a tolerance below the attainable accuracy the two differ by rounding (a
 * 2 x 2 system at tolerance 1e-30 met it with the measure at exactly 0, then read 2.2e-16). Empty when it passes.
 */
export function recomputedResidualSentence(
  finalResidual: number,
  residualScale: number,
  tolerance: number,
  absoluteTolerance: number,
  attainable: number,
): string {
  if (meetsResidualTest(finalResidual, residualScale, tolerance, absoluteTolerance)) return '';
  return (
    ` Recomputed from the final x, the relative residual is ${fmt(finalResidual)}, above the tolerance: the iteration's ` +
    'measure and this one differ by rounding' +
    (Number.isFinite(attainable) ? `, and the attainable accuracy eps kappa(A) is ${fmt(attainable)}.` : '.')
  );
}

/** Whether `given` sets every parameter of `algorithm` (a run can then start without the spectral data). */
export function everyParameterGiven(algorithm: Pick<DistributedAlgorithm, 'parameterNames'>, given: Parameters | undefined): boolean {
  return given !== undefined && algorithm.parameterNames.every((name) => given[name] !== undefined);
}

function checkEveryParameterGiven(algorithm: DistributedAlgorithm, given: Parameters | undefined): void {
  if (everyParameterGiven(algorithm, given)) return;
  const missing = algorithm.parameterNames.filter((name) => given?.[name] === undefined);
  throw new InvalidParameterError(`A run without the spectral data needs every parameter: ${missing.join(', ')} not given.`, { missing });
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
  system: DistributedSystem,
  id: AlgorithmId,
  spectral: SpectralData | null,
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
