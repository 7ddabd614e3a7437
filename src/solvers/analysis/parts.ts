/**
 * What each storage's analysis computes before the shared tail of ./analyze.ts (rates, bounds,
 * recommendation), and the progress relabelling both use.
 */
import { relabelled, type Work } from '../cooperative.js';
import type { AngleEstimates, Conditioning, Heterogeneity } from './types.js';

export interface AnalysisParts {
  heterogeneity: Heterogeneity;
  conditioning: Conditioning;
  /** Theorem 4: kappa(A) >= max_k |a_k| / min_l (|a_l| sin theta_min^(l)); null on a tall A (./localAngles.ts LocalAnglesScope). */
  theorem4KappaALowerBound: number | null;
}

/** The heterogeneity metrics from the principal angles (with their estimates on the sparse path) and the local angles. */
export function heterogeneityOf(
  angles: Pick<Heterogeneity, 'thetaH' | 'cosThetaH' | 'thetaHPair' | 'theta'> & { estimates?: AngleEstimates },
  local: Pick<Heterogeneity, 'phi' | 'phiMin' | 'rowNormRatio'>,
): Heterogeneity {
  const { thetaH, cosThetaH, thetaHPair, theta, estimates } = angles;
  const { phi, phiMin, rowNormRatio } = local;
  return { thetaH, cosThetaH, thetaHPair, theta, phi, phiMin, rowNormRatio, ...(estimates === undefined ? {} : { estimates }) };
}

/**
 * A storage's analysis in two stages: its conditioning (what the spectral data is read from) computed,
 * and the rest of its parts, to compute once (it reuses what the conditioning computed).
 */
export interface StagedParts {
  conditioning: Conditioning;
  rest(): Work<AnalysisParts>;
}

/** Re-label the progress of a sub-computation as `phase`, mapping its fraction into [from, to]. */
export function inPhase<T>(work: Work<T>, phase: string, from: number, to: number): Work<T> {
  return relabelled(work, (p) =>
    p === undefined ? undefined : { phase, fraction: from + (to - from) * Math.min(1, Math.max(0, p.fraction ?? 0)) },
  );
}

/** A sub-computation with its yields kept and its progress dropped (a caller reports the progress). */
export function quietly<T>(work: Work<T>): Work<T> {
  return relabelled(work, () => undefined);
}
