/* heaptrim.h - giving the heap's free pages back to the kernel.
 *
 * glibc returns freed memory to the kernel only from the top of an arena
 * (more than M_TRIM_THRESHOLD free there) and from mmapped blocks: the
 * free chunks a burst leaves between live ones (a crowd of connections'
 * buffers, a kill's replays) stay resident, so the process's RSS keeps
 * the high-water mark of its bursts while the live heap is back where it
 * was.  malloc_trim(0) also releases the whole pages inside free chunks
 * of every arena (madvise MADV_DONTNEED).  mgw_heap_trim calls it when
 * the arenas hold at least a threshold of free bytes (mallinfo2), and
 * measures what went back as the drop of the resident set.
 *
 * Built with mimalloc (the default, configure --with-mimalloc) there are
 * no arenas to trim: each thread's heap gives a freed page back itself
 * after mimalloc's reset delay, when that heap is next collected, so
 * mgw_heap_trim collects the calling thread's heap (mi_collect) every
 * time, whatever min_free says, and measures the drop the same way. */
#ifndef MGW_UTIL_HEAPTRIM_H
#define MGW_UTIL_HEAPTRIM_H

#include <stddef.h>
#include <stdint.h>

/* What one call did. */
struct mgw_heap_trim {
	size_t free_bytes;      /* the arenas' free bytes before (mallinfo2;
	                         * 0 under mimalloc, which counts none) */
	int trimmed;            /* 1: malloc_trim (mimalloc: mi_collect) ran */
	uint64_t returned;      /* resident bytes that went back (0 if not
	                         * measured or none) */
};

/* Trims every arena when their free bytes are at least min_free
 * (mimalloc: collects the calling thread's heap, always).  Fills *out
 * (may be NULL).  Returns the bytes returned (out->returned).
 * Thread-safe: under glibc a call made while another thread is trimming
 * does nothing (out says 0 free bytes, not trimmed).  Does nothing under
 * AddressSanitizer, whose allocator is neither. */
uint64_t mgw_heap_trim(size_t min_free, struct mgw_heap_trim *out);

/* The process's resident set in bytes (/proc/self/statm), 0 if unknown. */
uint64_t mgw_heap_resident(void);

#endif
