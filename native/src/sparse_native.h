/*
 * The addon's sparse part (sparse_native.c: CHOLMOD from SuiteSparse), compiled in when
 * scripts/buildNative.mjs finds cholmod.h and libcholmod (LINALG_SPARSE defined).
 */
#ifndef LINALG_SPARSE_NATIVE_H
#define LINALG_SPARSE_NATIVE_H

#include <node_api.h>

/* Adds the sparse functions (cholmodFactor, choleskySolver, choleskySolve, sparseConfig, sparseLiveBlocks) to exports. */
void register_sparse(napi_env env, napi_value exports);

#endif
