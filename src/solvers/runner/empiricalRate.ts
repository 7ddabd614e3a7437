/**
 * The empirical convergence rate of a run: exp of the least-squares slope of log(error) against the
 * iteration number (log of the relative residual when the true solution is unknown).
 *
 * Window: the last half of the iterations that lie above the rounding floor (t >= t_first + (t_last -
 * t_first)/2), so the transient of the first iterations is left out. APC and heavy ball at their
 * optimum (and D-NAG) have repeated eigenvalues and decay like t rho^t: the fitted slope is then
 * ln rho + about 1.4/T for a run of T iterations, a bias that fitting late keeps small.
 * Points at or below FIT_FLOOR (1e3 machine epsilons), where rounding rather than the iteration sets
 * the value, and non-finite points are dropped. Fewer than MIN_FIT_POINTS points: null.
 *
 * A run that did not stop on its tolerance may have reached its rounding floor, which for an
 * ill-conditioned system lies far above FIT_FLOOR (sherman5: relative error ~3e-13), and then
 * stagnated there for thousands of iterations: fitted over, the floor reads as a rate near 1. With
 * `trimFloor`, the window ends at the last point still FLOOR_MARGIN (100) times above the smallest
 * value of the trace, i.e. where the iteration, not rounding, was still setting the value. A run that
 * stopped on its tolerance stopped above its floor and needs no trimming.
 */
import type { RunStatus, Trace } from './types.js';

export const FIT_FLOOR = 1e3 * Number.EPSILON;
export const FLOOR_MARGIN = 100;
export const MIN_FIT_POINTS = 3;

export function fitEmpiricalRate(
  iteration: ArrayLike<number>,
  value: ArrayLike<number>,
  options: { trimFloor?: boolean } = {},
): number | null {
  let smallest = Infinity;
  if (options.trimFloor) for (let k = 0; k < value.length; k++) if (Number.isFinite(value[k])) smallest = Math.min(smallest, value[k]);
  const lowest = Math.max(FIT_FLOOR, options.trimFloor ? FLOOR_MARGIN * smallest : 0);
  let first = -1;
  let last = -1;
  for (let k = 0; k < iteration.length; k++) {
    const v = value[k];
    if (Number.isFinite(v) && v > FIT_FLOOR) {
      if (first < 0) first = k;
      if (v >= lowest) last = k;
    }
  }
  if (first < 0 || last < first) return null;
  const start = iteration[first] + (iteration[last] - iteration[first]) / 2;
  let count = 0;
  let sumT = 0;
  let sumY = 0;
  for (let k = first; k <= last; k++) {
    const v = value[k];
    if (iteration[k] < start || !(Number.isFinite(v) && v > FIT_FLOOR)) continue;
    count++;
    sumT += iteration[k];
    sumY += Math.log(v);
  }
  if (count < MIN_FIT_POINTS) return null;
  const meanT = sumT / count;
  const meanY = sumY / count;
  let stt = 0;
  let sty = 0;
  for (let k = first; k <= last; k++) {
    const v = value[k];
    if (iteration[k] < start || !(Number.isFinite(v) && v > FIT_FLOOR)) continue;
    const dt = iteration[k] - meanT;
    stt += dt * dt;
    sty += dt * (Math.log(v) - meanY);
  }
  if (stt === 0) return null;
  return Math.exp(sty / stt);
}

/** Fitted to the relative error when the trace has it, else to the relative residual. */
export function empiricalRateOfTrace(trace: Trace, status: RunStatus): number | null {
  return fitEmpiricalRate(trace.iteration, trace.relativeError ?? trace.relativeResidual, { trimFloor: status !== 'converged' });
}
