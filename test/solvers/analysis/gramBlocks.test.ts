import { Matrix, QrDecomposition, SingularValueDecomposition } from 'ml-matrix';
import { expect, it } from 'vitest';
import { computeGramBlocks, gramBlock, gramIsIdentity, gramOperator, intersectSupports } from '../../../src/solvers/analysis/gramBlocks.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { describeEachBackend } from '../../support/backends.js';
import { systemOf } from '../../support/systems.js';

function randomRows(n: number, seed: number, density = 1): number[][] {
  const rng = new SeededRandom(seed);
  return Array.from({ length: n }, (_, i) =>
    Array.from({ length: n }, (_, j) => (i === j ? 3 : rng.nextDouble() < density ? 2 * rng.nextDouble() - 1 : 0)),
  );
}

/** Orthonormal basis of the row space of the given rows (ml-matrix QR of A_i^T), n x p. */
function mlBasis(rows: number[][]): Matrix {
  const qr = new QrDecomposition(new Matrix(rows).transpose());
  return qr.orthogonalMatrix.subMatrix(0, rows[0].length - 1, 0, rows.length - 1);
}

describeEachBackend('Gram blocks Q_i^T Q_j', () => {
  it('merges ascending supports', () => {
    const { inA, inB } = intersectSupports(Int32Array.from([0, 2, 3, 7, 9]), Int32Array.from([1, 2, 7, 8, 9, 10]));
    expect(Array.from(inA)).toEqual([1, 3, 4]);
    expect(Array.from(inB)).toEqual([1, 2, 4]);
  });

  for (const density of [1, 0.15]) {
    it(`have the singular values of Q_i^T Q_j for ml-matrix bases (basis-independent; density ${density})`, () => {
      const n = 24;
      const rows = randomRows(n, 7, density);
      const assignment = Array.from({ length: n }, (_, k) => (k * 7) % 3);
      const system = systemOf(rows, assignment, 3);
      const gram = computeGramBlocks(system.machines);
      for (let i = 0; i < 3; i++)
        for (let j = i + 1; j < 3; j++) {
          const g = gramBlock(gram, i, j)!;
          const ours = new SingularValueDecomposition(
            new Matrix(Array.from({ length: gram.sizes[i] }, (_, r) => Array.from(g.subarray(r * gram.sizes[j], (r + 1) * gram.sizes[j])))),
            {
              computeLeftSingularVectors: false,
              computeRightSingularVectors: false,
            },
          ).diagonal;
          const qi = mlBasis(rows.filter((_, k) => assignment[k] === i));
          const qj = mlBasis(rows.filter((_, k) => assignment[k] === j));
          const ref = new SingularValueDecomposition(qi.transpose().mmul(qj), {
            computeLeftSingularVectors: false,
            computeRightSingularVectors: false,
          }).diagonal;
          for (let k = 0; k < ours.length; k++) expect(Math.abs(ours[k] - ref[k])).toBeLessThan(1e-13);
        }
    });
  }

  it('stores disjoint supports as exact zero blocks and recognizes S = I', () => {
    // Block-diagonal after a permutation: machine 0 owns columns {0, 3}, machine 1 {1, 4}, machine 2 {2}.
    const rows = [
      [2, 0, 0, 1, 0],
      [0, 1, 0, 0, 5],
      [0, 0, 4, 0, 0],
      [1, 0, 0, 3, 0],
      [0, 2, 0, 0, 1],
    ];
    const system = systemOf(rows, [0, 1, 2, 0, 1], 3);
    const gram = computeGramBlocks(system.machines);
    expect(Array.from(gram.blockStart)).toEqual([-1, -1, -1]);
    expect(gram.data.length).toBe(0);
    expect(gramBlock(gram, 0, 2)).toBeNull();
    expect(gramIsIdentity(gram)).toBe(true);
  });

  it('applies G = Q^T Q as the explicitly assembled Gram matrix would', () => {
    const n = 18;
    const rows = randomRows(n, 3, 0.3);
    const assignment = Array.from({ length: n }, (_, k) => (k < 4 ? 0 : k < 11 ? 1 : 2));
    const system = systemOf(rows, assignment, 3);
    const gram = computeGramBlocks(system.machines);
    // Q = [Q_1 Q_2 Q_3] from ml-matrix QR, in the same machine order: G = Q^T Q is basis dependent,
    // so compare the spectra instead of the entries.
    const q = new Matrix(n, n);
    let col = 0;
    for (let i = 0; i < 3; i++) {
      const qi = mlBasis(rows.filter((_, k) => assignment[k] === i));
      for (let c = 0; c < qi.columns; c++, col++) for (let r = 0; r < n; r++) q.set(r, col, qi.get(r, c));
    }
    const refSingular = new SingularValueDecomposition(q.transpose().mmul(q)).diagonal;
    const op = gramOperator(selectedKernels(), gram);
    const dense = new Matrix(n, n);
    const e = new Float64Array(n);
    const y = new Float64Array(n);
    for (let c = 0; c < n; c++) {
      e.fill(0);
      e[c] = 1;
      op.apply(e, y);
      for (let r = 0; r < n; r++) dense.set(r, c, y[r]);
    }
    expect(dense.isSymmetric()).toBe(true);
    for (let r = 0; r < n; r++) expect(dense.get(r, r)).toBe(1);
    const ours = new SingularValueDecomposition(dense).diagonal;
    for (let k = 0; k < n; k++) expect(Math.abs(ours[k] - refSingular[k])).toBeLessThan(1e-13);
  });
});
