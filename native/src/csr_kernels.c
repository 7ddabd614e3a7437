/*
 * CSR kernels (see csr_kernels.h) and their N-API binding.
 *
 * csrRows(rows, cols, rowPtr, colIdx, values, b) checks a chunk's arrays once, O(nnz) (pointers
 * nondecreasing within the arrays, every column index below cols, b long enough), and returns a
 * handle that keeps references to them; csrFusedGradient(handle, x, xOffset, term, termOffset)
 * then checks only its two vectors, O(1), and runs the pass. The arrays must not be resized or
 * detached meanwhile (typed arrays are not resizable; the machines' storage is never transferred).
 *
 * Rounding: compiled without floating-point contraction (no fused multiply-add, whatever the
 * target's flags), so every sum is the TypeScript loop's, operation for operation: the native,
 * WebAssembly and TypeScript passes give the same gradient to the bit.
 */
#include "csr_kernels.h"
#include "napi_args.h"
#include "no_contraction.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

NO_CONTRACTION double csr_fused_gradient(size_t rows, size_t cols, const int32_t* restrict row_ptr,
                                         const int32_t* restrict col_idx, const double* restrict values,
                                         const double* restrict x, const double* restrict b, double* restrict term) {
  memset(term, 0, cols * sizeof(double));
  double residual2 = 0;
  for (size_t k = 0; k < rows; k++) {
    const int32_t from = row_ptr[k], to = row_ptr[k + 1];
    double s = 0;
    for (int32_t e = from; e < to; e++) s += values[e] * x[col_idx[e]];
    const double r = s - b[k];
    residual2 += r * r;
    for (int32_t e = from; e < to; e++) term[col_idx[e]] += r * values[e];
  }
  return residual2;
}

/*
 * The block form over w right-hand sides (row-major blocks: entry (j, c) at j w + c): r = A X - B (rows x w)
 * with residual2[c] += |r_c|^2, and, when g is not NULL, g += A^T r (cols x w), each stored entry read once
 * for the w columns. With x NULL, r is given (b and residual2 unused): g += A^T r alone.
 */
NO_CONTRACTION static void csr_block_gradient(size_t rows, size_t w, const int32_t* restrict row_ptr, const int32_t* restrict col_idx,
                                              const double* restrict values, const double* restrict x, const double* restrict b,
                                              double* restrict r, double* restrict g, double* restrict residual2) {
  for (size_t k = 0; k < rows; k++) {
    const int32_t from = row_ptr[k], to = row_ptr[k + 1];
    double* restrict rk = r + k * w;
    if (x != NULL) {
      const double* restrict bk = b + k * w;
      for (size_t c = 0; c < w; c++) rk[c] = -bk[c];
      for (int32_t e = from; e < to; e++) {
        const double v = values[e];
        const double* restrict xe = x + (size_t)col_idx[e] * w;
        for (size_t c = 0; c < w; c++) rk[c] += v * xe[c];
      }
      for (size_t c = 0; c < w; c++) residual2[c] += rk[c] * rk[c];
    }
    if (g == NULL) continue;
    for (int32_t e = from; e < to; e++) {
      const double v = values[e];
      double* restrict ge = g + (size_t)col_idx[e] * w;
      for (size_t c = 0; c < w; c++) ge[c] += v * rk[c];
    }
  }
}

/* Columns of a vector slice: GCC's vector types (one AVX-512 register, two AVX2 ones, four SSE2 ones per clone). */
typedef double csr_v8 __attribute__((vector_size(64)));
typedef double csr_v4 __attribute__((vector_size(32)));

/*
 * Row k's part of the gradient methods' block term on columns [s, s + W) (W a compile-time width, the
 * columns in one vector of type V, so that the residuals stay in registers): r = a_k X - b_k, residual2 += r^2,
 * g += r a_k, r not stored. Lane c's operations are column c's alone, in the scalar loop's order (multiply, then
 * add: no contraction), so the vectors give the scalar loop's bits. Unaligned loads and stores through memcpy.
 */
#define CSR_TERM_SLICE(W, V)                                                                                                       \
  NO_CONTRACTION __attribute__((always_inline)) static inline void csr_term_slice_##W(                                           \
      size_t w, size_t s, int32_t from, int32_t to, const int32_t* restrict col_idx, const double* restrict values,               \
      const double* restrict x, const double* restrict bk, double* restrict g, double* restrict residual2) {                     \
    V rk, t;                                                                                                                     \
    memcpy(&t, bk + s, sizeof(V));                                                                                               \
    rk = -t;                                                                                                                     \
    for (int32_t e = from; e < to; e++) {                                                                                        \
      memcpy(&t, x + (size_t)col_idx[e] * w + s, sizeof(V));                                                                     \
      rk += values[e] * t;                                                                                                       \
    }                                                                                                                            \
    memcpy(&t, residual2 + s, sizeof(V));                                                                                        \
    t += rk * rk;                                                                                                                \
    memcpy(residual2 + s, &t, sizeof(V));                                                                                        \
    for (int32_t e = from; e < to; e++) {                                                                                        \
      double* restrict ge = g + (size_t)col_idx[e] * w + s;                                                                      \
      memcpy(&t, ge, sizeof(V));                                                                                                 \
      t += values[e] * rk;                                                                                                       \
      memcpy(ge, &t, sizeof(V));                                                                                                 \
    }                                                                                                                            \
  }

/* The scalar tail's slices (W = 2, 1). */
#define CSR_TERM_SLICE_SCALAR(W)                                                                                                   \
  NO_CONTRACTION __attribute__((always_inline)) static inline void csr_term_slice_##W(                                           \
      size_t w, size_t s, int32_t from, int32_t to, const int32_t* restrict col_idx, const double* restrict values,               \
      const double* restrict x, const double* restrict bk, double* restrict g, double* restrict residual2) {                     \
    double rk[W];                                                                                                                \
    for (size_t c = 0; c < W; c++) rk[c] = -bk[s + c];                                                                           \
    for (int32_t e = from; e < to; e++) {                                                                                        \
      const double v = values[e];                                                                                                \
      const double* restrict xe = x + (size_t)col_idx[e] * w + s;                                                                \
      for (size_t c = 0; c < W; c++) rk[c] += v * xe[c];                                                                         \
    }                                                                                                                            \
    for (size_t c = 0; c < W; c++) residual2[s + c] += rk[c] * rk[c];                                                            \
    for (int32_t e = from; e < to; e++) {                                                                                        \
      const double v = values[e];                                                                                                \
      double* restrict ge = g + (size_t)col_idx[e] * w + s;                                                                      \
      for (size_t c = 0; c < W; c++) ge[c] += v * rk[c];                                                                         \
    }                                                                                                                            \
  }

CSR_TERM_SLICE(8, csr_v8)
CSR_TERM_SLICE(4, csr_v4)
CSR_TERM_SLICE_SCALAR(2)
CSR_TERM_SLICE_SCALAR(1)

/*
 * The gradient methods' block term in one sweep: g = A^T (A X - B) (cols x w, written whole) and residual2[c] +=
 * |r_c|^2, the same sums as csr_block_gradient on a zeroed g, to the bit (each column's operations are its own
 * and in the same order; slicing the columns changes none). Row k's residuals are not stored, and g is zeroed
 * as the sweep first reaches its rows, while they are in cache (the rows below `zeroed` are zero or written,
 * whatever order the column indices come in). Compiled for AVX-512 and AVX2 too (without FMA: the same roundings),
 * the variant chosen at load time: the slices' vectors are one or two registers there.
 */
NO_CONTRACTION __attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void csr_block_term(
    size_t rows, size_t cols, size_t w, const int32_t* restrict row_ptr, const int32_t* restrict col_idx,
    const double* restrict values, const double* restrict x, const double* restrict b, double* restrict g,
    double* restrict residual2_out) {
  /* The squares are summed here, then added once: residual2_out is the chunk's scalars, which may share a cache
   * line with the scalars of a machine another thread sweeps (a store there each row would bounce the line). */
  double residual2[w > 0 ? w : 1];
  memcpy(residual2, residual2_out, w * sizeof(double));
  size_t zeroed = 0;
  for (size_t k = 0; k < rows; k++) {
    const int32_t from = row_ptr[k], to = row_ptr[k + 1];
    size_t last = 0;
    for (int32_t e = from; e < to; e++)
      if ((size_t)col_idx[e] > last) last = (size_t)col_idx[e];
    if (to > from && last >= zeroed) {
      memset(g + zeroed * w, 0, (last + 1 - zeroed) * w * sizeof(double));
      zeroed = last + 1;
    }
    const double* bk = b + k * w;
    size_t s = 0;
    for (; s + 8 <= w; s += 8) csr_term_slice_8(w, s, from, to, col_idx, values, x, bk, g, residual2);
    if (s + 4 <= w) csr_term_slice_4(w, s, from, to, col_idx, values, x, bk, g, residual2), s += 4;
    if (s + 2 <= w) csr_term_slice_2(w, s, from, to, col_idx, values, x, bk, g, residual2), s += 2;
    if (s < w) csr_term_slice_1(w, s, from, to, col_idx, values, x, bk, g, residual2);
  }
  if (zeroed < cols) memset(g + zeroed * w, 0, (cols - zeroed) * w * sizeof(double));
  memcpy(residual2_out, residual2, w * sizeof(double));
}

typedef struct {
  size_t rows, cols;
  const int32_t* row_ptr;
  const int32_t* col_idx;
  const double* values;
  const double* b;
  napi_ref refs[4];
} CsrRows;

static void free_rows(napi_env env, void* data, void* hint) {
  (void)hint;
  CsrRows* rows = data;
  for (int k = 0; k < 4; k++)
    if (rows->refs[k] != NULL) napi_delete_reference(env, rows->refs[k]);
  free(rows);
}

/* csrRows(rows, cols, rowPtr, colIdx, values, b) -> handle (RangeError when the arrays do not describe such a chunk). */
static napi_value CsrRowsHandle(napi_env env, napi_callback_info info) {
  const char* name = "csrRows";
  napi_value argv[6];
  if (!get_args(env, info, name, 6, argv)) return NULL;
  CsrArgs csr;
  if (!get_csr_args(env, name, argv, &csr)) return NULL;

  CsrRows* handle_data = calloc(1, sizeof *handle_data);
  if (!handle_data) return throw_range(env, name, "out of memory");
  *handle_data = (CsrRows){(size_t)csr.rows, (size_t)csr.cols, csr.row_ptr, csr.col_idx, csr.values, csr.b, {NULL, NULL, NULL, NULL}};
  return wrap_handle(env, name, handle_data, free_rows, argv + 2, 4, handle_data->refs, "cannot reference the chunk's arrays");
}

/* csrFusedGradient(handle, x, xOffset, term, termOffset) -> |A x - b|^2, term[termOffset ..) = A^T (A x - b) (x read from xOffset). */
static napi_value CsrFusedGradient(napi_env env, napi_callback_info info) {
  const char* name = "csrFusedGradient";
  napi_value argv[5];
  if (!get_args(env, info, name, 5, argv)) return NULL;
  const CsrRows* rows = external_data(env, argv[0]);
  if (rows == NULL) return throw_type(env, name, 0, "a handle from csrRows");
  double *x, *term;
  size_t x_len, term_len;
  int32_t x_off, term_off;
  if (!get_typed(env, argv[1], napi_float64_array, (void**)&x, &x_len)) return throw_type(env, name, 1, "a Float64Array");
  if (!get_count(env, argv[2], &x_off)) return throw_type(env, name, 2, "a non-negative 32-bit integer");
  if (!get_typed(env, argv[3], napi_float64_array, (void**)&term, &term_len)) return throw_type(env, name, 3, "a Float64Array");
  if (!get_count(env, argv[4], &term_off)) return throw_type(env, name, 4, "a non-negative 32-bit integer");
  if ((size_t)x_off + rows->cols > x_len) return throw_range(env, name, "x is shorter than xOffset + cols");
  if ((size_t)term_off + rows->cols > term_len) return throw_range(env, name, "term is shorter than termOffset + cols");
  const double* px = x + x_off;
  double* pt = term + term_off;
  /* term is written while x and the chunk's arrays are read: they must not overlap. */
  if (pt < px + rows->cols && px < pt + rows->cols) return throw_range(env, name, "term overlaps x");
  if ((pt < rows->b + rows->rows && rows->b < pt + rows->cols) ||
      ((const void*)pt < (const void*)(rows->values + rows->row_ptr[rows->rows]) && (const void*)rows->values < (const void*)(pt + rows->cols)))
    return throw_range(env, name, "term overlaps the chunk's arrays");
  double residual2 = csr_fused_gradient(rows->rows, rows->cols, rows->row_ptr, rows->col_idx, rows->values, px, rows->b, pt);
  napi_value out;
  napi_create_double(env, residual2, &out);
  return out;
}

/*
 * csrBlockGradient(handle, w, x | null, b, r, g | null, residual2): csr_block_gradient on the handle's rows (its b
 * unused); x null: g += A^T r with r given.
 */
static napi_value CsrBlockGradient(napi_env env, napi_callback_info info) {
  const char* name = "csrBlockGradient";
  napi_value argv[7];
  if (!get_args(env, info, name, 7, argv)) return NULL;
  const CsrRows* rows = external_data(env, argv[0]);
  if (rows == NULL) return throw_type(env, name, 0, "a handle from csrRows");
  int32_t w;
  double *x, *b, *r, *g = NULL, *residual2;
  size_t x_len, b_len, r_len, g_len = 0, res_len;
  if (!get_count(env, argv[1], &w)) return throw_type(env, name, 1, "a non-negative 32-bit integer");
  napi_valuetype x_type;
  napi_typeof(env, argv[2], &x_type);
  x = NULL;
  x_len = 0;
  if (x_type != napi_null && !get_typed(env, argv[2], napi_float64_array, (void**)&x, &x_len))
    return throw_type(env, name, 2, "a Float64Array or null");
  if (!get_typed(env, argv[3], napi_float64_array, (void**)&b, &b_len)) return throw_type(env, name, 3, "a Float64Array");
  if (!get_typed(env, argv[4], napi_float64_array, (void**)&r, &r_len)) return throw_type(env, name, 4, "a Float64Array");
  napi_valuetype g_type;
  napi_typeof(env, argv[5], &g_type);
  if (g_type != napi_null && !get_typed(env, argv[5], napi_float64_array, (void**)&g, &g_len))
    return throw_type(env, name, 5, "a Float64Array or null");
  if (!get_typed(env, argv[6], napi_float64_array, (void**)&residual2, &res_len)) return throw_type(env, name, 6, "a Float64Array");
  const size_t width = (size_t)w;
  if (x != NULL && x_len < rows->cols * width) return throw_range(env, name, "x is shorter than cols w");
  if (x == NULL && g == NULL) return throw_range(env, name, "x and g are both null");
  if (b_len < rows->rows * width || r_len < rows->rows * width) return throw_range(env, name, "b or r is shorter than rows w");
  if (g != NULL && g_len < rows->cols * width) return throw_range(env, name, "g is shorter than cols w");
  if (res_len < width) return throw_range(env, name, "residual2 is shorter than w");
  /* Written arrays must not overlap the read ones. */
  if (x != NULL && ((r < x + x_len && x < r + r_len) || (r < b + b_len && b < r + r_len))) return throw_range(env, name, "r overlaps x or b");
  if (g != NULL && ((x != NULL && g < x + x_len && x < g + g_len) || (g < r + r_len && r < g + g_len) || (g < b + b_len && b < g + g_len)))
    return throw_range(env, name, "g overlaps x, b or r");
  csr_block_gradient(rows->rows, width, rows->row_ptr, rows->col_idx, rows->values, x, b, r, g, residual2);
  return NULL;
}

/* csrBlockTerm(handle, w, x, b, g, residual2): csr_block_term on the handle's rows (its b unused): g = A^T (A X - B). */
static napi_value CsrBlockTerm(napi_env env, napi_callback_info info) {
  const char* name = "csrBlockTerm";
  napi_value argv[6];
  if (!get_args(env, info, name, 6, argv)) return NULL;
  const CsrRows* rows = external_data(env, argv[0]);
  if (rows == NULL) return throw_type(env, name, 0, "a handle from csrRows");
  int32_t w;
  double *x, *b, *g, *residual2;
  size_t x_len, b_len, g_len, res_len;
  if (!get_count(env, argv[1], &w)) return throw_type(env, name, 1, "a non-negative 32-bit integer");
  if (!get_typed(env, argv[2], napi_float64_array, (void**)&x, &x_len)) return throw_type(env, name, 2, "a Float64Array");
  if (!get_typed(env, argv[3], napi_float64_array, (void**)&b, &b_len)) return throw_type(env, name, 3, "a Float64Array");
  if (!get_typed(env, argv[4], napi_float64_array, (void**)&g, &g_len)) return throw_type(env, name, 4, "a Float64Array");
  if (!get_typed(env, argv[5], napi_float64_array, (void**)&residual2, &res_len)) return throw_type(env, name, 5, "a Float64Array");
  const size_t width = (size_t)w;
  if (x_len < rows->cols * width) return throw_range(env, name, "x is shorter than cols w");
  if (b_len < rows->rows * width) return throw_range(env, name, "b is shorter than rows w");
  if (g_len < rows->cols * width) return throw_range(env, name, "g is shorter than cols w");
  if (res_len < width) return throw_range(env, name, "residual2 is shorter than w");
  /* g and residual2 are written while x, b and the rows are read: they must not overlap. */
  const size_t g_used = rows->cols * width;
  if ((g < x + x_len && x < g + g_used) || (g < b + b_len && b < g + g_used) || (residual2 < g + g_used && g < residual2 + width) ||
      (residual2 < x + x_len && x < residual2 + width) || (residual2 < b + b_len && b < residual2 + width))
    return throw_range(env, name, "g or residual2 overlaps x, b or each other");
  if (width > 0) csr_block_term(rows->rows, rows->cols, width, rows->row_ptr, rows->col_idx, rows->values, x, b, g, residual2);
  return NULL;
}

void register_csr_kernels(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"csrRows", NULL, CsrRowsHandle, NULL, NULL, NULL, napi_enumerable, NULL},
      {"csrFusedGradient", NULL, CsrFusedGradient, NULL, NULL, NULL, napi_enumerable, NULL},
      {"csrBlockGradient", NULL, CsrBlockGradient, NULL, NULL, NULL, napi_enumerable, NULL},
      {"csrBlockTerm", NULL, CsrBlockTerm, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
}
