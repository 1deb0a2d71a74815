/* balancer.h - pieces of the balancers (balancer.c) that upstream.c and
 * the tests need beyond mgw_upstream_group_pick (declared in upstream.h):
 * the stable hash and the consistent-hash ring. */
#ifndef MGW_PROXY_BALANCER_H
#define MGW_PROXY_BALANCER_H

#include <stddef.h>
#include <stdint.h>

#include "proxy/upstream-t.h"

/* 64-bit FNV-1a of data followed by a MurmurHash3 finaliser (FNV alone
 * mixes the last bytes of similar strings poorly).  Fixed constants, so
 * the value is the same in every process, on every run and platform:
 * a key lands on the same replica through any gateway instance. */
uint64_t mgw_hash64(const void *data, size_t len);

/* Builds g->ring from g->servers: each server gets
 * MGW_HASH_POINTS_PER_WEIGHT * weight points (scaled down, at least one
 * each, when the total would pass MGW_HASH_RING_MAX) at
 * mgw_hash64("URL#i").  Points depend on the server's URL, not its
 * position, so adding or removing a server moves only the keys that
 * land on its arcs.  Returns 0 or MGW_ENOMEM. */
int mgw_hash_ring_build(struct mgw_upstream_group *g);

/* The index of the first ring point of g at or after hash (wrapping).
 * g->n_ring must be > 0. */
size_t mgw_hash_ring_find(const struct mgw_upstream_group *g, uint64_t hash);

#endif
