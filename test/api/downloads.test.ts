/**
 * Downloads in the formats people load, through HTTP over a socket with a real Redis
 * and worker, on the dense path and on CSR: a run's trace as JSON or CSV, its solution as JSON, CSV,
 * Matrix Market (array) or little-endian float64, chosen by `Accept`; each non-JSON form parsed back
 * and compared with the JSON values bit for bit; 406 for an Accept that admits none; every media type
 * in the OpenAPI document and in the generated client's types.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_PATH } from '../../scripts/generateOpenapi.js';
import type { Job, ProblemDetails } from '../../src/jobs/types.js';
import type { paths } from '../../src/dashboard/apiSchema.js';
import { solveOverSocket, startTestService, type TestService } from '../support/service.js';

type Trace = paths['/v1/jobs/{id}/runs/{algorithm}/trace']['get']['responses'][200]['content']['application/json'];
type Solution = paths['/v1/jobs/{id}/runs/{algorithm}/solution']['get']['responses'][200]['content']['application/json'];

/** Compile-time: the generated client has exactly these media types (a missing or extra one does not compile). */
const TRACE_TYPES: Record<keyof paths['/v1/jobs/{id}/runs/{algorithm}/trace']['get']['responses'][200]['content'], true> = {
  'application/json': true,
  'text/csv': true,
};
const SOLUTION_TYPES: Record<keyof paths['/v1/jobs/{id}/runs/{algorithm}/solution']['get']['responses'][200]['content'], true> = {
  'application/json': true,
  'text/csv': true,
  'application/x-matrix-market': true,
  'application/octet-stream': true,
};

let service: TestService;

beforeAll(async () => {
  service = await startTestService({}, { listen: true });
}, 60_000);

afterAll(async () => {
  await service?.close();
});

const get = (url: string, accept?: string): Promise<Response> =>
  fetch(`${service.baseUrl}${url}`, accept === undefined ? {} : { headers: { accept } });

const solve = (body: object): Promise<Job> => solveOverSocket(service, body);

/** A CSV cell as the JSON has it: empty is null. */
const fromCell = (cell: string): number | null => (cell === '' ? null : Number(cell));

function csvRows(text: string): string[][] {
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => line.split(','));
}

/** Bit for bit: Object.is tells -0 from 0 and compares NaN; toEqual with Object.is per entry. */
function expectSameNumbers(actual: (number | null)[], expected: (number | null)[], what: string): void {
  expect(actual.length, what).toBe(expected.length);
  const differing = actual.findIndex((value, k) => !Object.is(value, expected[k]));
  expect(differing, `${what}: first difference at ${differing}: ${actual[differing]} vs ${expected[differing]}`).toBe(-1);
}

async function expectTraceDownloads(job: Job, algorithm: string): Promise<void> {
  const url = `/v1/jobs/${job.id}/runs/${algorithm}/trace`;
  const json = await get(url);
  expect(json.headers.get('content-type')).toMatch(/^application\/json/);
  expect(json.headers.get('vary')).toMatch(/Accept/i);
  const trace = (await json.json()) as Trace;

  const csv = await get(url, 'text/csv');
  expect(csv.status).toBe(200);
  expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
  expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="${job.id}-${algorithm}-trace.csv"`);
  const text = await csv.text();
  const [header, ...rows] = csvRows(text);
  expect(header).toEqual(['iteration', 'relativeResidual', 'relativeError', 'consensusDistance']);
  expect(rows).toHaveLength(trace.iteration.length);
  expectSameNumbers(
    rows.map((row) => fromCell(row[0])),
    trace.iteration,
    'iteration',
  );
  expectSameNumbers(
    rows.map((row) => fromCell(row[1])),
    trace.relativeResidual,
    'relativeResidual',
  );
  expectSameNumbers(
    rows.map((row) => fromCell(row[2])),
    trace.relativeError ?? rows.map(() => null),
    'relativeError',
  );
  expectSameNumbers(
    rows.map((row) => fromCell(row[3])),
    trace.consensusDistance ?? rows.map(() => null),
    'consensusDistance',
  );
}

async function expectSolutionDownloads(job: Job, algorithm: string): Promise<void> {
  const url = `/v1/jobs/${job.id}/runs/${algorithm}/solution`;
  const { x } = (await (await get(url)).json()) as Solution;
  expect(x).toHaveLength(job.n);
  expect(x.every((value) => value !== null)).toBe(true);

  const csv = await get(url, 'text/csv');
  expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
  const [header, ...rows] = csvRows(await csv.text());
  expect(header).toEqual(['index', 'x']);
  expect(rows.map((row) => Number(row[0]))).toEqual(x.map((_, k) => k));
  expectSameNumbers(
    rows.map((row) => fromCell(row[1])),
    x,
    'CSV x',
  );

  const market = await get(url, 'application/x-matrix-market');
  expect(market.headers.get('content-type')).toMatch(/^application\/x-matrix-market/);
  expect(market.headers.get('content-disposition')).toMatch(/\.mtx"$/);
  const lines = (await market.text()).trimEnd().split('\n');
  expect(lines[0]).toBe('%%MatrixMarket matrix array real general');
  const data = lines.filter((line) => !line.startsWith('%'));
  expect(data[0]).toBe(`${job.n} 1`);
  // 17 significant digits per value: each reads back to the JSON's double.
  const significant = (value: string): number => value.replace(/^-/, '').replace(/e.*$/, '').replace('.', '').replace(/^0+/, '').length;
  expect(data.slice(1).filter((value) => significant(value) !== 17)).toEqual([]);
  expectSameNumbers(data.slice(1).map(Number), x, 'Matrix Market x');

  const binary = await get(url, 'application/octet-stream');
  expect(binary.headers.get('content-type')).toBe('application/octet-stream');
  expect(binary.headers.get('content-length')).toBe(String(8 * job.n));
  const bytes = new Uint8Array(await binary.arrayBuffer());
  expect(bytes.length).toBe(8 * job.n);
  const view = new DataView(bytes.buffer);
  expectSameNumbers(
    Array.from({ length: job.n }, (_, k) => view.getFloat64(8 * k, true)),
    x,
    'float64 LE x',
  );
  expectSameNumbers(Array.from(new Float64Array(bytes.buffer)), x, 'Float64Array x');
}

describe('a dense job', () => {
  it('trace as JSON and CSV, solution as JSON, CSV, Matrix Market and float64: the same numbers', async () => {
    const job = await solve({
      type: 'solve',
      matrix: { format: 'generator', generator: 'gaussian', n: 40, mean: 0, std: 1, seed: 3 },
      partition: { machines: 4 },
      algorithms: ['apc', 'cimmino'],
      options: { maxIterations: 300 },
    });
    expect(job.storage).toBe('dense');
    for (const algorithm of ['apc', 'cimmino']) {
      await expectTraceDownloads(job, algorithm);
      await expectSolutionDownloads(job, algorithm);
    }
  }, 300_000);
});

describe('a CSR job', () => {
  it('n = 9,000 (the text of the solution streams in blocks of 8192 rows): the same checks', async () => {
    const n = 9_000;
    const entries: [number, number, number][] = [];
    for (let i = 0; i < n; i++) {
      entries.push([i, i, 4 + (i % 7) / 3]);
      if (i > 0) entries.push([i, i - 1, -1]);
      if (i + 1 < n) entries.push([i, i + 1, -1.25]);
    }
    const job = await solve({
      type: 'solve',
      matrix: { format: 'coo', rows: n, cols: n, entries },
      partition: { machines: 10 },
      algorithms: ['cimmino'],
      options: { maxIterations: 20 },
    });
    expect(job.storage).toBe('csr');
    await expectTraceDownloads(job, 'cimmino');
    await expectSolutionDownloads(job, 'cimmino');
  }, 300_000);
});

describe('negotiation', () => {
  let job: Job;
  beforeAll(async () => {
    job = await solve({
      type: 'solve',
      matrix: {
        format: 'dense',
        data: [
          [4, 1],
          [1, 3],
        ],
      },
      partition: { machines: 2 },
      algorithms: ['apc'],
    });
  }, 120_000);

  it('weights and wildcards choose; no Accept or */* is JSON', async () => {
    const url = `/v1/jobs/${job.id}/runs/apc/solution`;
    const typeFor = async (accept?: string): Promise<string | null> => (await get(url, accept)).headers.get('content-type');
    expect(await typeFor()).toMatch(/^application\/json/);
    expect(await typeFor('*/*')).toMatch(/^application\/json/);
    expect(await typeFor('text/*')).toMatch(/^text\/csv/);
    expect(await typeFor('application/json;q=0.5, text/csv;q=0.9')).toMatch(/^text\/csv/);
    expect(await typeFor('application/x-matrix-market, */*;q=0.1')).toMatch(/^application\/x-matrix-market/);
    expect(await typeFor('application/*;q=0.2, application/octet-stream')).toBe('application/octet-stream');
    expect(await typeFor('text/csv;q=0, */*')).toMatch(/^application\/json/);
  });

  it('406 as a problem when Accept admits none; a missing run is still a 404', async () => {
    for (const [url, accept] of [
      [`/v1/jobs/${job.id}/runs/apc/solution`, 'application/xml'],
      [`/v1/jobs/${job.id}/runs/apc/trace`, 'application/octet-stream'],
      [`/v1/jobs/${job.id}/runs/apc/trace`, 'text/csv;q=0, application/json;q=0'],
    ]) {
      const response = await get(url, accept);
      expect(response.status, `${url} ${accept}`).toBe(406);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await response.json()) as ProblemDetails).toMatchObject({ status: 406, code: 'not-acceptable' });
    }
    expect((await get(`/v1/jobs/${job.id}/runs/dgd/solution`, 'text/csv')).status).toBe(404);
  });
});

describe('the OpenAPI document and the generated client', () => {
  it('declare every media type of the trace and the solution, and the 406', () => {
    const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as {
      paths: Record<string, { get: { responses: Record<string, { content?: Record<string, unknown> }> } }>;
    };
    const trace = document.paths['/v1/jobs/{id}/runs/{algorithm}/trace'].get.responses;
    const solution = document.paths['/v1/jobs/{id}/runs/{algorithm}/solution'].get.responses;
    expect(Object.keys(trace['200'].content!)).toEqual(Object.keys(TRACE_TYPES));
    expect(Object.keys(solution['200'].content!)).toEqual(Object.keys(SOLUTION_TYPES));
    expect(Object.keys(trace['406'].content!)).toEqual(['application/problem+json']);
    expect(Object.keys(solution['406'].content!)).toEqual(['application/problem+json']);
    const client = readFileSync(new URL('../../src/dashboard/apiSchema.d.ts', import.meta.url), 'utf8');
    for (const mediaType of Object.keys(SOLUTION_TYPES)) expect(client).toContain(`"${mediaType}": `);
  });
});
