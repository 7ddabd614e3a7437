/*
 * The addon's METIS part (metis_native.c: METIS_PartGraphKway), compiled in when scripts/buildNative.mjs
 * finds metis.h and libmetis (LINALG_METIS defined).
 */
#ifndef LINALG_METIS_NATIVE_H
#define LINALG_METIS_NATIVE_H

#include <node_api.h>

/* Adds metisPartGraphKway and metisConfig to exports. */
void register_metis(napi_env env, napi_value exports);

#endif
