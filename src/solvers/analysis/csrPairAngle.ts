/**
 * theta_ij of two machines of a CSR system: the sparse routes (../sparse/spectrumOfS.ts sparsePairAngleWork), and, for
 * a small pair they leave unconverged, the dense path's computation on the pair's own rows (./principalAngles.ts
 * pairAngleWork): each machine's Householder QR on its column support, the cosine from their Gram block and the sine
 * from W = Q_b - Q_a G_ab.
 *
 * Why: the sparse routes read cos^2 theta from C^T C, where several angles near 0 are one cluster at rounding level
 * (spectrumOfS.ts' limitation). plat362 (kappa(A) = 2e12) on 2 machines has two angles of ~2e-11 rad and more below
 * 1e-8: Lanczos ran its 20,000 products (3.8 s of a 4 s analysis) and gave theta_H = 1.5e-5 with a bound of 1.5e-5,
 * unconverged; the dense bases give 1.96e-11 in milliseconds, as the dense analysis and NumPy's sine route do
 * (scripts/csrPairAngleReference.py). Above DENSE_PAIR_MAX_MADDS the unconverged estimate stands, with its bound.
 */
import type { Work } from '../cooperative.js';
import { denseMachineOfRowsWork } from '../distributed/distributedSystem.js';
import { SingularMatrixError } from '../errors.js';
import type { Kernels } from '../linalg/kernels.js';
import type { DenseMachineData } from '../machines/machineData.js';
import { columnSupport, csrToDense, restrictColumns, selectRows, type CsrMatrix } from '../sparse/csr.js';
import { sparsePairAngleWork, type PairAngleContext, type SparsePairAngle } from '../sparse/spectrumOfS.js';
import { gramBlock, gramBlocksWork } from './gramBlocks.js';
import { pairAngleWork } from './principalAngles.js';

/**
 * Multiply-adds of the dense route (both QRs, the Gram block and the sine's QR of W: ~2 (p_i + p_j)^2 c) up to which an
 * unconverged pair takes it: 2^28, ~0.1 s native (plat362 on 2 machines: ~2.4e7).
 */
export const DENSE_PAIR_MAX_MADDS = 2 ** 28;

/**
 * Operator products after which a pair within DENSE_PAIR_MAX_MADDS leaves the sparse routes for the dense one (their cap
 * is otherwise 20,000: plat362 on 2 machines spent 3.8 s there). The pairs of ../shared/matrices and of the tests'
 * systems that converge take at most a few hundred.
 */
export const SMALL_PAIR_PRODUCTS = 1000;

/** The pair's angle; `kernels`: the calling thread's (a worker's: its backend's, as the plan's). */
export function* csrPairAngleWork(kernels: Kernels, context: PairAngleContext, i: number, j: number): Work<SparsePairAngle> {
  const { a, rowsOfMachine } = context.slots;
  const pi = rowsOfMachine[i].length;
  const pj = rowsOfMachine[j].length;
  const p = pi + pj;
  // Independent rows span at least as many columns: a large pair is told apart without reading its supports.
  const supports =
    2 * p * p * Math.max(pi, pj) <= DENSE_PAIR_MAX_MADDS ? [columnSupport(a, rowsOfMachine[i]), columnSupport(a, rowsOfMachine[j])] : null;
  const small = supports !== null && 2 * p * p * Math.max(supports[0].length, supports[1].length) <= DENSE_PAIR_MAX_MADDS;
  // A small pair's sparse routes stop at SMALL_PAIR_PRODUCTS (a cap those that converge do not reach: the same angle).
  const sparse = yield* sparsePairAngleWork(context, i, j, small ? { maxIterations: SMALL_PAIR_PRODUCTS } : {});
  if (sparse.converged || !small || supports === null) return sparse;
  let angle: { theta: number; cos: number };
  try {
    // Numbered 0 and 1 here (i < j keeps their order): the Gram block G_01 is G_ij.
    const mi = yield* denseMachineOfCsrRowsWork(kernels, a, { rows: rowsOfMachine[i], cols: supports[0], index: 0 });
    const mj = yield* denseMachineOfCsrRowsWork(kernels, a, { rows: rowsOfMachine[j], cols: supports[1], index: 1 });
    const gram = yield* gramBlocksWork(kernels, [mi, mj]);
    angle = yield* pairAngleWork(kernels, mi, mj, gramBlock(gram, 0, 1));
  } catch (error) {
    // Rows the QR finds dependent (the sparse setup's Cholesky did not): the sparse estimate stands, with its bound.
    if (error instanceof SingularMatrixError) return sparse;
    throw error;
  }
  // As the dense analysis' angles: exact up to rounding (a few eps absolute), which the sparse bounds leave out too.
  return {
    theta: angle.theta,
    cos: angle.cos,
    method: 'dense-bases',
    absoluteErrorBound: 0,
    iterations: sparse.iterations,
    converged: true,
  };
}

/** A dense machine of CSR rows on their column support `cols` (b = 0: only its bases are read). */
function denseMachineOfCsrRowsWork(
  kernels: Kernels,
  a: CsrMatrix,
  machine: { rows: Int32Array; cols: Int32Array; index: number },
): Work<DenseMachineData> {
  const { rows, cols, index } = machine;
  const p = rows.length;
  const c = cols.length;
  // A_i on its support, p x c row-major (a pair within DENSE_PAIR_MAX_MADDS: small).
  const onSupport = csrToDense(restrictColumns(selectRows(a, rows), cols)).data;
  return denseMachineOfRowsWork(kernels, { index, rows, p, cols, c, full: c === a.cols, a: onSupport, b: new Float64Array(p) });
}
