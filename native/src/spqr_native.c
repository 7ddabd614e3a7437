/*
 * The addon's SuiteSparseQR part: which rows of a machine's block A_i (p x c, compressed rows, on its
 * column support) span its row space, and the right-hand side of those rows that keeps the machine's
 * local least-squares solutions, without a dense copy of A_i.
 *
 *   spqrRowBasis(p, c, rowPtr, colIdx, values, b, tol) -> { rank, rows, rhs, tolUsed, denseSolve }
 *
 * 1. The rows are scaled to unit norm (Ahat = D A_i) and SuiteSparseQR factors Ahat^T E = Q R (c x p, its
 *    default fill-reducing column ordering, Heath's rank detection with `tol`): a column whose remaining
 *    2-norm is at most tol when it is pivotal is dead and moved to the end of E. With unit columns that is
 *    the relative test of src/solvers/distributed/rowSpace.ts (what is left of a row after the rows before
 *    it, at most tol times its norm). rank = the live columns; rows = E[0 .. rank), the independent rows.
 * 2. R's columns are scaled back (R <- R D_E^{-1}: A_i^T E = Q R, R = [R11 R12], R11 rank x rank upper
 *    triangular), so A_i (rows in E order) = R^T Q^T, and x_0 = Q y with y = argmin |R^T y - E^T b| is
 *    the minimum-norm local least-squares solution; y by a second Householder QR, of the p x rank R^T (of full
 *    column rank): LAPACK's dgeqrf on it densely when R is at least DENSE_R_FILL full (a machine with many more rows
 *    than columns fills R, and SuiteSparseQR spent ~2x dgeqrf's time there on its transposes, ordering and
 *    assembly), else SuiteSparseQR's backslash. rhs = A_S x_0 = R11^T y (aligned with rows).
 * Nothing of A_i is made dense (the dense R^T takes at most twice R's memory, compressed: 16 bytes an entry); nothing
 * of SuiteSparseQR or CHOLMOD outlives the call.
 */
#include "spqr_native.h"
#include "napi_args.h"

#include <SuiteSparseQR_C.h>
#include <lapacke.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Least fraction of R's p x rank entries stored for the dense second QR (its p x rank doubles then take at most
 * 1 / DENSE_R_FILL times R's values). */
#define DENSE_R_FILL 0.25

/*
 * y = argmin |R^T y - rhs| for the rank x p R (compressed columns, every row index below rank, full row rank), by
 * dgeqrf of the dense p x rank R^T, Q^T rhs by dormqr and the triangular solve by dtrtrs. rhs (p) is overwritten; y
 * (rank) written. false when out of memory or LAPACK reports an error.
 */
static bool dense_least_squares(const cholmod_sparse* r, SuiteSparse_long rank, SuiteSparse_long p, double* rhs, double* y) {
  double* w = calloc((size_t)p * (size_t)rank, sizeof(double));
  double* tau = malloc((size_t)rank * sizeof(double));
  bool ok = w != NULL && tau != NULL;
  if (ok) {
    const SuiteSparse_long* rp = r->p;
    const SuiteSparse_long* ri = r->i;
    const double* rx = r->x;
    /* Column k of R is row k of R^T: w (column-major, leading dimension p) holds R^T. */
    for (SuiteSparse_long k = 0; k < p; k++)
      for (SuiteSparse_long q = rp[k]; q < rp[k + 1]; q++) w[k + ri[q] * p] = rx[q];
    ok = LAPACKE_dgeqrf(LAPACK_COL_MAJOR, (lapack_int)p, (lapack_int)rank, w, (lapack_int)p, tau) == 0 &&
         LAPACKE_dormqr(LAPACK_COL_MAJOR, 'L', 'T', (lapack_int)p, 1, (lapack_int)rank, w, (lapack_int)p, tau, rhs,
                        (lapack_int)p) == 0 &&
         LAPACKE_dtrtrs(LAPACK_COL_MAJOR, 'U', 'N', 'N', (lapack_int)rank, 1, w, (lapack_int)p, rhs, (lapack_int)p) == 0;
    if (ok) memcpy(y, rhs, (size_t)rank * sizeof(double));
  }
  free(w);
  free(tau);
  return ok;
}

static napi_value SpqrRowBasis(napi_env env, napi_callback_info info) {
  const char* name = "spqrRowBasis";
  napi_value argv[7];
  if (!get_args(env, info, name, 7, argv)) return NULL;
  CsrArgs csr;
  if (!get_csr_args(env, name, argv, &csr)) return NULL;
  double tol;
  if (napi_get_value_double(env, argv[6], &tol) != napi_ok || !(tol >= 0) || !(tol < 1)) return throw_type(env, name, 6, "a number in [0, 1)");
  const int32_t p = csr.rows, c = csr.cols;
  const int32_t *row_ptr = csr.row_ptr, *col_idx = csr.col_idx;
  const double *values = csr.values, *b = csr.b;
  if (row_ptr[0] != 0) return throw_range(env, name, "rowPtr must start at 0");
  for (int32_t k = 0; k < p; k++)
    if (row_ptr[k + 1] == row_ptr[k]) return throw_range(env, name, "a row is empty");

  cholmod_common common;
  cholmod_l_start(&common);
  common.print = 0;
  common.error_handler = NULL;
  /* One thread: the caller's task pool already runs the machines in parallel. */
  common.SPQR_nthreads = 1;
  const char* failure = NULL;
  napi_value result = NULL;
  cholmod_sparse *at = NULL, *r = NULL, *rt = NULL;
  cholmod_dense *rhs_e = NULL, *y = NULL;
  SuiteSparse_long* e = NULL;
  double* norm = cholmod_l_malloc((size_t)p, sizeof(double), &common);
  SuiteSparse_long nnz = row_ptr[p];

  /* Ahat^T = (D A_i)^T, c x p in compressed columns (A_i's rows), 64-bit indices. */
  at = cholmod_l_allocate_sparse((size_t)c, (size_t)p, (size_t)nnz, 0, 1, 0, CHOLMOD_REAL, &common);
  if (at == NULL || norm == NULL) {
    failure = "out of memory";
    goto done;
  }
  {
    SuiteSparse_long* ap = at->p;
    SuiteSparse_long* ai = at->i;
    double* ax = at->x;
    for (int32_t k = 0; k <= p; k++) ap[k] = row_ptr[k];
    for (int32_t k = 0; k < p; k++) {
      double s = 0;
      for (int32_t q = row_ptr[k]; q < row_ptr[k + 1]; q++) s += values[q] * values[q];
      norm[k] = sqrt(s);
      if (!(norm[k] > 0)) {
        failure = "a row is zero";
        goto done;
      }
      for (int32_t q = row_ptr[k]; q < row_ptr[k + 1]; q++) {
        ai[q] = col_idx[q];
        ax[q] = values[q] / norm[k];
      }
    }
  }

  /* econ = 0: R has rank rows; no Q, no right-hand side. */
  SuiteSparse_long rank = SuiteSparseQR_C(SPQR_ORDERING_DEFAULT, tol, 0, 0, at, NULL, NULL, NULL, NULL, &r, &e, NULL, NULL, NULL, &common);
  if (rank < 0 || r == NULL) {
    failure = common.status == CHOLMOD_OUT_OF_MEMORY ? "SuiteSparseQR ran out of memory" : "SuiteSparseQR failed";
    goto done;
  }
  double tol_used = common.SPQR_tol_used;
  {
    /* R <- R D_E^{-1}: the R factor of the unscaled A_i^T E (column k of R is row E[k] of A_i). */
    SuiteSparse_long* rp = r->p;
    double* rx = r->x;
    for (int32_t k = 0; k < p; k++) {
      double scale = norm[e ? e[k] : k];
      for (SuiteSparse_long q = rp[k]; q < rp[k + 1]; q++) rx[q] *= scale;
    }
  }
  rhs_e = cholmod_l_allocate_dense((size_t)p, 1, (size_t)p, CHOLMOD_REAL, &common);
  if (rhs_e == NULL) {
    failure = "out of memory";
    goto done;
  }
  for (int32_t k = 0; k < p; k++) ((double*)rhs_e->x)[k] = b[e ? e[k] : k];
  const bool dense_solve = rank > 0 && (double)cholmod_l_nnz(r, &common) >= DENSE_R_FILL * (double)p * (double)rank;
  if (dense_solve) {
    y = cholmod_l_allocate_dense((size_t)rank, 1, (size_t)rank, CHOLMOD_REAL, &common);
    if (y == NULL || !dense_least_squares(r, rank, p, rhs_e->x, y->x)) {
      failure = y == NULL ? "out of memory" : "the dense least-squares solve failed";
      goto done;
    }
  } else if (rank > 0) {
    rt = cholmod_l_transpose(r, 1, &common);
    if (rt == NULL) {
      failure = "out of memory";
      goto done;
    }
    /* tol 0: R^T has full column rank (R11's diagonal passed the test above), so no column is dropped. */
    y = SuiteSparseQR_C_backslash(SPQR_ORDERING_DEFAULT, 0, rt, rhs_e, &common);
    if (y == NULL) {
      failure = "SuiteSparseQR's least-squares solve failed";
      goto done;
    }
  }
  {
    int32_t *rows_out;
    double* rhs_out;
    napi_value rows = new_typed(env, napi_int32_array, (size_t)rank, (void**)&rows_out);
    napi_value rhs = new_typed(env, napi_float64_array, (size_t)rank, (void**)&rhs_out);
    napi_value rank_value, tol_value, dense_value;
    if (rows == NULL || rhs == NULL || napi_create_double(env, (double)rank, &rank_value) != napi_ok ||
        napi_create_double(env, tol_used, &tol_value) != napi_ok || napi_get_boolean(env, dense_solve, &dense_value) != napi_ok ||
        napi_create_object(env, &result) != napi_ok) {
      result = NULL;
      failure = "out of memory for the results";
      goto done;
    }
    /* rhs[t] = (R11^T y)[t] = sum over u <= t of R(u, t) y[u] (column t of R, rows below rank only). */
    const SuiteSparse_long* rp = r->p;
    const SuiteSparse_long* ri = r->i;
    const double* rx = r->x;
    const double* yx = y ? y->x : NULL;
    for (SuiteSparse_long t = 0; t < rank; t++) {
      rows_out[t] = (int32_t)(e ? e[t] : t);
      double s = 0;
      for (SuiteSparse_long q = rp[t]; q < rp[t + 1]; q++)
        if (ri[q] < rank) s += rx[q] * yx[ri[q]];
      rhs_out[t] = s;
    }
    napi_set_named_property(env, result, "rank", rank_value);
    napi_set_named_property(env, result, "rows", rows);
    napi_set_named_property(env, result, "rhs", rhs);
    napi_set_named_property(env, result, "tolUsed", tol_value);
    napi_set_named_property(env, result, "denseSolve", dense_value);
  }

done:
  cholmod_l_free_sparse(&at, &common);
  cholmod_l_free_sparse(&r, &common);
  cholmod_l_free_sparse(&rt, &common);
  cholmod_l_free_dense(&rhs_e, &common);
  cholmod_l_free_dense(&y, &common);
  if (e != NULL) cholmod_l_free((size_t)p, sizeof(SuiteSparse_long), e, &common);
  if (norm != NULL) cholmod_l_free((size_t)p, sizeof(double), norm, &common);
  cholmod_l_finish(&common);
  if (failure != NULL) {
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (!pending) throw_range(env, name, failure);
    return NULL;
  }
  return result;
}

static napi_value SpqrConfig(napi_env env, napi_callback_info info) {
  (void)info;
  char text[64];
  snprintf(text, sizeof text, "SuiteSparseQR %d.%d.%d", SPQR_MAIN_VERSION, SPQR_SUB_VERSION, SPQR_SUBSUB_VERSION);
  napi_value out;
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &out);
  return out;
}

void register_spqr(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"spqrRowBasis", NULL, SpqrRowBasis, NULL, NULL, NULL, napi_enumerable, NULL},
      {"spqrConfig", NULL, SpqrConfig, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
}
