/**
 * Numbers in the sentences the service writes (stop reasons, the recommendation's explanation): a
 * value within 1e-3 of 1 but not 1, a rate or the paper's c = (m - 1) cos(theta_H), is written as
 * 1 - d or 1 + d with d in scientific notation, so that rho = 1 - 1.06e-5 never reads as 1.
 */

/**
 * `1 - d` / `1 + d` for 0.999 < x < 1.001, x != 1 (d with `digits` decimals); null otherwise. `gap`, 1 - x computed
 * without cancellation (a rate's, ./algorithms/types.ts OptimalTuning), is d wherever it is given and x <= 1: for an x
 * that rounds to 1, and for any other near 1, whose 1 - x has lost digits to cancellation.
 */
export function closeToOneText(x: number, digits = 2, gap = 0): string | null {
  if (gap > 0 && x > 0.999 && x <= 1) return `1 - ${gap.toExponential(digits)}`;
  if (x > 0.999 && x < 1) return `1 - ${(1 - x).toExponential(digits)}`;
  if (x > 1 && x < 1.001) return `1 + ${(x - 1).toExponential(digits)}`;
  return null;
}

/**
 * A tolerance as the user gave it, in scientific notation with the fewest digits that give it back: 1e-8 -> "1e-8",
 * 2.5e-7 -> "2.5e-7" (toExponential(0) wrote "3e-7"); 17 significant digits give any double back.
 */
export function toleranceText(x: number): string {
  for (let digits = 0; digits < 16; digits++) {
    const text = x.toExponential(digits);
    if (Number(text) === x) return text;
  }
  return x.toExponential(16);
}
