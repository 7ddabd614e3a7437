/**
 * The row kernels against naive loops over the full rows, on every layout the iterations meet:
 * dense rows (the 8- and 4-row blocks), ragged nonzero extents (shared part + ends), short and empty
 * rows (row by row), row counts that leave 4-row and single-row tails, and nonzero offsets.
 * Both backends: the native one takes the addon's C row kernels on dense runs of rows (shapes from
 * 1024 entries up, with block and column tails).
 */
import { expect, it } from 'vitest';
import { nativeBlas } from '../../../src/solvers/linalg/backend.js';
import { accumulateRowCombination, fusedRowPass, multiplyRows } from '../../../src/solvers/linalg/rowKernels.js';
import type { RowKernels } from '../../../src/solvers/linalg/wasmRowKernels.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { describeEachBackend } from '../../support/backends.js';

type Layout = 'dense' | 'ragged' | 'sparse' | 'mixed' | 'sparse-then-dense';

interface Rows {
  x: Float64Array;
  p: number;
  c: number;
  start: Int32Array;
  end: Int32Array;
}

/** p x c rows that are exactly zero outside [start[k], end[k]) (and may have zeros inside). */
function randomRows(rng: SeededRandom, p: number, c: number, layout: Layout): Rows {
  const x = new Float64Array(p * c);
  const start = new Int32Array(p);
  const end = new Int32Array(p);
  for (let k = 0; k < p; k++) {
    let lo = 0;
    let hi = c;
    // sparse-then-dense: too sparse overall for one native call, so the native path cuts runs of rows (dense runs native, the rest row by row).
    const kind =
      layout === 'mixed'
        ? (['dense', 'ragged', 'sparse'] as const)[rng.nextInt(3)]
        : layout === 'sparse-then-dense'
          ? k < (5 * p) / 6
            ? 'sparse'
            : 'dense'
          : layout;
    if (kind === 'ragged') {
      // Extents that mostly overlap their neighbours', as Q_i's do on banded data.
      lo = rng.nextInt(Math.max(1, Math.floor(c / 6)));
      hi = c - rng.nextInt(Math.max(1, Math.floor(c / 6)));
    } else if (kind === 'sparse') {
      lo = rng.nextInt(c);
      hi = Math.min(c, lo + rng.nextInt(8));
    }
    if (rng.nextInt(17) === 0) hi = lo; // an empty row now and then
    for (let t = lo; t < hi; t++) x[k * c + t] = rng.nextNormal();
    if (hi > lo) {
      // Extents start and end on nonzeros (that is how DenseMachineData computes them).
      if (x[k * c + lo] === 0) x[k * c + lo] = 1;
      if (x[k * c + hi - 1] === 0) x[k * c + hi - 1] = 1;
    }
    start[k] = hi > lo ? lo : 0;
    end[k] = hi > lo ? hi : 0;
  }
  return { x, p, c, start, end };
}

function naiveDots(r: Rows, v: Float64Array): Float64Array {
  const out = new Float64Array(r.p);
  for (let k = 0; k < r.p; k++) for (let t = 0; t < r.c; t++) out[k] += r.x[k * r.c + t] * v[t];
  return out;
}

function naiveCombination(r: Rows, w: Float64Array, scale: number): Float64Array {
  const out = new Float64Array(r.c);
  for (let k = 0; k < r.p; k++) for (let t = 0; t < r.c; t++) out[t] += scale * w[k] * r.x[k * r.c + t];
  return out;
}

/** Sum of |terms| of each naive dot product: the scale of its rounding error. */
function magnitudes(r: Rows, v: Float64Array): Float64Array {
  const out = new Float64Array(r.p);
  for (let k = 0; k < r.p; k++) for (let t = 0; t < r.c; t++) out[k] += Math.abs(r.x[k * r.c + t] * v[t]);
  return out;
}

const EPS = 1e-13;

const SHAPES: readonly [number, number, Layout][] = [
  [1, 1, 'dense'],
  [3, 20, 'dense'],
  [8, 16, 'dense'],
  [13, 40, 'dense'],
  [29, 300, 'dense'],
  [27, 303, 'dense'],
  [64, 128, 'dense'],
  [37, 200, 'ragged'],
  [45, 90, 'sparse'],
  [61, 150, 'mixed'],
  [40, 700, 'ragged'],
  [300, 400, 'sparse-then-dense'],
];

describeEachBackend('row kernels', (backend) => {
  // What a run on this backend passes (../machines/placement.ts): the addon's kernels, or none (plain loops).
  const kernels = (): RowKernels | null => (backend === 'native' ? nativeBlas() : null);
  for (const [p, c, layout] of SHAPES) {
    const label = `${p} x ${c}, ${layout}`;

    it(`multiplyRows matches the naive products (${label})`, () => {
      const rng = new SeededRandom(p * 1000 + c);
      const r = randomRows(rng, p, c, layout);
      const v = rng.fillSigned(new Float64Array(c));
      const expected = naiveDots(r, v);
      const scale = magnitudes(r, v);
      const out = new Float64Array(p + 3).fill(NaN);
      multiplyRows(kernels(), r.x, p, c, r.start, r.end, v, out, 3);
      for (let k = 0; k < p; k++) expect(Math.abs(out[3 + k] - expected[k])).toBeLessThanOrEqual(EPS * scale[k] * Math.sqrt(c));
    });

    it(`accumulateRowCombination adds the naive combination (${label})`, () => {
      const rng = new SeededRandom(p * 1000 + c + 1);
      const r = randomRows(rng, p, c, layout);
      const w = rng.fillSigned(new Float64Array(p + 2));
      const scale = -0.75;
      const y = rng.fillSigned(new Float64Array(c + 5));
      const before = Float64Array.from(y);
      accumulateRowCombination(kernels(), r.x, p, c, r.start, r.end, w, 2, scale, y, 5);
      const expected = naiveCombination(r, w.subarray(2), scale);
      for (let t = 0; t < 5; t++) expect(y[t]).toBe(before[t]);
      for (let t = 0; t < c; t++)
        expect(Math.abs(y[5 + t] - (before[5 + t] + expected[t]))).toBeLessThanOrEqual(EPS * p * (1 + Math.abs(expected[t])));
    });

    it(`fusedRowPass gives X v - bias and adds scale X^T (X v - bias) (${label})`, () => {
      const rng = new SeededRandom(p * 1000 + c + 2);
      const r = randomRows(rng, p, c, layout);
      const v = rng.fillSigned(new Float64Array(c));
      const bias = rng.fillSigned(new Float64Array(p));
      const dots = new Float64Array(p + 1).fill(NaN);
      const y = rng.fillSigned(new Float64Array(c + 2));
      const before = Float64Array.from(y);
      fusedRowPass(kernels(), r.x, p, c, r.start, r.end, v, bias, dots, 1, 0.5, y, 2);
      const products = naiveDots(r, v);
      const scale = magnitudes(r, v);
      const d = new Float64Array(p);
      for (let k = 0; k < p; k++) {
        d[k] = products[k] - bias[k];
        expect(Math.abs(dots[1 + k] - d[k])).toBeLessThanOrEqual(EPS * (scale[k] + Math.abs(bias[k])) * Math.sqrt(c));
      }
      const expected = naiveCombination(r, d, 0.5);
      for (let t = 0; t < 2; t++) expect(y[t]).toBe(before[t]);
      for (let t = 0; t < c; t++)
        expect(Math.abs(y[2 + t] - (before[2 + t] + expected[t]))).toBeLessThanOrEqual(1e-12 * p * (1 + Math.abs(expected[t])));
    });
  }

  // dgemv reads a dense run's union extent (exact zeros there add exact zeros); the TypeScript path reads only the extents.
  if (backend === 'typescript') {
    it('the TypeScript path reads nothing outside the extents', () => {
      const rng = new SeededRandom(99);
      const p = 21;
      const c = 64;
      const r = randomRows(rng, p, c, 'ragged');
      const v = rng.fillSigned(new Float64Array(c));
      const expected = naiveDots(r, v);
      const poisoned = Float64Array.from(r.x);
      for (let k = 0; k < p; k++) for (let t = 0; t < c; t++) if (t < r.start[k] || t >= r.end[k]) poisoned[k * c + t] = NaN;
      const out = new Float64Array(p);
      multiplyRows(null, poisoned, p, c, r.start, r.end, v, out);
      for (let k = 0; k < p; k++) expect(Math.abs(out[k] - expected[k])).toBeLessThan(1e-12);
      const dots = new Float64Array(p);
      const y = new Float64Array(c);
      fusedRowPass(null, poisoned, p, c, r.start, r.end, v, new Float64Array(p), dots, 0, 1, y);
      for (let t = 0; t < c; t++) expect(Number.isFinite(y[t])).toBe(true);
    });
  }
});
