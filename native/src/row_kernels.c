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

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

typedef double vd4 __attribute__((vector_size(32)));

/* Clones need GCC >= 11 (the x86-64-v3 level) and glibc's ifunc; elsewhere the baseline build only. */
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
/* The block kernel's sweep runs on AVX-512 only, where its LANES-wide vectors are one register. */
#define WIDE_BLOCK 1
#else
#define CPU_CLONES
#define WIDE_BLOCK 0
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

/*
 * The block form of rows_fused (w columns, row-major blocks): dots = X V - bias (rows x w), then
 * y += scale X^T dots (cols x w), each group of GROUP rows of X swept twice per LANES columns while it
 * is in cache (the dots of a lane chunk are whole after one sweep), so X is read from memory once
 * where two dgemm calls (and their packing copies) read it twice. Lanes run over the w columns, so
 * every entry is summed in row (or column) order whatever the vector width: the same bits on every
 * processor with AVX-512 (elsewhere two dgemm). w not a multiple of LANES: padded copies, the same sums.
 */
typedef double vd8 __attribute__((vector_size(64)));
#define LANES 8
/* Rows swept at once: GROUP x LANES accumulators, 8 of AVX-512's 32 registers. */
#define GROUP 8
#define LOAD8(dst, p) memcpy(&(dst), (p), sizeof(vd8))
#define STORE8(p, src) memcpy((p), &(src), sizeof(vd8))

/* The dots of rows row[0 .. count) on lanes [j0, j0 + LANES) of V (cols x w), then their update of y. */
static inline __attribute__((always_inline)) void fused_group(int count, const double* const* row, size_t cols, size_t w,
                                                              size_t j0, double scale, const double* restrict v,
                                                              const double* restrict bias, double* restrict dots,
                                                              double* restrict y) {
  vd8 acc[GROUP];
  for (int j = 0; j < count; j++) acc[j] = (vd8){0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t t = 0; t < cols; t++) {
    vd8 vt;
    LOAD8(vt, v + t * w + j0);
    for (int j = 0; j < count; j++) acc[j] += row[j][t] * vt;
  }
  vd8 coef[GROUP];
  for (int j = 0; j < count; j++) {
    vd8 b;
    LOAD8(b, bias + j * w + j0);
    acc[j] -= b;
    STORE8(dots + j * w + j0, acc[j]);
    coef[j] = scale * acc[j];
  }
  for (size_t t = 0; t < cols; t++) {
    vd8 u;
    LOAD8(u, y + t * w + j0);
    for (int j = 0; j < count; j++) u += row[j][t] * coef[j];
    STORE8(y + t * w + j0, u);
  }
}

/* rows_fused_block for w a multiple of LANES, group rows at a time (the sums do not depend on it). */
static inline __attribute__((always_inline)) void fused_block_lanes(int group, size_t rows, size_t cols, size_t w,
                                                                    double scale, const double* restrict x, size_t ld,
                                                                    const double* restrict v, const double* restrict bias,
                                                                    double* restrict dots, double* restrict y) {
  for (size_t k = 0; k < rows; k += group) {
    const int count = rows - k < (size_t)group ? (int)(rows - k) : group;
    const double* row[GROUP];
    for (int j = 0; j < count; j++) row[j] = x + (k + j) * ld;
    for (size_t j0 = 0; j0 < w; j0 += LANES) {
      if (count == group) fused_group(group, row, cols, w, j0, scale, v, bias + k * w, dots + k * w, y);
      else fused_group(count, row, cols, w, j0, scale, v, bias + k * w, dots + k * w, y);
    }
  }
}

#if WIDE_BLOCK
__attribute__((target("arch=x86-64-v4"))) static void fused_block_wide(size_t rows, size_t cols, size_t w, double scale,
                                                                         const double* restrict x, size_t ld,
                                                                         const double* restrict v,
                                                                         const double* restrict bias,
                                                                         double* restrict dots, double* restrict y) {
  fused_block_lanes(GROUP, rows, cols, w, scale, x, ld, v, bias, dots, y);
}
#endif

/* The sweep on AVX-512, else two dgemm (the same sums up to their order). */
static void fused_block(size_t rows, size_t cols, size_t w, double scale, const double* restrict x, size_t ld,
                        const double* restrict v, const double* restrict bias, double* restrict dots, double* restrict y) {
#if WIDE_BLOCK
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
    fused_block_wide(rows, cols, w, scale, x, ld, v, bias, dots, y);
    return;
  }
#endif
  /* Without AVX-512 the 8-lane vectors take two registers each and the sweep measured ~3x slower than two dgemm. */
  memcpy(dots, bias, rows * w * sizeof(double));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, w, cols, 1.0, x, ld, v, w, -1.0, dots, w);
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, w, rows, scale, x, ld, dots, w, 1.0, y, w);
}

/* Rows [0, count) of a count x from block, into (or out of) a count x to block (to >= from; the extra lanes 0 on the way in). */
static void copy_lanes(size_t count, const double* restrict src, size_t from, double* restrict dst, size_t to) {
  for (size_t k = 0; k < count; k++) {
    memcpy(dst + k * to, src + k * from, (from < to ? from : to) * sizeof(double));
    if (to > from) memset(dst + k * to + from, 0, (to - from) * sizeof(double));
  }
}

int rows_fused_block(size_t rows, size_t cols, size_t w, double scale, const double* restrict x, size_t ld,
                                const double* restrict v, const double* restrict bias, double* restrict dots,
                                double* restrict y) {
  if (rows == 0 || cols == 0 || w == 0) return 0;
  if (w % LANES == 0) {
    fused_block(rows, cols, w, scale, x, ld, v, bias, dots, y);
    return 0;
  }
  const size_t wp = (w + LANES - 1) / LANES * LANES;
  double* work = malloc((2 * cols + 2 * rows) * wp * sizeof(double));
  if (work == NULL) return -1;
  double *vp = work, *yp = vp + cols * wp, *bp = yp + cols * wp, *dp = bp + rows * wp;
  copy_lanes(cols, v, w, vp, wp);
  copy_lanes(cols, y, w, yp, wp);
  copy_lanes(rows, bias, w, bp, wp);
  fused_block(rows, cols, wp, scale, x, ld, vp, bp, dp, yp);
  copy_lanes(cols, yp, wp, y, w);
  copy_lanes(rows, dp, wp, dots, w);
  free(work);
  return 0;
}
