/**
 * Advise jobs end to end: `type: 'advise'` lists candidate partitions with kappa(S)
 * and theta_H, each equal to an analyze job's on the same assignment (dense and CSR storage), and a
 * later job takes the best as `partition: { fromAdvice: id }` (404 for an unknown job, 422 for a job
 * that is not a succeeded advise job or has another n, at /partition/fromAdvice), the 'refined'
 * candidate when it is the best (a shuffled 30 x 30 Poisson matrix on 8 machines).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ProblemDetails } from '../../src/jobs/types.js';
import { nativeMetis } from '../../src/solvers/linalg/backend.js';
import { toRows } from '../../src/solvers/matrix.js';
import { createJob, runJob, solveOverSocket, startTestService, type TestService } from '../support/service.js';
import { DEFAULT_REFINEMENT_TRIES } from '../../src/solvers/partitioning/refinement.js';
import { readFileSync } from 'node:fs';
import { readMatrixText } from '../solvers/sparse/support.js';
import { join } from 'node:path';
import { shuffledBlockDiagonal, shuffledCaseMatrix, shuffledPoisson, type ShuffledCase } from '../solvers/partitioning/cases.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({}, { listen: true });
}, 60_000);
afterAll(async () => {
  await service?.close();
});

const blocks = shuffledBlockDiagonal(4, 15, 7).A;
const dense = { format: 'dense', data: toRows(blocks) };
const poisson = shuffledPoisson(12, 8).A;
const coo = {
  format: 'coo',
  rows: poisson.rows,
  cols: poisson.cols,
  entries: Array.from({ length: poisson.rows }, (_, i) =>
    Array.from(poisson.colIdx.subarray(poisson.rowPtr[i], poisson.rowPtr[i + 1]), (j, q) => [i, j, poisson.values[poisson.rowPtr[i] + q]]),
  ).flat(),
};

/** The shuffled Poisson check case of test/solvers/partitioning/advisor.test.ts (refined lowers the best kappa(S) there), as COO. */
function shuffledPoissonCase(): object {
  const cases = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'solvers', 'partitioning', 'shuffledCases.json'), 'utf8')) as {
    cases: ShuffledCase[];
  };
  const shuffled = shuffledCaseMatrix(cases.cases.find((c) => c.name === 'poisson2d-30')!);
  return {
    format: 'coo',
    rows: shuffled.rows,
    cols: shuffled.cols,
    entries: Array.from({ length: shuffled.rows }, (_, i) =>
      Array.from(shuffled.colIdx.subarray(shuffled.rowPtr[i], shuffled.rowPtr[i + 1]), (j, q) => [
        i,
        j,
        shuffled.values[shuffled.rowPtr[i] + q],
      ]),
    ).flat(),
  };
}

const relative = (x: number, y: number) => Math.abs(x - y) / Math.abs(y);

async function expectCandidatesMatchAnalyses(advise: Job, matrix: object): Promise<void> {
  const advice = advise.result!.advice!;
  // The refinement runs from the best listed candidate unless that one is at kappa(S) = 1 already (nothing is lower).
  const listedKappaS = advice.candidates.filter((c) => c.strategy !== 'refined').map((c) => c.kappaS ?? Infinity);
  // The workers run on the default backend: native, with METIS, when the addon was built with it.
  const strategies = [
    'given',
    'contiguous',
    'round-robin',
    'rcm-contiguous',
    'multilevel',
    ...(nativeMetis() === null ? [] : ['metis']),
    ...(Math.min(...listedKappaS) > 1 + 1e-8 ? ['refined'] : []),
  ];
  expect(advice.candidates.map((c) => c.strategy)).toEqual(strategies);
  for (const candidate of advice.candidates) {
    const analysis = await runJob(service.app, { type: 'analyze', matrix, partition: { assignment: candidate.assignment } });
    expect(analysis.status).toBe('succeeded');
    // APC's predicted time on the candidate is the analysis' on that assignment: the same iterations (kappa(S)
    // gives the rate either way, so they differ at most by the rounding up at a boundary) and the same model
    // (the seconds per iteration of two calibrations, within their measurement noise).
    const predicted = analysis.result!.analysis!.timeToSolution!.apc;
    const time = candidate.timeToSolution!;
    expect(time.algorithm).toBe('apc');
    expect(Math.abs(time.iterations! - predicted.iterations!)).toBeLessThanOrEqual(1);
    expect(time.seconds).toBeCloseTo(time.iterations! * time.secondsPerIteration, 12);
    expect(time.secondsPerIteration / predicted.secondsPerIteration).toBeGreaterThan(1 / 3);
    expect(time.secondsPerIteration / predicted.secondsPerIteration).toBeLessThan(3);
    expect(relative(candidate.kappaS!, analysis.result!.analysis!.conditioning.kappaS)).toBeLessThan(1e-9);
    // theta_H: the given partition's and the best's, the analysis' value; the others say why they have none.
    if (candidate.strategy === 'given' || candidate.strategy === advice.best)
      expect(Math.abs(candidate.thetaH! - analysis.result!.analysis!.heterogeneity.thetaH)).toBeLessThan(1e-9);
    else if (candidate.thetaH === null)
      expect(candidate.notComputed).toMatch(/^theta_H not computed: only the given partition's and the best/);
    else expect(Math.abs(candidate.thetaH - analysis.result!.analysis!.heterogeneity.thetaH)).toBeLessThan(1e-9);
  }
}

describe('advise jobs', () => {
  it("on a shuffled block-diagonal matrix: the blocks (kappa(S) = 1, theta_H = pi/2), each kappa(S) an analyze job's; fromAdvice solves in one APC iteration", async () => {
    const advise = await runJob(service.app, { type: 'advise', matrix: dense, partition: { machines: 4 }, options: { imbalance: 0.05 } });
    expect(advise.status, JSON.stringify(advise.error)).toBe('succeeded');
    expect(advise.type).toBe('advise');
    expect(advise.options.imbalance).toBe(0.05);
    expect(advise.algorithms).toEqual([]);
    const advice = advise.result!.advice!;
    expect(advice.imbalance).toBe(0.05);
    const best = advice.candidates.find((c) => c.strategy === advice.best)!;
    expect(Math.abs(best.kappaS! - 1)).toBeLessThan(1e-9);
    expect(best.thetaH).toBeCloseTo(Math.PI / 2, 12);
    expect(advice.givenRatio).toBeGreaterThan(2);
    // Found before the refinement, which has nothing to lower from kappa(S) = 1 and is not run.
    expect(advice.candidates.map((c) => c.strategy)).not.toContain('refined');
    // The analysis is the given partition's.
    expect(advise.result!.analysis!.conditioning.kappaS).toBe(advice.candidates[0].kappaS);
    await expectCandidatesMatchAnalyses(advise, dense);

    const solve = await runJob(service.app, { type: 'solve', algorithms: ['apc'], matrix: dense, partition: { fromAdvice: advise.id } });
    expect(solve.status).toBe('succeeded');
    expect(solve.partition).toEqual({ kind: 'fromAdvice', m: 4, sizes: best.sizes, fromAdvice: advise.id });
    expect(solve.result!.runs.apc).toMatchObject({ status: 'converged', iterations: 1 });
    expect(solve.result!.runs.apc!.stopReason).toMatch(/^Converged after 1 iteration: /);
    const served = await service.app.inject({ method: 'GET', url: `/v1/jobs/${solve.id}/partition` });
    expect(served.json<{ assignment: number[] }>().assignment).toEqual(best.assignment);
  }, 120_000);

  it('on a regression whose machines each span R^n: the given partition at kappa(S) = 1, no row-graph candidate made', async () => {
    const matrix = { format: 'generator', generator: 'regression', rows: 240, n: 8, skew: 0, sigma: 0.1, seed: 4 };
    const advise = await runJob(service.app, { type: 'advise', matrix, partition: { machines: 4 } });
    expect(advise.status, JSON.stringify(advise.error)).toBe('succeeded');
    const advice = advise.result!.advice!;
    // The job's analysis hands the given partition over: at kappa(S) = 1 nothing is lower, so the graph is not built.
    expect(advice.best).toBe('given');
    expect(Math.abs(advice.candidates[0].kappaS! - 1)).toBeLessThan(1e-8);
    expect(advice.candidates.map((c) => c.strategy)).toEqual(['given', 'contiguous', 'round-robin']);
    // Contiguous is the given partition of { machines: 4 } (evaluated once); round-robin is not evaluated, and says why.
    expect(advice.candidates[1].kappaS).toBe(advice.candidates[0].kappaS);
    expect(advice.candidates[2]).toMatchObject({ kappaS: null, timeToSolution: null });
    expect(advice.candidates[2].notComputed).toContain('the least any partition has');
    expect(advice.summary).toMatch(
      /APC's optimal rate is 0: in exact arithmetic it converges in at most one iteration\. No partition of the row graph/,
    );
    const solve = await runJob(service.app, { type: 'solve', algorithms: ['apc'], matrix, partition: { fromAdvice: advise.id } });
    expect(solve.status).toBe('succeeded');
    expect(solve.result!.runs.apc!.status).toBe('converged');
    expect(solve.result!.runs.apc!.iterations).toBeLessThanOrEqual(1);
  }, 120_000);

  it("on a shuffled Poisson matrix on CSR: each candidate kappa(S) an analyze job's, the best far below the given", async () => {
    const advise = await runJob(service.app, { type: 'advise', matrix: coo, partition: { machines: 4 } });
    expect(advise.status, JSON.stringify(advise.error)).toBe('succeeded');
    expect(advise.storage).toBe('csr');
    const advice = advise.result!.advice!;
    expect(advice.imbalance).toBe(0.1);
    expect(advice.givenRatio).toBeGreaterThan(3);
    expect(advice.candidates.find((c) => c.strategy === advice.best)!.withinImbalance).toBe(true);
    await expectCandidatesMatchAnalyses(advise, coo);
  }, 120_000);

  it("on fs1831 (kappa(A) = 2e13) in 8 parts: a candidate whose machine's rows are numerically dependent is listed without kappa(S), as an analyze job of it fails; the job succeeds (it failed with singular-matrix)", async () => {
    const matrix = { format: 'matrix-market', data: readMatrixText('fs1831.mtx') };
    const advise = await runJob(service.app, { type: 'advise', matrix, partition: { machines: 8 } });
    expect(advise.status, JSON.stringify(advise.error)).toBe('succeeded');
    const advice = advise.result!.advice!;
    const failed = advice.candidates.filter((c) => c.notComputed?.includes("this partition's setup fails"));
    expect(failed.map((c) => c.strategy)).toContain('multilevel');
    for (const candidate of failed) {
      expect([candidate.kappaS, candidate.kappaSBounds, candidate.timeToSolution]).toEqual([null, null, null]);
      const analysis = await runJob(service.app, { type: 'analyze', matrix, partition: { assignment: candidate.assignment } });
      expect(analysis.status).toBe('failed');
      expect(analysis.error).toMatchObject({ status: 422, code: 'singular-matrix' });
    }
    expect(advice.candidates.find((c) => c.strategy === advice.best)!.kappaS).not.toBeNull();
  }, 120_000);

  it('takes imbalance 0 and 1, the bounds of options.imbalance (0 failed with an internal error: METIS refused it)', async () => {
    for (const imbalance of [0, 1]) {
      const advise = await runJob(service.app, { type: 'advise', matrix: coo, partition: { machines: 5 }, options: { imbalance } });
      expect(advise.status, JSON.stringify(advise.error)).toBe('succeeded');
      const advice = advise.result!.advice!;
      expect(advice.imbalance).toBe(imbalance);
      // 144 rows over 5 machines: 28 or 29 each at imbalance 0; 1 to 57 at imbalance 1.
      for (const candidate of advice.candidates) {
        expect(candidate.withinImbalance, `${imbalance} ${candidate.strategy}`).toBe(true);
        if (imbalance === 0)
          expect(
            candidate.sizes.every((size) => size === 28 || size === 29),
            candidate.strategy,
          ).toBe(true);
      }
    }
  }, 120_000);

  it('lists the refined candidate; when it is the best, fromAdvice takes it and an analyze job reports its kappa(S)', async () => {
    const matrix = shuffledPoissonCase();
    const advise = await runJob(service.app, { type: 'advise', matrix, partition: { machines: 8 } });
    expect(advise.status, JSON.stringify(advise.error)).toBe('succeeded');
    expect(advise.options.refinementTries).toBe(DEFAULT_REFINEMENT_TRIES);
    const advice = advise.result!.advice!;
    const refined = advice.candidates.find((c) => c.strategy === 'refined')!;
    expect(refined.withinImbalance).toBe(true);
    const others = advice.candidates.filter((c) => c.strategy !== 'refined');
    expect(refined.kappaS).toBeLessThan(Math.min(...others.map((c) => c.kappaS!)));
    expect(advice.best).toBe('refined');
    expect(advice.summary).toMatch(/^refined lowers kappa\(S\)/);

    const analysis = await runJob(service.app, { type: 'analyze', matrix, partition: { fromAdvice: advise.id } });
    expect(analysis.status).toBe('succeeded');
    expect(analysis.partition).toMatchObject({ kind: 'fromAdvice', m: 8, sizes: refined.sizes, fromAdvice: advise.id });
    expect(relative(analysis.result!.analysis!.conditioning.kappaS, refined.kappaS!)).toBeLessThan(1e-9);
    const served = await service.app.inject({ method: 'GET', url: `/v1/jobs/${analysis.id}/partition` });
    expect(served.json<{ assignment: number[] }>().assignment).toEqual(refined.assignment);
  }, 240_000);

  it("options.refinementTries over the socket: 0 lists no 'refined' candidate and says so, 2 spends at most 2 tries; both echoed", async () => {
    const matrix = shuffledPoissonCase();
    const none = await solveOverSocket(service, { type: 'advise', matrix, partition: { machines: 8 }, options: { refinementTries: 0 } });
    expect(none.options.refinementTries).toBe(0);
    expect(none.result!.advice!.candidates.map((c) => c.strategy)).not.toContain('refined');
    expect(none.result!.advice!.summary).toContain('The refinement was not run (refinementTries 0).');
    const two = await solveOverSocket(service, { type: 'advise', matrix, partition: { machines: 8 }, options: { refinementTries: 2 } });
    expect(two.options.refinementTries).toBe(2);
    const refined = two.result!.advice!.candidates.find((c) => c.strategy === 'refined')!;
    expect(refined.refinement!.tries).toBeGreaterThan(0);
    expect(refined.refinement!.tries).toBeLessThanOrEqual(2);
    // The listed candidates are those of the job without refinement.
    const listed = two.result!.advice!.candidates.filter((c) => c.strategy !== 'refined');
    expect(listed.map((c) => c.kappaS)).toEqual(none.result!.advice!.candidates.map((c) => c.kappaS));
  }, 240_000);

  it('fromAdvice: an unknown job is a 404, an analyze job or another n a 422, at /partition/fromAdvice', async () => {
    const unknown = await createJob(service.app, {
      type: 'analyze',
      matrix: dense,
      partition: { fromAdvice: '01ARZ3NDEKTSV4RRFFQ69G5FAV' },
    });
    expect(unknown.response.statusCode).toBe(404);
    expect(unknown.response.json<ProblemDetails>()).toMatchObject({
      code: 'job-not-found',
      errors: [{ pointer: '/partition/fromAdvice' }],
    });

    const analysis = await runJob(service.app, { type: 'analyze', matrix: dense, partition: { machines: 4 } });
    const notAdvise = await createJob(service.app, { type: 'analyze', matrix: dense, partition: { fromAdvice: analysis.id } });
    expect(notAdvise.response.statusCode).toBe(422);
    expect(notAdvise.response.json<ProblemDetails>()).toMatchObject({ errors: [{ pointer: '/partition/fromAdvice' }] });
    expect(notAdvise.response.json<ProblemDetails>().detail).toMatch(/needs an advise job/);

    const small = await runJob(service.app, {
      type: 'advise',
      matrix: {
        format: 'dense',
        data: [
          [2, 1],
          [1, 3],
        ],
      },
      partition: { machines: 2 },
    });
    expect(small.status).toBe('succeeded');
    const wrongN = await createJob(service.app, { type: 'analyze', matrix: dense, partition: { fromAdvice: small.id } });
    expect(wrongN.response.statusCode).toBe(422);
    expect(wrongN.response.json<ProblemDetails>()).toMatchObject({
      code: 'dimension-mismatch',
      errors: [{ pointer: '/partition/fromAdvice' }],
    });
  }, 60_000);
});
