/**
 * C = X Y^T for row-major X (rows x len) and Y (cols x len): every entry is a dot product of two
 * contiguous rows. This is the kernel of the Gram blocks Q_i^T Q_j and of the row scan A A^T: a
 * 4 x 4 register-blocked loop on the TypeScript kernels, one dgemm on the addon's
 * (./typescriptDenseKernels.ts, ./nativeDenseKernels.ts).
 */
import type { DenseKernels } from './denseKernels.js';
import type { Kernels } from './kernels.js';

/**
 * Rows [rowStart, rowEnd) of C = X Y^T into `out` (row i of C at out[(i - outRowOffset) * outStride]),
 * columns [0, cols): the arguments of DenseKernels.multiplyByTransposeRows. `out` is overwritten in that range.
 */
export function multiplyByTransposeRows(kernels: Kernels, ...product: Parameters<DenseKernels['multiplyByTransposeRows']>): void {
  kernels.dense.multiplyByTransposeRows(...product);
}
