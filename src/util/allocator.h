/* allocator.h - which malloc this process runs on.
 *
 * configure links mimalloc by default (--without-mimalloc keeps glibc's;
 * --enable-asan always runs on AddressSanitizer's): its malloc replaces
 * glibc's for every library in the process.  `mcpgw version` and the
 * mcpgw_build_info metric name the allocator, so that an operator (and a
 * benchmark) can tell which one a build runs on. */
#ifndef MGW_UTIL_ALLOCATOR_H
#define MGW_UTIL_ALLOCATOR_H

/* "mimalloc-2.0.9", "AddressSanitizer" or "glibc" (no blank: it is a
 * metric label value too). */
const char *mgw_allocator_name(void);

/* 1 when the block p, from malloc, belongs to the allocator named above
 * (mimalloc: inside its heap), so a test can tell that the link order
 * put it in front of libc's; always 1 for glibc and AddressSanitizer. */
int mgw_allocator_owns(const void *p);

#endif
