/**
 * C = X Y^T for row-major X (rows x len) and Y (cols x len): every entry is a dot product of two
 * contiguous rows. This is the kernel of the Gram blocks Q_i^T Q_j and of the row scan A A^T.
 * A 4 x 4 register block reads 8 rows once per 16 products; the inner dimension is tiled so the
 * 8 row segments stay in L1 cache. With the addon's kernels the same product is one dgemm.
 */
import type { Kernels } from './kernels.js';

const TILE = 512;
/** Below this many multiply-adds the call into the addon costs more than the loop. */
const NATIVE_MIN_MADDS = 4096;

/**
 * Rows [rowStart, rowEnd) of C = X Y^T into `out` (row i of C at out[(i - outRowOffset) * outStride]),
 * columns [0, cols). `out` is overwritten in that range.
 */
export function multiplyByTransposeRows(
  kernels: Kernels,
  x: Float64Array,
  y: Float64Array,
  len: number,
  rowStart: number,
  rowEnd: number,
  cols: number,
  out: Float64Array,
  outStride: number,
  outRowOffset = 0,
): void {
  const blas = kernels.blas;
  if (blas && (rowEnd - rowStart) * cols * len >= NATIVE_MIN_MADDS) {
    blas.dgemm(
      false,
      true,
      rowEnd - rowStart,
      cols,
      len,
      1,
      x,
      rowStart * len,
      len,
      y,
      0,
      len,
      0,
      out,
      (rowStart - outRowOffset) * outStride,
      outStride,
    );
    return;
  }
  for (let i = rowStart; i < rowEnd; i++) out.fill(0, (i - outRowOffset) * outStride, (i - outRowOffset) * outStride + cols);
  for (let t0 = 0; t0 < len; t0 += TILE) {
    const t1 = Math.min(len, t0 + TILE);
    let i = rowStart;
    for (; i + 4 <= rowEnd; i += 4) {
      const x0 = i * len;
      const x1 = x0 + len;
      const x2 = x1 + len;
      const x3 = x2 + len;
      const o0 = (i - outRowOffset) * outStride;
      const o1 = o0 + outStride;
      const o2 = o1 + outStride;
      const o3 = o2 + outStride;
      let j = 0;
      for (; j + 4 <= cols; j += 4) {
        const y0 = j * len;
        const y1 = y0 + len;
        const y2 = y1 + len;
        const y3 = y2 + len;
        let c00 = 0,
          c01 = 0,
          c02 = 0,
          c03 = 0;
        let c10 = 0,
          c11 = 0,
          c12 = 0,
          c13 = 0;
        let c20 = 0,
          c21 = 0,
          c22 = 0,
          c23 = 0;
        let c30 = 0,
          c31 = 0,
          c32 = 0,
          c33 = 0;
        for (let t = t0; t < t1; t++) {
          const a0 = x[x0 + t],
            a1 = x[x1 + t],
            a2 = x[x2 + t],
            a3 = x[x3 + t];
          const b0 = y[y0 + t],
            b1 = y[y1 + t],
            b2 = y[y2 + t],
            b3 = y[y3 + t];
          c00 += a0 * b0;
          c01 += a0 * b1;
          c02 += a0 * b2;
          c03 += a0 * b3;
          c10 += a1 * b0;
          c11 += a1 * b1;
          c12 += a1 * b2;
          c13 += a1 * b3;
          c20 += a2 * b0;
          c21 += a2 * b1;
          c22 += a2 * b2;
          c23 += a2 * b3;
          c30 += a3 * b0;
          c31 += a3 * b1;
          c32 += a3 * b2;
          c33 += a3 * b3;
        }
        out[o0 + j] += c00;
        out[o0 + j + 1] += c01;
        out[o0 + j + 2] += c02;
        out[o0 + j + 3] += c03;
        out[o1 + j] += c10;
        out[o1 + j + 1] += c11;
        out[o1 + j + 2] += c12;
        out[o1 + j + 3] += c13;
        out[o2 + j] += c20;
        out[o2 + j + 1] += c21;
        out[o2 + j + 2] += c22;
        out[o2 + j + 3] += c23;
        out[o3 + j] += c30;
        out[o3 + j + 1] += c31;
        out[o3 + j + 2] += c32;
        out[o3 + j + 3] += c33;
      }
      for (; j < cols; j++) {
        const y0 = j * len;
        let c0 = 0,
          c1 = 0,
          c2 = 0,
          c3 = 0;
        for (let t = t0; t < t1; t++) {
          const b = y[y0 + t];
          c0 += x[x0 + t] * b;
          c1 += x[x1 + t] * b;
          c2 += x[x2 + t] * b;
          c3 += x[x3 + t] * b;
        }
        out[o0 + j] += c0;
        out[o1 + j] += c1;
        out[o2 + j] += c2;
        out[o3 + j] += c3;
      }
    }
    for (; i < rowEnd; i++) {
      const x0 = i * len;
      const o0 = (i - outRowOffset) * outStride;
      for (let j = 0; j < cols; j++) {
        const y0 = j * len;
        let s = 0;
        for (let t = t0; t < t1; t++) s += x[x0 + t] * y[y0 + t];
        out[o0 + j] += s;
      }
    }
  }
}
