/*
 * The block methods' step phase (see block_step.h) and its N-API binding.
 *
 * blockStepLayout(n, K, strip, cols, colsOffset) copies and checks the machines' supports once: machine i's
 * support is cols[colsOffset[i] .. colsOffset[i + 1]) (ascending, below n), or, when strip[i] >= 0, the
 * consecutive columns from strip[i] (cols unused); its term is c_i x w at output[offset + K (colsOffset[i])]
 * (the terms one after another, c_i K each). blockStep(layout, rule, alpha, beta, w, first, end, input, output,
 * summed) then updates rows [first, end) of the n x w blocks in input (X at 0, the carried block at 2 n K) from
 * the terms at output[summed ..), with the rules of blockShard.ts (BlockStepRule).
 *
 * Rounding: compiled without floating-point contraction, each entry's operations those of the TypeScript loop
 * in its order (the sums from 0 in machine order), so both give the same bits; the loops over a tile's entries
 * vectorize (AVX2 where the processor has it, chosen at load time: the same roundings).
 */
#include "block_step.h"
#include "napi_args.h"
#include "no_contraction.h"

#include <stdlib.h>
#include <string.h>

/* Rows a step sums at once, so that the sums stay in cache while every machine's term is added (blockShard.ts). */
#define STEP_TILE_ROWS 256

enum { RULE_CONSENSUS = 0, RULE_DGD = 1, RULE_CIMMINO = 2, RULE_DHBM = 3, RULE_DNAG = 4 };

typedef struct {
  size_t n, K, m;
  int32_t* strip;       /* m: the strip's first column, or -1 (then cols) */
  int32_t* cols;        /* the supports one after another */
  int32_t* cols_offset; /* m + 1 */
  double* sums;         /* STEP_TILE_ROWS x K */
} BlockLayout;

static void free_layout(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  BlockLayout* layout = data;
  free(layout->strip);
  free(layout->cols);
  free(layout->cols_offset);
  free(layout->sums);
  free(layout);
}

/* The first t in [lo, hi) with cols[t] >= row (hi if none). */
static size_t first_at_or_after(const int32_t* cols, size_t lo, size_t hi, size_t row) {
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if ((size_t)cols[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

NO_CONTRACTION __attribute__((target_clones("avx2", "default"))) static void block_step(
    const BlockLayout* layout, int rule, double alpha, double beta, size_t w, size_t first, size_t end, double* restrict x,
    double* restrict carried, const double* restrict terms) {
  double* restrict sums = layout->sums;
  const size_t m = layout->m;
  const double machines = (double)m;
  for (size_t r0 = first; r0 < end; r0 += STEP_TILE_ROWS) {
    const size_t r1 = end < r0 + STEP_TILE_ROWS ? end : r0 + STEP_TILE_ROWS;
    const size_t size = (r1 - r0) * w;
    memset(sums, 0, size * sizeof(double));
    for (size_t i = 0; i < m; i++) {
      const size_t c0 = (size_t)layout->cols_offset[i], c = (size_t)layout->cols_offset[i + 1] - c0;
      const double* restrict term = terms + c0 * layout->K;
      if (layout->strip[i] >= 0) {
        const size_t strip = (size_t)layout->strip[i];
        const size_t lo = r0 > strip ? r0 : strip, hi = r1 < strip + c ? r1 : strip + c;
        if (lo >= hi) continue;
        double* restrict to = sums + (lo - r0) * w;
        const double* restrict from = term + (lo - strip) * w;
        for (size_t e = 0; e < (hi - lo) * w; e++) to[e] += from[e];
        continue;
      }
      const int32_t* cols = layout->cols + c0;
      const size_t t_end = first_at_or_after(cols, 0, c, r1);
      for (size_t t = first_at_or_after(cols, 0, c, r0); t < t_end; t++) {
        double* restrict to = sums + ((size_t)cols[t] - r0) * w;
        const double* restrict from = term + t * w;
        for (size_t j = 0; j < w; j++) to[j] += from[j];
      }
    }
    double* restrict xs = x + r0 * w;
    double* restrict ys = carried + r0 * w;
    switch (rule) {
      case RULE_CONSENSUS:
        for (size_t e = 0; e < size; e++) xs[e] = alpha * (sums[e] + machines * ys[e]) + beta * xs[e];
        break;
      case RULE_DGD:
        for (size_t e = 0; e < size; e++) xs[e] -= alpha * sums[e];
        break;
      case RULE_CIMMINO:
        for (size_t e = 0; e < size; e++) xs[e] += alpha * sums[e];
        break;
      case RULE_DHBM:
        for (size_t e = 0; e < size; e++) {
          const double z = beta * ys[e] + sums[e];
          ys[e] = z;
          xs[e] -= alpha * z;
        }
        break;
      default:
        for (size_t e = 0; e < size; e++) {
          const double next = xs[e] - alpha * sums[e];
          xs[e] = next + beta * (next - ys[e]);
          ys[e] = next;
        }
    }
  }
}

/* blockStepLayout(n, K, strip, cols, colsOffset) -> handle (RangeError when the supports are malformed). */
static napi_value BlockStepLayout(napi_env env, napi_callback_info info) {
  const char* name = "blockStepLayout";
  napi_value argv[5];
  if (!get_args(env, info, name, 5, argv)) return NULL;
  int32_t n, K;
  int32_t *strip, *cols, *cols_offset;
  size_t strip_len, cols_len, offset_len;
  if (!get_count(env, argv[0], &n)) return throw_type(env, name, 0, "a non-negative 32-bit integer");
  if (!get_count(env, argv[1], &K)) return throw_type(env, name, 1, "a non-negative 32-bit integer");
  if (!get_typed(env, argv[2], napi_int32_array, (void**)&strip, &strip_len)) return throw_type(env, name, 2, "an Int32Array");
  if (!get_typed(env, argv[3], napi_int32_array, (void**)&cols, &cols_len)) return throw_type(env, name, 3, "an Int32Array");
  if (!get_typed(env, argv[4], napi_int32_array, (void**)&cols_offset, &offset_len)) return throw_type(env, name, 4, "an Int32Array");
  const size_t m = strip_len;
  if (offset_len != m + 1 || cols_offset[0] != 0) return throw_range(env, name, "colsOffset must have m + 1 entries from 0");
  for (size_t i = 0; i < m; i++) {
    if (cols_offset[i + 1] < cols_offset[i] || (size_t)cols_offset[i + 1] > cols_len) return throw_range(env, name, "colsOffset decreases or runs past cols");
    const int32_t c = cols_offset[i + 1] - cols_offset[i];
    if (strip[i] >= 0) {
      if ((int64_t)strip[i] + c > n) return throw_range(env, name, "a strip runs past n");
    } else
      for (int32_t t = cols_offset[i]; t < cols_offset[i + 1]; t++)
        if (cols[t] < 0 || cols[t] >= n || (t > cols_offset[i] && cols[t] <= cols[t - 1]))
          return throw_range(env, name, "a support is not ascending in [0, n)");
  }
  BlockLayout* layout = calloc(1, sizeof *layout);
  if (layout == NULL) return throw_range(env, name, "out of memory");
  layout->n = (size_t)n;
  layout->K = (size_t)K;
  layout->m = m;
  layout->strip = malloc((m + 1) * sizeof(int32_t));
  layout->cols = malloc((cols_len + 1) * sizeof(int32_t));
  layout->cols_offset = malloc((m + 1) * sizeof(int32_t));
  layout->sums = malloc(((size_t)STEP_TILE_ROWS * (size_t)K + 1) * sizeof(double));
  if (!layout->strip || !layout->cols || !layout->cols_offset || !layout->sums) {
    free_layout(env, layout, NULL);
    return throw_range(env, name, "out of memory");
  }
  memcpy(layout->strip, strip, m * sizeof(int32_t));
  memcpy(layout->cols, cols, cols_len * sizeof(int32_t));
  memcpy(layout->cols_offset, cols_offset, (m + 1) * sizeof(int32_t));
  /* No arrays referenced: the handle owns copies. */
  return wrap_handle(env, name, layout, free_layout, NULL, 0, NULL, "");
}

/* blockStep(layout, rule, alpha, beta, w, first, end, input, output, summed): block_step on rows [first, end). */
static napi_value BlockStep(napi_env env, napi_callback_info info) {
  const char* name = "blockStep";
  napi_value argv[10];
  if (!get_args(env, info, name, 10, argv)) return NULL;
  const BlockLayout* layout = external_data(env, argv[0]);
  if (layout == NULL || layout->sums == NULL) return throw_type(env, name, 0, "a handle from blockStepLayout");
  int32_t rule, w, first, end, summed;
  double alpha, beta;
  double *input, *output;
  size_t input_len, output_len;
  if (!get_count(env, argv[1], &rule) || rule > RULE_DNAG) return throw_type(env, name, 1, "a rule from 0 to 4");
  if (napi_get_value_double(env, argv[2], &alpha) != napi_ok) return throw_type(env, name, 2, "a number");
  if (napi_get_value_double(env, argv[3], &beta) != napi_ok) return throw_type(env, name, 3, "a number");
  if (!get_count(env, argv[4], &w)) return throw_type(env, name, 4, "a non-negative 32-bit integer");
  if (!get_count(env, argv[5], &first)) return throw_type(env, name, 5, "a non-negative 32-bit integer");
  if (!get_count(env, argv[6], &end)) return throw_type(env, name, 6, "a non-negative 32-bit integer");
  if (!get_typed(env, argv[7], napi_float64_array, (void**)&input, &input_len)) return throw_type(env, name, 7, "a Float64Array");
  if (!get_typed(env, argv[8], napi_float64_array, (void**)&output, &output_len)) return throw_type(env, name, 8, "a Float64Array");
  if (!get_count(env, argv[9], &summed)) return throw_type(env, name, 9, "a non-negative 32-bit integer");
  const size_t n = layout->n, K = layout->K, width = (size_t)w;
  const int carries = rule == RULE_CONSENSUS || rule == RULE_DHBM || rule == RULE_DNAG;
  if (width > K) return throw_range(env, name, "w exceeds the layout's K");
  if (first > end || (size_t)end > n) return throw_range(env, name, "the rows are not within [0, n)");
  if (input_len < (carries ? 3 : 2) * n * K) return throw_range(env, name, "input is shorter than its blocks");
  const size_t terms_len = (size_t)layout->cols_offset[layout->m] * K;
  if ((size_t)summed + terms_len > output_len) return throw_range(env, name, "output is shorter than summed + the terms");
  if (input < output + output_len && output < input + input_len) return throw_range(env, name, "input overlaps output");
  if (width > 0) block_step(layout, rule, alpha, beta, width, (size_t)first, (size_t)end, input, input + 2 * n * K, output + summed);
  return NULL;
}

void register_block_step(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"blockStepLayout", NULL, BlockStepLayout, NULL, NULL, NULL, napi_enumerable, NULL},
      {"blockStep", NULL, BlockStep, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
}
