/**
 * adoptCholesky takes a factor computed elsewhere (CHOLMOD on the native backend) as it is, without
 * a symbolic analysis of its own: here the "external" factor is the TypeScript one's own arrays, so
 * the adopted factor must solve identically, carry the same elimination tree, fill and flop count,
 * and refuse malformed structures (which the TypeScript solves would otherwise read out of bounds).
 */
import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, SingularMatrixError } from '../../../src/solvers/errors.js';
import { selectRows, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { convectionDiffusion2d, poisson2d } from '../../../src/solvers/sparse/generators.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import {
  adoptCholesky,
  factorCholesky,
  refactorCholesky,
  solveCholesky,
  type ExternalCholesky,
} from '../../../src/solvers/sparse/sparseCholesky.js';
import { thrown } from '../../support/thrown.js';
import { rowRange } from './support.js';

function externalOf(g: CsrMatrix): ExternalCholesky {
  const factor = factorCholesky(g);
  const { ordering, colPtr, rowIdx } = factor.symbolic;
  return { perm: ordering.perm.slice(), colPtr: colPtr.slice(), rowIdx: rowIdx.slice(), values: factor.values.slice(), minor: g.rows };
}

const GRAMS: readonly [string, CsrMatrix][] = [
  ['poisson2d k = 12, rows 20..100', gramMatrix(selectRows(poisson2d(12), rowRange(20, 100)))],
  ['convectionDiffusion2d k = 10, Peclet 50, rows 0..60', gramMatrix(selectRows(convectionDiffusion2d(10, 50), rowRange(0, 60)))],
];

describe('adoptCholesky', () => {
  for (const [label, g] of GRAMS) {
    it(`${label}: the adopted factor is the external one, with the same tree, fill, flops and solutions`, () => {
      const own = factorCholesky(g);
      const adopted = adoptCholesky(g, externalOf(g));
      expect(adopted.symbolic.parent).toEqual(own.symbolic.parent);
      expect(adopted.symbolic.nnzL).toBe(own.symbolic.nnzL);
      expect(adopted.symbolic.flops).toBe(own.symbolic.flops);
      expect(adopted.symbolic.ordering.inverse).toEqual(own.symbolic.ordering.inverse);
      const b = Float64Array.from({ length: g.rows }, (_, k) => Math.cos(k));
      expect(solveCholesky(adopted, b, new Float64Array(g.rows))).toEqual(solveCholesky(own, b, new Float64Array(g.rows)));
      // It carries no analysis: a refactorization needs one.
      expect(adopted.analysis).toBeUndefined();
      expect(thrown(() => refactorCholesky(adopted, g))).toBeInstanceOf(DimensionMismatchError);
    });
  }

  it('refuses malformed structures: a perm that is no permutation, a column without its diagonal first, rows not ascending', () => {
    const [, g] = GRAMS[0];
    const good = externalOf(g);
    const badPerm = { ...good, perm: good.perm.slice() };
    badPerm.perm[1] = badPerm.perm[0];
    expect(thrown(() => adoptCholesky(g, badPerm))).toBeInstanceOf(DimensionMismatchError);
    // Column 0's first two entries swapped: the diagonal is no longer first.
    const swapped = { ...good, rowIdx: good.rowIdx.slice() };
    [swapped.rowIdx[0], swapped.rowIdx[1]] = [swapped.rowIdx[1], swapped.rowIdx[0]];
    expect(thrown(() => adoptCholesky(g, swapped))).toBeInstanceOf(DimensionMismatchError);
    // A column with two entries below its diagonal in descending order.
    let j = 0;
    while (good.colPtr[j + 1] - good.colPtr[j] < 3) j++;
    const descending = { ...good, rowIdx: good.rowIdx.slice() };
    const q = good.colPtr[j] + 1;
    [descending.rowIdx[q], descending.rowIdx[q + 1]] = [descending.rowIdx[q + 1], descending.rowIdx[q]];
    expect(thrown(() => adoptCholesky(g, descending))).toBeInstanceOf(DimensionMismatchError);
    const outOfRange = { ...good, rowIdx: good.rowIdx.slice() };
    outOfRange.rowIdx[good.colPtr[j + 1] - 1] = g.rows;
    expect(thrown(() => adoptCholesky(g, outOfRange))).toBeInstanceOf(DimensionMismatchError);
    const short = { ...good, colPtr: good.colPtr.slice(0, g.rows) };
    expect(thrown(() => adoptCholesky(g, short))).toBeInstanceOf(DimensionMismatchError);
  });

  it('holds every pivot to the TypeScript test: a tiny pivot and a failed external factorization are SingularMatrixError', () => {
    const [, g] = GRAMS[0];
    const tiny = externalOf(g);
    const k = 7;
    tiny.values[tiny.colPtr[k]] = 1e-9;
    const error = thrown(() => adoptCholesky(g, tiny));
    expect(error).toBeInstanceOf(SingularMatrixError);
    expect((error as SingularMatrixError).details.row).toBe(tiny.perm[k]);
    const failed = { ...externalOf(g), minor: 3 };
    const failure = thrown(() => adoptCholesky(g, failed));
    expect(failure).toBeInstanceOf(SingularMatrixError);
    expect((failure as SingularMatrixError).details).toMatchObject({ row: failed.perm[3], pivot: 0 });
  });
});
