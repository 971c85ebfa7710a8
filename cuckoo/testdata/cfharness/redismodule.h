/* Stand-in for Redis's module header: only the allocator and two codes. */
#include <stdlib.h>
#define REDISMODULE_OK 0
#define REDISMODULE_ERR 1
extern void *(*RedisModule_Alloc)(size_t);
extern void *(*RedisModule_Calloc)(size_t, size_t);
extern void *(*RedisModule_Realloc)(void *, size_t);
extern void (*RedisModule_Free)(void *);
