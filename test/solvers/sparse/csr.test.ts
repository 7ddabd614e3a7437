import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, InvalidEntryError, NonFiniteValueError } from '../../../src/solvers/errors.js';
import { matVec, norm2, type DenseMatrix } from '../../../src/solvers/matrix.js';
import {
  checkCsr,
  columnSupport,
  csrFromCoo,
  csrFromDense,
  csrToDense,
  frobeniusNorm,
  multiply,
  multiplyTransposed,
  nnzOf,
  localColumnIndices,
  restrictColumns,
  rowNorms,
  selectColumns,
  selectRows,
  transpose,
} from '../../../src/solvers/sparse/csr.js';
import { thrown } from '../../support/thrown.js';
import { randomSparse } from './support.js';

const entry = (a: DenseMatrix, i: number, j: number) => a.data[i * a.cols + j];

describe('csrFromCoo', () => {
  it('sums duplicates in any order and matches dense accumulation (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: -9, max: 9 })), { maxLength: 60 }),
        (rows, cols, raw) => {
          const triplets = raw.map(([i, j, v]) => [i % rows, j % cols, v] as const);
          const a = csrFromCoo(
            rows,
            cols,
            triplets.map((t) => t[0]),
            triplets.map((t) => t[1]),
            triplets.map((t) => t[2]),
          );
          checkCsr(a);
          const expected = new Float64Array(rows * cols);
          const present = new Uint8Array(rows * cols);
          for (const [i, j, v] of triplets) {
            expected[i * cols + j] += v;
            present[i * cols + j] = 1;
          }
          expect(Array.from(csrToDense(a).data)).toEqual(Array.from(expected));
          // One stored entry per distinct position, cancelled sums kept as explicit zeros (as SciPy).
          expect(nnzOf(a)).toBe(present.reduce((s, p) => s + p, 0));
        },
      ),
    );
  });

  it("'reject' names the duplicated entry and both triplets", () => {
    const error = thrown(() => csrFromCoo(3, 3, [0, 2, 1, 2], [1, 0, 1, 0], [1, 2, 3, 4], { duplicates: 'reject' }));
    expect(error).toBeInstanceOf(InvalidEntryError);
    expect(error.message).toContain('matrix entry (2, 0)');
    expect((error as InvalidEntryError).details).toEqual({ row: 2, column: 0, entries: [1, 3] });
    // Without duplicates 'reject' builds the same matrix as 'sum'.
    const a = csrFromCoo(3, 3, [2, 0, 1], [0, 1, 1], [2, 1, 3], { duplicates: 'reject' });
    expect(Array.from(a.rowPtr)).toEqual([0, 1, 2, 3]);
    expect(Array.from(a.colIdx)).toEqual([1, 1, 0]);
    expect(Array.from(a.values)).toEqual([1, 3, 2]);
  });

  it('refuses indices outside the shape and non-finite values or sums', () => {
    expect(thrown(() => csrFromCoo(2, 2, [0, 2], [0, 0], [1, 1]))).toBeInstanceOf(DimensionMismatchError);
    expect(thrown(() => csrFromCoo(2, 2, [0, 1], [0, -1], [1, 1]))).toBeInstanceOf(DimensionMismatchError);
    expect(thrown(() => csrFromCoo(2, 2, [0.5], [0], [1]))).toBeInstanceOf(DimensionMismatchError);
    const nan = thrown(() => csrFromCoo(2, 2, [1], [0], [Number.NaN]));
    expect(nan).toBeInstanceOf(NonFiniteValueError);
    expect(nan.message).toContain('matrix entry (1, 0)');
    expect(thrown(() => csrFromCoo(2, 2, [1, 1], [1, 1], [1e308, 1e308]))).toBeInstanceOf(NonFiniteValueError);
  });

  it('uses only the first `count` triplets when given', () => {
    const a = csrFromCoo(2, 2, new Int32Array([0, 1, 1]), new Int32Array([0, 1, 1]), new Float64Array([5, 6, 7]), { count: 2 });
    expect(Array.from(csrToDense(a).data)).toEqual([5, 0, 0, 6]);
  });
});

describe('CSR operations against dense references', () => {
  const cases = [
    { rows: 1, cols: 1, density: 1, seed: 1 },
    { rows: 7, cols: 11, density: 0.3, seed: 2 },
    { rows: 40, cols: 25, density: 0.1, seed: 3 },
    { rows: 30, cols: 30, density: 0, seed: 4 },
  ];
  for (const { rows, cols, density, seed } of cases) {
    it(`${rows} x ${cols}, density ${density}`, () => {
      const { dense, csr } = randomSparse(rows, cols, density, seed);
      checkCsr(csr);
      expect(Array.from(csrToDense(csr).data)).toEqual(Array.from(dense.data));

      const at = transpose(csr);
      checkCsr(at);
      for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) expect(entry(csrToDense(at), j, i)).toBe(entry(dense, i, j));
      expect(Array.from(csrToDense(transpose(at)).data)).toEqual(Array.from(dense.data));

      const x = Float64Array.from({ length: cols }, (_, k) => Math.cos(k + 1));
      const y = multiply(csr, x);
      const yDense = matVec(dense, x);
      for (let i = 0; i < rows; i++) expect(y[i]).toBeCloseTo(yDense[i], 14);

      const w = Float64Array.from({ length: rows }, (_, k) => Math.sin(k + 2));
      const z = multiplyTransposed(csr, w, new Float64Array(cols).fill(99)); // stale contents are overwritten
      for (let j = 0; j < cols; j++) {
        let s = 0;
        for (let i = 0; i < rows; i++) s += entry(dense, i, j) * w[i];
        expect(z[j]).toBeCloseTo(s, 14);
      }

      expect(frobeniusNorm(csr)).toBeCloseTo(norm2(dense.data), 14);
      const norms = rowNorms(csr);
      for (let i = 0; i < rows; i++) expect(norms[i]).toBeCloseTo(norm2(dense.data, i * cols, cols), 14);
    });
  }

  it('selects rows, finds their column support and restricts to it', () => {
    const { dense, csr } = randomSparse(20, 30, 0.08, 5);
    const rowList = new Int32Array([1, 4, 5, 11, 19]);
    const sub = selectRows(csr, rowList);
    checkCsr(sub);
    expect(sub.rows).toBe(5);
    expect(sub.cols).toBe(30);
    const subDense = csrToDense(sub);
    for (let k = 0; k < rowList.length; k++) for (let j = 0; j < 30; j++) expect(entry(subDense, k, j)).toBe(entry(dense, rowList[k], j));

    const support = columnSupport(csr, rowList);
    const expected: number[] = [];
    for (let j = 0; j < 30; j++) if (rowList.some((i) => entry(dense, i, j) !== 0)) expected.push(j);
    expect(Array.from(support)).toEqual(expected);
    expect(Array.from(columnSupport(sub))).toEqual(expected);

    const local = restrictColumns(sub, support);
    checkCsr(local);
    expect(local.cols).toBe(support.length);
    const localDense = csrToDense(local);
    for (let k = 0; k < rowList.length; k++)
      for (let t = 0; t < support.length; t++) expect(entry(localDense, k, t)).toBe(entry(dense, rowList[k], support[t]));
    expect(thrown(() => restrictColumns(sub, support.subarray(1)))).toBeInstanceOf(DimensionMismatchError);

    // selectColumns keeps the listed columns only, renumbered, and leaves the others' entries out.
    const every = Int32Array.from({ length: 15 }, (_, t) => 2 * t);
    const even = selectColumns(csr, every);
    checkCsr(even);
    expect([even.rows, even.cols]).toEqual([csr.rows, 15]);
    const evenDense = csrToDense(even);
    for (let i = 0; i < csr.rows; i++) for (let t = 0; t < 15; t++) expect(entry(evenDense, i, t)).toBe(entry(dense, i, 2 * t));
    expect(nnzOf(even)).toBe(Array.from(dense.data).filter((v, q) => v !== 0 && (q % 30) % 2 === 0).length);
  });

  it('finds the support of rows that touch a narrow band of a very wide matrix, and refuses columns on either side of it', () => {
    // 10^6 columns, entries only in 900,000 .. 900,011 (a strip of a banded matrix): the span, not the width, is scanned.
    const rows = [0, 0, 1, 1, 2, 2, 2];
    const cols = [900_003, 900_000, 900_011, 900_003, 900_007, 900_001, 900_000];
    const a = csrFromCoo(3, 1_000_000, rows, cols, [1, 2, 3, 4, 5, 6, 7]);
    const support = columnSupport(a);
    expect(Array.from(support)).toEqual([900_000, 900_001, 900_003, 900_007, 900_011]);
    expect(Array.from(columnSupport(a, Int32Array.from([1])))).toEqual([900_003, 900_011]);
    expect(Array.from(columnSupport(a, Int32Array.from([])))).toEqual([]);
    const local = restrictColumns(a, support);
    for (let q = 0; q < nnzOf(a); q++) expect(support[local.colIdx[q]]).toBe(a.colIdx[q]);
    expect(thrown(() => restrictColumns(a, support.subarray(1)))).toBeInstanceOf(DimensionMismatchError);
    expect(thrown(() => restrictColumns(a, support.subarray(0, support.length - 1)))).toBeInstanceOf(DimensionMismatchError);
    expect(thrown(() => restrictColumns(a, Int32Array.from([900_000, 900_001, 900_002, 900_003, 900_007])))).toBeInstanceOf(
      DimensionMismatchError,
    );
  });

  it('column support and restriction agree with a plain computation for narrow and very wide matrices (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom(5, 50, 5000, 1_000_000),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 9 })), { maxLength: 40 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        (rows, cols, raw, keep) => {
          const a = csrFromCoo(
            rows,
            cols,
            raw.map(([i]) => i % rows),
            raw.map(([, j]) => j % cols),
            raw.map(([, , v]) => v),
          );
          const rowList = Int32Array.from({ length: rows }, (_, i) => i).filter((i) => keep[i]);
          const expected = [...new Set(raw.filter(([i]) => keep[i % rows]).map(([, j]) => j % cols))].sort((x, y) => x - y);
          expect(Array.from(columnSupport(a, rowList))).toEqual(expected);
          const support = columnSupport(a);
          const local = restrictColumns(a, support);
          checkCsr(local);
          for (let q = 0; q < nnzOf(a); q++) expect(support[local.colIdx[q]]).toBe(a.colIdx[q]);
          if (support.length > 0 && nnzOf(a) > 0) {
            expect(thrown(() => restrictColumns(a, support.subarray(0, support.length - 1)))).toBeInstanceOf(DimensionMismatchError);
          }
        },
      ),
      { numRuns: 120, seed: 5 },
    );
  });

  it('selects rows into shared memory and renumbers columns into a given array, with the same entries', () => {
    const { csr } = randomSparse(20, 30, 0.2, 7);
    const rowList = new Int32Array([0, 3, 8, 9, 15]);
    const plain = selectRows(csr, rowList);
    const shared = selectRows(csr, rowList, true);
    for (const key of ['rowPtr', 'colIdx', 'values'] as const) {
      expect(shared[key].buffer, key).toBeInstanceOf(SharedArrayBuffer);
      expect(Array.from(shared[key]), key).toEqual(Array.from(plain[key]));
    }
    const support = columnSupport(plain);
    const out = new Int32Array(new SharedArrayBuffer(4 * nnzOf(plain)));
    expect(localColumnIndices(plain, support, out)).toBe(out);
    expect(Array.from(out)).toEqual(Array.from(restrictColumns(plain, support).colIdx));
    expect(thrown(() => localColumnIndices(plain, support.subarray(1)))).toBeInstanceOf(DimensionMismatchError);
  });

  it('refuses row lists that are not ascending or out of range', () => {
    const { csr } = randomSparse(5, 5, 0.5, 6);
    expect(thrown(() => selectRows(csr, new Int32Array([2, 1])))).toBeInstanceOf(DimensionMismatchError);
    expect(thrown(() => selectRows(csr, new Int32Array([2, 2])))).toBeInstanceOf(DimensionMismatchError);
    expect(thrown(() => selectRows(csr, new Int32Array([5])))).toBeInstanceOf(DimensionMismatchError);
  });

  it('csrFromDense stores exactly the nonzeros', () => {
    const a = csrFromDense({ rows: 2, cols: 3, data: new Float64Array([0, 2, 0, -1, 0, 3]) });
    expect(Array.from(a.rowPtr)).toEqual([0, 1, 3]);
    expect(Array.from(a.colIdx)).toEqual([1, 0, 2]);
    expect(Array.from(a.values)).toEqual([2, -1, 3]);
  });

  it('checkCsr rejects malformed structures', () => {
    const good = { rows: 2, cols: 2, rowPtr: new Int32Array([0, 1, 2]), colIdx: new Int32Array([0, 1]), values: new Float64Array(2) };
    expect(() => checkCsr(good)).not.toThrow();
    expect(thrown(() => checkCsr({ ...good, colIdx: new Int32Array([0, 2]) }))).toBeInstanceOf(DimensionMismatchError);
    expect(thrown(() => checkCsr({ ...good, rowPtr: new Int32Array([0, 2, 2]), colIdx: new Int32Array([1, 0]) }))).toBeInstanceOf(
      DimensionMismatchError,
    );
    expect(
      thrown(() => checkCsr({ ...good, rowPtr: new Int32Array([0, 2, 1]), colIdx: new Int32Array([0]), values: new Float64Array(1) })),
    ).toBeInstanceOf(DimensionMismatchError);
    expect(thrown(() => checkCsr({ ...good, values: new Float64Array(3) }))).toBeInstanceOf(DimensionMismatchError);
  });
});
