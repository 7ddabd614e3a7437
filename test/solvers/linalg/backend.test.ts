/**
 * The backend switch, the native binding, and the agreement of every kernel's native path with its
 * TypeScript path (the TypeScript path being the reference: independent code, same mathematics).
 * Without the addon the native suites are skipped with the reason in their titles.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Matrix, SingularValueDecomposition } from 'ml-matrix';
import { describe, expect, it } from 'vitest';
import { analyze, analyzeWork } from '../../../src/solvers/analysis/analyze.js';
import { computeGramBlocks, gramBlock, gramOperator } from '../../../src/solvers/analysis/gramBlocks.js';
import type { Analysis } from '../../../src/solvers/analysis/types.js';
import { runCooperatively, runSync, type WorkProgress } from '../../../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { activeBackend, nativeBlas, NATIVE_ADDON_ENV, useBackend } from '../../../src/solvers/linalg/backend.js';
import { householderQrWork, type ThinQr } from '../../../src/solvers/linalg/householderQr.js';
import { lanczos } from '../../../src/solvers/eigen/lanczos.js';
import { luFactor, luSolve, luSolveTransposed } from '../../../src/solvers/linalg/lu.js';
import { panelBidiagonalWork, panelLuWork, panelQrWork } from '../../../src/solvers/linalg/panelFactorizations.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { multiplyByTransposeRows } from '../../../src/solvers/linalg/products.js';
import { bidiagonalSingularValue, singularValues } from '../../../src/solvers/linalg/singularValues.js';
import type { DenseMatrix } from '../../../src/solvers/matrix.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { nativeSkipReason, withBackend } from '../../support/backends.js';
import { gaussianSystem, randomMatrix } from '../../support/systems.js';

const EPS = Number.EPSILON;
const native = nativeBlas();
const skipNative = native === null;
const nativeTitle = (title: string) => (skipNative ? `${title} [${nativeSkipReason()}]` : title);

function maxAbs(x: ArrayLike<number>): number {
  let m = 0;
  for (let k = 0; k < x.length; k++) m = Math.max(m, Math.abs(x[k]));
  return m;
}

function maxDifference(x: ArrayLike<number>, y: ArrayLike<number>): number {
  expect(x.length).toBe(y.length);
  let m = 0;
  for (let k = 0; k < x.length; k++) m = Math.max(m, Math.abs(x[k] - y[k]));
  return m;
}

/** Row-major op(A) entry for a matrix stored at `off` with leading dimension ld. */
const entry = (a: Float64Array, off: number, ld: number, trans: boolean, i: number, j: number) =>
  trans ? a[off + j * ld + i] : a[off + i * ld + j];

describe('backend selection', () => {
  it("starts on 'auto': native when the addon loads, typescript otherwise", () => {
    expect(activeBackend()).toBe(native ? 'native' : 'typescript');
  });

  it('switches per process and rejects unknown names', () => {
    expect(useBackend('typescript')).toBe('typescript');
    expect(activeBackend()).toBe('typescript');
    expect(useBackend('auto')).toBe(native ? 'native' : 'typescript');
    expect(() => useBackend('fortran' as 'native')).toThrow(/Unknown numerical backend/);
    if (native) expect(useBackend('native')).toBe('native');
    else expect(() => useBackend('native')).toThrow(/not available/);
    useBackend('auto');
  });

  // A fresh process that cannot load the addon: what a machine without OpenBLAS sees.
  const backendModule = fileURLToPath(new URL('../../../src/solvers/linalg/backend.ts', import.meta.url));
  const probe = (addon: string) => {
    const script = `
      const b = await import(${JSON.stringify(backendModule)});
      const out = { blas: b.nativeBlas(), reason: b.nativeUnavailableReason(), active: b.activeBackend(), auto: b.useBackend('auto') };
      try { b.useBackend('native'); out.native = 'selected'; } catch (e) { out.native = e.message; }
      console.log(JSON.stringify(out));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, [NATIVE_ADDON_ENV]: addon },
    });
    expect(child.status, child.stderr).toBe(0);
    return JSON.parse(child.stdout.trim().split('\n').pop()!) as {
      blas: unknown;
      reason: string;
      active: string;
      auto: string;
      native: string;
    };
  };

  it(`falls back to typescript when the addon is absent (${NATIVE_ADDON_ENV}=off or a missing file)`, () => {
    for (const addon of ['off', '/nonexistent/linalg_native.node']) {
      const out = probe(addon);
      expect(out.blas).toBeNull();
      expect(out.active).toBe('typescript');
      expect(out.auto).toBe('typescript');
      expect(out.native).toMatch(/native numerical backend is not available/);
      expect(out.reason.length).toBeGreaterThan(0);
    }
  });

  it('never throws from nativeBlas() when the file is not a loadable addon', () => {
    const fake = join(mkdtempSync(join(tmpdir(), 'linalg-native-')), 'linalg_native.node');
    writeFileSync(fake, 'not a shared object');
    const out = probe(fake);
    expect(out.blas).toBeNull();
    expect(out.reason).toMatch(/cannot be loaded/);
    expect(out.native).toMatch(/cannot be loaded/);
  });
});

describe.skipIf(skipNative)(nativeTitle('native binding (OpenBLAS / LAPACKE)'), () => {
  const blas = native!;

  it('reports its OpenBLAS build and thread count', () => {
    expect(blas.config()).toMatch(/OpenBLAS/);
    expect(blas.threads()).toBeGreaterThanOrEqual(1);
  });

  it('trimNativeHeap gives freed typed arrays back to the system where they left holes between those still held', () => {
    // In a fresh process: 250 MiB of 64 KiB arrays (malloc's own heap, below its mmap threshold), one in 16 kept, the
    // rest collected. free() leaves those holes resident; malloc_trim returns them.
    const backendModule = fileURLToPath(new URL('../../../src/solvers/linalg/backend.ts', import.meta.url));
    const script = `
      const { trimNativeHeap } = await import(${JSON.stringify(backendModule)});
      const rss = () => process.memoryUsage().rss / 2 ** 20;
      let arrays = Array.from({ length: 4000 }, (_, k) => new Float64Array(8192).fill(k));
      const kept = arrays.filter((_, k) => k % 16 === 0);
      arrays = null;
      for (let round = 0; round < 3; round++) { gc(); await new Promise((resolve) => setTimeout(resolve, 20)); }
      const before = rss();
      const trimmed = trimNativeHeap();
      console.log(JSON.stringify({ before, after: rss(), trimmed, kept: kept.length }));`;
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(child.status, child.stderr).toBe(0);
    const out = JSON.parse(child.stdout.trim().split('\n').pop()!) as { before: number; after: number; trimmed: boolean };
    expect(out.trimmed).toBe(true);
    // ~235 MiB of holes (15 of each 16 arrays); measured: 330 -> 92 MiB.
    expect(out.before - out.after).toBeGreaterThan(150);
  });

  it('dgemv: y = alpha op(A) x + beta y on sub-matrices with offsets and lda > n', () => {
    const rng = new SeededRandom(1);
    const m = 7;
    const n = 5;
    const lda = 9;
    const a = rng.fillSigned(new Float64Array(3 + m * lda));
    for (const trans of [false, true]) {
      const inLen = trans ? m : n;
      const outLen = trans ? n : m;
      const x = rng.fillSigned(new Float64Array(inLen + 2));
      const y = rng.fillSigned(new Float64Array(outLen + 4));
      const expected = Float64Array.from(y);
      for (let i = 0; i < outLen; i++) {
        let s = 0;
        for (let k = 0; k < inLen; k++) s += (trans ? a[3 + k * lda + i] : a[3 + i * lda + k]) * x[2 + k];
        expected[1 + i] = 0.5 * s - 2 * y[1 + i];
      }
      blas.dgemv(trans, m, n, 0.5, a, 3, lda, x, 2, -2, y, 1);
      expect(maxDifference(y, expected)).toBeLessThan(1e-14);
    }
  });

  it('row kernels (rowsDot, rowsCombine, rowsFused) on sub-matrices with offsets, ld > cols, and every block tail', () => {
    const rng = new SeededRandom(4);
    // Rows: whole blocks of 8, tails of 1-7 rows; columns: multiples of 4 and tails of 1-3.
    for (const [rows, cols] of [
      [1, 1],
      [7, 3],
      [8, 4],
      [17, 10],
      [24, 33],
      [13, 64],
    ]) {
      const ld = cols + 3;
      const off = 5;
      const x = rng.fillSigned(new Float64Array(off + rows * ld));
      const v = rng.fillSigned(new Float64Array(cols + 2));
      const bias = rng.fillSigned(new Float64Array(rows + 1));
      const dot = (k: number): number => {
        let s = 0;
        for (let t = 0; t < cols; t++) s += x[off + k * ld + t] * v[2 + t];
        return s;
      };
      const out = new Float64Array(rows + 1);
      blas.rowsDot(rows, cols, x, off, ld, v, 2, out, 1);
      for (let k = 0; k < rows; k++) expect(Math.abs(out[1 + k] - dot(k))).toBeLessThan(1e-13);
      expect(out[0]).toBe(0);

      const w = rng.fillSigned(new Float64Array(rows));
      const y = rng.fillSigned(new Float64Array(cols + 1));
      const expected = Float64Array.from(y);
      for (let k = 0; k < rows; k++) for (let t = 0; t < cols; t++) expected[1 + t] += -0.5 * w[k] * x[off + k * ld + t];
      blas.rowsCombine(rows, cols, -0.5, x, off, ld, w, 0, y, 1);
      expect(maxDifference(y, expected)).toBeLessThan(1e-13);

      const dots = new Float64Array(rows);
      const z = rng.fillSigned(new Float64Array(cols));
      const fused = Float64Array.from(z);
      for (let k = 0; k < rows; k++) {
        const d = dot(k) - bias[1 + k];
        for (let t = 0; t < cols; t++) fused[t] += 2 * d * x[off + k * ld + t];
      }
      blas.rowsFused(rows, cols, 2, x, off, ld, v, 2, bias, 1, dots, 0, z, 0);
      for (let k = 0; k < rows; k++) expect(Math.abs(dots[k] - (dot(k) - bias[1 + k]))).toBeLessThan(1e-13);
      expect(maxDifference(z, fused)).toBeLessThan(1e-12);
    }
  });

  it('row kernels check extents and refuse an output that overlaps an input', () => {
    const x = new Float64Array(40);
    const v = new Float64Array(8);
    const out = new Float64Array(5);
    expect(() => blas.rowsDot(5, 8, x, 1, 8, v, 0, out, 0)).toThrow(RangeError);
    expect(() => blas.rowsDot(5, 8, x, 0, 7, v, 0, out, 0)).toThrow(/leading dimension/);
    expect(() => blas.rowsDot(5, 8, x, 0, 8, v, 1, out, 0)).toThrow(RangeError);
    expect(() => blas.rowsDot(5, 8, x, 0, 8, x, 32, x, 0)).toThrow(/out overlaps X/);
    expect(() => blas.rowsCombine(5, 8, 1, x, 0, 8, out, 0, x, 30)).toThrow(/y overlaps X/);
    expect(() => blas.rowsCombine(4, 8, 1, x, 0, 8, v, 0, v, 0)).toThrow(/y overlaps w/);
    expect(() => blas.rowsFused(4, 8, 1, x, 0, 8, v, 0, out, 0, out, 0, new Float64Array(8), 0)).toThrow(/dots overlaps bias/);
    expect(() => blas.rowsFused(4, 8, 1, x, 0, 8, v, 0, out, 0, new Float64Array(4), 0, v, 0)).toThrow(/y overlaps v/);
    // Views of one buffer that do not overlap are fine.
    const buffer = new Float64Array(60);
    buffer.fill(1, 0, 40);
    const y = buffer.subarray(40, 48);
    blas.rowsCombine(5, 8, 1, buffer, 0, 8, Float64Array.from([1, 1, 1, 1, 1]), 0, y, 0);
    expect(Array.from(y)).toEqual(new Array(8).fill(5));
  });

  it('dgemm: every transpose combination, with offsets and leading dimensions', () => {
    const rng = new SeededRandom(2);
    const [m, n, k] = [6, 4, 5];
    for (const ta of [false, true])
      for (const tb of [false, true]) {
        const lda = (ta ? m : k) + 2;
        const ldb = (tb ? k : n) + 1;
        const ldc = n + 3;
        const a = rng.fillSigned(new Float64Array(1 + (ta ? k : m) * lda));
        const b = rng.fillSigned(new Float64Array(2 + (tb ? n : k) * ldb));
        const c = rng.fillSigned(new Float64Array(m * ldc));
        const expected = Float64Array.from(c);
        for (let i = 0; i < m; i++)
          for (let j = 0; j < n; j++) {
            let s = 0;
            for (let t = 0; t < k; t++) s += entry(a, 1, lda, ta, i, t) * entry(b, 2, ldb, tb, t, j);
            expected[i * ldc + j] = 1.5 * s + 0.25 * c[i * ldc + j];
          }
        blas.dgemm(ta, tb, m, n, k, 1.5, a, 1, lda, b, 2, ldb, 0.25, c, 0, ldc);
        expect(maxDifference(c, expected)).toBeLessThan(1e-14);
      }
  });

  it('dtrsv and dtrsm solve with either triangle, transposed or not, unit diagonal or not', () => {
    const rng = new SeededRandom(3);
    const n = 12;
    const a = rng.fillSigned(new Float64Array(n * n));
    for (let i = 0; i < n; i++) a[i * n + i] = 3 + i; // well conditioned
    for (const upper of [false, true])
      for (const trans of [false, true])
        for (const unit of [false, true]) {
          const op = (i: number, j: number) => {
            const [r, c] = trans ? [j, i] : [i, j];
            if (r === c) return unit ? 1 : a[r * n + c];
            return (upper ? c > r : c < r) ? a[r * n + c] : 0;
          };
          const xTrue = rng.fillSigned(new Float64Array(n));
          const b = new Float64Array(n);
          for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) b[i] += op(i, j) * xTrue[j];
          const x = Float64Array.from(b);
          blas.dtrsv(upper, trans, unit, n, a, 0, n, x, 0);
          expect(maxDifference(x, xTrue)).toBeLessThan(1e-13);
          // dtrsm, left side, two right-hand sides (the second one scaled by 2).
          const bb = new Float64Array(2 * n);
          for (let i = 0; i < n; i++) {
            bb[2 * i] = b[i];
            bb[2 * i + 1] = 2 * b[i];
          }
          blas.dtrsm(true, upper, trans, unit, n, 2, 1, a, 0, n, bb, 0, 2);
          for (let i = 0; i < n; i++) {
            expect(Math.abs(bb[2 * i] - xTrue[i])).toBeLessThan(1e-13);
            expect(Math.abs(bb[2 * i + 1] - 2 * xTrue[i])).toBeLessThan(1e-13);
          }
        }
  });

  it('checks every extent and argument type instead of reading past an array', () => {
    const a = new Float64Array(20);
    const x = new Float64Array(5);
    const y = new Float64Array(4);
    expect(() => blas.dgemv(false, 4, 5, 1, a, 1, 5, x, 0, 0, y, 0)).toThrow(RangeError);
    expect(() => blas.dgemv(false, 4, 5, 1, a, 0, 4, x, 0, 0, y, 0)).toThrow(/leading dimension/);
    expect(() => blas.dgemv(false, 4, 5, 1, a, 0, 5, x, 1, 0, y, 0)).toThrow(RangeError);
    expect(() => blas.dgemv(false, 4, 5, 1, new Float32Array(20) as unknown as Float64Array, 0, 5, x, 0, 0, y, 0)).toThrow(TypeError);
    expect(() => blas.dgemv(false, -1, 5, 1, a, 0, 5, x, 0, 0, y, 0)).toThrow(TypeError);
    expect(() => blas.dgemm(false, false, 4, 4, 5, 1, a, 0, 5, a, 0, 4, 0, y, 0, 4)).toThrow(RangeError);
    expect(() => blas.dgetrs(false, 2, 1, a, 0, 2, Int32Array.from([3, 2]), 0, x, 0, 1)).toThrow(/pivot/);
    // Subarray views are read at their own offset.
    const big = Float64Array.from({ length: 30 }, (_, k) => k);
    const view = big.subarray(10, 16); // 2 x 3: [10 11 12; 13 14 15]
    const out = new Float64Array(2);
    blas.dgemv(false, 2, 3, 1, view, 0, 3, Float64Array.from([1, 1, 1]), 0, 0, out, 0);
    expect(Array.from(out)).toEqual([33, 42]);
  });

  it('dgetrf + dgetrs (row-major) solve A x = b and A^T x = b', () => {
    const n = 30;
    const a = randomMatrix(n, n, 4).data;
    const lu = Float64Array.from(a);
    const ipiv = new Int32Array(n);
    expect(blas.dgetrf(n, n, lu, 0, n, ipiv, 0)).toBe(0);
    const xTrue = new SeededRandom(5).fillSigned(new Float64Array(n));
    for (const trans of [false, true]) {
      const b = new Float64Array(n);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) b[i] += (trans ? a[j * n + i] : a[i * n + j]) * xTrue[j];
      blas.dgetrs(trans, n, 1, lu, 0, n, ipiv, 0, b, 0, 1);
      expect(maxDifference(b, xTrue)).toBeLessThan(1e-11);
    }
    // An exactly singular matrix: info > 0 names the zero pivot.
    expect(blas.dgetrf(3, 3, Float64Array.from([1, 2, 3, 2, 4, 6, 0, 1, 1]), 0, 3, new Int32Array(3), 0)).toBeGreaterThan(0);
  });

  it('dgeqrf + dorgqr give an orthonormal Q with Q R = M; dgesddValues matches ml-matrix', () => {
    const [m, n] = [40, 12];
    const mat = randomMatrix(n, m, 6).data; // column-major m x n
    const w = Float64Array.from(mat);
    const tau = new Float64Array(n);
    blas.dgeqrf(m, n, w, 0, m, tau, 0);
    const r = new Float64Array(n * n);
    for (let j = 0; j < n; j++) for (let i = 0; i <= j; i++) r[i * n + j] = w[j * m + i];
    blas.dorgqr(m, n, n, w, 0, m, tau, 0);
    for (let j = 0; j < n; j++) {
      for (let l = 0; l < n; l++) {
        let s = 0;
        for (let i = 0; i < m; i++) s += w[j * m + i] * w[l * m + i];
        expect(Math.abs(s - (j === l ? 1 : 0))).toBeLessThan(1e-14);
      }
      for (let i = 0; i < m; i++) {
        let s = 0;
        for (let l = 0; l <= j; l++) s += w[l * m + i] * r[l * n + j];
        expect(Math.abs(s - mat[j * m + i])).toBeLessThan(1e-14);
      }
    }
    const s = new Float64Array(n);
    blas.dgesddValues(m, n, Float64Array.from(mat), 0, m, s, 0);
    const rows = Array.from({ length: n }, (_, j) => Array.from(mat.subarray(j * m, (j + 1) * m)));
    const ref = new SingularValueDecomposition(new Matrix(rows).transpose(), {
      computeLeftSingularVectors: false,
      computeRightSingularVectors: false,
    }).diagonal;
    expect(maxDifference(s, ref)).toBeLessThan(1e-13);
  });
});

describe.skipIf(skipNative)(nativeTitle('panel factorizations (native) against one-call LAPACK and the TypeScript code'), () => {
  const blas = native!;

  it('panel QR, in slices of a few columns, equals dgeqrf + dorgqr', () => {
    const [p, c] = [150, 260];
    const a = randomMatrix(p, c, 7).data;
    const { q, r } = runSync(panelQrWork(blas, Float64Array.from(a), p, c, true, 20_000));
    const w = Float64Array.from(a);
    const tau = new Float64Array(p);
    blas.dgeqrf(c, p, w, 0, c, tau, 0);
    for (let j = 0; j < p; j++) for (let k = 0; k <= j; k++) expect(Math.abs(r[k * p + j] - w[j * c + k])).toBeLessThan(1e-13);
    blas.dorgqr(c, p, p, w, 0, c, tau, 0);
    expect(maxDifference(q!, w)).toBeLessThan(1e-13);
  });

  it('panel LU, in slices of a few rows, solves as accurately as the TypeScript LU', () => {
    const n = 200;
    const a = randomMatrix(n, n, 8);
    const lu = Float64Array.from(a.data);
    const { perm, zeroPivotColumn } = runSync(panelLuWork(blas, lu, n, 5_000));
    expect(zeroPivotColumn).toBe(-1);
    expect(Array.from(perm).sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i));
    // P A = L U entrywise, to rounding.
    let worst = 0;
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let t = 0; t <= Math.min(i, j); t++) s += (t === i ? 1 : lu[i * n + t]) * (t <= j ? lu[t * n + j] : 0);
        worst = Math.max(worst, Math.abs(s - a.data[perm[i] * n + j]));
      }
    expect(worst).toBeLessThan(1e-13);
  });

  it('panel bidiagonalization (dlabrd panels, sliced trailing updates) keeps every singular value', () => {
    for (const q of [60, 300]) {
      const a = randomMatrix(q, q, 9 + q).data;
      const { d, e } = runSync(panelBidiagonalWork(blas, Float64Array.from(a), q, 30_000));
      const s = new Float64Array(q);
      blas.dgesddValues(q, q, Float64Array.from(a), 0, q, s, 0);
      for (let k = 0; k < q; k++) expect(Math.abs(bidiagonalSingularValue(d, e, q - 1 - k) - s[k])).toBeLessThan(1e-13 * s[0]);
    }
  });
});

/** The same computation under each backend. */
function both<T>(fn: () => T): { ts: T; nat: T } {
  return { ts: withBackend('typescript', fn), nat: withBackend('native', fn) };
}

/** Rows dealt to the machines seven apart, so that every machine's rows are spread over A. */
const interleaved = (row: number, _n: number, m: number): number => (row * 7) % m;

describe.skipIf(skipNative)(nativeTitle('native and TypeScript kernels agree'), () => {
  it('thin QR of A_i^T: the same projector Q Q^T, |R| and rows of Q up to sign (random and structured)', () => {
    const cases: [string, number, number, Float64Array][] = [
      ['random 37 x 120', 37, 120, randomMatrix(37, 120, 10).data],
      ['random square 64', 64, 64, randomMatrix(64, 64, 11).data],
      [
        'banded 50 x 80',
        50,
        80,
        Float64Array.from({ length: 50 * 80 }, (_, k) => (Math.abs(Math.floor(k / 80) - (k % 80)) <= 2 ? 1 + ((k * 37) % 11) / 7 : 0)),
      ],
      // Rows already orthogonal and triangular: LAPACK skips reflections the TypeScript loop makes.
      ['identity rows 20 x 30', 20, 30, Float64Array.from({ length: 20 * 30 }, (_, k) => (Math.floor(k / 30) === k % 30 ? 2 : 0))],
    ];
    for (const [name, p, c, rows] of cases) {
      const { ts, nat } = both<ThinQr>(() => runSync(householderQrWork(selectedKernels(), rows, p, c)));
      for (let k = 0; k < p; k++) {
        expect(Math.abs(Math.abs(nat.r[k * p + k]) - Math.abs(ts.r[k * p + k])), name).toBeLessThan(1e-13 * maxAbs(ts.r));
        let dot = 0;
        for (let t = 0; t < c; t++) dot += nat.q[k * c + t] * ts.q[k * c + t];
        const sign = Math.sign(dot);
        expect(Math.abs(dot), name).toBeCloseTo(1, 12);
        for (let t = 0; t < c; t++) expect(Math.abs(nat.q[k * c + t] - sign * ts.q[k * c + t]), name).toBeLessThan(1e-13);
        for (let j = k; j < p; j++) expect(Math.abs(nat.r[k * p + j] - sign * ts.r[k * p + j]), name).toBeLessThan(1e-13 * maxAbs(ts.r));
      }
    }
  });

  it('LU solves agree (dense: native panels; sparse: the envelope code under both)', () => {
    for (const [n, density] of [
      [150, 1],
      [240, 0.02],
    ] as const) {
      const a = randomMatrix(n, n, 12 + n, density);
      for (let i = 0; i < n; i++) a.data[i * n + i] += 1;
      const b = new SeededRandom(13).fillSigned(new Float64Array(n));
      const { ts, nat } = both(() => {
        const f = luFactor(a);
        return { by: f.factoredBy, x: luSolve(f, b), y: luSolveTransposed(f, b) };
      });
      expect(ts.by).toBe('typescript');
      expect(nat.by).toBe(density === 1 ? 'native' : 'typescript');
      const scale = maxAbs(ts.x) + maxAbs(ts.y);
      expect(maxDifference(nat.x, ts.x)).toBeLessThan(1e-10 * scale);
      expect(maxDifference(nat.y, ts.y)).toBeLessThan(1e-10 * scale);
    }
  });

  it('X Y^T products agree entrywise', () => {
    for (const [rows, cols, len] of [
      [3, 5, 2000],
      [40, 33, 129],
      [64, 64, 64],
    ] as const) {
      const rng = new SeededRandom(rows * cols);
      const x = rng.fillSigned(new Float64Array(rows * len));
      const y = rng.fillSigned(new Float64Array(cols * len));
      const { ts, nat } = both(() => {
        const out = new Float64Array(rows * cols);
        multiplyByTransposeRows(selectedKernels(), x, y, len, 0, rows, cols, out, cols);
        return out;
      });
      expect(maxDifference(nat, ts)).toBeLessThan(1e-14 * Math.sqrt(len) * 4);
    }
  });

  it('Lanczos (reorthogonalization by dgemv) finds the same extreme eigenvalues', () => {
    const n = 150;
    const g = randomMatrix(n, n, 14).data;
    const spd = new Float64Array(n * n); // G^T G + I
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        let s = i === j ? 1 : 0;
        for (let t = 0; t < n; t++) s += g[t * n + i] * g[t * n + j];
        spd[i * n + j] = s;
      }
    const op = {
      size: n,
      apply: (x: Float64Array, y: Float64Array) => {
        for (let i = 0; i < n; i++) {
          let s = 0;
          for (let j = 0; j < n; j++) s += spd[i * n + j] * x[j];
          y[i] = s;
        }
      },
    };
    const { ts, nat } = both(() => lanczos(op, { which: 'both' }));
    expect(Math.abs(nat.largest - ts.largest) / ts.largest).toBeLessThan(1e-12);
    expect(Math.abs(nat.smallest - ts.smallest) / ts.smallest).toBeLessThan(1e-10);
  });

  it('singular values agree (random, wide, tall, graded triangular)', () => {
    const graded: DenseMatrix = { rows: 8, cols: 8, data: new Float64Array(64) };
    for (let i = 0; i < 8; i++) for (let j = i; j < 8; j++) graded.data[i * 8 + j] = 10 ** -(2 * i) * (1 + (i + j) / 10);
    for (const a of [randomMatrix(17, 40, 15), randomMatrix(90, 60, 16), randomMatrix(200, 200, 17), graded]) {
      const { ts, nat } = both(() => singularValues(a));
      expect(maxDifference(nat, ts)).toBeLessThan(1e-13 * ts[0]);
    }
  });

  it('Gram blocks, their operator, and the whole analysis agree (dense Gaussian mean 1, sparse partial supports)', () => {
    for (const [n, m, density] of [
      [240, 6, 1],
      [200, 5, 0.03],
    ] as const) {
      const system = gaussianSystem(n, m, 18 + n, { density, machineOfRow: interleaved });
      // Machines built under each backend (QR signs may differ): compare basis-independent values.
      const { ts, nat } = both(() => {
        const s = buildDistributedSystem({ n, A: system.A, b: system.b, xTrue: null, partition: system.partition });
        const gram = computeGramBlocks(s.machines);
        const blocks: Float64Array[] = [];
        for (let i = 0; i < m; i++)
          for (let j = i + 1; j < m; j++) {
            const g = gramBlock(gram, i, j);
            if (!g) continue;
            const mat = new Matrix(
              Array.from({ length: gram.sizes[i] }, (_, r) => Array.from(g.subarray(r * gram.sizes[j], (r + 1) * gram.sizes[j]))),
            );
            blocks.push(
              Float64Array.from(
                new SingularValueDecomposition(mat, { computeLeftSingularVectors: false, computeRightSingularVectors: false }).diagonal,
              ),
            );
          }
        return { blocks, analysis: analyze(s) };
      });
      expect(nat.blocks.length).toBe(ts.blocks.length);
      for (let k = 0; k < ts.blocks.length; k++) expect(maxDifference(nat.blocks[k], ts.blocks[k])).toBeLessThan(1e-13);
      // The operator x -> G x on the same blocks (dgemv per block natively).
      const gram = withBackend('typescript', () => computeGramBlocks(system.machines));
      const x = new SeededRandom(3).fillSigned(new Float64Array(gram.size));
      const gx = both(() => {
        const y = new Float64Array(gram.size);
        gramOperator(selectedKernels(), gram).apply(x, y);
        return y;
      });
      expect(maxDifference(gx.nat, gx.ts)).toBeLessThan(1e-13);
      expectSameAnalysis(nat.analysis, ts.analysis);
    }
  });

  it('keeps reporting progress through the cooperative loop', async () => {
    const system = gaussianSystem(300, 6, 19, { machineOfRow: interleaved });
    const phases = new Set<string>();
    useBackend('native');
    try {
      await runCooperatively(analyzeWork(system), {
        onProgress: (p: WorkProgress) => phases.add(p.phase),
        progressIntervalMs: 0,
        sliceMs: 0,
      });
    } finally {
      useBackend('auto');
    }
    expect([...phases]).toEqual(expect.arrayContaining(['conditioning', 'gram-blocks', 'principal-angles', 'local-angles']));
  });
});

function expectSameAnalysis(nat: Analysis, ts: Analysis): void {
  const rel = (x: number, y: number) => Math.abs(x - y) / Math.abs(y);
  const h = ts.heterogeneity;
  const c = ts.conditioning;
  // Condition numbers: each side knows lambda_min to ~kappa eps relative.
  expect(rel(nat.conditioning.kappaS, c.kappaS)).toBeLessThan(Math.max(1e-9, 8 * EPS * c.kappaS));
  expect(rel(nat.conditioning.kappaAtA, c.kappaAtA)).toBeLessThan(Math.max(1e-9, 16 * EPS * Math.sqrt(c.kappaAtA)));
  expect(rel(nat.conditioning.lambdaMaxS, c.lambdaMaxS)).toBeLessThan(1e-12);
  expect(Math.abs(nat.heterogeneity.thetaH - h.thetaH)).toBeLessThan(1e-12);
  for (let i = 0; i < ts.m; i++)
    for (let j = 0; j < ts.m; j++) expect(Math.abs(nat.heterogeneity.theta[i][j] - h.theta[i][j])).toBeLessThan(1e-12);
  expect(nat.heterogeneity.phi.map((p) => p === null)).toEqual(h.phi.map((p) => p === null));
  for (let i = 0; i < ts.m; i++)
    if (h.phi[i] !== null) expect(Math.abs((nat.heterogeneity.phi[i] as number) - (h.phi[i] as number))).toBeLessThan(1e-12);
  expect(rel(nat.heterogeneity.rowNormRatio, h.rowNormRatio)).toBeLessThan(1e-14);
  expect(rel(nat.bounds.theorem4KappaALowerBound!, ts.bounds.theorem4KappaALowerBound!)).toBeLessThan(1e-10);
  expect(nat.recommendation.exact.faster).toBe(ts.recommendation.exact.faster);
}
