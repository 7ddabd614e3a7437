/*
 * Row kernels (see row_kernels.h). Written with GCC/Clang vector extensions: four-lane vectors,
 * rows taken eight at a time, so that each load of v (or load and store of y) serves eight rows
 * and the eight dot products are eight independent vector accumulators. The lane structure is
 * fixed, so the order of the additions (hence the rounding) does not depend on the instruction
 * set; on x86-64 the functions are compiled twice (x86-64-v3: AVX2 + FMA, and the baseline) and
 * the loader picks the one the CPU runs, so the rounding can differ between machines by FMA
 * contraction only.
 *
 * Why not two BLAS dgemv calls: the fused pass reads each row once instead of twice; measured at
 * n = 2000 on 2 cores (Xeon, AVX-512), two threads of rows_fused take ~0.67 ms where two
 * OpenBLAS dgemv (two threads each) take ~0.8-1.0 ms.
 */
#include "row_kernels.h"

#include <string.h>

typedef double vd4 __attribute__((vector_size(32)));

/* Clones need GCC >= 11 (the x86-64-v3 level) and glibc's ifunc; elsewhere the baseline build only. */
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CPU_CLONES
#endif

#define ROWS 8
/* Rows of the block at row k: ROWS except at the tail. Whole blocks call the block kernels with the
 * constant ROWS (so the compiler unrolls their row loops), the tail with its count; the arithmetic
 * per row is the same either way. */
#define BLOCK_COUNT(rows, k) ((rows) - (k) < ROWS ? (int)((rows) - (k)) : ROWS)

/* Unaligned four-lane load and store (memcpy compiles to one vector move). */
#define LOAD4(dst, p) memcpy(&(dst), (p), sizeof(vd4))
#define STORE4(p, src) memcpy((p), &(src), sizeof(vd4))
#define HSUM4(v) (((v)[0] + (v)[1]) + ((v)[2] + (v)[3]))

/* out[j] = row[j] . v for j < count, count <= ROWS. */
static inline __attribute__((always_inline)) void dot_block(int count, const double* const* row, size_t cols,
                                                            const double* restrict v, double* restrict out) {
  const size_t c4 = cols & ~(size_t)3;
  vd4 acc[ROWS];
  for (int j = 0; j < count; j++) acc[j] = (vd4){0, 0, 0, 0};
  for (size_t t = 0; t < c4; t += 4) {
    vd4 vt, xt;
    LOAD4(vt, v + t);
    for (int j = 0; j < count; j++) {
      LOAD4(xt, row[j] + t);
      acc[j] += xt * vt;
    }
  }
  for (int j = 0; j < count; j++) {
    double s = HSUM4(acc[j]);
    for (size_t t = c4; t < cols; t++) s += row[j][t] * v[t];
    out[j] = s;
  }
}

CPU_CLONES void rows_dot(size_t rows, size_t cols, const double* restrict x, size_t ld, const double* restrict v,
                         double* restrict out) {
  for (size_t k = 0; k < rows; k += ROWS) {
    const int count = BLOCK_COUNT(rows, k);
    const double* row[ROWS];
    for (int j = 0; j < count; j++) row[j] = x + (k + j) * ld;
    if (count == ROWS) dot_block(ROWS, row, cols, v, out + k);
    else dot_block(count, row, cols, v, out + k);
  }
}

/* y += sum_{j < count} coef[j] row[j], count <= ROWS. */
static inline __attribute__((always_inline)) void combine_block(int count, const double* const* row,
                                                                const double* coef, size_t cols, double* restrict y) {
  const size_t c4 = cols & ~(size_t)3;
  for (size_t t = 0; t < c4; t += 4) {
    vd4 u, xt;
    LOAD4(u, y + t);
    for (int j = 0; j < count; j++) {
      LOAD4(xt, row[j] + t);
      u += coef[j] * xt;
    }
    STORE4(y + t, u);
  }
  for (size_t t = c4; t < cols; t++) {
    double u = y[t];
    for (int j = 0; j < count; j++) u += coef[j] * row[j][t];
    y[t] = u;
  }
}

CPU_CLONES void rows_combine(size_t rows, size_t cols, double scale, const double* restrict x, size_t ld,
                             const double* restrict w, double* restrict y) {
  for (size_t k = 0; k < rows; k += ROWS) {
    const int count = BLOCK_COUNT(rows, k);
    const double* row[ROWS];
    double coef[ROWS];
    for (int j = 0; j < count; j++) {
      row[j] = x + (k + j) * ld;
      coef[j] = scale * w[k + j];
    }
    if (count == ROWS) combine_block(ROWS, row, coef, cols, y);
    else combine_block(count, row, coef, cols, y);
  }
}

CPU_CLONES void rows_fused(size_t rows, size_t cols, double scale, const double* restrict x, size_t ld,
                           const double* restrict v, const double* restrict bias, double* restrict dots,
                           double* restrict y) {
  /* Each block's dot products first (each is needed whole before its row's update), then its update. */
  for (size_t k = 0; k < rows; k += ROWS) {
    const int count = BLOCK_COUNT(rows, k);
    const double* row[ROWS];
    double coef[ROWS];
    for (int j = 0; j < count; j++) row[j] = x + (k + j) * ld;
    if (count == ROWS) dot_block(ROWS, row, cols, v, dots + k);
    else dot_block(count, row, cols, v, dots + k);
    for (int j = 0; j < count; j++) {
      dots[k + j] -= bias[k + j];
      coef[j] = scale * dots[k + j];
    }
    if (count == ROWS) combine_block(ROWS, row, coef, cols, y);
    else combine_block(count, row, coef, cols, y);
  }
}
