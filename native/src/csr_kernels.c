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
  int32_t rows, cols;
  int32_t *row_ptr, *col_idx;
  double *values, *b;
  size_t ptr_len, idx_len, val_len, b_len;
  if (!get_count(env, argv[0], &rows)) return throw_type(env, name, 0, "a non-negative 32-bit integer");
  if (!get_count(env, argv[1], &cols)) return throw_type(env, name, 1, "a non-negative 32-bit integer");
  if (!get_typed(env, argv[2], napi_int32_array, (void**)&row_ptr, &ptr_len)) return throw_type(env, name, 2, "an Int32Array");
  if (!get_typed(env, argv[3], napi_int32_array, (void**)&col_idx, &idx_len)) return throw_type(env, name, 3, "an Int32Array");
  if (!get_typed(env, argv[4], napi_float64_array, (void**)&values, &val_len)) return throw_type(env, name, 4, "a Float64Array");
  if (!get_typed(env, argv[5], napi_float64_array, (void**)&b, &b_len)) return throw_type(env, name, 5, "a Float64Array");
  if (ptr_len < (size_t)rows + 1) return throw_range(env, name, "rowPtr is shorter than rows + 1");
  if (b_len < (size_t)rows) return throw_range(env, name, "b is shorter than rows");
  if (row_ptr[0] < 0) return throw_range(env, name, "rowPtr starts below 0");
  for (int32_t k = 0; k < rows; k++)
    if (row_ptr[k + 1] < row_ptr[k]) return throw_range(env, name, "rowPtr decreases");
  if ((size_t)row_ptr[rows] > idx_len || (size_t)row_ptr[rows] > val_len)
    return throw_range(env, name, "rowPtr runs past colIdx or values");
  for (int32_t e = row_ptr[0]; e < row_ptr[rows]; e++)
    if (col_idx[e] < 0 || col_idx[e] >= cols) return throw_range(env, name, "a column index is out of range");

  CsrRows* handle_data = calloc(1, sizeof *handle_data);
  if (!handle_data) return throw_range(env, name, "out of memory");
  *handle_data = (CsrRows){(size_t)rows, (size_t)cols, row_ptr, col_idx, values, b, {NULL, NULL, NULL, NULL}};
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

void register_csr_kernels(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"csrRows", NULL, CsrRowsHandle, NULL, NULL, NULL, napi_enumerable, NULL},
      {"csrFusedGradient", NULL, CsrFusedGradient, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
}
