/**
 * The dense analysis split into independent parts, as the paper's Algorithm 2 (docs/SPEC.md,
 * "Distributed computation of theta_H") distributes the computation of theta_H: each part runs
 * anywhere (a BullMQ child job in the service, see src/jobs/splitAnalysis/), and `combineAnalysisParts`
 * assembles what they return into the Analysis that `analyze` computes in one piece, bit for bit:
 * every part runs the very code of the one-piece analysis on the same inputs.
 *
 * The parts (each O(n^3 / parts) on a dense matrix):
 *  - 'pairs': the Gram blocks G_ij = Q_i^T Q_j and theta_ij for the pairs (i, j), j > i, of a group
 *    of consecutive machines i. Algorithm 2 has machine i compute theta_ij for every j, so each pair
 *    twice; here each pair is computed once, by the group of its first machine;
 *  - 'local-angles': the scan of the pairs of rows (k, l), l > k, for a range of rows k (phi_i,
 *    theta_min^(l), Theorem 4);
 *  - 'matrix-conditioning': kappa(A^T A), L, mu (Lanczos, and Lanczos on the inverse through the LU of Q^T
 *    and the machines' R_i, ./conditioning.ts);
 *  - 's-smallest': lambda_min(S) (the LU of Q^T and Lanczos on its inverse).
 * The combine step runs Lanczos on the Gram blocks for lambda_max(S) (it needs all of them; ./kappaS.ts), takes
 * theta_H and its pair from the theta_ij, merges the local scans and assembles rates, bounds and
 * recommendation as `analyze` does.
 */
import { doneWork, runSync, type Work } from '../cooperative.js';
import type { DenseSystem } from '../distributed/distributedSystem.js';
import type { DenseMatrix } from '../matrix.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import type { Partition } from '../problem.js';
import { assembleAnalysis, DEFAULT_ANALYSIS_TOLERANCE, denseAnalysisParts } from './analyze.js';
import type { MatrixConditioning } from './conditioning.js';
import { sConditioningWork, squareMatrixConditioningWork, sSmallestWork, type LanczosEnd } from './kappaS.js';
import { blockIsStored, gramBlockIntoWork, offsetsOf, type GramBlocks } from './gramBlocks.js';
import {
  localAnglesFrom,
  localAnglesScanWork,
  mergeLocalAnglesScans,
  pairsOfRows,
  type LocalAnglesScan,
  type RowRange,
} from './localAngles.js';
import { pairAngleWork, principalAnglesFromPairs } from './principalAngles.js';
import type { Analysis } from './types.js';

export const ANALYSIS_PART_KINDS = ['pairs', 'local-angles', 'matrix-conditioning', 's-smallest'] as const;
export type AnalysisPartKind = (typeof ANALYSIS_PART_KINDS)[number];

/** Consecutive machines [from, to). */
export interface MachineRange {
  from: number;
  to: number;
}

/** One part of the analysis: what it computes, and on which machines or rows. */
export type AnalysisPart =
  | { kind: 'pairs'; machines: MachineRange }
  | { kind: 'local-angles'; rows: RowRange }
  | { kind: 'matrix-conditioning' }
  | { kind: 's-smallest' };

export interface PlannedPart {
  part: AnalysisPart;
  /** Estimated multiply-adds (for ordering the parts and weighing their progress). */
  work: number;
}

/** What a part returns (the combine step's input). */
export type AnalysisPartResult =
  | {
      kind: 'pairs';
      machines: MachineRange;
      /** theta_ij and cos(theta_ij) of the group's pairs, in lexicographic order. */
      theta: Float64Array;
      cos: Float64Array;
      /** 1 where G_ij is stored (the supports of i and j meet), per pair. */
      stored: Uint8Array;
      /** The stored G_ij one after the other (row-major p_i x p_j), in the same order. */
      gram: Float64Array;
    }
  | { kind: 'local-angles'; rows: RowRange; scan: LocalAnglesScan; rowNorms: Float64Array }
  | { kind: 'matrix-conditioning'; conditioning: MatrixConditioning }
  /** 1 / lambda_min(S) from Lanczos on (Q Q^T)^{-1}; null when Q^T has an exactly zero pivot. */
  | { kind: 's-smallest'; inverse: LanczosEnd | null };

/** What a part computes from: the matrix and partition, and the machines' bases when it needs them. */
export interface AnalysisPartInput {
  A: DenseMatrix;
  partition: Partition;
  /** The machines' rows, bases and factors (built on first use: 'pairs' and 's-smallest' need them). */
  system: () => Work<DenseSystem>;
}

/**
 * The parts of the analysis of an n x n matrix partitioned as `sizes`, machine i's rows nonzero in
 * supportSizes[i] columns: `groups` 'pairs' parts (consecutive machines, about equal Gram work),
 * `groups` 'local-angles' parts (consecutive rows, equal numbers of row pairs), and the two
 * conditioning parts; largest first, so that workers taking them in order finish close together.
 */
export function planAnalysisParts(n: number, sizes: readonly number[], supportSizes: readonly number[], groups: number): PlannedPart[] {
  const m = sizes.length;
  const parts: PlannedPart[] = [];
  // Gram work of machine i's pairs: p_i sum_{j > i} p_j |C_i ∩ C_j|, |C_i ∩ C_j| taken as min(c_i, c_j).
  const rowWork = sizes.map((p, i) => {
    let w = 0;
    for (let j = i + 1; j < m; j++) w += sizes[j] * Math.min(supportSizes[i], supportSizes[j]);
    return p * w;
  });
  for (const machines of splitEvenly(rowWork, Math.min(groups, Math.max(1, m - 1)))) {
    if (machines.from >= m - 1) continue;
    let work = 0;
    for (let i = machines.from; i < machines.to; i++) work += rowWork[i];
    parts.push({ part: { kind: 'pairs', machines }, work });
  }
  const scanWork = Array.from({ length: n }, (_, k) => (n - 1 - k) * n);
  for (const rows of splitEvenly(scanWork, Math.min(groups, n)))
    parts.push({ part: { kind: 'local-angles', rows }, work: pairsOfRows(n, rows) * n });
  // An LU (n^3 / 3) and Lanczos on its inverse (four triangular solves a step, ~100 steps).
  const conditioningWork = n ** 3 / 3 + 400 * n * n;
  parts.push({ part: { kind: 'matrix-conditioning' }, work: conditioningWork });
  parts.push({ part: { kind: 's-smallest' }, work: conditioningWork });
  return parts.sort((a, b) => b.work - a.work);
}

/** Consecutive ranges of indices with about equal sums of `work` (at most `count`, none empty). */
function splitEvenly(work: readonly number[], count: number): MachineRange[] {
  const total = work.reduce((sum, w) => sum + w, 0);
  const ranges: MachineRange[] = [];
  let from = 0;
  let done = 0;
  for (let k = 0; k < work.length; k++) {
    done += work[k];
    const target = (total * (ranges.length + 1)) / count;
    if (done >= target && ranges.length < count - 1 && k + 1 < work.length) {
      ranges.push({ from, to: k + 1 });
      from = k + 1;
    }
  }
  if (from < work.length) ranges.push({ from, to: work.length });
  return ranges;
}

/** c_i: the columns where some row of machine i is nonzero (the plan's estimate of the Gram work). */
export function supportSizesOf(A: DenseMatrix, partition: Partition): number[] {
  const n = A.cols;
  const used = new Uint8Array(n);
  return partition.rowsOf.map((rows) => {
    used.fill(0);
    let c = 0;
    for (const row of rows) {
      const off = row * n;
      for (let j = 0; j < n; j++) {
        if (A.data[off + j] !== 0 && used[j] === 0) {
          used[j] = 1;
          c++;
        }
      }
    }
    return c;
  });
}

/** Compute one part. */
export function* analysisPartWork(
  input: AnalysisPartInput,
  part: AnalysisPart,
  kernels: Kernels = selectedKernels(),
): Work<AnalysisPartResult> {
  switch (part.kind) {
    case 'matrix-conditioning':
      return { kind: part.kind, conditioning: yield* squareMatrixConditioningWork(kernels, yield* input.system()) };
    case 's-smallest': {
      const system = yield* input.system();
      const inverse = yield* sSmallestWork(kernels, system, offsetsOf(system.partition.sizes));
      return { kind: part.kind, inverse: inverse === null ? null : { largest: inverse.largest, iterations: inverse.iterations } };
    }
    case 'local-angles': {
      const { scan, rowNorms } = yield* localAnglesScanWork(kernels, input.A, input.partition, part.rows);
      return { kind: part.kind, rows: part.rows, scan, rowNorms };
    }
    case 'pairs':
      return yield* pairsPartWork(kernels, yield* input.system(), part.machines);
  }
}

function* pairsPartWork(kernels: Kernels, system: DenseSystem, group: MachineRange): Work<AnalysisPartResult> {
  const { machines, m } = system;
  let pairs = 0;
  let stored = 0;
  for (let i = group.from; i < group.to; i++) {
    for (let j = i + 1; j < m; j++, pairs++) if (blockIsStored(machines[i], machines[j])) stored += machines[i].p * machines[j].p;
  }
  const theta = new Float64Array(pairs);
  const cos = new Float64Array(pairs);
  const isStored = new Uint8Array(pairs);
  const gram = new Float64Array(stored);
  const pending = { madds: 0 };
  let pair = 0;
  let offset = 0;
  for (let i = group.from; i < group.to; i++) {
    for (let j = i + 1; j < m; j++, pair++) {
      const a = machines[i];
      const b = machines[j];
      let g: Float64Array | null = null;
      if (blockIsStored(a, b)) {
        g = gram.subarray(offset, offset + a.p * b.p);
        offset += a.p * b.p;
        isStored[pair] = 1;
        yield* gramBlockIntoWork(kernels, a, b, g, pending, (pair + 0.5) / pairs);
      }
      const angle = yield* pairAngleWork(kernels, a, b, g);
      theta[pair] = angle.theta;
      cos[pair] = angle.cos;
      yield (pair & 15) === 15 ? { phase: 'principal-angles', fraction: (pair + 1) / pairs } : undefined;
    }
  }
  return { kind: 'pairs', machines: group, theta, cos, stored: isStored, gram };
}

/**
 * The Analysis from every part's result (any order): the same value `analyze` returns for the
 * same system. Throws SingularMatrixError when Q^T was found singular (as `analyze` does).
 */
export function* combineAnalysisPartsWork(
  n: number,
  partition: Partition,
  results: readonly AnalysisPartResult[],
  tolerance = DEFAULT_ANALYSIS_TOLERANCE,
  kernels: Kernels = selectedKernels(),
): Work<Analysis> {
  const { m, sizes } = partition;
  const pairs = results.flatMap((r) => (r.kind === 'pairs' ? [r] : [])).sort((a, b) => a.machines.from - b.machines.from);
  const local = results.flatMap((r) => (r.kind === 'local-angles' ? [r] : []));
  const matrix = results.find((r) => r.kind === 'matrix-conditioning');
  const sSmallest = results.find((r) => r.kind === 's-smallest');
  const totalPairs = (m * (m - 1)) / 2;
  const covered = pairs.reduce((sum, r) => sum + r.theta.length, 0);
  if (covered !== totalPairs || local.length === 0 || !matrix || !sSmallest) {
    throw new RangeError(`combineAnalysisParts: incomplete parts (${covered} of ${totalPairs} pairs, ${local.length} local scans)`);
  }

  // The Gram blocks as gramBlocksWork lays them out: stored blocks in lexicographic pair order.
  const pairTheta = new Float64Array(totalPairs);
  const pairCos = new Float64Array(totalPairs);
  const blockStart = new Float64Array(totalPairs).fill(-1);
  const data = new Float64Array(pairs.reduce((sum, r) => sum + r.gram.length, 0));
  let pair = 0;
  let start = 0;
  for (const r of pairs) {
    pairTheta.set(r.theta, pair);
    pairCos.set(r.cos, pair);
    data.set(r.gram, start);
    let k = 0;
    for (let i = r.machines.from; i < r.machines.to; i++) {
      for (let j = i + 1; j < m; j++, k++) {
        if (!r.stored[k]) continue;
        blockStart[pair + k] = start;
        start += sizes[i] * sizes[j];
      }
    }
    pair += r.theta.length;
    yield undefined;
  }
  const offsets = offsetsOf(sizes);
  const gram: GramBlocks = { m, sizes: [...sizes], offsets, size: offsets[m - 1] + sizes[m - 1], data, blockStart };
  const angles = principalAnglesFromPairs(m, pairTheta, pairCos);

  const s = yield* sConditioningWork(kernels, { gram, n, inverse: sSmallest.inverse });
  const localAngles = localAnglesFrom(mergeLocalAnglesScans(local.map((r) => r.scan)), local[0].rowNorms, partition);
  yield { phase: 'analysis', fraction: 1 };
  return assembleAnalysis(n, partition, denseAnalysisParts(angles, localAngles, matrix.conditioning, s), tolerance);
}

/** The whole split analysis in one process (library use and tests): every part, then the combine step. */
export function analyzeInParts(
  system: DenseSystem,
  groups: number,
  tolerance = DEFAULT_ANALYSIS_TOLERANCE,
  kernels: Kernels = selectedKernels(),
): Analysis {
  const supportSizes = system.machines.map((machine) => machine.c);
  const input = partInputOf(system);
  const results = planAnalysisParts(system.n, system.partition.sizes, supportSizes, groups).map(({ part }) =>
    runSync(analysisPartWork(input, part, kernels)),
  );
  return runSync(combineAnalysisPartsWork(system.n, system.partition, results, tolerance, kernels));
}

/** The input of every part from a system already built (its bases ready). */
export function partInputOf(system: DenseSystem): AnalysisPartInput {
  return { A: system.A, partition: system.partition, system: () => doneWork(system) };
}
