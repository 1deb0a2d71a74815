/* table.h - a thread-safe hash table of session records, shared by the
 * memory store (the sessions themselves), the sealed store (its local cache
 * of pins) and the redis store module (its local cache).
 *
 * Keys are byte strings hashed with SipHash-2-4 under a random per-table
 * key (OpenSSL), so ids chosen by a client cannot be crafted to collide.
 * Entries sit on a list in order of last use: idle expiry pops from its
 * old end (bounded work, no scan), and a table that evicts to make room
 * drops the least recently used entry.  Memory accounting covers the
 * records (bodies included) and the table's own entries and buckets.
 *
 * An entry may hold a NULL record: a tombstone, meaning "known deleted"
 * (the sealed store keeps one after DELETE so that the token is not simply
 * opened again).  Times are monotonic milliseconds passed in by the
 * caller.  Every function locks the table: callable from any thread. */
#ifndef MGW_SESSION_TABLE_H
#define MGW_SESSION_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "session/session-t.h"

struct mgw_session_table;

struct mgw_session_table_limits {
	size_t max_count;       /* entries (>= 1) */
	size_t max_bytes;       /* bytes accounted (>= 1) */
	uint64_t idle_ms;       /* an entry unused this long expires (>= 1) */
	int evict;              /* 1: make room by dropping the least recently
	                         * used entries (caches); 0: refuse (memory
	                         * store: a session is never silently lost) */
};

struct mgw_session_table_stats {
	size_t count;           /* entries, tombstones included */
	size_t bytes;           /* accounted bytes */
	uint64_t expired;       /* entries expired (idle) */
	uint64_t evicted;       /* entries dropped for room */
};

/* Returns a new empty table, or NULL with a message in err (no memory, or
 * SipHash not available from OpenSSL). */
struct mgw_session_table *mgw_session_table_new(
	const struct mgw_session_table_limits *lim, char *err, size_t errlen);

/* Frees the table and drops every record reference.  NULL allowed. */
void mgw_session_table_free(struct mgw_session_table *t);

/* Finds key.  Returns 0 with *out a new reference (and marks the entry
 * used at now), MGW_ECLOSED for a tombstone (*out NULL), or
 * MGW_ENOTFOUND (absent, or found idle-expired: then removed and
 * counted). */
int mgw_session_table_get(struct mgw_session_table *t, const void *key,
                          size_t keylen, uint64_t now,
                          struct mgw_session **out);

/* Adds key -> rec (rec NULL: a tombstone).  On success the table owns the
 * reference passed; on failure the caller keeps it.  Returns 0,
 * MGW_ECONFLICT (key present, even as a tombstone), MGW_ELIMIT (full and
 * not evicting, after dropping what had expired, or one record larger than
 * max_bytes) or MGW_ENOMEM. */
int mgw_session_table_insert(struct mgw_session_table *t, const void *key,
                             size_t keylen, struct mgw_session *rec,
                             uint64_t now);

/* Adds or replaces key -> rec (rec NULL: a tombstone) without any version
 * check (caches fill themselves from an authority).  Ownership and errors
 * as mgw_session_table_insert, without MGW_ECONFLICT. */
int mgw_session_table_put(struct mgw_session_table *t, const void *key,
                          size_t keylen, struct mgw_session *rec,
                          uint64_t now);

/* As mgw_session_table_put, but in one step with the check: nothing is
 * stored, and MGW_ECONFLICT returned (the caller keeps rec), when key
 * holds a tombstone (a deleted session is never brought back), or a
 * record for which keep(current, arg) returns nonzero (keep may be NULL).
 * keep runs under the table's lock: it must not call the table. */
int mgw_session_table_put_unless(struct mgw_session_table *t, const void *key,
                                 size_t keylen, struct mgw_session *rec,
                                 uint64_t now,
                                 int (*keep)(const struct mgw_session *current,
                                             void *arg),
                                 void *arg);

/* Compare-and-set: replaces the record of key by rec when the stored
 * record's version is expect_version, setting rec->version to
 * expect_version + 1.  On success the table owns the reference passed.
 * Returns 0; MGW_ECONFLICT with *current (may be NULL) a reference to the
 * stored record; MGW_ENOTFOUND (absent, tombstone or expired); MGW_ELIMIT
 * (the larger record does not fit) or MGW_ENOMEM. */
int mgw_session_table_replace(struct mgw_session_table *t, const void *key,
                              size_t keylen, struct mgw_session *rec,
                              uint64_t expect_version, uint64_t now,
                              struct mgw_session **current);

/* Removes key.  Returns 0 (was a live record), MGW_ECLOSED (was a
 * tombstone) or MGW_ENOTFOUND. */
int mgw_session_table_remove(struct mgw_session_table *t, const void *key,
                             size_t keylen);

/* Expires at most max entries idle at now.  Returns how many. */
size_t mgw_session_table_sweep(struct mgw_session_table *t, uint64_t now,
                               size_t max);

/* Calls fn(key, keylen, rec, arg) for every entry not idle at now, oldest
 * use first (rec NULL for a tombstone; borrowed: take a reference to keep
 * it), until fn returns nonzero.  Runs under the table's lock: fn must not
 * call the table.  Returns how many entries fn saw. */
size_t mgw_session_table_each(struct mgw_session_table *t, uint64_t now,
                              int (*fn)(const void *key, size_t keylen,
                                        struct mgw_session *rec, void *arg),
                              void *arg);

void mgw_session_table_stats(struct mgw_session_table *t,
                             struct mgw_session_table_stats *out);

/* Bytes one entry for a key of keylen holding rec is accounted (for
 * tests and the stores' own limits). */
size_t mgw_session_table_entry_size(size_t keylen,
                                    const struct mgw_session *rec);

#endif
