/*
 * The N-API argument checks the addon's sparse parts share (./csr_kernels.c, ./sparse_native.c,
 * ./lu_native.c, ./arpack_native.c): each throws a RangeError/TypeError naming the function and returns
 * NULL/false; and the compressed-array check and typed-array allocation of the sparse factorizations.
 */
#ifndef NAPI_ARGS_H
#define NAPI_ARGS_H

#include <node_api.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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

#endif
