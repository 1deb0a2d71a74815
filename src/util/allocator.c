/* allocator.c - which malloc this process runs on (see allocator.h). */
#include "autoconf.h"

#include <stdio.h>

#ifdef HAVE_MIMALLOC
#include <mimalloc.h>
#endif

#include "util/allocator.h"

#include "util/asan.h"

const char *mgw_allocator_name(void)
{
#if defined(HAVE_MIMALLOC)
	static _Thread_local char name[32];
	int v = mi_version(); /* e.g. 209 for 2.0.9 */

	snprintf(name, sizeof(name), "mimalloc-%d.%d.%d", v / 100,
	         v / 10 % 10, v % 10);
	return name;
#elif MGW_ASAN
	return "AddressSanitizer";
#else
	return "glibc";
#endif
}

int mgw_allocator_owns(const void *p)
{
#ifdef HAVE_MIMALLOC
	return p && mi_is_in_heap_region(p);
#else
	return p != NULL;
#endif
}
