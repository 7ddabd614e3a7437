/*
 * Whether the host's memory-bound slowdowns are phases in time or a property of where a buffer's pages landed
 * (docs/performance.md, "The host's memory phases"): a 64 MB buffer kept for the whole run ("old") and a fresh one
 * mapped, filled and unmapped each round ("new") are read side by side (a 4-way summing loop, best of 3 passes each),
 * once a round for `seconds`; each line prints the time, both rates in GB/s and the fresh buffer's first fill in ms.
 * Old and new slowing together is a phase; only new ones slowing is placement. With `huge` = 1 both are advised
 * huge pages (MADV_HUGEPAGE). Build and run (alone, and pinned or not):
 *   gcc -O2 -march=native -o /tmp/memoryPhases bench/memoryPhases.c
 *   /tmp/memoryPhases 30 0;  taskset -c 1 /tmp/memoryPhases 10 1
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double sink;

/** Best read rate of 3 passes over b (n doubles), GB/s. */
static double readRate(const double *b, size_t n) {
  double best = 0;
  for (int pass = 0; pass < 3; pass++) {
    double t0 = now(), s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t k = 0; k < n; k += 4) {
      s0 += b[k];
      s1 += b[k + 1];
      s2 += b[k + 2];
      s3 += b[k + 3];
    }
    sink += s0 + s1 + s2 + s3;
    double rate = n * 8 / (now() - t0) / 1e9;
    if (rate > best) best = rate;
  }
  return best;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: memoryPhases <seconds> <huge 0|1>\n");
    return 2;
  }
  double seconds = atof(argv[1]);
  int huge = atoi(argv[2]);
  size_t n = (64u << 20) / 8, bytes = n * 8;
  double *old = aligned_alloc(2u << 20, bytes);
  if (huge) madvise(old, bytes, MADV_HUGEPAGE);
  for (size_t k = 0; k < n; k++) old[k] = (double)k;
  double start = now();
  while (now() - start < seconds) {
    double *fresh = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fresh == MAP_FAILED) return 1;
    if (huge) madvise(fresh, bytes, MADV_HUGEPAGE);
    double t0 = now();
    for (size_t k = 0; k < n; k++) fresh[k] = (double)k;
    double fill = now() - t0;
    printf("%6.2f s  old %5.1f  new %5.1f GB/s  first fill %4.0f ms\n", now() - start, readRate(old, n), readRate(fresh, n), fill * 1e3);
    munmap(fresh, bytes);
  }
  return sink == 42.0;
}
