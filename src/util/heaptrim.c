/* heaptrim.c - malloc_trim when the arenas hold enough free memory (see
 * heaptrim.h). */
#include "autoconf.h"

#include <malloc.h>
#include <pthread.h>
#ifdef HAVE_MIMALLOC
#include <mimalloc.h>
#endif
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/heaptrim.h"

/* Under AddressSanitizer glibc's arenas hold nothing of ours, and the
 * first mallinfo2 would be what initializes them, from a worker. */
#include "util/asan.h"

/* One trim at a time in the process.  malloc_trim walks every arena, so
 * a worker finding another one at it has nothing to add.  It also keeps
 * glibc's lazy initialization to one thread when the process's own
 * allocations went elsewhere (an interposed allocator): glibc attaches
 * the thread that initializes malloc to its main arena without counting
 * it, and two such threads abort at exit ("a->attached_threads > 0"). */
#if !MGW_ASAN && !defined(HAVE_MIMALLOC)
static pthread_mutex_t trim_lock = PTHREAD_MUTEX_INITIALIZER;
#endif

uint64_t mgw_heap_resident(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, resident = 0;
	long page = sysconf(_SC_PAGESIZE);
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%lu %lu", &size, &resident);
	fclose(f);
	if (n != 2 || page <= 0)
		return 0;
	return (uint64_t)resident * (uint64_t)page;
}

#if !MGW_ASAN && !defined(HAVE_MIMALLOC)
/* The trim itself; the caller holds trim_lock. */
static void trim_locked(size_t min_free, struct mgw_heap_trim *r)
{
	struct mallinfo2 mi = mallinfo2();
	uint64_t before, after;

	r->free_bytes = mi.fordblks;
	if (r->free_bytes < min_free || r->free_bytes == 0)
		return;
	before = mgw_heap_resident();
	malloc_trim(0);
	after = mgw_heap_resident();
	r->trimmed = 1;
	r->returned = before > after ? before - after : 0;
}
#endif

#if defined(HAVE_MIMALLOC) && !MGW_ASAN
/* mimalloc: every thread has a heap of its own and gives a freed page
 * back by itself once its reset delay has passed, but only when that
 * heap is next collected.  mi_collect(false) is that collection, for the
 * calling thread's heap: each worker runs it from its own timer.  No
 * lock (the heaps are per thread), no count of free bytes to compare
 * with min_free (mimalloc keeps none in a release build): a collection
 * of a heap with nothing to give back only walks its pages. */
static void trim_mimalloc(struct mgw_heap_trim *r)
{
	uint64_t before = mgw_heap_resident(), after;

	mi_collect(false);
	after = mgw_heap_resident();
	r->trimmed = 1;
	r->returned = before > after ? before - after : 0;
}
#endif

uint64_t mgw_heap_trim(size_t min_free, struct mgw_heap_trim *out)
{
	struct mgw_heap_trim r;

	memset(&r, 0, sizeof(r));
#if defined(HAVE_MIMALLOC) && !MGW_ASAN
	(void)min_free;
	trim_mimalloc(&r);
#elif !MGW_ASAN
	if (pthread_mutex_trylock(&trim_lock) == 0) {
		trim_locked(min_free, &r);
		pthread_mutex_unlock(&trim_lock);
	}
#else
	(void)min_free;
#endif
	if (out)
		*out = r;
	return r.returned;
}
