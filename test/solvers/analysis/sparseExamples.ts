/**
 * Sparse systems for the tests and measurements of the sparse analysis, built directly in CSR.
 *
 * The paper's Example 1 (total orthogonality) at sizes the dense path cannot hold: A block diagonal
 * up to a column permutation, blocks of `blockSize` rows i.i.d. N(0, 1) over their own run of columns
 * (as src/solvers/input/generators.ts's block-diagonal generator with blockSize), then one seeded
 * shuffle of the columns. Each block goes to one machine, the blocks dealt round-robin over the m
 * machines, so every machine holds whole blocks with rows scattered over A and the machines' column
 * supports are disjoint: S = I, kappa(S) = 1, theta_H = pi/2, and APC is exact after one iteration
 * (Proposition 1).
 */
import { partitionFromAssignment, type Partition } from '../../../src/solvers/problem.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import type { CsrMatrix } from '../../../src/solvers/sparse/csr.js';

export interface SparseExample {
  A: CsrMatrix;
  partition: Partition;
}

export function permutedBlockDiagonal(n: number, blockSize: number, m: number, seed: number): SparseExample {
  const rng = new SeededRandom(seed);
  const blocks = Math.ceil(n / blockSize);
  // Column j of the result is column perm[j] of the block-diagonal matrix: block column c goes to
  // position inverse[c].
  const perm = rng.permutation(n);
  const inverse = new Int32Array(n);
  for (let j = 0; j < n; j++) inverse[perm[j]] = j;
  let nnz = 0;
  for (let b = 0; b < blocks; b++) {
    const size = Math.min(blockSize, n - b * blockSize);
    nnz += size * size;
  }
  const rowPtr = new Int32Array(n + 1);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  const order = new Int32Array(blockSize);
  const assignment = new Int32Array(n);
  let q = 0;
  for (let b = 0; b < blocks; b++) {
    const start = b * blockSize;
    const size = Math.min(blockSize, n - start);
    // The block's columns in ascending order of their shuffled positions (CSR rows are sorted).
    for (let t = 0; t < size; t++) order[t] = inverse[start + t];
    const sorted = order.subarray(0, size).sort();
    for (let r = start; r < start + size; r++) {
      for (let t = 0; t < size; t++) {
        colIdx[q] = sorted[t];
        values[q++] = rng.nextNormal();
      }
      rowPtr[r + 1] = q;
      assignment[r] = b % m;
    }
  }
  return { A: { rows: n, cols: n, rowPtr, colIdx, values }, partition: partitionFromAssignment(assignment, m) };
}
