/*
 * Memory bandwidth of one core, as the CSR block iteration would see it (docs/performance.md, "The CSR block
 * iteration was not bound by memory"): over arrays of n doubles (n = 1,440,000 is 11.5 MB, one n x k block at
 * n = 90,000, k = 16), the best of 20 sweeps of
 *   - a dot product (two reads; its one accumulator chain bounds it, not the memory),
 *   - a heavy-ball-like update in place (three reads, two writes: x, z read and written, b read),
 *   - the same into two other arrays (three reads, two writes, the writes' lines read first),
 *   - the same with streaming stores (AVX-512).
 * GB/s count the bytes named above. Build and run (pinned, as the docs' figures were):
 *   gcc -O3 -march=native -o /tmp/memoryBandwidth bench/memoryBandwidth.c
 *   for n in 90000 1440000 5760000 23040000; do taskset -c 1 /tmp/memoryBandwidth $n; done
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1440000;
  const size_t bytes = (n * sizeof(double) + 63) / 64 * 64;
  double *x = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes), *z = aligned_alloc(64, bytes);
  double *y = aligned_alloc(64, bytes), *w = aligned_alloc(64, bytes);
  for (size_t i = 0; i < n; i++) x[i] = (double)i, b[i] = 1, z[i] = 2, y[i] = 0, w[i] = 0;
  double dot = 1e9, inPlace = 1e9, separate = 1e9, streamed = 1e9, sink = 0;
  for (int round = 0; round < 20; round++) {
    double t = now(), s = 0;
    for (size_t i = 0; i < n; i++) s += x[i] * b[i];
    t = now() - t;
    sink += s;
    if (t < dot) dot = t;
    t = now();
    for (size_t i = 0; i < n; i++) {
      const double g = x[i] - b[i];
      z[i] = 0.9 * z[i] - 0.1 * g;
      x[i] += z[i];
    }
    t = now() - t;
    if (t < inPlace) inPlace = t;
    t = now();
    for (size_t i = 0; i < n; i++) {
      const double g = x[i] - b[i];
      y[i] = 0.9 * z[i] - 0.1 * g;
      w[i] = x[i] + y[i];
    }
    t = now() - t;
    if (t < separate) separate = t;
#ifdef __AVX512F__
    t = now();
    for (size_t i = 0; i + 8 <= n; i += 8) {
      const __m512d g = _mm512_sub_pd(_mm512_load_pd(x + i), _mm512_load_pd(b + i));
      const __m512d zz = _mm512_fmadd_pd(_mm512_set1_pd(0.9), _mm512_load_pd(z + i), _mm512_mul_pd(_mm512_set1_pd(-0.1), g));
      _mm512_stream_pd(y + i, zz);
      _mm512_stream_pd(w + i, _mm512_add_pd(_mm512_load_pd(x + i), zz));
    }
    t = now() - t;
    if (t < streamed) streamed = t;
#endif
  }
  const double mb = n * sizeof(double) / 1e6;
  printf("n = %zu (%.1f MB an array): dot %.2f ms %.1f GB/s | in place %.2f ms %.1f GB/s | into others %.2f ms %.1f GB/s", n, mb,
         dot * 1e3, 2 * mb / dot / 1e3, inPlace * 1e3, 5 * mb / inPlace / 1e3, separate * 1e3, 5 * mb / separate / 1e3);
#ifdef __AVX512F__
  printf(" | streaming stores %.2f ms %.1f GB/s", streamed * 1e3, 5 * mb / streamed / 1e3);
#endif
  printf(" (%g)\n", sink > 0 ? 0.0 : 1.0);
  return 0;
}
