/* bloomlab test-vector harness: drives RedisBloom 2.4's own sb.c/bloom.c
 * (compiled from the RedisBloom sources, not part of bloomlab) and prints
 * JSON scenarios: the replies of adds and the SCANDUMP chunks before and
 * after. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/sb.h"

void *(*RedisModule_Calloc)(size_t, size_t) = calloc;
void *(*RedisModule_Realloc)(void *, size_t) = realloc;
void (*RedisModule_Free)(void *) = free;

static void hex(const unsigned char *p, size_t n) {
  putchar('"');
  for (size_t i = 0; i < n; i++) printf("%02x", p[i]);
  putchar('"');
}

static void dump(SBChain *sb, size_t maxChunk) {
  size_t hl;
  char *h = SBChain_GetEncodedHeader(sb, &hl);
  printf("[[1,");
  hex((unsigned char *)h, hl);
  printf("]");
  SB_FreeEncodedHeader(h);
  long long it = 1;
  for (;;) {
    size_t n = 0;
    const char *c = SBChain_GetEncodedChunk(sb, &it, &n, maxChunk);
    if (!c) break;
    printf(",[%lld,", it);
    hex((const unsigned char *)c, n);
    printf("]");
  }
  printf("]");
}

static void adds(SBChain *sb, int from, int to) {
  printf("[");
  for (int i = from; i < to; i++) {
    char k[32];
    int n = snprintf(k, sizeof k, "key-%d", i);
    int rv = SBChain_Add(sb, k, n);
    printf("%s%d", i > from ? "," : "", rv);
  }
  printf("]");
}

int main(void) {
  struct { unsigned opts; unsigned long long cap; double err; unsigned growth; int first, total; size_t chunk; } sc[] = {
    {4, 100, 0.01, 2, 150, 2000, 1 << 24},       /* FORCE64 only: power-of-two links (RedisBloom < 2.2) */
    {4, 7, 0.2, 3, 30, 800, 100},
    {4, 1000, 0.001, 2, 1500, 6000, 1 << 24},
    {5, 100, 0.0371, 2, 120, 3000, 1000},         /* NOROUND|FORCE64 at odd rates */
    {5, 33, 0.123456, 1, 40, 400, 64},
    {5, 10, 0.5, 2, 10, 1000, 1 << 24},
    {5, 1, 0.9, 4, 2, 600, 7},
    {13, 50, 0.003, 2, 30, 60, 1 << 24},          /* NONSCALING */
    {5, 250, 1e-7, 3, 300, 5000, 4096},
    /* rates at which Go's math.Log and glibc's log differ in the last bit:
     * 0.01 (NONSCALING link 0), 0.0003125 (link 4 of a 1% chain), 0.0015 */
    {5, 100, 0.01, 2, 100, 3500, 1 << 24},
    {13, 100, 0.01, 2, 50, 120, 1 << 24},
    {5, 1000, 0.003, 2, 1000, 1500, 1 << 24},
  };
  printf("[\n");
  for (size_t s = 0; s < sizeof sc / sizeof sc[0]; s++) {
    SBChain *sb = SB_NewChain(sc[s].cap, sc[s].err, sc[s].opts, sc[s].growth);
    printf("%s{\"options\":%u,\"capacity\":%llu,\"error\":%.17g,\"growth\":%u,\"chunk\":%zu,\"first\":%d,\"total\":%d,\n \"adds1\":",
           s ? ",\n" : "", sc[s].opts, sc[s].cap, sc[s].err, sc[s].growth, sc[s].chunk, sc[s].first, sc[s].total);
    adds(sb, 0, sc[s].first);
    printf(",\n \"dump1\":");
    dump(sb, sc[s].chunk);
    printf(",\n \"adds2\":");
    adds(sb, sc[s].first, sc[s].total);
    printf(",\n \"dump2\":");
    dump(sb, sc[s].chunk);
    printf("}");
    SBChain_Free(sb);
  }
  printf("\n]\n");
  return 0;
}
