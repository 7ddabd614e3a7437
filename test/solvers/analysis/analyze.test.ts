import { expect, it, onTestFinished } from 'vitest';
import { algorithms, ALGORITHM_IDS } from '../../../src/solvers/algorithms/registry.js';
import { analyze, analyzeWork, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import { runCooperatively, type WorkProgress } from '../../../src/solvers/cooperative.js';
import { CancelledError, SingularMatrixError } from '../../../src/solvers/errors.js';
import { setParallelDenseAnalysisMinN, setSolverThreads } from '../../../src/solvers/parallel/threads.js';
import { describeEachBackend } from '../../support/backends.js';
import { gaussianSystem, systemOf } from '../../support/systems.js';

describeEachBackend('analyze', () => {
  it('assembles every part of the Analysis consistently', () => {
    const system = gaussianSystem(60, 4, 1);
    const a = analyze(system, { tolerance: 1e-6 });
    expect(a.n).toBe(60);
    expect(a.m).toBe(4);
    expect(a.blockSizes).toEqual([15, 15, 15, 15]);
    const c = a.conditioning;
    expect(c.kappaS).toBeCloseTo(c.lambdaMaxS / c.lambdaMinS, 6);
    expect(c.kappaAtA).toBeCloseTo(c.L / c.mu, -Math.log10(c.kappaAtA) + 8);
    expect(spectralDataOf(a)).toEqual({ m: 4, lambdaMinS: c.lambdaMinS, lambdaMaxS: c.lambdaMaxS, mu: c.mu, L: c.L });
    for (const id of ALGORITHM_IDS) expect(a.rates[id]).toEqual(algorithms[id].optimal(spectralDataOf(a)));
    // Proposition 2 holds for the computed values: kappa(S) >= 1 / sin^2(theta_H).
    expect(c.kappaS).toBeGreaterThanOrEqual(a.bounds.proposition2KappaSLowerBound! * (1 - 1e-12));
    // Theorem 4: kappa(A^T A) >= (its kappa(A) bound)^2 >= 1 / sin^2(phi_min).
    expect(c.kappaAtA).toBeGreaterThanOrEqual(a.bounds.theorem4KappaALowerBound! ** 2 * (1 - 1e-12));
    expect(a.bounds.theorem4KappaALowerBound! ** 2).toBeGreaterThanOrEqual(
      (1 / Math.sin(a.heterogeneity.phiMin as number) ** 2) * (1 - 1e-12),
    );
    // The exact comparison of the two rates is decided by the condition numbers (SPEC "Recommendation").
    expect(a.recommendation.exact.faster).toBe(c.kappaS <= c.kappaAtA ? 'apc' : 'dhbm');
    expect(a.recommendation.tolerance).toBe(1e-6);
    expect(a.heterogeneity.theta.every((row, i) => row[i] === 0)).toBe(true);
  });

  it('handles a single machine: theta_H = pi/2, no pair, S = I', () => {
    const a = analyze(
      systemOf(
        [
          [2, 1, 0],
          [1, 3, 1],
          [0, 1, 4],
        ],
        [0, 0, 0],
        1,
      ),
    );
    expect(a.heterogeneity.thetaH).toBe(Math.PI / 2);
    expect(a.heterogeneity.thetaHPair).toBeNull();
    expect(a.heterogeneity.theta).toEqual([[0]]);
    expect(a.conditioning.kappaS).toBe(1);
    expect(a.rates.apc.rate).toBe(0);
    expect(a.heterogeneity.phi).toHaveLength(1);
  });

  it('rejects a singular matrix with a SingularMatrixError naming the condition number', () => {
    // Rows 0 and 2 on different machines, so no machine sees the dependency locally.
    const rows = [
      [1, 2, 3],
      [0, 1, 4],
      [2, 4, 6 + 1e-15],
    ];
    expect(() => analyze(systemOf(rows, [0, 1, 1], 2))).toThrow(SingularMatrixError);
    expect(() => analyze(systemOf(rows, [0, 1, 1], 2))).toThrow(/numerically singular.*condition number/);
  });

  // threads 2: the parts on the solver threads (TypeScript backend, src/solvers/analysis/denseAnalysisTasks.ts).
  it.each([1, 2])('reports its phases in order, with fractions in [0, 1], and yields often (%i threads)', (threads) => {
    const system = gaussianSystem(200, 5, 2);
    setSolverThreads(threads);
    const previousMinN = setParallelDenseAnalysisMinN(0);
    onTestFinished(() => {
      setParallelDenseAnalysisMinN(previousMinN);
      setSolverThreads('auto');
    });
    const work = analyzeWork(system);
    const phases: string[] = [];
    let steps = 0;
    let maxGapMs = 0;
    let last = performance.now();
    for (let step = work.next(); !step.done; step = work.next()) {
      const now = performance.now();
      maxGapMs = Math.max(maxGapMs, now - last);
      last = now;
      steps++;
      const p: WorkProgress | undefined = step.value;
      if (p === undefined) continue;
      expect(p.fraction).toBeGreaterThanOrEqual(0);
      expect(p.fraction).toBeLessThanOrEqual(1);
      if (phases.at(-1) !== p.phase) phases.push(p.phase);
    }
    expect(phases).toEqual(['conditioning', 'gram-blocks', 'conditioning', 'principal-angles', 'local-angles', 'analysis']);
    expect(steps).toBeGreaterThan(100);
    // Generous bound (the slices are ~1-5 ms at this size): the point is that no phase runs unbroken.
    expect(maxGapMs).toBeLessThan(250);
  });

  it('gives the same result cooperatively as synchronously', async () => {
    const system = gaussianSystem(80, 4, 3);
    const progress: WorkProgress[] = [];
    const cooperative = await runCooperatively(analyzeWork(system), {
      sliceMs: 1,
      progressIntervalMs: 0,
      onProgress: (p) => progress.push(p),
    });
    expect(cooperative).toEqual(analyze(system));
    expect(progress.length).toBeGreaterThan(0);
  });

  it('stops with CancelledError when its signal fires', async () => {
    const system = gaussianSystem(150, 5, 4);
    const controller = new AbortController();
    const run = runCooperatively(analyzeWork(system), {
      signal: controller.signal,
      sliceMs: 0,
      onProgress: (p) => {
        if (p.phase === 'principal-angles') controller.abort();
      },
      progressIntervalMs: 0,
    });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
  });
});
