/* bloomlab test-vector harness: drives RedisBloom 2.4's own cuckoo filter
 * (src/cf.c including src/cuckoo.c, compiled from the RedisBloom sources,
 * not part of bloomlab) and prints JSON scenarios: the replies of inserts,
 * deletes, counts and checks, CF.INFO's fields and the SCANDUMP chunks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/cf.h"

void *(*RedisModule_Alloc)(size_t) = malloc;
void *(*RedisModule_Calloc)(size_t, size_t) = calloc;
void *(*RedisModule_Realloc)(void *, size_t) = realloc;
void (*RedisModule_Free)(void *) = free;

static void hex(const unsigned char *p, size_t n) {
  putchar('"');
  for (size_t i = 0; i < n; i++) printf("%02x", p[i]);
  putchar('"');
}

static CuckooHash hashOf(int i) {
  char k[32];
  int n = snprintf(k, sizeof k, "k-%d", i);
  return CUCKOO_GEN_HASH(k, n);
}

/* op: a add, x addnx, d del, c count, e exists */
static void step(CuckooFilter *cf, char op, int from, int to, int stride) {
  printf("{\"op\":\"%c\",\"from\":%d,\"to\":%d,\"stride\":%d,\"r\":[", op, from, to, stride);
  for (int i = from; i < to; i += stride) {
    CuckooHash h = hashOf(i);
    long long rv = 0;
    switch (op) {
    case 'a': rv = CuckooFilter_Insert(cf, h); break;
    case 'x': rv = CuckooFilter_InsertUnique(cf, h); break;
    case 'd': rv = CuckooFilter_Delete(cf, h); break;
    case 'c': rv = (long long)CuckooFilter_Count(cf, h); break;
    case 'e': rv = CuckooFilter_Check(cf, h); break;
    }
    printf("%s%lld", i > from ? "," : "", rv);
  }
  printf("]}");
}

static void info(CuckooFilter *cf) {
  uint64_t nb = 0;
  for (uint16_t i = 0; i < cf->numFilters; i++) nb += cf->filters[i].numBuckets;
  unsigned long long size = sizeof(*cf) + sizeof(*cf->filters) * cf->numFilters + nb * cf->bucketSize;
  printf("{\"op\":\"i\",\"r\":[%llu,%llu,%u,%llu,%llu,%u,%u,%u]}", size, (unsigned long long)cf->numBuckets,
         cf->numFilters, (unsigned long long)cf->numItems, (unsigned long long)cf->numDeletes, cf->bucketSize,
         cf->expansion, cf->maxIterations);
}

static void dump(CuckooFilter *cf, size_t limit) {
  CFHeader h;
  fillCFHeader(&h, cf);
  printf("{\"op\":\"s\",\"chunk\":%zu,\"chunks\":[[1,", limit);
  hex((unsigned char *)&h, sizeof h);
  printf("]");
  long long pos = 1;
  for (;;) {
    size_t n = 0;
    const char *c = CF_GetEncodedChunk(cf, &pos, &n, limit);
    if (!c) break;
    printf(",[%lld,", pos);
    hex((const unsigned char *)c, n);
    printf("]");
  }
  printf("]}");
}

static void compact(CuckooFilter *cf) {
  CuckooFilter_Compact(cf, true);
  printf("{\"op\":\"k\"}");
}

int main(void) {
  struct { unsigned long cap; int bs, mi, exp; } sc[] = {
    {64, 2, 20, 1}, {100, 4, 500, 2}, {50, 3, 7, 4}, {40, 1, 1, 0}, {1000, 7, 300, 8},
    {32, 2, 20, 1}, {200, 5, 2, 2}, {16, 255, 10, 1},
  };
  int nsc = sizeof sc / sizeof sc[0];
  printf("[");
  for (int s = 0; s < nsc; s++) {
    CuckooFilter cf;
    if (CuckooFilter_Init(&cf, sc[s].cap, sc[s].bs, sc[s].mi, sc[s].exp) != 0) return 1;
    printf("%s{\"capacity\":%lu,\"bs\":%d,\"mi\":%d,\"exp\":%d,\"steps\":[", s ? "," : "", sc[s].cap, sc[s].bs, sc[s].mi, sc[s].exp);
    int n = sc[s].cap * 4;
    step(&cf, 'a', 0, n, 1); putchar(',');
    info(&cf); putchar(',');
    dump(&cf, 1 << 24); putchar(',');
    dump(&cf, 13); putchar(',');
    step(&cf, 'x', n / 2, n + n / 4, 1); putchar(',');
    step(&cf, 'c', 0, n + n / 4, 1); putchar(',');
    step(&cf, 'd', 0, n, 3); putchar(',');
    info(&cf); putchar(',');
    step(&cf, 'e', 0, n + n / 2, 1); putchar(',');
    step(&cf, 'd', 1, n, 2); putchar(',');
    info(&cf); putchar(',');
    dump(&cf, 1 << 24); putchar(',');
    step(&cf, 'a', n, 2 * n, 1); putchar(',');
    step(&cf, 'd', n, 2 * n, 2); putchar(',');
    info(&cf); putchar(',');
    compact(&cf); putchar(',');
    info(&cf); putchar(',');
    step(&cf, 'c', 0, 2 * n, 1); putchar(',');
    dump(&cf, 64);
    printf("]}");
    CuckooFilter_Free(&cf);
  }
  printf("]\n");
  return 0;
}
