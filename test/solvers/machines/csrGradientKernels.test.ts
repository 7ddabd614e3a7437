/**
 * The fused CSR gradient kernels (src/solvers/linalg/csrKernels.ts): the native addon's and the
 * WebAssembly one give the TypeScript loop's term and |A x - b|^2 to the bit on every chunk of the
 * shared matrices; DGD, D-NAG and D-HBM give the same iterates to the bit over 100 iterations on
 * every kernel set, in both layouts of the pass (one chunk below parallelMinWork(), row chunks on
 * two threads above it), and the two layouts agree to 1e-12; the gradient equals A^T (A x - b)
 * computed here independently (supports gathered, read in place, or whole). The analysis' products
 * with A^T A on the calling thread (the same pass with b = 0) are normalOperatorOfSparse's to the bit on
 * both backends. The addon refuses a malformed chunk or vector.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { algorithms } from '../../../src/solvers/algorithms/registry.js';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import type { CsrSystem } from '../../../src/solvers/distributed/sparseSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { parseMatrixMarket } from '../../../src/solvers/input/matrixMarket.js';
import { activeBackend, nativeCsr, useBackend } from '../../../src/solvers/linalg/backend.js';
import { nativeCsrGradient, typescriptCsrGradient, type CsrRows } from '../../../src/solvers/linalg/csrKernels.js';
import { attachArena, useWasmKernels, WasmArena, wasmKernelsEnabled } from '../../../src/solvers/linalg/wasmRowKernels.js';
import { GradientPass, gradientRowChunks, singleCsrChunk } from '../../../src/solvers/machines/gradientPass.js';
import { currentThreadNormalOperator, fleetPlacement } from '../../../src/solvers/machines/placement.js';
import { csrRowRange } from '../../../src/solvers/machines/storage.js';
import { DEFAULT_PARALLEL_MIN_WORK, setParallelMinWork, setSolverThreads } from '../../../src/solvers/parallel/threads.js';
import { csrFromDense, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { convectionDiffusion2d, poisson2d } from '../../../src/solvers/sparse/generators.js';
import { normalOperatorOfSparse } from '../../../src/solvers/sparse/normalOperators.js';
import { KERNEL_SETS, kernelSetSkipReason } from '../../support/backends.js';
import { matrixMarket } from '../../support/fixtures.js';
import { normProductBound } from '../../support/csrNorms.js';

interface Case {
  readonly label: string;
  readonly system: CsrSystem;
}

function caseOf(label: string, A: CsrMatrix, machines: number): Case {
  const n = A.rows;
  const b = Float64Array.from({ length: n }, (_, i) => Math.sin(0.7 * i) + 0.25);
  return { label, system: buildDistributedSystem(createProblem({ A, rhs: b, partition: { machines } })) };
}

const cases: Case[] = [
  ...['sherman5.mtx', 'fs1831.mtx', '1138_bus.mtx', 'gr_30_30.mtx'].map((file) =>
    caseOf(`${file}, m = 10`, csrFromDense(parseMatrixMarket(matrixMarket(file))), 10),
  ),
  // Strips of banded matrices: every chunk's support is a range of consecutive columns (x read in place).
  caseOf('Poisson 30 x 30, m = 6', poisson2d(30), 6),
  caseOf('convection-diffusion 40 x 40, m = 8', convectionDiffusion2d(40, 50), 8),
];

/** Step sizes from |A|_1 |A|_inf >= lambda_max(A^T A) keep every gradient method stable. */
function spectralOf(a: CsrMatrix, m: number): SpectralData {
  const L = normProductBound(a);
  return { m, lambdaMinS: 1e-3, lambdaMaxS: 2, mu: L / 1e3, L };
}

/** A^T (A x - b) and |A x - b|^2, straight from the definition, and sum |a_kj| |x_j|-style scales of its rounding. */
function referenceGradient(a: CsrMatrix, b: Float64Array, x: Float64Array): { g: Float64Array; r2: number; scale: Float64Array } {
  const g = new Float64Array(a.cols);
  const scale = new Float64Array(a.cols);
  let r2 = 0;
  for (let i = 0; i < a.rows; i++) {
    let s = -b[i];
    let abs = Math.abs(b[i]);
    for (let e = a.rowPtr[i]; e < a.rowPtr[i + 1]; e++) {
      s += a.values[e] * x[a.colIdx[e]];
      abs += Math.abs(a.values[e] * x[a.colIdx[e]]);
    }
    r2 += s * s;
    for (let e = a.rowPtr[i]; e < a.rowPtr[i + 1]; e++) {
      g[a.colIdx[e]] += s * a.values[e];
      scale[a.colIdx[e]] += abs * Math.abs(a.values[e]);
    }
  }
  return { g, r2, scale };
}

function withMinWork<T>(entries: number, body: () => T): T {
  const previous = setParallelMinWork(entries);
  try {
    return body();
  } finally {
    setParallelMinWork(previous);
  }
}

describe('fused CSR gradient kernels on one chunk', () => {
  const chunksOf = (system: CsrSystem): CsrRows[] =>
    system.machines.flatMap((machine) => [csrRowRange(machine, 0, machine.p), csrRowRange(machine, 0, Math.ceil(machine.p / 2))]);

  for (const { label, system } of cases) {
    it(`${label}: the addon's and the WebAssembly kernel give the TypeScript loop's term and residual to the bit`, () => {
      const x = Float64Array.from({ length: system.n }, (_, j) => Math.cos(0.3 * j) - 0.1);
      const csr = nativeCsr();
      for (const chunk of chunksOf(system)) {
        const xs = Float64Array.from({ length: chunk.c }, (_, t) => x[(t * 7) % system.n]);
        const expected = new Float64Array(chunk.c + 3).fill(Number.NaN);
        const r2 = typescriptCsrGradient(chunk).run(xs, 0, expected, 2);
        expect(Number.isFinite(r2)).toBe(true);
        if (csr !== null) {
          const term = new Float64Array(chunk.c + 3).fill(Number.NaN);
          expect(nativeCsrGradient(csr, chunk).run(xs, 0, term, 2)).toBe(r2);
          expect(Array.from(term)).toEqual(Array.from(expected));
        }
        if (wasmKernelsEnabled()) {
          const arena = WasmArena.forSpec(chunk, 8 * (2 * chunk.c + 3) + 32, 1, chunk.c);
          expect(arena).not.toBeNull();
          const inArena = arena!.copyInto(chunk) as CsrRows;
          const kernels = attachArena(arena!.layout, 0);
          const arenaX = arena!.allocate(Float64Array, 8, chunk.c);
          arenaX.set(xs);
          const arenaTerm = arena!.allocate(Float64Array, 8, chunk.c + 3).fill(Number.NaN);
          const kernel = kernels.csrGradient(inArena);
          expect(kernel.run(arenaX, 0, arenaTerm, 2)).toBe(r2);
          expect(Array.from(arenaTerm)).toEqual(Array.from(expected));
          // Vectors outside the arena go through the thread's slot: same result.
          const staged = new Float64Array(chunk.c + 3).fill(Number.NaN);
          expect(kernel.run(xs, 0, staged, 2)).toBe(r2);
          expect(Array.from(staged)).toEqual(Array.from(expected));
        }
      }
    });
  }

  it("the analysis' products with A^T A (currentThreadNormalOperator) are normalOperatorOfSparse's to the bit on each backend, and overwrite their output", () => {
    for (const A of [convectionDiffusion2d(30, 50), csrFromDense(parseMatrixMarket(matrixMarket('sherman5.mtx')))]) {
      const x = Float64Array.from({ length: A.cols }, (_, j) => Math.cos(0.3 * j) - 0.1);
      const expected = new Float64Array(A.cols);
      normalOperatorOfSparse(A).apply(x, expected);
      // Independent of the kernels: the same vector within rounding of A^T (A x).
      const { g, scale } = referenceGradient(A, new Float64Array(A.rows), x);
      for (let j = 0; j < A.cols; j++) expect(Math.abs(expected[j] - g[j])).toBeLessThanOrEqual(1e-14 * scale[j]);
      for (const set of KERNEL_SETS) {
        if (kernelSetSkipReason(set) !== '') continue;
        const previous = activeBackend();
        const previousWasm = wasmKernelsEnabled();
        useBackend(set.backend);
        useWasmKernels(set.wasm);
        try {
          const op = currentThreadNormalOperator(A);
          expect(op.size).toBe(A.cols);
          const y = new Float64Array(A.cols).fill(Number.NaN);
          op.apply(x, y);
          expect(Array.from(y), set.label).toEqual(Array.from(expected));
          op.apply(x, y);
          expect(Array.from(y), `${set.label}, applied again`).toEqual(Array.from(expected));
        } finally {
          useBackend(previous);
          useWasmKernels(previousWasm);
        }
      }
    }
  });

  it.skipIf(nativeCsr() === null)('the addon refuses a malformed chunk and vectors too short for it', () => {
    const csr = nativeCsr()!;
    const rowPtr = Int32Array.from([0, 2, 3]);
    const values = Float64Array.from([1, 2, 3]);
    const b = Float64Array.from([1, 1]);
    expect(() => csr.csrRows(2, 3, rowPtr, Int32Array.from([0, 3, 1]), values, b)).toThrow(/column index is out of range/);
    expect(() => csr.csrRows(2, 3, Int32Array.from([0, 2, 1]), Int32Array.from([0, 2, 1]), values, b)).toThrow(/rowPtr decreases/);
    expect(() => csr.csrRows(2, 3, Int32Array.from([0, 2, 4]), Int32Array.from([0, 2, 1]), values, b)).toThrow(/runs past/);
    const handle = csr.csrRows(2, 3, rowPtr, Int32Array.from([0, 2, 1]), values, b);
    expect(() => csr.csrFusedGradient(handle, new Float64Array(3), 1, new Float64Array(3), 0)).toThrow(/x is shorter/);
    expect(() => csr.csrFusedGradient(handle, new Float64Array(3), 0, new Float64Array(2), 0)).toThrow(/term is shorter/);
    const term = new Float64Array(3);
    // rows (1, 0, 2) and (0, 3, 0) at x = 1: residuals 2 and 2, term = A^T r = (2, 6, 4).
    expect(csr.csrFusedGradient(handle, Float64Array.from([1, 1, 1]), 0, term, 0)).toBe(8);
    expect(Array.from(term)).toEqual([2, 6, 4]);
  });
});

describe('the gradient pass on CSR storage', () => {
  let previousBackend: ReturnType<typeof activeBackend>;
  let previousWasm: boolean;
  beforeAll(() => {
    previousBackend = activeBackend();
    previousWasm = wasmKernelsEnabled();
    setSolverThreads(2);
  });
  afterAll(() => {
    useBackend(previousBackend);
    useWasmKernels(previousWasm);
    setSolverThreads('auto');
  });

  it('puts the CSR chunks of the gradient pass in a WebAssembly arena on the TypeScript backend, not the projection machines', () => {
    const { system } = cases[0];
    useBackend('typescript');
    useWasmKernels(true);
    const machine = system.machines[0];
    expect(fleetPlacement([csrRowRange(machine, 0, machine.p)])).toEqual({ backend: 'typescript', arena: true });
    expect(
      fleetPlacement([{ ...csrRowRange(machine, 0, machine.p), gram: { symbolic: machine.gram.symbolic, values: machine.gram.values } }])
        .arena,
    ).toBe(false);
    useWasmKernels(false);
    expect(fleetPlacement([csrRowRange(machine, 0, machine.p)]).arena).toBe(false);
  });

  it("builds a chunk from its machine's rows without copying their values, in shared memory for threads outside an arena", () => {
    const { system } = cases[cases.length - 1];
    const machine = system.machines[1];
    const from = 1;
    const to = machine.p - 1;
    const plain = csrRowRange(machine, from, to);
    const shared = csrRowRange(machine, from, to, true);
    for (const key of ['rowPtr', 'colIdx', 'b'] as const) {
      expect(plain[key].buffer instanceof SharedArrayBuffer, key).toBe(false);
      expect(shared[key].buffer, key).toBeInstanceOf(SharedArrayBuffer);
      expect(Array.from(shared[key]), key).toEqual(Array.from(plain[key]));
    }
    expect(Array.from(shared.cols)).toEqual(Array.from(plain.cols));
    // The values are A_i's own, a view of its rows [from, to).
    expect(shared.values.buffer).toBe(machine.a.values.buffer);
    expect(Array.from(shared.values)).toEqual(Array.from(machine.a.values.subarray(machine.a.rowPtr[from], machine.a.rowPtr[to])));
  });

  for (const { label, system } of cases.slice(-2)) {
    it(`${label}: row chunks on strips sum their terms as g.fill(0) then g[cols[t]] += term, to the bit`, () => {
      withMinWork(0, () => {
        const pass = new GradientPass(system, { rule: 'dgd', alpha: 1, beta: 0 });
        try {
          const x = Float64Array.from({ length: system.n }, (_, j) => Math.cos(0.3 * j) - 0.1);
          pass.x.set(x);
          pass.evaluate();
          const expected = new Float64Array(system.n);
          const { ranges } = gradientRowChunks(system);
          expect(ranges.length).toBeGreaterThan(1);
          for (const { machine, from, to } of ranges) {
            const chunk = csrRowRange(system.machines[machine], from, to);
            const term = new Float64Array(chunk.c);
            typescriptCsrGradient(chunk).run(
              Float64Array.from(chunk.cols, (j) => x[j]),
              0,
              term,
              0,
            );
            for (let t = 0; t < chunk.c; t++) expected[chunk.cols[t]] += term[t];
          }
          expect(Array.from(pass.gradient())).toEqual(Array.from(expected));
        } finally {
          pass.dispose();
        }
      });
    });
  }

  for (const { label, system } of cases) {
    it(`${label}: g(x) is A^T (A x - b) in both layouts`, () => {
      for (const minWork of [DEFAULT_PARALLEL_MIN_WORK, 0]) {
        withMinWork(minWork, () => {
          expect(singleCsrChunk(system)).toBe(minWork > 0);
          const pass = new GradientPass(system, { rule: 'dgd', alpha: 1, beta: 0 });
          try {
            pass.x.set(Float64Array.from({ length: system.n }, (_, j) => Math.cos(0.3 * j) - 0.1));
            const r2 = pass.evaluate();
            const reference = referenceGradient(system.A, system.b, pass.x);
            expect(Math.abs(r2 - reference.r2)).toBeLessThanOrEqual(1e-13 * reference.r2);
            const g = pass.gradient();
            for (let j = 0; j < system.n; j++) expect(Math.abs(g[j] - reference.g[j])).toBeLessThanOrEqual(1e-14 * reference.scale[j]);
          } finally {
            pass.dispose();
          }
        });
      }
    });
  }

  for (const { label, system } of cases) {
    it(`${label}: DGD, D-NAG and D-HBM take the plain TypeScript loop's iterates to the bit on every kernel set, 100 iterations`, () => {
      const spectral = spectralOf(system.A, system.m);
      const layouts: Record<string, Record<string, Float64Array[]>> = {};
      for (const minWork of [DEFAULT_PARALLEL_MIN_WORK, 0]) {
        const runs: Record<string, Float64Array[]> = {};
        for (const set of KERNEL_SETS) {
          if (kernelSetSkipReason(set) !== '') continue;
          useBackend(set.backend);
          useWasmKernels(set.wasm);
          runs[set.label] = withMinWork(minWork, () =>
            (['dgd', 'dnag', 'dhbm'] as const).map((id) => {
              const method = algorithms[id].create(system, algorithms[id].optimal(spectral).parameters);
              try {
                expect(method.threads).toBe(minWork > 0 ? 1 : 2);
                for (let k = 0; k < 100; k++) method.step();
                expect(Number.isFinite(method.residualNormSquared())).toBe(true);
                return Float64Array.from(method.estimate);
              } finally {
                method.dispose?.();
              }
            }),
          );
        }
        const plain = runs['typescript backend, plain loops'];
        for (const [set, estimates] of Object.entries(runs))
          estimates.forEach((x, id) => expect(Array.from(x), `${set}, method ${id}`).toEqual(Array.from(plain[id])));
        layouts[String(minWork)] = runs;
      }
      // The two layouts sum the machines' terms in other orders: the same iterates to rounding.
      const single = layouts[String(DEFAULT_PARALLEL_MIN_WORK)]['typescript backend, plain loops'];
      const chunked = layouts['0']['typescript backend, plain loops'];
      single.forEach((x, id) => {
        let d = 0;
        let s = 0;
        for (let j = 0; j < x.length; j++) {
          d += (x[j] - chunked[id][j]) ** 2;
          s += x[j] ** 2;
        }
        expect(Math.sqrt(d / s), `method ${id}`).toBeLessThan(1e-12);
      });
    });
  }
});
