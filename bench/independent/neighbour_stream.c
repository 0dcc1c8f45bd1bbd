// A second neighbour for `memlat watch`, written apart from memlat's code:
// one CPU reads a buffer in address order, a load a line, for a given time,
// so new lines pass through a shared cache as fast as the core can bring
// them in (tens of GB/s), where neighbour_chase.c brings in one line per
// memory latency. A walker that hits a level at its latency outruns the
// chase and keeps its lines (measured on the Zen 4 guest, docs/watch.md);
// against this one it does not. Prints the GB/s it read at.
// Linux. Usage: neighbour_stream SIZE_BYTES SECONDS [CPU]
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s SIZE_BYTES SECONDS [CPU]\n", argv[0]); return 2; }
  size_t bytes = strtoull(argv[1], 0, 10) & ~(size_t)63;
  double duration = atof(argv[2]);
  cpu_set_t set; CPU_ZERO(&set); CPU_SET(argc > 3 ? atoi(argv[3]) : 0, &set);
  if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }
  uint64_t *buf = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED || bytes < 64) { fprintf(stderr, "no room for %zu bytes\n", bytes); return 1; }
  madvise(buf, bytes, MADV_HUGEPAGE);
  memset(buf, 1, bytes); // backed before the clock starts, not faulted in while it runs
  size_t words = bytes / 8, passes = 0;
  uint64_t sum = 0;
  double start = seconds(), end = start + duration;
  while (seconds() < end) {
    for (size_t i = 0; i < words; i += 8) sum += buf[i]; // a load each 64 bytes: every line
    passes++;
  }
  double took = seconds() - start;
  printf("neighbour stream %zu MiB: %.1f GB/s over %.1f s (%llu)\n", bytes >> 20,
         passes * (double)bytes / took / 1e9, took, (unsigned long long)sum);
  return 0;
}
