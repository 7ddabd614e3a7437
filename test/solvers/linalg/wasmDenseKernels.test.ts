/**
 * The packed WebAssembly SIMD products (src/solvers/linalg/wasmDenseKernels.ts) against the loops of
 * ./typescriptDenseKernels.ts and a plain triple loop: gemm (A or A^T, beta 0, 1 and other, leading
 * dimensions beyond the width), multiplyByTransposeRows (row ranges, output offsets and strides) and
 * subtractProductRows, on shapes around the 4 x 4 tile and the 256-deep panels (1, 3, 17, 64, 257);
 * tall products that go by row blocks; the dispatch of TYPESCRIPT_DENSE_KERNELS and LINALG_WASM off.
 * The Krylov storage: a basis in a memory of its own, where projectOut runs in place, against the loop.
 */
import { describe, expect, it } from 'vitest';
import type { DenseKernels } from '../../../src/solvers/linalg/denseKernels.js';
import {
  combineRowBlock,
  gemmLoop,
  multiplyByTransposeRowsLoop,
  norm,
  projectOut,
  recurrenceStep,
  scaledCopy,
  subtractProductRowsLoop,
  TYPESCRIPT_DENSE_KERNELS,
} from '../../../src/solvers/linalg/typescriptDenseKernels.js';
import {
  packedCombineRowBlock,
  packedGemm,
  packedMultiplyByTransposeRows,
  packedSubtractProductRows,
  wasmKrylovStorage,
  wasmNorm,
  wasmProjectOut,
  wasmRecurrenceStep,
  wasmScaledCopy,
} from '../../../src/solvers/linalg/wasmDenseKernels.js';
import { useWasmKernels, wasmKernelsUnavailableReason } from '../../../src/solvers/linalg/wasmRowKernels.js';
import { SeededRandom } from '../../../src/solvers/random.js';

const available = wasmKernelsUnavailableReason() === '';
const SHAPES = [1, 3, 17, 64, 257];

function random(rng: SeededRandom, length: number): Float64Array {
  return rng.fillSigned(new Float64Array(length));
}

/** |actual - expected| within a relative 1e-13 of the sum of |terms| each entry adds (k of them, entries in [-1, 1]). */
function close(actual: Float64Array, expected: Float64Array, k: number): void {
  expect(actual.length).toBe(expected.length);
  const tolerance = 1e-14 * (k + 4);
  for (let i = 0; i < expected.length; i++) {
    if (Math.abs(actual[i] - expected[i]) > tolerance) expect(actual[i], `entry ${i}`).toBeCloseTo(expected[i], 13);
  }
}

/** C = alpha op(A) B + beta C by the definition, entry by entry. */
function referenceGemm(...[transA, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc]: Parameters<DenseKernels['gemm']>): void {
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let l = 0; l < k; l++) s += (transA ? a[l * lda + i] : a[i * lda + l]) * b[l * ldb + j];
      c[i * ldc + j] = alpha * s + (beta === 0 ? 0 : beta * c[i * ldc + j]);
    }
}

describe.skipIf(!available)(`packed WebAssembly products${available ? '' : ` [SKIPPED: ${wasmKernelsUnavailableReason()}]`}`, () => {
  it('gemm equals the definition for A and A^T, beta 0, 1 and 0.5, and leading dimensions beyond the width', () => {
    const rng = new SeededRandom(11);
    let packed = 0;
    for (const m of SHAPES)
      for (const n of SHAPES)
        for (const k of SHAPES) {
          if (m * n * k > 300_000) continue;
          for (const transA of [false, true])
            for (const beta of [0, 1, 0.5]) {
              const lda = (transA ? m : k) + 2;
              const ldb = n + 1;
              const ldc = n + 3;
              const a = random(rng, (transA ? k : m) * lda);
              const b = random(rng, k * ldb);
              const c = random(rng, m * ldc);
              // beta 0: C is not read, NaN there stays out of the result.
              if (beta === 0) c.fill(Number.NaN);
              const expected = c.slice();
              referenceGemm(transA, m, n, k, -0.75, a, lda, b, ldb, beta, expected, ldc);
              const actual = c.slice();
              if (packedGemm(transA, m, n, k, -0.75, a, lda, b, ldb, beta, actual, ldc)) packed++;
              else gemmLoop(transA, m, n, k, -0.75, a, lda, b, ldb, beta, actual, ldc);
              // Entries between the rows (j >= n) untouched.
              for (let i = 0; i < m; i++)
                for (let j = n; j < ldc; j++)
                  if (!(beta === 0 && Number.isNaN(c[i * ldc + j]))) expect(actual[i * ldc + j]).toBe(c[i * ldc + j]);
              for (let i = 0; i < m; i++) close(actual.subarray(i * ldc, i * ldc + n), expected.subarray(i * ldc, i * ldc + n), k);
            }
        }
    // Every shape of at least 32,768 multiply-adds ran packed.
    expect(packed).toBeGreaterThan(20);
  });

  it('gemm at the blocked factorizations’ shapes (k = 32, 64; m, n > 256) equals the loop', () => {
    const rng = new SeededRandom(12);
    for (const [m, n, k, transA] of [
      [300, 257, 32, false],
      [257, 300, 64, true],
      [513, 70, 64, false],
    ] as const) {
      const lda = transA ? m : k;
      const a = random(rng, (transA ? k : m) * lda);
      const b = random(rng, k * n);
      const c = random(rng, m * n);
      const expected = c.slice();
      gemmLoop(transA, m, n, k, -1, a, lda, b, n, 1, expected, n);
      expect(packedGemm(transA, m, n, k, -1, a, lda, b, n, 1, c, n)).toBe(true);
      close(c, expected, k);
    }
  });

  it('multiplyByTransposeRows equals the loop on row ranges, output offsets and strides', () => {
    const rng = new SeededRandom(13);
    for (const rows of SHAPES)
      for (const cols of SHAPES)
        for (const len of [17, 64, 257, 600]) {
          // Packed when a row costs 8,192 multiply-adds, whatever the rows.
          if (cols * len < 8_192 || rows * cols * len > 3_000_000) continue;
          const rowStart = 2;
          const x = random(rng, (rowStart + rows) * len);
          const y = random(rng, cols * len);
          const outStride = cols + 5;
          const outRowOffset = 1;
          const out = random(rng, (rowStart + rows - outRowOffset) * outStride);
          const expected = out.slice();
          multiplyByTransposeRowsLoop(x, y, len, rowStart, rowStart + rows, cols, expected, outStride, outRowOffset);
          expect(packedMultiplyByTransposeRows(x, y, len, rowStart, rowStart + rows, cols, out, outStride, outRowOffset)).toBe(true);
          close(out, expected, len);
        }
  });

  it('multiplyByTransposeRows gives the same bits for a row range as for the whole product', () => {
    const rng = new SeededRandom(17);
    const [rows, cols, len] = [37, 29, 600];
    const x = random(rng, rows * len);
    const y = random(rng, cols * len);
    const whole = new Float64Array(rows * cols);
    expect(packedMultiplyByTransposeRows(x, y, len, 0, rows, cols, whole, cols)).toBe(true);
    for (const [r0, r1] of [
      [0, 1],
      [5, 9],
      [13, 37],
    ]) {
      const part = new Float64Array((r1 - r0) * cols);
      expect(packedMultiplyByTransposeRows(x, y, len, r0, r1, cols, part, cols, r0)).toBe(true);
      expect(part).toEqual(whole.subarray(r0 * cols, r1 * cols));
    }
  });

  it('subtractProductRows equals the loop on a range of rows', () => {
    const rng = new SeededRandom(14);
    for (const k of SHAPES)
      for (const len of SHAPES)
        for (const rows of [17, 64, 257]) {
          if (rows * len * k < 32_768) continue;
          const rowStart = 3;
          const total = rowStart + rows + 2;
          const c = random(rng, total * k);
          const q = random(rng, k * len);
          const w = random(rng, total * len);
          const expected = w.slice();
          subtractProductRowsLoop(c, q, expected, k, len, rowStart, rowStart + rows);
          expect(packedSubtractProductRows(c, q, w, k, len, rowStart, rowStart + rows)).toBe(true);
          close(w, expected, k);
        }
  });

  it('goes by row blocks when C is taller than its staging block', () => {
    const rng = new SeededRandom(15);
    // 2^22 staged entries at n = 8192 hold 512 rows: 1100 rows take three blocks.
    const [m, n, k] = [1100, 8190, 3];
    const a = random(rng, m * k);
    const b = random(rng, k * n);
    const c = random(rng, m * n);
    const expected = c.slice();
    gemmLoop(false, m, n, k, 1, a, k, b, n, 1, expected, n);
    expect(packedGemm(false, m, n, k, 1, a, k, b, n, 1, c, n)).toBe(true);
    close(c, expected, k);
  });

  it('TYPESCRIPT_DENSE_KERNELS runs the packed products, and the loops with the WebAssembly kernels off', () => {
    const rng = new SeededRandom(16);
    const [m, n, k] = [40, 50, 60];
    const a = random(rng, m * k);
    const b = random(rng, k * n);
    const viaKernels = new Float64Array(m * n);
    const packed = new Float64Array(m * n);
    const loop = new Float64Array(m * n);
    TYPESCRIPT_DENSE_KERNELS.gemm(false, m, n, k, 1, a, k, b, n, 0, viaKernels, n);
    expect(packedGemm(false, m, n, k, 1, a, k, b, n, 0, packed, n)).toBe(true);
    expect(viaKernels).toEqual(packed);
    gemmLoop(false, m, n, k, 1, a, k, b, n, 0, loop, n);
    useWasmKernels(false);
    try {
      expect(packedGemm(false, m, n, k, 1, a, k, b, n, 0, new Float64Array(m * n), n)).toBe(false);
      TYPESCRIPT_DENSE_KERNELS.gemm(false, m, n, k, 1, a, k, b, n, 0, viaKernels, n);
      expect(viaKernels).toEqual(loop);
    } finally {
      useWasmKernels(true);
    }
  });
});

describe.skipIf(!available)(
  `Krylov storage in WebAssembly memory${available ? '' : ` [SKIPPED: ${wasmKernelsUnavailableReason()}]`}`,
  () => {
    /** The storage filled with random vectors, and plain copies of them for the loop. */
    function filled(rng: SeededRandom, vectors: number, n: number) {
      const storage = wasmKrylovStorage(vectors, n);
      expect(storage).not.toBeNull();
      const { basis, w } = storage!;
      rng.fillSigned(basis);
      rng.fillSigned(w);
      return { basis, w, plainBasis: basis.slice(), plainW: w.slice() };
    }

    it('projectOut on a basis and w in their own memory equals the loop, around the kernels’ 8-row blocks and an odd n', () => {
      const rng = new SeededRandom(21);
      for (const n of [8000, 8001])
        for (const count of [1, 7, 8, 9, 17]) {
          const { basis, w, plainBasis, plainW } = filled(rng, 17, n);
          expect(basis.buffer).toBe(w.buffer);
          expect(basis.buffer).toBeInstanceOf(SharedArrayBuffer);
          const h = new Float64Array(count);
          const plainH = new Float64Array(count);
          expect(wasmProjectOut(basis, n, count, w, h, 0)).toBe(true);
          projectOut(plainBasis, n, count, plainW, plainH);
          // h: n-term dots of entries in [-1, 1]; w: count more terms on top.
          for (let i = 0; i < count; i++) expect(Math.abs(h[i] - plainH[i]), `h[${i}]`).toBeLessThan(1e-14 * n);
          for (let r = 0; r < n; r++) if (Math.abs(w[r] - plainW[r]) > 1e-14 * n * count) expect(w[r], `w[${r}]`).toBe(plainW[r]);
          // Only w changed: the basis is read, not written.
          expect(basis.every((v, i) => v === plainBasis[i])).toBe(true);
        }
    });

    it('TYPESCRIPT_DENSE_KERNELS.projectOut takes the kernels on its storage and the loop elsewhere', () => {
      const rng = new SeededRandom(22);
      const n = 10_000;
      const { basis, w, plainBasis, plainW } = filled(rng, 9, n);
      const h = new Float64Array(9);
      const plainH = new Float64Array(9);
      TYPESCRIPT_DENSE_KERNELS.projectOut(basis, n, 9, w, h);
      projectOut(plainBasis, n, 9, plainW, plainH);
      // Two-lane sums differ from the loop's in rounding (bitwise equal would mean the loop ran).
      expect(Array.from(h).some((v, i) => v !== plainH[i])).toBe(true);
      // A w outside the storage, or more vectors than its room for h: the loop, bit for bit.
      const outside = plainW.slice();
      expect(wasmProjectOut(basis, n, 9, outside, h, 0)).toBeNull();
      expect(wasmProjectOut(basis, n, 10, w, new Float64Array(10), 0)).toBeNull();
      expect(wasmProjectOut(plainBasis, n, 9, plainW, h, 0)).toBeNull();
      const again = plainW.slice();
      TYPESCRIPT_DENSE_KERNELS.projectOut(plainBasis, n, 9, outside, h);
      projectOut(plainBasis, n, 9, again, plainH);
      expect(outside.every((v, i) => v === again[i])).toBe(true);
    });

    it('projectOut leaves w as it was when every |h_i| is at most skipBelow, on the storage as in the loop', () => {
      const rng = new SeededRandom(25);
      const n = 8001;
      const { basis, w, plainBasis, plainW } = filled(rng, 9, n);
      const h = new Float64Array(9);
      const plainH = new Float64Array(9);
      // Above every |h_i|: h is measured, w is not touched.
      expect(wasmProjectOut(basis, n, 9, w, h, 1e6)).toBe(false);
      expect(projectOut(plainBasis, n, 9, plainW, plainH, 1e6)).toBe(false);
      expect(w.every((v, i) => v === plainW[i])).toBe(true);
      for (let i = 0; i < 9; i++) expect(Math.abs(h[i] - plainH[i])).toBeLessThan(1e-14 * n);
      // Just below the largest |h_i|: the pass is made.
      const largest = Math.max(...Array.from(plainH, Math.abs));
      const before = plainW.slice();
      expect(wasmProjectOut(basis, n, 9, w, h, 0.999 * largest)).toBe(true);
      expect(projectOut(plainBasis, n, 9, plainW, plainH, 0.999 * largest)).toBe(true);
      expect(plainW.some((v, i) => v !== before[i])).toBe(true);
      for (let r = 0; r < n; r++) expect(Math.abs(w[r] - plainW[r]), `w[${r}]`).toBeLessThan(1e-14 * n * 9);
    });

    it('the three-term recurrence and the norm on the storage equal the loops (j = 0, beta = 0, and both rows)', () => {
      const rng = new SeededRandom(24);
      const n = 8001;
      for (const [j, beta] of [
        [0, 0],
        [5, 0],
        [5, 0.75],
        [16, -1.25],
      ]) {
        const { basis, w, plainBasis, plainW } = filled(rng, 17, n);
        const alpha = wasmRecurrenceStep(basis, n, j, beta, w);
        const plainAlpha = recurrenceStep(plainBasis, n, j, beta, plainW);
        expect(alpha).not.toBeNull();
        expect(Math.abs(alpha! - plainAlpha)).toBeLessThan(1e-14 * n);
        for (let r = 0; r < n; r++) if (Math.abs(w[r] - plainW[r]) > 1e-14 * n) expect(w[r], `w[${r}], j ${j}`).toBe(plainW[r]);
        const size = norm(plainW, n);
        expect(Math.abs(wasmNorm(w, n)! - size)).toBeLessThan(1e-15 * n * size);
        // A vector of the basis, and a shorter prefix.
        expect(Math.abs(wasmNorm(basis.subarray(n, 2 * n), n)! - norm(plainBasis.subarray(n, 2 * n), n))).toBeLessThan(1e-15 * n * size);
        expect(Math.abs(wasmNorm(w, 100)! - norm(plainW, 100))).toBeLessThan(1e-13 * norm(plainW, 100));
      }
      expect(wasmNorm(new Float64Array(8), 8)).toBeNull();
      expect(wasmRecurrenceStep(new Float64Array(2 * 8), 8, 1, 1, new Float64Array(8))).toBeNull();
    });

    it('scaledCopy of w into a row of the basis gives the loop’s bits, and nothing past the row', () => {
      const rng = new SeededRandom(25);
      for (const n of [8000, 8003]) {
        const { basis, w, plainBasis, plainW } = filled(rng, 17, n);
        const s = 1 / 3.7;
        expect(wasmScaledCopy(w, n, s, basis.subarray(5 * n, 6 * n))).toBe(true);
        scaledCopy(plainW, n, s, plainBasis.subarray(5 * n, 6 * n));
        expect(basis.every((v, i) => v === plainBasis[i])).toBe(true);
        expect(w.every((v, i) => v === plainW[i])).toBe(true);
      }
      expect(wasmScaledCopy(new Float64Array(8), 8, 2, new Float64Array(8))).toBe(false);
    });

    it('krylovStorage is ordinary arrays below 65,536 entries and with the WebAssembly kernels off', () => {
      expect(wasmKrylovStorage(8, 8000)).toBeNull();
      expect(TYPESCRIPT_DENSE_KERNELS.krylovStorage(8, 8000).basis.buffer).toBeInstanceOf(ArrayBuffer);
      useWasmKernels(false);
      try {
        expect(wasmKrylovStorage(41, 100_000)).toBeNull();
        const storage = TYPESCRIPT_DENSE_KERNELS.krylovStorage(41, 100_000);
        expect(storage.basis.length).toBe(4_100_000);
        expect(storage.w.length).toBe(100_000);
      } finally {
        useWasmKernels(true);
      }
    });

    it('combineRowBlock (a thick restart’s Ritz vectors) equals the loop on a column block of a wide basis', () => {
      const rng = new SeededRandom(23);
      const [kept, size, n, r0, len] = [10, 41, 9000, 4096, 4096];
      const k = random(rng, kept * size);
      const basis = random(rng, size * n);
      const packed = new Float64Array(kept * len);
      const loop = new Float64Array(kept * len);
      expect(packedCombineRowBlock(k, kept, size, basis, n, r0, len, packed)).toBe(true);
      combineRowBlock(k, kept, size, basis, n, r0, len, loop);
      close(packed, loop, size);
      // The last, shorter block.
      expect(packedCombineRowBlock(k, kept, size, basis, n, 8192, n - 8192, packed)).toBe(true);
      combineRowBlock(k, kept, size, basis, n, 8192, n - 8192, loop);
      close(packed.subarray(0, kept * (n - 8192)), loop.subarray(0, kept * (n - 8192)), size);
    });
  },
);
