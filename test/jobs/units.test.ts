/** Small pieces of the job layer: ids, binary values, the problem catalog, small-job predictions, subscriptions, the embedded Redis. */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { pingRedis, startEmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { JobNotFinishedError, JobNotFoundError, StoreUnavailableError } from '../../src/jobs/errors.js';
import { newJobId } from '../../src/jobs/jobId.js';
import { isSmallJob, predictedFlops } from '../../src/jobs/apiKeys/smallJobs.js';
import { PROBLEM_TYPES, problemFromTypedError } from '../../src/jobs/problems.js';
import { bytesOf, float64From, int32From } from '../../src/jobs/store/binary.js';
import { createSubscriberConnection, subscribeWhenReady } from '../../src/jobs/store/redisConnection.js';
import {
  CancelledError,
  EmptyMachineError,
  NonFiniteValueError,
  NotSquareError,
  ProblemTooLargeError,
  SingularMatrixError,
  UnsupportedMatrixError,
} from '../../src/solvers/errors.js';
import { REDIS_SERVER_BIN } from '../support/service.js';

describe('job ids', () => {
  it('are 26-character ULIDs that sort by creation time', () => {
    const earlier = newJobId(1_700_000_000_000);
    const later = newJobId(1_700_000_000_001);
    expect(earlier).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(earlier < later).toBe(true);
    expect(newJobId()).not.toBe(newJobId());
  });
});

describe('binary values', () => {
  it('round-trip through Buffers, also at unaligned offsets', () => {
    const x = Float64Array.from([1, -2.5, Math.PI, 1e-300, -0]);
    const bytes = bytesOf(x);
    const unaligned = Buffer.concat([Buffer.from([7]), bytes]).subarray(1);
    expect(Array.from(float64From(unaligned))).toEqual(Array.from(x));
    expect(Array.from(int32From(bytesOf(Int32Array.from([0, 3, -1]))))).toEqual([0, 3, -1]);
  });
});

describe('problem catalog', () => {
  it('maps typed errors to statuses and type URIs', () => {
    const cases: [Error, number, string][] = [
      [new NotSquareError(2, 3), 422, 'not-square'],
      [new NonFiniteValueError('rhs[0]', 'NaN'), 422, 'non-finite-value'],
      [new EmptyMachineError(1), 422, 'empty-machine'],
      [new SingularMatrixError('singular'), 422, 'singular-matrix'],
      [new UnsupportedMatrixError('complex'), 422, 'unsupported-matrix'],
      [new ProblemTooLargeError('big'), 413, 'too-large'],
      [new CancelledError(), 409, 'cancelled'],
      [new JobNotFoundError('x'), 404, 'job-not-found'],
      [new JobNotFinishedError('x', 'running'), 409, 'job-not-finished'],
      [new StoreUnavailableError('down'), 503, 'store-unavailable'],
    ];
    for (const [error, status, code] of cases) {
      expect(problemFromTypedError(error)).toMatchObject({ status, code, type: `/problems/${code}`, detail: error.message });
      expect(PROBLEM_TYPES.get(code)?.status).toBe(status);
    }
    expect(problemFromTypedError(new Error('boom'))).toBeNull();
  });
});

describe('small-job predictions', () => {
  const options = { tolerance: 1e-8, maxIterations: 20_000, parameters: {} };
  const generated = { kind: 'generator', spec: { generator: 'gaussian', n: 1, mean: 1, std: 1, seed: 1 } } as const;
  const MAX = 1e9;

  it('counts the analysis (10 n^3) and every iteration of every algorithm (4 flops per entry of A)', () => {
    expect(predictedFlops({ n: 12, matrix: generated, algorithms: [], options })).toBe(10 * 12 ** 3);
    expect(predictedFlops({ n: 100, matrix: generated, algorithms: ['apc', 'dhbm'], options })).toBe(
      10 * 100 ** 3 + 2 * 20_000 * 4 * 100 ** 2,
    );
    const csr = {
      rows: 4,
      cols: 4,
      rowPtr: Int32Array.from([0, 1, 2, 3, 4]),
      colIdx: Int32Array.from([0, 1, 2, 3]),
      values: new Float64Array(4),
    };
    const sparse = { kind: 'csr', A: csr, format: 'coo' } as const;
    expect(predictedFlops({ n: 4, matrix: sparse, algorithms: ['apc'], options })).toBe(10 * 64 + 20_000 * 4 * 4);
    // A stored matrix's size is not in the request.
    expect(predictedFlops({ n: 4, matrix: { kind: 'stored', matrixId: 'x', nnz: 10 }, algorithms: [], options })).toBe(Infinity);
  });

  it('finds a tiny analyze job small and its long solves not, nor anything when the limit is 0', () => {
    expect(isSmallJob({ n: 12, matrix: generated, algorithms: [], options }, MAX)).toBe(true);
    const all = ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'] as const;
    expect(isSmallJob({ n: 300, matrix: generated, algorithms: [...all], options: { ...options, maxIterations: 200_000 } }, MAX)).toBe(
      false,
    );
    expect(isSmallJob({ n: 12, matrix: generated, algorithms: [], options }, 0)).toBe(false);
  });
});

describe('subscriptions', () => {
  it('subscribe reliably while the connection is still being checked (no race with the ready check)', async () => {
    const redis = await startEmbeddedRedis({ bin: REDIS_SERVER_BIN });
    const publisher = new Redis(redis.url);
    try {
      for (let k = 0; k < 20; k++) {
        const subscriber = createSubscriberConnection(redis.url, 'test-subscriber');
        const errors: Error[] = [];
        subscriber.on('error', (error: Error) => errors.push(error));
        const received = new Promise<string>((resolve) =>
          subscriber.on('message', (_channel: string, message: string) => resolve(message)),
        );
        // The racy moment: socket connected, ioredis' ready check (INFO) still in flight.
        await new Promise((resolve) => subscriber.once('connect', resolve));
        expect(await subscribeWhenReady(subscriber, 'test-channel', 5000)).toBe(true);
        await publisher.publish('test-channel', `hello ${k}`);
        expect(await received).toBe(`hello ${k}`);
        expect(errors).toEqual([]); // the race shows as "Connection in subscriber mode" errors and a reconnect
        subscriber.disconnect();
      }
    } finally {
      publisher.disconnect();
      await redis.stop();
    }
  });
});

describe('embedded redis', () => {
  it('starts on a free loopback port, answers PING, and stops', async () => {
    const redis = await startEmbeddedRedis({ bin: REDIS_SERVER_BIN });
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(await pingRedis(redis.port)).toBe(true);
    await redis.stop();
    expect(await pingRedis(redis.port)).toBe(false);
  });
});
