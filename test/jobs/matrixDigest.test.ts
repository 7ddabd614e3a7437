import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { matrixDigest } from '../../src/jobs/matrixDigest.js';

/** The documented definition, spelled out: SHA-256 of the canonical CSR's rowPtr, colIdx (int32) and values (float64), little-endian. */
function referenceDigest(data: Float64Array, n: number, cols = n): { nnz: number; sha256: string } {
  const rowPtr = [0];
  const colIdx: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < cols; j++) {
      if (data[i * cols + j] === 0) continue;
      colIdx.push(j);
      values.push(data[i * cols + j]);
    }
    rowPtr.push(colIdx.length);
  }
  const bytes = Buffer.concat([
    Buffer.from(new Int32Array(rowPtr).buffer),
    Buffer.from(new Int32Array(colIdx).buffer),
    Buffer.from(new Float64Array(values).buffer),
  ]);
  return { nnz: colIdx.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

function randomDense(n: number, zeroFraction: number, seed: number, cols = n): Float64Array {
  let state = seed;
  const next = (): number => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Float64Array.from({ length: n * cols }, () => (next() < zeroFraction ? (next() < 0.5 ? 0 : -0) : next() * 2 - 1));
}

describe('matrixDigest of a dense matrix', () => {
  it.each([
    [0, 0],
    [1, 0],
    [50, 0],
    [300, 0],
    [50, 0.3],
    [7, 1],
  ])('n = %i with a fraction %f of zeros (+0 and -0) is the canonical CSR hash', (n, zeroFraction) => {
    const data = randomDense(n, zeroFraction, 17 + n);
    expect(matrixDigest({ rows: n, cols: n, data })).toEqual(referenceDigest(data, n));
  });

  it.each([
    [400, 100, 0],
    [400, 100, 0.3],
    [608, 188, 0.9],
  ])('a tall %i x %i matrix with a fraction %f of zeros is hashed from its own rows', (rows, cols, zeroFraction) => {
    const data = randomDense(rows, zeroFraction, 3 + rows, cols);
    expect(matrixDigest({ rows, cols, data })).toEqual(referenceDigest(data, rows, cols));
  });

  it('is the same for the matrix given as CSR', () => {
    const n = 40;
    const data = randomDense(n, 0, 5);
    const rowPtr = Int32Array.from({ length: n + 1 }, (_, i) => i * n);
    const colIdx = Int32Array.from({ length: n * n }, (_, k) => k % n);
    expect(matrixDigest({ rows: n, cols: n, rowPtr, colIdx, values: data })).toEqual(matrixDigest({ rows: n, cols: n, data }));
  });
});
