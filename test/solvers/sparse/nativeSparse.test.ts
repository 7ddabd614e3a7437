/**
 * The native backend's sparse part (CHOLMOD in the addon, src/solvers/machines/nativeGram.ts)
 * against the TypeScript sparse path:
 *  - a CHOLMOD factor of a machine's Gram matrix is a valid CholeskyFactor (its own ordering, the
 *    pattern analyzed for it, solves to the accuracy of the TypeScript factor's); the addon's solves
 *    with either half of a factor are the TypeScript sweeps' to the bit;
 *  - APC, MLM and Cimmino on CSR storage: the same iterates to 1e-10 relative over 100 iterations on
 *    both backends, on real matrices (test/reference/matrices) and the grid generators;
 *  - the analysis of a sparse system: the same values on both backends within the fixture tolerances;
 *  - rank-deficient machine rows: the same SingularMatrixError naming the machine on both;
 *  - CHOLMOD leaves nothing allocated however many factorizations run; malformed factors are refused;
 *  - UMFPACK's LU of A (the analysis' shift-invert solves on the native backend): solutions as SciPy's
 *    splu's on the reference matrices, the same SingularMatrixError as the TypeScript LU, chosen by
 *    placement on the native backend only; the addon's solves with an LU are the TypeScript ones to
 *    the bit, and refuse a malformed factor.
 * Skipped, with the reason printed, only when the addon lacks its sparse part and CI is unset; under
 * CI a missing sparse part fails.
 */
import { describe, expect, it } from 'vitest';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import type { Analysis } from '../../../src/solvers/analysis/types.js';
import { ALGORITHM_IDS, algorithms, type AlgorithmId } from '../../../src/solvers/algorithms/registry.js';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import type { CsrSystem } from '../../../src/solvers/distributed/sparseSystem.js';
import { SingularMatrixError } from '../../../src/solvers/errors.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { parseMatrixMarket } from '../../../src/solvers/input/matrixMarket.js';
import {
  nativeArpack,
  nativeBlas,
  nativeParts,
  nativeSparse,
  nativeUnavailableReason,
  type BackendName,
} from '../../../src/solvers/linalg/backend.js';
import { kernelsOf } from '../../../src/solvers/linalg/kernels.js';
import { normalOperatorOfSparse } from '../../../src/solvers/sparse/normalOperators.js';
import { largestEigenvalue } from '../../../src/solvers/eigen/lanczos.js';
import { csrFromDense, selectRows, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { convectionDiffusion2d, poisson2d } from '../../../src/solvers/sparse/generators.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import { factorCholesky, solveCholesky, solveLower, solveUpper, type CholeskyFactor } from '../../../src/solvers/sparse/sparseCholesky.js';
import { factorGramNative, NativeGramSolver } from '../../../src/solvers/machines/nativeGram.js';
import { gramBlockWorkLength, nativeGramBlockSolver, typescriptGramBlockSolver } from '../../../src/solvers/linalg/blockKernels.js';
import { factorLuNative } from '../../../src/solvers/machines/nativeLu.js';
import { currentThreadLuSolves, currentThreadSparseLuWork } from '../../../src/solvers/machines/placement.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { transpose } from '../../../src/solvers/sparse/csr.js';
import { factorNonzeros, sparseLu, sparseLuSolve, sparseLuSolveTransposed } from '../../../src/solvers/sparse/sparseLu.js';
import { withBackend } from '../../support/backends.js';
import { thrown } from '../../support/thrown.js';
import { expectLuAsSplu, loadSpectraReference, shiftedDiagonal } from './spectraSupport.js';
import { matrixMarket } from '../../support/fixtures.js';

const sparse = nativeSparse();
const skipReason =
  sparse !== null
    ? ''
    : nativeBlas() === null
      ? `the addon is not loaded (${nativeUnavailableReason()})`
      : 'the addon was built without its sparse part (CHOLMOD: libsuitesparse-dev missing at install)';
const skipped = sparse === null && !process.env.CI;
if (skipped) console.warn(`[tests] native sparse path SKIPPED: ${skipReason}`);

const PROJECTION_METHODS: readonly AlgorithmId[] = ['apc', 'mlm', 'cimmino'];

function relativeDifference(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let d = 0;
  let s = 0;
  for (let j = 0; j < y.length; j++) {
    d += (x[j] - y[j]) ** 2;
    s += y[j] ** 2;
  }
  return Math.sqrt(d / Math.max(s, Number.MIN_VALUE));
}

/** y = G x for CSR G. */
function multiply(g: CsrMatrix, x: Float64Array): Float64Array {
  const y = new Float64Array(g.rows);
  for (let i = 0; i < g.rows; i++) for (let e = g.rowPtr[i]; e < g.rowPtr[i + 1]; e++) y[i] += g.values[e] * x[g.colIdx[e]];
  return y;
}

const csrOf = (file: string): CsrMatrix => csrFromDense(parseMatrixMarket(matrixMarket(file)));

interface Case {
  readonly label: string;
  readonly A: CsrMatrix;
  readonly machines: number;
}

const CASES: readonly Case[] = [
  { label: 'sherman5 (n = 3312), 4 machines (supernodal factors)', A: csrOf('sherman5.mtx'), machines: 4 },
  { label: 'fs1831 (n = 183, kappa 2e13), 4 machines', A: csrOf('fs1831.mtx'), machines: 4 },
  { label: '1138_bus (n = 1138), 6 machines', A: csrOf('1138_bus.mtx'), machines: 6 },
  { label: 'poisson2d k = 40 (n = 1600), 10 machines', A: poisson2d(40), machines: 10 },
  { label: 'convectionDiffusion2d k = 40, Peclet 50 (nonsymmetric), 8 machines', A: convectionDiffusion2d(40, 50), machines: 8 },
];

function systemOn(backend: BackendName, A: CsrMatrix, machines: number): CsrSystem {
  const system = withBackend(backend, () => buildDistributedSystem(createProblem({ A, partition: { machines } })));
  if (system.storage !== 'csr') throw new Error('expected a CSR system');
  return system;
}

describe('the addon reports its parts', () => {
  it.skipIf(!process.env.CI)('under CI the native sparse part is present', () => {
    expect(skipReason).toBe('');
    expect(nativeParts()).toEqual({ dense: true, sparse: true, arpack: true, metis: true, spqr: true });
  });
  it('nativeParts agrees with nativeSparse', () => {
    expect(nativeParts().sparse).toBe(sparse !== null);
    if (sparse !== null) expect(sparse.sparseConfig()).toMatch(/^CHOLMOD \d+\.\d+\.\d+/);
  });
});

describe.skipIf(skipped)(`native sparse path (CHOLMOD)${skipped ? ` [SKIPPED: ${skipReason}]` : ''}`, () => {
  it('factors each machine Gram matrix into a valid factor: the same solutions as the TypeScript factor', () => {
    for (const { label, A, machines } of CASES) {
      const system = systemOn('typescript', A, machines);
      for (const machine of system.machines) {
        const g = gramMatrix(selectRows(A, machine.rows));
        const native: CholeskyFactor = factorGramNative(sparse!, g);
        const typescript = factorCholesky(g);
        expect(native.symbolic.n, label).toBe(g.rows);
        const xTrue = Float64Array.from({ length: g.rows }, (_, k) => Math.sin(k + 1));
        const rhs = multiply(g, xTrue);
        const fromNative = solveCholesky(native, rhs, new Float64Array(g.rows));
        const fromTypescript = solveCholesky(typescript, rhs, new Float64Array(g.rows));
        // Both solve G x = rhs to the accuracy its conditioning allows: the native residual is no worse than 10x the TypeScript one.
        const residual = (x: Float64Array): number => relativeDifference(multiply(g, x), rhs);
        expect(residual(fromNative), `${label}, machine ${machine.index}`).toBeLessThanOrEqual(
          Math.max(10 * residual(fromTypescript), 1e-14),
        );
        // Supernodal amalgamation's explicit zeros are gone: L has exactly the fill of its ordering.
        expect(native.values.length).toBe(native.symbolic.nnzL);
      }
    }
  });

  it('solves with each half of a factor, B^{-1} b = L^{-1} P b and B^{-T} y = P^T L^{-T} y, as the TypeScript sweeps do, to the bit', () => {
    for (const { label, A, machines } of CASES) {
      const system = systemOn('native', A, machines);
      for (const machine of system.machines) {
        const factor = machine.gram;
        const p = factor.symbolic.n;
        const native = new NativeGramSolver(sparse!, factor);
        const b = Float64Array.from({ length: p }, (_, k) => Math.cos(3 * k + 1));
        const y = new Float64Array(p);
        native.solveLower(b, y);
        expect(y, `${label}, machine ${machine.index}: B^{-1} b`).toEqual(solveLower(factor, b, new Float64Array(p)));
        const x = new Float64Array(p);
        native.solveUpper(y, x);
        expect(x, `${label}, machine ${machine.index}: B^{-T} y`).toEqual(solveUpper(factor, y, new Float64Array(p)));
        // The halves compose to the full solve (B^{-T} B^{-1} = G^{-1}), in place as well.
        const full = new Float64Array(p);
        native.solve(b, full);
        expect(x).toEqual(full);
        const inPlace = Float64Array.from(b);
        native.solveLower(inPlace, inPlace);
        native.solveUpper(inPlace, inPlace);
        expect(inPlace).toEqual(full);
      }
    }
  });

  it('solves a block of w right-hand sides (choleskySolveBlock) as solveCholesky does each column, to the bit, and so does the TypeScript block solve', () => {
    for (const { label, A, machines } of CASES) {
      const system = systemOn('native', A, machines);
      for (const machine of system.machines.slice(0, 2)) {
        const factor = machine.gram;
        const { n, colPtr, rowIdx, ordering } = factor.symbolic;
        const blockFactor = { n, colPtr, rowIdx, values: factor.values, perm: ordering.perm };
        const native = nativeGramBlockSolver(sparse, blockFactor)!;
        for (const w of [1, 2, 5]) {
          const b0 = Float64Array.from({ length: n * w }, (_, k) => Math.cos(3 * k + 1));
          const expected = new Float64Array(n * w);
          for (let c = 0; c < w; c++) {
            const column = Float64Array.from({ length: n }, (_, k) => b0[k * w + c]);
            solveCholesky(factor, column, column);
            for (let k = 0; k < n; k++) expected[k * w + c] = column[k];
          }
          const b = Float64Array.from(b0);
          native.solve(b, w);
          expect(b, `${label}, machine ${machine.index}, w = ${w}: native`).toEqual(expected);
          const plain = Float64Array.from(b0);
          typescriptGramBlockSolver(blockFactor, new Float64Array(gramBlockWorkLength(n, w))).solve(plain, w);
          expect(plain, `${label}, machine ${machine.index}, w = ${w}: TypeScript`).toEqual(expected);
        }
      }
    }
  });

  for (const { label, A, machines } of CASES) {
    it(`${label}: APC, MLM and Cimmino take the same iterates on both backends over 100 iterations`, () => {
      const onTypescript = systemOn('typescript', A, machines);
      const onNative = systemOn('native', A, machines);
      // The native system's factors are CHOLMOD's: another ordering, or the same one with other rounding.
      const fromCholmod = onNative.machines.some((machine, i) => {
        const other = onTypescript.machines[i].gram;
        return (
          machine.gram.symbolic.ordering.perm.some((v, k) => v !== other.symbolic.ordering.perm[k]) ||
          machine.gram.values.some((v, q) => v !== other.values[q])
        );
      });
      expect(fromCholmod, label).toBe(true);
      const spectral: SpectralData = { m: machines, lambdaMinS: machines / 1e4, lambdaMaxS: machines, mu: 1, L: 2 };
      for (const id of PROJECTION_METHODS) {
        expect(ALGORITHM_IDS).toContain(id);
        const parameters = algorithms[id].optimal(spectral).parameters;
        const reference = withBackend('typescript', () => algorithms[id].create(onTypescript, parameters));
        const native = withBackend('native', () => algorithms[id].create(onNative, parameters));
        try {
          let worst = 0;
          for (let k = 0; k <= 100; k++) {
            if (k > 0) {
              withBackend('typescript', () => reference.step());
              withBackend('native', () => native.step());
            }
            worst = Math.max(worst, relativeDifference(native.estimate, reference.estimate));
          }
          expect(worst, `${label}, ${id}`).toBeLessThanOrEqual(1e-10);
          // The iterates moved: not a comparison of two zero vectors.
          expect(Math.max(...Array.from(reference.estimate, Math.abs)), id).toBeGreaterThan(1e-3);
        } finally {
          reference.dispose?.();
          native.dispose?.();
        }
      }
    });
  }

  it('the analysis of a sparse system has the same values on both backends', () => {
    const relative = (a: number, b: number): number => Math.abs(a - b) / Math.max(Math.abs(b), Number.MIN_VALUE);
    for (const { label, A, machines } of [CASES[0], CASES[3], CASES[4]]) {
      const results = (['typescript', 'native'] as const).map((backend): Analysis =>
        withBackend(backend, () => analyze(systemOn(backend, A, machines))),
      );
      const [reference, native] = results;
      const c = reference.conditioning;
      const d = native.conditioning;
      for (const key of ['kappaS', 'lambdaMinS', 'lambdaMaxS', 'kappaAtA', 'L', 'mu'] as const) {
        expect(relative(d[key], c[key]), `${label}: ${key}`).toBeLessThanOrEqual(1e-6);
      }
      expect(Math.abs(native.heterogeneity.thetaH - reference.heterogeneity.thetaH), label).toBeLessThanOrEqual(1e-9);
      // The pair attaining theta_H: mirror-image pairs (a grid's first and last strips) tie up to rounding, either may come first.
      const pair = native.heterogeneity.thetaHPair;
      expect(pair, label).not.toBeNull();
      if (pair !== null) {
        const [i, j] = pair;
        expect(reference.heterogeneity.theta[i][j] - reference.heterogeneity.thetaH, label).toBeLessThanOrEqual(1e-9);
      }
      for (const id of ALGORITHM_IDS)
        expect(Math.abs(native.rates[id].rate - reference.rates[id].rate), `${label}: ${id}`).toBeLessThanOrEqual(1e-6);
      expect(native.recommendation.algorithm, label).toBe(reference.recommendation.algorithm);
    }
  });

  it('refuses a machine whose rows are dependent with the same typed error on both backends', () => {
    // Rows 1 and 2 are equal, on machine 1 together.
    const A = csrFromDense({ rows: 4, cols: 4, data: Float64Array.from([4, 1, 0, 0, 1, 2, 0, 0, 1, 2, 0, 0, 0, 0, 1, 3]) });
    for (const backend of ['typescript', 'native'] as const) {
      let thrown: unknown = null;
      try {
        withBackend(backend, () => buildDistributedSystem(createProblem({ A, partition: { assignment: [0, 1, 1, 0] } })));
      } catch (error) {
        thrown = error;
      }
      expect(thrown, backend).toBeInstanceOf(SingularMatrixError);
      const details = (thrown as SingularMatrixError).details;
      expect(details, backend).toMatchObject({ machine: 1 });
      expect([1, 2], backend).toContain(details.row);
      expect(Number(details.relativePivot), backend).toBeLessThan(1e-12);
    }
  });

  it('refuses nearly dependent rows (a tiny positive pivot CHOLMOD itself accepts) like the TypeScript factorization', () => {
    // Row 2 = row 1 + 1e-10 e_3: G is positive definite in exact arithmetic, its relative pivot ~1e-20 is rounding.
    const A = csrFromDense({ rows: 3, cols: 3, data: Float64Array.from([1, 0, 0, 0, 1, 1, 0, 1, 1 + 1e-10]) });
    for (const backend of ['typescript', 'native'] as const) {
      expect(() => withBackend(backend, () => buildDistributedSystem(createProblem({ A, partition: { machines: 1 } }))), backend).toThrow(
        SingularMatrixError,
      );
    }
  });

  it('leaves no CHOLMOD object allocated over thousands of factorizations', () => {
    const before = sparse!.sparseLiveBlocks();
    const g = gramMatrix(
      selectRows(
        poisson2d(12),
        Int32Array.from({ length: 60 }, (_, k) => 2 * k),
      ),
    );
    let checksum = 0;
    for (let round = 0; round < 3000; round++) checksum += factorGramNative(sparse!, g).values[0];
    expect(checksum).toBeGreaterThan(0);
    expect(sparse!.sparseLiveBlocks()).toBe(before);
    expect(before).toBe(0);
  });

  it('refuses malformed input with a RangeError instead of reading outside the arrays', () => {
    const s = sparse!;
    const ok = { colPtr: Int32Array.from([0, 2, 3]), rowIdx: Int32Array.from([0, 1, 1]), values: Float64Array.from([2, 1, 3]) };
    const handle = s.choleskySolver(2, ok.colPtr, ok.rowIdx, ok.values, Int32Array.from([1, 0]));
    const x = new Float64Array(2);
    s.choleskySolve(handle, Float64Array.from([1, 1]), 0, x, 0);
    // G = P^T L L^T P with L = [[2, 0], [1, 3]], P swapping the two: check G x = b.
    const l = [
      [2, 0],
      [1, 3],
    ];
    const z = [x[1], x[0]];
    const lt = [l[0][0] * z[0] + l[1][0] * z[1], l[1][1] * z[1]];
    const gz = [l[0][0] * lt[0], l[1][0] * lt[0] + l[1][1] * lt[1]];
    expect(gz[1]).toBeCloseTo(1, 14);
    expect(gz[0]).toBeCloseTo(1, 14);
    expect(() => s.choleskySolve(handle, new Float64Array(1), 0, x, 0)).toThrow(RangeError);
    expect(() => s.choleskySolveLower(handle, Float64Array.from([1, 1]), 1, x, 0)).toThrow(RangeError);
    expect(() => s.choleskySolveUpper(handle, Float64Array.from([1, 1]), 0, x, 1)).toThrow(RangeError);
    expect(() => s.choleskySolveLower({} as typeof handle, Float64Array.from([1, 1]), 0, x, 0)).toThrow(TypeError);
    expect(() => s.choleskySolver(2, ok.colPtr, Int32Array.from([0, 5, 1]), ok.values, Int32Array.from([0, 1]))).toThrow(RangeError);
    expect(() => s.choleskySolver(2, ok.colPtr, ok.rowIdx, ok.values, Int32Array.from([0, 0]))).toThrow(RangeError);
    expect(() => s.choleskySolver(2, Int32Array.from([0, 2, 9]), ok.rowIdx, ok.values, Int32Array.from([0, 1]))).toThrow(RangeError);
    expect(() => s.cholmodFactor(2, Int32Array.from([0, 1, 2]), Int32Array.from([0, 7]), Float64Array.from([1, 1]))).toThrow(RangeError);
    // Released at once (a factor made for a few solves): later solves are refused, a second release does nothing.
    s.choleskyRelease(handle);
    s.choleskyRelease(handle);
    expect(() => s.choleskySolve(handle, Float64Array.from([1, 1]), 0, x, 0)).toThrow(/released/);
    expect(() => s.choleskySolveLower(handle, Float64Array.from([1, 1]), 0, x, 0)).toThrow(/released/);
    expect(() => s.choleskySolveBlock?.(handle, Float64Array.from([1, 1]), 1)).toThrow(/released/);
    expect(() => s.choleskyRelease({} as typeof handle)).toThrow(TypeError);
  });
});

describe.skipIf(skipped)(`native sparse LU (UMFPACK)${skipped ? ` [SKIPPED: ${skipReason}]` : ''}`, () => {
  const reference = loadSpectraReference();
  for (const ref of reference.lu) {
    it(`${ref.name} (n = ${ref.n}): solutions and residuals as SciPy's splu`, () => {
      expectLuAsSplu(reference, ref, (a) => factorLuNative(sparse!, a));
    });
  }

  for (const ref of reference.lu) {
    it(`${ref.name}: the analysis' LU on the native backend (CHOLMOD when symmetric positive definite) as SciPy's splu`, () => {
      expectLuAsSplu(reference, ref, (a) => withBackend('native', () => runSync(currentThreadSparseLuWork(a))));
    });
  }

  it("takes CHOLMOD's Cholesky for a symmetric positive definite A, UMFPACK for an indefinite one, as the TypeScript LU does", () => {
    const a = poisson2d(30);
    const f = withBackend('native', () => runSync(currentThreadSparseLuWork(a)));
    expect(f.ordering).toBe('cholesky');
    expect(sparseLu(a).ordering).toBe('cholesky');
    // The same fill as UMFPACK's symmetric strategy or less (CHOLMOD's own ordering), the diagonal pivots.
    expect(factorNonzeros(f)).toBeLessThanOrEqual(1.2 * factorNonzeros(factorLuNative(sparse!, a)));
    for (let i = 0; i < a.rows; i++) expect(f.columnOrder[f.rowPivot[i]]).toBe(i);
    const shifted = shiftedDiagonal(a, 3.9);
    const g = withBackend('native', () => runSync(currentThreadSparseLuWork(shifted)));
    expect(g.ordering).not.toBe('cholesky');
    expect(g).toEqual(factorLuNative(sparse!, shifted));
    expect(sparseLu(shifted).ordering).toBe('symmetric');
  });

  it('is the analysis LU on the native backend only (placement), the TypeScript LU otherwise', () => {
    const a = convectionDiffusion2d(30, 50);
    expect(withBackend('native', () => runSync(currentThreadSparseLuWork(a)))).toEqual(factorLuNative(sparse!, a));
    expect(withBackend('typescript', () => runSync(currentThreadSparseLuWork(a)))).toEqual(sparseLu(a));
  });

  it("solves with an LU (UMFPACK's or the TypeScript one) as sparseLuSolve and sparseLuSolveTransposed do, to the bit, on either backend", () => {
    for (const a of [convectionDiffusion2d(30, 50), csrFromDense(parseMatrixMarket(matrixMarket('sherman5.mtx')))]) {
      const b = Float64Array.from({ length: a.rows }, (_, i) => Math.sin(0.37 * i) + 0.1);
      for (const f of [factorLuNative(sparse!, a), sparseLu(a)]) {
        const work = new Float64Array(a.rows);
        const expected = new Float64Array(a.rows);
        const expectedT = new Float64Array(a.rows);
        sparseLuSolve(f, b, expected, work);
        sparseLuSolveTransposed(f, b, expectedT, work);
        // Independent of the solves: A x = b and A^T x = b to rounding.
        const residual = (x: Float64Array, transposed: boolean): number => {
          const r = Float64Array.from(b, (v) => -v);
          for (let i = 0; i < a.rows; i++)
            for (let e = a.rowPtr[i]; e < a.rowPtr[i + 1]; e++) {
              if (transposed) r[a.colIdx[e]] += a.values[e] * x[i];
              else r[i] += a.values[e] * x[a.colIdx[e]];
            }
          return Math.sqrt(r.reduce((s, v) => s + v * v, 0) / b.reduce((s, v) => s + v * v, 0));
        };
        expect(residual(expected, false)).toBeLessThan(1e-9);
        expect(residual(expectedT, true)).toBeLessThan(1e-9);
        const native = withBackend('native', () => currentThreadLuSolves(f));
        const x = new Float64Array(a.rows).fill(Number.NaN);
        native.solve(b, x);
        expect(Array.from(x)).toEqual(Array.from(expected));
        native.solveTransposed(b, x);
        expect(Array.from(x)).toEqual(Array.from(expectedT));
        // In place (b and x the same array).
        const inPlace = Float64Array.from(b);
        native.solve(inPlace, inPlace);
        expect(Array.from(inPlace)).toEqual(Array.from(expected));
        const typescript = withBackend('typescript', () => currentThreadLuSolves(f));
        typescript.solveTransposed(b, x);
        expect(Array.from(x)).toEqual(Array.from(expectedT));
      }
    }
  });

  it("refuses a malformed LU factor for the addon's solves, and vectors shorter than n", () => {
    const f = factorLuNative(sparse!, poisson2d(4));
    const args = (change: Partial<typeof f>) => {
      const g = { ...f, ...change };
      return () => sparse!.luSolver(g.n, g.lColPtr, g.lRowIdx, g.lValues, g.uColPtr, g.uRowIdx, g.uValues, g.rowPivot, g.columnOrder);
    };
    expect(args({})).not.toThrow();
    const notPermutation = Int32Array.from(f.rowPivot);
    notPermutation[0] = notPermutation[1];
    expect(args({ rowPivot: notPermutation })).toThrow(/not a permutation/);
    const badL = Int32Array.from(f.lRowIdx);
    badL[f.lColPtr[3]] = 5;
    expect(args({ lRowIdx: badL })).toThrow(/L does not start with its diagonal/);
    const badU = Int32Array.from(f.uRowIdx);
    badU[f.uColPtr[6] - 1] = 2;
    expect(args({ uRowIdx: badU })).toThrow(/U does not end with its diagonal/);
    expect(args({ lValues: f.lValues.subarray(0, 3) })).toThrow(/run past/);
    const handle = args({})();
    expect(() => sparse!.luSolve(handle, new Float64Array(15), new Float64Array(16), false)).toThrow(/shorter than n/);
  });

  it('raises the TypeScript LU SingularMatrixError for structurally and numerically singular matrices', () => {
    const dense = (rows: number[][]): CsrMatrix =>
      csrFromDense({ rows: rows.length, cols: rows[0].length, data: Float64Array.from(rows.flat()) });
    const structural = dense([
      [1, 0, 2],
      [3, 0, 4],
      [5, 0, 6],
    ]);
    // Column 2 = column 0 + column 1 up to rounding: the last pivot is noise.
    const numerical = dense([
      [0.1, 0.7, 0.8, 0],
      [0.3, 0.2, 0.5, 1],
      [0.9, 0.4, 1.3, 2],
      [0.6, 0.3, 0.9, 5],
    ]);
    for (const a of [structural, numerical]) {
      expect(thrown(() => sparseLu(a))).toBeInstanceOf(SingularMatrixError);
      expect(thrown(() => factorLuNative(sparse!, a))).toBeInstanceOf(SingularMatrixError);
    }
  });

  it('refuses malformed input with a RangeError instead of reading outside the arrays', () => {
    const a = transpose(poisson2d(4));
    const badIndex = Int32Array.from(a.colIdx);
    badIndex[3] = 99;
    expect(() => sparse!.umfpackLu(16, a.rowPtr, badIndex, a.values)).toThrow(RangeError);
    expect(() => sparse!.umfpackLu(16, a.rowPtr.subarray(0, 10), a.colIdx, a.values)).toThrow(RangeError);
    expect(() => sparse!.umfpackLu(16, a.rowPtr, a.colIdx, a.values.subarray(0, 5))).toThrow(RangeError);
    // A column with its row indices out of order: UMFPACK's own check, reported as a RangeError.
    const unsorted = Int32Array.from(a.colIdx);
    [unsorted[0], unsorted[1]] = [unsorted[1], unsorted[0]];
    expect(() => sparse!.umfpackLu(16, a.rowPtr, unsorted, a.values)).toThrow(/UMFPACK found the matrix invalid/);
  });
});

const arpack = nativeArpack();
const arpackSkipReason =
  arpack !== null
    ? ''
    : nativeBlas() === null
      ? `the addon is not loaded (${nativeUnavailableReason()})`
      : 'the addon was built without ARPACK (libarpack2-dev missing at install)';
const arpackSkipped = arpack === null && !process.env.CI;
if (arpackSkipped) console.warn(`[tests] native ARPACK SKIPPED: ${arpackSkipReason}`);

describe.skipIf(arpackSkipped)(`native spectra (ARPACK)${arpackSkipped ? ` [SKIPPED: ${arpackSkipReason}]` : ''}`, () => {
  // A^T A of a nonsymmetric convection-diffusion matrix, n = 3600: well above the Lanczos basis, so ARPACK takes it.
  const op = normalOperatorOfSparse(convectionDiffusion2d(60, 50));
  const reference = withBackend('typescript', () => largestEigenvalue(op, { tolerance: 1e-13 }));

  it("lambda_max on the native backend comes from the kernels' largeEigensolver; ARPACK, given, is within its reported bound of the TypeScript Lanczos value", () => {
    expect(arpack).not.toBeNull();
    const chosen = withBackend('native', () => largestEigenvalue(op, { tolerance: 1e-9 }));
    const byArpack = withBackend('native', () => largestEigenvalue(op, { tolerance: 1e-9, arpack }));
    const byThickRestart = withBackend('native', () => largestEigenvalue(op, { tolerance: 1e-9, arpack: null }));
    expect(chosen).toEqual(kernelsOf('native').largeEigensolver === 'arpack' ? byArpack : byThickRestart);
    // Another method: not the thick restart's result (which ARPACK falls back to while busy, below).
    expect(byArpack).not.toEqual(byThickRestart);
    // ARPACK computes the top Ritz pair only: no second Ritz value, no gap (the thick restart reports one).
    expect(Number.isNaN(byArpack.gap)).toBe(true);
    expect(Number.isFinite(byThickRestart.gap)).toBe(true);
    for (const estimate of [byArpack, byThickRestart]) {
      expect(estimate.converged).toBe(true);
      expect(estimate.method).toBe('lanczos');
      expect(estimate.relativeErrorBound).toBeLessThanOrEqual(1e-9);
      // The bound holds against a value known to 1e-13, and the Rayleigh quotient is below lambda_max (to rounding).
      expect(Math.abs(estimate.value - reference.value) / reference.value).toBeLessThanOrEqual(estimate.relativeErrorBound);
      expect(estimate.value).toBeLessThanOrEqual(reference.value * (1 + 1e-14));
    }
  });

  it('a second ARPACK run while one is in progress falls back to the thick restart (ARPACK state is process-wide)', () => {
    const a = arpack!;
    const held = a.arpackStart(op.size, 1, 20, 1e-8, 10, new Float64Array(op.size).fill(1));
    expect(held).not.toBeNull();
    try {
      expect(a.arpackStart(op.size, 1, 20, 1e-8, 10, new Float64Array(op.size).fill(1))).toBeNull();
      const meanwhile = withBackend('native', () => largestEigenvalue(op, { tolerance: 1e-9, arpack: a }));
      expect(meanwhile).toEqual(withBackend('native', () => largestEigenvalue(op, { tolerance: 1e-9, arpack: null })));
      expect(Math.abs(meanwhile.value - reference.value) / reference.value).toBeLessThanOrEqual(meanwhile.relativeErrorBound);
    } finally {
      a.arpackRelease(held!);
    }
    const again = a.arpackStart(op.size, 1, 20, 1e-8, 10, new Float64Array(op.size).fill(1));
    expect(again).not.toBeNull();
    a.arpackRelease(again!);
  });

  it('refuses arguments ARPACK cannot take with a RangeError', () => {
    const a = arpack!;
    expect(() => a.arpackStart(10, 5, 5, 1e-8, 10, new Float64Array(10))).toThrow(RangeError);
    expect(() => a.arpackStart(10, 1, 11, 1e-8, 10, new Float64Array(10))).toThrow(RangeError);
    expect(() => a.arpackStart(10, 1, 5, 1e-8, 10, new Float64Array(3))).toThrow(RangeError);
  });
});
