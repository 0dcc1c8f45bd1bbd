// An independent per-load chase, written apart from memlat's code, to check
// `memlat run --distribution` against (bench/distribution.py builds it).
// x86_64 only. Usage: rdtscp_chase SIZE_BYTES LOADS [GROUP]
//
// A random cycle through one 8-byte node per 64-byte line (Sattolo), THP
// asked for, CPU 0; rdtscp after every group of GROUP dependent loads, the
// deltas kept. Prints one line of key=value: the TSC rate, p50/p99 in ns
// (rdtscp's own cost included: subtract this tool's p50 at 16 KiB), and the
// slow loads' spectrum (over 1.5x p50, 50 ns bins, one FFT of the whole
// timeline): its strongest peak from 31 kHz to 2.5 MHz and that peak over
// the band's mean power.
#define _GNU_SOURCE
#include <complex.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t state = 88172645463325252ull;
static uint64_t next(void) { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int ascending(const void *a, const void *b) { uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b; return x < y ? -1 : x > y; }

static void fft(double complex *a, size_t n) {
  for (size_t i = 1, j = 0; i < n; i++) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) { double complex t = a[i]; a[i] = a[j]; a[j] = t; }
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    double complex step = cexp(-2 * M_PI * I / len);
    for (size_t i = 0; i < n; i += len) {
      double complex w = 1;
      for (size_t k = 0; k < len / 2; k++) {
        double complex u = a[i + k], v = a[i + k + len / 2] * w;
        a[i + k] = u + v; a[i + k + len / 2] = u - v; w *= step;
      }
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s SIZE_BYTES LOADS [GROUP]\n", argv[0]); return 2; }
  size_t size = strtoull(argv[1], 0, 0), loads = strtoull(argv[2], 0, 0);
  int group = argc > 3 ? atoi(argv[3]) : 1;
  cpu_set_t cpus; CPU_ZERO(&cpus); CPU_SET(0, &cpus); sched_setaffinity(0, sizeof cpus, &cpus);
  size_t lines = size / 64;
  char *buf = mmap(0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) { perror("mmap"); return 1; }
  madvise(buf, size, MADV_HUGEPAGE);
  memset(buf, 1, size);
  uint32_t *order = malloc(lines * 4);
  for (size_t i = 0; i < lines; i++) order[i] = i;
  for (size_t i = lines - 1; i > 0; i--) { size_t j = next() % i; uint32_t t = order[i]; order[i] = order[j]; order[j] = t; }
  for (size_t k = 0; k < lines; k++) *(void **)(buf + (size_t)order[k] * 64) = buf + (size_t)order[(k + 1) % lines] * 64;
  free(order);
  double t0 = now(); uint64_t c0 = __rdtsc();
  while (now() - t0 < 0.1) {}
  double ghz = (__rdtsc() - c0) / ((now() - t0) * 1e9);
  uint32_t *delta = malloc(loads * 4);
  memset(delta, 1, loads * 4);
  void *p = buf; unsigned aux;
  for (size_t i = 0; i < (loads < lines ? loads : lines); i++) asm volatile("mov (%0), %0" : "+r"(p));
  uint64_t prev = __rdtscp(&aux);
  for (size_t i = 0; i < loads; i++) {
    for (int g = 0; g < group; g++) asm volatile("mov (%0), %0" : "+r"(p));
    uint64_t t = __rdtscp(&aux);
    delta[i] = (uint32_t)(t - prev); prev = t;
  }
  uint32_t *sorted = malloc(loads * 4);
  memcpy(sorted, delta, loads * 4);
  qsort(sorted, loads, 4, ascending);
  double p50 = sorted[loads / 2] / ghz / group, p99 = sorted[(size_t)(0.99 * (loads - 1))] / ghz / group;
  double bin_ns = 50, total_ns = 0;
  for (size_t i = 0; i < loads; i++) total_ns += delta[i] / ghz;
  size_t bins = (size_t)(total_ns / bin_ns) + 1, n = 1;
  while (n < bins) n <<= 1;
  double complex *a = calloc(n, sizeof *a);
  uint32_t slow = (uint32_t)(1.5 * sorted[loads / 2]);
  double t = 0; size_t slow_loads = 0;
  for (size_t i = 0; i < loads; i++) { t += delta[i] / ghz; if (delta[i] > slow) { a[(size_t)(t / bin_ns)] += 1; slow_loads++; } }
  fft(a, n);
  double df = 1e9 / (n * bin_ns), sum = 0, best_power = 0; size_t count = 0, best = 0;
  for (size_t k = (size_t)(31e3 / df); k <= (size_t)(2.5e6 / df); k++) {
    double power = creal(a[k]) * creal(a[k]) + cimag(a[k]) * cimag(a[k]);
    sum += power; count++;
    if (power > best_power) { best_power = power; best = k; }
  }
  printf("tsc_ghz=%.4f group=%d p50_ns=%.3f p99_ns=%.3f slow_share=%.4f peak_khz=%.3f period_ns=%.2f peak_over_mean=%.1f end=%p\n",
         ghz, group, p50, p99, (double)slow_loads / loads, best * df / 1e3, 1e9 / (best * df), best_power / (sum / count), p);
  return 0;
}
