/**
 * The analysis of a tall CSR system (N > n) without any N x n dense matrix (./sparseAnalysis.ts is the
 * square one; ./analyze.ts adds the consistency and the tall bounds):
 *  - L = lambda_max(A^T A) by Lanczos on v -> A^T (A v), as for square systems;
 *  - mu = lambda_min(A^T A) by Lanczos on (A^T A)^{-1}, applied through a sparse Cholesky of A^T A
 *    (../distributed/sparseLeastSquares.ts, the factor x_LS reuses). A tall A has no LU; forming A^T A
 *    makes mu's rounding error about kappa(A^T A) eps relative (the square path's LU of A: kappa(A) eps),
 *    1e-12 for kappa(A) = 100, 1e-8 for kappa(A) = 10^4; not included in the reported bound, as there;
 *  - S = sum_i P_i over each machine's row space (its rows, or the independent rows A_S of a machine with
 *    dependent rows, whose Gram factor it holds): lambda_max(S) by Lanczos on S' = Lb^{-1} (A_R A_R^T) Lb^{-T}
 *    over the stacked row bases A_R (S' has S's nonzero spectrum, N_R - n zeros besides when A_R has more
 *    rows than n); lambda_min(S) by Lanczos on S^{-1} through conjugate-gradient solves with S, as there is
 *    no LU of a tall A (./kappaS.ts, its 'conjugate-gradients' option, with the bound this adds);
 *  - theta_ij, theta_H on the machines' row bases (the square path's Lanczos on L_i^{-1} A_i A_j^T L_j^{-T});
 *    phi_i and the local angles on all of A's rows, as the dense tall analysis.
 */
import type { Work } from '../cooperative.js';
import { SingularMatrixError } from '../errors.js';
import type { Kernels } from '../linalg/kernels.js';
import type { CsrSystem } from '../distributed/sparseSystem.js';
import { normalEquationsSolver, projectorSumOperator, rowBasisMachines } from '../distributed/sparseLeastSquares.js';
import { currentThreadNormalOperator, type GramSolver } from '../machines/placement.js';
import type { CsrMatrix } from '../sparse/csr.js';
import { conditionNumberEstimate, spectralEstimateOf, squareRootEstimate } from '../eigen/eigenvalueEstimate.js';
import { eigensolverOptionsOf, KrylovWorkspace, largestEigenvalueWork, smallestEigenvalueByInverseWork } from '../eigen/lanczos.js';
import { machineColumnSlots } from '../sparse/spectrumOfS.js';
import { csrSSpectrumWork } from './kappaS.js';
import { inPhase, type StagedParts } from './parts.js';
import {
  machineGramSolves,
  pairAnglesSpec,
  sBasisSize,
  sparsePrincipalAnglesWork,
  sparseStagedParts,
  SPECTRUM_TOLERANCE,
} from './sparseAnalysis.js';

/** The machines' row bases stacked (machine i's rows contiguous, in machine order) with each machine's rows in it. */
function stackedRowBases(system: CsrSystem): { a: CsrMatrix; rowsOf: Int32Array[] } {
  const blocks = system.machines.map((machine) => machine.projection?.a ?? machine.a);
  let rows = 0;
  let nnz = 0;
  for (const block of blocks) {
    rows += block.rows;
    nnz += block.rowPtr[block.rows];
  }
  const rowPtr = new Int32Array(rows + 1);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  const rowsOf: Int32Array[] = [];
  let row = 0;
  let at = 0;
  for (const block of blocks) {
    const count = block.rowPtr[block.rows];
    colIdx.set(block.colIdx.subarray(0, count), at);
    values.set(block.values.subarray(0, count), at);
    for (let k = 0; k < block.rows; k++) rowPtr[row + k + 1] = at + block.rowPtr[k + 1];
    rowsOf.push(Int32Array.from({ length: block.rows }, (_, k) => row + k));
    row += block.rows;
    at += count;
  }
  return { a: { rows, cols: system.n, rowPtr, colIdx, values }, rowsOf };
}

/**
 * The tall sparse analysis' conditioning first (module comment), then in rest() the principal and
 * local angles; `normal` is the solver with A^T A's factor, for x_LS.
 */
export function* tallSparseStagedPartsWork(kernels: Kernels, system: CsrSystem): Work<{ staged: StagedParts; normal: GramSolver }> {
  const { A, n } = system;
  const workspace = new KrylovWorkspace();
  const lanczos = { tolerance: SPECTRUM_TOLERANCE, ...eigensolverOptionsOf(kernels) };

  yield { phase: 'conditioning', fraction: 0 };
  const normal = normalEquationsSolver(A);
  yield { phase: 'conditioning', fraction: 0.1 };
  const L = spectralEstimateOf(
    yield* inPhase(largestEigenvalueWork(currentThreadNormalOperator(A), lanczos, workspace), 'conditioning', 0.1, 0.2),
  );
  const inverseNormal = { size: n, apply: (x: Float64Array, y: Float64Array) => normal.solve(x, y) };
  const mu = spectralEstimateOf(
    yield* inPhase(smallestEigenvalueByInverseWork(inverseNormal, lanczos, workspace), 'conditioning', 0.2, 0.3),
  );
  const sigmaMax = squareRootEstimate(L).value;
  const sigmaMin = squareRootEstimate(mu).value;
  if (!(sigmaMin > A.rows * Number.EPSILON * sigmaMax)) {
    throw new SingularMatrixError(
      `The tall matrix A is numerically rank-deficient: sigma_max / sigma_min = ${(sigmaMax / sigmaMin).toExponential(2)} is beyond ` +
        `1 / (N eps) = ${(1 / (A.rows * Number.EPSILON)).toExponential(2)}, so the least-squares solution is not unique to working precision.`,
      { sigmaMax, sigmaMin, rows: A.rows, columns: n },
    );
  }

  yield { phase: 'conditioning', fraction: 0.3 };
  const { pairs, factors, lambdaMaxS, lambdaMinS, kappaS } = yield* inPhase(
    tallSSpectrumWork(kernels, system, workspace),
    'conditioning',
    0.3,
    1,
  );
  const staged = sparseStagedParts(
    kernels,
    system,
    pairs,
    factors,
    { lambdaMaxS, lambdaMinS, kappaS },
    { L, mu, kappaAtA: conditionNumberEstimate(L, mu) },
  );
  return { staged, normal };
}

/** The machines' row bases stacked, their column slots, the pairs' spec and the Gram factors' solves (S and the angles read them). */
function tallBasesOf(system: CsrSystem) {
  const basis = stackedRowBases(system);
  const slots = machineColumnSlots(basis.a, basis.rowsOf);
  const pairs = pairAnglesSpec(system, slots);
  return { basis, slots, pairs, factors: machineGramSolves(pairs.factors) };
}

/** S's ends over the machines' row bases (module comment), and what the pair angles read. */
function* tallSSpectrumWork(kernels: Kernels, system: CsrSystem, workspace: KrylovWorkspace) {
  const { basis, slots, pairs, factors } = tallBasesOf(system);
  const sOptions = { tolerance: SPECTRUM_TOLERANCE, basisSize: sBasisSize(basis.a.rows), ...eigensolverOptionsOf(kernels) };
  // A tall A has no LU: lambda_min(S) by conjugate-gradient solves with S (./kappaS.ts).
  const s = () => projectorSumOperator(rowBasisMachines(system), system.n);
  const spectrum = yield* csrSSpectrumWork(slots, factors, { kind: 'conjugate-gradients', s }, sOptions, workspace);
  return { pairs, factors, ...spectrum };
}

/** kappa(S) of a tall CSR system's partition, as its analysis computes it (the partition advisor's ranking). */
export function* tallSparseKappaSWork(kernels: Kernels, system: CsrSystem): Work<number> {
  yield { phase: 'conditioning', fraction: 0 };
  const { factors, kappaS } = yield* tallSSpectrumWork(kernels, system, new KrylovWorkspace());
  factors.release();
  return kappaS.value;
}

/** theta_H of a tall CSR system's partition, as its analysis computes it: the pairs of the machines' row bases. */
export function* tallSparseThetaHWork(kernels: Kernels, system: CsrSystem): Work<number> {
  yield { phase: 'principal-angles', fraction: 0 };
  const { pairs, factors } = tallBasesOf(system);
  try {
    return (yield* sparsePrincipalAnglesWork(kernels, pairs, factors)).thetaH;
  } finally {
    factors.release();
  }
}
