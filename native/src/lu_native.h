/*
 * The addon's sparse LU (lu_native.c: UMFPACK from SuiteSparse), compiled in with the sparse part
 * (LINALG_SPARSE defined) when scripts/buildNative.mjs finds umfpack.h and libumfpack beside CHOLMOD.
 */
#ifndef LINALG_LU_NATIVE_H
#define LINALG_LU_NATIVE_H

#include <node_api.h>

/* Adds umfpackLu and umfpackConfig to exports. */
void register_lu(napi_env env, napi_value exports);

#endif
