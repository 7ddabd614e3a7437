/**
 * The two products every iteration is made of, on a machine's rows X (p x c, row-major, e.g. A_i or
 * Q_i^T restricted to its column support): X v (a dot product per row) and X^T w (a combination of
 * the rows). Each row k is read only over its nonzero extent [start[k], end[k]) (see MachineData):
 * skipping exact zeros changes no result and makes banded and sparse data cheap.
 */

/** out[outOffset + k] = sum_t X[k][t] v[t] for k < p. */
export function multiplyRows(
  x: Float64Array,
  p: number,
  c: number,
  start: Int32Array,
  end: Int32Array,
  v: Float64Array,
  out: Float64Array,
  outOffset = 0,
): void {
  for (let k = 0; k < p; k++) {
    const off = k * c;
    let s = 0;
    for (let t = start[k], e = end[k]; t < e; t++) s += x[off + t] * v[t];
    out[outOffset + k] = s;
  }
}

/** y[yOffset + t] += scale * sum_k w[wOffset + k] X[k][t] for t < c. */
export function accumulateRowCombination(
  x: Float64Array,
  p: number,
  c: number,
  start: Int32Array,
  end: Int32Array,
  w: Float64Array,
  wOffset: number,
  scale: number,
  y: Float64Array,
  yOffset = 0,
): void {
  for (let k = 0; k < p; k++) {
    const coef = scale * w[wOffset + k];
    if (coef === 0) continue;
    const off = k * c - yOffset;
    for (let t = start[k] + yOffset, e = end[k] + yOffset; t < e; t++) y[t] += coef * x[off + t];
  }
}
