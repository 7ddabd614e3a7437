/*
 * The N-API argument checks the addon's sparse parts share (./csr_kernels.c, ./sparse_native.c,
 * ./lu_native.c, ./arpack_native.c): each throws a RangeError/TypeError naming the function and returns
 * NULL/false; the compressed-array and permutation checks and typed-array allocation of the sparse
 * factorizations; and the handles (external_data, wrap_handle) through which a checked factor or chunk is
 * kept for repeated calls.
 */
#ifndef NAPI_ARGS_H
#define NAPI_ARGS_H

#include <node_api.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline napi_value throw_range(napi_env env, const char* name, const char* message) {
  char text[256];
  snprintf(text, sizeof text, "%s: %s", name, message);
  napi_throw_range_error(env, NULL, text);
  return NULL;
}

static inline napi_value throw_type(napi_env env, const char* name, size_t index, const char* expected) {
  char text[160];
  snprintf(text, sizeof text, "%s: argument %zu must be %s", name, index, expected);
  napi_throw_type_error(env, NULL, text);
  return NULL;
}

static inline bool get_args(napi_env env, napi_callback_info info, const char* name, size_t expected, napi_value* argv) {
  size_t argc = expected;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return false;
  if (argc < expected) {
    char text[160];
    snprintf(text, sizeof text, "%s: expected %zu arguments, got %zu", name, expected, argc);
    napi_throw_type_error(env, NULL, text);
    return false;
  }
  return true;
}

static inline bool get_typed(napi_env env, napi_value value, napi_typedarray_type want, void** data, size_t* length) {
  bool is_typed = false;
  napi_typedarray_type type;
  napi_value buffer;
  size_t byte_offset;
  return napi_is_typedarray(env, value, &is_typed) == napi_ok && is_typed &&
         napi_get_typedarray_info(env, value, &type, length, data, &buffer, &byte_offset) == napi_ok && type == want;
}

static inline bool get_count(napi_env env, napi_value value, int32_t* out) {
  double number;
  if (napi_get_value_double(env, value, &number) != napi_ok || !(number >= 0) || number > 2147483646.0 ||
      number != (double)(int32_t)number)
    return false;
  *out = (int32_t)number;
  return true;
}

/* A new Int32Array / Float64Array of `count` elements with its data pointer. */
static inline napi_value new_typed(napi_env env, napi_typedarray_type type, size_t count, void** data) {
  size_t bytes = count * (type == napi_float64_array ? sizeof(double) : sizeof(int32_t));
  napi_value buffer, array;
  if (napi_create_arraybuffer(env, bytes, data, &buffer) != napi_ok) return NULL;
  if (napi_create_typedarray(env, type, count, buffer, 0, &array) != napi_ok) return NULL;
  return array;
}

/*
 * Compressed rows (or columns) with n + 1 pointers from 0, nondecreasing, within the index and value arrays,
 * and indices in [0, n).
 */
static inline const char* check_compressed(int32_t n, const int32_t* ptr, size_t ptr_len, const int32_t* idx,
                                           size_t idx_len, size_t val_len) {
  if (ptr_len < (size_t)n + 1) return "the pointer array is shorter than n + 1";
  if (ptr[0] != 0) return "the pointer array must start at 0";
  for (int32_t k = 0; k < n; k++)
    if (ptr[k + 1] < ptr[k]) return "the pointer array decreases";
  if ((size_t)ptr[n] > idx_len || (size_t)ptr[n] > val_len) return "the pointers run past the index or value array";
  for (int32_t q = 0; q < ptr[n]; q++)
    if (idx[q] < 0 || idx[q] >= n) return "an index is out of range";
  return NULL;
}

/* The arguments (rows, cols, rowPtr, colIdx, values, b) of a CSR chunk: rows x cols, rowPtr from rowPtr[0] >= 0. */
typedef struct {
  int32_t rows, cols;
  int32_t *row_ptr, *col_idx;
  double *values, *b;
} CsrArgs;

/* Reads and checks argv[0 .. 6) as a CSR chunk with its right-hand side b; false after throwing (TypeError, RangeError). */
static inline bool get_csr_args(napi_env env, const char* name, const napi_value* argv, CsrArgs* out) {
  size_t ptr_len, idx_len, val_len, b_len;
  if (!get_count(env, argv[0], &out->rows)) return throw_type(env, name, 0, "a non-negative 32-bit integer"), false;
  if (!get_count(env, argv[1], &out->cols)) return throw_type(env, name, 1, "a non-negative 32-bit integer"), false;
  if (!get_typed(env, argv[2], napi_int32_array, (void**)&out->row_ptr, &ptr_len)) return throw_type(env, name, 2, "an Int32Array"), false;
  if (!get_typed(env, argv[3], napi_int32_array, (void**)&out->col_idx, &idx_len)) return throw_type(env, name, 3, "an Int32Array"), false;
  if (!get_typed(env, argv[4], napi_float64_array, (void**)&out->values, &val_len)) return throw_type(env, name, 4, "a Float64Array"), false;
  if (!get_typed(env, argv[5], napi_float64_array, (void**)&out->b, &b_len)) return throw_type(env, name, 5, "a Float64Array"), false;
  const int32_t rows = out->rows;
  const int32_t* row_ptr = out->row_ptr;
  const char* problem = NULL;
  if (ptr_len < (size_t)rows + 1) problem = "rowPtr is shorter than rows + 1";
  else if (b_len < (size_t)rows) problem = "b is shorter than rows";
  else if (row_ptr[0] < 0) problem = "rowPtr starts below 0";
  for (int32_t k = 0; problem == NULL && k < rows; k++)
    if (row_ptr[k + 1] < row_ptr[k]) problem = "rowPtr decreases";
  if (problem == NULL && ((size_t)row_ptr[rows] > idx_len || (size_t)row_ptr[rows] > val_len)) problem = "rowPtr runs past colIdx or values";
  for (int32_t e = problem == NULL ? row_ptr[0] : 0; problem == NULL && e < row_ptr[rows]; e++)
    if (out->col_idx[e] < 0 || out->col_idx[e] >= out->cols) problem = "a column index is out of range";
  if (problem != NULL) return throw_range(env, name, problem), false;
  return true;
}

/* The data behind an external handle made by wrap_handle or napi_create_external; NULL when `value` is not one. */
static inline void* external_data(napi_env env, napi_value value) {
  napi_valuetype type;
  void* data = NULL;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external || napi_get_value_external(env, value, &data) != napi_ok)
    return NULL;
  return data;
}

/*
 * `data` as an external handle released by `finalize`, holding a reference to each of the `count` typed arrays
 * it points into (kept in refs[0 .. count), which `finalize` deletes) so that they live as long as the handle.
 * On failure `finalize` runs at once and a RangeError is thrown (`reference_error` when an array could not be
 * referenced); NULL is returned.
 */
static inline napi_value wrap_handle(napi_env env, const char* name, void* data, napi_finalize finalize, const napi_value* arrays,
                                     size_t count, napi_ref* refs, const char* reference_error) {
  for (size_t k = 0; k < count; k++) {
    if (napi_create_reference(env, arrays[k], 1, &refs[k]) != napi_ok) {
      finalize(env, data, NULL);
      return throw_range(env, name, reference_error);
    }
  }
  napi_value handle;
  if (napi_create_external(env, data, finalize, NULL, &handle) != napi_ok) {
    finalize(env, data, NULL);
    return throw_range(env, name, "cannot create the handle");
  }
  return handle;
}

/* What check_permutation finds of p[0 .. n). */
typedef enum { PERMUTATION_OK, PERMUTATION_SHORT, PERMUTATION_INVALID, PERMUTATION_NO_MEMORY } PermutationCheck;

/* Whether p (len entries) starts with a permutation of 0 .. n - 1. */
static inline PermutationCheck check_permutation(const int32_t* p, size_t len, int32_t n) {
  if (len < (size_t)n) return PERMUTATION_SHORT;
  unsigned char* seen = calloc((size_t)n + 1, 1);
  if (!seen) return PERMUTATION_NO_MEMORY;
  PermutationCheck found = PERMUTATION_OK;
  for (int32_t k = 0; k < n && found == PERMUTATION_OK; k++) {
    if (p[k] < 0 || p[k] >= n || seen[p[k]]) found = PERMUTATION_INVALID;
    else seen[p[k]] = 1;
  }
  free(seen);
  return found;
}

#endif
