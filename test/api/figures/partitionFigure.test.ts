/**
 * The raster, cell by cell on a 4 x 4 matrix and the same from CSR as from dense storage; and
 * GET /v1/jobs/{id}/figures/partition.svg, measured in its picture: the SVG's raster (a palette PNG,
 * decoded here) gives each cell's machine. On a shuffled block-diagonal matrix the advised partition,
 * grouped by machine, is m diagonal blocks (every cell of machine i in machine i's band of rows and of
 * columns, each block filled), while in the matrix's order its machines are scattered over the rows,
 * and the given (contiguous) partition grouped by machine spreads every machine over the columns.
 * A stored Poisson matrix of n = 250,000 gives a picture of tens of KB. Refusals: 404, 409, 422, 400.
 */
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ProblemDetails } from '../../../src/jobs/types.js';
import { renderPartitionFigure } from '../../../src/api/figures/partitionFigure.js';
import { partitionRaster } from '../../../src/api/figures/partitionRaster.js';
import { toRows } from '../../../src/solvers/matrix.js';
import { csrFromDense, csrToDense } from '../../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { createJob, runJob, startTestService, type TestService } from '../../support/service.js';
import { socketTransport, type Transport } from '../../support/transports.js';
import { shuffledBlockDiagonal } from '../../solvers/partitioning/cases.js';

interface Picture {
  svg: string;
  cells: number;
  perCell: number;
  /** machine[r * cells + c], -1 for an empty cell (palette index 0; index 1 + k is machine k for m <= 20). */
  machine: Int32Array;
  attribute(name: string): string | undefined;
}

/** The picture's raster: the PNG in the SVG's image.raster, its IDAT inflated (8-bit palette rows, filter 0). */
function readPicture(svg: string): Picture {
  const image = /<image class="raster"[^>]*>/.exec(svg)?.[0] ?? '';
  const attr = (tag: string, name: string): string | undefined => new RegExp(`${name}="([^"]*)"`).exec(tag)?.[1];
  const png = Buffer.from(attr(image, 'href')!.replace('data:image/png;base64,', ''), 'base64');
  let offset = 8;
  let width = 0;
  let height = 0;
  const data: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('ascii', offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') [width, height] = [body.readUInt32BE(0), body.readUInt32BE(4)];
    if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const machine = new Int32Array(width * height);
  for (let r = 0; r < height; r++) {
    expect(raw[r * (width + 1)]).toBe(0);
    for (let c = 0; c < width; c++) machine[r * width + c] = raw[r * (width + 1) + 1 + c] - 1;
  }
  expect(width).toBe(height);
  const group = /<g class="partition"[^>]*>/.exec(svg)?.[0] ?? '';
  return {
    svg,
    cells: width,
    perCell: Number(attr(image, 'data-per-cell')),
    machine,
    attribute: (name) => attr(group, name),
  };
}

/** Each machine's coloured cells: their rows and columns. */
function cellsOf(picture: Picture, m: number): { rows: number[]; columns: number[] }[] {
  const out = Array.from({ length: m }, () => ({ rows: [] as number[], columns: [] as number[] }));
  picture.machine.forEach((machine, k) => {
    if (machine < 0) return;
    out[machine].rows.push(Math.floor(k / picture.cells));
    out[machine].columns.push(k % picture.cells);
  });
  return out;
}

let service: TestService;
let socket: Transport;
beforeAll(async () => {
  service = await startTestService({}, { listen: true });
  socket = socketTransport(service.baseUrl);
}, 60_000);
afterAll(async () => {
  await service?.close();
});

const get = (url: string) => service.app.inject({ method: 'GET', url });

const BLOCKS = 8;
const SIZE = 40;
const dense = { format: 'dense', data: toRows(shuffledBlockDiagonal(BLOCKS, SIZE, 3).A) };

describe('the raster', () => {
  it('a 4 x 4 matrix on 2 machines, cell by cell, in both orders', () => {
    // Rows 0 and 2 on machine 0, rows 1 and 3 on machine 1; column 0 is mostly machine 0's, column 3 machine 1's.
    const data = [
      [1, 0, 0, 2],
      [9, 3, 0, 4],
      [5, 0, 6, 0],
      [0, 0, 0, 7],
    ];
    const source = { storage: 'dense' as const, A: { rows: 4, cols: 4, data: Float64Array.from(data.flat()) } };
    const assignment = Int32Array.from([0, 1, 0, 1]);
    const inOrder = partitionRaster(source, assignment, 2, 'matrix');
    expect(Array.from(inOrder.machine)).toEqual([0, -1, -1, 0, 1, 1, -1, 1, 0, -1, 0, -1, -1, -1, -1, 1]);
    expect(Array.from(inOrder.rowMachine)).toEqual([0, 1, 0, 1]);
    // Grouped: rows 0, 2 | 1, 3; columns by their machine: 0, 2 (machine 0) | 1, 3 (machine 1).
    const grouped = partitionRaster(source, assignment, 2, 'machine');
    expect(grouped.rowStarts).toEqual([0, 2, 4]);
    expect(grouped.columnStarts).toEqual([0, 2, 4, 4]);
    expect(Array.from(grouped.machine)).toEqual([0, -1, -1, 0, 0, 0, -1, -1, 1, -1, 1, 1, -1, -1, -1, 1]);
    // Cells of 2 x 2 entries: the machine of most of each cell's nonzeros (the lower on a tie).
    const coarse = partitionRaster(source, assignment, 2, 'matrix', 2);
    expect(coarse.perCell).toBe(2);
    expect(Array.from(coarse.machine)).toEqual([1, 0, 0, 0]);
  });

  it('a tall 6 x 3 matrix is drawn 6 x 3 (its columns only), in both orders', () => {
    const data = [
      [1, 0, 0],
      [0, 2, 0],
      [0, 0, 3],
      [4, 0, 0],
      [0, 5, 0],
      [0, 0, 6],
    ];
    const source = { storage: 'dense' as const, A: { rows: 6, cols: 3, data: Float64Array.from(data.flat()) } };
    const assignment = Int32Array.from([0, 0, 0, 1, 1, 1]);
    for (const order of ['matrix', 'machine'] as const) {
      const raster = partitionRaster(source, assignment, 2, order);
      expect([raster.cells, raster.columnCells]).toEqual([6, 3]);
      // Every nonzero lies in the first three columns of the picture.
      raster.machine.forEach((machine, k) => {
        if (k % raster.cells >= 3) expect(machine).toBe(-1);
      });
      const svg = renderPartitionFigure({ source, assignment, m: 2, order, name: 'given partition', strategy: 'given', kappaS: 1 });
      const image = /<image class="raster"[^>]*>/.exec(svg)![0];
      const png = Buffer.from(/href="data:image\/png;base64,([^"]*)"/.exec(image)![1], 'base64');
      // IHDR: width then height, right after the 8-byte signature and the chunk's length and type.
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([3, 6]);
      const width = Number(/ width="([^"]*)"/.exec(image)![1]);
      const height = Number(/ height="([^"]*)"/.exec(image)![1]);
      expect(width / height).toBeCloseTo(0.5, 6);
    }
  });

  it('a CSR matrix gives the raster of the same matrix dense (n = 320 in 160 x 160 cells, both orders)', () => {
    const dense = shuffledBlockDiagonal(8, 40, 3).A;
    const csr = csrFromDense(dense);
    expect(csrToDense(csr).data).toEqual(dense.data);
    const assignment = Int32Array.from({ length: dense.rows }, (_, k) => (k * 7) % 8);
    for (const order of ['matrix', 'machine'] as const) {
      const fromDense = partitionRaster({ storage: 'dense', A: dense }, assignment, 8, order);
      const fromCsr = partitionRaster({ storage: 'csr', A: csr }, assignment, 8, order);
      expect(fromCsr.cells).toBe(160);
      expect(fromCsr.nnz).toBe(8 * 40 * 40);
      expect(fromCsr.columnStarts).toEqual(fromDense.columnStarts);
      expect(Array.from(fromCsr.machine)).toEqual(Array.from(fromDense.machine));
    }
  });
});

describe('the partition picture of an advise job', () => {
  let advise: Job;
  beforeAll(async () => {
    advise = await runJob(service.app, { type: 'advise', matrix: dense, partition: { machines: BLOCKS }, options: { imbalance: 0.05 } });
    expect(advise.status, JSON.stringify(advise.error)).toBe('succeeded');
  }, 120_000);

  it('the best, grouped by machine (over a socket): m diagonal blocks, each filled, no colour outside its block', async () => {
    const advice = advise.result!.advice!;
    const best = advice.candidates.find((c) => c.strategy === advice.best)!;
    expect(best.kappaS).toBeCloseTo(1, 9);
    const answer = await socket.send({ method: 'GET', url: `/v1/jobs/${advise.id}/figures/partition.svg?strategy=best&order=machine` });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^image\/svg\+xml/);
    const picture = readPicture(answer.text);
    expect(picture.svg).toMatch(new RegExp(`<title>Best partition \\(${best.strategy}\\): κ\\(S\\) = 1</title>`));
    expect(picture.attribute('data-strategy')).toBe(best.strategy);
    // n = 320 in cells of 2 x 2 entries.
    expect(picture.perCell).toBe(2);
    expect(picture.cells).toBe((BLOCKS * SIZE) / 2);
    // Machine i's rows, grouped, begin after those of machines 0..i-1 (the candidate's sizes).
    const starts = [0];
    for (const size of best.sizes) starts.push(starts[starts.length - 1] + size);
    expect(picture.attribute('data-row-starts')).toBe(starts.join(' '));
    const band = (i: number): [number, number] => [
      Math.floor(starts[i] / picture.perCell),
      Math.floor((starts[i + 1] - 1) / picture.perCell),
    ];
    const cells = cellsOf(picture, BLOCKS);
    for (let i = 0; i < BLOCKS; i++) {
      const [low, high] = band(i);
      expect(cells[i].rows.length).toBeGreaterThan(0);
      // Square blocks: the columns machine i holds most of are as many as its rows, grouped in the same place.
      for (const row of cells[i].rows)
        expect(row >= low && row <= high, `machine ${i}: row cell ${row} outside ${low}..${high}`).toBe(true);
      for (const column of cells[i].columns)
        expect(column >= low && column <= high, `machine ${i}: column cell ${column} outside ${low}..${high}`).toBe(true);
      // The block is dense: every cell strictly inside it is machine i's.
      for (let r = low + 1; r < high; r++) for (let c = low + 1; c < high; c++) expect(picture.machine[r * picture.cells + c]).toBe(i);
    }
  });

  it("the best in the matrix's order: each machine's rows scattered from top to bottom", async () => {
    const response = await get(`/v1/jobs/${advise.id}/figures/partition.svg?strategy=best`);
    expect(response.statusCode).toBe(200);
    const picture = readPicture(response.body);
    expect(picture.attribute('data-order')).toBe('matrix');
    for (const { rows } of cellsOf(picture, BLOCKS)) {
      expect(Math.min(...rows)).toBeLessThan(picture.cells / 8);
      expect(Math.max(...rows)).toBeGreaterThan((picture.cells * 7) / 8);
    }
  });

  it("the given partition (the default), grouped by machine: every machine's colour spread over the columns", async () => {
    const response = await get(`/v1/jobs/${advise.id}/figures/partition.svg?order=machine`);
    expect(response.statusCode).toBe(200);
    const picture = readPicture(response.body);
    const given = advise.result!.advice!.candidates[0];
    expect(picture.attribute('data-strategy')).toBe('given');
    expect(Number(picture.attribute('data-kappa-s'))).toBe(given.kappaS);
    expect(picture.svg).toContain('<title>Given partition: κ(S) = ');
    for (const { columns } of cellsOf(picture, BLOCKS)) {
      // Contiguous rows of a shuffled matrix meet nearly every block's columns.
      expect(new Set(columns).size).toBeGreaterThan(picture.cells * 0.6);
    }
  });

  it('every candidate by its strategy; a strategy the job lacks is a 422 at /strategy; a bad order a 400', async () => {
    for (const candidate of advise.result!.advice!.candidates) {
      const response = await get(`/v1/jobs/${advise.id}/figures/partition.svg?strategy=${candidate.strategy}`);
      expect(response.statusCode).toBe(200);
      expect(readPicture(response.body).attribute('data-kappa-s')).toBe(String(candidate.kappaS));
    }
    const unknown = await get(`/v1/jobs/${advise.id}/figures/partition.svg?strategy=spectral`);
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json<ProblemDetails>()).toMatchObject({ code: 'candidate-not-found', errors: [{ in: 'query', pointer: '/strategy' }] });
    expect(unknown.json<ProblemDetails>().detail).toMatch(/'best'/);
    const order = await get(`/v1/jobs/${advise.id}/figures/partition.svg?order=diagonal`);
    expect(order.statusCode).toBe(400);
    expect(order.json<ProblemDetails>()).toMatchObject({ code: 'invalid-request', errors: [{ in: 'query', pointer: '/order' }] });
  });
});

describe('the partition picture of other jobs', () => {
  it('an analyze job: its own partition, with its kappa(S); candidates are 422; an unknown job 404', async () => {
    const analysis = await runJob(service.app, { type: 'analyze', matrix: dense, partition: { machines: 4 } });
    expect(analysis.status).toBe('succeeded');
    const response = await get(`/v1/jobs/${analysis.id}/figures/partition.svg`);
    expect(response.statusCode).toBe(200);
    const picture = readPicture(response.body);
    expect(Number(picture.attribute('data-kappa-s'))).toBe(analysis.result!.analysis!.conditioning.kappaS);
    // Contiguous partition in the matrix's order: machine i's cells in rows i n/4 .. (i + 1) n/4.
    cellsOf(picture, 4).forEach(({ rows }, i) => {
      expect(Math.min(...rows)).toBe((i * picture.cells) / 4);
      expect(Math.max(...rows)).toBe(((i + 1) * picture.cells) / 4 - 1);
    });
    const best = await get(`/v1/jobs/${analysis.id}/figures/partition.svg?strategy=best`);
    expect(best.statusCode).toBe(422);
    expect(best.json<ProblemDetails>()).toMatchObject({ code: 'candidate-not-found', errors: [{ in: 'query', pointer: '/strategy' }] });

    const missing = await socket.send({ method: 'GET', url: '/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/figures/partition.svg' });
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(missing.json<ProblemDetails>().code).toBe('job-not-found');
  }, 60_000);
});

describe('the partition picture of a large stored matrix', () => {
  let quiet: TestService;
  beforeAll(async () => {
    // No worker: the picture needs only what a job stores when it is created.
    quiet = await startTestService({}, { worker: false });
  }, 60_000);
  afterAll(async () => {
    await quiet?.close();
  });

  it('poisson n = 250,000 on 100 machines: tens of KB, each order; an advise job not yet run is a 409 for candidates', async () => {
    const k = 500;
    const poisson = poisson2d(k);
    const lines = [`%%MatrixMarket matrix coordinate real symmetric`, `${k * k} ${k * k} ${(poisson.colIdx.length + k * k) / 2}`];
    for (let i = 0; i < k * k; i++)
      for (let p = poisson.rowPtr[i]; p < poisson.rowPtr[i + 1]; p++)
        if (poisson.colIdx[p] <= i) lines.push(`${i + 1} ${poisson.colIdx[p] + 1} ${poisson.values[p]}`);
    const upload = await quiet.app.inject({
      method: 'POST',
      url: '/v1/matrices',
      payload: `${lines.join('\n')}\n`,
      headers: { 'content-type': 'text/plain' },
    });
    expect(upload.statusCode, upload.body).toBe(201);
    const matrix = { format: 'stored', id: upload.json<{ id: string }>().id };
    const { response, job } = await createJob(quiet.app, {
      type: 'advise',
      matrix,
      partition: { family: 'random', seed: 5, machines: 100 },
    });
    expect(response.statusCode, response.body).toBe(202);
    for (const order of ['matrix', 'machine']) {
      const figure = await quiet.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/figures/partition.svg?order=${order}` });
      expect(figure.statusCode).toBe(200);
      expect(figure.body.length).toBeLessThan(200_000);
      const picture = readPicture(figure.body);
      expect(picture.cells).toBe(256);
      expect(picture.perCell).toBe(977);
      expect(picture.attribute('data-kappa-s')).toBe('');
      expect(picture.svg).toContain('κ(S) not computed');
      // m = 100: the 20 colours' key and the note that they repeat.
      expect(picture.svg.match(/class="swatch"/g)).toHaveLength(20);
      expect(picture.svg).toContain('Colours repeat every 20 machines');
    }
    const early = await quiet.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/figures/partition.svg?strategy=best` });
    expect(early.statusCode).toBe(409);
    expect(early.json<ProblemDetails>().code).toBe('advice-not-ready');
  }, 120_000);
});
