import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../../src/solvers/errors.js';
import { checkCsr, csrToDense, nnzOf } from '../../../src/solvers/sparse/csr.js';
import { convectionDiffusion2d, poisson2d } from '../../../src/solvers/sparse/generators.js';
import { thrown } from '../../support/thrown.js';
import { SPARSE_REFERENCE } from './support.js';

describe('grid generators', () => {
  it('poisson2d(4) and convectionDiffusion2d(4, 30) equal the SciPy-built matrices entry for entry', () => {
    for (const [reference, matrix] of [
      [SPARSE_REFERENCE.generators.poisson2d_k4, poisson2d(4)],
      [SPARSE_REFERENCE.generators.convectionDiffusion2d_k4_peclet30, convectionDiffusion2d(4, 30)],
    ] as const) {
      checkCsr(matrix);
      expect([matrix.rows, matrix.cols]).toEqual([reference.rows, reference.cols]);
      expect(Array.from(matrix.rowPtr)).toEqual(reference.rowPtr);
      expect(Array.from(matrix.colIdx)).toEqual(reference.colIdx);
      expect(Array.from(matrix.values)).toEqual(reference.values);
    }
  });

  it('poisson2d is symmetric with the 5-point stencil; convection-diffusion is not, its symmetric part is the Laplacian', () => {
    const k = 9;
    const p = csrToDense(poisson2d(k));
    const c = csrToDense(convectionDiffusion2d(k, 12));
    const n = k * k;
    expect(nnzOf(poisson2d(k))).toBe(5 * n - 4 * k);
    let asymmetric = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        expect(p.data[i * n + j]).toBe(p.data[j * n + i]);
        expect((c.data[i * n + j] + c.data[j * n + i]) / 2).toBeCloseTo(p.data[i * n + j], 14);
        if (c.data[i * n + j] !== c.data[j * n + i]) asymmetric++;
      }
      expect(p.data[i * n + i]).toBe(4);
    }
    expect(asymmetric).toBe(2 * (2 * k * (k - 1)));
  });

  it('drops coefficients that vanish (cell Péclet number 1) and refuses bad parameters', () => {
    const k = 5;
    const a = convectionDiffusion2d(k, 2 * (k + 1)); // gamma = 1: east and north coefficients are 0
    checkCsr(a);
    expect(nnzOf(a)).toBe(5 * k * k - 4 * k - 2 * k * (k - 1));
    expect(a.values.every((v) => v !== 0)).toBe(true);
    expect(thrown(() => poisson2d(0))).toBeInstanceOf(InvalidParameterError);
    expect(thrown(() => poisson2d(2.5))).toBeInstanceOf(InvalidParameterError);
    expect(thrown(() => convectionDiffusion2d(3, Number.NaN))).toBeInstanceOf(InvalidParameterError);
  });
});
