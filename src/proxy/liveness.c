/* liveness.c - per-worker loop stamps (liveness.h). */
#include "autoconf.h"

#include <stdlib.h>

#include "proxy/liveness.h"

struct mgw_liveness *mgw_liveness_new(size_t n, uint64_t now)
{
	struct mgw_liveness *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->n = n;
	l->beat = calloc(n ? n : 1, sizeof(*l->beat));
	if (!l->beat) {
		free(l);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		atomic_init(&l->beat[i], now);
	atomic_init(&l->draining, 0);
	return l;
}

void mgw_liveness_free(struct mgw_liveness *l)
{
	if (!l)
		return;
	free(l->beat);
	free(l);
}

void mgw_liveness_beat(struct mgw_liveness *l, size_t i, uint64_t now)
{
	if (l && i < l->n)
		atomic_store(&l->beat[i], now);
}

size_t mgw_liveness_stale(const struct mgw_liveness *l, uint64_t now,
                          size_t *first)
{
	size_t n = 0;

	for (size_t i = 0; l && i < l->n; i++) {
		uint64_t b = atomic_load(&l->beat[i]);

		if (now > b && now - b > MGW_LIVENESS_STALE_MS) {
			if (n++ == 0)
				*first = i;
		}
	}
	return n;
}

void mgw_liveness_set_draining(struct mgw_liveness *l)
{
	if (l)
		atomic_store(&l->draining, 1);
}

int mgw_liveness_draining(const struct mgw_liveness *l)
{
	return l ? atomic_load(&l->draining) : 0;
}
