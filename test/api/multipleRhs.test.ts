/**
 * Several right-hand sides through HTTP over a socket, with a real Redis and worker: a solve job whose
 * rhs lists k vectors, on a dense and on a CSR matrix, reports runs[alg].columns[j] equal to the run
 * of a job of rhs[j] alone (to 1e-10), and its trace and solution downloads at ?column=j equal that
 * job's; a column past the last is a 422 naming `column`, a negative one a 400; a job of one vector
 * keeps the shape it had (no `columns`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ProblemDetails } from '../../src/jobs/types.js';
import { solveOverSocket, startTestService, type TestService } from '../support/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({}, { listen: true });
}, 60_000);

afterAll(async () => {
  await service?.close();
});

const get = async <T>(url: string): Promise<{ status: number; body: T }> => {
  const response = await fetch(`${service.baseUrl}${url}`);
  return { status: response.status, body: (await response.json()) as T };
};

const solve = (body: object): Promise<Job> => solveOverSocket(service, body);

const n = 60;
/** Tridiagonal, diagonally dominant. */
const entries: [number, number, number][] = [];
for (let i = 0; i < n; i++) {
  entries.push([i, i, 4 + (i % 5) / 2]);
  if (i > 0) entries.push([i, i - 1, -1]);
  if (i + 1 < n) entries.push([i, i + 1, -1.5]);
}
const dense = Array.from({ length: n }, (_, i) =>
  Array.from({ length: n }, (_, j) => entries.find(([r, c]) => r === i && c === j)?.[2] ?? 0),
);
const rhs = [0, 1, 2].map((j) => Array.from({ length: n }, (_, i) => Math.sin((j + 1) * (i + 1)) + j));
const ALGORITHMS = ['apc', 'dnag'] as const;

describe.each([
  { name: 'dense', matrix: { format: 'dense', data: dense }, storage: 'dense' },
  { name: 'CSR', matrix: { format: 'coo', rows: n, cols: n, entries }, storage: 'csr' },
])('a job of three right-hand sides ($name)', ({ matrix, storage }) => {
  const request = (b: unknown): object => ({
    type: 'solve',
    matrix,
    rhs: b,
    partition: { machines: 3 },
    algorithms: ALGORITHMS,
    options: { tolerance: 1e-10 },
  });
  let job: Job;
  let alone: Job[];
  beforeAll(async () => {
    [job, ...alone] = await Promise.all([solve(request(rhs)), ...rhs.map((b) => solve(request(b)))]);
  }, 300_000);

  it('summarizes each column as the job of that right-hand side alone reports its run', () => {
    expect(job.storage).toBe(storage);
    for (const algorithm of ALGORITHMS) {
      const run = job.result?.runs[algorithm];
      expect(run?.columns).toHaveLength(3);
      alone.forEach((single, j) => {
        const expected = single.result?.runs[algorithm];
        const column = run?.columns?.[j];
        expect(expected?.columns).toBeUndefined();
        expect(column?.status).toBe('converged');
        expect(column?.status).toBe(expected?.status);
        expect(column?.iterations).toBe(expected?.iterations);
        expect(Math.abs((column?.relativeResidual ?? 1) - (expected?.relativeResidual ?? 0))).toBeLessThan(1e-10);
      });
      // The top-level fields are column 0's.
      expect(run?.iterations).toBe(run?.columns?.[0].iterations);
    }
    expect(job.summary?.converged).toEqual([...ALGORITHMS]);
  });

  it('?column=j downloads column j: the solution and trace of the job of rhs[j]', async () => {
    for (const algorithm of ALGORITHMS) {
      for (const [j, single] of alone.entries()) {
        const base = `/v1/jobs/${job.id}/runs/${algorithm}`;
        const solution = await get<{ x: number[] }>(`${base}/solution?column=${j}`);
        expect(solution.status).toBe(200);
        const expected = await get<{ x: number[] }>(`/v1/jobs/${single.id}/runs/${algorithm}/solution`);
        let d = 0;
        let s = 0;
        solution.body.x.forEach((v, i) => {
          d += (v - expected.body.x[i]) ** 2;
          s += expected.body.x[i] ** 2;
        });
        expect(Math.sqrt(d / s)).toBeLessThan(1e-10);
        const trace = await get<{ iteration: number[]; totalIterations: number }>(`${base}/trace?column=${j}`);
        const expectedTrace = await get<{ iteration: number[]; totalIterations: number }>(`/v1/jobs/${single.id}/runs/${algorithm}/trace`);
        expect(trace.body.iteration).toEqual(expectedTrace.body.iteration);
        expect(trace.body.totalIterations).toBe(expectedTrace.body.totalIterations);
      }
      // Column 0 is the default.
      const first = await get<{ x: number[] }>(`/v1/jobs/${job.id}/runs/${algorithm}/solution`);
      const zero = await get<{ x: number[] }>(`/v1/jobs/${job.id}/runs/${algorithm}/solution?column=0`);
      expect(first.body).toEqual(zero.body);
    }
  });

  it('a column past the last: 422 naming column; not an integer >= 0: 400 naming column', async () => {
    const past = await get<ProblemDetails>(`/v1/jobs/${job.id}/runs/apc/trace?column=3`);
    expect(past.status).toBe(422);
    expect(past.body.code).toBe('column-out-of-range');
    expect(past.body.errors?.[0]).toMatchObject({ in: 'query', pointer: '/column' });
    const alsoPast = await get<ProblemDetails>(`/v1/jobs/${alone[0].id}/runs/apc/solution?column=1`);
    expect(alsoPast.status).toBe(422);
    const negative = await get<ProblemDetails>(`/v1/jobs/${job.id}/runs/apc/solution?column=-1`);
    expect(negative.status).toBe(400);
    expect(JSON.stringify(negative.body.errors)).toContain('column');
    // Number() reads "0x1" as 1: only decimal digits name a column.
    for (const written of ['0x1', '1e0', '+1', ' 1']) {
      const misread = await get<ProblemDetails>(`/v1/jobs/${job.id}/runs/apc/solution?column=${encodeURIComponent(written)}`);
      expect(misread.status).toBe(400);
      expect(misread.body.errors?.[0]).toMatchObject({ in: 'query', pointer: '/column' });
    }
  });
});

describe('refusals', () => {
  it('more than MAX_RHS right-hand sides, several on an analyze job or on a tall system: 422 at /rhs', async () => {
    const post = (body: object): Promise<Response> =>
      fetch(`${service.baseUrl}/v1/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const matrix = {
      format: 'dense',
      data: [
        [2, 1],
        [1, 3],
      ],
    };
    const tooMany = await post({ type: 'solve', matrix, partition: { machines: 2 }, rhs: Array.from({ length: 65 }, () => [1, 2]) });
    expect(tooMany.status).toBe(422);
    expect(JSON.stringify(await tooMany.json())).toContain('/rhs');
    const analyze = await post({
      type: 'analyze',
      matrix,
      partition: { machines: 2 },
      rhs: [
        [1, 2],
        [3, 4],
      ],
    });
    expect(analyze.status).toBe(422);
    const ragged = await post({ type: 'solve', matrix, partition: { machines: 2 }, rhs: [[1, 2], [3]] });
    expect(ragged.status).toBe(422);
    expect(JSON.stringify(await ragged.json())).toContain('/rhs/1');
    // A tall system's runs aim at points that depend on b: one rhs per job.
    const tall = await post({
      type: 'solve',
      matrix: {
        format: 'dense',
        data: [
          [1, 0],
          [0, 1],
          [1, 1],
        ],
      },
      partition: { machines: 2 },
      rhs: [
        [1, 2, 3],
        [0, 1, 1],
      ],
    });
    expect(tall.status).toBe(422);
    const problem = JSON.stringify(await tall.json());
    expect(problem).toContain('/rhs');
    expect(problem).toContain('tall (3 x 2)');
  });
});
