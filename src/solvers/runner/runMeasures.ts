/**
 * What the runner's loop measures of a run (./runAlgorithm.ts), in one object: the last
 * iteration's relative residual, relative error and consensus distance; their values at the start
 * (divergence is judged against them); the stagnation test's window; and the largest residual so
 * far (the growth a diagnosis speaks of). A snapshot (./snapshot.ts) saves and restores it whole.
 */

export interface RunMeasures {
  readonly residual: number;
  readonly error: number | null;
  readonly consensus: number | null;
  readonly initialResidual: number;
  readonly initialError: number | null;
  /** The size the consensus distance is judged against: max(its initial value, |x(0)|); 0 for other methods. */
  readonly consensusScale: number;
  /** The smallest relative residual so far. */
  readonly bestResidual: number;
  /** The residual the stagnation window asks to halve, and the iteration the window opened at. */
  readonly referenceResidual: number;
  readonly referenceIteration: number;
  /** The largest relative residual after the start, and its iteration. */
  readonly peakResidual: number;
  readonly peakIteration: number;
}

/** The runner's own, updated in place by updateMeasures. */
export type LiveRunMeasures = { -readonly [K in keyof RunMeasures]: RunMeasures[K] };

/** The measures of a run at its start (iteration 0); `estimateNorm` = |x(0)|, the consensus distance's scale. */
export function initialMeasures(residual: number, error: number | null, consensus: number | null, estimateNorm: number): LiveRunMeasures {
  return {
    residual,
    error,
    consensus,
    initialResidual: residual,
    initialError: error,
    consensusScale: consensus === null ? 0 : Math.max(consensus, estimateNorm),
    bestResidual: residual,
    referenceResidual: residual,
    referenceIteration: 0,
    peakResidual: residual,
    peakIteration: 0,
  };
}

/**
 * Takes iteration `iteration`'s measurement (> 0) into `measures`: the current values, the peak
 * (a non-finite residual is its own stop, not a peak), the smallest residual and the stagnation
 * window, which reopens whenever the smallest residual halves the reference.
 */
export function updateMeasures(
  measures: LiveRunMeasures,
  iteration: number,
  residual: number,
  error: number | null,
  consensus: number | null,
): void {
  measures.residual = residual;
  measures.error = error;
  measures.consensus = consensus;
  if (residual > measures.peakResidual && Number.isFinite(residual)) {
    measures.peakResidual = residual;
    measures.peakIteration = iteration;
  }
  if (residual < measures.bestResidual) measures.bestResidual = residual;
  if (measures.bestResidual < measures.referenceResidual / 2) {
    measures.referenceResidual = measures.bestResidual;
    measures.referenceIteration = iteration;
  }
}
