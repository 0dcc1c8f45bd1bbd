// An independent check, apart from memlat's code, of whether a last-level
// cache keeps lines a core only read as it keeps lines it wrote: a random
// cycle (Sattolo, one 8-byte node per 64-byte line, THP asked for) is timed
// cycle by cycle in four states:
//   written: right after the chain was linked (every line dirty);
//   read:    after a 512 MiB read stream pushed it out to memory (its lines
//            come back clean);
//   streamed: after the stream, then one read pass over its lines in
//            address order;
//   rewritten: after the stream, then one read-and-write-back pass.
// A cache that keeps clean lines as it keeps dirty ones serves the streamed
// and rewritten states alike; one that favours dirty lines (or keeps only
// the evictions it predicts reused) serves the rewritten state only.
// x86_64 Linux. Usage: written_or_read SIZE_MIB [CYCLES] [CPU]
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

static void *walk(void *p, size_t loads) {
  for (size_t i = 0; i < loads; i++) p = *(void **)p;
  return p;
}

static void *cycles(const char *state, void *p, size_t n, int count) {
  printf("%-9s", state);
  for (int c = 0; c < count; c++) {
    double t = now();
    p = walk(p, n);
    printf(" %7.1f", (now() - t) / n);
  }
  printf("  ns per load, cycle by cycle\n");
  return p;
}

static void *map(size_t bytes) {
  char *b = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b == MAP_FAILED) { perror("mmap"); exit(1); }
  madvise(b, bytes, MADV_HUGEPAGE);
  return b;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s SIZE_MIB [CYCLES] [CPU]\n", argv[0]); return 2; }
  size_t bytes = strtoull(argv[1], 0, 10) << 20, n = bytes / 64;
  int count = argc > 2 ? atoi(argv[2]) : 6;
  cpu_set_t set; CPU_ZERO(&set); CPU_SET(argc > 3 ? atoi(argv[3]) : 0, &set);
  sched_setaffinity(0, sizeof set, &set);
  size_t flush_bytes = 512ull << 20;
  volatile uint64_t *flush = map(flush_bytes);
  for (size_t k = 0; k < flush_bytes / 8; k += 512) flush[k] = k;  // fault it in first
  char *buf = map(bytes);
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

  printf("%zu MiB, %zu lines\n", bytes >> 20, n);
  void *p = cycles("written", buf, n, count);
  uint64_t sum = 0;
  for (size_t k = 0; k < flush_bytes / 8; k += 8) sum += flush[k];
  p = cycles("read", p, n, count);
  for (size_t k = 0; k < flush_bytes / 8; k += 8) sum += flush[k];
  volatile uint64_t *words = (volatile uint64_t *)buf;
  for (size_t k = 0; k < bytes / 8; k += 8) sum += words[k];
  p = cycles("streamed", p, n, count);
  for (size_t k = 0; k < flush_bytes / 8; k += 8) sum += flush[k];
  for (size_t k = 0; k < bytes / 8; k += 8) words[k] = words[k];
  p = cycles("rewritten", p, n, count);
  printf("(%p %llu)\n", p, (unsigned long long)sum);
  return 0;
}
