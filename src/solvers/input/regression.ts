/**
 * Federated regression data: N samples of n features held by m machines, as the paper's motivating
 * setting has them (each machine its own samples, their features distributed differently).
 *
 * Machine i holds the rows the given assignment puts on it (default: contiguous runs whose sizes differ
 * by at most one, NumPy's array_split), so that a job's partition decides whose samples a row is. Its feature vectors are
 * drawn from N(mean·1 + skew d_i, s_i^2 I) (1 the all-ones vector): d_i a random unit direction of machine i, s_i its scale.
 * skew = 0 gives i.i.d. samples (every machine's data alike); as skew grows the machines' means move
 * apart along their own directions, the feature skew of federated learning. The labels are
 * b = A x_true + e with x_true ~ N(0, I) and e ~ N(0, sigma^2 I): for sigma > 0 and N > n no x solves
 * A x = b exactly, and the least-squares solution is the estimate of x_true.
 *
 * Draw order (so that a spec and seed give the same data bit for bit): the directions d_1..d_m, then
 * x_true, then the rows in order, then the noise.
 */
import { InvalidParameterError } from '../errors.js';
import type { DenseMatrix } from '../matrix.js';
import { SeededRandom } from '../random.js';
import { contiguousAssignment } from './partition.js';

export interface RegressionSpec {
  /** Samples (rows), N >= n. */
  rows: number;
  /** Features (columns). */
  n: number;
  /** Machines holding the samples. */
  machines: number;
  /** Common mean of every feature (default 0). */
  mean?: number;
  /** Distance of machine i's mean from the common one, along d_i (default 0: no skew). */
  skew?: number;
  /** s_i: one scale for every machine, or one per machine (default 1). */
  scale?: number | number[];
  /** Standard deviation of the label noise (default 0: a consistent system). */
  sigma?: number;
  seed?: number;
  /** assignment[k] = the machine of row k (0..machines-1, each owning a row); default: contiguous runs. */
  assignment?: Int32Array;
}

export interface RegressionData {
  A: DenseMatrix;
  b: Float64Array;
  /** The coefficients the labels were made from. */
  xTrue: Float64Array;
  /** assignment[k] = the machine of row k (the spec's, or contiguous runs). */
  assignment: Int32Array;
  /** d_i, machine i's skew direction (unit), at i n. */
  directions: Float64Array;
}

function check(condition: boolean, parameter: string, message: string): void {
  if (!condition) throw new InvalidParameterError(`regression: ${parameter} ${message}.`, { parameter });
}

/** Every check regressionData makes, without drawing anything (the HTTP layer answers 422 before queueing a job). */
export function checkRegressionSpec(spec: RegressionSpec): void {
  const { rows, n, machines: m } = spec;
  const mean = spec.mean ?? 0;
  const skew = spec.skew ?? 0;
  const sigma = spec.sigma ?? 0;
  check(Number.isSafeInteger(n) && n >= 1, 'n', 'must be a positive integer');
  check(Number.isSafeInteger(rows) && rows >= n, 'rows', `must be an integer >= n = ${n} (a tall system)`);
  check(Number.isSafeInteger(m) && m >= 1 && m <= rows, 'machines', `must be an integer in [1, rows = ${rows}]`);
  check(Number.isFinite(mean), 'mean', 'must be a finite number');
  check(Number.isFinite(skew) && skew >= 0, 'skew', 'must be a finite number >= 0');
  check(Number.isFinite(sigma) && sigma >= 0, 'sigma', 'must be a finite number >= 0');
  const scales = typeof spec.scale === 'object' ? spec.scale : new Array<number>(m).fill(spec.scale ?? 1);
  check(scales.length === m, 'scale', `must be one number or ${m} numbers (one per machine)`);
  check(
    scales.every((s) => Number.isFinite(s) && s > 0),
    'scale',
    'must be finite and > 0',
  );
  if (spec.assignment !== undefined) {
    const { assignment } = spec;
    check(assignment.length === rows, 'assignment', `must give the machine of each of the ${rows} rows`);
    const owned = new Uint8Array(m);
    for (const i of assignment) {
      check(Number.isInteger(i) && i >= 0 && i < m, 'assignment', `must name machines 0..${m - 1}`);
      owned[i] = 1;
    }
    check(
      owned.every((flag) => flag === 1),
      'assignment',
      'must give every machine a row',
    );
  }
}

export function regressionData(spec: RegressionSpec): RegressionData {
  checkRegressionSpec(spec);
  const { rows, n, machines: m } = spec;
  const mean = spec.mean ?? 0;
  const skew = spec.skew ?? 0;
  const sigma = spec.sigma ?? 0;
  const scales = typeof spec.scale === 'object' ? spec.scale : new Array<number>(m).fill(spec.scale ?? 1);
  const rng = new SeededRandom(spec.seed ?? 1);

  const directions = rng.fillNormal(new Float64Array(m * n));
  for (let i = 0; i < m; i++) {
    let norm = 0;
    for (let j = 0; j < n; j++) norm += directions[i * n + j] ** 2;
    norm = Math.sqrt(norm);
    for (let j = 0; j < n; j++) directions[i * n + j] /= norm;
  }
  const xTrue = rng.fillNormal(new Float64Array(n));
  const assignment = spec.assignment ?? contiguousAssignment(rows, m);
  const data = new Float64Array(rows * n);
  for (let k = 0; k < rows; k++) {
    const i = assignment[k];
    rng.fillNormal(data, 0, scales[i], k * n, n);
    for (let j = 0; j < n; j++) data[k * n + j] += mean + skew * directions[i * n + j];
  }
  const b = new Float64Array(rows);
  for (let k = 0; k < rows; k++) {
    let s = 0;
    for (let j = 0; j < n; j++) s += data[k * n + j] * xTrue[j];
    b[k] = s;
  }
  if (sigma > 0) for (let k = 0; k < rows; k++) b[k] += sigma * rng.nextNormal();
  return { A: { rows, cols: n, data }, b, xTrue, assignment, directions };
}
