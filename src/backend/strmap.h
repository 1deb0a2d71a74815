/* strmap.h - a small string-keyed hash map for the reference server's
 * tables (sessions, per-session counters, in-memory handles).  Keys are
 * copied; values are opaque pointers the caller owns.  Not thread-safe. */
#ifndef MGW_BACKEND_STRMAP_H
#define MGW_BACKEND_STRMAP_H

#include <stddef.h>

struct mgw_strmap;

/* Returns an empty map, or NULL on no memory. */
struct mgw_strmap *mgw_strmap_new(void);

/* Frees the map and its key copies (not the values); NULL is allowed. */
void mgw_strmap_free(struct mgw_strmap *m);

/* Number of entries. */
size_t mgw_strmap_count(const struct mgw_strmap *m);

/* Value stored under key, or NULL when absent. */
void *mgw_strmap_get(const struct mgw_strmap *m, const char *key);

/* Stores value under a copy of key, replacing any previous value (which is
 * not freed: callers look it up first when they own it).  value must not
 * be NULL.  Returns 0 or MGW_ENOMEM. */
int mgw_strmap_put(struct mgw_strmap *m, const char *key, void *value);

/* Removes key and returns its value, or NULL when absent. */
void *mgw_strmap_del(struct mgw_strmap *m, const char *key);

/* Visits every entry in unspecified order.  The visitor returns 1 to remove
 * the entry it was given (after it has dealt with the value), 0 to keep it;
 * it must not otherwise modify the map. */
typedef int (*mgw_strmap_visit_cb)(const char *key, void *value, void *arg);
void mgw_strmap_foreach(struct mgw_strmap *m, mgw_strmap_visit_cb visit,
                        void *arg);

#endif
