/* jalloc.h - a per-thread cache of jansson's small allocations.
 *
 * Every body the gateway classifies becomes a jansson tree: about thirty
 * small allocations (objects, their hash tables, member keys, strings)
 * per request, freed together when the request ends.  That is more
 * blocks of one size than glibc's per-thread cache keeps (seven), so the
 * rest went through the arena's bins and, on the next allocation of 1 KiB
 * or more, its consolidation: a fifth of the gateway's instructions per
 * request was the allocator.  mgw_jalloc_init gives jansson allocation
 * functions that keep freed blocks of up to MGW_JALLOC_MAX bytes on a
 * per-thread free list per 16-byte size class (at most MGW_JALLOC_KEEP
 * blocks a class, the rest freed), so a request's tree reuses the last
 * one's blocks.  A block freed on another thread than the one that made
 * it joins that thread's lists: blocks are plain malloc memory.  A
 * thread's lists are freed when it exits (and the main thread's by
 * mgw_jalloc_release).
 *
 * A burst (a kill's replays, a crowd of reconnects) fills the lists up
 * to their cap, and in steady traffic no allocation takes those blocks
 * again: mgw_jalloc_trim, called from a periodic timer of the thread
 * (the workers' trim timer, proxy/worker.c), frees every block of a
 * class that the list kept since the previous trim (its low-water mark),
 * so the cache shrinks back to what the traffic of one period uses.
 *
 * Under AddressSanitizer the cache is off (mgw_jalloc_init does
 * nothing), so that a use after free of a jansson value is still seen. */
#ifndef MGW_UTIL_JALLOC_H
#define MGW_UTIL_JALLOC_H

#include <stddef.h>

#define MGW_JALLOC_MAX 256   /* larger blocks go straight to malloc/free */
#define MGW_JALLOC_KEEP 512  /* blocks kept per size class per thread */

/* Installs the allocation functions where the cache helps: glibc's
 * malloc (configure --without-mimalloc); built with mimalloc, whose own
 * per-thread free lists are cheaper than this cache in front of them,
 * and under AddressSanitizer it does nothing.  Call once in main, before
 * any jansson value is made.  Returns 0, or -1 when the thread-exit hook
 * could not be made (jansson then keeps malloc/free). */
int mgw_jalloc_init(void);

/* Installs them whatever the allocator (not under AddressSanitizer): for
 * the cache's own tests, in a build of either kind.  Same returns. */
int mgw_jalloc_install(void);

/* 1 when the cache is in use (installed, not under AddressSanitizer). */
int mgw_jalloc_active(void);

/* Frees the calling thread's cached blocks (the main thread, at exit,
 * so that a leak checker sees none). */
void mgw_jalloc_release(void);

/* Frees, for each size class, as many of the calling thread's cached
 * blocks as the list held at its lowest since the previous call (blocks
 * no allocation needed for a whole period), and starts the next period.
 * Returns the bytes freed (class sizes).  Nothing is cached, and 0
 * returned, when the cache is off. */
size_t mgw_jalloc_trim(void);

/* The calling thread's cached blocks (all classes). */
unsigned mgw_jalloc_cached(void);

#endif
