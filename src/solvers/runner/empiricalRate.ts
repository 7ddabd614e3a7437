/**
 * The empirical convergence rate of a run: exp of the least-squares slope of log(error) against the
 * iteration number (log of the relative residual when the true solution is unknown).
 *
 * Window: the last half of the iterations where the iteration, not rounding, sets the value
 * (t >= t_first + (t_end - t_first)/2), so the transient of the first iterations is left out. APC and
 * heavy ball at their optimum (and D-NAG) have repeated eigenvalues and decay like t rho^t: the fitted
 * slope is then ln rho + about 1.4/T for a run of T iterations, a bias that fitting late keeps small.
 * Points at or below FIT_FLOOR (1e3 machine epsilons) and non-finite points are dropped. Fewer than
 * MIN_FIT_POINTS points: null.
 *
 * The rounding floor. A run may reach the level where rounding, not the iteration, sets its value,
 * and for an ill-conditioned system (or a heavy-ball method, which amplifies rounding) that level
 * lies far above FIT_FLOOR (sherman5: relative error ~3e-13; D-HBM on a Gaussian n = 64, m = 16:
 * ~2e-12). The run then hovers there, for thousands of iterations if it stops on maxIterations, or
 * until a lucky dip meets the tolerance if it converges; fitted over, that plateau reads as a rate
 * near 1. So, whatever the run's status, the window ends where the trace stops decreasing
 * geometrically: see geometricPhaseEnd.
 */
import type { Trace } from './types.js';

export const FIT_FLOOR = 1e3 * Number.EPSILON;
/** The fit window ends this many times above a detected rounding floor (one decade). */
export const FLOOR_MARGIN = 10;
export const MIN_FIT_POINTS = 3;

/** Running sums of (t, y) pairs for least-squares lines and means over a range of points. */
class Sums {
  count = 0;
  t = 0;
  y = 0;
  tt = 0;
  ty = 0;
  yy = 0;

  add(t: number, y: number, sign = 1): void {
    this.count += sign;
    this.t += sign * t;
    this.y += sign * y;
    this.tt += sign * t * t;
    this.ty += sign * t * y;
    this.yy += sign * y * y;
  }

  /** Residual sum of squares of y about its mean. */
  flatResidual(): number {
    return this.count === 0 ? 0 : Math.max(0, this.yy - (this.y * this.y) / this.count);
  }

  /** Least-squares slope of y against t (0 when t does not vary). */
  slope(): number {
    const stt = this.tt - (this.t * this.t) / this.count;
    return stt > 0 ? (this.ty - (this.t * this.y) / this.count) / stt : 0;
  }

  /** Residual sum of squares of y about its least-squares line. */
  lineResidual(): number {
    const stt = this.tt - (this.t * this.t) / this.count;
    const sty = this.ty - (this.t * this.y) / this.count;
    return Math.max(0, this.flatResidual() - (stt > 0 ? (sty * sty) / stt : 0));
  }
}

/**
 * The last point (index into t, y = log v) where the iteration still sets the value.
 *
 * From the largest value on (where the decay starts, after any transient growth), log v is modelled
 * as a straight line (geometric decay) up to a break point and a constant (the floor) after it, the
 * break point chosen by least squares: the standard two-segment ("hockey stick") change-point fit.
 * A true floor interrupts a decay: the line dropped by more than FLOOR_MARGIN before the break and
 * would have dropped by more than FLOOR_MARGIN again over the plateau's span, while the plateau's own
 * trend dropped by less than half that (in logs). Then the window ends at the last point before the
 * break still FLOOR_MARGIN above the floor's level (the plateau's mean log), where rounding perturbs
 * the value by at most about 1/FLOOR_MARGIN. Otherwise (a run that stopped while still decreasing,
 * or that diverged) the window ends at the last point.
 */
function geometricPhaseEnd(t: Float64Array, y: Float64Array): number {
  const count = t.length;
  let peak = 0;
  for (let k = 1; k < count; k++) if (y[k] > y[peak]) peak = k;
  if (count - peak < 2 * MIN_FIT_POINTS) return count - 1;

  // Times relative to the peak keep the sums well conditioned for long runs.
  const line = new Sums();
  const flat = new Sums();
  for (let k = peak; k < count; k++) flat.add(t[k] - t[peak], y[k]);
  let bestBreak = count - 1;
  let bestResidual = Infinity;
  for (let k = peak; k < count; k++) {
    line.add(t[k] - t[peak], y[k]);
    flat.add(t[k] - t[peak], y[k], -1);
    if (line.count < MIN_FIT_POINTS) continue;
    const residual = line.lineResidual() + flat.flatResidual();
    if (residual <= bestResidual) {
      bestResidual = residual;
      bestBreak = k;
    }
  }
  if (bestBreak >= count - 2) return count - 1;

  const before = new Sums();
  const after = new Sums();
  for (let k = peak; k <= bestBreak; k++) before.add(t[k] - t[peak], y[k]);
  for (let k = bestBreak + 1; k < count; k++) after.add(t[k] - t[peak], y[k]);
  const slope = before.slope();
  const headDrop = -slope * (t[bestBreak] - t[peak]);
  const lineDrop = -slope * (t[count - 1] - t[bestBreak]);
  const plateauDrop = -after.slope() * (t[count - 1] - t[bestBreak + 1]);
  const margin = Math.log(FLOOR_MARGIN);
  if (!(headDrop > margin && lineDrop > margin && plateauDrop < lineDrop / 2)) return count - 1;

  const floorLevel = after.y / after.count;
  let end = bestBreak;
  while (end > 0 && y[end] < floorLevel + margin) end--;
  return end;
}

export function fitEmpiricalRate(iteration: ArrayLike<number>, value: ArrayLike<number>): number | null {
  // The usable points: finite, above FIT_FLOOR; y = log v.
  let usable = 0;
  for (let k = 0; k < value.length; k++) if (Number.isFinite(value[k]) && value[k] > FIT_FLOOR) usable++;
  if (usable < MIN_FIT_POINTS) return null;
  const t = new Float64Array(usable);
  const y = new Float64Array(usable);
  for (let k = 0, j = 0; k < value.length; k++) {
    if (!(Number.isFinite(value[k]) && value[k] > FIT_FLOOR)) continue;
    t[j] = iteration[k];
    y[j] = Math.log(value[k]);
    j++;
  }

  const end = geometricPhaseEnd(t, y);
  const start = t[0] + (t[end] - t[0]) / 2;
  const window = new Sums();
  for (let k = 0; k <= end; k++) if (t[k] >= start) window.add(t[k] - t[0], y[k]);
  if (window.count < MIN_FIT_POINTS || window.tt - (window.t * window.t) / window.count <= 0) return null;
  return Math.exp(window.slope());
}

/** Fitted to the relative error when the trace has it, else to the relative residual, for every run status. */
export function empiricalRateOfTrace(trace: Trace): number | null {
  return fitEmpiricalRate(trace.iteration, trace.relativeError ?? trace.relativeResidual);
}
