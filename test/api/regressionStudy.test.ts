/**
 * Regression studies through HTTP (a real Redis, one worker process): a small study over skew runs
 * end to end, and one of its samples' metrics (rates of APC and D-HBM, kappa(S), kappa(A^T A), the
 * least-squares residual) equal NumPy's of the same data (scripts/regressionReference.py,
 * test/fixtures/regression.json); the regression-skew preset draws its figures.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStudy, startStudyTestService, waitForStudy, type StudyTestService } from '../support/studyService.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/regression.json', import.meta.url), 'utf8')) as {
  study: {
    request: Record<string, unknown>;
    point: number;
    sample: number;
    apcRate: number;
    dhbmRate: number;
    kappaS: number;
    kappaAtA: number;
    leastSquaresResidual: number;
  };
};

let service: StudyTestService;

beforeAll(async () => {
  service = await startStudyTestService({}, { STUDY_WORKER_CONCURRENCY: '1' });
  service.spawnWorker();
}, 60_000);

afterAll(async () => {
  await service?.close();
});

describe('regression studies over HTTP', () => {
  it("a study over skew: every sample kept, one sample's metrics equal NumPy's", async () => {
    const created = await createStudy(service.app, fixture.study.request);
    expect(created.points.map((point) => point.settings.skew)).toEqual([0, 4]);
    expect(created.points[0].settings).toMatchObject({ n: 12, rowsPerFeature: 2, m: 4, sigma: 0.1 });
    const study = await waitForStudy(service.app, created.id, { timeoutMs: 300_000 });
    expect(study.status, JSON.stringify(study.error)).toBe('succeeded');
    for (const point of study.result!.points) expect(point.kept).toBe(3);

    const csv = await service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/samples.csv` });
    expect(csv.statusCode).toBe(200);
    const [header, ...rows] = csv.body.trim().split('\n');
    expect(header).toBe(
      'point,sigma,skew,rowsPerFeature,n,m,sample,seed,status,reason,rates.apc.rate,rates.dhbm.rate,conditioning.kappaS,' +
        'conditioning.kappaAtA,consistency.leastSquaresResidual',
    );
    const row = rows
      .map((line) => line.split(','))
      .find(([point, , , , , , sample]) => Number(point) === fixture.study.point && Number(sample) === fixture.study.sample)!;
    const [apc, dhbm, kappaS, kappaAtA, residual] = row.slice(10).map(Number);
    const close = (value: number, reference: number): number => Math.abs(value / reference - 1);
    expect(close(kappaS, fixture.study.kappaS)).toBeLessThan(1e-9);
    expect(close(kappaAtA, fixture.study.kappaAtA)).toBeLessThan(1e-9);
    expect(close(apc, fixture.study.apcRate)).toBeLessThan(1e-9);
    expect(close(dhbm, fixture.study.dhbmRate)).toBeLessThan(1e-9);
    expect(close(residual, fixture.study.leastSquaresResidual)).toBeLessThan(1e-8);
  }, 300_000);

  it('the regression-skew preset (reduced) draws E[rho_APC] and E[rho_HBM] against skew', async () => {
    const created = await createStudy(service.app, { preset: 'regression-skew', samples: 2, grid: { skew: [0, 8] } });
    const study = await waitForStudy(service.app, created.id, { timeoutMs: 300_000 });
    expect(study.status, JSON.stringify(study.error)).toBe('succeeded');
    expect(study.result!.points.map((point) => point.settings)).toEqual([
      expect.objectContaining({ skew: 0, n: 50, rowsPerFeature: 8, m: 16, sigma: 0.1 }),
      expect.objectContaining({ skew: 8, n: 50, rowsPerFeature: 8, m: 16, sigma: 0.1 }),
    ]);
    for (const name of ['figure-1', 'figure-2']) {
      const svg = await service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/figures/${name}` });
      expect(svg.statusCode, svg.body).toBe(200);
      expect(svg.body).toContain('<svg');
      expect(svg.body).toContain('skew');
    }
  }, 300_000);
});
