/**
 * POST /v1/matrices on untrusted uploads (src/api/routes/matrices.ts): a line of a million
 * characters is a 422 naming the line (also gzip-compressed), a size line that lies is a 422, a body
 * that never ends is a 408 after UPLOAD_TIMEOUT_MS (a trickle) or a 413 at MAX_UPLOAD_BYTES (a flood),
 * and then the connection is closed; the service keeps answering.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProblemDetails } from '../../src/jobs/types.js';
import { startTestService, type TestService } from '../support/service.js';
import { injectUpload } from '../support/requests.js';
import { chunkedUpload, httpChunk } from '../support/transports.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService(
    { UPLOAD_TIMEOUT_MS: 1500, MAX_UPLOAD_BYTES: 4 * 2 ** 20, MATRIX_MARKET_MAX_LINE_CHARS: 4096 },
    { worker: false, listen: true },
  );
});

afterAll(async () => {
  await service?.close();
});

const HEADER = '%%MatrixMarket matrix coordinate real general\n';

const upload = (body: string | Buffer, headers?: Record<string, string>) => injectUpload(service.app, body, headers);

describe('a line of a million characters', () => {
  it('is a 422 naming the line and MATRIX_MARKET_MAX_LINE_CHARS', async () => {
    const text = `${HEADER}% fine\n2 2 1\n1 1 ${'1'.repeat(1_000_000)}\n`;
    for (const response of [await upload(text), await upload(gzipSync(text), { 'content-encoding': 'gzip' })]) {
      expect(response.statusCode).toBe(422);
      const problem = response.json<ProblemDetails>();
      expect(problem.code).toBe('matrix-market-syntax');
      expect(problem.detail).toContain('line 4');
      expect(problem.detail).toContain('longer than 4096 characters (MATRIX_MARKET_MAX_LINE_CHARS)');
    }
  });

  it('leaves lines up to the limit alone', async () => {
    const response = await upload(`${HEADER}% ${'c'.repeat(4000)}\n2 2 2\n1 1 1.5\n2 2 2.5\n`);
    expect(response.statusCode).toBe(201);
  });
});

describe('a size line that lies', () => {
  it('is a 422 once the text ends short of the announced count', async () => {
    const response = await upload(`${HEADER}1000 1000 900000\n1 1 1.0\n2 2 1.0\n`);
    expect(response.statusCode).toBe(422);
    expect(response.json<ProblemDetails>().detail).toContain('announces 900000 entries but only 2 were found');
  });
});

function problemOf(raw: string): ProblemDetails {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4).replace(/^[0-9a-f]+\r\n/, '')) as ProblemDetails;
}

describe('a body that never ends', () => {
  it('trickling: 408 after UPLOAD_TIMEOUT_MS, then the connection closed', async () => {
    let timer: NodeJS.Timeout | undefined;
    const raw = await chunkedUpload(service.baseUrl, (socket) => {
      socket.write(httpChunk(`${HEADER}3 3 3\n1 1 1.0\n`));
      // One comment line every 100 ms, for ever.
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(httpChunk('% still coming\n'));
      }, 100);
    });
    clearInterval(timer);
    expect(raw).toMatch(/^HTTP\/1\.1 408 /);
    expect(raw.toLowerCase()).toMatch(/x-request-id: \S+/);
    const problem = problemOf(raw);
    expect(problem.code).toBe('upload-timeout');
    expect(problem.detail).toContain('1500 ms (UPLOAD_TIMEOUT_MS)');
    expect((await service.app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });

  it('flooding: 413 at MAX_UPLOAD_BYTES, and the connection closed (not read for ever)', async () => {
    let timer: NodeJS.Timeout | undefined;
    const raw = await chunkedUpload(service.baseUrl, (socket) => {
      socket.write(httpChunk(`${HEADER}3 3 3\n1 1 1.0\n`));
      const comments = httpChunk('% more\n'.repeat(64_000));
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(comments);
      }, 5);
    });
    clearInterval(timer);
    expect(raw).toMatch(/^HTTP\/1\.1 413 /);
    expect(problemOf(raw).code).toBe('body-too-large');
  });
});
