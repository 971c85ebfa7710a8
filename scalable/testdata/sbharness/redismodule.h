/* Minimal stand-in for Redis's module API: only the allocator sb.c and bloom.c use. */
#include <stddef.h>
extern void *(*RedisModule_Calloc)(size_t nmemb, size_t size);
extern void *(*RedisModule_Realloc)(void *ptr, size_t size);
extern void (*RedisModule_Free)(void *ptr);
