/* heaptrim_test.c - giving free heap pages back (src/util/heaptrim.c):
 * below the threshold nothing is trimmed; free chunks a burst left
 * between live blocks (touched pages, so resident) go back to the
 * kernel, and the resident set says so. */
#include "autoconf.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/heaptrim.h"

#include "util/asan.h"

enum { N = 64, BIG = 64 * 1024 }; /* under glibc's mmap threshold */

static void test_threshold_not_reached(void **state)
{
	struct mgw_heap_trim t;

	(void)state;
#if defined(HAVE_MIMALLOC) && !MGW_ASAN
	/* mimalloc keeps no count of free bytes: the heap is collected
	 * whatever the threshold */
	mgw_heap_trim(SIZE_MAX, &t);
	assert_int_equal(t.trimmed, 1);
	assert_int_equal(t.free_bytes, 0);
#else
	assert_int_equal(mgw_heap_trim(SIZE_MAX, &t), 0);
	assert_int_equal(t.trimmed, 0);
	assert_int_equal(t.returned, 0);
#endif
}

static void test_resident(void **state)
{
	(void)state;
	assert_true(mgw_heap_resident() > 0);
}

/* A burst: N blocks of BIG bytes, each followed by a small block that
 * stays live (so the freed ones cannot merge into the arena's top, which
 * free() itself would give back). */
static void test_burst_returned(void **state)
{
	void *big[N], *keep[N];
	struct mgw_heap_trim t;

	(void)state;
#if MGW_ASAN
	skip(); /* AddressSanitizer's allocator: glibc's arenas are not used */
#endif
	for (int i = 0; i < N; i++) {
		big[i] = malloc(BIG);
		keep[i] = malloc(32);
		assert_non_null(big[i]);
		assert_non_null(keep[i]);
		memset(big[i], 0x5a, BIG); /* resident */
	}
	for (int i = 0; i < N; i++)
		free(big[i]);
#if defined(HAVE_MIMALLOC)
	{
		/* mimalloc gives a freed page back once its reset delay (a
		 * fraction of a second) has passed: collect until it has,
		 * at most 100 times 50 ms apart */
		uint64_t back = 0;

		for (int i = 0; i < 100 && back < (uint64_t)N * BIG / 2; i++) {
			struct timespec ts = {0, 50 * 1000 * 1000};

			nanosleep(&ts, NULL);
			back += mgw_heap_trim(0, &t);
			assert_int_equal(t.trimmed, 1);
		}
		assert_true(back >= (uint64_t)N * BIG / 2);
	}
#else
	mgw_heap_trim((size_t)N * BIG / 2, &t);
	assert_true(t.free_bytes >= (size_t)N * BIG / 2);
	assert_int_equal(t.trimmed, 1);
	/* most of each freed block's pages went back */
	assert_true(t.returned >= (uint64_t)N * BIG / 2);
#endif
	for (int i = 0; i < N; i++)
		free(keep[i]);
}

/* Workers trim from their own threads, all started together, and exit
 * at shutdown.  Under an allocator other than glibc's (AddressSanitizer
 * here) the first calls used to race glibc's lazy malloc initialization:
 * two threads attached to its main arena, and the second to exit aborted
 * the process.  At least one of the simultaneous calls trims (the first
 * to take the lock), the others may find it busy; none crashes. */
enum { NTHREAD = 8, ROUNDS = 20 };

struct racer {
	pthread_barrier_t *go;
	struct mgw_heap_trim t;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	pthread_barrier_wait(r->go);
	mgw_heap_trim(0, &r->t);
	return NULL;
}

static void test_concurrent_threads(void **state)
{
	(void)state;
	for (int round = 0; round < ROUNDS; round++) {
		pthread_barrier_t go;
		pthread_t th[NTHREAD];
		struct racer r[NTHREAD];
		int trimmed = 0;

		assert_int_equal(pthread_barrier_init(&go, NULL, NTHREAD), 0);
		for (int i = 0; i < NTHREAD; i++) {
			memset(&r[i], 0, sizeof(r[i]));
			r[i].go = &go;
			assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
		}
		for (int i = 0; i < NTHREAD; i++) {
			assert_int_equal(pthread_join(th[i], NULL), 0);
			trimmed += r[i].t.trimmed;
		}
		pthread_barrier_destroy(&go);
#if MGW_ASAN
		assert_int_equal(trimmed, 0); /* off: glibc's arenas are idle */
#elif defined(HAVE_MIMALLOC)
		assert_int_equal(trimmed, NTHREAD); /* each its own heap */
#else
		assert_true(trimmed >= 1);
#endif
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold_not_reached),
		cmocka_unit_test(test_resident),
		cmocka_unit_test(test_burst_returned),
		cmocka_unit_test(test_concurrent_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
