/* heaptrim.c - malloc_trim when the arenas hold enough free memory (see
 * heaptrim.h). */
#include "autoconf.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/heaptrim.h"

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

uint64_t mgw_heap_trim(size_t min_free, struct mgw_heap_trim *out)
{
	struct mallinfo2 mi = mallinfo2();
	struct mgw_heap_trim r;
	uint64_t before, after;

	memset(&r, 0, sizeof(r));
	r.free_bytes = mi.fordblks;
	if (r.free_bytes >= min_free && r.free_bytes > 0) {
		before = mgw_heap_resident();
		malloc_trim(0);
		after = mgw_heap_resident();
		r.trimmed = 1;
		r.returned = before > after ? before - after : 0;
	}
	if (out)
		*out = r;
	return r.returned;
}
