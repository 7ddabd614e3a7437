/*
 * The addon's ARPACK part (arpack_native.c: dsaupd / dseupd by reverse communication), compiled in
 * when scripts/buildNative.mjs finds arpack-ng's arpack/arpack.h and libarpack (LINALG_ARPACK defined).
 */
#ifndef LINALG_ARPACK_NATIVE_H
#define LINALG_ARPACK_NATIVE_H

#include <node_api.h>

/* Adds arpackStart, arpackStep, arpackFinish and arpackRelease to exports. */
void register_arpack(napi_env env, napi_value exports);

#endif
