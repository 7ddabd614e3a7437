/*
 * The addon's sparse LU: UMFPACK (SuiteSparse) factors the square A of the sparse analysis, P A Q = L U, for
 * its shift-invert solves (sigma_min(A), lambda_min(S); src/solvers/sparse/sparseLu.ts holds the TypeScript
 * factorization and the solves these arrays feed).
 *
 * umfpackLu hands the factors back as plain arrays in that file's layout and frees every UMFPACK object before
 * it returns, as cholmodFactor does. Settings: no row scaling (so P A Q = L U holds for A itself), UMFPACK's
 * automatic strategy and its AMD/COLAMD orderings, and the TypeScript LU's diagonal preference (threshold
 * 0.1 under the symmetric strategy: entries of L at most 10 in magnitude) instead of UMFPACK's 0.001.
 * OpenBLAS runs on one thread during the call: UMFPACK's frontal updates are small, and two OpenBLAS
 * threads on a machine whose other core is busy made the factorization of a 2-D grid at n = 90,000
 * ten times slower (7 s against 0.65 s; threads spin waiting for a core).
 */
#include "lu_native.h"
#include "napi_args.h"
#include "no_contraction.h"

#include <cblas.h>
#include <umfpack.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* status_text(int status) {
  switch (status) {
    case UMFPACK_ERROR_out_of_memory:
      return "UMFPACK ran out of memory";
    case UMFPACK_ERROR_invalid_matrix:
      return "UMFPACK found the matrix invalid (unsorted or duplicate row indices in a column)";
    default:
      return NULL;
  }
}

/*
 * umfpackLu(n, colPtr, rowIdx, values) -> { lColPtr, lRowIdx, lValues, uColPtr, uRowIdx, uValues, rowPivot,
 * columnOrder, singular, strategy } for the n x n A in compressed columns (row indices ascending, no duplicates):
 * P A Q = L U with L unit lower triangular by columns (the unit diagonal stored first, rows ascending), U upper
 * triangular by columns (the diagonal stored last), rowPivot old-to-new (row i of A is row rowPivot[i] of P A),
 * columnOrder new-to-old (column k of A Q is column columnOrder[k] of A). singular: UMFPACK met a zero pivot
 * (A is singular; the arrays are then empty). strategy: "symmetric" or "unsymmetric", the one UMFPACK chose.
 */
static napi_value UmfpackLu(napi_env env, napi_callback_info info) {
  const char* name = "umfpackLu";
  napi_value argv[4];
  if (!get_args(env, info, name, 4, argv)) return NULL;
  int32_t n;
  int32_t *col_ptr, *row_idx;
  double* values;
  size_t ptr_len, idx_len, val_len;
  if (!get_count(env, argv[0], &n)) return throw_type(env, name, 0, "a non-negative 32-bit integer");
  if (!get_typed(env, argv[1], napi_int32_array, (void**)&col_ptr, &ptr_len)) return throw_type(env, name, 1, "an Int32Array");
  if (!get_typed(env, argv[2], napi_int32_array, (void**)&row_idx, &idx_len)) return throw_type(env, name, 2, "an Int32Array");
  if (!get_typed(env, argv[3], napi_float64_array, (void**)&values, &val_len)) return throw_type(env, name, 3, "a Float64Array");
  const char* problem = check_compressed(n, col_ptr, ptr_len, row_idx, idx_len, val_len);
  if (problem) return throw_range(env, name, problem);

  double control[UMFPACK_CONTROL], umf_info[UMFPACK_INFO];
  umfpack_di_defaults(control);
  control[UMFPACK_SCALE] = UMFPACK_SCALE_NONE;
  control[UMFPACK_SYM_PIVOT_TOLERANCE] = 0.1;
  control[UMFPACK_PRL] = 0;

  void *symbolic = NULL, *numeric = NULL;
  const int blas_threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  int status = umfpack_di_symbolic(n, n, col_ptr, row_idx, values, &symbolic, control, umf_info);
  if (status == UMFPACK_OK) status = umfpack_di_numeric(col_ptr, row_idx, values, symbolic, &numeric, control, umf_info);
  openblas_set_num_threads(blas_threads);
  const bool singular = status == UMFPACK_WARNING_singular_matrix;
  const char* strategy = umf_info[UMFPACK_STRATEGY_USED] == UMFPACK_STRATEGY_SYMMETRIC ? "symmetric" : "unsymmetric";
  umfpack_di_free_symbolic(&symbolic);
  if (status != UMFPACK_OK && !singular) {
    umfpack_di_free_numeric(&numeric);
    const char* known = status_text(status);
    if (known) return throw_range(env, name, known);
    char why[64];
    snprintf(why, sizeof why, "UMFPACK failed (status %d)", status);
    return throw_range(env, name, why);
  }

  int lnz = 0, unz = 0, n_row = 0, n_col = 0, nz_udiag = 0;
  if (!singular && umfpack_di_get_lunz(&lnz, &unz, &n_row, &n_col, &nz_udiag, numeric) != UMFPACK_OK) {
    umfpack_di_free_numeric(&numeric);
    return throw_range(env, name, "UMFPACK could not report the factors' sizes");
  }
  const size_t nn = (size_t)n;
  int32_t *l_col_ptr, *l_row_idx, *u_col_ptr, *u_row_idx, *row_pivot, *column_order;
  double *l_values, *u_values;
  napi_value out_l_ptr = new_typed(env, napi_int32_array, nn + 1, (void**)&l_col_ptr);
  napi_value out_l_idx = new_typed(env, napi_int32_array, (size_t)lnz, (void**)&l_row_idx);
  napi_value out_l_val = new_typed(env, napi_float64_array, (size_t)lnz, (void**)&l_values);
  napi_value out_u_ptr = new_typed(env, napi_int32_array, nn + 1, (void**)&u_col_ptr);
  napi_value out_u_idx = new_typed(env, napi_int32_array, (size_t)unz, (void**)&u_row_idx);
  napi_value out_u_val = new_typed(env, napi_float64_array, (size_t)unz, (void**)&u_values);
  napi_value out_p = new_typed(env, napi_int32_array, nn, (void**)&row_pivot);
  napi_value out_q = new_typed(env, napi_int32_array, nn, (void**)&column_order);
  /* L comes in compressed rows (diagonal last in each row): read into scratch, then transposed into columns. */
  int32_t* lp_rows = malloc(sizeof(int32_t) * (nn + 1));
  int32_t* lj_rows = malloc(sizeof(int32_t) * ((size_t)lnz + 1));
  double* lx_rows = malloc(sizeof(double) * ((size_t)lnz + 1));
  int32_t* p_new_to_old = malloc(sizeof(int32_t) * (nn + 1));
  napi_value result = NULL;
  bool made = out_l_ptr && out_l_idx && out_l_val && out_u_ptr && out_u_idx && out_u_val && out_p && out_q && lp_rows &&
              lj_rows && lx_rows && p_new_to_old;
  if (made && !singular) {
    int do_recip = 0;
    /* U, P and Q straight into their arrays, then L's rows, then UMFPACK's object is freed before L is
       transposed: at most the object, U and L's rows, or U and L twice, are held at once. */
    status = umfpack_di_get_numeric(NULL, NULL, NULL, u_col_ptr, u_row_idx, u_values, p_new_to_old, column_order, NULL,
                                    &do_recip, NULL, numeric);
    if (status == UMFPACK_OK)
      status = umfpack_di_get_numeric(lp_rows, lj_rows, lx_rows, NULL, NULL, NULL, NULL, NULL, NULL, &do_recip, NULL, numeric);
    umfpack_di_free_numeric(&numeric);
    made = status == UMFPACK_OK;
    if (made) {
      memset(l_col_ptr, 0, sizeof(int32_t) * (nn + 1));
      for (int32_t q = 0; q < lnz; q++) l_col_ptr[lj_rows[q] + 1]++;
      for (int32_t j = 0; j < n; j++) l_col_ptr[j + 1] += l_col_ptr[j];
      /* Rows in ascending order fill each column's rows ascending, its diagonal (the smallest row) first. */
      int32_t* next = malloc(sizeof(int32_t) * (nn + 1));
      made = next != NULL;
      if (made) {
        memcpy(next, l_col_ptr, sizeof(int32_t) * nn);
        for (int32_t i = 0; i < n; i++) {
          for (int32_t q = lp_rows[i]; q < lp_rows[i + 1]; q++) {
            const int32_t at = next[lj_rows[q]]++;
            l_row_idx[at] = i;
            l_values[at] = lx_rows[q];
          }
        }
        free(next);
        for (int32_t k = 0; k < n; k++) row_pivot[p_new_to_old[k]] = k;
      }
    }
  } else if (made) {
    memset(l_col_ptr, 0, sizeof(int32_t) * (nn + 1));
    memset(u_col_ptr, 0, sizeof(int32_t) * (nn + 1));
    for (int32_t k = 0; k < n; k++) row_pivot[k] = column_order[k] = k;
  }
  free(lp_rows);
  free(lj_rows);
  free(lx_rows);
  free(p_new_to_old);
  umfpack_di_free_numeric(&numeric);
  napi_value singular_value, strategy_value;
  if (made && napi_get_boolean(env, singular, &singular_value) == napi_ok &&
      napi_create_string_utf8(env, strategy, NAPI_AUTO_LENGTH, &strategy_value) == napi_ok &&
      napi_create_object(env, &result) == napi_ok) {
    napi_set_named_property(env, result, "lColPtr", out_l_ptr);
    napi_set_named_property(env, result, "lRowIdx", out_l_idx);
    napi_set_named_property(env, result, "lValues", out_l_val);
    napi_set_named_property(env, result, "uColPtr", out_u_ptr);
    napi_set_named_property(env, result, "uRowIdx", out_u_idx);
    napi_set_named_property(env, result, "uValues", out_u_val);
    napi_set_named_property(env, result, "rowPivot", out_p);
    napi_set_named_property(env, result, "columnOrder", out_q);
    napi_set_named_property(env, result, "singular", singular_value);
    napi_set_named_property(env, result, "strategy", strategy_value);
    return result;
  }
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) throw_range(env, name, "out of memory for the factors' arrays");
  return NULL;
}

/* An LU factor held for repeated solves: the arrays of src/solvers/sparse/sparseLu.ts, referenced, not copied. */
typedef struct {
  int32_t n;
  const int32_t *l_ptr, *l_idx, *u_ptr, *u_idx, *row_pivot, *column_order;
  const double *l_val, *u_val;
  double* work;
  napi_ref refs[8];
} LuSolver;

static void free_lu_solver(napi_env env, void* data, void* hint) {
  (void)hint;
  LuSolver* solver = data;
  for (int k = 0; k < 8; k++)
    if (solver->refs[k]) napi_delete_reference(env, solver->refs[k]);
  free(solver->work);
  free(solver);
}

/*
 * luSolver(n, lColPtr, lRowIdx, lValues, uColPtr, uRowIdx, uValues, rowPivot, columnOrder) -> handle, for the
 * layout umfpackLu returns (and the TypeScript LU makes): checked once here (pointers, L's unit diagonal first
 * and its rows below it, U's diagonal last and its rows above it, two permutations), so that a solve checks
 * only its vectors. The arrays are referenced and must not be resized or detached meanwhile.
 */
static napi_value LuSolverNew(napi_env env, napi_callback_info info) {
  const char* name = "luSolver";
  napi_value argv[9];
  if (!get_args(env, info, name, 9, argv)) return NULL;
  int32_t n;
  int32_t *l_ptr, *l_idx, *u_ptr, *u_idx, *row_pivot, *column_order;
  double *l_val, *u_val;
  size_t l_ptr_len, l_idx_len, l_val_len, u_ptr_len, u_idx_len, u_val_len, p_len, q_len;
  if (!get_count(env, argv[0], &n)) return throw_type(env, name, 0, "a non-negative 32-bit integer");
  if (!get_typed(env, argv[1], napi_int32_array, (void**)&l_ptr, &l_ptr_len)) return throw_type(env, name, 1, "an Int32Array");
  if (!get_typed(env, argv[2], napi_int32_array, (void**)&l_idx, &l_idx_len)) return throw_type(env, name, 2, "an Int32Array");
  if (!get_typed(env, argv[3], napi_float64_array, (void**)&l_val, &l_val_len)) return throw_type(env, name, 3, "a Float64Array");
  if (!get_typed(env, argv[4], napi_int32_array, (void**)&u_ptr, &u_ptr_len)) return throw_type(env, name, 4, "an Int32Array");
  if (!get_typed(env, argv[5], napi_int32_array, (void**)&u_idx, &u_idx_len)) return throw_type(env, name, 5, "an Int32Array");
  if (!get_typed(env, argv[6], napi_float64_array, (void**)&u_val, &u_val_len)) return throw_type(env, name, 6, "a Float64Array");
  if (!get_typed(env, argv[7], napi_int32_array, (void**)&row_pivot, &p_len)) return throw_type(env, name, 7, "an Int32Array");
  if (!get_typed(env, argv[8], napi_int32_array, (void**)&column_order, &q_len)) return throw_type(env, name, 8, "an Int32Array");
  const char* problem = check_compressed(n, l_ptr, l_ptr_len, l_idx, l_idx_len, l_val_len);
  if (problem) return throw_range(env, name, problem);
  problem = check_compressed(n, u_ptr, u_ptr_len, u_idx, u_idx_len, u_val_len);
  if (problem) return throw_range(env, name, problem);
  for (int32_t j = 0; j < n; j++) {
    if (l_ptr[j] == l_ptr[j + 1] || l_idx[l_ptr[j]] != j) return throw_range(env, name, "a column of L does not start with its diagonal");
    for (int32_t q = l_ptr[j] + 1; q < l_ptr[j + 1]; q++)
      if (l_idx[q] <= j) return throw_range(env, name, "L has an entry on or above its diagonal after the first");
    if (u_ptr[j] == u_ptr[j + 1] || u_idx[u_ptr[j + 1] - 1] != j) return throw_range(env, name, "a column of U does not end with its diagonal");
    for (int32_t q = u_ptr[j]; q < u_ptr[j + 1] - 1; q++)
      if (u_idx[q] >= j) return throw_range(env, name, "U has an entry on or below its diagonal before the last");
  }
  for (int k = 0; k < 2; k++) {
    PermutationCheck found = k == 0 ? check_permutation(row_pivot, p_len, n) : check_permutation(column_order, q_len, n);
    if (found == PERMUTATION_NO_MEMORY) return throw_range(env, name, "out of memory");
    if (found != PERMUTATION_OK) return throw_range(env, name, "rowPivot or columnOrder is not a permutation of 0 .. n - 1");
  }

  LuSolver* solver = calloc(1, sizeof *solver);
  double* work = malloc(sizeof(double) * ((size_t)n + 1));
  if (!solver || !work) {
    free(solver);
    free(work);
    return throw_range(env, name, "out of memory");
  }
  *solver = (LuSolver){n, l_ptr, l_idx, u_ptr, u_idx, row_pivot, column_order, l_val, u_val, work, {NULL}};
  return wrap_handle(env, name, solver, free_lu_solver, argv + 1, 8, solver->refs, "cannot reference the factor's arrays");
}

/* The solves' arithmetic, without contraction (no fused multiply-add whatever the target's flags), as in csr_kernels.c. */
NO_CONTRACTION static void lu_solve_into(const LuSolver* f, const double* b, double* x, bool transposed) {
  const int32_t n = f->n;
  const int32_t *restrict lp = f->l_ptr, *restrict li = f->l_idx, *restrict up = f->u_ptr, *restrict ui = f->u_idx;
  const double *restrict lv = f->l_val, *restrict uv = f->u_val;
  double* restrict z = f->work;
  if (!transposed) {
    for (int32_t i = 0; i < n; i++) z[f->row_pivot[i]] = b[i];
    for (int32_t j = 0; j < n; j++) {
      const double zj = z[j];
      if (zj == 0) continue;
      for (int32_t q = lp[j] + 1; q < lp[j + 1]; q++) z[li[q]] -= lv[q] * zj;
    }
    for (int32_t j = n - 1; j >= 0; j--) {
      const int32_t last = up[j + 1] - 1;
      const double zj = (z[j] /= uv[last]);
      if (zj == 0) continue;
      for (int32_t q = up[j]; q < last; q++) z[ui[q]] -= uv[q] * zj;
    }
    for (int32_t k = 0; k < n; k++) x[f->column_order[k]] = z[k];
  } else {
    for (int32_t k = 0; k < n; k++) z[k] = b[f->column_order[k]];
    for (int32_t j = 0; j < n; j++) {
      const int32_t last = up[j + 1] - 1;
      double s = z[j];
      for (int32_t q = up[j]; q < last; q++) s -= uv[q] * z[ui[q]];
      z[j] = s / uv[last];
    }
    for (int32_t j = n - 1; j >= 0; j--) {
      double s = z[j];
      for (int32_t q = lp[j] + 1; q < lp[j + 1]; q++) s -= lv[q] * z[li[q]];
      z[j] = s;
    }
    for (int32_t i = 0; i < n; i++) x[i] = z[f->row_pivot[i]];
  }
}

/*
 * luSolve(handle, b, x, transposed): x = A^{-1} b, or A^{-T} b when transposed, with P A Q = L U: the
 * operations of sparseLuSolve / sparseLuSolveTransposed (src/solvers/sparse/sparseLu.ts) in their order,
 * so the results are theirs to the bit (b and x may be the same array).
 */
static napi_value LuSolve(napi_env env, napi_callback_info info) {
  const char* name = "luSolve";
  napi_value argv[4];
  if (!get_args(env, info, name, 4, argv)) return NULL;
  const LuSolver* f = external_data(env, argv[0]);
  if (f == NULL) return throw_type(env, name, 0, "a handle from luSolver");
  double *b, *x;
  size_t b_len, x_len;
  bool transposed;
  if (!get_typed(env, argv[1], napi_float64_array, (void**)&b, &b_len)) return throw_type(env, name, 1, "a Float64Array");
  if (!get_typed(env, argv[2], napi_float64_array, (void**)&x, &x_len)) return throw_type(env, name, 2, "a Float64Array");
  if (napi_get_value_bool(env, argv[3], &transposed) != napi_ok) return throw_type(env, name, 3, "a boolean");
  const int32_t n = f->n;
  if (b_len < (size_t)n || x_len < (size_t)n) return throw_range(env, name, "b or x is shorter than n");
  lu_solve_into(f, b, x, transposed);
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

static napi_value UmfpackConfig(napi_env env, napi_callback_info info) {
  (void)info;
  char text[64];
  snprintf(text, sizeof text, "UMFPACK %d.%d.%d", UMFPACK_MAIN_VERSION, UMFPACK_SUB_VERSION, UMFPACK_SUBSUB_VERSION);
  napi_value out;
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &out);
  return out;
}

void register_lu(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"umfpackLu", NULL, UmfpackLu, NULL, NULL, NULL, napi_enumerable, NULL},
      {"umfpackConfig", NULL, UmfpackConfig, NULL, NULL, NULL, napi_enumerable, NULL},
      {"luSolver", NULL, LuSolverNew, NULL, NULL, NULL, napi_enumerable, NULL},
      {"luSolve", NULL, LuSolve, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
}
