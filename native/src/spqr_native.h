/*
 * The addon's SuiteSparseQR part (spqr_native.c), compiled in when scripts/buildNative.mjs finds
 * SuiteSparseQR_C.h and libspqr next to CHOLMOD (LINALG_SPQR defined).
 */
#ifndef LINALG_SPQR_NATIVE_H
#define LINALG_SPQR_NATIVE_H

#include <node_api.h>

/* Adds spqrRowBasis and spqrConfig to exports. */
void register_spqr(napi_env env, napi_value exports);

#endif
