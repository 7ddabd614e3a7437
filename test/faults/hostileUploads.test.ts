/**
 * Hostile uploads against the whole service as `npm start` runs it (API, worker with its sandboxed
 * children, its private redis-server), over real sockets. For each case the resident memory of the
 * whole process tree is sampled while the request is refused: no case may grow it by more than
 * 256 MiB, nor take more than 10 s to refuse; nothing refused is stored (GET /v1/matrices, GET
 * /v1/jobs), and /healthz keeps answering within 1 s while a 250,000-row file is parsed.
 *
 * The bounds are generous on purpose: they catch an unbounded buffer or a
 * blocked event loop (seconds, hundreds of MiB), not a slow machine.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobPage, MatrixPage } from '../../src/jobs/types.js';
import { rawRequest, socketTransport, type Answer, type Request } from '../support/transports.js';
import { descendants, freePort, killTree, spawnService, waitUntilReady, type ServiceProcess } from './serviceProcess.js';
import { residentMemory } from '../support/processes.js';
import { matrixUpload } from '../support/requests.js';

const MAX_GROWTH_BYTES = 256 * 2 ** 20;
const MAX_REFUSAL_MS = 10_000;
const MAX_HEALTH_MS = 1000;
/**
 * Long enough for a body that arrived whole but takes seconds to read (a bomb of newlines inflating) to
 * be refused for what it is; the trickling uploads are refused at this time, plus a second.
 */
const UPLOAD_TIMEOUT_MS = 9000;
/**
 * MAX_UPLOAD_BYTES of this service: below the default 1 GiB so that the bomb inflating past it is
 * refused in seconds on a loaded machine too (inflating is ~200 MB/s here, a few times slower under
 * load); the refusal is the same at any limit.
 */
const MAX_UPLOAD_BYTES = 128 * 2 ** 20;

let service: ServiceProcess;
let dataDir = '';

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'lss-hostile-'));
  service = spawnService({
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    UPLOAD_TIMEOUT_MS: String(UPLOAD_TIMEOUT_MS),
    MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES),
    LOG_LEVEL: 'warn',
  });
  await waitUntilReady(service);
}, 90_000);

afterAll(async () => {
  if (service && service.process.exitCode === null) await killTree(service);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** Resident bytes of the service and every process below it (worker children, redis-server). */
function treeResidentBytes(): number {
  let total = 0;
  // A process gone meanwhile counts for nothing.
  for (const pid of [service.process.pid!, ...descendants(service.process.pid!)]) total += residentMemory(pid)?.bytes ?? 0;
  return total;
}

interface Measured<T> {
  result: T;
  ms: number;
  growthBytes: number;
  /** Longest /healthz answer while it ran (0 when not polled). */
  slowestHealthMs: number;
}

/** Runs `work` while sampling the tree's memory (every 25 ms) and, when asked, polling /healthz. */
async function measured<T>(work: () => Promise<T>, options: { pollHealth?: boolean } = {}): Promise<Measured<T>> {
  const baseline = treeResidentBytes();
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, treeResidentBytes())), 25);
  let running = true;
  let slowestHealthMs = 0;
  const health = (async () => {
    while (options.pollHealth && running) {
      const started = performance.now();
      const response = await fetch(`${service.baseUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
      await response.text();
      expect(response.status).toBe(200);
      slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const started = performance.now();
  try {
    const result = await work();
    return { result, ms: performance.now() - started, growthBytes: peak - baseline, slowestHealthMs };
  } finally {
    running = false;
    clearInterval(sampler);
    peak = Math.max(peak, treeResidentBytes());
    await health;
  }
}

async function nothingStored(): Promise<void> {
  const transport = socketTransport(service.baseUrl);
  const matrices = await transport.send({ method: 'GET', url: '/v1/matrices?limit=200' });
  expect(matrices.json<MatrixPage>().items).toEqual([]);
  const jobs = await transport.send({ method: 'GET', url: '/v1/jobs?limit=200' });
  expect(jobs.json<JobPage>().items).toEqual([]);
}

const HEADER = '%%MatrixMarket matrix coordinate real general';
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** A tridiagonal n x n matrix as Matrix Market text, its last entry replaced by `lastValue`. */
function tridiagonal(n: number, lastValue = '1'): Buffer {
  const lines = [HEADER, `${n} ${n} ${3 * n - 2}`];
  for (let i = 1; i <= n; i++) {
    if (i > 1) lines.push(`${i} ${i - 1} -1`);
    lines.push(`${i} ${i} 4`);
    if (i < n) lines.push(`${i} ${i + 1} -1`);
  }
  lines[lines.length - 1] = lines[lines.length - 1].replace(/\S+$/, lastValue);
  return Buffer.from(`${lines.join('\n')}\n`);
}

interface HostileCase {
  name: string;
  /** Builds the request (outside the measurement: compressing a bomb takes the test seconds). */
  request?: () => Request;
  /** Or sends it some other way. */
  send?: () => Promise<Answer | null>;
  status: number;
  code: string;
  /** Longest time to the refusal (default MAX_REFUSAL_MS). */
  maxMs?: number;
}

describe('hostile uploads, refused within bounds, nothing stored', () => {
  const send = (request: Request) => socketTransport(service.baseUrl).send(request);
  const cases: HostileCase[] = [
    {
      name: 'a 250,000-row file whose last entry is NaN',
      request: () => matrixUpload(tridiagonal(250_000, 'NaN')),
      status: 422,
      code: 'non-finite-value',
    },
    {
      name: 'the same, gzip-compressed',
      request: () => matrixUpload(gzipSync(tridiagonal(250_000, 'NaN')), { 'content-encoding': 'gzip' }),
      status: 422,
      code: 'non-finite-value',
    },
    {
      name: 'a gzip bomb: 2 x MAX_UPLOAD_BYTES of one line from 256 KiB compressed',
      request: () => matrixUpload(gzipSync(Buffer.alloc(2 * MAX_UPLOAD_BYTES, 0x31), { level: 9 }), { 'content-encoding': 'gzip' }),
      status: 422,
      code: 'matrix-market-syntax',
    },
    {
      name: 'a gzip bomb past MAX_UPLOAD_BYTES in blank lines after a valid size line',
      request: () =>
        matrixUpload(
          gzipSync(Buffer.concat([Buffer.from(`${HEADER}\n2 2 2\n`), Buffer.alloc(MAX_UPLOAD_BYTES + 1024, 0x0a)]), { level: 9 }),
          {
            'content-encoding': 'gzip',
          },
        ),
      status: 413,
      code: 'body-too-large',
    },
    {
      name: 'a single line of 64 MiB',
      request: () => matrixUpload(Buffer.alloc(64 * 2 ** 20, 0x31)),
      status: 422,
      code: 'matrix-market-syntax',
    },
    {
      name: 'a size line announcing n = 10^12 and 10^15 entries',
      request: () => matrixUpload(`${HEADER}\n1000000000000 1000000000000 1000000000000000\n1 1 1\n`),
      status: 413,
      code: 'too-large',
    },
    {
      name: 'the largest size line allowed (n = MAX_N_SPARSE, MAX_NNZ entries), then a bad entry',
      request: () => matrixUpload(`${HEADER}\n5000000 5000000 20000000\n1 1 1\n2 x 1\n`),
      status: 422,
      code: 'matrix-market-syntax',
    },
    {
      name: '2,000,000 comment lines before the size line',
      request: () => matrixUpload(`${HEADER}\n${'% comment\n'.repeat(2_000_000)}2 2 3\n1 1 1\n2 2 1\n`),
      status: 422,
      code: 'matrix-market-syntax',
    },
    {
      name: 'a JSON job body of BODY_LIMIT_BYTES holding 16 million one-digit values',
      request: () => ({
        method: 'POST',
        url: '/v1/jobs',
        headers: { 'content-type': 'application/json' },
        body: `{"type":"analyze","partition":{"machines":2},"matrix":{"format":"dense","data":[[${'1,'.repeat(16 * 2 ** 20 - 100)}1]]}}`,
      }),
      status: 413,
      code: 'body-too-large',
    },
    {
      name: 'twenty uploads trickling and never ending, at once',
      send: async () => {
        const uploads = Array.from({ length: 20 }, () =>
          rawRequest(
            service.baseUrl,
            {
              method: 'POST',
              url: '/v1/matrices',
              headers: { 'content-type': 'text/plain' },
              body: tridiagonal(1000),
              declaredLength: 10 ** 9,
            },
            { pieces: 100, delayMs: 20 },
          ),
        );
        const answers = await Promise.all(uploads.map((u) => u.answer));
        for (const u of uploads) u.socket.destroy();
        for (const a of answers) expect(a?.status).toBe(408);
        return answers[0];
      },
      status: 408,
      code: 'upload-timeout',
      maxMs: UPLOAD_TIMEOUT_MS + 1000,
    },
  ];

  it.each(cases)(
    '$name',
    async ({ request, send: sendCase, status, code, maxMs }) => {
      const built = request?.();
      const { result, ms, growthBytes } = await measured(() => (built ? send(built) : sendCase!()));
      console.info(`hostile upload: ${ms.toFixed(0)} ms, the service tree grew by ${mib(growthBytes)}`);
      expect(result, 'an answer').not.toBeNull();
      expect(result!.status, result!.text.slice(0, 300)).toBe(status);
      expect(result!.json<{ code: string }>().code).toBe(code);
      expect(ms).toBeLessThan(maxMs ?? MAX_REFUSAL_MS);
      expect(growthBytes, mib(growthBytes)).toBeLessThan(MAX_GROWTH_BYTES);
      await nothingStored();
    },
    60_000,
  );

  it('/healthz answers within 1 s while a 250,000-row file is parsed (then stored)', async () => {
    const text = tridiagonal(250_000);
    const { result, ms, growthBytes, slowestHealthMs } = await measured(() => send(matrixUpload(text)), { pollHealth: true });
    console.info(`250,000 rows: ${ms.toFixed(0)} ms, grew ${mib(growthBytes)}, slowest /healthz ${slowestHealthMs.toFixed(0)} ms`);
    expect(result.status, result.text).toBe(201);
    expect(slowestHealthMs).toBeGreaterThan(0);
    expect(slowestHealthMs).toBeLessThan(MAX_HEALTH_MS);
    expect(growthBytes).toBeLessThan(MAX_GROWTH_BYTES);
  }, 60_000);
});
