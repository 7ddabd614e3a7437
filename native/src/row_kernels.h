/*
 * Single-threaded kernels over a block of rows X (rows x cols, row-major, leading dimension ld):
 * the products every iteration of the distributed solvers is made of (see
 * src/solvers/linalg/rowKernels.ts). Threads are the caller's business: the solver's engine runs
 * independent row blocks on its own threads (src/solvers/parallel/engine.ts).
 * The arrays must not overlap except where a comment says so.
 */
#ifndef ROW_KERNELS_H
#define ROW_KERNELS_H

#include <stddef.h>

/* out[k] = X[k] . v for k < rows. */
void rows_dot(size_t rows, size_t cols, const double* x, size_t ld, const double* v, double* out);

/* y += scale sum_k w[k] X[k]. */
void rows_combine(size_t rows, size_t cols, double scale, const double* x, size_t ld, const double* w, double* y);

/*
 * The fused pass, each row read from memory once: dots[k] = X[k] . v - bias[k], then
 * y += scale dots[k] X[k] while the row is still in cache.
 */
void rows_fused(size_t rows, size_t cols, double scale, const double* x, size_t ld, const double* v,
                const double* bias, double* dots, double* y);

/*
 * The block form over w columns (V cols x w, bias and dots rows x w, y cols x w, row-major): dots = X V - bias,
 * y += scale X^T dots, each row of X read from memory once. Returns -1 when its scratch could not be allocated.
 */
int rows_fused_block(size_t rows, size_t cols, size_t w, double scale, const double* x, size_t ld, const double* v,
                     const double* bias, double* dots, double* y);

#endif
