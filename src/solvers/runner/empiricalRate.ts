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
 */
import type { Trace } from './types.js';

export const FIT_FLOOR = 1e3 * Number.EPSILON;
export const MIN_FIT_POINTS = 3;

export function fitEmpiricalRate(iteration: ArrayLike<number>, value: ArrayLike<number>): number | null {
  let first = -1;
  let last = -1;
  for (let k = 0; k < iteration.length; k++) {
    const v = value[k];
    if (Number.isFinite(v) && v > FIT_FLOOR) {
      if (first < 0) first = k;
      last = k;
    }
  }
  if (first < 0) return null;
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
export function empiricalRateOfTrace(trace: Trace): number | null {
  return fitEmpiricalRate(trace.iteration, trace.relativeError ?? trace.relativeResidual);
}
