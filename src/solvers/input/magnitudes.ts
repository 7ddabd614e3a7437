/**
 * The magnitudes the numerical core can square. The analysis and the runs measure row norms, A^T A and residuals as
 * sums of squares, so an entry above ~1e154 overflows and a row whose entries are all below ~1e-154 reads as zero: a
 * well-conditioned matrix scaled by 1e-160 was reported numerically singular, and a rhs of 1e-200 as solved at
 * iteration 0 with a relative residual of 1. Such inputs are refused with a problem that says so; scaling A and b by
 * a power of 2 is exact (x is unchanged, or scales with b alone).
 *
 * The bounds, 2^200 and 2^-200, leave room for what is computed from the entries: with every row's largest entry
 * within them, n <= 2^20 and kappa(A) < 1 / (n eps) <= 2^52 (a matrix beyond is refused as numerically singular by the
 * analysis), sigma_max(A)^2 <= (2^20 2^200)^2 = 2^440, sigma_min(A)^2 >= (2^-200 2^-52)^2 = 2^-504 (a normal number),
 * and |x| <= |b| / sigma_min(A) <= 2^20 2^200 2^252, whose square is at most 2^944 < 2^1024.
 */
import { MagnitudeOutOfRangeError } from '../errors.js';
import { matrixEntryName } from '../matrix.js';

/** Largest magnitude of an entry of A or b: 2^200 (~1.6e60). */
export const LARGEST_MAGNITUDE = 2 ** 200;
/** Smallest largest-entry of a row of A, or of a nonzero b: 2^-200 (~6.2e-61). */
export const SMALLEST_ROW_MAGNITUDE = 2 ** -200;

/**
 * Row `i` of A, whose largest magnitude is `rowMax` (> 0), holds entries the core can square; `largestColumn(i)` finds
 * the offending entry's column for the message.
 */
export function checkMatrixRowMagnitude(i: number, rowMax: number, largestColumn: (i: number) => number): void {
  if (rowMax > LARGEST_MAGNITUDE) {
    const j = largestColumn(i);
    throw new MagnitudeOutOfRangeError(
      `${matrixEntryName(i, j)} is ${rowMax} in magnitude, above 2^200 (~1.6e60), the largest accepted: the analysis and ` +
        'the runs square what is computed from the entries (A^T A, sigma_max(A)^2, the residuals), which can overflow double ' +
        'precision above it. Scale A and b by the same power of 2 (exact; x is unchanged).',
      { row: i, column: j, magnitude: rowMax, limit: LARGEST_MAGNITUDE },
    );
  }
  if (rowMax < SMALLEST_ROW_MAGNITUDE)
    throw new MagnitudeOutOfRangeError(
      `Row ${i} of A has no entry larger than ${rowMax} in magnitude, below 2^-200 (~6.2e-61), the least accepted for ` +
        "a row's largest entry: the analysis squares what is computed from the rows (row norms, sigma_min(A)^2 down to " +
        `eps^2 times theirs), which can underflow double precision below it. Scale the row and b[${i}] by the same power of 2 ` +
        '(exact; x is unchanged).',
      { row: i, magnitude: rowMax, limit: SMALLEST_ROW_MAGNITUDE },
    );
}

/** Index in [from, to) of the first entry of largest nonzero magnitude; `from` when none is above 0. */
export function largestMagnitudeIndex(values: ArrayLike<number>, from: number, to: number): number {
  let largest = 0;
  let at = from;
  for (let k = from; k < to; k++) {
    const magnitude = Math.abs(values[k]);
    if (magnitude > largest) {
      largest = magnitude;
      at = k;
    }
  }
  return at;
}

/** A right-hand side (named `name` in messages, e.g. "rhs") whose entries the core can square; b = 0 stands. */
export function checkRhsMagnitude(b: ArrayLike<number>, name: string): void {
  const at = largestMagnitudeIndex(b, 0, b.length);
  const largest = b.length === 0 ? 0 : Math.abs(b[at]);
  if (largest > LARGEST_MAGNITUDE)
    throw new MagnitudeOutOfRangeError(
      `${name}[${at}] is ${b[at]}, above 2^200 (~1.6e60) in magnitude, the largest accepted: the runs square their ` +
        'residuals, which can overflow double precision above it. Scale A and b by the same power of 2 (exact; x is ' +
        'unchanged), or b alone (x scales with it).',
      { where: `${name}[${at}]`, magnitude: largest, limit: LARGEST_MAGNITUDE },
    );
  if (largest > 0 && largest < SMALLEST_ROW_MAGNITUDE)
    throw new MagnitudeOutOfRangeError(
      `${name}'s largest entry is ${b[at]} (${name}[${at}]), below 2^-200 (~6.2e-61) in magnitude, the least accepted: ` +
        'the runs square their residuals, a small fraction of |b|, which can underflow double precision below it, so they ' +
        'could not measure residuals relative to |b|. Scale b by a power of 2 (exact; x scales with it).',
      { where: `${name}[${at}]`, magnitude: largest, limit: SMALLEST_ROW_MAGNITUDE },
    );
}
