import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/solvers/random.js';
import {
  KrylovWorkspace,
  largestEigenvalue,
  smallestEigenvalueByInverse,
  type SymmetricOperator,
} from '../../../src/solvers/eigen/lanczos.js';
import { spectralEstimateOf } from '../../../src/solvers/eigen/eigenvalueEstimate.js';
import type { DenseKernels } from '../../../src/solvers/linalg/denseKernels.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { symmetricEigen } from '../../../src/solvers/eigen/symmetricEigen.js';
import { TYPESCRIPT_DENSE_KERNELS } from '../../../src/solvers/linalg/typescriptDenseKernels.js';
import { useWasmKernels } from '../../../src/solvers/linalg/wasmRowKernels.js';
import { denseOperator } from '../../support/operators.js';

const EPS = Number.EPSILON;

function diagonalOperator(d: Float64Array): SymmetricOperator {
  return {
    size: d.length,
    apply(x, y) {
      for (let i = 0; i < d.length; i++) y[i] = d[i] * x[i];
    },
  };
}

/** B^T B + shift I for a random square B (dense, row-major), with its operator. */
function randomSpd(n: number, seed: number, shift: number): { a: Float64Array; op: SymmetricOperator } {
  const b = new SeededRandom(seed).fillSigned(new Float64Array(n * n));
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += b[k * n + i] * b[k * n + j];
      a[i * n + j] = s + (i === j ? shift : 0);
    }
  return {
    a,
    op: denseOperator(a, n),
  };
}

function referenceEigenvalues(a: Float64Array, n: number): number[] {
  const rows = Array.from({ length: n }, (_, i) => Array.from(a.subarray(i * n, (i + 1) * n)));
  return new EigenvalueDecomposition(new Matrix(rows), { assumeSymmetric: true }).realEigenvalues.sort((x, y) => x - y);
}

/** The error bound holds, up to the rounding of the reference (a few eps). */
function expectWithinBound(estimate: { value: number; relativeErrorBound: number }, exact: number, rounding = 16 * EPS): void {
  expect(Math.abs(estimate.value - exact)).toBeLessThanOrEqual((estimate.relativeErrorBound + rounding) * Math.abs(exact));
}

describe('symmetricEigen (tred2 + tql2)', () => {
  it("matches ml-matrix's eigenvalues, with orthonormal eigenvectors", () => {
    const n = 23;
    const { a } = randomSpd(n, 11, -3); // indefinite
    const work = Float64Array.from(a);
    const values = new Float64Array(n);
    const e = new Float64Array(n);
    symmetricEigen(work, n, values, e);
    const sorted = Array.from(values).sort((x, y) => x - y);
    const ref = referenceEigenvalues(a, n);
    const scale = Math.max(...ref.map(Math.abs));
    for (let i = 0; i < n; i++) expect(Math.abs(sorted[i] - ref[i])).toBeLessThan(1e-13 * scale);
    // A v_j = lambda_j v_j and V^T V = I.
    for (let j = 0; j < n; j++) {
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let k = 0; k < n; k++) s += a[i * n + k] * work[k * n + j];
        expect(Math.abs(s - values[j] * work[i * n + j])).toBeLessThan(1e-12 * scale);
      }
      for (let l = 0; l < n; l++) {
        let dot = 0;
        for (let k = 0; k < n; k++) dot += work[k * n + j] * work[k * n + l];
        expect(Math.abs(dot - (j === l ? 1 : 0))).toBeLessThan(1e-13);
      }
    }
  });

  it('gives the same eigenvalues and last row with lastRowOnly', () => {
    const n = 17;
    const { a } = randomSpd(n, 12, 0.5);
    const full = Float64Array.from(a);
    const last = Float64Array.from(a);
    const v1 = new Float64Array(n);
    const v2 = new Float64Array(n);
    const e = new Float64Array(n);
    symmetricEigen(full, n, v1, e);
    symmetricEigen(last, n, v2, e, true);
    for (let j = 0; j < n; j++) {
      expect(v2[j]).toBe(v1[j]);
      expect(last[(n - 1) * n + j]).toBe(full[(n - 1) * n + j]);
    }
  });
});

describe('largestEigenvalue (thick-restart Lanczos)', () => {
  it('finds lambda_max of random SPD matrices within its bound, with and without restarts', () => {
    for (const [n, seed, basisSize] of [
      [60, 1, 40],
      [150, 2, 40],
      [150, 3, 12],
    ] as const) {
      const { a, op } = randomSpd(n, seed, 1e-3);
      const exact = referenceEigenvalues(a, n)[n - 1];
      const r = largestEigenvalue(op, { basisSize });
      expect(r.converged).toBe(true);
      expect(r.method).toBe('lanczos');
      expect(r.relativeErrorBound).toBeLessThanOrEqual(1e-10);
      expectWithinBound(r, exact);
      if (basisSize === 12) expect(r.restarts).toBeGreaterThan(0);
    }
  });

  it('keeps its bound on a clustered top of the spectrum (restarted, many iterations)', () => {
    // lambda_k = 2 - (k / n)^2: gaps of 2.5e-5 relative at the top, far below the spread.
    const n = 200;
    const d = Float64Array.from({ length: n }, (_, i) => 2 - ((n - 1 - i) / n) ** 2);
    const r = largestEigenvalue(diagonalOperator(d), { tolerance: 1e-7 });
    expect(r.converged).toBe(true);
    expect(r.restarts).toBeGreaterThan(0);
    expect(r.relativeErrorBound).toBeLessThanOrEqual(1e-7);
    expectWithinBound(r, 2);
  });

  it('reports a bound that still holds when stopped early', () => {
    const n = 400;
    const d = Float64Array.from({ length: n }, (_, i) => 1 + i);
    const r = largestEigenvalue(diagonalOperator(d), { maxIterations: 10, basisSize: 8 });
    expect(r.converged).toBe(false);
    expect(r.iterations).toBe(10);
    expect(r.relativeErrorBound).toBeGreaterThan(1e-10);
    expectWithinBound(r, n);
  });

  it('stops as soon as abandonWhen holds of the top Ritz value (a lower bound, not converged), and is unchanged when it never does', () => {
    // lambda_k = 2 - (k / n)^2, as above: the top is reached slowly from below.
    const n = 200;
    const d = Float64Array.from({ length: n }, (_, i) => 2 - ((n - 1 - i) / n) ** 2);
    const full = largestEigenvalue(diagonalOperator(d), { tolerance: 1e-10 });
    expect(full.converged).toBe(true);
    const at = 2 - 1e-4;
    const stopped = largestEigenvalue(diagonalOperator(d), { tolerance: 1e-10, abandonWhen: (theta) => theta >= at });
    expect(stopped.converged).toBe(false);
    expect(stopped.abandoned).toBe(true);
    expect(full.abandoned).toBeUndefined();
    expect(stopped.value).toBeGreaterThanOrEqual(at);
    expect(stopped.value).toBeLessThanOrEqual(2 * (1 + 4 * EPS));
    expect(stopped.iterations).toBeLessThan(full.iterations);
    const never = largestEigenvalue(diagonalOperator(d), { tolerance: 1e-10, abandonWhen: () => false });
    expect(never).toEqual(full);
    expect(never.abandoned).toBeUndefined();
    // Through shift-invert and spectralEstimateOf the flag stays: 1 / value is the theta that met the test.
    const inverse = spectralEstimateOf(
      smallestEigenvalueByInverse(diagonalOperator(d), { tolerance: 1e-10, abandonWhen: (theta) => theta >= at }),
    );
    expect(inverse).toMatchObject({ converged: false, abandoned: true });
    expect(1 / inverse.value).toBeGreaterThanOrEqual(at);
  });

  it('is exact (method lanczos-exhaustive) when the Krylov space becomes invariant or spans everything', () => {
    const identity = largestEigenvalue({ size: 50, apply: (x, y) => y.set(x) });
    expect(identity.method).toBe('lanczos-exhaustive');
    expect(identity.iterations).toBe(1);
    expect(Math.abs(identity.value - 1)).toBeLessThan(4 * EPS);
    const small = largestEigenvalue(diagonalOperator(Float64Array.from([3, 1, 2, 5, 4])));
    expect(small.method).toBe('lanczos-exhaustive');
    expect(Math.abs(small.value - 5)).toBeLessThan(8 * EPS * 5);
    const single = largestEigenvalue({ size: 1, apply: (x, y) => (y[0] = 7 * x[0]) });
    expect(single.value).toBe(7);
  });

  it('finds a multiple top eigenvalue', () => {
    const d = Float64Array.from({ length: 300 }, (_, i) => (i >= 297 ? 10 : 1 + i / 300));
    const r = largestEigenvalue(diagonalOperator(d));
    expectWithinBound(r, 10);
  });

  it('returns the top Ritz vector when asked', () => {
    const n = 120;
    const d = Float64Array.from({ length: n }, (_, i) => (i === 37 ? 5 : 1 + i / n));
    const y = new Float64Array(n);
    largestEigenvalue(diagonalOperator(d), { ritzVector: y });
    let norm = 0;
    for (let i = 0; i < n; i++) norm += y[i] * y[i];
    expect(Math.abs(norm - 1)).toBeLessThan(1e-14);
    expect(Math.abs(Math.abs(y[37]) - 1)).toBeLessThan(1e-10);
  });

  it('stops on a caller test (convergedWhen) instead of the relative tolerance', () => {
    const n = 300;
    const d = Float64Array.from({ length: n }, (_, i) => 1 + i);
    const loose = largestEigenvalue(diagonalOperator(d), { convergedWhen: (_theta, residual) => residual < 1 });
    const tight = largestEigenvalue(diagonalOperator(d));
    expect(loose.residualNorm).toBeLessThan(1);
    expect(loose.iterations).toBeLessThan(tight.iterations);
    // The gap estimate theta_1 - theta_2 - rho_2 is reported for such tests: below the exact gap 1.
    expect(tight.gap).toBeGreaterThan(0);
    expect(tight.gap).toBeLessThanOrEqual(1 + 1e-9);
  });

  it('on the TypeScript kernels, a basis past 65,536 entries lives in WebAssembly memory and gives the loops’ answer', () => {
    // lambda_max = 1.05 above a spectrum spread over [0, 1): the basis of 16 restarts several times.
    const n = 20_000;
    const d = Float64Array.from({ length: n }, (_, i) => (i === n - 1 ? 1.05 : i / n));
    const workspace = new KrylovWorkspace();
    const options = { basisSize: 16, tolerance: 1e-12, dense: TYPESCRIPT_DENSE_KERNELS };
    const inMemory = largestEigenvalue(diagonalOperator(d), options, workspace);
    expect(workspace.basis.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(workspace.w.buffer).toBe(workspace.basis.buffer);
    expect(inMemory.converged).toBe(true);
    expect(inMemory.restarts).toBeGreaterThan(0);
    expect(Math.abs(inMemory.value - 1.05)).toBeLessThanOrEqual(inMemory.relativeErrorBound * 1.05);
    expect(inMemory.relativeErrorBound).toBeLessThanOrEqual(1e-12);
    useWasmKernels(false);
    try {
      const plain = new KrylovWorkspace();
      const loops = largestEigenvalue(diagonalOperator(d), options, plain);
      expect(plain.basis.buffer).toBeInstanceOf(ArrayBuffer);
      expect(Math.abs(loops.value - inMemory.value)).toBeLessThanOrEqual(1e-12 * 1.05);
    } finally {
      useWasmKernels(true);
    }
  });

  it('is deterministic and reuses one workspace across calls of different sizes', () => {
    const workspace = new KrylovWorkspace();
    const big = randomSpd(80, 4, 1);
    const small = randomSpd(30, 5, 1);
    const first = largestEigenvalue(big.op, {}, workspace);
    const basis = workspace.basis;
    largestEigenvalue(small.op, {}, workspace);
    expect(workspace.basis).toBe(basis);
    expect(largestEigenvalue(big.op, {}, workspace)).toEqual(first);
    expect(largestEigenvalue(big.op)).toEqual(first);
  });
});

/** `dense` with its projectOut calls counted, and (`never`) its second pass refused whenever a step may skip it. */
function countingKernels(dense: DenseKernels, never = false) {
  const counts = { passes: 0, skipped: 0, rows: 0 };
  const kernels: DenseKernels = {
    ...dense,
    projectOut(basis, n, count, w, h, skipBelow = 0) {
      counts.passes++;
      counts.rows += count;
      // `never`: the skip threshold taken as infinite (no reorthogonalization inside a cycle); 0 still means "project".
      const combined = dense.projectOut(basis, n, count, w, h, never && skipBelow > 0 ? Infinity : skipBelow);
      if (!combined) counts.skipped++;
      return combined;
    },
  };
  return { kernels, counts };
}

describe('largestEigenvalue on a semi-orthogonal basis (large operators)', () => {
  // lambda_i = ((i + 1) / n)^4: the top 1, the next 2e-4 below it, the rest spread down to 0.
  const n = 20_000;
  const d = Float64Array.from({ length: n }, (_, i) => ((i + 1) / n) ** 4);

  it('skips most second passes and most of the first, converges in about the products of the orthogonal basis, and keeps its bound', () => {
    const full = countingKernels(selectedKernels().dense);
    const semi = countingKernels(selectedKernels().dense);
    const orthogonal = largestEigenvalue(diagonalOperator(d), { dense: full.kernels, semiOrthogonalFrom: Infinity });
    // The same cycle as the orthogonal default (40 vectors, 10 kept), so that the passes compare.
    const semiOrthogonal = largestEigenvalue(diagonalOperator(d), { dense: semi.kernels, semiOrthogonalFrom: 0, basisSize: 40 });
    expect(full.counts.skipped).toBe(0);
    for (const r of [orthogonal, semiOrthogonal]) {
      expect(r.converged).toBe(true);
      expect(r.restarts).toBeGreaterThan(0);
      expect(r.relativeErrorBound).toBeLessThanOrEqual(1e-10);
      expectWithinBound(r, 1);
    }
    expect(semi.counts.skipped).toBeGreaterThan(semi.counts.passes / 2);
    // Between restarts most steps measure against the kept Ritz vectors only.
    expect(semi.counts.rows).toBeLessThan(0.7 * full.counts.rows);
    // The verification's product, and no more than a few per cent besides.
    expect(semiOrthogonal.iterations).toBeLessThanOrEqual(1.1 * orthogonal.iterations + 1);
    // The default keeps the orthogonal basis below SEMI_ORTHOGONAL_MIN_SIZE: the same run, bit for bit.
    expect(largestEigenvalue(diagonalOperator(d), { dense: selectedKernels().dense })).toEqual(orthogonal);
  });

  it('takes a longer cycle by default (80 vectors, 10 kept): fewer restarts and products, the same bound', () => {
    const cycle40 = largestEigenvalue(diagonalOperator(d), { semiOrthogonalFrom: 0, basisSize: 40 });
    const byDefault = largestEigenvalue(diagonalOperator(d), { semiOrthogonalFrom: 0 });
    for (const r of [cycle40, byDefault]) {
      expect(r.converged).toBe(true);
      expect(r.relativeErrorBound).toBeLessThanOrEqual(1e-10);
      expectWithinBound(r, 1);
    }
    expect(byDefault.restarts).toBeLessThan(cycle40.restarts / 2);
    expect(byDefault.iterations).toBeLessThan(cycle40.iterations);
    expect(byDefault).toEqual(largestEigenvalue(diagonalOperator(d), { semiOrthogonalFrom: 0, basisSize: 80, kept: 10 }));
  });

  it('keeps the 40-vector cycle for shift-invert, which converges in a few steps (its basis allocated at once)', () => {
    const big = 60_000;
    const inverse = diagonalOperator(Float64Array.from({ length: big }, (_, i) => 1 / (1 + i)));
    const workspace = new KrylovWorkspace();
    const r = smallestEigenvalueByInverse(inverse, {}, workspace);
    expect(r.converged).toBe(true);
    expectWithinBound(r, 1);
    expect(workspace.basis.length).toBeLessThanOrEqual(41 * big);
  });

  it('decides an invariant Krylov space by the explicit end (the identity: converged, exact)', () => {
    const identity = largestEigenvalue({ size: n, apply: (x, y) => y.set(x) }, { semiOrthogonalFrom: 0 });
    expect(identity.converged).toBe(true);
    expect(Math.abs(identity.value - 1)).toBeLessThan(4 * EPS);
    expect(identity.relativeErrorBound).toBeLessThan(1e-14);
  });

  it('reports a bound that holds even when the basis loses orthogonality altogether (the verification)', () => {
    // No reorthogonalization inside a cycle: Lanczos' ghost copies of the top and residuals
    // beta_k |s_k| that no longer belong to a unit vector. Whatever it accepts was verified explicitly.
    for (const tolerance of [1e-8, 1e-12]) {
      const never = countingKernels(TYPESCRIPT_DENSE_KERNELS, true);
      const r = largestEigenvalue(diagonalOperator(d), { dense: never.kernels, semiOrthogonalFrom: 0, tolerance, maxIterations: 4000 });
      expect(never.counts.skipped).toBeGreaterThan(0);
      expectWithinBound(r, 1);
      if (r.converged) expect(r.relativeErrorBound).toBeLessThanOrEqual(tolerance);
      else expect(r.relativeErrorBound).toBeGreaterThan(tolerance);
    }
  });
});

describe('smallestEigenvalueByInverse (shift-invert at 0)', () => {
  it('gives lambda_min from the inverse operator, with the same relative bound', () => {
    // lambda_k = 10^(-8 + 8 k / (n - 1)): kappa = 1e8; the inverse has a well separated top.
    const n = 500;
    const d = Float64Array.from({ length: n }, (_, i) => 10 ** (-8 + (8 * i) / (n - 1)));
    const inverse = diagonalOperator(d.map((v) => 1 / v));
    const r = smallestEigenvalueByInverse(inverse);
    expect(r.method).toBe('lanczos-shift-invert');
    expect(r.converged).toBe(true);
    expectWithinBound(r, 1e-8);
    // Lanczos on the operator itself knows lambda_min only to ~eps lambda_max: 1e-8 relative here.
  });
});
