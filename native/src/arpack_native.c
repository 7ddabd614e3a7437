/*
 * The addon's ARPACK part: the implicitly restarted Lanczos method (dsaupd / dseupd of arpack-ng)
 * for the largest eigenvalues of a symmetric operator that JavaScript applies, by reverse
 * communication:
 *
 *   handle = arpackStart(n, nev, ncv, tol, maxRestarts, start)     (null when ARPACK is busy)
 *   while (arpackStep(handle, x, y)) y = Op x                      (x written by ARPACK, y read back)
 *   arpackFinish(handle, values, vectors) -> { converged, restarts, products }
 *
 * ARPACK keeps its iteration state in Fortran SAVE variables, shared by the whole process: one run at
 * a time. arpackStart takes a process-wide flag (atomically) and returns null when another run holds
 * it, so the caller uses its own Lanczos instead of corrupting that run; arpackFinish, arpackRelease
 * or the handle's finalizer gives it back.
 */
#include "arpack_native.h"
#include "napi_args.h"

#include <arpack/arpack.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int arpack_busy = 0;

typedef struct {
  a_int n, nev, ncv, lworkl;
  a_int ido, info;
  a_int iparam[11], ipntr[14];
  double tol;
  double *v, *workd, *workl, *resid;
  bool holds_lock;
  bool awaiting_product;
} Run;

static void release(Run* run) {
  if (run->holds_lock) {
    run->holds_lock = false;
    atomic_store(&arpack_busy, 0);
  }
}

static void free_run(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  Run* run = data;
  release(run);
  free(run->v);
  free(run->workd);
  free(run->workl);
  free(run->resid);
  free(run);
}

static bool get_doubles(napi_env env, napi_value value, double** data, size_t* length) {
  return get_typed(env, value, napi_float64_array, (void**)data, length);
}

static bool get_int(napi_env env, napi_value value, a_int* out) {
  double number;
  if (napi_get_value_double(env, value, &number) != napi_ok || !(number >= 0) || number > 2147483646.0 ||
      number != (double)(a_int)number)
    return false;
  *out = (a_int)number;
  return true;
}

static Run* get_run(napi_env env, napi_value value) { return external_data(env, value); }

static napi_value make_bool(napi_env env, bool value) {
  napi_value out;
  napi_get_boolean(env, value, &out);
  return out;
}

/*
 * arpackStart(n, nev, ncv, tol, maxRestarts, start) -> handle | null: the nev largest eigenvalues ('LA') of a
 * symmetric n x n operator, with ncv Lanczos vectors (nev < ncv <= n), ARPACK's test |r| <= tol |theta|, at most
 * maxRestarts implicit restarts, from the start vector `start` (length n).
 */
static napi_value ArpackStart(napi_env env, napi_callback_info info) {
  const char* name = "arpackStart";
  napi_value argv[6];
  if (!get_args(env, info, name, 6, argv)) return NULL;
  a_int n, nev, ncv, max_restarts;
  double tol, *start;
  size_t start_len;
  if (!get_int(env, argv[0], &n) || !get_int(env, argv[1], &nev) || !get_int(env, argv[2], &ncv) ||
      napi_get_value_double(env, argv[3], &tol) != napi_ok || !get_int(env, argv[4], &max_restarts) ||
      !get_doubles(env, argv[5], &start, &start_len))
    return throw_range(env, name, "expected (n, nev, ncv, tol, maxRestarts, start: Float64Array)");
  if (!(nev >= 1 && nev < ncv && ncv <= n)) return throw_range(env, name, "needs 1 <= nev < ncv <= n");
  if (start_len < (size_t)n) return throw_range(env, name, "the start vector is shorter than n");
  if (!(tol >= 0) || max_restarts < 1) return throw_range(env, name, "needs tol >= 0 and maxRestarts >= 1");
  int expected = 0;
  if (!atomic_compare_exchange_strong(&arpack_busy, &expected, 1)) {
    napi_value null_value;
    napi_get_null(env, &null_value);
    return null_value;
  }
  Run* run = calloc(1, sizeof *run);
  if (run) {
    run->holds_lock = true;
    run->n = n;
    run->nev = nev;
    run->ncv = ncv;
    run->tol = tol;
    run->lworkl = ncv * (ncv + 8);
    run->v = malloc(sizeof(double) * (size_t)n * (size_t)ncv);
    run->workd = malloc(sizeof(double) * 3 * (size_t)n);
    run->workl = malloc(sizeof(double) * (size_t)run->lworkl);
    run->resid = malloc(sizeof(double) * (size_t)n);
  }
  if (!run || !run->v || !run->workd || !run->workl || !run->resid) {
    if (run) free_run(env, run, NULL);
    else atomic_store(&arpack_busy, 0);
    return throw_range(env, name, "out of memory");
  }
  memcpy(run->resid, start, sizeof(double) * (size_t)n);
  run->info = 1; /* use resid as the start vector */
  run->ido = 0;
  run->iparam[0] = 1; /* exact shifts */
  run->iparam[2] = max_restarts;
  run->iparam[6] = 1; /* mode 1: standard problem, Op x given */
  /* No arrays referenced: the handle owns copies. */
  return wrap_handle(env, name, run, free_run, NULL, 0, NULL, "");
}

/*
 * arpackStep(handle, x, y) -> true when ARPACK asks for y = Op x (x is then written), false when the iteration
 * ended. y (the product asked for by the previous step) is read at the start of every step but the first.
 */
static napi_value ArpackStep(napi_env env, napi_callback_info info) {
  const char* name = "arpackStep";
  napi_value argv[3];
  if (!get_args(env, info, name, 3, argv)) return NULL;
  Run* run = get_run(env, argv[0]);
  double *x, *y;
  size_t x_len, y_len;
  if (!run || !get_doubles(env, argv[1], &x, &x_len) || !get_doubles(env, argv[2], &y, &y_len))
    return throw_range(env, name, "expected (handle, x: Float64Array, y: Float64Array)");
  if (!run->holds_lock) return throw_range(env, name, "the run has ended");
  const a_int n = run->n;
  if (x_len < (size_t)n || y_len < (size_t)n) return throw_range(env, name, "x or y is shorter than n");
  if (run->awaiting_product) {
    memcpy(run->workd + run->ipntr[1] - 1, y, sizeof(double) * (size_t)n);
    run->awaiting_product = false;
  }
  dsaupd_c(&run->ido, "I", n, "LA", run->nev, run->tol, run->resid, run->ncv, run->v, n, run->iparam, run->ipntr,
           run->workd, run->workl, run->lworkl, &run->info);
  if (run->ido == -1 || run->ido == 1) {
    memcpy(x, run->workd + run->ipntr[0] - 1, sizeof(double) * (size_t)n);
    run->awaiting_product = true;
    return make_bool(env, true);
  }
  if (run->info < 0) {
    char text[96];
    snprintf(text, sizeof text, "dsaupd failed (info %d)", (int)run->info);
    release(run);
    return throw_range(env, name, text);
  }
  return make_bool(env, false);
}

/*
 * arpackFinish(handle, values, vectors) -> { converged, restarts, products }: the converged Ritz values (values:
 * nev, ascending) and vectors (vectors: n * nev, vector k at k n), from dseupd; releases ARPACK.
 */
static napi_value ArpackFinish(napi_env env, napi_callback_info info) {
  const char* name = "arpackFinish";
  napi_value argv[3];
  if (!get_args(env, info, name, 3, argv)) return NULL;
  Run* run = get_run(env, argv[0]);
  double *values, *vectors;
  size_t values_len, vectors_len;
  if (!run || !get_doubles(env, argv[1], &values, &values_len) || !get_doubles(env, argv[2], &vectors, &vectors_len))
    return throw_range(env, name, "expected (handle, values: Float64Array, vectors: Float64Array)");
  if (!run->holds_lock) return throw_range(env, name, "the run has ended");
  const a_int n = run->n, nev = run->nev;
  if (values_len < (size_t)nev || vectors_len < (size_t)n * (size_t)nev)
    return throw_range(env, name, "values or vectors is too short");
  a_int converged = run->iparam[4];
  a_int restarts = run->iparam[2];
  a_int products = run->iparam[8];
  a_int status = 0;
  if (converged > 0) {
    a_int* select = calloc((size_t)run->ncv, sizeof(a_int));
    if (!select) {
      release(run);
      return throw_range(env, name, "out of memory");
    }
    dseupd_c(1, "A", select, values, vectors, n, 0.0, "I", n, "LA", nev, run->tol, run->resid, run->ncv, run->v, n,
             run->iparam, run->ipntr, run->workd, run->workl, run->lworkl, &status);
    free(select);
  }
  release(run);
  if (status < 0) {
    char text[96];
    snprintf(text, sizeof text, "dseupd failed (info %d)", (int)status);
    return throw_range(env, name, text);
  }
  napi_value result, value;
  napi_create_object(env, &result);
  napi_create_double(env, (double)converged, &value);
  napi_set_named_property(env, result, "converged", value);
  napi_create_double(env, (double)restarts, &value);
  napi_set_named_property(env, result, "restarts", value);
  napi_create_double(env, (double)products, &value);
  napi_set_named_property(env, result, "products", value);
  return result;
}

/* arpackRelease(handle): gives ARPACK back without results (an abandoned run). */
static napi_value ArpackRelease(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, "arpackRelease", 1, argv)) return NULL;
  Run* run = get_run(env, argv[0]);
  if (!run) return throw_range(env, "arpackRelease", "expected a handle");
  release(run);
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

void register_arpack(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"arpackStart", NULL, ArpackStart, NULL, NULL, NULL, napi_enumerable, NULL},
      {"arpackStep", NULL, ArpackStep, NULL, NULL, NULL, napi_enumerable, NULL},
      {"arpackFinish", NULL, ArpackFinish, NULL, NULL, NULL, napi_enumerable, NULL},
      {"arpackRelease", NULL, ArpackRelease, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
}
