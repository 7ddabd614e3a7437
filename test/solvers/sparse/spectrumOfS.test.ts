/**
 * The principal angles of CSR machines and their column slots (../../../src/solvers/sparse/spectrumOfS.ts), against
 *  - every case of the heterogeneity fixtures (NumPy, dense; fixtures README tolerances): 1e-9 absolute
 *    on the angles (1e-12 in the tiny-angle case);
 *  - the SciPy ARPACK values of test/reference/sparse/spectra.json on larger matrices (n up to 10^4): 1e-9.
 * Each angle's reported bound must hold up to 1e-11 rad (the rounding of the Cholesky-based bases on
 * these cases). S's spectrum on the same cases is ../analysis/sparseKappaS.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { DimensionMismatchError } from '../../../src/solvers/errors.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { csrFromDense, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import {
  machineColumnSlots,
  overlappingMachinePairs,
  overlapTwoColouring,
  pairsByDimensionCount,
  PairAngleContext,
  sparsePairAngle,
  type GramFactorSolves,
  type SparsePairAngle,
} from '../../../src/solvers/sparse/spectrumOfS.js';
import { loadFixtures } from '../../support/fixtures.js';
import { thrown } from '../../support/thrown.js';
import {
  contiguousPartition,
  csrFixture,
  denseCholeskySolves,
  loadSpectraReference,
  namedMatrix,
  sparseCholeskySolves,
} from './spectraSupport.js';
import { INTERSECTING_MACHINE_ROWS } from './support.js';

const ANGLE_ROUNDING = 1e-11;
/** Lanczos on C^T C alone: neither the coupling route nor the shift-invert one. */
const PLAIN = { joint: false, coupling: false };

function expectAngle(angle: SparsePairAngle, exact: number, tolerance: number): void {
  const difference = Math.abs(angle.theta - exact);
  expect(difference).toBeLessThanOrEqual(tolerance);
  expect(difference).toBeLessThanOrEqual(angle.absoluteErrorBound + ANGLE_ROUNDING);
}

/** Every pair's angle, theta_H and its pair. */
function allAngles(a: CsrMatrix, rows: Int32Array[], solves: GramFactorSolves) {
  const slots = machineColumnSlots(a, rows);
  const context = new PairAngleContext(slots, solves);
  const m = rows.length;
  const theta: SparsePairAngle[][] = Array.from({ length: m }, () => []);
  let thetaH = Math.PI / 2;
  let pair: [number, number] | null = null;
  for (let i = 0; i < m; i++)
    for (let j = i + 1; j < m; j++) {
      const angle = sparsePairAngle(context, i, j);
      theta[i][j] = angle;
      if (pair === null || angle.theta < thetaH) {
        thetaH = angle.theta;
        pair = [i, j];
      }
    }
  return { theta, thetaH, pair };
}

/**
 * Every pair of every fixture by a route (the solves' `routes`) beside plain Lanczos on C^T C: converged and within
 * both bounds of it; then `check` with the two angles, the fixture's name and the pair's row lists.
 */
function eachFixturePairBesidePlain(
  routes: { joint?: boolean; coupling?: boolean },
  check: (route: SparsePairAngle, plain: SparsePairAngle, name: string, rows: [Int32Array, Int32Array]) => void,
): void {
  for (const f of loadFixtures()) {
    const { a, rows } = csrFixture(f);
    const routed = allAngles(a, rows, sparseCholeskySolves(a, rows, routes));
    const plain = allAngles(a, rows, sparseCholeskySolves(a, rows, PLAIN));
    for (let i = 0; i < f.expected.m; i++)
      for (let j = i + 1; j < f.expected.m; j++) {
        const r = routed.theta[i][j];
        const p = plain.theta[i][j];
        expect(r.converged).toBe(true);
        expect(Math.abs(r.theta - p.theta)).toBeLessThanOrEqual(r.absoluteErrorBound + p.absoluteErrorBound + ANGLE_ROUNDING);
        check(r, p, f.name, [rows[i], rows[j]]);
      }
  }
}

describe('sparse principal angles on the heterogeneity fixtures', () => {
  for (const f of loadFixtures()) {
    it(f.name, () => {
      const { a, rows } = csrFixture(f);
      const e = f.expected;
      const solves = sparseCholeskySolves(a, rows);
      const angleTolerance = f.name.startsWith('tiny-angle') ? 1e-12 : 1e-9;
      const { theta, thetaH } = allAngles(a, rows, solves);
      for (let i = 0; i < e.m; i++) for (let j = i + 1; j < e.m; j++) expectAngle(theta[i][j], e.theta[i][j], angleTolerance);
      expect(Math.abs(thetaH - e.thetaH)).toBeLessThanOrEqual(angleTolerance);
    });
  }

  it('the shift-invert route through the joint Gram gives every angle within both bounds of Lanczos on C^T C, in fewer products', () => {
    eachFixturePairBesidePlain({ coupling: false }, (s, p, name, rows) => {
      // Up to 40 rows (or at theta = 1e-7, where the joint Gram is singular to working precision) plain Lanczos runs.
      const shiftInvert = p.method !== 'structural' && Math.min(rows[0].length, rows[1].length) > 40 && !name.startsWith('tiny-angle');
      expect(s.method === 'lanczos-shift-invert').toBe(shiftInvert);
    });
    // Poisson strips: the top of C^T C is clustered; shift-invert separates it.
    const k = 60;
    const a = poisson2d(k);
    const rows = Array.from({ length: 6 }, (_, i) => Int32Array.from({ length: (k * k) / 6 }, (_, r) => (i * k * k) / 6 + r));
    const context = (joint: boolean) =>
      new PairAngleContext(machineColumnSlots(a, rows), sparseCholeskySolves(a, rows, joint ? { coupling: false } : PLAIN));
    const s = sparsePairAngle(context(true), 2, 3, { tolerance: 1e-8 });
    const p = sparsePairAngle(context(false), 2, 3, { tolerance: 1e-8 });
    // Each shift's factor is let go of once its solves are done (the analysis makes one or more a pair).
    const solves = sparseCholeskySolves(a, rows, { coupling: false });
    const joint = solves.joint!;
    let made = 0;
    let released = 0;
    const counted = new PairAngleContext(machineColumnSlots(a, rows), {
      ...solves,
      joint: {
        ...joint,
        factor(g) {
          const factor = joint.factor(g);
          made++;
          return {
            solve: (b, x) => factor.solve(b, x),
            release: () => {
              released++;
              factor.release();
            },
          };
        },
      },
    });
    expect(sparsePairAngle(counted, 2, 3, { tolerance: 1e-8 }).theta).toBe(s.theta);
    expect(made).toBeGreaterThan(0);
    expect(released).toBe(made);
    expect(s.method).toBe('lanczos-shift-invert');
    expect(Math.abs(s.theta - p.theta)).toBeLessThanOrEqual(s.absoluteErrorBound + p.absoluteErrorBound + ANGLE_ROUNDING);
    expect(s.absoluteErrorBound).toBeLessThan(1e-8);
    expect(s.iterations).toBeLessThan(p.iterations / 2);
  });

  it('the coupling route gives every angle within both bounds of Lanczos on C^T C, from one product', () => {
    let coupled = 0;
    eachFixturePairBesidePlain({ joint: false }, (c) => {
      if (c.method === 'coupling-block') {
        coupled++;
        // One product: the certificate on C^T C.
        expect(c.iterations).toBe(1);
      }
    });
    expect(coupled).toBeGreaterThan(0);
    // Poisson 60 x 60 in 3 x 3 boxes of 20 x 20 (a grid's boxes couple through their edges' rows): every
    // overlapping pair by the coupling route, within the bounds of Lanczos on C^T C and of the shift-invert route.
    const k = 60;
    const a = poisson2d(k);
    const rows: Int32Array[] = [];
    for (let bx = 0; bx < 3; bx++)
      for (let by = 0; by < 3; by++) {
        const box: number[] = [];
        for (let x = 20 * bx; x < 20 * bx + 20; x++) for (let y = 20 * by; y < 20 * by + 20; y++) box.push(x * k + y);
        rows.push(Int32Array.from(box).sort());
      }
    const slots = machineColumnSlots(a, rows);
    const pairs = overlappingMachinePairs(slots);
    // Side and corner neighbours: 12 and 8.
    expect(pairs.length / 2).toBe(20);
    const contexts = [
      sparseCholeskySolves(a, rows),
      sparseCholeskySolves(a, rows, PLAIN),
      sparseCholeskySolves(a, rows, { coupling: false }),
    ].map((solves) => new PairAngleContext(slots, solves));
    for (let q = 0; q < pairs.length; q += 2) {
      const [c, p, s] = contexts.map((context) => sparsePairAngle(context, pairs[q], pairs[q + 1]));
      expect(c.method).toBe('coupling-block');
      expect(c.iterations).toBe(1);
      expect(s.method).toBe('lanczos-shift-invert');
      expect(Math.abs(c.theta - p.theta)).toBeLessThanOrEqual(c.absoluteErrorBound + p.absoluteErrorBound + ANGLE_ROUNDING);
      expect(Math.abs(c.theta - s.theta)).toBeLessThanOrEqual(c.absoluteErrorBound + s.absoluteErrorBound + ANGLE_ROUNDING);
      expect(c.absoluteErrorBound).toBeLessThan(1e-9);
    }
  });

  it('the coupling route on a single coupling row gives its closed form, theta = atan 2', () => {
    // The identity of order 100 in two machines of 50 rows, row 10 also holding 0.5 in column 60: machine 0's rows
    // span e_10 + e_60 / 2 beside e_0 .. e_49, machine 1's e_50 .. e_99, so cos theta = (1/2) / sqrt(5/4).
    const n = 100;
    const dense = new Float64Array(n * n);
    for (let k = 0; k < n; k++) dense[k * n + k] = 1;
    dense[10 * n + 60] = 0.5;
    const a = csrFromDense({ rows: n, cols: n, data: dense });
    const rows = [Int32Array.from({ length: 50 }, (_, k) => k), Int32Array.from({ length: 50 }, (_, k) => 50 + k)];
    const angle = sparsePairAngle(new PairAngleContext(machineColumnSlots(a, rows), sparseCholeskySolves(a, rows)), 0, 1);
    expect(angle.method).toBe('coupling-block');
    expect(Math.abs(angle.theta - Math.atan(2))).toBeLessThan(1e-15);
    expect(Math.abs(angle.theta - Math.atan(2))).toBeLessThanOrEqual(angle.absoluteErrorBound + 1e-15);
  });

  it('gives the same angles with dense Cholesky factors (the factor layer is only seen through its solves)', () => {
    for (const name of ['bcsstk03-m4', 'bfwa62-m4', 'gaussian-n60-m6-mu1', 'tiny-angle-1e-07']) {
      const f = loadFixtures().find((x) => x.name === name);
      if (!f) throw new Error(`no fixture ${name}`);
      const { a, rows } = csrFixture(f);
      const sparseAngles = allAngles(a, rows, sparseCholeskySolves(a, rows));
      const denseAngles = allAngles(a, rows, denseCholeskySolves(a, rows));
      expect(Math.abs(denseAngles.thetaH - sparseAngles.thetaH)).toBeLessThan(1e-11);
      expect(denseAngles.pair).toEqual(sparseAngles.pair);
    }
  });
});

describe('sparse principal angles against ARPACK (spectra.json)', () => {
  const reference = loadSpectraReference();
  for (const ref of reference.sSpectrum) {
    it(`${ref.name} (n = ${ref.n}, m = ${ref.m})`, () => {
      const a = namedMatrix(ref.name);
      const rows = contiguousPartition(ref.n, ref.m);
      expect(rows.map((r) => r[0])).toEqual(ref.blockStarts);
      const solves = sparseCholeskySolves(a, rows);
      const slots = machineColumnSlots(a, rows);
      const pairs = overlappingMachinePairs(slots);
      expect(Array.from(pairs)).toEqual(ref.pairs.flatMap((p) => [p.i, p.j]));
      const context = new PairAngleContext(slots, solves);
      for (const p of ref.pairs) expectAngle(sparsePairAngle(context, p.i, p.j), p.theta, 1e-9);
    });
  }
});

describe('overlap graph', () => {
  it('colours a graph with even cycles and refuses one with a triangle', () => {
    // Machines 0..3 on a 4-cycle of shared columns (bipartite), then a triangle 0-1-2.
    const pattern = (pairs: [number, number][], m: number): CsrMatrix => {
      const dense: number[][] = Array.from({ length: m }, (_, i) => Array.from({ length: m + pairs.length }, (_, c) => (c === i ? 4 : 0)));
      pairs.forEach(([i, j], q) => {
        dense[i][m + q] = 1;
        dense[j][m + q] = 1;
      });
      return csrFromDense(fromRows(dense));
    };
    const single = (m: number): Int32Array[] => Array.from({ length: m }, (_, i) => Int32Array.of(i));
    const square = machineColumnSlots(
      pattern(
        [
          [0, 1],
          [1, 2],
          [2, 3],
          [3, 0],
        ],
        4,
      ),
      single(4),
    );
    expect(Array.from(overlapTwoColouring(square) ?? [])).toEqual([0, 1, 0, 1]);
    const triangle = machineColumnSlots(
      pattern(
        [
          [0, 1],
          [1, 2],
          [2, 0],
        ],
        3,
      ),
      single(3),
    );
    expect(overlapTwoColouring(triangle)).toBeNull();
  });
});

describe('structure', () => {
  it('makes the column slots in shared memory when asked (a task pool then copies none), the same as in its own', () => {
    const a = poisson2d(12);
    const rows = contiguousPartition(a.rows, 5);
    const own = machineColumnSlots(a, rows);
    const shared = machineColumnSlots(a, rows, true);
    for (const key of ['machineOfRow', 'localIndexOfRow', 'slotPtr', 'slotMachine', 'slotOfEntry'] as const) {
      expect(own[key].buffer, key).not.toBeInstanceOf(SharedArrayBuffer);
      expect(shared[key].buffer, key).toBeInstanceOf(SharedArrayBuffer);
      expect(Array.from(shared[key]), key).toEqual(Array.from(own[key]));
    }
    expect(shared.blockDiagonal).toBe(false);
  });

  it('theta = pi/2 exactly when no column is shared (Proposition 1)', () => {
    const f = loadFixtures().find((x) => x.name.startsWith('block-diagonal'));
    if (!f) throw new Error('no block-diagonal fixture');
    const { a, rows } = csrFixture(f);
    const slots = machineColumnSlots(a, rows);
    expect(slots.blockDiagonal).toBe(true);
    expect(overlappingMachinePairs(slots).length).toBe(0);
    const angle = sparsePairAngle(new PairAngleContext(slots, sparseCholeskySolves(a, rows)), 0, 2);
    expect(angle).toMatchObject({ theta: Math.PI / 2, cos: 0, method: 'structural', iterations: 0 });
  });

  it('refuses row lists that overlap, skip a row or are not ascending', () => {
    const a = csrFromDense({ rows: 3, cols: 3, data: Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]) });
    expect(thrown(() => machineColumnSlots(a, [Int32Array.from([0, 1]), Int32Array.from([1, 2])]))).toBeInstanceOf(DimensionMismatchError);
    expect(thrown(() => machineColumnSlots(a, [Int32Array.from([0]), Int32Array.from([2])]))).toBeInstanceOf(DimensionMismatchError);
    expect(thrown(() => machineColumnSlots(a, [Int32Array.from([1, 0]), Int32Array.from([2])]))).toBeInstanceOf(DimensionMismatchError);
  });
});

describe('pairsByDimensionCount', () => {
  /** Pairs [i0, j0, i1, j1, ...] as a list of 'i-j'. */
  const named = (pairs: Int32Array): string[] => Array.from({ length: pairs.length / 2 }, (_, q) => `${pairs[2 * q]}-${pairs[2 * q + 1]}`);

  it("lists overlappingMachinePairs' pairs, in its order, all computed on a nonsingular square matrix", () => {
    const a = poisson2d(12);
    // Interleaved rows on 7 machines: every machine touches most others.
    const rowsOf = Array.from({ length: 7 }, (_, i) => Int32Array.from({ length: 144 }, (_, k) => k).filter((k) => (k * 5) % 7 === i));
    const slots = machineColumnSlots(a, rowsOf);
    const { computed, intersecting } = pairsByDimensionCount(slots);
    expect(intersecting.length).toBe(0);
    expect(named(computed)).toEqual(named(overlappingMachinePairs(slots)));
    expect(computed.length).toBeGreaterThan(20);
  });

  it("splits a tall matrix's pairs by r_i + r_j against the columns the two touch", () => {
    // Machine 0: 4 rows on columns 0-3; 1: 3 rows on 2-4; 2: 1 row on 4-5; 3: 2 rows on 0-1.
    const a = csrFromDense(fromRows([...INTERSECTING_MACHINE_ROWS.map((row) => [...row]), [1, 1, 0, 0, 0, 0], [1, -1, 0, 0, 0, 0]]));
    const slots = machineColumnSlots(a, [Int32Array.of(0, 1, 2, 3), Int32Array.of(4, 5, 6), Int32Array.of(7), Int32Array.of(8, 9)]);
    const { computed, intersecting } = pairsByDimensionCount(slots);
    // (0, 1): 4 + 3 > 5 columns; (0, 3): 4 + 2 > 4; (1, 2): 3 + 1 = 4 columns, computed; (0, 2), (1, 3), (2, 3): disjoint.
    expect(named(intersecting)).toEqual(['0-1', '0-3']);
    expect(named(computed)).toEqual(['1-2']);
    expect([...named(intersecting), ...named(computed)].sort()).toEqual(named(overlappingMachinePairs(slots)).sort());
  });
});
