/**
 * The step rules: how a method moves its estimate x (and the vector it carries) given G, the sum of the
 * machines' terms. One home for the loops of the single-vector gradient methods (./gradientPass.ts) and of
 * the block step phase (./blockShard.ts); the addon's step (native/src/block_step.c, by STEP_RULE_CODE)
 * does each entry's operations in the same order, so both backends' loops give the same bits.
 *   dgd       x -= alpha G                                   (DGD, ../algorithms/dgd.ts)
 *   dhbm      z = beta z + G; x -= alpha z                    (D-HBM, z carried)
 *   dnag      y' = x - alpha G; x = y' + beta (y' - y); y = y' (D-NAG, y carried)
 *   cimmino   x += alpha G                                   (block Cimmino, alpha = nu)
 *   consensus x = alpha (G + m y) + beta x                    (block APC / MLM: G the offsets' sum, y carried)
 */
import { stripStart } from './storage.js';

export type StepRuleName = 'consensus' | 'dgd' | 'cimmino' | 'dhbm' | 'dnag';

/** A rule and its parameters (beta unused by DGD and Cimmino). */
export interface StepRule {
  readonly rule: StepRuleName;
  readonly alpha: number;
  readonly beta: number;
}

/** The rules' codes in the addon's step (native/src/block_step.c). */
export const STEP_RULE_CODE: Record<StepRuleName, number> = { consensus: 0, dgd: 1, cimmino: 2, dhbm: 3, dnag: 4 };

/** Whether `rule` carries a vector besides x (D-HBM's z, D-NAG's y, the consensus methods' y). */
export function ruleCarries(rule: StepRuleName): boolean {
  return rule !== 'dgd' && rule !== 'cimmino';
}

/**
 * Applies `rule` to entries [at, at + size) of x and carried, with G's entries at sums[from ..]
 * (`machines`: the consensus rule's m). The same operations, in the same order, as the addon's.
 */
export function applyStepRule(
  rule: StepRuleName,
  alpha: number,
  beta: number,
  machines: number,
  x: Float64Array,
  carried: Float64Array,
  at: number,
  sums: Float64Array,
  from: number,
  size: number,
): void {
  const shift = from - at;
  const end = at + size;
  if (rule === 'dgd') for (let e = at; e < end; e++) x[e] -= alpha * sums[shift + e];
  else if (rule === 'cimmino') for (let e = at; e < end; e++) x[e] += alpha * sums[shift + e];
  else if (rule === 'dhbm')
    for (let e = at; e < end; e++) {
      const z = beta * carried[e] + sums[shift + e];
      carried[e] = z;
      x[e] -= alpha * z;
    }
  else if (rule === 'dnag')
    for (let e = at; e < end; e++) {
      const yNext = x[e] - alpha * sums[shift + e];
      x[e] = yNext + beta * (yNext - carried[e]);
      carried[e] = yNext;
    }
  else for (let e = at; e < end; e++) x[e] = alpha * (sums[shift + e] + machines * carried[e]) + beta * x[e];
}

/** A machine's (or chunk's) support as the addon's step reads it. */
export interface SupportOf {
  readonly c: number;
  readonly full: boolean;
  readonly cols: Int32Array;
}

/** Machines' supports as the steps read them (see stepLayout). */
export interface StepLayout {
  readonly strip: Int32Array;
  readonly cols: Int32Array;
  readonly colsOffset: Int32Array;
}

/**
 * The supports as the addon's step reads them (native/src/block_step.c blockStepLayout): strip[i] the first
 * column when machine i's support is consecutive columns (0 when full), else -1 and its columns in cols from
 * colsOffset[i]; its term is then at colsOffset[i] K in the output, the terms back to back in machine order.
 */
export function stepLayout(machines: readonly SupportOf[]): StepLayout {
  const m = machines.length;
  const strip = new Int32Array(m);
  const colsOffset = new Int32Array(m + 1);
  machines.forEach(({ c, full, cols }, i) => {
    strip[i] = full ? 0 : stripStart(cols);
    colsOffset[i + 1] = colsOffset[i] + c;
  });
  const cols = new Int32Array(colsOffset[m]);
  machines.forEach((machine, i) => {
    if (strip[i] < 0) cols.set(machine.cols, colsOffset[i]);
  });
  return { strip, cols, colsOffset };
}

/** Lower bound: the first t in [0, c) with cols[t] >= row (c if none). */
function firstAtOrAfter(cols: Int32Array, row: number): number {
  let lo = 0;
  let hi = cols.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cols[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** sums (rows r0 .. r1 of an n x w block) += the rows of machine's term (c x w on its support, from output[offset]) that fall in them. */
export function addTermRows(
  machine: SupportOf,
  output: Float64Array,
  offset: number,
  r0: number,
  r1: number,
  w: number,
  sums: Float64Array,
): void {
  const { c, full, cols } = machine;
  const strip = full ? 0 : stripStart(cols);
  if (strip >= 0) {
    // The support's rows [strip, strip + c) are contiguous in the block too.
    const lo = Math.max(r0, strip);
    const hi = Math.min(r1, strip + c);
    const to = (lo - r0) * w;
    const from = offset + (lo - strip) * w;
    for (let e = 0; e < (hi - lo) * w; e++) sums[to + e] += output[from + e];
    return;
  }
  const tEnd = firstAtOrAfter(cols, r1);
  for (let t = firstAtOrAfter(cols, r0); t < tEnd; t++) {
    const to = (cols[t] - r0) * w;
    const from = offset + t * w;
    for (let j = 0; j < w; j++) sums[to + j] += output[from + j];
  }
}

/**
 * The step on rows [first, end) of the n x w blocks in input (X at 0, the carried block at 2 n K; for one vector, K =
 * w = 1, the rows are the system's columns): G's rows summed from 0 over the machines' terms in machine order
 * (machine i's c_i x w at output[summed + termOffset[i]]), into sums, then the rule on X and the carried block; as many
 * rows at a time as sums holds (the tile does not change a bit). The layout the addon's step reads, and its
 * operations. Every row is written by the one call whose range holds it, and reads only its own entries: ranges on
 * several threads give the bits of one.
 */
export function stepRows(
  machines: readonly SupportOf[],
  termOffset: ArrayLike<number>,
  summed: number,
  step: StepRule,
  n: number,
  K: number,
  w: number,
  first: number,
  end: number,
  input: Float64Array,
  output: Float64Array,
  sums: Float64Array,
): void {
  const { rule, alpha, beta } = step;
  const m = machines.length;
  const tileRows = Math.max(1, Math.floor(sums.length / w));
  // Empty for a rule that carries nothing (its input has no carried block), and then not read.
  const carried = input.subarray(2 * n * K, 2 * n * K + n * w);
  for (let r0 = first; r0 < end; r0 += tileRows) {
    const r1 = Math.min(end, r0 + tileRows);
    sums.fill(0, 0, (r1 - r0) * w);
    for (let i = 0; i < m; i++) addTermRows(machines[i], output, summed + termOffset[i], r0, r1, w, sums);
    applyStepRule(rule, alpha, beta, m, input, carried, r0 * w, sums, 0, (r1 - r0) * w);
  }
}
