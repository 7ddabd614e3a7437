/**
 * Sparse test matrices on a k x k grid of interior points of the unit square (Dirichlet boundary),
 * unknown (i, j) numbered i k + j (row i of the grid, column j), mesh width h = 1 / (k + 1), both
 * scaled by h^2 so that the diagonal is 4. Built directly in CSR, columns ascending, O(k^2).
 */
import { InvalidParameterError } from '../errors.js';
import type { CsrMatrix } from './csr.js';

/** The 5-point Laplacian -Δu: symmetric positive definite, n = k^2, 4 on the diagonal and -1 for each grid neighbour. */
export function poisson2d(k: number): CsrMatrix {
  return gridStencil(k, 0, 'poisson2d');
}

/**
 * -Δu + peclet (∂u/∂x + ∂u/∂y) with central differences: nonsymmetric for peclet != 0, n = k^2.
 * Neighbour coefficients -1 - γ (west, south: lower grid index) and -1 + γ (east, north), with the
 * cell Péclet number γ = peclet h / 2 (a coefficient that is exactly 0, at γ = ±1, is not stored).
 * The matrix is nonsingular for every peclet: its symmetric part is the Laplacian, positive definite.
 */
export function convectionDiffusion2d(k: number, peclet: number): CsrMatrix {
  if (!Number.isFinite(peclet)) throw new InvalidParameterError(`peclet must be a finite number; got ${peclet}.`, { parameter: 'peclet' });
  return gridStencil(k, peclet / (k + 1) / 2, 'convectionDiffusion2d');
}

function gridStencil(k: number, gamma: number, what: string): CsrMatrix {
  if (!Number.isInteger(k) || k < 1 || k > 46340) {
    throw new InvalidParameterError(`${what}: the grid size k must be an integer in 1..46340 (n = k^2 < 2^31); got ${k}.`, {
      parameter: 'k',
    });
  }
  const n = k * k;
  const capacity = 5 * n - 4 * k;
  const rowPtr = new Int32Array(n + 1);
  const colIdx = new Int32Array(capacity);
  const values = new Float64Array(capacity);
  const lower = -1 - gamma;
  const upper = -1 + gamma;
  let q = 0;
  const put = (column: number, value: number): void => {
    if (value === 0) return;
    colIdx[q] = column;
    values[q++] = value;
  };
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      const r = i * k + j;
      if (i > 0) put(r - k, lower);
      if (j > 0) put(r - 1, lower);
      put(r, 4);
      if (j < k - 1) put(r + 1, upper);
      if (i < k - 1) put(r + k, upper);
      rowPtr[r + 1] = q;
    }
  }
  return q === capacity
    ? { rows: n, cols: n, rowPtr, colIdx, values }
    : { rows: n, cols: n, rowPtr, colIdx: colIdx.slice(0, q), values: values.slice(0, q) };
}
