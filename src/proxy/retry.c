/* retry.c - the global retry budget (see retry.h): a ring of one-second
 * buckets of request and retry counts, updated with atomics so that every
 * worker shares one budget without a lock. */
#include "autoconf.h"

#include <stdlib.h>

#include "proxy/retry.h"

struct mgw_retry_budget *mgw_retry_budget_new(double ratio,
                                              uint32_t min_per_second)
{
	struct mgw_retry_budget *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->ratio = ratio < 0 ? 0 : ratio;
	b->min_per_second = min_per_second;
	for (size_t i = 0; i < MGW_RETRY_WINDOW_S; i++) {
		atomic_init(&b->b[i].sec, 0);
		atomic_init(&b->b[i].requests, 0);
		atomic_init(&b->b[i].retries, 0);
	}
	atomic_init(&b->denied, 0);
	return b;
}

void mgw_retry_budget_free(struct mgw_retry_budget *b)
{
	free(b);
}

/* The bucket of the second containing now, recycled when it still holds
 * an older second.  Counts added by another thread between the stamp
 * change and the reset may be lost: the budget is approximate under
 * concurrency, by a few counts per second at most. */
static struct mgw_retry_bucket *bucket(struct mgw_retry_budget *b,
                                       uint64_t now)
{
	uint64_t stamp = now / 1000 + 1;
	struct mgw_retry_bucket *bk = &b->b[(now / 1000) % MGW_RETRY_WINDOW_S];
	uint_fast64_t old = atomic_load(&bk->sec);

	/* old > stamp: a thread with a later clock already moved on; count
	 * into that bucket rather than erase its newer counts */
	if (old < stamp && atomic_compare_exchange_strong(&bk->sec, &old, stamp)) {
		atomic_store(&bk->requests, 0);
		atomic_store(&bk->retries, 0);
	}
	return bk;
}

void mgw_retry_budget_request(struct mgw_retry_budget *b, uint64_t now)
{
	atomic_fetch_add_explicit(&bucket(b, now)->requests, 1,
	                          memory_order_relaxed);
}

void mgw_retry_budget_window(struct mgw_retry_budget *b, uint64_t now,
                             uint64_t *requests, uint64_t *retries)
{
	uint64_t stamp = now / 1000 + 1, req = 0, ret = 0;

	for (size_t i = 0; i < MGW_RETRY_WINDOW_S; i++) {
		uint_fast64_t s = atomic_load(&b->b[i].sec);

		/* buckets of the last MGW_RETRY_WINDOW_S seconds, this one
		 * included */
		if (s == 0 || s > stamp || s + MGW_RETRY_WINDOW_S <= stamp)
			continue;
		req += atomic_load_explicit(&b->b[i].requests, memory_order_relaxed);
		ret += atomic_load_explicit(&b->b[i].retries, memory_order_relaxed);
	}
	*requests = req;
	*retries = ret;
}

int mgw_retry_budget_try(struct mgw_retry_budget *b, uint64_t now)
{
	uint64_t req, ret;
	double by_ratio, floor_, limit;

	mgw_retry_budget_window(b, now, &req, &ret);
	by_ratio = b->ratio * (double)req;
	floor_ = (double)b->min_per_second * MGW_RETRY_WINDOW_S;
	limit = by_ratio > floor_ ? by_ratio : floor_;
	if ((double)(ret + 1) > limit) {
		atomic_fetch_add_explicit(&b->denied, 1, memory_order_relaxed);
		return 0;
	}
	atomic_fetch_add_explicit(&bucket(b, now)->retries, 1,
	                          memory_order_relaxed);
	return 1;
}
