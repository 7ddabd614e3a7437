/**
 * Studies through HTTP, with a real Redis and two separate worker processes (src/jobs/workerMain.ts):
 * the paper's Experiment 1 against the table of docs/SPEC.md, Experiments 2 and 3's trends, the raw
 * samples (CSV) and figures (SVG), progress events, a worker killed mid-study, cancel, delete, bad
 * grids and limits.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Study } from '../../src/jobs/studies/types.js';
import type { ProblemDetails } from '../../src/jobs/types.js';
import { planStudy } from '../../src/solvers/studies/plan.js';
import { computeGroupSample } from '../../src/solvers/studies/sampler.js';
import { contract } from '../support/contract.js';
import { openEventStream } from '../support/sse.js';
import { createStudy, getStudy, startStudyTestService, waitForStudy, type StudyTestService } from '../support/studyService.js';

const WORKER_ENV = { STUDY_WORKER_CONCURRENCY: '1', LOCK_DURATION_MS: '4000', STALLED_INTERVAL_MS: '1000' };
let service: StudyTestService;
let redis: Redis;

beforeAll(async () => {
  service = await startStudyTestService({ MAX_STUDY_SAMPLES: 20_000, MAX_STUDY_POINT_SAMPLES: 2000, MAX_STUDY_POINTS: 50 }, WORKER_ENV);
  service.spawnWorker();
  service.spawnWorker();
  redis = new Redis(service.redis.url);
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await service?.close();
});

/** The Redis keys naming a study, once none of its chunks runs any more (the end of a running chunk removes what a DELETE could not). */
async function keysLeft(id: string): Promise<string[]> {
  const chunks = new Queue(`${service.config.STUDY_QUEUE_NAME}-chunks`, { connection: redis, prefix: service.config.KEY_PREFIX });
  try {
    for (let k = 0; k < 200 && (await chunks.getActiveCount()) > 0; k++) await new Promise((resolve) => setTimeout(resolve, 100));
  } finally {
    await chunks.close();
  }
  let keys = await redis.keys(`*${id}*`);
  // The worker's clean-up follows the chunk's end by a round trip or two.
  for (let k = 0; k < 50 && keys.length > 0; k++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    keys = await redis.keys(`*${id}*`);
  }
  return keys;
}

function metric(study: Study, settings: Partial<Record<string, number>>, name: string) {
  const point = study.result!.points.find((p) => Object.entries(settings).every(([k, v]) => p.settings[k as 'n'] === v));
  return point!.metrics.find((m) => m.metric === name)!;
}

describe('Experiment 1 (docs/SPEC.md table), 300 samples per point', () => {
  it('reproduces E[rho_APC](m) and E[rho_HBM] within 3 standard errors at m = 2, 12, 120 for mean 0 and 1', async () => {
    const created = await createStudy(service.app, { preset: 'experiment-1', grid: { m: [2, 12, 120] } });
    expect(created.status).toBe('queued');
    expect(created.points).toHaveLength(6);
    const study = await waitForStudy(service.app, created.id, { timeoutMs: 600_000 });
    expect(study.status, JSON.stringify(study.error)).toBe('succeeded');
    const checks = study.result!.reference!;
    expect(checks).toHaveLength(12); // 6 APC + 6 HBM values of the table
    for (const check of checks) expect(Math.abs(check.deviation!), JSON.stringify(check)).toBeLessThanOrEqual(3);
    for (const point of study.result!.points) {
      expect(point.samples).toBe(300);
      expect(point.kept + point.dropped + point.failed).toBe(300);
      expect(point.failed).toBe(0);
      // Dropped samples are counted with why (kappa(A^T A) > 1e7), and are few.
      if (point.dropped > 0) expect(point.dropReasons).toEqual([{ reason: 'kappa(A^T A) > 10000000', count: point.dropped }]);
      // kappa(A) > 3162 is common for mean 1 (sigma_max ~ n from the mean, sigma_min ~ 1/sqrt(n)): ~1/3 of the draws.
      expect(point.dropped).toBeLessThan(150);
    }
    // The same matrices at every m: E[rho_HBM] is identical across m.
    expect(metric(study, { mean: 1, m: 2 }, 'rates.dhbm.rate').mean).toBe(metric(study, { mean: 1, m: 120 }, 'rates.dhbm.rate').mean);
    // APC beats HBM, and deteriorates towards it as m grows.
    expect(metric(study, { mean: 1, m: 2 }, 'rates.apc.rate').mean!).toBeLessThan(
      metric(study, { mean: 1, m: 12 }, 'rates.apc.rate').mean!,
    );

    const csv = await service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/samples.csv` });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.body.trim().split('\n');
    expect(lines[0]).toBe('point,mean,std,n,m,sample,seed,status,reason,rates.apc.rate,rates.dhbm.rate');
    expect(lines).toHaveLength(1 + 6 * 300);

    const svg = await service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/figures/figure-1` });
    expect(svg.statusCode).toBe(200);
    expect(svg.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(svg.body).toContain('<svg');
    expect(svg.body).toContain('<polygon'); // the 95% bands
    expect(svg.body).toContain('mean = 1');
  }, 600_000);
});

describe("Experiments 2 and 3: the paper's trends", () => {
  it('Experiment 2: rho_HBM rises with n while rho_APC levels off (m = 10, mean 1)', async () => {
    const created = await createStudy(service.app, { preset: 'experiment-2', samples: 60, grid: { m: [10], n: [40, 120, 200] } });
    const study = await waitForStudy(service.app, created.id, { timeoutMs: 600_000 });
    expect(study.status).toBe('succeeded');
    const apc = [40, 120, 200].map((n) => metric(study, { n }, 'rates.apc.rate').mean!);
    const hbm = [40, 120, 200].map((n) => metric(study, { n }, 'rates.dhbm.rate').mean!);
    expect(hbm[1]).toBeGreaterThan(hbm[0]);
    expect(hbm[2]).toBeGreaterThan(hbm[1]);
    for (let k = 0; k < 3; k++) expect(apc[k]).toBeLessThan(hbm[k]);
    // For large n, 1 - rho (the convergence speed) shrinks less for APC than for HBM: APC is nearly flat in n.
    expect((1 - apc[1]) / (1 - apc[2])).toBeLessThan((1 - hbm[1]) / (1 - hbm[2]));
    expect((1 - apc[1]) / (1 - apc[2])).toBeLessThan(1.3);
  }, 600_000);

  it('Experiment 3: tan^-2(theta_12) concentrates at 0 as n grows; p = 1 matches its closed form', async () => {
    const created = await createStudy(service.app, { preset: 'experiment-3', samples: 800, grid: { p: [1, 3], n: [16, 64, 256] } });
    const study = await waitForStudy(service.app, created.id, { timeoutMs: 600_000 });
    expect(study.status).toBe('succeeded');
    for (const p of [1, 3]) {
      const means = [16, 64, 256].map((n) => metric(study, { p, n }, 'tanInvSqTheta').mean!);
      expect(means[1]).toBeLessThan(means[0]);
      expect(means[2]).toBeLessThan(means[1]);
      const above = [16, 64, 256].map((n) => metric(study, { p, n }, 'tanInvSqTheta').exceedance.find((e) => e.eps === 0.1)!.probability!);
      expect(above[1]).toBeLessThan(above[0]);
      expect(above[2]).toBeLessThanOrEqual(above[1]);
    }
    for (const n of [16, 64, 256]) {
      const line = metric(study, { p: 1, n }, 'tanInvSqTheta');
      for (const e of line.exceedance) {
        expect(e.closedForm).not.toBeNull();
        expect(Math.abs(e.probability! - e.closedForm!)).toBeLessThanOrEqual(
          4 * Math.sqrt((e.closedForm! * (1 - e.closedForm!)) / line.count) + 1e-9,
        );
      }
      expect(line.closedFormMean).toBeCloseTo(1 / (n - 3), 15);
    }
    for (const name of ['figure-3', 'figure-4']) {
      const svg = await service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/figures/${name}` });
      expect(svg.statusCode).toBe(200);
      expect(svg.body).toContain('p = 3');
    }
  }, 600_000);
});

describe('workers, cancel, delete', () => {
  it('a worker killed mid-study: the study completes, and no sample is counted twice', async () => {
    const created = await createStudy(service.app, {
      generator: 'gaussian',
      settings: { n: 120, mean: 1 },
      grid: { m: [2, 6, 30] },
      samples: 600,
      metrics: ['conditioning.kappaS', 'rates.apc.rate'],
    });
    await waitForStudy(service.app, created.id, {
      until: (s) => s.progress.chunksDone >= 1 || (s.status !== 'queued' && s.status !== 'running'),
    });
    const victim = service.workers.find((w) => w.exitCode === null)!;
    victim.kill('SIGKILL');
    const study = await waitForStudy(service.app, created.id, { timeoutMs: 600_000 });
    service.spawnWorker();
    expect(study.status).toBe('succeeded');
    expect(study.progress.done).toBe(study.progress.total);
    for (const point of study.result!.points) {
      expect(point.kept + point.dropped + point.failed).toBe(600);
      expect(point.failed).toBe(0);
    }
    const lines = (await service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/samples.csv` })).body
      .trim()
      .split('\n')
      .slice(1);
    expect(lines).toHaveLength(3 * 600);
    expect(new Set(lines.map((line) => line.split(',').slice(0, 5).join(','))).size).toBe(3 * 600);
    // The stored values are the samples' own (recomputed here for a few of them).
    const plan = planStudy(created.request, { maxSamples: 1e6, maxPointSamples: 1e4, maxPoints: 100, maxN: 1000 });
    for (const sample of [0, 299, 599]) {
      const outcomes = computeGroupSample(plan.definition, plan.groups[0], sample);
      outcomes.forEach((outcome, k) => {
        // point, mean, n, m, sample, seed, status, reason, conditioning.kappaS, rates.apc.rate
        const row = lines.find((line) => line.startsWith(`${k},`) && line.split(',')[4] === String(sample))!.split(',');
        // Bit-identical up to OpenBLAS's thread count (one per chunk in the workers, more here).
        expect(Math.abs(Number(row[8]) - outcome.values[0]) / outcome.values[0]).toBeLessThan(1e-12);
      });
    }
  }, 600_000);

  it('cancel stops a study and removes its unfinished chunks; delete removes it and its samples', async () => {
    const created = await createStudy(service.app, { preset: 'experiment-1', samples: 2000, grid: { mean: [0], m: [2, 4, 6, 8, 10] } });
    await waitForStudy(service.app, created.id, { until: (s) => s.status === 'running' });
    const cancel = await service.app.inject({ method: 'POST', url: `/v1/studies/${created.id}/cancel` });
    expect(cancel.statusCode).toBe(200);
    expect(cancel.json<Study>().status).toBe('cancelled');
    const chunks = new Queue(`${service.config.STUDY_QUEUE_NAME}-chunks`, { connection: redis, prefix: service.config.KEY_PREFIX });
    try {
      const waiting = await chunks.getJobCounts('waiting', 'prioritized', 'delayed');
      expect(waiting.waiting + waiting.prioritized + waiting.delayed).toBe(0);
    } finally {
      await chunks.close();
    }
    await waitForStudy(service.app, created.id, { until: () => true });
    // Chunks already running stop at their next check (within ~50 ms of computation) and store nothing.
    const activeChunks = new Queue(`${service.config.STUDY_QUEUE_NAME}-chunks`, { connection: redis, prefix: service.config.KEY_PREFIX });
    for (let k = 0; k < 200 && (await activeChunks.getActiveCount()) > 0; k++) await new Promise((resolve) => setTimeout(resolve, 100));
    await activeChunks.close();
    const later = await getStudy(service.app, created.id);
    expect(later.status).toBe('cancelled');
    expect(later.result).toBeNull();

    const removed = await service.app.inject({ method: 'DELETE', url: `/v1/studies/${created.id}` });
    expect(removed.statusCode).toBe(204);
    expect((await service.app.inject({ method: 'GET', url: `/v1/studies/${created.id}` })).statusCode).toBe(404);
    expect(await keysLeft(created.id)).toEqual([]);
  }, 120_000);

  it('delete right after cancel, while chunks still run: nothing of the study is left once they stop', async () => {
    const chunks = new Queue(`${service.config.STUDY_QUEUE_NAME}-chunks`, { connection: redis, prefix: service.config.KEY_PREFIX });
    // The case needs the DELETE to land while a chunk is still locked by its worker (its parent job then cannot be
    // removed, and is still there right after the 204); a chunk stops ~50 ms of computation after the cancel, which
    // a loaded machine may outlast. So up to three studies, until one DELETE meets a running chunk.
    let raced = 0;
    try {
      for (let attempt = 0; attempt < 3 && raced === 0; attempt++) {
        const created = await createStudy(service.app, { preset: 'experiment-1', samples: 2000, grid: { mean: [0], m: [2, 4, 6, 8, 10] } });
        await waitForStudy(service.app, created.id, { until: (s) => s.status === 'running' });
        for (let k = 0; k < 100 && (await chunks.getActiveCount()) === 0; k++) await new Promise((resolve) => setTimeout(resolve, 50));
        expect((await service.app.inject({ method: 'POST', url: `/v1/studies/${created.id}/cancel` })).statusCode).toBe(200);
        expect((await service.app.inject({ method: 'DELETE', url: `/v1/studies/${created.id}` })).statusCode).toBe(204);
        raced = await redis.exists(`${service.config.KEY_PREFIX}:${service.config.STUDY_QUEUE_NAME}:${created.id}`);
        expect((await service.app.inject({ method: 'GET', url: `/v1/studies/${created.id}` })).statusCode).toBe(404);
        expect(await keysLeft(created.id)).toEqual([]);
      }
    } finally {
      await chunks.close();
    }
    expect(raced).toBe(1);
  }, 180_000);

  it('deleting a running study is a 409; events stream progress until the end', async () => {
    // Large enough that its chunks outlast the stream's opening (with 80 samples, on a loaded CI machine, every chunk
    // once finished before the stream listened: no progress event, as the contract allows).
    const created = await createStudy(service.app, { preset: 'experiment-1', samples: 150, grid: { mean: [0], m: [2, 4] } });
    const stream = await openEventStream(`${service.baseUrl}/v1/studies/${created.id}/events`);
    expect(stream.status).toBe(200);
    const early = await service.app.inject({ method: 'DELETE', url: `/v1/studies/${created.id}` });
    if (early.statusCode !== 204) expect(early.statusCode).toBe(409);
    await stream.ended;
    expect(stream.events[0].event).toBe('status');
    const opened = (stream.events[0].data as { study: Study }).study.progress;
    const progress = stream.events.filter((e) => e.event === 'progress').map((e) => e.data as { done: number; total: number });
    // Every chunk finished after the stream opened is a progress event, the last one at the total.
    if (opened.done < 300) {
      expect(progress.length).toBeGreaterThan(0);
      expect(progress[progress.length - 1]).toMatchObject({ done: 300, total: 300 });
    }
    const last = stream.events[stream.events.length - 1];
    expect(last.event).toBe('status');
    expect((last.data as { status: string }).status).toBe('succeeded');
    // Every event's data is what the OpenAPI document declares for the stream (StudyEventData).
    for (const event of stream.events) expect(contract().eventViolations('/v1/studies/{id}/events', event.data)).toEqual([]);
  }, 120_000);
});

describe('bad grids and limits: refused before anything is queued', () => {
  const post = (body: unknown) => service.app.inject({ method: 'POST', url: '/v1/studies', payload: body as object });
  const general = { grid: { m: [2] }, samples: 10, metrics: ['rates.apc.rate'] };

  it('an empty axis is a 400 naming it; an unknown metric or too many points a 422 naming it', async () => {
    const before = await redis.zcard(`${service.config.KEY_PREFIX}:store:${service.config.STUDY_QUEUE_NAME}:index`);
    const empty = await post({ ...general, grid: { m: [] } });
    expect(empty.statusCode).toBe(400);
    expect(JSON.stringify(empty.json())).toContain('/grid/m');
    const unknown = await post({ ...general, metrics: ['rates.apc.speed'] });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json<{ detail: string }>().detail).toContain("'rates.apc.speed'");
    const share = await post({ ...general, metrics: ['recommendation.algorithm'] });
    expect(share.statusCode).toBe(202);
    await waitForStudy(service.app, share.json<Study>().id);
    const many = await post({ ...general, grid: { m: [2, 3, 4, 5, 6, 7, 8], n: [60, 120, 180, 240, 300, 360, 420, 480] } });
    expect(many.statusCode).toBe(422);
    expect(many.json<{ detail: string }>().detail).toContain('MAX_STUDY_POINTS');
    const tooFewRows = await post({ ...general, settings: { n: 4 }, grid: { m: [8] } });
    expect(tooFewRows.statusCode).toBe(422);
    const after = await redis.zcard(`${service.config.KEY_PREFIX}:store:${service.config.STUDY_QUEUE_NAME}:index`);
    expect(after).toBe(before + 1);
  });

  it('over MAX_STUDY_SAMPLES, MAX_STUDY_POINT_SAMPLES or MAX_STUDY_N: 413', async () => {
    const total = await post({ ...general, grid: { m: [2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24] }, samples: 2000 });
    expect(total.statusCode).toBe(413);
    expect(total.json<{ detail: string }>().detail).toContain('MAX_STUDY_SAMPLES');
    const perPoint = await post({ ...general, samples: 2001 });
    expect(perPoint.statusCode).toBe(413);
    expect(perPoint.json<{ detail: string }>().detail).toContain('MAX_STUDY_POINT_SAMPLES');
    const large = await post({ ...general, settings: { n: 5000 } });
    expect(large.statusCode).toBe(413);
    const chunks = new Queue(`${service.config.STUDY_QUEUE_NAME}-chunks`, { connection: redis, prefix: service.config.KEY_PREFIX });
    try {
      const counts = await chunks.getJobCounts('waiting', 'active');
      expect(counts.waiting + counts.active).toBe(0);
    } finally {
      await chunks.close();
    }
  });

  it('lists studies newest first with a cursor; unknown ids, and figures a study does not have, are 404 in words of studies', async () => {
    const page = await service.app.inject({ method: 'GET', url: '/v1/studies?limit=2' });
    expect(page.statusCode).toBe(200);
    const body = page.json<{ items: { id: string }[]; nextCursor: string | null }>();
    expect(body.items).toHaveLength(2);
    expect(body.nextCursor).not.toBeNull();
    const next = await service.app.inject({ method: 'GET', url: `/v1/studies?limit=2&cursor=${body.nextCursor}` });
    expect(next.json<{ items: { id: string }[] }>().items[0].id < body.items[1].id).toBe(true);
    const unknown = await service.app.inject({ method: 'GET', url: '/v1/studies/01NOSUCHSTUDY' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json<ProblemDetails>().code).toBe('study-not-found');
    expect(unknown.json<ProblemDetails>().detail).toMatch(/^No study with id '01NOSUCHSTUDY'/);
    const cursor = await service.app.inject({ method: 'GET', url: '/v1/studies?cursor=nonsense' });
    expect(cursor.statusCode).toBe(400);
    expect(cursor.json<ProblemDetails>().code).toBe('invalid-cursor');
    expect(cursor.json<ProblemDetails>().detail).toContain('not a cursor returned by GET /v1/studies;');

    // A figure the study does not have: its own problem, naming the figures it has.
    const study = await getStudy(service.app, body.items[0].id);
    const figure = await service.app.inject({ method: 'GET', url: `/v1/studies/${study.id}/figures/no-such-figure.svg` });
    expect(figure.statusCode).toBe(404);
    const names = study.figures.map((candidate) => `'${candidate.name}'`).join(', ');
    expect(figure.json()).toMatchObject({
      type: '/problems/figure-not-found',
      code: 'figure-not-found',
      detail: `Study '${study.id}' has no figure 'no-such-figure'; ${names ? `its figures are ${names}.` : 'it has no figures.'}`,
    });
    const described = await service.app.inject({ method: 'GET', url: '/problems/figure-not-found' });
    expect(described.json()).toMatchObject({ status: 404, title: 'Figure not found' });
  });
});
