/*
 * The addon's METIS part: k-way partitions of a weighted undirected graph (the row graph of A, see
 * src/solvers/partitioning/rowGraph.ts) by METIS_PartGraphKway, minimizing the edge cut.
 *
 *   metisPartGraphKway(ptr, idx, edgeWeight, nparts, imbalance, seed) -> Int32Array part (or throws)
 *
 * ptr/idx: the graph in compressed rows, each edge stored both ways, no self-loops (METIS's xadj/adjncy);
 * edgeWeight: positive integer weights aligned with idx (METIS takes integers: the caller scales);
 * imbalance: eps of a part's largest allowed weight (1 + eps) n/nparts (METIS's ufactor = 1000 eps).
 * METIS is reentrant (its state lives in the call's own workspace), so no lock is needed.
 */
#include "metis_native.h"
#include "napi_args.h"

#include <metis.h>

#include <stdio.h>
#include <string.h>

static napi_value MetisPartGraphKway(napi_env env, napi_callback_info info) {
  const char* name = "metisPartGraphKway";
  napi_value argv[6];
  if (!get_args(env, info, name, 6, argv)) return NULL;
  int32_t *ptr, *idx, *weight;
  size_t ptr_len, idx_len, weight_len;
  if (!get_typed(env, argv[0], napi_int32_array, (void**)&ptr, &ptr_len)) return throw_type(env, name, 0, "an Int32Array");
  if (!get_typed(env, argv[1], napi_int32_array, (void**)&idx, &idx_len)) return throw_type(env, name, 1, "an Int32Array");
  if (!get_typed(env, argv[2], napi_int32_array, (void**)&weight, &weight_len)) return throw_type(env, name, 2, "an Int32Array");
  int32_t nparts, seed;
  if (!get_count(env, argv[3], &nparts) || nparts < 1) return throw_type(env, name, 3, "a positive integer");
  double imbalance;
  if (napi_get_value_double(env, argv[4], &imbalance) != napi_ok || !(imbalance >= 0) || imbalance > 10)
    return throw_type(env, name, 4, "a number in [0, 10]");
  if (!get_count(env, argv[5], &seed)) return throw_type(env, name, 5, "a non-negative integer");
  if (ptr_len < 1) return throw_range(env, name, "the pointer array is empty");
  int32_t n = (int32_t)(ptr_len - 1);
  const char* problem = check_compressed(n, ptr, ptr_len, idx, idx_len, idx_len);
  if (problem != NULL) return throw_range(env, name, problem);
  if (weight_len < (size_t)ptr[n]) return throw_range(env, name, "fewer edge weights than edges");
  for (int32_t v = 0; v < n; v++)
    for (int32_t p = ptr[v]; p < ptr[v + 1]; p++) {
      if (idx[p] == v) return throw_range(env, name, "the graph has a self-loop");
      if (weight[p] < 1) return throw_range(env, name, "edge weights must be positive integers");
    }

  int32_t* part;
  napi_value out = new_typed(env, napi_int32_array, (size_t)n, (void**)&part);
  if (out == NULL) return throw_range(env, name, "cannot allocate the result");
  if (nparts == 1 || n == 0) {
    memset(part, 0, (size_t)n * sizeof(int32_t));
    return out;
  }
  idx_t nvtxs = n, ncon = 1, np = nparts, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = seed;
  options[METIS_OPTION_UFACTOR] = (idx_t)(1000.0 * imbalance + 0.5);
  options[METIS_OPTION_NUMBERING] = 0;
  /* idx_t is 32 bits (IDXTYPEWIDTH 32, checked below at compile time), so the arrays pass as they are. */
  int status = METIS_PartGraphKway(&nvtxs, &ncon, (idx_t*)ptr, (idx_t*)idx, NULL, NULL, (idx_t*)weight, &np, NULL, NULL,
                                   options, &objval, (idx_t*)part);
  if (status != METIS_OK) {
    char text[96];
    snprintf(text, sizeof text, "METIS failed (%s)", status == METIS_ERROR_MEMORY ? "out of memory" : status == METIS_ERROR_INPUT ? "invalid input" : "error");
    return throw_range(env, name, text);
  }
  return out;
}

_Static_assert(IDXTYPEWIDTH == 32, "the addon passes Int32Arrays to METIS as idx_t");

static napi_value MetisConfig(napi_env env, napi_callback_info info) {
  (void)info;
  char text[64];
  snprintf(text, sizeof text, "METIS %d.%d.%d", METIS_VER_MAJOR, METIS_VER_MINOR, METIS_VER_SUBMINOR);
  napi_value out;
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &out);
  return out;
}

void register_metis(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"metisPartGraphKway", NULL, MetisPartGraphKway, NULL, NULL, NULL, napi_enumerable, NULL},
      {"metisConfig", NULL, MetisConfig, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
}
