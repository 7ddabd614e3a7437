/**
 * The native dense kernels' projectOut (two dgemv, the second over the rows left) against the
 * TypeScript loop: the same rows projected out, the same h, w to rounding. Their gemm (dgemm, or dgemv for one
 * contiguous column) against the TypeScript loop's.
 */
import { describe, expect, it } from 'vitest';
import { nativeBlas } from '../../../src/solvers/linalg/backend.js';
import { kernelsOf } from '../../../src/solvers/linalg/kernels.js';
import { projectOut, TYPESCRIPT_DENSE_KERNELS } from '../../../src/solvers/linalg/typescriptDenseKernels.js';
import { SeededRandom } from '../../../src/solvers/random.js';

const nativeLoaded = nativeBlas() !== null;

describe.skipIf(!nativeLoaded)('native projectOut', () => {
  it('removes the rows the loop removes (all, some from a middle row on, none) and reports whether it removed all', () => {
    const n = 8001;
    const count = 9;
    const rng = new SeededRandom(31);
    const basis = rng.fillSigned(new Float64Array(count * n));
    const start = rng.fillSigned(new Float64Array(n));
    // w with large components along rows 3 and 6 only: a threshold between them and the rest leaves rows 3..6.
    for (let r = 0; r < n; r++) start[r] += 50 * basis[3 * n + r] - 40 * basis[6 * n + r];
    const exactH = new Float64Array(count);
    projectOut(basis, n, count, start.slice(), exactH);
    const small = Math.max(
      ...Array.from(exactH)
        .filter((_, i) => i !== 3 && i !== 6)
        .map(Math.abs),
    );
    const dense = kernelsOf('native').dense;
    for (const [skipBelow, removedAll, rows] of [
      [0, true, [0, 1, 2, 3, 4, 5, 6, 7, 8]],
      [2 * small, false, [3, 6]],
      [1e12, false, []],
    ] as const) {
      const w = start.slice();
      const h = new Float64Array(count);
      const loopW = start.slice();
      const loopH = new Float64Array(count);
      expect(dense.projectOut(basis, n, count, w, h, skipBelow)).toBe(removedAll);
      expect(projectOut(basis, n, count, loopW, loopH, skipBelow)).toBe(removedAll);
      expect(Array.from(h, (v, i) => (v !== 0 ? i : -1)).filter((i) => i >= 0)).toEqual(rows);
      for (let i = 0; i < count; i++) expect(Math.abs(h[i] - loopH[i]), `h[${i}]`).toBeLessThan(1e-12 * Math.max(1, Math.abs(loopH[i])));
      for (let r = 0; r < n; r++) expect(Math.abs(w[r] - loopW[r]), `w[${r}]`).toBeLessThan(1e-9);
      if (rows.length === 0) expect(w).toEqual(start);
    }
  });
});

describe.skipIf(!nativeLoaded)('native gemm', () => {
  it("is the TypeScript loop's C = alpha op(A) B + beta C, one column (dgemv) or several (dgemm), A with a wider leading dimension", () => {
    const rng = new SeededRandom(5);
    const dense = kernelsOf('native').dense;
    for (const transA of [false, true])
      for (const [m, n, kk, ldb, ldc] of [
        [7, 1, 5, 1, 1],
        [7, 1, 5, 3, 2],
        [6, 4, 9, 4, 5],
      ] as const) {
        // op(A) m x kk: A stored m x kk, or kk x m when transposed, with 3 more columns than used.
        const lda = (transA ? m : kk) + 3;
        const a = rng.fillSigned(new Float64Array((transA ? kk : m) * lda));
        const b = rng.fillSigned(new Float64Array(kk * ldb));
        const c = rng.fillSigned(new Float64Array(m * ldc));
        const viaNative = c.slice();
        const viaLoop = c.slice();
        dense.gemm(transA, m, n, kk, 1.5, a, lda, b, ldb, 0.25, viaNative, ldc);
        TYPESCRIPT_DENSE_KERNELS.gemm(transA, m, n, kk, 1.5, a, lda, b, ldb, 0.25, viaLoop, ldc);
        for (let k = 0; k < c.length; k++)
          expect(Math.abs(viaNative[k] - viaLoop[k]), `${transA} ${m}x${n} entry ${k}`).toBeLessThan(1e-13);
      }
  });
});
