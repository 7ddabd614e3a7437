/**
 * The kernels chosen once (src/solvers/linalg/kernels.ts): what each backend's set holds, and that
 * kernels passed in are what runs, whatever backend the process selected. The TypeScript set's one-column
 * products against its loop.
 */
import { describe, expect, it } from 'vitest';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import { nativeArpack, nativeBlas, nativeMetis } from '../../../src/solvers/linalg/backend.js';
import { holdBlasToOneThread, kernelsOf, selectedKernels, TYPESCRIPT_KERNELS } from '../../../src/solvers/linalg/kernels.js';
import { useWasmKernels, wasmKernelsEnabled, wasmKernelsUnavailableReason } from '../../../src/solvers/linalg/wasmRowKernels.js';
import { withBackend } from '../../support/backends.js';
import { gaussianSystem } from '../../support/systems.js';
import { gemmLoop } from '../../../src/solvers/linalg/typescriptDenseKernels.js';
import { SeededRandom } from '../../../src/solvers/random.js';

const nativeLoaded = nativeBlas() !== null;

describe('kernels', () => {
  it('the TypeScript set has no native part and tiles products for its packed kernel, or its cache-blocked loop', () => {
    expect(kernelsOf('typescript')).toBe(TYPESCRIPT_KERNELS);
    expect(TYPESCRIPT_KERNELS).toMatchObject({ backend: 'typescript', blas: null, arpack: null, metis: null });
    expect(TYPESCRIPT_KERNELS.productTile(3000, 3000)).toEqual(wasmKernelsEnabled() ? { rows: 64, cols: 256 } : { rows: 8, cols: 512 });
    useWasmKernels(false);
    try {
      expect(TYPESCRIPT_KERNELS.productTile(3000, 3000)).toEqual({ rows: 8, cols: 512 });
    } finally {
      useWasmKernels(wasmKernelsUnavailableReason() === '');
    }
    expect(withBackend('typescript', () => selectedKernels())).toBe(TYPESCRIPT_KERNELS);
  });

  it.skipIf(!nativeLoaded)('the native set holds the addon and its parts, and takes whole rows per dgemm', () => {
    const native = kernelsOf('native');
    expect(native).toMatchObject({ backend: 'native', blas: nativeBlas(), arpack: nativeArpack(), metis: nativeMetis() });
    expect(withBackend('native', () => selectedKernels())).toBe(native);
    // 2.5e8 multiply-adds per call: 27 rows of 3000 x 3000, clamped to [8, 256].
    expect(native.productTile(3000, 3000)).toEqual({ rows: 27, cols: 3000 });
    expect(native.productTile(100, 100).rows).toBe(256);
    expect(native.productTile(20000, 20000).rows).toBe(8);
  });

  it.skipIf(!nativeLoaded)('holds OpenBLAS to one thread and gives its count back, unless another count was set meanwhile', () => {
    const blas = kernelsOf('native').blasThreads!;
    const before = blas.threads();
    try {
      blas.setThreads(2);
      const release = holdBlasToOneThread(blas);
      expect(blas.threads()).toBe(1);
      release();
      expect(blas.threads()).toBe(2);
      release();
      expect(blas.threads()).toBe(2);
      const overtaken = holdBlasToOneThread(blas);
      blas.setThreads(3);
      overtaken();
      expect(blas.threads()).toBe(3);
      // Nothing to hold: one thread already, or no BLAS.
      blas.setThreads(1);
      holdBlasToOneThread(blas)();
      expect(blas.threads()).toBe(1);
      expect(() => holdBlasToOneThread(null)()).not.toThrow();
    } finally {
      blas.setThreads(before);
    }
  });

  it.skipIf(!nativeLoaded)('an analysis runs on the kernels passed in, not on the selected backend', () => {
    const system = withBackend('typescript', () => gaussianSystem(60, 4, 7));
    const onTypescript = withBackend('typescript', () => analyze(system));
    const onNative = withBackend('native', () => analyze(system));
    // The two sets differ in the last bits (LAPACK's sums, another algorithm for sigma_max of a Gram block).
    expect(onNative).not.toEqual(onTypescript);
    expect(withBackend('native', () => analyze(system, { kernels: kernelsOf('typescript') }))).toEqual(onTypescript);
    expect(withBackend('typescript', () => analyze(system, { kernels: kernelsOf('native') }))).toEqual(onNative);
  });
});

describe('triangular block solves of the dense kernels', () => {
  const sets = nativeLoaded ? (['typescript', 'native'] as const) : (['typescript'] as const);
  for (const backend of sets) {
    // 7 x 3, and 150 x 200: the TypeScript R^{-T} S by blocks of rows with products between them (from 128 columns).
    for (const [p, w] of [
      [7, 3],
      [150, 200],
    ])
      it(`${backend}: R^{-1} S and R^{-T} S solve R X = S and R^T X = S (p = ${p}, ${w} columns)`, () => {
        const r = new Float64Array(p * p);
        for (let i = 0; i < p; i++) for (let j = i; j < p; j++) r[i * p + j] = i === j ? 2 + i : Math.sin(1 + i * p + j);
        const s = Float64Array.from({ length: p * w }, (_, k) => Math.cos(0.3 * k));
        const dense = kernelsOf(backend).dense;
        for (const transposed of [false, true]) {
          const x = Float64Array.from(s);
          if (transposed) dense.solveRTransposedBlock(r, p, x, w);
          else dense.solveRBlock(r, p, x, w);
          // R X (or R^T X) gives S back.
          for (let i = 0; i < p; i++)
            for (let j = 0; j < w; j++) {
              let sum = 0;
              for (let l = 0; l < p; l++) sum += (transposed ? r[l * p + i] : r[i * p + l]) * x[l * w + j];
              expect(Math.abs(sum - s[i * w + j])).toBeLessThan(1e-12);
            }
        }
      });
  }
});

describe('one-column products of the TypeScript dense kernels', () => {
  it("give the loop's op(A) b (the row kernels' blocks above a size, the loop or packed kernel below and when strided)", () => {
    const rng = new SeededRandom(8);
    const dense = TYPESCRIPT_KERNELS.dense;
    for (const transA of [false, true])
      for (const [m, kk, alpha, ldb] of [
        [300, 40, 1, 1],
        [300, 40, -2.5, 1],
        [13, 7, 1, 1],
        [300, 40, 1, 2],
      ] as const) {
        const a = rng.fillSigned(new Float64Array(m * kk));
        const b = rng.fillSigned(new Float64Array(kk * ldb));
        const viaKernels = rng.fillSigned(new Float64Array(m));
        const viaLoop = viaKernels.slice();
        dense.gemm(transA, m, 1, kk, alpha, a, transA ? m : kk, b, ldb, 0, viaKernels, 1);
        gemmLoop(transA, m, 1, kk, alpha, a, transA ? m : kk, b, ldb, 0, viaLoop, 1);
        for (let i = 0; i < m; i++) expect(Math.abs(viaKernels[i] - viaLoop[i]), `${transA} ${m} x ${kk} entry ${i}`).toBeLessThan(1e-12);
      }
  });
});
