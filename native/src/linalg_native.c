/*
 * linalg_native: a thin N-API binding of OpenBLAS (CBLAS) and LAPACKE for src/solvers.
 *
 * Every call works in place on the caller's Float64Array / Int32Array memory (the typed array's
 * data pointer, already adjusted by its byteOffset, plus an element offset): nothing is copied
 * except where LAPACKE's row-major layer does so (dgetrf, documented in backend.ts).
 * Extents are checked against the arrays' lengths before any BLAS call, so a wrong argument
 * throws a RangeError instead of reading or writing outside the array.
 *
 * Layouts: the BLAS calls (dgemv, dgemm, dtrsv, dtrsm) and dgetrf/dgetrs are row-major, like the
 * TypeScript code. The Householder and bidiagonal routines (dgeqrf, dorgqr, dgeqrt3, dlarfb,
 * dlabrd, dgebrd, dgesddValues) are column-major, as in LAPACK: the column-major view of
 * row-major storage is its transpose, which is exactly what the thin QR of A_i^T needs.
 *
 * The row kernels (rowsDot, rowsCombine, rowsFused; row_kernels.c) are this addon's own, single-threaded
 * code, not BLAS: the solvers' engine runs them on its own threads.
 *
 * Calls are synchronous: the TypeScript side splits large factorizations into calls of bounded
 * size and returns to the event loop between them.
 */
#ifndef NAPI_VERSION
#define NAPI_VERSION 8
#endif
#include <node_api.h>

#include <cblas.h>
#include <lapacke.h>

#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "row_kernels.h"
#include "block_step.h"
#include "csr_kernels.h"
#ifdef LINALG_SPARSE
#include "lu_native.h"
#include "sparse_native.h"
#endif
#ifdef LINALG_ARPACK
#include "arpack_native.h"
#endif
#ifdef LINALG_METIS
#include "metis_native.h"
#endif
#ifdef LINALG_SPQR
#include "spqr_native.h"
#endif

/* Part of LAPACK (shipped in libopenblas) but not of LAPACKE: one panel of the blocked bidiagonalization. */
extern void dlabrd_(const lapack_int* m, const lapack_int* n, const lapack_int* nb, double* a, const lapack_int* lda,
                    double* d, double* e, double* tauq, double* taup, double* x, const lapack_int* ldx, double* y,
                    const lapack_int* ldy);

#define MAX_ARGS 24

typedef struct {
  napi_env env;
  const char* name;
  napi_value argv[MAX_ARGS];
  size_t argc;
} Call;

static napi_value throw_range(Call* call, const char* message) {
  char text[256];
  snprintf(text, sizeof text, "%s: %s", call->name, message);
  napi_throw_range_error(call->env, NULL, text);
  return NULL;
}

/* LAPACKE's negative info: an argument LAPACK rejected, or a workspace/transposition that could not be allocated. */
static napi_value lapack_failure(Call* call, lapack_int info) {
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR) return throw_range(call, "out of memory");
  char text[64];
  snprintf(text, sizeof text, "LAPACK rejected argument %d", (int)-info);
  return throw_range(call, text);
}

static bool fail_type(Call* call, size_t index, const char* expected) {
  char text[160];
  snprintf(text, sizeof text, "%s: argument %zu must be %s", call->name, index, expected);
  napi_throw_type_error(call->env, NULL, text);
  return false;
}

/*
 * Reads the arguments by a format: 'b' bool*, 'i' non-negative int32 (lapack_int*), 'd' double*,
 * 'F' Float64Array (double**, size_t* length), 'I' Int32Array (lapack_int**, size_t* length).
 */
static bool read_args(Call* call, napi_callback_info info, const char* format, ...) {
  size_t expected = strlen(format);
  call->argc = MAX_ARGS;
  if (napi_get_cb_info(call->env, info, &call->argc, call->argv, NULL, NULL) != napi_ok) return false;
  if (call->argc < expected) {
    char text[160];
    snprintf(text, sizeof text, "%s: expected %zu arguments, got %zu", call->name, expected, call->argc);
    napi_throw_type_error(call->env, NULL, text);
    return false;
  }
  va_list ap;
  va_start(ap, format);
  bool ok = true;
  for (size_t k = 0; ok && k < expected; k++) {
    napi_value v = call->argv[k];
    switch (format[k]) {
      case 'b': {
        bool* out = va_arg(ap, bool*);
        if (napi_get_value_bool(call->env, v, out) != napi_ok) ok = fail_type(call, k, "a boolean");
        break;
      }
      case 'd': {
        double* out = va_arg(ap, double*);
        if (napi_get_value_double(call->env, v, out) != napi_ok) ok = fail_type(call, k, "a number");
        break;
      }
      case 'i': {
        lapack_int* out = va_arg(ap, lapack_int*);
        double value;
        if (napi_get_value_double(call->env, v, &value) != napi_ok || !(value >= 0) || value > 2147483647.0 ||
            value != floor(value)) {
          ok = fail_type(call, k, "a non-negative 32-bit integer");
        } else {
          *out = (lapack_int)value;
        }
        break;
      }
      case 'F':
      case 'I': {
        void** data = va_arg(ap, void**);
        size_t* length = va_arg(ap, size_t*);
        bool is_typed = false;
        napi_typedarray_type type;
        napi_value buffer;
        size_t byte_offset;
        if (napi_is_typedarray(call->env, v, &is_typed) != napi_ok || !is_typed ||
            napi_get_typedarray_info(call->env, v, &type, length, data, &buffer, &byte_offset) != napi_ok ||
            type != (format[k] == 'F' ? napi_float64_array : napi_int32_array)) {
          ok = fail_type(call, k, format[k] == 'F' ? "a Float64Array" : "an Int32Array");
        }
        break;
      }
      default:
        ok = false;
    }
  }
  va_end(ap);
  return ok;
}

/* Row-major rows x cols at `offset` with leading dimension ld fits in `length` elements. */
static bool fits_rows(Call* call, const char* what, size_t length, lapack_int offset, lapack_int rows, lapack_int cols,
                      lapack_int ld) {
  char text[200];
  if (ld < (cols > 1 ? cols : 1)) {
    snprintf(text, sizeof text, "leading dimension of %s (%d) is below its column count (%d)", what, ld, cols);
    throw_range(call, text);
    return false;
  }
  int64_t end = rows == 0 || cols == 0 ? (int64_t)offset : (int64_t)offset + (int64_t)(rows - 1) * ld + cols;
  if (end > (int64_t)length) {
    snprintf(text, sizeof text, "%s (%d x %d, ld %d, offset %d) runs past its array (length %zu)", what, rows, cols,
             ld, offset, length);
    throw_range(call, text);
    return false;
  }
  return true;
}

/* Column-major rows x cols: the row-major cols x rows of the same memory. */
static bool fits_columns(Call* call, const char* what, size_t length, lapack_int offset, lapack_int rows,
                         lapack_int cols, lapack_int ld) {
  return fits_rows(call, what, length, offset, cols, rows, ld);
}

static bool fits_vector(Call* call, const char* what, size_t length, lapack_int offset, lapack_int count) {
  return fits_rows(call, what, length, offset, 1, count, count > 1 ? count : 1);
}

static napi_value number(napi_env env, double value) {
  napi_value out;
  napi_create_double(env, value, &out);
  return out;
}

static napi_value undefined(napi_env env) {
  napi_value out;
  napi_get_undefined(env, &out);
  return out;
}

/* y = beta y (BLAS skips this when the inner dimension is 0; keep the mathematical meaning). */
static void scale_vector(double* y, lapack_int count, double beta) {
  for (lapack_int i = 0; i < count; i++) y[i] = beta == 0 ? 0 : beta * y[i];
}

/* dgemv(trans, m, n, alpha, a, aOffset, lda, x, xOffset, beta, y, yOffset): y = alpha op(A) x + beta y, row-major. */
static napi_value Dgemv(napi_env env, napi_callback_info info) {
  Call call = {env, "dgemv"};
  bool trans;
  lapack_int m, n, a_off, lda, x_off, y_off;
  double alpha, beta, *a, *x, *y;
  size_t a_len, x_len, y_len;
  if (!read_args(&call, info, "biidFiiFidFi", &trans, &m, &n, &alpha, &a, &a_len, &a_off, &lda, &x, &x_len, &x_off,
                 &beta, &y, &y_len, &y_off))
    return NULL;
  lapack_int in = trans ? m : n, out = trans ? n : m;
  if (!fits_rows(&call, "A", a_len, a_off, m, n, lda) || !fits_vector(&call, "x", x_len, x_off, in) ||
      !fits_vector(&call, "y", y_len, y_off, out))
    return NULL;
  if (out == 0) return undefined(env);
  if (in == 0) {
    scale_vector(y + y_off, out, beta);
    return undefined(env);
  }
  cblas_dgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, m, n, alpha, a + a_off, lda, x + x_off, 1, beta,
              y + y_off, 1);
  return undefined(env);
}

/* The written range [w, w + wn) and the read range [r, r + rn) share no element (the row kernels are restrict). */
static bool disjoint(Call* call, const char* written, const double* w, size_t wn, const char* read, const double* r,
                     size_t rn) {
  if (wn == 0 || rn == 0 || w + wn <= r || r + rn <= w) return true;
  char text[160];
  snprintf(text, sizeof text, "%s overlaps %s", written, read);
  throw_range(call, text);
  return false;
}

/* Elements a row-major rows x cols block with leading dimension ld spans (0 when empty). */
static size_t block_span(lapack_int rows, lapack_int cols, lapack_int ld) {
  return rows == 0 || cols == 0 ? 0 : (size_t)(rows - 1) * (size_t)ld + (size_t)cols;
}

/* rowsDot(rows, cols, x, xOffset, ld, v, vOffset, out, outOffset): out[k] = X[k] . v. */
static napi_value RowsDot(napi_env env, napi_callback_info info) {
  Call call = {env, "rowsDot"};
  lapack_int rows, cols, x_off, ld, v_off, out_off;
  double *x, *v, *out;
  size_t x_len, v_len, out_len;
  if (!read_args(&call, info, "iiFiiFiFi", &rows, &cols, &x, &x_len, &x_off, &ld, &v, &v_len, &v_off, &out, &out_len,
                 &out_off))
    return NULL;
  if (!fits_rows(&call, "X", x_len, x_off, rows, cols, ld) || !fits_vector(&call, "v", v_len, v_off, cols) ||
      !fits_vector(&call, "out", out_len, out_off, rows))
    return NULL;
  double *px = x + x_off, *pv = v + v_off, *po = out + out_off;
  if (!disjoint(&call, "out", po, rows, "X", px, block_span(rows, cols, ld)) ||
      !disjoint(&call, "out", po, rows, "v", pv, cols))
    return NULL;
  rows_dot(rows, cols, px, ld, pv, po);
  return undefined(env);
}

/* rowsCombine(rows, cols, scale, x, xOffset, ld, w, wOffset, y, yOffset): y += scale sum_k w[k] X[k]. */
static napi_value RowsCombine(napi_env env, napi_callback_info info) {
  Call call = {env, "rowsCombine"};
  lapack_int rows, cols, x_off, ld, w_off, y_off;
  double scale, *x, *w, *y;
  size_t x_len, w_len, y_len;
  if (!read_args(&call, info, "iidFiiFiFi", &rows, &cols, &scale, &x, &x_len, &x_off, &ld, &w, &w_len, &w_off, &y,
                 &y_len, &y_off))
    return NULL;
  if (!fits_rows(&call, "X", x_len, x_off, rows, cols, ld) || !fits_vector(&call, "w", w_len, w_off, rows) ||
      !fits_vector(&call, "y", y_len, y_off, cols))
    return NULL;
  double *px = x + x_off, *pw = w + w_off, *py = y + y_off;
  if (!disjoint(&call, "y", py, cols, "X", px, block_span(rows, cols, ld)) ||
      !disjoint(&call, "y", py, cols, "w", pw, rows))
    return NULL;
  rows_combine(rows, cols, scale, px, ld, pw, py);
  return undefined(env);
}

/*
 * rowsFused(rows, cols, scale, x, xOffset, ld, v, vOffset, bias, biasOffset, dots, dotsOffset, y, yOffset):
 * dots[k] = X[k] . v - bias[k], y += scale dots[k] X[k], each row read once.
 */
static napi_value RowsFused(napi_env env, napi_callback_info info) {
  Call call = {env, "rowsFused"};
  lapack_int rows, cols, x_off, ld, v_off, bias_off, dots_off, y_off;
  double scale, *x, *v, *bias, *dots, *y;
  size_t x_len, v_len, bias_len, dots_len, y_len;
  if (!read_args(&call, info, "iidFiiFiFiFiFi", &rows, &cols, &scale, &x, &x_len, &x_off, &ld, &v, &v_len, &v_off,
                 &bias, &bias_len, &bias_off, &dots, &dots_len, &dots_off, &y, &y_len, &y_off))
    return NULL;
  if (!fits_rows(&call, "X", x_len, x_off, rows, cols, ld) || !fits_vector(&call, "v", v_len, v_off, cols) ||
      !fits_vector(&call, "bias", bias_len, bias_off, rows) || !fits_vector(&call, "dots", dots_len, dots_off, rows) ||
      !fits_vector(&call, "y", y_len, y_off, cols))
    return NULL;
  double *px = x + x_off, *pv = v + v_off, *pb = bias + bias_off, *pd = dots + dots_off, *py = y + y_off;
  size_t span = block_span(rows, cols, ld);
  if (!disjoint(&call, "y", py, cols, "X", px, span) || !disjoint(&call, "y", py, cols, "v", pv, cols) ||
      !disjoint(&call, "y", py, cols, "bias", pb, rows) || !disjoint(&call, "y", py, cols, "dots", pd, rows) ||
      !disjoint(&call, "dots", pd, rows, "X", px, span) || !disjoint(&call, "dots", pd, rows, "v", pv, cols) ||
      !disjoint(&call, "dots", pd, rows, "bias", pb, rows))
    return NULL;
  rows_fused(rows, cols, scale, px, ld, pv, pb, pd, py);
  return undefined(env);
}

/* dgemm(transA, transB, m, n, k, alpha, a, aOff, lda, b, bOff, ldb, beta, c, cOff, ldc): C = alpha op(A) op(B) + beta C, row-major. */
static napi_value Dgemm(napi_env env, napi_callback_info info) {
  Call call = {env, "dgemm"};
  bool ta, tb;
  lapack_int m, n, k, a_off, lda, b_off, ldb, c_off, ldc;
  double alpha, beta, *a, *b, *c;
  size_t a_len, b_len, c_len;
  if (!read_args(&call, info, "bbiiidFiiFiidFii", &ta, &tb, &m, &n, &k, &alpha, &a, &a_len, &a_off, &lda, &b, &b_len,
                 &b_off, &ldb, &beta, &c, &c_len, &c_off, &ldc))
    return NULL;
  if (!fits_rows(&call, "A", a_len, a_off, ta ? k : m, ta ? m : k, lda) ||
      !fits_rows(&call, "B", b_len, b_off, tb ? n : k, tb ? k : n, ldb) ||
      !fits_rows(&call, "C", c_len, c_off, m, n, ldc))
    return NULL;
  if (m == 0 || n == 0) return undefined(env);
  if (k == 0) {
    for (lapack_int i = 0; i < m; i++) scale_vector(c + c_off + (size_t)i * ldc, n, beta);
    return undefined(env);
  }
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha,
              a + a_off, lda, b + b_off, ldb, beta, c + c_off, ldc);
  return undefined(env);
}

/* dtrsv(upper, trans, unitDiagonal, n, a, aOff, lda, x, xOff): x = op(A)^{-1} x, A triangular, row-major. */
static napi_value Dtrsv(napi_env env, napi_callback_info info) {
  Call call = {env, "dtrsv"};
  bool upper, trans, unit;
  lapack_int n, a_off, lda, x_off;
  double *a, *x;
  size_t a_len, x_len;
  if (!read_args(&call, info, "bbbiFiiFi", &upper, &trans, &unit, &n, &a, &a_len, &a_off, &lda, &x, &x_len, &x_off))
    return NULL;
  if (!fits_rows(&call, "A", a_len, a_off, n, n, lda) || !fits_vector(&call, "x", x_len, x_off, n)) return NULL;
  if (n == 0) return undefined(env);
  cblas_dtrsv(CblasRowMajor, upper ? CblasUpper : CblasLower, trans ? CblasTrans : CblasNoTrans,
              unit ? CblasUnit : CblasNonUnit, n, a + a_off, lda, x + x_off, 1);
  return undefined(env);
}

/*
 * dtrsm(leftSide, upper, trans, unitDiagonal, m, n, alpha, a, aOff, lda, b, bOff, ldb):
 * B = alpha op(A)^{-1} B (left) or alpha B op(A)^{-1} (right); B is m x n, row-major.
 */
static napi_value Dtrsm(napi_env env, napi_callback_info info) {
  Call call = {env, "dtrsm"};
  bool left, upper, trans, unit;
  lapack_int m, n, a_off, lda, b_off, ldb;
  double alpha, *a, *b;
  size_t a_len, b_len;
  if (!read_args(&call, info, "bbbbiidFiiFii", &left, &upper, &trans, &unit, &m, &n, &alpha, &a, &a_len, &a_off,
                 &lda, &b, &b_len, &b_off, &ldb))
    return NULL;
  lapack_int order = left ? m : n;
  if (!fits_rows(&call, "A", a_len, a_off, order, order, lda) || !fits_rows(&call, "B", b_len, b_off, m, n, ldb))
    return NULL;
  if (m == 0 || n == 0) return undefined(env);
  cblas_dtrsm(CblasRowMajor, left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower,
              trans ? CblasTrans : CblasNoTrans, unit ? CblasUnit : CblasNonUnit, m, n, alpha, a + a_off, lda,
              b + b_off, ldb);
  return undefined(env);
}

/*
 * rowsFusedBlock(rows, cols, w, scale, x, ld, v, bias, dots, y): dots = X V - bias (rows x w), y += scale X^T dots
 * (cols x w), the block form of rowsFused (every block from its array's start, row-major with w columns).
 */
static napi_value RowsFusedBlock(napi_env env, napi_callback_info info) {
  Call call = {env, "rowsFusedBlock"};
  lapack_int rows, cols, w, ld;
  double scale, *x, *v, *bias, *dots, *y;
  size_t x_len, v_len, bias_len, dots_len, y_len;
  if (!read_args(&call, info, "iiidFiFFFF", &rows, &cols, &w, &scale, &x, &x_len, &ld, &v, &v_len, &bias, &bias_len,
                 &dots, &dots_len, &y, &y_len))
    return NULL;
  if (rows == 0 || cols == 0 || w == 0) return undefined(env);
  if (!fits_rows(&call, "X", x_len, 0, rows, cols, ld) || !fits_rows(&call, "V", v_len, 0, cols, w, w) ||
      !fits_rows(&call, "bias", bias_len, 0, rows, w, w) || !fits_rows(&call, "dots", dots_len, 0, rows, w, w) ||
      !fits_rows(&call, "y", y_len, 0, cols, w, w))
    return NULL;
  const size_t span = block_span(rows, cols, ld), rw = (size_t)rows * w, cw = (size_t)cols * w;
  if (!disjoint(&call, "y", y, cw, "X", x, span) || !disjoint(&call, "y", y, cw, "V", v, cw) ||
      !disjoint(&call, "y", y, cw, "bias", bias, rw) || !disjoint(&call, "y", y, cw, "dots", dots, rw) ||
      !disjoint(&call, "dots", dots, rw, "X", x, span) || !disjoint(&call, "dots", dots, rw, "V", v, cw) ||
      !disjoint(&call, "dots", dots, rw, "bias", bias, rw))
    return NULL;
  if (rows_fused_block(rows, cols, w, scale, x, ld, v, bias, dots, y) != 0) {
    napi_throw_error(env, NULL, "rowsFusedBlock: out of memory");
    return NULL;
  }
  return undefined(env);
}

/*
 * dtrmm(upper, trans, m, n, alpha, a, lda, b, ldb): B = alpha op(A) B for triangular m x m A (left side, non-unit
 * diagonal), B m x n; both row-major from their arrays' start.
 */
static napi_value Dtrmm(napi_env env, napi_callback_info info) {
  Call call = {env, "dtrmm"};
  bool upper, trans;
  lapack_int m, n, lda, ldb;
  double alpha, *a, *b;
  size_t a_len, b_len;
  if (!read_args(&call, info, "bbiidFiFi", &upper, &trans, &m, &n, &alpha, &a, &a_len, &lda, &b, &b_len, &ldb)) return NULL;
  if (!fits_rows(&call, "A", a_len, 0, m, m, lda) || !fits_rows(&call, "B", b_len, 0, m, n, ldb)) return NULL;
  if (m == 0 || n == 0) return undefined(env);
  cblas_dtrmm(CblasRowMajor, CblasLeft, upper ? CblasUpper : CblasLower, trans ? CblasTrans : CblasNoTrans, CblasNonUnit,
              m, n, alpha, a, lda, b, ldb);
  return undefined(env);
}

/*
 * dgetrf(m, n, a, aOff, lda, ipiv, ipivOff) -> info: P A = L U of a row-major m x n matrix (LAPACKE's
 * row-major layer factors a transposed copy). ipiv is 1-based: row i was swapped with row ipiv[i] - 1.
 */
static napi_value Dgetrf(napi_env env, napi_callback_info info) {
  Call call = {env, "dgetrf"};
  lapack_int m, n, a_off, lda, p_off;
  double* a;
  lapack_int* ipiv;
  size_t a_len, p_len;
  if (!read_args(&call, info, "iiFiiIi", &m, &n, &a, &a_len, &a_off, &lda, &ipiv, &p_len, &p_off)) return NULL;
  lapack_int k = m < n ? m : n;
  if (!fits_rows(&call, "A", a_len, a_off, m, n, lda) || !fits_vector(&call, "ipiv", p_len, p_off, k)) return NULL;
  if (k == 0) return number(env, 0);
  lapack_int result = LAPACKE_dgetrf_work(LAPACK_ROW_MAJOR, m, n, a + a_off, lda, ipiv + p_off);
  if (result < 0) return lapack_failure(&call, result);
  return number(env, result);
}

/*
 * dgetrs(trans, n, nrhs, a, aOff, lda, ipiv, ipivOff, b, bOff, ldb) -> 0: solves op(A) X = B with the
 * row-major factors of dgetrf, in place on the row-major n x nrhs B, without copying A.
 */
static napi_value Dgetrs(napi_env env, napi_callback_info info) {
  Call call = {env, "dgetrs"};
  bool trans;
  lapack_int n, nrhs, a_off, lda, p_off, b_off, ldb;
  double *a, *b;
  lapack_int* ipiv;
  size_t a_len, p_len, b_len;
  if (!read_args(&call, info, "biiFiiIiFii", &trans, &n, &nrhs, &a, &a_len, &a_off, &lda, &ipiv, &p_len, &p_off, &b,
                 &b_len, &b_off, &ldb))
    return NULL;
  if (!fits_rows(&call, "A", a_len, a_off, n, n, lda) || !fits_vector(&call, "ipiv", p_len, p_off, n) ||
      !fits_rows(&call, "B", b_len, b_off, n, nrhs, ldb))
    return NULL;
  if (n == 0 || nrhs == 0) return number(env, 0);
  for (lapack_int i = 0; i < n; i++) {
    if (ipiv[p_off + i] < 1 || ipiv[p_off + i] > n) return throw_range(&call, "pivot index out of range");
  }
  double* f = a + a_off;
  double* x = b + b_off;
  if (!trans) {
    /* A = P^T L U: apply the interchanges in order, then L and U. */
    for (lapack_int i = 0; i < n; i++) {
      lapack_int r = ipiv[p_off + i] - 1;
      if (r != i) cblas_dswap(nrhs, x + (size_t)i * ldb, 1, x + (size_t)r * ldb, 1);
    }
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, nrhs, 1.0, f, lda, x, ldb);
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, nrhs, 1.0, f, lda, x, ldb);
  } else {
    /* A^T = U^T L^T P: U^T, then L^T, then the interchanges in reverse order. */
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasUpper, CblasTrans, CblasNonUnit, n, nrhs, 1.0, f, lda, x, ldb);
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasUnit, n, nrhs, 1.0, f, lda, x, ldb);
    for (lapack_int i = n - 1; i >= 0; i--) {
      lapack_int r = ipiv[p_off + i] - 1;
      if (r != i) cblas_dswap(nrhs, x + (size_t)i * ldb, 1, x + (size_t)r * ldb, 1);
    }
  }
  return number(env, 0);
}

/* dgeqrf(m, n, a, aOff, lda, tau, tauOff) -> info: Householder QR of the column-major m x n matrix. */
static napi_value Dgeqrf(napi_env env, napi_callback_info info) {
  Call call = {env, "dgeqrf"};
  lapack_int m, n, a_off, lda, t_off;
  double *a, *tau;
  size_t a_len, t_len;
  if (!read_args(&call, info, "iiFiiFi", &m, &n, &a, &a_len, &a_off, &lda, &tau, &t_len, &t_off)) return NULL;
  lapack_int k = m < n ? m : n;
  if (!fits_columns(&call, "A", a_len, a_off, m, n, lda) || !fits_vector(&call, "tau", t_len, t_off, k)) return NULL;
  if (k == 0) return number(env, 0);
  double query;
  lapack_int result = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a + a_off, lda, tau + t_off, &query, -1);
  lapack_int lwork = result == 0 ? (lapack_int)query : n;
  if (lwork < 1) lwork = 1;
  double* work = malloc(sizeof(double) * (size_t)lwork);
  if (!work) return throw_range(&call, "out of memory");
  result = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a + a_off, lda, tau + t_off, work, lwork);
  free(work);
  if (result < 0) return lapack_failure(&call, result);
  return number(env, result);
}

/* dorgqr(m, n, k, a, aOff, lda, tau, tauOff) -> info: the first n columns of Q from dgeqrf, column-major. */
static napi_value Dorgqr(napi_env env, napi_callback_info info) {
  Call call = {env, "dorgqr"};
  lapack_int m, n, k, a_off, lda, t_off;
  double *a, *tau;
  size_t a_len, t_len;
  if (!read_args(&call, info, "iiiFiiFi", &m, &n, &k, &a, &a_len, &a_off, &lda, &tau, &t_len, &t_off)) return NULL;
  if (n > m || k > n) return throw_range(&call, "needs m >= n >= k");
  if (!fits_columns(&call, "A", a_len, a_off, m, n, lda) || !fits_vector(&call, "tau", t_len, t_off, k)) return NULL;
  if (n == 0) return number(env, 0);
  double query;
  lapack_int result = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a + a_off, lda, tau + t_off, &query, -1);
  lapack_int lwork = result == 0 ? (lapack_int)query : n;
  if (lwork < 1) lwork = 1;
  double* work = malloc(sizeof(double) * (size_t)lwork);
  if (!work) return throw_range(&call, "out of memory");
  result = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a + a_off, lda, tau + t_off, work, lwork);
  free(work);
  if (result < 0) return lapack_failure(&call, result);
  return number(env, result);
}

/*
 * dgeqrt3(m, n, a, aOff, lda, t, tOff, ldt) -> info: recursive Householder QR of the column-major
 * m x n matrix (m >= n), all in BLAS-3: R on and above the diagonal, the reflectors V below, and the
 * n x n upper triangular T of H = I - V T V^T (the blocked form dlarfb applies).
 */
static napi_value Dgeqrt3(napi_env env, napi_callback_info info) {
  Call call = {env, "dgeqrt3"};
  lapack_int m, n, a_off, lda, t_off, ldt;
  double *a, *t;
  size_t a_len, t_len;
  if (!read_args(&call, info, "iiFiiFii", &m, &n, &a, &a_len, &a_off, &lda, &t, &t_len, &t_off, &ldt)) return NULL;
  if (n > m) return throw_range(&call, "needs m >= n");
  if (!fits_columns(&call, "A", a_len, a_off, m, n, lda) || !fits_columns(&call, "T", t_len, t_off, n, n, ldt))
    return NULL;
  if (n == 0) return number(env, 0);
  lapack_int result = LAPACKE_dgeqrt3_work(LAPACK_COL_MAJOR, m, n, a + a_off, lda, t + t_off, ldt);
  if (result < 0) return lapack_failure(&call, result);
  return number(env, result);
}

/*
 * dlarfb(transpose, m, n, k, v, vOff, ldv, t, tOff, ldt, c, cOff, ldc): C = H C (or H^T C) for the
 * block reflector H = I - V T V^T from dgeqrt3; C column-major m x n. Only the unit lower trapezoid
 * of V is read, so V may share its storage with the R of dgeqrf.
 */
static napi_value Dlarfb(napi_env env, napi_callback_info info) {
  Call call = {env, "dlarfb"};
  bool transpose;
  lapack_int m, n, k, v_off, ldv, t_off, ldt, c_off, ldc;
  double *v, *t, *c;
  size_t v_len, t_len, c_len;
  if (!read_args(&call, info, "biiiFiiFiiFii", &transpose, &m, &n, &k, &v, &v_len, &v_off, &ldv, &t, &t_len, &t_off,
                 &ldt, &c, &c_len, &c_off, &ldc))
    return NULL;
  if (k > m) return throw_range(&call, "needs k <= m");
  if (!fits_columns(&call, "V", v_len, v_off, m, k, ldv) || !fits_columns(&call, "T", t_len, t_off, k, k, ldt) ||
      !fits_columns(&call, "C", c_len, c_off, m, n, ldc))
    return NULL;
  if (m == 0 || n == 0 || k == 0) return undefined(env);
  double* work = malloc(sizeof(double) * (size_t)n * (size_t)k);
  if (!work) return throw_range(&call, "out of memory");
  LAPACKE_dlarfb_work(LAPACK_COL_MAJOR, 'L', transpose ? 'T' : 'N', 'F', 'C', m, n, k, v + v_off, ldv, t + t_off, ldt,
                      c + c_off, ldc, work, n);
  free(work);
  return undefined(env);
}

/*
 * dlabrd(m, n, nb, a, aOff, lda, d, dOff, e, eOff, tauq, tauqOff, taup, taupOff, x, xOff, ldx, y, yOff, ldy):
 * reduces the first nb rows and columns of the column-major m x n matrix (m >= n) to upper
 * bidiagonal form and returns X (m x nb) and Y (n x nb) for the trailing update
 * A22 -= V Y2^T + X2 U (LAPACK's dgebrd does the same, in one call).
 */
static napi_value Dlabrd(napi_env env, napi_callback_info info) {
  Call call = {env, "dlabrd"};
  lapack_int m, n, nb, a_off, lda, d_off, e_off, q_off, p_off, x_off, ldx, y_off, ldy;
  double *a, *d, *e, *tauq, *taup, *x, *y;
  size_t a_len, d_len, e_len, q_len, p_len, x_len, y_len;
  if (!read_args(&call, info, "iiiFiiFiFiFiFiFiiFii", &m, &n, &nb, &a, &a_len, &a_off, &lda, &d, &d_len, &d_off, &e,
                 &e_len, &e_off, &tauq, &q_len, &q_off, &taup, &p_len, &p_off, &x, &x_len, &x_off, &ldx, &y, &y_len,
                 &y_off, &ldy))
    return NULL;
  if (m < n || nb > n) return throw_range(&call, "needs m >= n >= nb");
  if (!fits_columns(&call, "A", a_len, a_off, m, n, lda) || !fits_vector(&call, "d", d_len, d_off, nb) ||
      !fits_vector(&call, "e", e_len, e_off, nb) || !fits_vector(&call, "tauq", q_len, q_off, nb) ||
      !fits_vector(&call, "taup", p_len, p_off, nb) || !fits_columns(&call, "X", x_len, x_off, m, nb, ldx) ||
      !fits_columns(&call, "Y", y_len, y_off, n, nb, ldy))
    return NULL;
  if (nb == 0) return undefined(env);
  dlabrd_(&m, &n, &nb, a + a_off, &lda, d + d_off, e + e_off, tauq + q_off, taup + p_off, x + x_off, &ldx, y + y_off,
          &ldy);
  return undefined(env);
}

/*
 * dgebrd(m, n, a, aOff, lda, d, dOff, e, eOff) -> info: upper bidiagonal form (m >= n) of the
 * column-major matrix: diagonal d (n), superdiagonal e (n - 1); the reflectors are discarded.
 */
static napi_value Dgebrd(napi_env env, napi_callback_info info) {
  Call call = {env, "dgebrd"};
  lapack_int m, n, a_off, lda, d_off, e_off;
  double *a, *d, *e;
  size_t a_len, d_len, e_len;
  if (!read_args(&call, info, "iiFiiFiFi", &m, &n, &a, &a_len, &a_off, &lda, &d, &d_len, &d_off, &e, &e_len, &e_off))
    return NULL;
  if (m < n) return throw_range(&call, "needs m >= n");
  if (!fits_columns(&call, "A", a_len, a_off, m, n, lda) || !fits_vector(&call, "d", d_len, d_off, n) ||
      !fits_vector(&call, "e", e_len, e_off, n > 0 ? n - 1 : 0))
    return NULL;
  if (n == 0) return number(env, 0);
  double* tau = malloc(sizeof(double) * 2 * (size_t)n);
  if (!tau) return throw_range(&call, "out of memory");
  double query;
  lapack_int result =
      LAPACKE_dgebrd_work(LAPACK_COL_MAJOR, m, n, a + a_off, lda, d + d_off, e + e_off, tau, tau + n, &query, -1);
  lapack_int lwork = result == 0 ? (lapack_int)query : m + n;
  if (lwork < 1) lwork = 1;
  double* work = malloc(sizeof(double) * (size_t)lwork);
  if (!work) {
    free(tau);
    return throw_range(&call, "out of memory");
  }
  result = LAPACKE_dgebrd_work(LAPACK_COL_MAJOR, m, n, a + a_off, lda, d + d_off, e + e_off, tau, tau + n, work, lwork);
  free(work);
  free(tau);
  if (result < 0) return lapack_failure(&call, result);
  return number(env, result);
}

/*
 * dgesddValues(m, n, a, aOff, lda, s, sOff) -> info: all min(m, n) singular values, descending, of
 * the column-major m x n matrix (destroyed). One call: for blocks that are small enough.
 */
static napi_value DgesddValues(napi_env env, napi_callback_info info) {
  Call call = {env, "dgesddValues"};
  lapack_int m, n, a_off, lda, s_off;
  double *a, *s;
  size_t a_len, s_len;
  if (!read_args(&call, info, "iiFiiFi", &m, &n, &a, &a_len, &a_off, &lda, &s, &s_len, &s_off)) return NULL;
  lapack_int k = m < n ? m : n;
  if (!fits_columns(&call, "A", a_len, a_off, m, n, lda) || !fits_vector(&call, "s", s_len, s_off, k)) return NULL;
  if (k == 0) return number(env, 0);
  lapack_int* iwork = malloc(sizeof(lapack_int) * 8 * (size_t)k);
  if (!iwork) return throw_range(&call, "out of memory");
  double query;
  lapack_int result =
      LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'N', m, n, a + a_off, lda, s + s_off, NULL, 1, NULL, 1, &query, -1, iwork);
  lapack_int lwork = result == 0 ? (lapack_int)query : 4 * k + (m > n ? m : n);
  if (lwork < 1) lwork = 1;
  double* work = malloc(sizeof(double) * (size_t)lwork);
  if (!work) {
    free(iwork);
    return throw_range(&call, "out of memory");
  }
  result = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'N', m, n, a + a_off, lda, s + s_off, NULL, 1, NULL, 1, work, lwork,
                               iwork);
  free(work);
  free(iwork);
  if (result < 0) return lapack_failure(&call, result);
  return number(env, result);
}

/* setThreads(count): OpenBLAS worker threads for the following calls (process-wide). */
static napi_value SetThreads(napi_env env, napi_callback_info info) {
  Call call = {env, "setThreads"};
  lapack_int count;
  if (!read_args(&call, info, "i", &count)) return NULL;
  if (count < 1) return throw_range(&call, "needs at least one thread");
  openblas_set_num_threads(count);
  return undefined(env);
}

static napi_value Threads(napi_env env, napi_callback_info info) {
  (void)info;
  return number(env, openblas_get_num_threads());
}

static napi_value Config(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  char text[512];
  snprintf(text, sizeof text, "%s (core %s)", openblas_get_config(), openblas_get_corename());
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &out);
  return out;
}

/*
 * trimHeap() -> whether the C heap gave memory back to the system: glibc's malloc_trim(0), which returns the free
 * pages of every arena (not only its top). Freed blocks otherwise stay resident: at n = 10^6 an advise job's freed
 * factors and typed arrays (Node allocates those with malloc too) kept ~0.4-1 GB of its resident set. False elsewhere.
 */
static napi_value TrimHeap(napi_env env, napi_callback_info info) {
  (void)info;
#ifdef __GLIBC__
  int released = malloc_trim(0);
#else
  int released = 0;
#endif
  napi_value out;
  napi_get_boolean(env, released != 0, &out);
  return out;
}

/*
 * parts() -> the parts built in, comma-separated: "dense", plus "sparse" when CHOLMOD and UMFPACK were found at
 * build time (sparse_native.c, lu_native.c), "arpack" when ARPACK was (arpack_native.c), "metis" when METIS
 * was (metis_native.c) and "spqr" when SuiteSparseQR was (spqr_native.c).
 */
static napi_value Parts(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  const char* parts = "dense"
#ifdef LINALG_SPARSE
                      ",sparse"
#endif
#ifdef LINALG_ARPACK
                      ",arpack"
#endif
#ifdef LINALG_METIS
                      ",metis"
#endif
#ifdef LINALG_SPQR
                      ",spqr"
#endif
      ;
  napi_create_string_utf8(env, parts, NAPI_AUTO_LENGTH, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor functions[] = {
      {"dgemv", NULL, Dgemv, NULL, NULL, NULL, napi_enumerable, NULL},
      {"rowsDot", NULL, RowsDot, NULL, NULL, NULL, napi_enumerable, NULL},
      {"rowsCombine", NULL, RowsCombine, NULL, NULL, NULL, napi_enumerable, NULL},
      {"rowsFused", NULL, RowsFused, NULL, NULL, NULL, napi_enumerable, NULL},
      {"rowsFusedBlock", NULL, RowsFusedBlock, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dtrmm", NULL, Dtrmm, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dgemm", NULL, Dgemm, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dtrsv", NULL, Dtrsv, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dtrsm", NULL, Dtrsm, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dgetrf", NULL, Dgetrf, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dgetrs", NULL, Dgetrs, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dgeqrf", NULL, Dgeqrf, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dorgqr", NULL, Dorgqr, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dgeqrt3", NULL, Dgeqrt3, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dlarfb", NULL, Dlarfb, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dlabrd", NULL, Dlabrd, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dgebrd", NULL, Dgebrd, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dgesddValues", NULL, DgesddValues, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setThreads", NULL, SetThreads, NULL, NULL, NULL, napi_enumerable, NULL},
      {"threads", NULL, Threads, NULL, NULL, NULL, napi_enumerable, NULL},
      {"config", NULL, Config, NULL, NULL, NULL, napi_enumerable, NULL},
      {"parts", NULL, Parts, NULL, NULL, NULL, napi_enumerable, NULL},
      {"trimHeap", NULL, TrimHeap, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
  register_csr_kernels(env, exports);
  register_block_step(env, exports);
#ifdef LINALG_SPARSE
  register_sparse(env, exports);
  register_lu(env, exports);
#endif
#ifdef LINALG_ARPACK
  register_arpack(env, exports);
#endif
#ifdef LINALG_METIS
  register_metis(env, exports);
#endif
#ifdef LINALG_SPQR
  register_spqr(env, exports);
#endif
  return exports;
}
