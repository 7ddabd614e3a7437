/**
 * The matrix store on a real Redis, with a matrix whose arrays span several pieces (PIECE_BYTES):
 * written piece by piece under temporary keys, renamed in one MULTI, read back identical; a matrix
 * deleted or cut short reads as missing, never as a wrong matrix.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../../src/jobs/embeddedRedis.js';
import { csrKeys, MatrixStore, PIECE_BYTES } from '../../../src/jobs/store/matrixStore.js';
import { csrFromCoo, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { startTestRedis } from '../../support/service.js';

let redis: EmbeddedRedis;
let connection: Redis;
let store: MatrixStore;

beforeAll(async () => {
  redis = await startTestRedis();
  connection = new Redis(redis.url);
  store = new MatrixStore(connection, 'test', 'jobs');
});

afterAll(async () => {
  connection?.disconnect();
  await redis?.stop();
});

/** A random n x n matrix with `perRow` entries in each row (distinct columns), seeded. */
function randomCsr(n: number, perRow: number, seed: number): CsrMatrix {
  let state = seed;
  const next = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  const rows: number[] = [];
  const cols: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    const taken = new Set<number>();
    while (taken.size < perRow) taken.add(Math.floor(next() * n));
    for (const j of taken) {
      rows.push(i);
      cols.push(j);
      values.push(next() * 2 - 1);
    }
  }
  return csrFromCoo(n, n, rows, cols, values, { duplicates: 'reject' });
}

describe('MatrixStore', () => {
  it('writes and reads back a matrix whose arrays span several pieces, bit for bit', async () => {
    const csr = randomCsr(100_000, 12, 7);
    expect(csr.values.byteLength).toBeGreaterThan(2 * PIECE_BYTES);
    const createdAt = new Date().toISOString();
    const stored = await store.create(
      { id: 'big', n: csr.rows, nnz: csr.rowPtr[csr.rows], symmetry: 'general', field: 'real', createdAt },
      csr,
      600,
    );
    expect(stored.bytes).toBe(csr.rowPtr.byteLength + csr.colIdx.byteLength + csr.values.byteLength);
    expect(await store.get('big')).toEqual(stored);
    const read = await store.csr('big');
    expect(Buffer.from(read!.csr.rowPtr.buffer).equals(Buffer.from(csr.rowPtr.buffer))).toBe(true);
    expect(Buffer.from(read!.csr.colIdx.buffer).equals(Buffer.from(csr.colIdx.buffer))).toBe(true);
    expect(Buffer.from(read!.csr.values.buffer).equals(Buffer.from(csr.values.buffer))).toBe(true);
    // No temporary key is left behind; every key has the TTL.
    expect(await connection.keys('test:store:jobs:pending:*')).toEqual([]);
    for (const key of store.keys.allOf('big')) expect(await connection.ttl(key), key).toBeGreaterThan(0);
  });

  it('reads a matrix cut short or deleted as missing', async () => {
    const csr = randomCsr(1000, 3, 11);
    const matrix = { n: 1000, nnz: csr.rowPtr[1000], symmetry: 'general' as const, field: 'real' as const, createdAt: '' };
    await store.create({ ...matrix, id: 'short' }, csr, 600);
    await connection.set(csrKeys(store.keys.csr('short')).values, Buffer.alloc(8));
    expect(await store.csr('short')).toBeNull();
    await store.create({ ...matrix, id: 'gone' }, csr, 600);
    expect(await store.delete('gone')).toBe(true);
    expect(await store.get('gone')).toBeNull();
    expect(await store.csr('gone')).toBeNull();
    expect(await store.delete('gone')).toBe(false);
  });
});
