/**
 * Smallest principal angles theta_ij between the machines' row spaces R(A_i), R(A_j) and the
 * cross-machine angular heterogeneity theta_H = min_{i<j} theta_ij (SPEC "Heterogeneity metrics").
 *
 * cos(theta_ij) = c = sigma_max(G_ij), G_ij = Q_i^T Q_j (the paper's Principal Angle Computation
 * theorem), here by Lanczos on the smaller of G^T G and G G^T, or by a bidiagonalization when Lanczos has not
 * converged within BLOCK_LANCZOS_STEPS steps; on blocks of at most SMALL_BLOCK rows or columns by the dense
 * symmetric eigensolver of that product.
 * arccos(c) amplifies the error of c by 1/sin(theta): fine for wide angles, useless below ~1e-8 rad.
 * So when c >= NEAR_PARALLEL_COSINE we also compute s = sigma_min(Q_b - Q_a G_ab) (b the basis with
 * fewer columns; its singular values are the sines of the principal angles, Bjorck-Golub,
 * Knyazev-Argentati) without squaring, and take theta = atan2(s, c), accurate to a few eps absolute at any
 * angle: as |W v| for c's own singular vector v where Lanczos or the dense eigensolver found it (sineFromSingularVector: two products with the
 * bases), else by the QR of W (QR + bidiagonalization + bisection, singularValues.ts). Below that cosine
 * (theta > 0.45 rad) arccos(c) costs at most 1 / sin(0.45) ~ 2.3 times the error of c (a few eps
 * from the rounding of G_ij; the Lanczos residual bound is 1e-13 c and its Ritz value error is of
 * second order in it), so the sine, which costs about two Gram blocks, is skipped there.
 * With the addon's kernels W is formed by dgemm.
 */
import { runSync, type Work } from '../cooperative.js';
import type { DenseSystem, DenseMachineData } from '../distributed/distributedSystem.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { lanczosWork, type SymmetricOperator } from '../eigen/lanczos.js';
import { symmetricEigen } from '../eigen/symmetricEigen.js';
import { bidiagonalOfColumnsWork, bidiagonalSingularValue } from '../linalg/singularValues.js';
import { norm2 } from '../matrix.js';
import { gramBlock, gramBlockFromRowGram, gramBlockIntoWork, gramBlocksWork, type GramBlocks, type RowGram } from './gramBlocks.js';
import { triangularConditionEstimate } from './kappaS.js';

/** cos(theta) at and above which theta is computed as atan2(sin, cos) (theta <= 0.451 rad). */
export const NEAR_PARALLEL_COSINE = 0.9;

export interface PairAngle {
  theta: number;
  /** sigma_max(Q_i^T Q_j). */
  cos: number;
}

export interface PrincipalAngles {
  /** theta[i][j], symmetric, 0 on the diagonal. */
  theta: number[][];
  thetaH: number;
  /** sigma_max of the Gram block of the pair attaining theta_H (0 when m = 1). */
  cosThetaH: number;
  /** The first (i, j), i < j, in lexicographic order attaining theta_H; null when m = 1. */
  thetaHPair: [number, number] | null;
}

/**
 * Lanczos steps sigma_max of a Gram block gets before a bidiagonalization takes over (largestSingularValueWork). Lanczos
 * usually needs a few (a top singular value apart from the rest, as a common mean direction of the rows gives: 16
 * steps at p = 400), some dozens when the top is denser (Gaussian, mean 0, m = 10: between 48 and 96 at p = 200), and
 * up to p when it is clustered (two random halves of R^n), where the bidiagonalization's fixed ~(8/3) p^3 costs less.
 * `node --import tsx bench/blockSigmaMax.ts <backend>` (every block's sigma_max, Gaussian n = 400 to 2000, m = 2 to
 * 10, mean 0 and 1, 2026-12-05): with 96 steps, 1.6-2.3x the bidiagonalization's time on the blocks of two machines
 * (Lanczos to the end: 2.4-7x), and Lanczos's own time on four to ten, 1.5-10x below the bidiagonalization's, on
 * both backends; 24 or 48 steps gave up on the mean-0 blocks of four to ten machines and cost more there.
 */
export const BLOCK_LANCZOS_STEPS = 96;
/**
 * Blocks with at most this many rows or columns go to the dense symmetric eigensolver of M^T M at once (smallBlockTop):
 * Lanczos's calls and checks cost more there (an analysis of n = 50, m = 5, 10 blocks of 10 x 10, bench/tinyJobCompute.ts).
 */
const SMALL_BLOCK = 32;

/**
 * sigma_max of a Gram block and its singular vector on the block's smaller side (the basis with fewer vectors, b of
 * sineOfSmallestAngleWork: that of G_ab^T G_ab's top, which W = Q_b - Q_a G_ab maps to the sine). `vector` null: none
 * known (the bidiagonalization's route). `squareError` bounds how far |W vector|^2 exceeds sigma_min(W)^2: the
 * vector's Rayleigh quotient is the Ritz value theta, within (residual + rounding floor)^2 / gap of lambda_max
 * (Kato-Temple), and |W v|^2 = 1 - v^T G_ab^T G_ab v for orthonormal bases.
 */
export interface BlockTop {
  c: number;
  vector: Float64Array | null;
  squareError: number;
}

/**
 * sigma_max of a rows x cols block: by Lanczos on the smaller of G^T G, G G^T (M^T M, M = G or G^T with
 * p = min(rows, cols) columns) for at most `steps` steps, then, unconverged, by bidiagonalization (LAPACK's by panels
 * with the addon). Other `steps` than BLOCK_LANCZOS_STEPS are for bench/blockSigmaMax.ts's comparisons.
 */
export function* largestSingularValueWork(
  kernels: Kernels,
  g: Float64Array,
  rows: number,
  cols: number,
  steps = BLOCK_LANCZOS_STEPS,
): Work<number> {
  return (yield* blockTopWork(kernels, g, rows, cols, steps)).c;
}

export function* blockTopWork(kernels: Kernels, g: Float64Array, rows: number, cols: number, steps = BLOCK_LANCZOS_STEPS): Work<BlockTop> {
  // One row or one column: the smaller side has a single vector, exact.
  if (rows === 1 || cols === 1) return { c: norm2(g, 0, rows * cols), vector: Float64Array.of(1), squareError: 0 };
  const p = Math.min(rows, cols);
  const c = Math.max(rows, cols);
  if (steps > 0 && p <= SMALL_BLOCK) return smallBlockTop(kernels, g, rows, cols);
  if (steps > 0) {
    const top = yield* lanczosTopWork(kernels, g, rows, cols, steps);
    if (top !== null) return top;
  }
  // The bidiagonalization's p columns of length c, by rows: M^T.
  const columns = rows <= cols ? Float64Array.from(g.subarray(0, rows * cols)) : transposed(g, rows, cols);
  const { d, e } = yield* bidiagonalOfColumnsWork(kernels, columns, p, c);
  return { c: bidiagonalSingularValue(d, e, p - 1), vector: null, squareError: Infinity };
}

/**
 * blockTopWork on a block of at most SMALL_BLOCK rows or columns: every eigenpair of S = M^T M (p x p, M = G or G^T
 * with p columns) by the dense symmetric eigensolver, the top one's vector always (a near-parallel pair's sine from
 * it: sineFromSingularVector). Lanczos's p steps cost ~10x more there (its calls and convergence checks; the analysis
 * of n = 50, m = 5, every pair near-parallel: bench/tinyJobCompute.ts). sigma_max = sqrt(lambda_max(S)), whose
 * rounding (eps |S|) costs c ~eps/2, as Lanczos's route on larger blocks. The vector's squareError is Kato-Temple's
 * (residual + rounding floor)^2 / gap with its residual |S v - lambda v| computed and the gap to the next eigenvalue.
 */
function smallBlockTop(kernels: Kernels, g: Float64Array, rows: number, cols: number): BlockTop {
  const p = Math.min(rows, cols);
  const c = Math.max(rows, cols);
  const m = cols <= rows ? g : transposed(g, rows, cols);
  const gram = new Float64Array(p * p);
  kernels.dense.gemm(true, p, p, c, 1, m, p, m, p, 0, gram, p);
  // Symmetric to the bit (the product's two triangles may round apart).
  for (let i = 0; i < p; i++)
    for (let j = 0; j < i; j++) {
      const mean = 0.5 * (gram[i * p + j] + gram[j * p + i]);
      gram[i * p + j] = mean;
      gram[j * p + i] = mean;
    }
  const vectors = Float64Array.from(gram);
  const values = new Float64Array(p);
  symmetricEigen(vectors, p, values, new Float64Array(p));
  let top = 0;
  for (let k = 1; k < p; k++) if (values[k] > values[top]) top = k;
  let next = -Infinity;
  for (let k = 0; k < p; k++) if (k !== top && values[k] > next) next = values[k];
  const theta = Math.max(values[top], 0);
  const vector = Float64Array.from({ length: p }, (_, i) => vectors[i * p + top]);
  let residual2 = 0;
  for (let i = 0; i < p; i++) {
    let sv = 0;
    for (let j = 0; j < p; j++) sv += gram[i * p + j] * vector[j];
    residual2 += (sv - theta * vector[i]) ** 2;
  }
  // Lanczos's rounding floor (lanczosTopWork) with p steps.
  const residual = Math.sqrt(residual2) + 4 * Number.EPSILON * Math.sqrt(p + 1) * theta;
  const gap = theta - next;
  return { c: Math.sqrt(theta), vector, squareError: gap > 0 ? (residual * residual) / gap : Infinity };
}

/** blockTopWork's Lanczos (null: not converged within `steps`), with the Ritz vector for a near-parallel pair only. */
function* lanczosTopWork(kernels: Kernels, g: Float64Array, rows: number, cols: number, steps: number): Work<BlockTop | null> {
  const p = Math.min(rows, cols);
  const c = Math.max(rows, cols);
  // M (c x p, row-major): G when it has the fewer columns, else G^T.
  const m = cols <= rows ? g : transposed(g, rows, cols);
  const scratch = new Float64Array(c);
  const op: SymmetricOperator = { size: p, apply: (x, y) => kernels.dense.normalProduct(m, c, p, x, y, scratch) };
  // The vector serves the sine of a near-parallel pair only (sineFromSingularVector): formed for those alone.
  const wanted = (theta: number): boolean => theta >= NEAR_PARALLEL_COSINE * NEAR_PARALLEL_COSINE;
  const vector = new Float64Array(p);
  const result = yield* lanczosWork(kernels, op, { which: 'largest', maxIterations: steps, ritzVector: vector, ritzVectorIf: wanted });
  if (!result.converged) return null;
  const theta = Math.max(result.largest, 0);
  // The Ritz residual with lanczosRunWork's rounding floor (4 eps sqrt(steps + 1) |Op|).
  const residual = result.residualLargest + 4 * Number.EPSILON * Math.sqrt(result.iterations + 1) * theta;
  const squareError = result.gapLargest > 0 ? (residual * residual) / result.gapLargest : Infinity;
  return { c: Math.sqrt(theta), vector: wanted(result.largest) ? vector : null, squareError };
}

/** G^T (cols x rows, row-major) of a rows x cols block. */
function transposed(g: Float64Array, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let t = 0; t < cols; t++) out[t * rows + r] = g[r * cols + t];
  return out;
}

/** Position of each of `cols` in the ascending union `union`. */
function positionsIn(cols: Int32Array, union: Int32Array): Int32Array {
  const pos = new Int32Array(cols.length);
  let u = 0;
  for (let t = 0; t < cols.length; t++) {
    while (union[u] !== cols[t]) u++;
    pos[t] = u;
  }
  return pos;
}

function unionOf(a: Int32Array, b: Int32Array): Int32Array {
  const out: number[] = [];
  let s = 0;
  let t = 0;
  while (s < a.length || t < b.length) {
    if (t >= b.length || (s < a.length && a[s] < b[t])) out.push(a[s++]);
    else if (s >= a.length || b[t] < a[s]) out.push(b[t++]);
    else {
      out.push(a[s++]);
      t++;
    }
  }
  return Int32Array.from(out);
}

/** Rows of a machine's Q_i^T spread onto the ascending `union` of supports (Q_i^T itself when full). */
function basisOnUnion(machine: DenseMachineData, union: Int32Array | null, len: number): Float64Array {
  if (union === null) return machine.q;
  const pos = positionsIn(machine.cols, union);
  const out = new Float64Array(machine.p * len);
  for (let k = 0; k < machine.p; k++) {
    const src = k * machine.c;
    const dst = k * len;
    for (let t = 0; t < machine.c; t++) out[dst + pos[t]] = machine.q[src + t];
  }
  return out;
}

/**
 * sin(theta) = sigma_min(W), W = Q_b - Q_a G_ab (G_ab = Q_a^T Q_b), W stored transposed on the
 * union of the supports: row k of W^T is q_b,k - sum_l G_ab[l, k] q_a,l.
 * `gT` is G_ab^T (p_b x p_a, row-major).
 */
function* sineOfSmallestAngleWork(kernels: Kernels, a: DenseMachineData, b: DenseMachineData, gT: Float64Array): Work<number> {
  const union = a.full && b.full ? null : unionOf(a.cols, b.cols);
  const len = union === null ? a.c : union.length;
  const qa = basisOnUnion(a, union, len);
  const qb = basisOnUnion(b, union, len);
  yield undefined;
  // Copied by slices of rows: at p_b = 1656, len = 3312 the copy alone holds the thread ~30 ms.
  const wt = new Float64Array(b.p * len);
  for (let k = 0; k < b.p; k += 256) {
    wt.set(qb.subarray(k * len, Math.min(b.p, k + 256) * len), k * len);
    yield undefined;
  }
  const pa = a.p;
  // W^T -= G_ab^T Q_a^T, by row slices of the kernels' size (between two yields).
  const slice = kernels.dense.productRows(pa * len);
  for (let k0 = 0; k0 < b.p; k0 += slice) {
    kernels.dense.subtractProductRows(gT, qa, wt, pa, len, k0, Math.min(b.p, k0 + slice));
    yield undefined;
  }
  const { d, e } = yield* bidiagonalOfColumnsWork(kernels, wt, b.p, len);
  return bidiagonalSingularValue(d, e, 0);
}

/** Smallest sine sineFromSingularVector gives (theta ~ 1e-3 rad); below it the QR of W decides, as before. */
const SINE_FROM_VECTOR_MIN = 1e-3;

/**
 * sin(theta) = |W v| for W = Q_b - Q_a G_ab and v the top right singular vector of G_ab (BlockTop.vector): W^T W =
 * I - G_ab^T G_ab for orthonormal bases, so v is W's right singular vector of sigma_min(W), and |W v| is found from
 * two products with the bases (~2 p len multiply-adds) where sineOfSmallestAngleWork's QR of W costs ~2 p^2 len. W v =
 * Q_b^T v - Q_a^T (G_ab v) is formed explicitly, as that QR forms W: no 1 - c^2 cancellation, a few eps absolute.
 * null, and the QR decides, when the top's bound does not give s to eps (|W v| - s <= squareError / |W v|), or below
 * SINE_FROM_VECTOR_MIN, where those few eps would be a visible part of s and the tiny angles (1e-10 rad and below)
 * keep the route their accuracy was established on.
 */
export function sineFromSingularVector(
  kernels: Kernels,
  mi: DenseMachineData,
  mj: DenseMachineData,
  g: Float64Array,
  top: BlockTop,
): number | null {
  const v = top.vector;
  if (v === null || !Number.isFinite(top.squareError)) return null;
  const bIsI = smallerIsI(mi, mj);
  const a = bIsI ? mj : mi;
  const b = bIsI ? mi : mj;
  // Orthonormal bases only (W^T W = I - G_ab^T G_ab): a machine with dependent rows has zero rows in q.
  if (a.rank !== a.p || b.rank !== b.p) return null;
  // u = G_ab v (length p_a): G_ij^T v when b = i, G_ij v when b = j (g: G_ij, p_i x p_j by rows).
  const u = new Float64Array(a.p);
  if (bIsI) kernels.dense.gemm(true, mj.p, 1, mi.p, 1, g, mj.p, v, 1, 0, u, 1);
  else kernels.dense.gemm(false, mi.p, 1, mj.p, 1, g, mj.p, v, 1, 0, u, 1);
  // Q_b^T v and Q_a^T u on each machine's columns.
  const y = new Float64Array(b.c);
  const z = new Float64Array(a.c);
  kernels.dense.gemm(true, b.c, 1, b.p, 1, b.q, b.c, v, 1, 0, y, 1);
  kernels.dense.gemm(true, a.c, 1, a.p, 1, a.q, a.c, u, 1, 0, z, 1);
  let ss = 0;
  if (a.full && b.full) for (let t = 0; t < y.length; t++) ss += (y[t] - z[t]) * (y[t] - z[t]);
  else {
    const union = unionOf(a.cols, b.cols);
    const w = new Float64Array(union.length);
    const pb = positionsIn(b.cols, union);
    const pa = positionsIn(a.cols, union);
    for (let t = 0; t < y.length; t++) w[pb[t]] += y[t];
    for (let t = 0; t < z.length; t++) w[pa[t]] -= z[t];
    for (let t = 0; t < w.length; t++) ss += w[t] * w[t];
  }
  const sine = Math.sqrt(ss);
  return sine >= SINE_FROM_VECTOR_MIN && top.squareError <= Number.EPSILON * sine ? sine : null;
}

/**
 * r_i + r_j > |C_i u C_j|: R(A_i) (dimension r_i = rank, inside the span of its columns C_i) and R(A_j) then share a
 * direction, and theta_ij = 0 exactly (the sparse path's pairsByDimensionCount, ../sparse/spectrumOfS.ts). The SVD of
 * G_ij gives it to rounding (1.1e-16 on an 8 x 6 case); a nonsingular square A never meets it.
 */
function rowSpacesIntersectByDimension(mi: DenseMachineData, mj: DenseMachineData): boolean {
  let shared = 0;
  for (let k = 0, l = 0; k < mi.c && l < mj.c;) {
    if (mi.cols[k] === mj.cols[l]) {
      shared++;
      k++;
      l++;
    } else if (mi.cols[k] < mj.cols[l]) k++;
    else l++;
  }
  return mi.rank + mj.rank > mi.c + mj.c - shared;
}

/** Whether b, the basis with fewer vectors (W = Q_b - Q_a G_ab), is machine i's (j's on a tie). */
function smallerIsI(mi: DenseMachineData, mj: DenseMachineData): boolean {
  return mj.p > mi.p;
}

/** theta_ij for machines i < j from their Gram block G_ij (null: disjoint supports). */
export function* pairAngleWork(kernels: Kernels, mi: DenseMachineData, mj: DenseMachineData, g: Float64Array | null): Work<PairAngle> {
  if (g === null) return { theta: Math.PI / 2, cos: 0 };
  return yield* angleFromCosineWork(kernels, mi, mj, g, yield* blockTopWork(kernels, g, mi.p, mj.p));
}

/**
 * theta_ij from c = sigma_max(G_ij) (pairAngleWork's second half): acos(c) below NEAR_PARALLEL_COSINE, else atan2(s, c),
 * s from c's singular vector where its bound allows (sineFromSingularVector), else by the QR of W.
 */
function* angleFromCosineWork(
  kernels: Kernels,
  mi: DenseMachineData,
  mj: DenseMachineData,
  g: Float64Array,
  top: BlockTop,
): Work<PairAngle> {
  // A tall system's machines whose ranks exceed the columns they touch together: their row spaces intersect.
  if (rowSpacesIntersectByDimension(mi, mj)) return { theta: 0, cos: 1 };
  const { c } = top;
  if (c < NEAR_PARALLEL_COSINE) return { theta: Math.acos(c), cos: c };
  const sine = sineFromSingularVector(kernels, mi, mj, g, top);
  if (sine !== null) return { theta: Math.atan2(sine, c), cos: Math.min(c, 1) };
  yield undefined;
  // b = the basis with fewer columns; G_ab[l, k] = q_a,l . q_b,k.
  const pi = mi.p;
  const pj = mj.p;
  let s: number;
  if (!smallerIsI(mi, mj)) {
    // a = i, b = j: G_ab = G_ij, so G_ab^T is the transpose of the stored block.
    const gT = new Float64Array(pj * pi);
    for (let l = 0; l < pi; l++) {
      for (let k = 0; k < pj; k++) gT[k * pi + l] = g[l * pj + k];
      if ((l & 255) === 255) yield undefined;
    }
    s = yield* sineOfSmallestAngleWork(kernels, mi, mj, gT);
  } else {
    // a = j, b = i: G_ab = G_ij^T, so G_ab^T is the stored block itself.
    s = yield* sineOfSmallestAngleWork(kernels, mj, mi, g);
  }
  return { theta: Math.atan2(s, c), cos: Math.min(c, 1) };
}

/**
 * theta_H alone, the value principalAnglesWork gives, for a caller that needs no other angle (the partition advisor's
 * best candidate). Every pair's cosine c_ij = sigma_max(G_ij) first; theta_H is the angle of the largest, and only the
 * pairs whose cosine is within NEAR_MAX_COSINE of it may attain it: the sine route (the costly half, a QR of W per
 * pair) runs for those only. The others' angles are larger, since an accurate sine s_ij satisfies s_ij^2 + c_ij^2 = 1
 * to a few eps, far inside that margin. Dense n = 4000, m = 10 (45 pairs, all near 0.06 rad): one pair's sine instead
 * of 45.
 */
export function* thetaHWork(kernels: Kernels, machines: readonly DenseMachineData[], gram: GramBlocks): Work<number> {
  const m = machines.length;
  const cosines: { i: number; j: number; g: Float64Array; top: BlockTop }[] = [];
  for (let i = 0; i < m; i++)
    for (let j = i + 1; j < m; j++) {
      const g = gramBlock(gram, i, j);
      if (g !== null) cosines.push({ i, j, g, top: yield* blockTopWork(kernels, g, machines[i].p, machines[j].p) });
      yield undefined;
    }
  return yield* thetaHOfCosinesWork(kernels, (i) => machines[i], cosines);
}

/**
 * thetaHWork's rule on pairs' cosines (every pair that may attain theta_H among them): the least angle of the pairs
 * within NEAR_MAX_COSINE of the largest cosine; pi/2 without pairs.
 */
function* thetaHOfCosinesWork(
  kernels: Kernels,
  machineOf: (i: number) => DenseMachineData,
  cosines: readonly { i: number; j: number; g: Float64Array; top: BlockTop }[],
): Work<number> {
  let thetaH = Math.PI / 2;
  if (cosines.length === 0) return thetaH;
  const cMax = Math.max(...cosines.map(({ top }) => top.c));
  for (const { i, j, g, top } of cosines)
    if (top.c >= cMax - NEAR_MAX_COSINE)
      thetaH = Math.min(thetaH, (yield* angleFromCosineWork(kernels, machineOf(i), machineOf(j), g, top)).theta);
  return thetaH;
}

/**
 * Largest margin thetaHFromRowGramWork prunes with: above it (ill-conditioned R_i) few pairs would be left out, and
 * thetaHWork's own blocks are the cheaper way.
 */
const ROW_GRAM_MAX_MARGIN = 1e-3;

/** What thetaHFromRowGramWork reads of a machine for its approximate cosines: its rows and R (R^T R = A_i A_i^T). */
export type RowGramMachine = Pick<DenseMachineData, 'p' | 'rows' | 'r' | 'full'> & { readonly rank?: number };

/**
 * theta_H as thetaHWork gives it, to the bit, with most Gram blocks made from the rows' Gram matrix (the partition
 * advisor's, ./gramBlocks.ts gramBlockFromRowGram: ~p^3 multiply-adds a pair, where thetaHWork's product of the bases
 * costs p^2 c). Those cosines are good to `margin`: the products' rounding, n p eps |A_i| |A_j| at most, through R_i^{-T}
 * and R_j^{-1}, at most n p eps kappa(R_i) kappa(R_j) with kappa estimated (triangularConditionEstimate, from below
 * within ~2x: a factor 16 over it). Every pair whose cosine is within `margin` of the largest (all those within
 * NEAR_MAX_COSINE of the largest exact one among them) then gets its block from the bases, and thetaHWork's rule
 * decides on those. A dense square system's machines (full supports, invertible R_i); null when the margin exceeds
 * ROW_GRAM_MAX_MARGIN, for thetaHWork to decide.
 *
 * `machines` need only their R for the approximate cosines (any R with R^T R = A_i A_i^T: the Cholesky factor of the
 * advisor's candidates serves); `machineOf(i)` gives machine i as the system's build makes it (its Q), asked only for the
 * machines of the pairs with exact blocks, so that a candidate held as its R alone has a few machines' Q formed
 * (dense n = 4000, m = 10: those of one or two pairs of the 45) where its system would form all of them.
 */
export function* thetaHFromRowGramWork(
  kernels: Kernels,
  machines: readonly RowGramMachine[],
  rowGram: RowGram,
  machineOf: (i: number) => Work<DenseMachineData>,
): Work<number | null> {
  const m = machines.length;
  if (!machines.every(({ full, rank, p }) => full && (rank ?? p) === p)) return null;
  if (m < 2) return Math.PI / 2;
  let kappa = 0;
  for (const { r, p } of machines) kappa = Math.max(kappa, triangularConditionEstimate(kernels, r, p));
  const pMax = Math.max(...machines.map(({ p }) => p));
  const margin = 16 * rowGram.rows * pMax * Number.EPSILON * kappa * kappa + NEAR_MAX_COSINE;
  if (!(margin <= ROW_GRAM_MAX_MARGIN)) return null;
  const approximate: { i: number; j: number; c: number }[] = [];
  const block = new Float64Array(pMax * pMax);
  const scratch = new Float64Array(pMax * pMax);
  for (let i = 0; i < m; i++)
    for (let j = i + 1; j < m; j++) {
      const [mi, mj] = [machines[i], machines[j]];
      const g = block.subarray(0, mi.p * mj.p);
      gramBlockFromRowGram(kernels, mi, mj, rowGram, g, scratch);
      approximate.push({ i, j, c: (yield* blockTopWork(kernels, g, mi.p, mj.p)).c });
      yield undefined;
    }
  const cut = Math.max(...approximate.map(({ c }) => c)) - margin;
  const exact: { i: number; j: number; g: Float64Array; top: BlockTop }[] = [];
  const made = new Map<number, DenseMachineData>();
  function* madeWork(i: number): Work<DenseMachineData> {
    let machine = made.get(i);
    if (machine === undefined) made.set(i, (machine = yield* machineOf(i)));
    return machine;
  }
  for (const { i, j, c } of approximate) {
    if (c < cut) continue;
    const [mi, mj] = [yield* madeWork(i), yield* madeWork(j)];
    const g = new Float64Array(mi.p * mj.p);
    yield* gramBlockIntoWork(kernels, mi, mj, g, { madds: 0 }, 0);
    exact.push({ i, j, g, top: yield* blockTopWork(kernels, g, mi.p, mj.p) });
  }
  return yield* thetaHOfCosinesWork(kernels, (i) => made.get(i)!, exact);
}

/** How far below the largest pair cosine thetaHWork still computes a pair's angle (c's own error is a few eps). */
const NEAR_MAX_COSINE = 1e-12;

export function* principalAnglesWork(kernels: Kernels, machines: readonly DenseMachineData[], gram: GramBlocks): Work<PrincipalAngles> {
  const m = machines.length;
  const totalPairs = (m * (m - 1)) / 2;
  const pairTheta = new Float64Array(totalPairs);
  const pairCos = new Float64Array(totalPairs);
  let done = 0;
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++) {
      const { theta: t, cos } = yield* pairAngleWork(kernels, machines[i], machines[j], gramBlock(gram, i, j));
      pairTheta[done] = t;
      pairCos[done] = cos;
      done++;
      // A progress object every few pairs (m may be in the thousands with 1 x 1 blocks).
      yield (done & 15) === 0 || done === totalPairs ? { phase: 'principal-angles', fraction: done / totalPairs } : undefined;
    }
  }
  return principalAnglesFromPairs(m, pairTheta, pairCos);
}

/**
 * theta, theta_H, its cosine and its pair from theta_ij and cos(theta_ij) of every pair i < j in
 * lexicographic order (pairIndex); the pair is the first attaining theta_H.
 */
export function principalAnglesFromPairs(m: number, pairTheta: Float64Array, pairCos: Float64Array): PrincipalAngles {
  const theta: number[][] = [];
  for (let i = 0; i < m; i++) theta.push(new Array<number>(m).fill(0));
  let thetaH = Math.PI / 2;
  let cosThetaH = 0;
  let thetaHPair: [number, number] | null = null;
  let pair = 0;
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++, pair++) {
      const t = pairTheta[pair];
      theta[i][j] = theta[j][i] = t;
      if (thetaHPair === null || t < thetaH) {
        thetaH = t;
        cosThetaH = pairCos[pair];
        thetaHPair = [i, j];
      }
    }
  }
  return { theta, thetaH, cosThetaH, thetaHPair };
}

/** Principal angles of a system, computing its Gram blocks. */
export function computePrincipalAngles(system: DenseSystem, kernels: Kernels = selectedKernels()): PrincipalAngles {
  return runSync(
    (function* () {
      const gram = yield* gramBlocksWork(kernels, system.machines);
      return yield* principalAnglesWork(kernels, system.machines, gram);
    })(),
  );
}
