// An independent full-cycle chase, written apart from memlat's code, to
// check `memlat run -n SIZE --pattern random` against: a random cycle
// (Sattolo) through one 8-byte node per 64-byte line, THP asked for, one
// whole cycle walked to warm it, then five whole cycles timed one by one.
// Prints the median and least ns per load of those cycles, and the 10th and
// 50th percentiles of 65,536-load chunks (what a part of a cycle reads).
// Linux. Usage: full_cycle_chase SIZE_BYTES [CPU]
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

enum { CYCLES = 5, CHUNK = 65536, MAX_CHUNKS = 4096 };

static double now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int ascending(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s SIZE_BYTES [CPU]\n", argv[0]); return 2; }
  size_t bytes = strtoull(argv[1], 0, 10), n = bytes / 64;
  if (n < 2) { fprintf(stderr, "SIZE_BYTES must hold two 64-byte lines\n"); return 2; }
  cpu_set_t set; CPU_ZERO(&set); CPU_SET(argc > 2 ? atoi(argv[2]) : 0, &set);
  sched_setaffinity(0, sizeof set, &set);
  char *buf = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) { perror("mmap"); return 1; }
  madvise(buf, bytes, MADV_HUGEPAGE);
  size_t *perm = malloc(n * sizeof *perm);
  if (!perm) { perror("malloc"); return 1; }
  for (size_t i = 0; i < n; i++) perm[i] = i;
  uint64_t s = 88172645463325252ull;
  for (size_t i = n - 1; i > 0; i--) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    size_t j = s % i, t = perm[i]; perm[i] = perm[j]; perm[j] = t;
  }
  for (size_t i = 0; i < n; i++) *(void **)(buf + perm[i] * 64) = buf + perm[(i + 1) % n] * 64;
  free(perm);
  void *p = buf;
  for (size_t i = 0; i < n; i++) p = *(void **)p;
  double cycle[CYCLES], chunk[MAX_CHUNKS];
  int chunks = 0;
  for (int c = 0; c < CYCLES; c++) {
    double start = now_ns();
    size_t left = n;
    while (left > 0) {
      size_t loads = left < CHUNK ? left : CHUNK;
      double t = now_ns();
      for (size_t i = 0; i < loads; i++) p = *(void **)p;
      if (loads == CHUNK && chunks < MAX_CHUNKS) chunk[chunks++] = (now_ns() - t) / loads;
      left -= loads;
    }
    cycle[c] = (now_ns() - start) / n;
  }
  if (p != buf) { fprintf(stderr, "the chain did not return to its start\n"); return 1; }
  qsort(cycle, CYCLES, sizeof *cycle, ascending);
  qsort(chunk, chunks, sizeof *chunk, ascending);
  printf("%zu bytes: median cycle %.2f ns, least %.2f", bytes, cycle[CYCLES / 2], cycle[0]);
  if (chunks > 0) printf(", chunks p10 %.2f p50 %.2f", chunk[chunks / 10], chunk[chunks / 2]);
  printf("\n");
  return 0;
}
