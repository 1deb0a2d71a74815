/* jalloc.c - per-thread free lists for jansson's small blocks (see
 * jalloc.h). */
#include "autoconf.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>
#include <malloc.h>

#include "util/jalloc.h"

#include "util/asan.h"

#define NCLASS (MGW_JALLOC_MAX / 16)

struct lists {
	void *head[NCLASS + 1];
	unsigned n[NCLASS + 1];
	unsigned lo[NCLASS + 1];        /* least n[c] since the last trim */
	int registered;
};

static _Thread_local struct lists tl;

static void release(struct lists *l)
{
	for (size_t c = 1; c <= NCLASS; c++) {
		while (l->head[c]) {
			void *next = *(void **)l->head[c];
			free(l->head[c]);
			l->head[c] = next;
		}
		l->n[c] = 0;
		l->lo[c] = 0;
	}
}

#if !MGW_ASAN
static pthread_key_t key;

static void on_thread_exit(void *arg)
{
	release(arg);
}

/* Blocks carry no header: a block is plain malloc memory (so that a
 * json_dumps result may still be released with free()), and its class
 * is read back from malloc_usable_size when it is freed: a block of
 * class c holds at least c * 16 bytes. */
static void *j_malloc(size_t size)
{
	size_t c = size ? (size + 15) / 16 : 1;

	if (c <= NCLASS && tl.head[c]) {
		void *p = tl.head[c];
		tl.head[c] = *(void **)p;
		if (--tl.n[c] < tl.lo[c])
			tl.lo[c] = tl.n[c];
		return p;
	}
	return malloc(c <= NCLASS ? c * 16 : size);
}

static void j_free(void *p)
{
	size_t c;

	if (!p)
		return;
	c = malloc_usable_size(p) / 16;
	if (c > NCLASS || tl.n[c] >= MGW_JALLOC_KEEP) {
		free(p);
		return;
	}
	if (!tl.registered) {
		/* the exit hook frees this thread's lists */
		tl.registered = 1;
		(void)pthread_setspecific(key, &tl);
	}
	*(void **)p = tl.head[c];
	tl.head[c] = p;
	tl.n[c]++;
}

#endif /* !MGW_ASAN */

static int installed;

int mgw_jalloc_install(void)
{
#if MGW_ASAN
	return 0;
#else
	if (installed)
		return 0;
	if (pthread_key_create(&key, on_thread_exit) != 0)
		return -1;
	json_set_alloc_funcs(j_malloc, j_free);
	installed = 1;
	return 0;
#endif
}

int mgw_jalloc_init(void)
{
#ifdef HAVE_MIMALLOC
	/* mimalloc's own per-thread free lists are cheaper than this cache
	 * in front of them (malloc_usable_size on every free): about 1,000
	 * instructions per proxied request less, bench/gateway-callgrind.sh */
	return 0;
#else
	return mgw_jalloc_install();
#endif
}

int mgw_jalloc_active(void)
{
	return installed;
}

void mgw_jalloc_release(void)
{
	release(&tl);
}

/* The blocks no allocation took since the last trim are the first lo[c]
 * of the list's tail, but any lo[c] blocks will do: they are all alike,
 * so the head's are freed (no walk to the tail). */
size_t mgw_jalloc_trim(void)
{
	size_t freed = 0;

	for (size_t c = 1; c <= NCLASS; c++) {
		for (unsigned k = tl.lo[c]; k > 0 && tl.head[c]; k--) {
			void *next = *(void **)tl.head[c];

			free(tl.head[c]);
			tl.head[c] = next;
			tl.n[c]--;
			freed += c * 16;
		}
		tl.lo[c] = tl.n[c];
	}
	return freed;
}

unsigned mgw_jalloc_cached(void)
{
	unsigned n = 0;

	for (size_t c = 1; c <= NCLASS; c++)
		n += tl.n[c];
	return n;
}
