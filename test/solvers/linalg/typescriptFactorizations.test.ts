/**
 * The TypeScript kernels' factorizations on odd sizes (around and across the block widths), checked
 * by their defining identities: P A = L U, Q^T Q = I, Q R = A^T, and the envelope data of the LU
 * against its factors. The blocked LU and the envelope LU are independent code with the same
 * pivoting rule: on the same matrix they pick the same pivots.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../../src/solvers/cooperative.js';
import type { LuFactors } from '../../../src/solvers/linalg/denseKernels.js';
import {
  bidiagonalizeLoopWork,
  envelopeLuWork,
  luWork,
  thinQrWork,
  triangularFactorWork,
} from '../../../src/solvers/linalg/typescriptFactorizations.js';
import { TYPESCRIPT_DENSE_KERNELS } from '../../../src/solvers/linalg/typescriptDenseKernels.js';
import { wasmBidiagonalizeWork } from '../../../src/solvers/linalg/wasmDenseKernels.js';
import { useWasmKernels, wasmKernelsEnabled, wasmKernelsUnavailableReason } from '../../../src/solvers/linalg/wasmRowKernels.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { randomMatrix } from '../../support/systems.js';

const EPS = Number.EPSILON;
const gemm = TYPESCRIPT_DENSE_KERNELS;

function frobenius(x: ArrayLike<number>): number {
  let s = 0;
  for (let k = 0; k < x.length; k++) s += x[k] * x[k];
  return Math.sqrt(s);
}

type Factors = Omit<LuFactors, 'solvesWith'>;

function factor(a: Float64Array, n: number): Factors {
  return runSync(luWork(a.slice(), n, gemm));
}

/** |P A - L U|_F / |A|_F. */
function luResidual(a: Float64Array, f: Factors): number {
  const { n, lu, perm } = f;
  const r = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let t = 0; t <= Math.min(i, j); t++) s += (t === i ? 1 : lu[i * n + t]) * lu[t * n + j];
      r[i * n + j] = a[perm[i] * n + j] - s;
    }
  return frobenius(r) / frobenius(a);
}

/** What the solves skip is zero: L before lowerStart, U from upperEnd on. */
function expectEnvelopesHold(f: Factors): void {
  const { n, lu, lowerStart, upperEnd } = f;
  for (let i = 0; i < n; i++) {
    expect(lowerStart[i]).toBeLessThanOrEqual(i);
    expect(upperEnd[i]).toBeGreaterThan(i);
    for (let j = 0; j < lowerStart[i]; j++) expect(lu[i * n + j]).toBe(0);
    for (let j = upperEnd[i]; j < n; j++) expect(lu[i * n + j]).toBe(0);
  }
}

function banded(n: number, width: number, seed: number): Float64Array {
  const rng = new SeededRandom(seed);
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = Math.max(0, i - width); j <= Math.min(n - 1, i + width); j++) a[i * n + j] = 2 * rng.nextDouble() - 1;
  return a;
}

// The blocked LU runs with the WebAssembly kernels on (its gemm is theirs), the envelope LU on the plain loops.
describe.each(
  [
    { wasm: true, path: 'blocked' },
    { wasm: false, path: 'envelope' },
  ].filter((set) => !set.wasm || wasmKernelsUnavailableReason() === ''),
)('LU of the TypeScript kernels ($path path for dense matrices)', ({ wasm }) => {
  let before = true;
  beforeAll(() => {
    before = wasmKernelsEnabled();
    useWasmKernels(wasm);
  });
  afterAll(() => {
    useWasmKernels(before);
  });

  for (const n of [1, 2, 31, 33, 64, 65, 129, 200, 520]) {
    it(`P A = L U to O(n eps) on a dense ${n} x ${n} matrix, with the envelope LU's pivots`, () => {
      const a = randomMatrix(n, n, 100 + n).data;
      const f = factor(a, n);
      expect(f.zeroPivotColumn).toBe(-1);
      expect(luResidual(a, f)).toBeLessThan(4 * n * EPS);
      expectEnvelopesHold(f);
      const reference = runSync(envelopeLuWork(a.slice(), n));
      expect(Array.from(f.perm)).toEqual(Array.from(reference.perm));
      let scale = 0;
      for (const v of reference.lu) scale = Math.max(scale, Math.abs(v));
      for (let k = 0; k < n * n; k++) expect(Math.abs(f.lu[k] - reference.lu[k])).toBeLessThan(1e-10 * scale);
    });
  }

  for (const zero of [40, 100]) {
    it(`reports the first exactly zero pivot (column ${zero} of 200 zero) and still factors P A = L U`, () => {
      const n = 200;
      const a = randomMatrix(n, n, 7).data;
      for (let i = 0; i < n; i++) a[i * n + zero] = 0;
      const f = factor(a, n);
      expect(f.zeroPivotColumn).toBe(zero);
      expect(luResidual(a, f)).toBeLessThan(4 * n * EPS);
      expectEnvelopesHold(f);
    });
  }

  it('finds the rows of a row-shuffled singular upper triangular matrix and its zero pivot (column 77)', () => {
    // Every multiplier is exactly 0, so the factorization is exact; up to the zero row P undoes the shuffle.
    const n = 96;
    const rng = new SeededRandom(9);
    const triangle = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = i; j < n; j++) triangle[i * n + j] = 1 + rng.nextDouble();
    for (let j = 77; j < n; j++) triangle[77 * n + j] = 0;
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const k = Math.floor(rng.nextDouble() * (i + 1));
      [order[i], order[k]] = [order[k], order[i]];
    }
    const a = new Float64Array(n * n);
    for (let i = 0; i < n; i++) a.set(triangle.subarray(order[i] * n, order[i] * n + n), i * n);
    const f = factor(a, n);
    expect(f.zeroPivotColumn).toBe(77);
    expect(luResidual(a, f)).toBe(0);
    for (let i = 0; i < 77; i++) expect(order[f.perm[i]]).toBe(i);
    expectEnvelopesHold(f);
  });

  for (const [n, width] of [
    [300, 1],
    [200, 10],
    [150, 40],
  ] as const) {
    it(`factors a band (n = ${n}, half-bandwidth ${width}) with envelopes no wider than partial pivoting makes them`, () => {
      const a = banded(n, width, n + width);
      const f = factor(a, n);
      expect(luResidual(a, f)).toBeLessThan(4 * n * EPS);
      expectEnvelopesHold(f);
      // Row interchanges widen U's band to at most twice the half-bandwidth.
      for (let i = 0; i < n; i++) expect(f.upperEnd[i]).toBeLessThanOrEqual(Math.min(n, i + 2 * width + 1));
    });
  }

  it('factors a sparse matrix with a dense envelope (5 % nonzero, nonsingular diagonal)', () => {
    const n = 160;
    const a = randomMatrix(n, n, 3, 0.05).data;
    for (let i = 0; i < n; i++) a[i * n + i] += 1;
    const f = factor(a, n);
    expect(f.zeroPivotColumn).toBe(-1);
    expect(luResidual(a, f)).toBeLessThan(4 * n * EPS);
    expectEnvelopesHold(f);
  });
});

describe('Householder QR of the TypeScript kernels', () => {
  const shapes: [number, number][] = [
    [1, 1],
    [1, 7],
    [2, 2],
    [31, 40],
    [33, 33],
    [64, 100],
    [65, 65],
    [97, 130],
    [200, 300],
  ];
  for (const [p, c] of shapes) {
    for (const deficient of [false, true]) {
      if (deficient && p < 8) continue;
      it(`Q^T Q = I and Q R = A^T for A ${p} x ${c}${deficient ? ', rank deficient' : ''}`, () => {
        const a = randomMatrix(p, c, p * 1000 + c).data;
        if (deficient) {
          // Two equal rows and a zero row: R has exact zero rows where the reflector had nothing to do.
          a.copyWithin(6 * c, 2 * c, 3 * c);
          a.fill(0, 4 * c, 5 * c);
        }
        const { q, r } = runSync(thinQrWork(a.slice(), p, c, gemm));
        const gram = new Float64Array(p * p);
        TYPESCRIPT_DENSE_KERNELS.multiplyByTransposeRows(q, q, c, 0, p, p, gram, p);
        for (let i = 0; i < p; i++) gram[i * p + i] -= 1;
        expect(frobenius(gram)).toBeLessThan(4 * Math.sqrt(p) * c * EPS);
        // A^T = Q R, row j of A = sum_k R[k, j] (row k of q).
        const product = new Float64Array(p * c);
        for (let j = 0; j < p; j++)
          for (let k = 0; k <= j; k++) {
            const rkj = r[k * p + j];
            for (let i = 0; i < c; i++) product[j * c + i] += rkj * q[k * c + i];
          }
        for (let k = 0; k < product.length; k++) product[k] -= a[k];
        expect(frobenius(product)).toBeLessThan(4 * c * EPS * frobenius(a));
        for (let i = 0; i < p; i++) for (let j = 0; j < i; j++) expect(r[i * p + j]).toBe(0);
        // The R-only factorization is the same computation.
        expect(Array.from(runSync(triangularFactorWork(a.slice(), p, c, gemm)))).toEqual(Array.from(r));
      });
    }
  }
});

describe.skipIf(wasmKernelsUnavailableReason() !== '')('bidiagonalization with WebAssembly passes', () => {
  for (const q of [1, 3, 17, 64, 257]) {
    it(`gives the loops' d and e for a ${q} x ${q} matrix (and a rank-deficient one), leaving it unchanged`, () => {
      for (const deficient of [false, true]) {
        const b = randomMatrix(q, q, 7 * q + 1).data;
        if (deficient && q > 4) {
          // A zero column and two equal rows: reflectors with nothing to do on both sides.
          for (let i = 0; i < q; i++) b[i * q + 2] = 0;
          b.copyWithin(3 * q, q, 2 * q);
        }
        const copy = b.slice();
        const wasm = runSync(wasmBidiagonalizeWork(b, q))!;
        expect(Array.from(b)).toEqual(Array.from(copy));
        const loops = runSync(bidiagonalizeLoopWork(b, q));
        const tolerance = 8 * q * EPS * frobenius(copy);
        for (let k = 0; k < q; k++) expect(Math.abs(wasm.d[k] - loops.d[k]), `d[${k}]`).toBeLessThan(tolerance);
        for (let k = 0; k + 1 < q; k++) expect(Math.abs(wasm.e[k] - loops.e[k]), `e[${k}]`).toBeLessThan(tolerance);
      }
    });
  }
});
