/** Numbers and times as the dashboard shows them. */
import { ALGORITHM_NAMES, type AlgorithmId, type Job, type JobSummary } from './apiTypes.js';

/**
 * 4 significant digits; exponent notation outside [1e-3, 1e4) (34,049.7 read "34050", a count, where the advice's summary
 * and the figures write 3.405e+4). A value that would round to ±1 but
 * is not (a rate of 1 - 1.06e-5) is written 1 - x with x in exponent notation: rounded to "1" it
 * would read as no convergence, and its distance to 1 is what sets the iteration count.
 */
export function formatNumber(value: number | null | undefined, digits = 4): string {
  if (value === null || value === undefined) return '—';
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const near = nearOne(value, digits);
  if (near !== null) return near;
  const magnitude = Math.abs(value);
  if (magnitude >= 1e4 || magnitude < 1e-3) return value.toExponential(digits - 1);
  return Number(value.toPrecision(digits)).toString();
}

/**
 * A setting the user chose (a tolerance): as written when that is short (1e-8, 0.001), not padded to the measured
 * values' digits ("1.000e-8").
 */
export function formatSetting(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return formatNumber(value);
  const written = String(value);
  return written.length <= 7 ? written : formatNumber(value);
}

/**
 * A rate or other number near 1 (the one formatter of rates: tables, legends, the comparison line). `gap`, 1 - rate
 * without cancellation (an analysis' rates carry it), is shown for any rate within 1e-3 of 1, as the server's sentences
 * write it (src/solvers/numberText.ts): 1 - 7.79e-27 for one that rounds to 1, not 1, and the gap's digits, not those
 * 1 - rate has left.
 */
export const formatRate = (value: number | null | undefined, gap?: number): string =>
  value !== null && value !== undefined && value > 0.999 && value <= 1 && gap !== undefined && gap > 0
    ? `1 - ${gap.toExponential(2)}`
    : formatNumber(value);

/** 1 - x or 1 + x (-1 ± x) when `digits` significant digits would show ±1 for a value that is not. */
function nearOne(value: number, digits: number): string | null {
  const magnitude = Math.abs(value);
  // Within 1e-3 of 1, as the server's explanation does, or wherever `digits` would round to 1.
  if (magnitude === 1 || (Math.abs(magnitude - 1) >= 1e-3 && Number(magnitude.toPrecision(digits)) !== 1)) return null;
  // Written as the server's explanation writes rates (src/solvers/analysis/recommendation.ts), ASCII minus.
  const gap = magnitude - 1;
  const away = value < 0 ? gap > 0 : gap < 0;
  return `${value < 0 ? '-1' : '1'} ${away ? '-' : '+'} ${Math.abs(gap).toExponential(Math.min(2, digits - 1))}`;
}

/** With thousands separators; from 1e15 (predicted iterations at a rate within 1e-15 of 1) in exponent notation. */
export function formatInteger(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return Math.abs(value) >= 1e15 ? value.toExponential(3) : value.toLocaleString('en-US');
}

/** An angle in radians, with degrees alongside. */
export function formatAngle(radians: number | null | undefined): string {
  if (radians === null || radians === undefined) return '—';
  return `${formatNumber(radians)} rad (${formatNumber((radians * 180) / Math.PI, 3)}°)`;
}

/**
 * A moment in the reader's time zone, year first ("2026-12-07 19:12:05"): a locale's short date reads 07/12/2026 as
 * 7 December to some readers and 12 July to others.
 */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '—';
  const two = (value: number): string => String(value).padStart(2, '0');
  return (
    `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ` +
    `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`
  );
}

/**
 * How a job's partition was given, in words, and the job it came from (fromJob, fromAdvice) to link to; '—' for a job
 * stored before partitions were recorded.
 */
export function formatPartition(partition: Job['partition']): { text: string; job: string | null } {
  if (partition === null) return { text: '—', job: null };
  switch (partition.kind) {
    case 'machines':
      return { text: `${formatInteger(partition.m)} contiguous blocks of rows`, job: null };
    case 'sizes':
      return { text: 'contiguous blocks of the sizes given', job: null };
    case 'assignment':
      return { text: 'each row assigned to its machine', job: null };
    case 'groups':
      return { text: "each machine's rows listed", job: null };
    case 'random':
      return { text: `random${partition.seed === undefined ? '' : ` (seed ${partition.seed})`}`, job: null };
    case 'fromJob':
      return { text: 'the partition of job', job: partition.fromJob ?? null };
    case 'fromAdvice':
      return { text: 'the best candidate of advise job', job: partition.fromAdvice ?? null };
  }
}

/**
 * A solve's runs as the job list says them: "2 of 6 runs converged", out of the algorithms asked for (one never
 * started, as in a job cancelled first, did not converge); null without a summary (not a solve, not ended with runs).
 */
export function runsConvergedText(job: Pick<JobSummary, 'summary' | 'algorithms'>): { text: string; all: boolean } | null {
  if (!job.summary) return null;
  const asked = Math.max(job.algorithms.length, job.summary.converged.length + job.summary.notConverged.length);
  const converged = job.summary.converged.length;
  return { text: `${converged} of ${asked} ${asked === 1 ? 'run' : 'runs'} converged`, all: converged === asked };
}

export function formatDuration(startIso: string | null, endIso: string | null): string {
  if (!startIso || !endIso) return '—';
  const ms = Date.parse(endIso) - Date.parse(startIso);
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export const yesNo = (value: boolean): string => (value ? 'yes' : 'no');

/**
 * What a job ran on, in a line: "gaussian n = 48 (seed 7, mean 0)", "matrix-market n = 3312, nnz 20,793", "stored M01…",
 * a tall one N x n ("stored M01…, 608 × 188").
 */
export function formatMatrix(matrix: {
  format: string;
  n: number;
  nnz: number | null;
  id?: string;
  /** A tall matrix's columns (its n counts the rows). */
  cols?: number;
  generator?: { generator: string } & Record<string, unknown>;
}): string {
  const nnz = matrix.nnz === null ? '' : `, nnz ${formatInteger(matrix.nnz)}`;
  if (matrix.generator) {
    const { generator, n: columns, rows, ...settings } = matrix.generator;
    const details = Object.entries(settings)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => `${name} ${typeof value === 'number' ? formatNumber(value) : String(value)}`)
      .join(', ');
    // A tall generator (regression: `rows` samples of `n` features) reads N x n; the job's n counts its rows.
    const shape =
      typeof rows === 'number' && typeof columns === 'number'
        ? `${formatInteger(rows)} × ${formatInteger(columns)}`
        : `n = ${formatInteger(matrix.n)}`;
    return `${generator} ${shape}${details ? ` (${details})` : ''}`;
  }
  // A tall matrix reads N x n (it read "n = 608" for 608 x 188).
  const size = matrix.cols === undefined ? `n = ${formatInteger(matrix.n)}` : `${formatInteger(matrix.n)} × ${formatInteger(matrix.cols)}`;
  if (matrix.id) return `stored ${matrix.id}, ${size}${nnz}`;
  return `${matrix.format} ${size}${nnz}`;
}

/** Labels as key=value, comma-separated ('' when none). */
export function formatLabels(labels: Record<string, string> | undefined): string {
  return Object.entries(labels ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
}

/**
 * A job's settings in a line, those its type uses: "tolerance 1e-8, max iterations 20,000" (a solve adds the stopping
 * rules and parameters it was given), "tolerance 1e-8, max iterations 20,000, imbalance 0.05, refinement tries 0" (an
 * advice).
 */
export function formatOptions(type: Job['type'], options: Job['options']): string {
  // Every type predicts iterations to the tolerance within the limit (the time to solution); a solve also runs to them.
  const parts = [`tolerance ${formatSetting(options.tolerance)}`, `max iterations ${formatInteger(options.maxIterations)}`];
  if (type === 'solve') {
    if (options.absoluteTolerance !== undefined) parts.push(`absolute tolerance ${formatSetting(options.absoluteTolerance)}`);
    if (options.errorTolerance !== undefined) parts.push(`error tolerance ${formatSetting(options.errorTolerance)}`);
    if (options.maxWallTimeMs !== undefined) parts.push(`wall-time limit ${formatInteger(options.maxWallTimeMs)} ms`);
    if (options.stopOnStagnation === false) parts.push('not stopped on stagnation');
    const guess = options.initialGuess;
    if (guess !== undefined)
      parts.push(
        guess.kind === 'job' && guess.algorithm !== undefined
          ? `started from job ${guess.job}'s ${ALGORITHM_NAMES[guess.algorithm]} solution`
          : 'started from a given x(0)',
      );
    for (const [algorithm, given] of Object.entries(options.parameters))
      for (const [name, value] of Object.entries(given ?? {}))
        parts.push(`${ALGORITHM_NAMES[algorithm as AlgorithmId]} ${name} ${formatSetting(value)}`);
  }
  if (options.imbalance !== undefined) parts.push(`imbalance ${formatSetting(options.imbalance)}`);
  if (options.refinementTries !== undefined) parts.push(`refinement tries ${options.refinementTries}`);
  return parts.join(', ');
}
