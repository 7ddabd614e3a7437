/** The trace recorder and the empirical-rate fit on their own. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fitEmpiricalRate, FIT_FLOOR } from '../../../src/solvers/runner/empiricalRate.js';
import { TraceRecorder } from '../../../src/solvers/runner/traceRecorder.js';

describe('TraceRecorder', () => {
  it('keeps at most cap points, the first and the last, evenly strided, for any run length', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 64 }), fc.integer({ min: 0, max: 5000 }), (cap, last) => {
        const rec = new TraceRecorder(cap, true, false);
        for (let t = 0; t <= last; t++) rec.record(t, 1 / (t + 1), t, null);
        const trace = rec.finish();
        const it = Array.from(trace.iteration);
        expect(it.length).toBeLessThanOrEqual(cap);
        expect(it[0]).toBe(0);
        expect(it[it.length - 1]).toBe(last);
        expect(trace.totalIterations).toBe(last);
        for (let k = 1; k < it.length; k++) expect(it[k]).toBeGreaterThan(it[k - 1]);
        // values stay attached to their iteration
        it.forEach((t, k) => {
          expect(trace.relativeResidual[k]).toBe(1 / (t + 1));
          expect((trace.relativeError as Float64Array)[k]).toBe(t);
        });
        // all but the last point lie on one stride, and they cover the run (no large gaps)
        const body = it.slice(0, -1);
        if (body.length > 1) {
          const stride = body[1] - body[0];
          body.forEach((t, k) => expect(t).toBe(k * stride));
          expect(last - body[body.length - 1]).toBeLessThanOrEqual(2 * stride);
        }
        if (last + 1 <= cap) expect(it.length).toBe(last + 1);
        if (last + 1 > cap && cap >= 4) expect(it.length).toBeGreaterThanOrEqual(Math.floor(cap / 2));
        expect(trace.downsampled).toBe(last + 1 > cap);
      }),
      { numRuns: 300 },
    );
  });
});

describe('fitEmpiricalRate', () => {
  const series = (length: number, f: (t: number) => number): [Int32Array, Float64Array] => [
    Int32Array.from({ length }, (_, t) => t),
    Float64Array.from({ length }, (_, t) => f(t)),
  ];

  it('recovers rho from c rho^t exactly', () => {
    for (const rho of [0.1, 0.5, 0.9, 0.999]) {
      const [it, v] = series(200, (t) => 3 * rho ** t);
      expect(fitEmpiricalRate(it, v)).toBeCloseTo(rho, 10);
    }
  });

  it('ignores points at the rounding floor and non-finite points', () => {
    const [it, v] = series(100, (t) => (t < 60 ? 0.7 ** t : 1e-15 * (1 + (t % 3))));
    expect(0.7 ** 59).toBeGreaterThan(FIT_FLOOR);
    expect(fitEmpiricalRate(it, v)).toBeCloseTo(0.7, 8);
    v[30] = Number.NaN;
    expect(fitEmpiricalRate(it, v)).toBeCloseTo(0.7, 8);
  });

  it('fits the tail, so an early transient does not matter', () => {
    const [it, v] = series(400, (t) => 0.5 ** t + 0.95 ** t);
    expect(fitEmpiricalRate(it, v)).toBeCloseTo(0.95, 6);
  });

  it('t rho^t (a repeated eigenvalue) gives a rate within 0.1 (1 - rho) once the run is long enough', () => {
    const rho = 0.99;
    const [it, v] = series(3000, (t) => (t + 1) * rho ** t);
    const fit = fitEmpiricalRate(it, v) as number;
    expect(fit).toBeGreaterThan(rho);
    expect(fit - rho).toBeLessThanOrEqual(0.1 * (1 - rho));
  });

  it('works on down-sampled iterations and returns null when there is too little to fit', () => {
    const it = Int32Array.from([0, 8, 16, 24, 32, 37]);
    const v = Float64Array.from(it, (t) => 0.8 ** t);
    expect(fitEmpiricalRate(it, v)).toBeCloseTo(0.8, 10);
    expect(fitEmpiricalRate(Int32Array.from([0, 1]), Float64Array.from([1, 1e-16]))).toBeNull();
    expect(fitEmpiricalRate(Int32Array.from([0]), Float64Array.from([1]))).toBeNull();
  });
  it('a long stagnation at a rounding floor far above FIT_FLOOR does not bias the rate (a run stopped by maxIterations)', () => {
    // rho^t down to an ill-conditioned system's floor (1e-12), then 10 000 iterations of noise there.
    const rho = 0.997;
    const t = Array.from({ length: 20_000 }, (_, k) => k);
    const floor = 1e-12;
    const v = t.map((k) => Math.max(rho ** k, floor * (1 + 0.5 * Math.sin(k))));
    expect(Math.abs((fitEmpiricalRate(t, v) as number) - rho)).toBeLessThanOrEqual(0.01 * (1 - rho));
    // Fitted over the floor (the last half of the whole trace), the same trace reads as (nearly) no convergence at all.
    const half = t.filter((k) => k >= 10_000);
    expect(
      fitEmpiricalRate(
        half,
        half.map((k) => v[k]),
      ) as number,
    ).toBeGreaterThan(1 - 0.1 * (1 - rho));
  });

  it('a run that sits at its floor and then dips below the tolerance (converged) is fitted above the floor too', () => {
    // Heavy ball: t rho^t with a transient growth, a floor at 2e-12 with rounding noise for 6000
    // iterations, then one lucky dip to 8e-13 that meets the tolerance. Down-sampled like a trace.
    const rho = 0.998;
    const iteration = Int32Array.from({ length: 1500 }, (_, k) => 16 * k);
    const last = iteration[iteration.length - 1];
    const value = Float64Array.from(iteration, (t) => Math.max(50 * (t + 1) * rho ** t, 2e-12 * (1 + 0.4 * Math.sin(0.37 * t))));
    value[value.length - 1] = 8e-13;
    expect(last).toBeGreaterThan(6000 + Math.log(1e-11 / 50) / Math.log(rho)); // the plateau is long
    const fit = fitEmpiricalRate(iteration, value) as number;
    expect(Math.abs(fit - rho)).toBeLessThanOrEqual(0.1 * (1 - rho));
    expect(fit).toBeGreaterThan(rho); // the t rho^t bias, not the floor's
  });

  it('a run still decreasing when it stops keeps its whole tail in the window', () => {
    // No floor: cutting a decade off the end would only raise the t rho^t bias.
    const rho = 0.99;
    const [it, v] = series(2000, (t) => (t + 1) * rho ** t);
    const wholeTail = fitEmpiricalRate(it, v) as number;
    const cut = fitEmpiricalRate(it.slice(0, 1800), v.slice(0, 1800)) as number;
    expect(wholeTail - rho).toBeLessThan(cut - rho);
    // A stop in the middle of a geometric decay with a small wobble is no floor either.
    const [it2, v2] = series(600, (t) => 0.97 ** t * (1 + 0.05 * Math.sin(t)));
    expect(fitEmpiricalRate(it2, v2)).toBeCloseTo(0.97, 3);
  });

  it('a diverging trace is fitted to its growth', () => {
    const [it, v] = series(300, (t) => 1.02 ** t);
    expect(fitEmpiricalRate(it, v)).toBeCloseTo(1.02, 10);
  });
});
