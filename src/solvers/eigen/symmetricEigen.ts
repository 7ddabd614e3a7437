/** The small dense symmetric eigensolver of the thick-restart Lanczos's projected matrices (./lanczos.ts). */
const EPS = Number.EPSILON;

/**
 * Eigenvalues and eigenvectors of the symmetric m x m matrix `a` (row-major; overwritten with the
 * eigenvectors: column j of `a` belongs to values[j], unsorted): Householder tridiagonalization and
 * the implicit QL iteration (EISPACK tred2 / tql2, as JAMA writes them). The reduction works from
 * the last row up and leaves e_{m-1} fixed, so with `lastRowOnly` the QL rotations are applied to the
 * last row alone: the eigenvalues and the last component of each eigenvector (the Ritz residuals)
 * for about a third of the work. `d`, `e`: scratch of length m (`d` may be `values`).
 */
export function symmetricEigen(a: Float64Array, m: number, values: Float64Array, e: Float64Array, lastRowOnly = false): void {
  const d = values;
  const V = a;
  for (let j = 0; j < m; j++) d[j] = V[(m - 1) * m + j];
  for (let i = m - 1; i > 0; i--) {
    let scale = 0;
    let h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(d[k]);
    if (scale === 0) {
      e[i] = d[i - 1];
      for (let j = 0; j < i; j++) {
        d[j] = V[(i - 1) * m + j];
        V[i * m + j] = 0;
        V[j * m + i] = 0;
      }
    } else {
      for (let k = 0; k < i; k++) {
        d[k] /= scale;
        h += d[k] * d[k];
      }
      let f = d[i - 1];
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      d[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      for (let j = 0; j < i; j++) {
        f = d[j];
        V[j * m + i] = f;
        g = e[j] + V[j * m + j] * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += V[k * m + j] * d[k];
          e[k] += V[k * m + j] * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j] /= h;
        f += e[j] * d[j];
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j] -= hh * d[j];
      for (let j = 0; j < i; j++) {
        f = d[j];
        g = e[j];
        for (let k = j; k <= i - 1; k++) V[k * m + j] -= f * e[k] + g * d[k];
        d[j] = V[(i - 1) * m + j];
        V[i * m + j] = 0;
      }
    }
    d[i] = h;
  }
  // Accumulate the transformations (the last row and column stay e_{m-1}).
  for (let i = 0; i < m - 1; i++) {
    V[(m - 1) * m + i] = V[i * m + i];
    V[i * m + i] = 1;
    const h = d[i + 1];
    if (h !== 0) {
      for (let k = 0; k <= i; k++) d[k] = V[k * m + i + 1] / h;
      for (let j = 0; j <= i; j++) {
        let g = 0;
        for (let k = 0; k <= i; k++) g += V[k * m + i + 1] * V[k * m + j];
        for (let k = 0; k <= i; k++) V[k * m + j] -= g * d[k];
      }
    }
    for (let k = 0; k <= i; k++) V[k * m + i + 1] = 0;
  }
  for (let j = 0; j < m; j++) {
    d[j] = V[(m - 1) * m + j];
    V[(m - 1) * m + j] = 0;
  }
  V[(m - 1) * m + m - 1] = 1;
  e[0] = 0;

  // Implicit QL with Wilkinson-like shifts on the tridiagonal (d, e).
  for (let i = 1; i < m; i++) e[i - 1] = e[i];
  e[m - 1] = 0;
  const firstRow = lastRowOnly ? m - 1 : 0;
  let f = 0;
  let tst1 = 0;
  for (let l = 0; l < m; l++) {
    tst1 = Math.max(tst1, Math.abs(d[l]) + Math.abs(e[l]));
    let mm = l;
    while (mm < m) {
      if (Math.abs(e[mm]) <= EPS * tst1) break;
      mm++;
    }
    if (mm > l) {
      for (let iter = 0; iter < 100; iter++) {
        let g = d[l];
        let p = (d[l + 1] - g) / (2 * e[l]);
        let r = Math.hypot(p, 1);
        if (p < 0) r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        const dl1 = d[l + 1];
        let h = g - d[l];
        for (let i = l + 2; i < m; i++) d[i] -= h;
        f += h;
        p = d[mm];
        let c = 1;
        let c2 = c;
        let c3 = c;
        const el1 = e[l + 1];
        let s = 0;
        let s2 = 0;
        for (let i = mm - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i];
          h = c * p;
          r = Math.hypot(p, e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          for (let k = firstRow; k < m; k++) {
            const off = k * m;
            h = V[off + i + 1];
            V[off + i + 1] = s * V[off + i] + c * h;
            V[off + i] = c * V[off + i] - s * h;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]) / dl1;
        e[l] = s * p;
        d[l] = c * p;
        if (!(Math.abs(e[l]) > EPS * tst1)) break;
      }
    }
    d[l] += f;
    e[l] = 0;
  }
}
