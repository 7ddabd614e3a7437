/**
 * Documents that say what they ran on, through HTTP over a socket with a real Redis
 * and a separate worker process: a job echoes its matrix (format, generator settings or stored id,
 * n, nnz, content hash: one hash for one matrix given dense, as COO on CSR or stored) and its
 * partition (kind, m, sizes; the assignment at GET /v1/jobs/{id}/partition, reused as `fromJob`);
 * a study's random partition replays as `{ family: 'random', seed, machines }`; labels on jobs
 * and studies are echoed and filter the lists.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Study, StudyPage } from '../../src/jobs/studies/types.js';
import type { Job, JobPage, ProblemDetails, StoredMatrix } from '../../src/jobs/types.js';
import { generateMatrix } from '../../src/solvers/input/generators.js';
import { randomPartition } from '../../src/solvers/input/partition.js';
import { planStudy } from '../../src/solvers/studies/plan.js';
import type { GeneralStudyRequest } from '../../src/solvers/studies/presets.js';
import { samplePartition } from '../../src/solvers/studies/sampler.js';
import { startStudyTestService, waitForStudy, type StudyTestService } from '../support/studyService.js';
import { socketTransport, type Answer, type Transport } from '../support/transports.js';

let service: StudyTestService;
let http: Transport;

beforeAll(async () => {
  service = await startStudyTestService({}, { STUDY_WORKER_CONCURRENCY: '1', WORKER_CONCURRENCY: '1' });
  service.spawnWorker();
  http = socketTransport(service.baseUrl);
}, 60_000);

afterAll(async () => {
  await service?.close();
});

const send = (method: string, url: string, body?: unknown): Promise<Answer> =>
  http.send({
    method,
    url,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });

async function create(body: unknown): Promise<Job> {
  const answer = await send('POST', '/v1/jobs', body);
  expect(answer.status, answer.text).toBe(202);
  return answer.json<Job>();
}

async function finished(id: string): Promise<Job> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = (await send('GET', `/v1/jobs/${id}`)).json<Job>();
    if (['succeeded', 'failed', 'cancelled'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The documented hash, written out independently: canonical CSR (nonzeros, columns ascending), LE int32/int32/float64. */
function canonicalSha256(rows: number[][]): { nnz: number; sha256: string } {
  const rowPtr = [0];
  const columns: number[] = [];
  const values: number[] = [];
  for (const row of rows) {
    row.forEach((value, j) => {
      if (value !== 0) {
        columns.push(j);
        values.push(value);
      }
    });
    rowPtr.push(columns.length);
  }
  const bytes = Buffer.concat([
    Buffer.from(Int32Array.from(rowPtr).buffer),
    Buffer.from(Int32Array.from(columns).buffer),
    Buffer.from(Float64Array.from(values).buffer),
  ]);
  return { nnz: values.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** A 60 x 60 tridiagonal matrix: its 178 entries are under 5% of n^2, so as COO it runs on CSR; as rows, dense. */
const N = 60;
const ROWS = Array.from({ length: N }, (_, i) =>
  Array.from({ length: N }, (_, j) => (i === j ? 4 + i / 64 : Math.abs(i - j) === 1 ? -1 : 0)),
);
/** The same matrix as COO triplets, in reverse order. */
const COO = ROWS.flatMap((row, i) => row.map((value, j): [number, number, number] => [i, j, value]).filter(([, , v]) => v !== 0)).reverse();
const ROUND_ROBIN = Array.from({ length: N }, (_, k) => k % 3);

describe('a job echoes its matrix', () => {
  it('dense, COO and stored inputs of one matrix: one content hash (the documented canonical CSR), n and nnz', async () => {
    const expected = canonicalSha256(ROWS);
    const dense = await create({ type: 'analyze', matrix: { format: 'dense', data: ROWS }, partition: { machines: 2 } });
    expect(dense.matrix).toEqual({ format: 'dense', n: N, ...expected });

    const coo = await create({
      type: 'analyze',
      matrix: { format: 'coo', rows: N, cols: N, entries: COO },
      partition: { machines: 2 },
    });
    expect(coo.matrix).toEqual({ format: 'coo', n: N, ...expected });
    expect([dense.storage, coo.storage]).toEqual(['dense', 'csr']);

    // Stored: hashed by the worker when it reads the matrix (null while queued).
    const text = [
      '%%MatrixMarket matrix coordinate real general',
      `${N} ${N} ${COO.length}`,
      ...COO.map(([i, j, v]) => `${i + 1} ${j + 1} ${v}`),
    ];
    const upload = await http.send({
      method: 'POST',
      url: '/v1/matrices',
      headers: { 'content-type': 'text/plain' },
      body: `${text.join('\n')}\n`,
    });
    expect(upload.status, upload.text).toBe(201);
    const stored = upload.json<StoredMatrix>();
    const onStored = await create({ type: 'analyze', matrix: { format: 'stored', id: stored.id }, partition: { machines: 2 } });
    expect(onStored.matrix).toEqual({ format: 'stored', n: N, id: stored.id, nnz: null, sha256: null });
    const ran = await finished(onStored.id);
    expect(ran.storage).toBe('csr');
    expect(ran.matrix).toEqual({ format: 'stored', n: N, id: stored.id, ...expected });
    for (const job of [dense, coo]) expect((await finished(job.id)).matrix.sha256).toBe(expected.sha256);
  }, 120_000);

  it('a generator: its settings at once, the hash of the generated matrix once a worker has started the job', async () => {
    const spec = { generator: 'gaussian', n: 30, mean: 1, std: 1, seed: 5 } as const;
    const job = await create({ type: 'analyze', matrix: { format: 'generator', ...spec }, partition: { machines: 3 } });
    expect(job.matrix).toEqual({ format: 'generator', n: 30, generator: spec, nnz: null, sha256: null });
    const ran = await finished(job.id);
    expect(ran.status).toBe('succeeded');
    const A = generateMatrix(spec);
    const rows = Array.from({ length: 30 }, (_, i) => Array.from(A.data.subarray(i * 30, i * 30 + 30)));
    expect(ran.matrix).toEqual({ format: 'generator', n: 30, generator: spec, ...canonicalSha256(rows) });
  }, 60_000);
});

describe('a job echoes its partition', () => {
  it('two analyze jobs of one matrix on two partitions are told apart; the assignment is served and reused as fromJob', async () => {
    const groups = [0, 1, 2].map((machine) => ROUND_ROBIN.flatMap((owner, row) => (owner === machine ? [row] : [])));
    const first = await create({ type: 'analyze', matrix: { format: 'dense', data: ROWS }, partition: { sizes: [20, 40] } });
    const second = await create({ type: 'analyze', matrix: { format: 'dense', data: ROWS }, partition: { groups } });
    expect(first.matrix.sha256).toBe(second.matrix.sha256);
    expect(first.partition).toEqual({ kind: 'sizes', m: 2, sizes: [20, 40] });
    expect(second.partition).toEqual({ kind: 'groups', m: 3, sizes: [20, 20, 20] });

    const served = await send('GET', `/v1/jobs/${second.id}/partition`);
    expect(served.status, served.text).toBe(200);
    expect(served.json()).toEqual({ id: second.id, n: N, m: 3, sizes: [20, 20, 20], assignment: ROUND_ROBIN });
    expect(served.headers['content-type']).toBe('application/json; charset=utf-8');

    // Reused on the same matrix given as COO (CSR): the same assignment, named in the echo.
    const reused = await create({
      type: 'solve',
      algorithms: ['apc'],
      matrix: { format: 'coo', rows: N, cols: N, entries: COO },
      partition: { fromJob: second.id },
    });
    expect(reused.storage).toBe('csr');
    expect(reused.partition).toEqual({ kind: 'fromJob', m: 3, sizes: [20, 20, 20], fromJob: second.id });
    expect((await send('GET', `/v1/jobs/${reused.id}/partition`)).json<{ assignment: number[] }>().assignment).toEqual(ROUND_ROBIN);
    expect((await finished(reused.id)).status).toBe('succeeded');
  }, 60_000);

  it('fromJob: another n is a 422 at /partition/fromJob, an unknown job a 404 there; /partition of an unknown job is a 404', async () => {
    const small = await create({
      type: 'analyze',
      matrix: {
        format: 'dense',
        data: [
          [2, 1],
          [1, 3],
        ],
      },
      partition: { machines: 2 },
    });
    const wrongN = await send('POST', '/v1/jobs', {
      type: 'analyze',
      matrix: { format: 'dense', data: ROWS },
      partition: { fromJob: small.id },
    });
    expect(wrongN.status, wrongN.text).toBe(422);
    expect(wrongN.json<ProblemDetails>()).toMatchObject({ code: 'dimension-mismatch', errors: [{ pointer: '/partition/fromJob' }] });
    expect(wrongN.json<ProblemDetails>().detail).toMatch(/n = 2 rows but this matrix has n = 60/);

    const unknownId = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const unknown = await send('POST', '/v1/jobs', {
      type: 'analyze',
      matrix: { format: 'dense', data: ROWS },
      partition: { fromJob: unknownId },
    });
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.json<ProblemDetails>()).toMatchObject({ code: 'job-not-found', errors: [{ pointer: '/partition/fromJob' }] });
    expect((await send('GET', `/v1/jobs/${unknownId}/partition`)).status).toBe(404);
  });

  it("a study's random partition, replayed: { family: 'random', seed, machines } with the seed its samples CSV lists", async () => {
    const request: GeneralStudyRequest = {
      generator: 'gaussian',
      settings: { n: 24, mean: 1 },
      grid: { m: [3, 4] },
      partition: { family: 'random', seed: 11 },
      samples: 2,
      metrics: ['conditioning.kappaS'],
    };
    const created = await send('POST', '/v1/studies', request);
    expect(created.status, created.text).toBe(202);
    const study = await waitForStudy(service.app, created.json<Study>().id);
    expect(study.status).toBe('succeeded');
    const [header, ...rows] = (await send('GET', `/v1/studies/${study.id}/samples.csv`)).text.trim().split('\n');
    const columns = header.split(',');
    expect(columns.slice(0, 7)).toEqual(['point', 'mean', 'n', 'm', 'sample', 'seed', 'partitionSeed']);
    expect(rows).toHaveLength(4);
    const plan = planStudy(request, { maxSamples: 1000, maxPointSamples: 100, maxPoints: 10, maxN: 100 });
    for (const row of rows) {
      const cells = row.split(',');
      const [point, m, sample, seed, partitionSeed] = [0, 3, 4, 5, 6].map((k) => Number(cells[k]));
      const job = await create({
        type: 'analyze',
        matrix: { format: 'generator', generator: 'gaussian', n: 24, mean: 1, seed },
        partition: { family: 'random', seed: partitionSeed, machines: m },
      });
      expect(job.partition).toMatchObject({ kind: 'random', m, seed: partitionSeed });
      const assignment = (await send('GET', `/v1/jobs/${job.id}/partition`)).json<{ assignment: number[] }>().assignment;
      expect(assignment).toEqual(Array.from(samplePartition(plan.definition, plan.points[point], sample).assignment));
      expect(assignment).toEqual(Array.from(randomPartition(24, m, partitionSeed).assignment));
    }
  }, 120_000);
});

describe('labels', () => {
  it('jobs: echoed in the document and the list; ?label=key:value filters, repeated: all must match', async () => {
    const tag = `run-${Date.now()}`;
    const body = (labels: Record<string, string>): object => ({
      type: 'analyze',
      matrix: { format: 'dense', data: ROWS },
      partition: { machines: 2 },
      labels,
    });
    const a = await create(body({ batch: tag, kind: 'baseline', 'note.x': 'a:b c' }));
    const b = await create(body({ batch: tag, kind: 'variant' }));
    expect(a.labels).toEqual({ batch: tag, kind: 'baseline', 'note.x': 'a:b c' });
    expect((await send('GET', `/v1/jobs/${b.id}`)).json<Job>().labels).toEqual({ batch: tag, kind: 'variant' });

    const list = async (query: string): Promise<string[]> => {
      const answer = await send('GET', `/v1/jobs?${query}`);
      expect(answer.status, answer.text).toBe(200);
      return answer.json<JobPage>().items.map((item) => item.id);
    };
    expect(await list(`label=batch:${tag}`)).toEqual([b.id, a.id]);
    expect(await list(`label=batch:${tag}&label=kind:variant`)).toEqual([b.id]);
    expect(await list(`label=${encodeURIComponent('note.x:a:b c')}`)).toEqual([a.id]);
    expect(await list(`label=batch:${tag}&label=kind:baseline&label=kind:variant`)).toEqual([]);
    const page = (await send('GET', `/v1/jobs?label=batch:${tag}&limit=1`)).json<JobPage>();
    expect(page.items).toEqual([expect.objectContaining({ id: b.id, labels: { batch: tag, kind: 'variant' } })]);
    expect((await send('GET', `/v1/jobs?label=batch:${tag}&cursor=${page.nextCursor}`)).json<JobPage>().items.map((j) => j.id)).toEqual([
      a.id,
    ]);
  });

  it('refuses more than 16 labels, a bad key, a long value and a filter without a colon (400 naming the field)', async () => {
    const base = { type: 'analyze', matrix: { format: 'dense', data: ROWS }, partition: { machines: 2 } };
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, k) => [`k${k}`, 'v']));
    for (const labels of [many, { 'bad key': 'v' }, { key: 'x'.repeat(257) }]) {
      const answer = await send('POST', '/v1/jobs', { ...base, labels });
      expect(answer.status, answer.text).toBe(400);
      expect(answer.json<ProblemDetails>().errors?.[0].pointer).toMatch(/^\/labels/);
    }
    const filter = await send('GET', '/v1/jobs?label=nocolon');
    expect(filter.status).toBe(400);
    expect(filter.json<ProblemDetails>().errors?.[0]).toMatchObject({ in: 'query' });
  });

  it('studies: echoed, in the summaries, and filtered alike', async () => {
    const tag = `study-${Date.now()}`;
    const request = (labels: Record<string, string>): object => ({
      grid: { m: [2] },
      settings: { n: 12 },
      samples: 1,
      metrics: ['conditioning.kappaS'],
      labels,
    });
    const one = await send('POST', '/v1/studies', request({ batch: tag, arm: 'one' }));
    const two = await send('POST', '/v1/studies', request({ batch: tag, arm: 'two' }));
    expect(one.status, one.text).toBe(202);
    expect(one.json<Study>().labels).toEqual({ batch: tag, arm: 'one' });
    const list = (query: string): Promise<StudyPage> => send('GET', `/v1/studies?${query}`).then((answer) => answer.json<StudyPage>());
    expect((await list(`label=batch:${tag}`)).items.map((study) => study.id)).toEqual([two.json<Study>().id, one.json<Study>().id]);
    const filtered = await list(`label=batch:${tag}&label=arm:one`);
    expect(filtered.items).toEqual([expect.objectContaining({ id: one.json<Study>().id, labels: { batch: tag, arm: 'one' } })]);
    await waitForStudy(service.app, two.json<Study>().id);
  }, 60_000);
});
