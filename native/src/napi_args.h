/*
 * The N-API argument checks the addon's sparse parts share (./csr_kernels.c, ./sparse_native.c,
 * ./arpack_native.c): each throws a RangeError/TypeError naming the function and returns NULL/false.
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

#endif
