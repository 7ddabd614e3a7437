/*
 * The addon's sparse part: sparse Cholesky through CHOLMOD (SuiteSparse) for the machines' Gram
 * matrices G_i = A_i A_i^T, and triangular solves with the factor.
 *
 * cholmodFactor factors P G P^T = L L^T (CHOLMOD's AMD ordering, postordered; supernodal with BLAS
 * when it pays) and hands back L as plain arrays (simplicial form: columns with the diagonal first,
 * rows ascending, without the explicit zeros of supernodal amalgamation), then frees every CHOLMOD object before it returns: nothing of CHOLMOD outlives
 * the call, so no job can leak a factor. The arrays belong to JavaScript (and travel to the solver
 * threads in shared memory like the rest of a machine's storage).
 *
 * choleskySolver wraps such arrays (checked once, O(nnz(L))) in a handle whose finalizer releases
 * its work vector and its references to them (or choleskyRelease at once); choleskySolve(handle, b, x) is then x = G^{-1} b, and
 * choleskySolveLower / choleskySolveUpper its two halves L^{-1} P b and P^T L^{-T} y (the analysis's
 * scaled Gram operators).
 */
#include "sparse_native.h"
#include "napi_args.h"

#include <cholmod.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CHOLMOD objects still allocated when a factorization returned (should stay 0: a leak test reads it). */
static int64_t live_blocks = 0;

/*
 * cholmodFactor(n, rowPtr, colIdx, values) -> { perm, colPtr, rowIdx, values, minor }: P G P^T = L L^T for the
 * symmetric positive definite n x n G given in CSR with its full symmetric pattern (its upper triangle is read).
 * perm[k] = row of G at position k; L by columns, diagonal first, rows ascending. minor < n: the factorization
 * stopped at column minor (pivot not positive), and L is incomplete.
 */
static napi_value CholmodFactor(napi_env env, napi_callback_info info) {
  const char* name = "cholmodFactor";
  napi_value argv[4];
  if (!get_args(env, info, name, 4, argv)) return NULL;
  int32_t n;
  int32_t *row_ptr, *col_idx;
  double* values;
  size_t ptr_len, idx_len, val_len;
  if (!get_count(env, argv[0], &n)) return throw_type(env, name, 0, "a non-negative 32-bit integer");
  if (!get_typed(env, argv[1], napi_int32_array, (void**)&row_ptr, &ptr_len)) return throw_type(env, name, 1, "an Int32Array");
  if (!get_typed(env, argv[2], napi_int32_array, (void**)&col_idx, &idx_len)) return throw_type(env, name, 2, "an Int32Array");
  if (!get_typed(env, argv[3], napi_float64_array, (void**)&values, &val_len)) return throw_type(env, name, 3, "a Float64Array");
  const char* problem = check_compressed(n, row_ptr, ptr_len, col_idx, idx_len, val_len);
  if (problem) return throw_range(env, name, problem);

  cholmod_common common;
  cholmod_start(&common);
  common.print = 0;
  common.error_handler = NULL;
  /* AMD only (deterministic, and what the TypeScript path uses), then leave L simplicial LL^T, packed, in order. */
  common.nmethods = 1;
  common.method[0].ordering = CHOLMOD_AMD;
  common.postorder = 1;
  common.final_asis = 0; /* apply the final_* settings below (CHOLMOD's default leaves a supernodal factor as it is) */
  common.final_super = 0;
  common.final_ll = 1;
  common.final_pack = 1;
  common.final_monotonic = 1;
  common.quick_return_if_not_posdef = 1;

  /* G's CSR with both triangles is its CSC; stype 1: CHOLMOD reads the upper triangle. Not copied. */
  cholmod_sparse g;
  memset(&g, 0, sizeof g);
  g.nrow = (size_t)n;
  g.ncol = (size_t)n;
  g.nzmax = (size_t)(n > 0 ? row_ptr[n] : 0);
  g.p = row_ptr;
  g.i = col_idx;
  g.x = values;
  g.stype = 1;
  g.itype = CHOLMOD_INT;
  g.xtype = CHOLMOD_REAL;
  g.dtype = CHOLMOD_DOUBLE;
  g.sorted = 0;
  g.packed = 1;

  napi_value result = NULL;
  cholmod_factor* l = cholmod_analyze(&g, &common);
  if (l != NULL) cholmod_factorize(&g, l, &common);
  if (l == NULL || common.status < CHOLMOD_OK || (l->minor == l->n && (l->is_super || !l->is_ll || !l->is_monotonic))) {
    char why[128];
    if (common.status == CHOLMOD_OUT_OF_MEMORY) snprintf(why, sizeof why, "CHOLMOD ran out of memory");
    else
      snprintf(why, sizeof why, "CHOLMOD failed (status %d, minor %ld of %d, %s)", common.status,
               l ? (long)l->minor : -1L, n, l && l->is_super ? "supernodal" : "simplicial");
    throw_range(env, name, why);
  } else {
    /* The supernodal factor converted to simplicial keeps its amalgamation's explicit zeros: left out here
       (the solves never need them), so L holds the fill of its ordering; the diagonal is always kept. */
    const int32_t* lp = l->p;
    const int32_t* li = l->i;
    const double* lx = l->x;
    size_t nnz = 0;
    if (l->minor == l->n)
      for (int32_t j = 0; j < n; j++)
        for (int32_t q = lp[j]; q < lp[j + 1]; q++) nnz += (li[q] == j || lx[q] != 0);
    int32_t *perm_out, *col_ptr_out, *row_idx_out;
    double* values_out;
    napi_value perm = new_typed(env, napi_int32_array, (size_t)n, (void**)&perm_out);
    napi_value col_ptr = new_typed(env, napi_int32_array, (size_t)n + 1, (void**)&col_ptr_out);
    napi_value row_idx = new_typed(env, napi_int32_array, nnz, (void**)&row_idx_out);
    napi_value l_values = new_typed(env, napi_float64_array, nnz, (void**)&values_out);
    napi_value minor;
    if (perm && col_ptr && row_idx && l_values && napi_create_double(env, (double)l->minor, &minor) == napi_ok &&
        napi_create_object(env, &result) == napi_ok) {
      if (n > 0) memcpy(perm_out, l->Perm, sizeof(int32_t) * (size_t)n);
      if (nnz > 0) {
        int32_t kept = 0;
        col_ptr_out[0] = 0;
        for (int32_t j = 0; j < n; j++) {
          for (int32_t q = lp[j]; q < lp[j + 1]; q++) {
            if (li[q] == j || lx[q] != 0) {
              row_idx_out[kept] = li[q];
              values_out[kept++] = lx[q];
            }
          }
          col_ptr_out[j + 1] = kept;
        }
      } else {
        memset(col_ptr_out, 0, sizeof(int32_t) * ((size_t)n + 1));
      }
      napi_set_named_property(env, result, "perm", perm);
      napi_set_named_property(env, result, "colPtr", col_ptr);
      napi_set_named_property(env, result, "rowIdx", row_idx);
      napi_set_named_property(env, result, "values", l_values);
      napi_set_named_property(env, result, "minor", minor);
    } else {
      result = NULL;
      bool pending = false;
      napi_is_exception_pending(env, &pending);
      if (!pending) throw_range(env, name, "out of memory for the factor's arrays");
    }
  }
  cholmod_free_factor(&l, &common);
  cholmod_finish(&common);
  live_blocks += (int64_t)common.malloc_count;
  return result;
}

/* A factor's arrays (held by references) and a work vector: what choleskySolve runs on. */
typedef struct {
  int32_t n;
  const int32_t* col_ptr;
  const int32_t* row_idx;
  const double* values;
  const int32_t* perm;
  double* work;
  napi_ref refs[4];
} Solver;

static void free_solver(napi_env env, void* data, void* hint) {
  (void)hint;
  Solver* solver = data;
  for (int k = 0; k < 4; k++)
    if (solver->refs[k]) napi_delete_reference(env, solver->refs[k]);
  free(solver->work);
  free(solver);
}

/*
 * choleskySolver(n, colPtr, rowIdx, values, perm) -> handle: checks the factor once (column pointers, every row
 * index in [j, n) with the diagonal first, values long enough, perm a permutation) and keeps references to the
 * arrays, so that each solve only checks its vectors. The arrays must not be resized or detached meanwhile
 * (typed arrays are not resizable; the callers never transfer these).
 */
static napi_value CholeskySolver(napi_env env, napi_callback_info info) {
  const char* name = "choleskySolver";
  napi_value argv[5];
  if (!get_args(env, info, name, 5, argv)) return NULL;
  int32_t n;
  int32_t *col_ptr, *row_idx, *perm;
  double* values;
  size_t ptr_len, idx_len, val_len, perm_len;
  if (!get_count(env, argv[0], &n)) return throw_type(env, name, 0, "a non-negative 32-bit integer");
  if (!get_typed(env, argv[1], napi_int32_array, (void**)&col_ptr, &ptr_len)) return throw_type(env, name, 1, "an Int32Array");
  if (!get_typed(env, argv[2], napi_int32_array, (void**)&row_idx, &idx_len)) return throw_type(env, name, 2, "an Int32Array");
  if (!get_typed(env, argv[3], napi_float64_array, (void**)&values, &val_len)) return throw_type(env, name, 3, "a Float64Array");
  if (!get_typed(env, argv[4], napi_int32_array, (void**)&perm, &perm_len)) return throw_type(env, name, 4, "an Int32Array");
  const char* problem = check_compressed(n, col_ptr, ptr_len, row_idx, idx_len, val_len);
  if (problem) return throw_range(env, name, problem);
  for (int32_t j = 0; j < n; j++) {
    if (col_ptr[j + 1] == col_ptr[j] || row_idx[col_ptr[j]] != j) return throw_range(env, name, "a column does not start with its diagonal");
    for (int32_t q = col_ptr[j] + 1; q < col_ptr[j + 1]; q++)
      if (row_idx[q] <= j) return throw_range(env, name, "L has an entry above its diagonal");
  }
  switch (check_permutation(perm, perm_len, n)) {
    case PERMUTATION_OK:
      break;
    case PERMUTATION_SHORT:
      return throw_range(env, name, "perm is shorter than n");
    case PERMUTATION_NO_MEMORY:
      return throw_range(env, name, "out of memory");
    default:
      return throw_range(env, name, "perm is not a permutation of 0 .. n - 1");
  }

  Solver* solver = calloc(1, sizeof *solver);
  double* work = malloc(sizeof(double) * ((size_t)n + 1));
  if (!solver || !work) {
    free(solver);
    free(work);
    return throw_range(env, name, "out of memory");
  }
  *solver = (Solver){n, col_ptr, row_idx, values, perm, work, {NULL, NULL, NULL, NULL}};
  return wrap_handle(env, name, solver, free_solver, argv + 1, 4, solver->refs, "cannot reference the factor's arrays");
}

/*
 * choleskyRelease(handle): lets go of the factor's arrays and frees the work vector now instead of at the
 * handle's finalizer, which Node runs only on a later turn of the event loop: a synchronous computation that
 * makes a factor a step (the analysis' shift-invert per pair) would otherwise keep every one of them alive
 * until it returns. The handle refuses solves afterwards; releasing it again does nothing.
 */
static napi_value CholeskyRelease(napi_env env, napi_callback_info info) {
  const char* name = "choleskyRelease";
  napi_value argv[1];
  if (!get_args(env, info, name, 1, argv)) return NULL;
  Solver* solver = external_data(env, argv[0]);
  if (solver == NULL) return throw_type(env, name, 0, "a handle from choleskySolver");
  for (int k = 0; k < 4; k++) {
    if (solver->refs[k]) napi_delete_reference(env, solver->refs[k]);
    solver->refs[k] = NULL;
  }
  free(solver->work);
  solver->work = NULL;
  solver->col_ptr = solver->row_idx = solver->perm = NULL;
  solver->values = NULL;
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

/* z = L^{-1} z, by columns (the TypeScript forwardSweep's operations, in its order). */
static void forward_sweep(const Solver* solver, double* restrict z) {
  const int32_t n = solver->n;
  const int32_t *restrict cp = solver->col_ptr, *restrict ri = solver->row_idx;
  const double* restrict lv = solver->values;
  for (int32_t j = 0; j < n; j++) {
    const int32_t start = cp[j], end = cp[j + 1];
    const double zj = z[j] / lv[start];
    z[j] = zj;
    if (zj != 0)
      for (int32_t q = start + 1; q < end; q++) z[ri[q]] -= lv[q] * zj;
  }
}

/* z = L^{-T} z, by the columns of L (the rows of L^T): each column's sum in the four partial sums of the TypeScript
   backwardSweep, in its order. */
static void backward_sweep(const Solver* solver, double* restrict z) {
  const int32_t *restrict cp = solver->col_ptr, *restrict ri = solver->row_idx;
  const double* restrict lv = solver->values;
  for (int32_t j = solver->n - 1; j >= 0; j--) {
    const int32_t start = cp[j], end = cp[j + 1];
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int32_t q = start + 1;
    for (; q + 4 <= end; q += 4) {
      a0 += lv[q] * z[ri[q]];
      a1 += lv[q + 1] * z[ri[q + 1]];
      a2 += lv[q + 2] * z[ri[q + 2]];
      a3 += lv[q + 3] * z[ri[q + 3]];
    }
    for (; q < end; q++) a0 += lv[q] * z[ri[q]];
    z[j] = (z[j] - ((a0 + a1) + (a2 + a3))) / lv[start];
  }
}

/* What a solve applies: G^{-1} = P^T L^{-T} L^{-1} P, or one of its halves B^{-1} = L^{-1} P and B^{-T} = P^T L^{-T}. */
typedef enum { SOLVE_FULL, SOLVE_LOWER, SOLVE_UPPER } SolveKind;

/* (handle, in, inOffset, out, outOffset): out[outOffset ..] = the solve of in[inOffset ..] (in and out may be the same). */
static napi_value solve_with(napi_env env, napi_callback_info info, const char* name, SolveKind kind) {
  napi_value argv[5];
  if (!get_args(env, info, name, 5, argv)) return NULL;
  const Solver* solver = external_data(env, argv[0]);
  if (solver == NULL) return throw_type(env, name, 0, "a handle from choleskySolver");
  if (solver->work == NULL) return throw_range(env, name, "the handle was released (choleskyRelease)");
  double *b, *x;
  size_t b_len, x_len;
  int32_t b_off, x_off;
  if (!get_typed(env, argv[1], napi_float64_array, (void**)&b, &b_len)) return throw_type(env, name, 1, "a Float64Array");
  if (!get_count(env, argv[2], &b_off)) return throw_type(env, name, 2, "a non-negative 32-bit integer");
  if (!get_typed(env, argv[3], napi_float64_array, (void**)&x, &x_len)) return throw_type(env, name, 3, "a Float64Array");
  if (!get_count(env, argv[4], &x_off)) return throw_type(env, name, 4, "a non-negative 32-bit integer");
  const int32_t n = solver->n;
  if ((size_t)b_off + (size_t)n > b_len || (size_t)x_off + (size_t)n > x_len)
    return throw_range(env, name, "the input or the output is shorter than offset + n");
  const int32_t* restrict perm = solver->perm;
  double* restrict z = solver->work;
  const double* bb = b + b_off;
  double* xx = x + x_off;
  if (kind == SOLVE_UPPER)
    for (int32_t k = 0; k < n; k++) z[k] = bb[k];
  else
    for (int32_t k = 0; k < n; k++) z[k] = bb[perm[k]];
  if (kind != SOLVE_UPPER) forward_sweep(solver, z);
  if (kind != SOLVE_LOWER) backward_sweep(solver, z);
  if (kind == SOLVE_LOWER)
    for (int32_t k = 0; k < n; k++) xx[k] = z[k];
  else
    for (int32_t k = 0; k < n; k++) xx[perm[k]] = z[k];
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

/* choleskySolve(handle, b, bOffset, x, xOffset): x[xOffset ..] = G^{-1} b[bOffset ..] (b and x may be the same). */
static napi_value CholeskySolve(napi_env env, napi_callback_info info) { return solve_with(env, info, "choleskySolve", SOLVE_FULL); }

/* choleskySolveLower(handle, b, bOffset, y, yOffset): y = B^{-1} b = L^{-1} P b (B = P^T L, B B^T = G). */
static napi_value CholeskySolveLower(napi_env env, napi_callback_info info) {
  return solve_with(env, info, "choleskySolveLower", SOLVE_LOWER);
}

/* choleskySolveUpper(handle, y, yOffset, x, xOffset): x = B^{-T} y = P^T L^{-T} y. */
static napi_value CholeskySolveUpper(napi_env env, napi_callback_info info) {
  return solve_with(env, info, "choleskySolveUpper", SOLVE_UPPER);
}

/*
 * choleskySolveBlock(handle, b, w): b[0 .. n w) = G^{-1} b for w right-hand sides at once, b row-major n x w
 * (entry (k, c) at k w + c): the sweeps of choleskySolve with each entry of L read once for the w columns.
 */
static napi_value CholeskySolveBlock(napi_env env, napi_callback_info info) {
  const char* name = "choleskySolveBlock";
  napi_value argv[3];
  if (!get_args(env, info, name, 3, argv)) return NULL;
  const Solver* solver = external_data(env, argv[0]);
  if (solver == NULL) return throw_type(env, name, 0, "a handle from choleskySolver");
  if (solver->work == NULL) return throw_range(env, name, "the handle was released (choleskyRelease)");
  double* b;
  size_t b_len;
  int32_t width;
  if (!get_typed(env, argv[1], napi_float64_array, (void**)&b, &b_len)) return throw_type(env, name, 1, "a Float64Array");
  if (!get_count(env, argv[2], &width)) return throw_type(env, name, 2, "a non-negative 32-bit integer");
  const size_t n = (size_t)solver->n, w = (size_t)width;
  if (n * w > b_len) return throw_range(env, name, "b is shorter than n w");
  /* z, then the backward sweep's four partial sums of each column (4 w). */
  double* restrict z = malloc(sizeof(double) * (n * w + 4 * w + 1));
  if (!z) return throw_range(env, name, "out of memory");
  double* restrict sums = z + n * w;
  const int32_t *restrict perm = solver->perm, *restrict cp = solver->col_ptr, *restrict ri = solver->row_idx;
  const double* restrict lv = solver->values;
  for (size_t k = 0; k < n; k++) memcpy(z + k * w, b + (size_t)perm[k] * w, w * sizeof(double));
  for (size_t j = 0; j < n; j++) {
    double* restrict zj = z + j * w;
    const double d = lv[cp[j]];
    for (size_t c = 0; c < w; c++) zj[c] /= d;
    for (int32_t q = cp[j] + 1; q < cp[j + 1]; q++) {
      const double l = lv[q];
      double* restrict zr = z + (size_t)ri[q] * w;
      for (size_t c = 0; c < w; c++) zr[c] -= l * zj[c];
    }
  }
  /* Each column's sum as backward_sweep adds it: the column's entries four at a time into the four partial sums, the
     rest into the first (four rows at a time: a scratch C timing of w = 16 on a Poisson box machine's factor took
     350 us, against 430-640 us one row at a time in one sum, as before the partial sums). */
  double *restrict s0 = sums, *restrict s1 = sums + w, *restrict s2 = sums + 2 * w, *restrict s3 = sums + 3 * w;
  for (size_t j = n; j-- > 0;) {
    double* restrict zj = z + j * w;
    memset(sums, 0, 4 * w * sizeof(double));
    const int32_t end = cp[j + 1];
    int32_t q = cp[j] + 1;
    for (; q + 4 <= end; q += 4) {
      const double l0 = lv[q], l1 = lv[q + 1], l2 = lv[q + 2], l3 = lv[q + 3];
      const double *restrict z0 = z + (size_t)ri[q] * w, *restrict z1 = z + (size_t)ri[q + 1] * w;
      const double *restrict z2 = z + (size_t)ri[q + 2] * w, *restrict z3 = z + (size_t)ri[q + 3] * w;
      for (size_t c = 0; c < w; c++) {
        s0[c] += l0 * z0[c];
        s1[c] += l1 * z1[c];
        s2[c] += l2 * z2[c];
        s3[c] += l3 * z3[c];
      }
    }
    for (; q < end; q++) {
      const double l = lv[q];
      const double* restrict zr = z + (size_t)ri[q] * w;
      for (size_t c = 0; c < w; c++) s0[c] += l * zr[c];
    }
    const double d = lv[cp[j]];
    for (size_t c = 0; c < w; c++) zj[c] = (zj[c] - ((s0[c] + s1[c]) + (s2[c] + s3[c]))) / d;
  }
  for (size_t k = 0; k < n; k++) memcpy(b + (size_t)perm[k] * w, z + k * w, w * sizeof(double));
  free(z);
  return NULL;
}

static napi_value SparseConfig(napi_env env, napi_callback_info info) {
  (void)info;
  char text[160];
  snprintf(text, sizeof text, "CHOLMOD %d.%d.%d (SuiteSparse %d.%d.%d)", CHOLMOD_MAIN_VERSION, CHOLMOD_SUB_VERSION,
           CHOLMOD_SUBSUB_VERSION, SUITESPARSE_MAIN_VERSION, SUITESPARSE_SUB_VERSION, SUITESPARSE_SUBSUB_VERSION);
  napi_value out;
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &out);
  return out;
}

static napi_value SparseLiveBlocks(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_create_double(env, (double)live_blocks, &out);
  return out;
}

void register_sparse(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"cholmodFactor", NULL, CholmodFactor, NULL, NULL, NULL, napi_enumerable, NULL},
      {"choleskySolver", NULL, CholeskySolver, NULL, NULL, NULL, napi_enumerable, NULL},
      {"choleskySolve", NULL, CholeskySolve, NULL, NULL, NULL, napi_enumerable, NULL},
      {"choleskySolveLower", NULL, CholeskySolveLower, NULL, NULL, NULL, napi_enumerable, NULL},
      {"choleskySolveUpper", NULL, CholeskySolveUpper, NULL, NULL, NULL, napi_enumerable, NULL},
      {"choleskySolveBlock", NULL, CholeskySolveBlock, NULL, NULL, NULL, napi_enumerable, NULL},
      {"choleskyRelease", NULL, CholeskyRelease, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sparseConfig", NULL, SparseConfig, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sparseLiveBlocks", NULL, SparseLiveBlocks, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
}
