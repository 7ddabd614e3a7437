/**
 * The block kernels of the passes over several right-hand sides (src/solvers/linalg/blockKernels.ts):
 * the WebAssembly SIMD product C = alpha op(A) X + beta C and the TypeScript loop both equal the
 * defining sums to rounding (both transposes, every row count mod 4, widths w = 1..17, lda > cols,
 * beta 0 not reading C); the WebAssembly CSR block sweep equals the TypeScript loop to the bit, and the
 * defining sums, in its three modes (R = A X - B with and without G += A^T R, and G += A^T R from a
 * given R) and as the term G = A^T (A X - B) over a G it zeroes itself, empty rows and columns included; the block solves with a sparse Cholesky factor (WebAssembly and
 * TypeScript) equal solveCholesky on each column to the bit; APC's and MLM's bookkeeping after a block pass
 * (blockConsensus) equals the TypeScript loop to the bit and its defining sums, on full, strip and listed supports;
 * blocks outside the arena are refused.
 */
import { describe, expect, it } from 'vitest';
import {
  blockConsensusLoop,
  typescriptCsrBlock,
  gramBlockWorkLength,
  typescriptGramBlockSolver,
  type CsrBlockRows,
} from '../../../src/solvers/linalg/blockKernels.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { factorCholesky, solveCholesky } from '../../../src/solvers/sparse/sparseCholesky.js';
import { WasmArena, attachArena, wasmKernelsUnavailableReason, type WasmRowKernels } from '../../../src/solvers/linalg/wasmRowKernels.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { TYPESCRIPT_DENSE_KERNELS } from '../../../src/solvers/linalg/typescriptDenseKernels.js';

const available = wasmKernelsUnavailableReason() === '';

function arenaOf(doubles: number): { arena: WasmArena; kernels: WasmRowKernels } {
  const arena = WasmArena.forSpec({}, 8 * doubles, 1, 0);
  if (arena === null) throw new Error('no arena');
  return { arena, kernels: attachArena(arena.layout, 0) };
}

function close(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance: number, what: string): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) expect(Math.abs(actual[i] - expected[i]), `${what}, entry ${i}`).toBeLessThanOrEqual(tolerance);
}

describe.skipIf(!available)(`WebAssembly block kernels${available ? '' : ` [SKIPPED: ${wasmKernelsUnavailableReason()}]`}`, () => {
  it('blockProduct equals the defining sums, as the TypeScript loop does, for both transposes, odd sizes and w = 1..17', () => {
    const rng = new SeededRandom(11);
    for (const transA of [false, true]) {
      for (const m of [1, 3, 4, 5, 7, 9]) {
        for (const kk of [1, 6, 13]) {
          for (let w = 1; w <= 17; w++) {
            const { arena, kernels } = arenaOf(4 * (m + kk) * (kk + m + 24) + 64);
            const aRows = transA ? kk : m;
            const aCols = transA ? m : kk;
            const lda = aCols + (w % 3);
            const ldx = w + (m % 2);
            const ldc = w + (kk % 2);
            const a = rng.fillSigned(arena.allocate(Float64Array, 8, aRows * lda));
            const x = rng.fillSigned(arena.allocate(Float64Array, 8, kk * ldx));
            const c0 = rng.fillSigned(new Float64Array(m * ldc));
            const op = (i: number, l: number): number => (transA ? a[l * lda + i] : a[i * lda + l]);
            for (const [alpha, beta] of [
              [1, -1],
              [-1, 0],
              [1.5, 0.5],
            ]) {
              const expected = Float64Array.from(c0);
              for (let i = 0; i < m; i++)
                for (let j = 0; j < w; j++) {
                  let s = 0;
                  for (let l = 0; l < kk; l++) s += op(i, l) * x[l * ldx + j];
                  expected[i * ldc + j] = alpha * s + beta * c0[i * ldc + j];
                }
              const what = `transA ${transA}, ${m} x ${kk} times ${kk} x ${w}, alpha ${alpha}, beta ${beta}`;
              const c = arena.allocate(Float64Array, 8, m * ldc);
              // beta 0: C is not read (NaN there would show), and the padding past each row's w entries is left alone.
              c.set(beta === 0 ? c0.map((v, t) => (t % ldc < w ? NaN : v)) : c0);
              kernels.blockProduct(transA, m, w, kk, alpha, a, lda, x, ldx, beta, c, ldc);
              close(c, expected, 1e-13, `WebAssembly, ${what}`);
              const plain = Float64Array.from(c0);
              TYPESCRIPT_DENSE_KERNELS.gemm(transA, m, w, kk, alpha, a, lda, x, ldx, beta, plain, ldc);
              close(plain, expected, 1e-13, `TypeScript, ${what}`);
            }
          }
        }
      }
    }
  });

  it('csrBlock equals the TypeScript sweep to the bit and the defining sums, in each mode, w = 1..17', () => {
    const rng = new SeededRandom(12);
    const p = 13;
    const cols = 9;
    // Random rows of 0-5 entries (row 4 empty), column indices repeated now and then; columns 7 and 8 in no row.
    const rowPtr = new Int32Array(p + 1);
    const colIdx: number[] = [];
    for (let k = 0; k < p; k++) {
      const count = k === 4 ? 0 : Math.floor(rng.nextDouble() * 6);
      for (let e = 0; e < count; e++) colIdx.push(Math.floor(rng.nextDouble() * (cols - 2)));
      rowPtr[k + 1] = colIdx.length;
    }
    const nnz = colIdx.length;
    for (let w = 1; w <= 17; w++) {
      const { arena, kernels } = arenaOf(2 * nnz + p + 11 * (p + cols) * w + 64);
      const rows: CsrBlockRows = {
        p,
        c: cols,
        rowPtr: arena.allocate(Int32Array, 4, p + 1),
        colIdx: arena.allocate(Int32Array, 4, nnz),
        values: rng.fillSigned(arena.allocate(Float64Array, 8, nnz)),
      };
      rows.rowPtr.set(rowPtr);
      rows.colIdx.set(colIdx);
      const block = (length: number): Float64Array => rng.fillSigned(arena.allocate(Float64Array, 8, length));
      const x = block(cols * w);
      const b = block(p * w);
      const g0 = rng.fillSigned(new Float64Array(cols * w));
      const squares0 = rng.fillSigned(new Float64Array(w));

      // The defining sums: R = A X - B, squares += |R_j|^2, G += A^T R.
      const expectedR = new Float64Array(p * w);
      const expectedSquares = Float64Array.from(squares0);
      const expectedG = Float64Array.from(g0);
      for (let k = 0; k < p; k++)
        for (let j = 0; j < w; j++) {
          let s = -b[k * w + j];
          for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) s += rows.values[e] * x[colIdx[e] * w + j];
          expectedR[k * w + j] = s;
          expectedSquares[j] += s * s;
          for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) expectedG[colIdx[e] * w + j] += rows.values[e] * s;
        }

      const wasm = kernels.csrBlock(rows);
      const plain = typescriptCsrBlock(rows);
      // The term overwrites G (garbage before it, zeroed by the sweep as it reaches G's rows).
      const termOn = (kernel: typeof wasm): { g: Float64Array; squares: Float64Array } => {
        const g = arena.allocate(Float64Array, 8, cols * w);
        const squares = arena.allocate(Float64Array, 8, w);
        g.set(g0);
        squares.set(squares0);
        kernel.term(w, x, b, arena.allocate(Float64Array, 8, p * w), g, squares);
        return { g, squares };
      };
      const termWasm = termOn(wasm);
      const termLoop = termOn(plain);
      expect(Array.from(termWasm.g), `w ${w}, term: G to the bit`).toEqual(Array.from(termLoop.g));
      expect(Array.from(termWasm.squares), `w ${w}, term: squares to the bit`).toEqual(Array.from(termLoop.squares));
      close(
        termWasm.g,
        expectedG.map((v, t) => v - g0[t]),
        1e-13,
        `w ${w}, term: G`,
      );
      for (const mode of ['residual', 'both', 'accumulate'] as const) {
        const runOn = (kernel: typeof wasm): { r: Float64Array; g: Float64Array; squares: Float64Array } => {
          const r = arena.allocate(Float64Array, 8, p * w);
          const g = arena.allocate(Float64Array, 8, cols * w);
          const squares = arena.allocate(Float64Array, 8, w);
          g.set(g0);
          squares.set(squares0);
          if (mode === 'accumulate') r.set(expectedR);
          kernel.run(w, mode === 'accumulate' ? null : x, b, r, mode === 'residual' ? null : g, squares);
          return { r, g, squares };
        };
        const fromWasm = runOn(wasm);
        const fromLoop = runOn(plain);
        expect(Array.from(fromWasm.r), `w ${w}, ${mode}: R to the bit`).toEqual(Array.from(fromLoop.r));
        expect(Array.from(fromWasm.g), `w ${w}, ${mode}: G to the bit`).toEqual(Array.from(fromLoop.g));
        expect(Array.from(fromWasm.squares), `w ${w}, ${mode}: squares to the bit`).toEqual(Array.from(fromLoop.squares));
        close(fromWasm.r, expectedR, 1e-13, `w ${w}, ${mode}: R`);
        close(fromWasm.g, mode === 'residual' ? g0 : expectedG, 1e-13, `w ${w}, ${mode}: G`);
        close(fromWasm.squares, mode === 'accumulate' ? squares0 : expectedSquares, 1e-13, `w ${w}, ${mode}: squares`);
      }
    }
  });

  it('gramBlockSolver equals solveCholesky on each column to the bit, as the TypeScript block solve does, w = 1..17', () => {
    const rng = new SeededRandom(13);
    // G = A A^T for the first 40 rows of an 8 x 8 Poisson matrix: an AMD-ordered factor with fill, whose columns
    // below the diagonal hold from none to more than four entries, a multiple of four and not (the backward sweep's
    // partial sums and their remainder).
    const a = poisson2d(8);
    const rowsOfA = { ...a, rows: 40, rowPtr: a.rowPtr.subarray(0, 41) };
    const factor = factorCholesky(gramMatrix(rowsOfA));
    const { n, colPtr, rowIdx, ordering } = factor.symbolic;
    const below = Array.from({ length: n }, (_, j) => colPtr[j + 1] - colPtr[j] - 1);
    expect(below.some((count) => count > 4 && count % 4 !== 0)).toBe(true);
    expect(below.some((count) => count >= 4 && count % 4 === 0)).toBe(true);
    for (let w = 1; w <= 17; w++) {
      const { arena, kernels } = arenaOf(4 * factor.symbolic.nnzL + 4 * gramBlockWorkLength(n, w) + 64);
      const inArena = arena.copyInto({ n, colPtr, rowIdx, values: factor.values, perm: ordering.perm }) as Parameters<
        typeof kernels.gramBlockSolver
      >[0];
      const b0 = rng.fillSigned(new Float64Array(n * w));
      const b = arena.allocate(Float64Array, 8, n * w);
      b.set(b0);
      kernels.gramBlockSolver(inArena, arena.allocate(Float64Array, 8, gramBlockWorkLength(n, w))).solve(b, w);
      const plain = Float64Array.from(b0);
      typescriptGramBlockSolver(inArena, new Float64Array(gramBlockWorkLength(n, w))).solve(plain, w);
      const expected = new Float64Array(n * w);
      for (let j = 0; j < w; j++) {
        const column = Float64Array.from({ length: n }, (_, k) => b0[k * w + j]);
        solveCholesky(factor, column, column);
        for (let k = 0; k < n; k++) expected[k * w + j] = column[k];
      }
      expect(Array.from(b), `w ${w}: WebAssembly`).toEqual(Array.from(expected));
      expect(Array.from(plain), `w ${w}: TypeScript`).toEqual(Array.from(expected));
    }
  });

  it('blockConsensus equals the TypeScript loop to the bit and its defining sums, on full, strip and listed supports, w = 1..17', () => {
    const rng = new SeededRandom(14);
    const n = 23;
    const supports: { what: string; c: number; first: number; cols: number[] }[] = [
      { what: 'full', c: n, first: 0, cols: [] },
      { what: 'strip from row 5', c: 9, first: 5, cols: [] },
      { what: 'listed rows', c: 7, first: -1, cols: [0, 2, 3, 9, 14, 15, 22] },
    ];
    for (const { what, c, first, cols: listed } of supports) {
      for (let w = 1; w <= 17; w++) {
        const { arena, kernels } = arenaOf(2 * n * w + 4 * c * w + 4 * w + 64);
        const x = rng.fillSigned(arena.allocate(Float64Array, 8, n * w));
        const y = rng.fillSigned(arena.allocate(Float64Array, 8, n * w));
        const term = rng.fillSigned(arena.allocate(Float64Array, 8, c * w));
        const d0 = rng.fillSigned(new Float64Array(c * w));
        const cols = arena.allocate(Int32Array, 4, Math.max(listed.length, 1));
        cols.set(listed);
        const gamma = 0.75;
        const withInside = first !== 0;
        const rowOf = (t: number): number => (first >= 0 ? first + t : listed[t]);
        const near = new Float64Array(w);
        const inside = new Float64Array(w);
        const dExpected = Float64Array.from(d0);
        for (let t = 0; t < c; t++)
          for (let j = 0; j < w; j++) {
            const e = x[rowOf(t) * w + j] - y[rowOf(t) * w + j];
            inside[j] += e * e;
            near[j] += (e - d0[t * w + j]) ** 2;
            dExpected[t * w + j] = d0[t * w + j] + gamma * (term[t * w + j] - d0[t * w + j]);
          }
        const d = arena.allocate(Float64Array, 8, c * w);
        d.set(d0);
        // Stale sums: both kernels overwrite them.
        const nearWasm = arena.allocate(Float64Array, 8, w).fill(7);
        const insideWasm = arena.allocate(Float64Array, 8, w).fill(7);
        kernels.blockConsensus(c, w, x, y, first, cols, d, term, gamma, nearWasm, withInside ? insideWasm : null);
        const dLoop = Float64Array.from(d0);
        const nearLoop = new Float64Array(w).fill(7);
        const insideLoop = new Float64Array(w).fill(7);
        blockConsensusLoop(c, w, x, y, first, cols, dLoop, term, gamma, nearLoop, withInside ? insideLoop : null);
        const label = `${what}, w ${w}`;
        expect(Array.from(d), `${label}: D, WebAssembly against the loop`).toEqual(Array.from(dLoop));
        expect(Array.from(nearWasm), `${label}: near`).toEqual(Array.from(nearLoop));
        if (withInside) expect(Array.from(insideWasm), `${label}: inside`).toEqual(Array.from(insideLoop));
        else expect(Array.from(insideWasm), `${label}: inside untouched on a full support`).toEqual(new Array(w).fill(7));
        close(dLoop, dExpected, 1e-15, `${label}: D`);
        close(nearLoop, near, 1e-12, `${label}: near`);
        if (withInside) close(insideLoop, inside, 1e-12, `${label}: inside`);
      }
    }
  });

  it('refuse blocks outside the arena and blocks too short for the product', () => {
    const { arena, kernels } = arenaOf(256);
    const a = arena.allocate(Float64Array, 8, 12);
    const x = arena.allocate(Float64Array, 8, 12);
    const c = arena.allocate(Float64Array, 8, 12);
    expect(() => kernels.blockProduct(false, 3, 4, 3, 1, a, 4, x, 4, 0, new Float64Array(12), 4)).toThrow(/not in this arena/);
    expect(() => kernels.blockProduct(false, 4, 4, 3, 1, a, 3, x, 4, 0, c, 4)).toThrow(/exceeds its 12 elements/);
    expect(() => kernels.blockProduct(true, 3, 4, 4, 1, a, 3, x, 3, 0, c, 4)).toThrow(/X, 4 x 4/);
    const rows: CsrBlockRows = {
      p: 1,
      c: 2,
      rowPtr: arena.allocate(Int32Array, 4, 2),
      colIdx: arena.allocate(Int32Array, 4, 1),
      values: arena.allocate(Float64Array, 8, 1),
    };
    rows.rowPtr.set([0, 1]);
    const sweep = kernels.csrBlock(rows);
    expect(() => sweep.run(2, x, c, new Float64Array(2), null, a)).toThrow(/not in this arena/);
    expect(() => sweep.run(8, x, c, a, null, c)).toThrow(/too short/);
    rows.colIdx[0] = 2;
    expect(() => kernels.csrBlock(rows)).toThrow(RangeError);
    const cols = arena.allocate(Int32Array, 4, 2);
    cols.set([0, 6]);
    const near = arena.allocate(Float64Array, 8, 2);
    expect(() => kernels.blockConsensus(2, 2, x, x, -1, cols, a, new Float64Array(4), 1, near, null)).toThrow(/not in this arena/);
    // Row 6 of a 2-column block is past X's 12 entries.
    expect(() => kernels.blockConsensus(2, 2, x, x, -1, cols, a, c, 1, near, null)).toThrow(/too short/);
    expect(() => kernels.blockConsensus(2, 2, x, x, 5, cols, a, c, 1, near, null)).toThrow(/too short/);
  });
});
