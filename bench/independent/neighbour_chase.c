// A neighbour for `memlat watch` to see, written apart from memlat's code:
// a random cycle (one 8-byte node per 64-byte line, THP asked for) walked
// on one CPU for a given time, so its lines take a shared cache's room from
// whatever else runs there. Prints the ns per load it walked at, which says
// where its own lines came from (a cache, or memory).
// Linux. Usage: neighbour_chase SIZE_BYTES SECONDS [CPU]
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s SIZE_BYTES SECONDS [CPU]\n", argv[0]); return 2; }
  size_t bytes = strtoull(argv[1], 0, 10), n = bytes / 64;
  double duration = atof(argv[2]);
  cpu_set_t set; CPU_ZERO(&set); CPU_SET(argc > 3 ? atoi(argv[3]) : 0, &set);
  if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }
  char *buf = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  size_t *order = malloc(n * sizeof *order);
  if (buf == MAP_FAILED || !order || n < 2) { fprintf(stderr, "no room for %zu bytes\n", bytes); return 1; }
  madvise(buf, bytes, MADV_HUGEPAGE);
  // Sattolo's shuffle: one cycle through every line.
  for (size_t i = 0; i < n; i++) order[i] = i;
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (size_t i = n - 1; i > 0; i--) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    size_t j = s % i, t = order[i]; order[i] = order[j]; order[j] = t;
  }
  for (size_t i = 0; i < n; i++) *(void **)(buf + order[i] * 64) = buf + order[(i + 1) % n] * 64;
  free(order);
  void *p = buf;
  double start = seconds(), end = start + duration;
  size_t loads = 0;
  while (seconds() < end) {
    for (int i = 0; i < 100000; i++) p = *(void **)p;
    loads += 100000;
  }
  double took = seconds() - start;
  printf("neighbour %zu MiB: %.1f ns a load over %.1f s (%p)\n", bytes >> 20, took * 1e9 / loads, took, p);
  return 0;
}
