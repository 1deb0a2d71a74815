/* redis_store.c - the "redis" session store: the mapping of client session
 * ids to records lives in Redis, so every gateway replica pointed at the
 * same Redis serves (and re-pins) every session; a local cache in front
 * keeps Redis off the path of most requests.
 *
 * One Redis hash per session, key `<key_prefix><id>`:
 *   v  version, decimal (the compare-and-set token)
 *   e  end of the session's lifetime, wall-clock seconds, decimal
 *   d  the record, binary (format below)
 * with a Redis TTL of min(idle_timeout, what is left of the lifetime),
 * refreshed by every fetch.  Every operation is ONE round trip: an EVAL of
 * a short script (create-if-absent, fetch-and-refresh, compare-and-set,
 * delete-with-tombstone, restore-if-absent), so two gateways updating the
 * same version concurrently converge on one record: the loser's script sees the other version and returns
 * the winner's record (MGW_ECONFLICT).
 *
 * The local cache is the shared table (table.h), bounded by cache_size
 * entries and max_memory bytes (LRU eviction), entries idling out after
 * idle_timeout.  A cached record is *fresh* for V = min(cache_ttl,
 * idle_timeout / 2) after it was fetched or written (the stamp is
 * rec->cached_ms): a lookup of a fresh entry asks Redis nothing, a lookup
 * of an older one fetches (one EVAL, which also refreshes the key's TTL).
 * So a session in use is refreshed in Redis at least once per V by some
 * gateway, and hits cost no traffic at all; V <= idle_timeout / 2 keeps a
 * used session from idling out in Redis while it is served from caches.
 * What another gateway changed (a re-pin, a DELETE) is seen here at the
 * latest V later; a stale pin costs nothing worse than a re-pin attempt,
 * whose compare-and-set then returns the current record.
 *
 * Redis unreachable (a view's connection is down, or a command fails or
 * times out):
 *   - lookups of cached sessions are served from the cache, fresh or not
 *     (stale_hits); uncached ones fail MGW_EIO at once;
 *   - updates of cached sessions are applied to the cache only
 *     (local_updates) and marked stale, so that the first lookup after
 *     Redis returns takes Redis' record again (at worst one more re-pin);
 *   - creates fail MGW_EIO (the proxy answers 503): a session that exists
 *     in one gateway only would be answered 404 by every other replica,
 *     which tells a spec-following client to start over -- churn, where
 *     a 503 on `initialize` is an honest "retry shortly";
 *   - removes fail MGW_EIO and keep the cache entry.
 * Nothing is queued while a connection is known down.  Redis that comes
 * back without the data (restarted without persistence, flushed, an
 * empty replica) is detected with a per-gateway marker key and every
 * session the cache holds is written back (see "write-back" below); a
 * lookup or update meeting a missing key puts its record back too.  A
 * DELETE leaves a tombstone (<prefix>tomb:<hex SHA-256 of the id>, the
 * sealed store's form) so that nothing is put back over it.  The store logs
 * once when Redis becomes unreachable (from any worker) and once when it
 * is reachable again (from all), and counts outages and their duration.
 *
 * Record `d`: the full layout of session/record_codec.h (bodies byte for
 * byte).  A record read back is validated by the session setters and must
 * be exactly one record (no trailing bytes): Redis is shared, and what it
 * holds is not trusted blindly. */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "core/errors.h"
#include "core/log.h"
#include "modules/redis_store/redis_store.h"
#include "net/redis.h"
#include "session/record_codec.h"
#include "session/session.h"
#include "session/store.h"
#include "session/table.h"
#include "util/rand.h"
#include "util/time.h"

#define LAYOUT MGW_RECORD_FULL  /* the record layout of `d` */
#define ID_LEN (2 * MGW_SESSION_ID_HEX_BYTES)
#define KEY_MAX (128 + ID_LEN + 1)
#define CREATE_TRIES 4
#define BACKOFF_MIN 0.1
#define BACKOFF_MAX 5.0
#define ERROR_LOG_EVERY 1000
#define MAX_ARGS 5              /* ARGV of the longest script */

/* KEYS[1] key; ARGV blob, expires_s, ttl_ms.  1 created, 0 id taken. */
static const char create_script[] =
	"if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end "
	"redis.call('HSET', KEYS[1], 'v', '0', 'e', ARGV[2], 'd', ARGV[1]) "
	"redis.call('PEXPIRE', KEYS[1], ARGV[3]) "
	"return 1";

/* KEYS[1] key; ARGV idle_ms, now_s.  {v, d}; 0 past its lifetime (and
 * deleted); nil unknown.  Refreshes the TTL (idle expiry). */
static const char fetch_script[] =
	"local r = redis.call('HMGET', KEYS[1], 'v', 'e', 'd') "
	"if not r[1] or not r[2] or not r[3] then return false end "
	"local left = (tonumber(r[2]) - tonumber(ARGV[2])) * 1000 "
	"if left <= 0 then redis.call('DEL', KEYS[1]) return 0 end "
	"redis.call('PEXPIRE', KEYS[1], math.min(left, tonumber(ARGV[1]))) "
	"return {r[1], r[3]}";

/* KEYS[1] key; ARGV expect, new version, blob, idle_ms, now_s.  1 done;
 * {v, d} the current record (another version: conflict); 0 past its
 * lifetime; nil unknown. */
static const char cas_script[] =
	"local r = redis.call('HMGET', KEYS[1], 'v', 'e', 'd') "
	"if not r[1] or not r[2] or not r[3] then return false end "
	"local left = (tonumber(r[2]) - tonumber(ARGV[5])) * 1000 "
	"if left <= 0 then redis.call('DEL', KEYS[1]) return 0 end "
	"if r[1] ~= ARGV[1] then return {r[1], r[3]} end "
	"redis.call('HSET', KEYS[1], 'v', ARGV[2], 'd', ARGV[3]) "
	"redis.call('PEXPIRE', KEYS[1], math.min(left, tonumber(ARGV[4]))) "
	"return 1";

/* KEYS[1] key, KEYS[2] its tombstone; ARGV blob, version, expires_s,
 * ttl_ms.  Puts back a record the server lost (a restart without
 * persistence, a flush, a failover to an empty replica): 1 written; {v,
 * d} the key holds a record (another gateway was first); 0 the session
 * was deleted (a tombstone): never brought back. */
static const char restore_script[] =
	"if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end "
	"local r = redis.call('HMGET', KEYS[1], 'v', 'd') "
	"if r[1] and r[2] then return {r[1], r[2]} end "
	"redis.call('HSET', KEYS[1], 'v', ARGV[2], 'e', ARGV[3], 'd', ARGV[1]) "
	"redis.call('PEXPIRE', KEYS[1], ARGV[4]) "
	"return 1";

/* KEYS[1] key, KEYS[2] its tombstone; ARGV tombstone ttl_ms.  DELETE:
 * the tombstone keeps any gateway from putting the session back from its
 * cache; returns how many keys were deleted (0: unknown). */
static const char delete_script[] =
	"redis.call('SET', KEYS[2], '1', 'PX', ARGV[1]) "
	"return redis.call('DEL', KEYS[1])";

#define TOMB_TAG "tomb:"        /* as store_sealed.c: <prefix>tomb:<hex
                                 * SHA-256 of the id> */
#define TOMB_KEY_MAX (128 + sizeof(TOMB_TAG) - 1 + 2 * MGW_SESSION_DIGEST_LEN + 1)
#define MARKER_TAG "gw:"        /* <prefix>gw:<instance>: one per gateway */
#define MARKER_TTL_MS 3600000   /* a gateway gone for good leaves nothing
                                 * for long */
#define CHECK_INTERVAL 1.0      /* s between marker checks, per view */
#define WB_TICK 0.01            /* s between write-back batches */
#define WB_INFLIGHT 256         /* write-back commands out at once */

struct wb_job;

struct redis_store {
	struct mgw_session_store base;  /* first: the generic part */
	const struct mgw_session_redis_conf *rc;
	struct mgw_session_table *cache;
	uint64_t idle_ms;               /* Redis TTL of an unused session */
	uint64_t fresh_ms;              /* V: a cached record is used
	                                 * without asking Redis this long */
	char display[300];              /* URL without password (logs) */
	pthread_mutex_t lock;           /* the outage bookkeeping below */
	unsigned views_down;            /* views whose connection is down */
	uint64_t down_since;            /* mono ms, while views_down > 0 */
	uint64_t outages, outage_ms;
	atomic_uint_fast64_t stale_hits, local_updates, round_trips,
		error_replies, bad_records;
	/* write-back after the server lost its data */
	char marker[KEY_MAX];           /* <prefix>gw:<instance> */
	atomic_int marker_known;        /* a check found or set the marker */
	atomic_int wb_running;          /* a view runs a write-back */
	atomic_uint_fast64_t writebacks, restored_wb, restored_lookup,
		wb_present, wb_deleted, wb_failed;
};

/* One worker's view: its own connection on its own loop. */
struct redis_view {
	struct mgw_session_view base;   /* first: the generic part */
	struct mgw_redis *conn;
	int down;                       /* counted in views_down */
	struct event *check_ev;         /* the periodic marker check */
	int checking;                   /* a marker check is out */
	int check_known;                /* ... sent once the marker was known
	                                 * (else a missing one is the first) */
	struct wb_job *wb;              /* the write-back this view runs */
};

/* A write-back: what the cache held when the loss was seen (sessions and
 * local tombstones), sent at writeback_rate from the view's loop. */
struct wb_item {
	struct mgw_session *rec;        /* NULL: a local tombstone */
	size_t idlen;
	char id[ID_LEN + 1];
};

struct wb_job {
	struct redis_view *v;           /* NULL once the view is gone */
	struct event *tick;
	struct wb_item *items;
	size_t n, next, inflight;
	size_t sessions, tombstones;
	uint64_t t0, restored, present, deleted, failed;
	double credit;                  /* commands allowed now (rate) */
};

struct wb_cmd {
	struct wb_job *job;
	int tomb;
	size_t idlen;
	char id[ID_LEN + 1];
};

/* Per-operation data (op->impl) while a command is out. */
struct rop {
	struct mgw_session_op *op;
	struct redis_view *v;
	struct mgw_session *rec;        /* create: the draft; update: the new
	                                 * record; lookup: the cached copy to
	                                 * fall back on (or NULL) */
	unsigned char *blob;            /* create: the encoded draft */
	size_t bloblen;
	uint64_t expect;                /* update */
	int tries;                      /* create: ids tried */
	int has_principal;
	unsigned char principal[MGW_SESSION_DIGEST_LEN];
	size_t idlen;
	char id[ID_LEN + 1];
	char key[KEY_MAX];
	size_t keylen;
};

static struct redis_store *rs_of(struct mgw_session_store *st)
{
	return (struct redis_store *)st;
}

static uint64_t now_ms(struct redis_store *s)
{
	return mgw_session_store_mono_ms(&s->base);
}

static void bump(atomic_uint_fast64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ---- the local cache ---- */

static int is_fresh(struct redis_store *s, const struct mgw_session *rec,
                    uint64_t now)
{
	return rec->cached_ms != 0 && now - rec->cached_ms < s->fresh_ms;
}

struct fill_check {
	struct redis_store *s;
	const struct mgw_session *rec;
	uint64_t now;
};

/* Under the cache's lock: the cached copy is a fresh newer version. */
static int newer_cached(const struct mgw_session *cur, void *arg)
{
	const struct fill_check *k = arg;

	return cur->version > k->rec->version && is_fresh(k->s, cur, k->now);
}

/* Puts rec (a reference of the caller's, not taken) into the cache,
 * unless the cache holds a fresh newer version already (a fetch that
 * crossed an update on another worker) or the tombstone of a DELETE made
 * here (a fetch that crossed it): checked and stored in one step. */
static void cache_fill(struct redis_store *s, struct mgw_session *rec)
{
	struct fill_check k = {.s = s, .rec = rec, .now = now_ms(s)};

	mgw_session_ref(rec);
	if (mgw_session_table_put_unless(s->cache, rec->id, rec->id_len, rec,
	                                 k.now, newer_cached, &k) != 0)
		mgw_session_unref(rec); /* kept the cached one, or too big */
}

/* ---- outage bookkeeping ---- */

/* Called on a view's thread when its connection changes state; the
 * store-wide transitions (first view down, last view back) are logged. */
static void view_set_down(struct redis_view *v, int down, const char *why,
                          int quiet)
{
	struct redis_store *s = rs_of(v->base.store);
	int began = 0, ended = 0;
	uint64_t lasted = 0, now;

	if (v->down == down)
		return;
	v->down = down;
	now = now_ms(s);
	pthread_mutex_lock(&s->lock);
	if (down) {
		if (s->views_down++ == 0) {
			began = 1;
			s->outages++;
			s->down_since = now;
		}
	} else if (--s->views_down == 0) {
		ended = 1;
		lasted = now - s->down_since;
		s->outage_ms += lasted;
	}
	pthread_mutex_unlock(&s->lock);
	if (quiet)
		return;
	/* cached sessions are served from the local cache meanwhile, new
	 * sessions are refused until it is back (doc/serve.md) */
	if (began)
		mgw_event(NULL, "store_down", "store=redis url=%s detail=\"%s\"",
		          s->display, why ? why : "connection down");
	if (ended)
		mgw_event(NULL, "store_up", "store=redis url=%s down_s=%.1f",
		          s->display, (double)lasted / 1000.0);
}

static void on_conn_state(void *arg, enum mgw_redis_state state,
                          const char *why)
{
	struct redis_view *v = arg;

	if (state == MGW_REDIS_UP) {
		view_set_down(v, 0, NULL, 0);
		/* did it come back empty?  (from the loop, not inside
		 * hiredis) */
		if (v->check_ev)
			event_active(v->check_ev, EV_TIMEOUT, 1);
	} else if (state == MGW_REDIS_DOWN) {
		view_set_down(v, 1, why, 0);
	}
}

static int conn_usable(struct redis_view *v)
{
	return mgw_redis_state(v->conn) != MGW_REDIS_DOWN;
}

/* ---- operations ---- */

static struct rop *rop_new(struct redis_view *v, struct mgw_session_op *op,
                           const char *id, size_t idlen)
{
	struct redis_store *s = rs_of(v->base.store);
	struct rop *o = calloc(1, sizeof(*o));
	size_t pl = strlen(s->rc->key_prefix);

	if (!o)
		return NULL;
	o->op = op;
	o->v = v;
	if (id) {
		memcpy(o->id, id, idlen);
		o->id[idlen] = '\0';
		o->idlen = idlen;
		memcpy(o->key, s->rc->key_prefix, pl);
		memcpy(o->key + pl, id, idlen);
		o->keylen = pl + idlen;
		o->key[o->keylen] = '\0';
	}
	op->impl = o;
	return o;
}

static void rop_set_id(struct rop *o, const char *id)
{
	struct redis_store *s = rs_of(o->v->base.store);
	size_t pl = strlen(s->rc->key_prefix);

	o->idlen = strlen(id);
	memcpy(o->id, id, o->idlen + 1);
	memcpy(o->key, s->rc->key_prefix, pl);
	memcpy(o->key + pl, id, o->idlen);
	o->keylen = pl + o->idlen;
	o->key[o->keylen] = '\0';
}

/* Releases the per-op data and completes (the contract: impl released
 * before completing).  rec: a reference that moves into the op. */
static void finish(struct rop *o, int status, struct mgw_session *rec)
{
	struct mgw_session_op *op = o->op;

	op->impl = NULL;
	mgw_session_unref(o->rec);
	free(o->blob);
	free(o);
	mgw_session_op_complete(op, status, rec);
}

/* Counts a failed command (not an answered one) and logs error replies
 * now and then: they mean a misconfiguration (auth, a key prefix shared
 * with other data), not an outage. */
static void note_failure(struct redis_store *s, int status, redisReply *rep)
{
	if (status == 0 && rep && rep->type == REDIS_REPLY_ERROR) {
		uint64_t n = atomic_fetch_add_explicit(&s->error_replies, 1,
		                                       memory_order_relaxed);

		if (n % ERROR_LOG_EVERY == 0)
			mgw_warn(NULL, "sessions: redis %s answered an error "
			         "(%llu so far): %s", s->display,
			         (unsigned long long)n + 1, rep->str);
	}
}

/* A key that holds something this store did not write: answered like an
 * unknown id (a 404 makes the client start over), and logged for the
 * first and then every ERROR_LOG_EVERY-th, not per request. */
/* The key holds the session id, which is a secret: it is logged as the
 * prefix and the redacted id, like every session id. */
static void note_bad_record(struct redis_store *s, const struct rop *o)
{
	uint64_t n = atomic_fetch_add_explicit(&s->bad_records, 1,
	                                       memory_order_relaxed);
	char red[64];

	if (n % ERROR_LOG_EVERY == 0)
		mgw_warn(NULL, "sessions: redis %s: key %s%s holds no valid "
		         "session record (%llu so far)", s->display,
		         s->rc->key_prefix,
		         mgw_log_redact("Mcp-Session-Id", o->id, red, sizeof(red)),
		         (unsigned long long)n + 1);
}

/* EVAL script with nkeys keys and nargs arguments on conn. */
static int eval_on(struct redis_store *s, struct mgw_redis *conn,
                   const char *script, int nkeys, const char **keys,
                   const size_t *keylens, int nargs, const char **args,
                   const size_t *lens, mgw_redis_reply_cb cb, void *arg)
{
	const char *argv[5 + MAX_ARGS];
	size_t argl[5 + MAX_ARGS];
	int argc = 0;

	if (nargs > MAX_ARGS || nkeys < 1 || nkeys > 2)
		abort(); /* the scripts here take at most MAX_ARGS, 2 keys */

	argv[argc] = "EVAL";
	argl[argc++] = 4;
	argv[argc] = script;
	argl[argc++] = strlen(script);
	argv[argc] = nkeys == 1 ? "1" : "2";
	argl[argc++] = 1;
	for (int i = 0; i < nkeys; i++) {
		argv[argc] = keys[i];
		argl[argc++] = keylens[i];
	}
	for (int i = 0; i < nargs; i++) {
		argv[argc] = args[i];
		argl[argc++] = lens[i];
	}
	if (mgw_redis_command_argv(conn, argc, argv, argl, cb, arg) != 0)
		return MGW_EIO;
	bump(&s->round_trips);
	return 0;
}

static int send_eval(struct rop *o, const char *script, int nargs,
                     const char **args, const size_t *lens,
                     mgw_redis_reply_cb cb)
{
	const char *k = o->key;

	return eval_on(rs_of(o->v->base.store), o->v->conn, script, 1, &k,
	               &o->keylen, nargs, args, lens, cb, o);
}

/* <key_prefix>"tomb:"<hex SHA-256 of the id>, the form of the sealed
 * store's shared tombstones. */
static size_t tomb_key(const struct redis_store *s, const char *id,
                       size_t idlen, char out[TOMB_KEY_MAX])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char d[MGW_SESSION_DIGEST_LEN];
	size_t n = strlen(s->rc->key_prefix);

	mgw_session_principal_digest(id, idlen, d);
	memcpy(out, s->rc->key_prefix, n);
	memcpy(out + n, TOMB_TAG, sizeof(TOMB_TAG) - 1);
	n += sizeof(TOMB_TAG) - 1;
	for (size_t i = 0; i < sizeof(d); i++) {
		out[n++] = hex[d[i] >> 4];
		out[n++] = hex[d[i] & 15];
	}
	out[n] = '\0';
	return n;
}

static uint64_t ttl_ms(struct redis_store *s, const struct mgw_session *rec);

/* Sends the restore script for rec (written at version) under id on
 * conn; cb gets arg.  The key (and the tombstone key) are built here. */
static int restore_send(struct redis_store *s, struct mgw_redis *conn,
                        const char *id, size_t idlen,
                        const struct mgw_session *rec, uint64_t version,
                        mgw_redis_reply_cb cb, void *arg)
{
	char key[KEY_MAX], tk[TOMB_KEY_MAX], ver[24], exp[24], ttl[24];
	const char *keys[2] = {key, tk};
	size_t keyl[2], pl = strlen(s->rc->key_prefix), bloblen = 0;
	const char *args[4];
	size_t lens[4];
	unsigned char *blob;
	uint64_t t = ttl_ms(s, rec);
	int rc;

	if (t == 0)
		return MGW_ENOTFOUND;   /* past its lifetime: nothing to keep */
	memcpy(key, s->rc->key_prefix, pl);
	memcpy(key + pl, id, idlen);
	keyl[0] = pl + idlen;
	key[keyl[0]] = '\0';
	keyl[1] = tomb_key(s, id, idlen, tk);
	blob = mgw_record_encode(rec, LAYOUT, &bloblen);
	if (!blob)
		return MGW_ENOMEM;
	args[0] = (const char *)blob;
	lens[0] = bloblen;
	lens[1] = (size_t)snprintf(ver, sizeof(ver), "%llu",
	                           (unsigned long long)version);
	args[1] = ver;
	lens[2] = (size_t)snprintf(exp, sizeof(exp), "%lld",
	                           (long long)rec->expires_s);
	args[2] = exp;
	lens[3] = (size_t)snprintf(ttl, sizeof(ttl), "%llu",
	                           (unsigned long long)t);
	args[3] = ttl;
	rc = eval_on(s, conn, restore_script, 2, keys, keyl, 4, args, lens, cb,
	             arg);
	free(blob);
	return rc;
}

/* Parses a decimal version; 0 on success. */
static int parse_version(const char *p, size_t n, uint64_t *out)
{
	char buf[24];
	char *end;
	unsigned long long v;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (buf[0] < '0' || buf[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* A {v, d} reply as a record with id and version, or NULL. */
static struct mgw_session *record_from(const struct rop *o, redisReply *rep)
{
	struct mgw_session *rec;
	uint64_t version;

	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
	    rep->element[0]->type != REDIS_REPLY_STRING ||
	    rep->element[1]->type != REDIS_REPLY_STRING ||
	    parse_version(rep->element[0]->str, rep->element[0]->len,
	                  &version) != 0)
		return NULL;
	rec = mgw_record_decode((const unsigned char *)rep->element[1]->str,
	                        rep->element[1]->len, LAYOUT);
	if (!rec)
		return NULL;
	if (mgw_session_set_id(rec, o->id, o->idlen) != 0) {
		mgw_session_unref(rec);
		return NULL;
	}
	rec->version = version;
	return rec;
}

/* Answers a script's "no such session": nil (deleted, idled out) or an
 * integer (past its lifetime, deleted by the script: counted expired). */
static void answer_gone(struct rop *o, redisReply *rep)
{
	struct redis_store *s = rs_of(o->v->base.store);

	if (rep->type == REDIS_REPLY_INTEGER)
		bump(&s->base.cnt.expired);
	mgw_session_table_remove(s->cache, o->id, o->idlen);
	finish(o, MGW_ENOTFOUND, NULL);
}

/* The record of a {v, d} reply, stamped fresh and put into the cache (the
 * reference returned is the caller's).  A key holding something this
 * store did not write is answered like an unknown id: o is finished (not
 * found) and NULL returned. */
static struct mgw_session *adopt_record(struct rop *o, redisReply *rep)
{
	struct redis_store *s = rs_of(o->v->base.store);
	struct mgw_session *rec = record_from(o, rep);

	if (!rec) {
		note_bad_record(s, o);
		mgw_session_table_remove(s->cache, o->id, o->idlen);
		finish(o, MGW_ENOTFOUND, NULL);
		return NULL;
	}
	rec->cached_ms = now_ms(s);
	cache_fill(s, rec);
	return rec;
}

/* The time a session may stay unused in Redis from now: the idle timeout,
 * but never past its lifetime; 0 = its lifetime is over. */
static uint64_t ttl_ms(struct redis_store *s, const struct mgw_session *rec)
{
	int64_t left = rec->expires_s - mgw_session_store_wall_s(&s->base);

	if (left <= 0)
		return 0;
	if ((uint64_t)left * 1000 < s->idle_ms)
		return (uint64_t)left * 1000;
	return s->idle_ms;
}

/* -- create -- */

static int create_send(struct rop *o);

static void on_create_reply(void *arg, int status, redisReply *rep)
{
	struct rop *o = arg;
	struct redis_store *s = rs_of(o->v->base.store);
	struct mgw_session *rec;

	if (status != 0 || rep->type != REDIS_REPLY_INTEGER) {
		note_failure(s, status, rep);
		finish(o, MGW_EIO, NULL);
		return;
	}
	if (rep->integer == 0) {
		/* The id is taken: 128 random bits colliding means a broken
		 * generator rather than bad luck, but a retry costs little. */
		if (o->tries < CREATE_TRIES && create_send(o) == 0)
			return;
		finish(o, MGW_EIO, NULL);
		return;
	}
	rec = o->rec;
	o->rec = NULL;
	rec->cached_ms = now_ms(s);
	cache_fill(s, rec);
	finish(o, 0, rec);
}

/* Mints an id for the draft and sends the create script. */
static int create_send(struct rop *o)
{
	struct redis_store *s = rs_of(o->v->base.store);
	char id[ID_LEN + 1], exp[24], ttl[24];
	const char *args[3];
	size_t lens[3];

	o->tries++;
	if (mgw_session_mint_id(id) != 0 ||
	    mgw_session_set_id(o->rec, id, strlen(id)) != 0)
		return MGW_EIO;
	rop_set_id(o, id);
	snprintf(exp, sizeof(exp), "%lld", (long long)o->rec->expires_s);
	snprintf(ttl, sizeof(ttl), "%llu", (unsigned long long)ttl_ms(s, o->rec));
	args[0] = (const char *)o->blob;
	lens[0] = o->bloblen;
	args[1] = exp;
	lens[1] = strlen(exp);
	args[2] = ttl;
	lens[2] = strlen(ttl);
	return send_eval(o, create_script, 3, args, lens, on_create_reply);
}

static int rs_create(struct mgw_session_view *view, struct mgw_session *draft,
                     struct mgw_session_op *op)
{
	struct redis_view *v = (struct redis_view *)view;
	struct redis_store *s = rs_of(view->store);
	int64_t wall = mgw_session_store_wall_s(view->store);
	struct rop *o;

	if (draft->init_len > s->base.max_init) {
		mgw_session_unref(draft);
		mgw_session_op_complete(op, MGW_ELIMIT, NULL);
		return 0;
	}
	if (!conn_usable(v)) {
		mgw_session_unref(draft);
		mgw_session_op_complete(op, MGW_EIO, NULL);
		return 0;
	}
	o = rop_new(v, op, NULL, 0);
	if (!o) {
		mgw_session_unref(draft);
		return MGW_ENOMEM;
	}
	o->rec = draft;
	draft->version = 0;
	draft->created_s = wall;
	draft->expires_s = wall + (int64_t)s->base.conf->max_lifetime;
	o->blob = mgw_record_encode(draft, LAYOUT, &o->bloblen);
	if (!o->blob) {
		op->impl = NULL;
		mgw_session_unref(o->rec);
		free(o);
		return MGW_ENOMEM;
	}
	if (create_send(o) != 0)
		finish(o, MGW_EIO, NULL);
	return 0;
}

/* -- lookup -- */

/* Only ids of the form this store mints (lowercase hex) can name a key:
 * anything else is unknown without a round trip and never becomes part of
 * a Redis key. */
static int id_minted_here(const char *id, size_t len)
{
	if (len != ID_LEN)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		      (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return 1;
}

/* Answers a lookup with rec (a reference that moves), applying the
 * lifetime and the principal binding. */
static void lookup_answer(struct rop *o, struct mgw_session *rec)
{
	struct redis_store *s = rs_of(o->v->base.store);

	if (rec->expires_s <= mgw_session_store_wall_s(&s->base)) {
		/* Past its lifetime: Redis drops it by TTL (the fetch
		 * script deletes it outright). */
		if (mgw_session_table_remove(s->cache, o->id, o->idlen) == 0)
			bump(&s->base.cnt.expired);
		mgw_session_unref(rec);
		finish(o, MGW_ENOTFOUND, NULL);
		return;
	}
	if (s->base.conf->bind_principal &&
	    !mgw_session_principal_matches(rec, o->has_principal ? o->principal
	                                                        : NULL)) {
		bump(&s->base.cnt.rejected_principal);
		mgw_session_unref(rec);
		finish(o, MGW_ENOTFOUND, NULL);
		return;
	}
	finish(o, 0, rec);
}

/* Redis could not be asked: the cached copy if there is one.  errors
 * counts every operation that met an unreachable Redis once: here when
 * the cache answers, in the generic layer when MGW_EIO is. */
static void lookup_fallback(struct rop *o)
{
	struct redis_store *s = rs_of(o->v->base.store);
	struct mgw_session *rec = o->rec;

	if (!rec) {
		finish(o, MGW_EIO, NULL);
		return;
	}
	o->rec = NULL;
	bump(&s->base.cnt.errors);
	bump(&s->base.cnt.cache_hits);
	bump(&s->stale_hits);
	lookup_answer(o, rec);
}

static void update_local(struct rop *o);

/* The answer to a restore sent by a lookup (o->rec: the cached record)
 * or an update (o->rec: the new record, written at o->expect + 1). */
static void on_restore_reply(void *arg, int status, redisReply *rep)
{
	struct rop *o = arg;
	struct redis_store *s = rs_of(o->v->base.store);
	int update = o->op->kind == MGW_SESSION_OP_UPDATE;
	struct mgw_session *rec;

	if (status != 0 || rep->type == REDIS_REPLY_ERROR) {
		note_failure(s, status, rep);
		if (update)
			update_local(o);
		else
			lookup_fallback(o);
		return;
	}
	if (rep->type == REDIS_REPLY_INTEGER && rep->integer == 1) {
		bump(&s->restored_lookup);
		rec = update ? o->rec : mgw_session_dup(o->rec);
		if (!rec) {
			lookup_fallback(o);
			return;
		}
		if (update) {
			o->rec = NULL;
			rec->version = o->expect + 1;
		}
		rec->cached_ms = now_ms(s);
		cache_fill(s, rec);
		if (update)
			finish(o, 0, rec);
		else
			lookup_answer(o, rec);
		return;
	}
	if (rep->type == REDIS_REPLY_INTEGER) {
		/* deleted (a tombstone): a local one too, and gone */
		if (mgw_session_table_put(s->cache, o->id, o->idlen, NULL,
		                          now_ms(s)) != 0)
			mgw_session_table_remove(s->cache, o->id, o->idlen);
		finish(o, MGW_ENOTFOUND, NULL);
		return;
	}
	/* another gateway put it back first: theirs */
	rec = adopt_record(o, rep);
	if (!rec)
		return;
	if (update)
		finish(o, MGW_ECONFLICT, rec);
	else
		lookup_answer(o, rec);
}

/* The server does not know a session this gateway holds (rec): it lost
 * it (restarted empty, flushed, failed over to an empty replica) or
 * another gateway deleted it; the restore script tells which.  Returns
 * 0 when sent (on_restore_reply answers); MGW_ENOTFOUND (nothing to put
 * back: past its lifetime), MGW_EIO (the connection refused it) or
 * MGW_ENOMEM, with nothing sent. */
static int try_restore(struct rop *o, const struct mgw_session *rec,
                       uint64_t version)
{
	struct redis_store *s = rs_of(o->v->base.store);

	if (!rec || rec->expires_s <= mgw_session_store_wall_s(&s->base))
		return MGW_ENOTFOUND;
	return restore_send(s, o->v->conn, o->id, o->idlen, rec, version,
	                    on_restore_reply, o);
}

static void on_fetch_reply(void *arg, int status, redisReply *rep)
{
	struct rop *o = arg;
	struct redis_store *s = rs_of(o->v->base.store);
	struct mgw_session *rec;

	if (status != 0 || rep->type == REDIS_REPLY_ERROR) {
		note_failure(s, status, rep);
		lookup_fallback(o);
		return;
	}
	if (rep->type == REDIS_REPLY_NIL && o->rec) {
		int rc = try_restore(o, o->rec, o->rec->version);

		if (rc == 0)
			return;
		if (rc == MGW_EIO) {    /* gone meanwhile: the cached copy */
			lookup_fallback(o);
			return;
		}
	}
	if (rep->type == REDIS_REPLY_NIL || rep->type == REDIS_REPLY_INTEGER) {
		answer_gone(o, rep);
		return;
	}
	rec = adopt_record(o, rep);
	if (rec)
		lookup_answer(o, rec);
}

static int rs_lookup(struct mgw_session_view *view, const char *id,
                     size_t len, const unsigned char *principal,
                     struct mgw_session_op *op)
{
	struct redis_view *v = (struct redis_view *)view;
	struct redis_store *s = rs_of(view->store);
	struct mgw_session *cached = NULL;
	uint64_t now = now_ms(s);
	char idle[24], wall[24];
	const char *args[2];
	size_t lens[2];
	struct rop *o;

	if (!id_minted_here(id, len)) {
		mgw_session_op_complete(op, MGW_ENOTFOUND, NULL);
		return 0;
	}
	o = rop_new(v, op, id, len);
	if (!o)
		return MGW_ENOMEM;
	if (principal) {
		o->has_principal = 1;
		memcpy(o->principal, principal, MGW_SESSION_DIGEST_LEN);
	}
	if (mgw_session_table_get(s->cache, id, len, now, &cached) == 0) {
		if (is_fresh(s, cached, now)) {
			bump(&s->base.cnt.cache_hits);
			lookup_answer(o, cached);
			return 0;
		}
		o->rec = cached;        /* the fallback while Redis is away */
	}
	if (!conn_usable(v)) {
		lookup_fallback(o);
		return 0;
	}
	snprintf(idle, sizeof(idle), "%llu", (unsigned long long)s->idle_ms);
	snprintf(wall, sizeof(wall), "%lld",
	         (long long)mgw_session_store_wall_s(view->store));
	args[0] = idle;
	lens[0] = strlen(idle);
	args[1] = wall;
	lens[1] = strlen(wall);
	bump(&s->base.cnt.cache_misses);
	if (send_eval(o, fetch_script, 2, args, lens, on_fetch_reply) != 0)
		lookup_fallback(o);
	return 0;
}

/* -- update -- */

/* Redis could not be asked: apply the update to the cached copy only,
 * marked stale so that Redis' record wins once it is back. */
static void update_local(struct rop *o)
{
	struct redis_store *s = rs_of(o->v->base.store);
	struct mgw_session *rec = o->rec, *current = NULL;
	int rc;

	rec->cached_ms = 0;
	rc = mgw_session_table_replace(s->cache, o->id, o->idlen, rec,
	                               o->expect, now_ms(s), &current);
	if (rc == 0) {
		/* The cache took o->rec's reference; the caller gets one. */
		o->rec = NULL;
		bump(&s->base.cnt.errors);
		bump(&s->local_updates);
		finish(o, 0, mgw_session_ref(rec));
		return;
	}
	if (rc == MGW_ECONFLICT) {
		bump(&s->base.cnt.errors);
		finish(o, MGW_ECONFLICT, current);
		return;
	}
	mgw_session_unref(current);
	/* Not cached here either: nothing to update (the generic layer
	 * counts the error). */
	finish(o, MGW_EIO, NULL);
}

static void on_cas_reply(void *arg, int status, redisReply *rep)
{
	struct rop *o = arg;
	struct redis_store *s = rs_of(o->v->base.store);
	struct mgw_session *rec;

	if (status != 0 || rep->type == REDIS_REPLY_ERROR) {
		note_failure(s, status, rep);
		update_local(o);
		return;
	}
	if (rep->type == REDIS_REPLY_NIL) {
		int rc = try_restore(o, o->rec, o->expect + 1);

		if (rc == 0)
			return;
		if (rc == MGW_EIO) {    /* gone meanwhile: kept locally */
			update_local(o);
			return;
		}
	}
	if (rep->type == REDIS_REPLY_NIL ||
	    (rep->type == REDIS_REPLY_INTEGER && rep->integer == 0)) {
		answer_gone(o, rep);
		return;
	}
	if (rep->type == REDIS_REPLY_INTEGER) {
		rec = o->rec;
		o->rec = NULL;
		rec->version = o->expect + 1;
		rec->cached_ms = now_ms(s);
		cache_fill(s, rec);
		finish(o, 0, rec);
		return;
	}
	/* Someone else updated first: the caller adopts theirs. */
	rec = adopt_record(o, rep);
	if (rec)
		finish(o, MGW_ECONFLICT, rec);
}

static int rs_update(struct mgw_session_view *view, struct mgw_session *rec,
                     uint64_t expect_version, struct mgw_session_op *op)
{
	struct redis_view *v = (struct redis_view *)view;
	struct redis_store *s = rs_of(view->store);
	char ev[24], nv[24], idle[24], wall[24];
	const char *args[5];
	size_t lens[5];
	struct rop *o;

	if (!id_minted_here(rec->id, rec->id_len) ||
	    rec->init_len > s->base.max_init) {
		int rc = rec->init_len > s->base.max_init ? MGW_ELIMIT
		                                          : MGW_ENOTFOUND;

		mgw_session_unref(rec);
		mgw_session_op_complete(op, rc, NULL);
		return 0;
	}
	o = rop_new(v, op, rec->id, rec->id_len);
	if (!o) {
		mgw_session_unref(rec);
		return MGW_ENOMEM;
	}
	o->rec = rec;
	o->expect = expect_version;
	if (!conn_usable(v)) {
		update_local(o);
		return 0;
	}
	o->blob = mgw_record_encode(rec, LAYOUT, &o->bloblen);
	if (!o->blob) {
		op->impl = NULL;
		mgw_session_unref(o->rec);
		free(o);
		return MGW_ENOMEM;
	}
	snprintf(ev, sizeof(ev), "%llu", (unsigned long long)expect_version);
	snprintf(nv, sizeof(nv), "%llu", (unsigned long long)expect_version + 1);
	snprintf(idle, sizeof(idle), "%llu", (unsigned long long)s->idle_ms);
	snprintf(wall, sizeof(wall), "%lld",
	         (long long)mgw_session_store_wall_s(view->store));
	args[0] = ev;
	lens[0] = strlen(ev);
	args[1] = nv;
	lens[1] = strlen(nv);
	args[2] = (const char *)o->blob;
	lens[2] = o->bloblen;
	args[3] = idle;
	lens[3] = strlen(idle);
	args[4] = wall;
	lens[4] = strlen(wall);
	if (send_eval(o, cas_script, 5, args, lens, on_cas_reply) != 0)
		update_local(o);
	return 0;
}

/* -- remove -- */

static void on_del_reply(void *arg, int status, redisReply *rep)
{
	struct rop *o = arg;
	struct redis_store *s = rs_of(o->v->base.store);

	if (status != 0 || rep->type != REDIS_REPLY_INTEGER) {
		note_failure(s, status, rep);
		finish(o, MGW_EIO, NULL);
		return;
	}
	/* a tombstone, not a removal: a fetch reply already on its way
	 * must not put the deleted session back (it idles out) */
	if (mgw_session_table_put(s->cache, o->id, o->idlen, NULL,
	                          now_ms(s)) != 0)
		mgw_session_table_remove(s->cache, o->id, o->idlen);
	finish(o, rep->integer > 0 ? 0 : MGW_ENOTFOUND, NULL);
}

static int rs_remove(struct mgw_session_view *view, const char *id,
                     size_t len, struct mgw_session_op *op)
{
	struct redis_view *v = (struct redis_view *)view;
	struct redis_store *s = rs_of(view->store);
	struct mgw_session *cached = NULL;
	char tk[TOMB_KEY_MAX], px[24];
	const char *keys[2], *args[1];
	size_t keyl[2], lens[1];
	uint64_t t = 0;
	struct rop *o;

	if (!id_minted_here(id, len)) {
		mgw_session_op_complete(op, MGW_ENOTFOUND, NULL);
		return 0;
	}
	if (!conn_usable(v)) {
		mgw_session_op_complete(op, MGW_EIO, NULL);
		return 0;
	}
	o = rop_new(v, op, id, len);
	if (!o)
		return MGW_ENOMEM;
	/* the tombstone lasts as long as a gateway may still hold the
	 * session in its cache (idle_timeout), never past its lifetime */
	if (mgw_session_table_get(s->cache, id, len, now_ms(s), &cached) == 0) {
		t = ttl_ms(s, cached);
		mgw_session_unref(cached);
	}
	if (t == 0)
		t = s->idle_ms;
	keys[0] = o->key;
	keyl[0] = o->keylen;
	keys[1] = tk;
	keyl[1] = tomb_key(s, id, len, tk);
	args[0] = px;
	lens[0] = (size_t)snprintf(px, sizeof(px), "%llu", (unsigned long long)t);
	if (eval_on(s, v->conn, delete_script, 2, keys, keyl, 1, args, lens,
	            on_del_reply, o) != 0)
		finish(o, MGW_EIO, NULL);
	return 0;
}

/* ---- write-back after the server lost its data ----
 *
 * Each gateway keeps a marker key of its own, <prefix>gw:<instance>, set
 * by its first check and refreshed by every check (each view, once a
 * second and at once on every reconnect).  A marker found missing after
 * that means the server lost what this gateway wrote: restarted without
 * persistence, flushed, or failed over to a replica that never had it.
 * The view that sees it writes back everything the local cache holds --
 * sessions with the restore script (which never overwrites a record and
 * never brings back a deleted session) and the local tombstones of
 * DELETEs made here -- at writeback_rate, a batch per tick from its loop,
 * so requests are never held up; one write-back at a time per gateway.
 * Lookups and updates that meet a missing key restore their record the
 * same way (on_restore_reply), so a session is never answered 404 while
 * a write-back is still on its way to it. */

struct wb_collect {
	struct wb_item *items;
	size_t n, cap;
	size_t sessions, tombstones;
};

/* Under the cache's lock: takes an entry of a minted id. */
static int wb_collect_one(const void *key, size_t keylen,
                          struct mgw_session *rec, void *arg)
{
	struct wb_collect *c = arg;
	struct wb_item *it;

	if (keylen != ID_LEN || c->n == c->cap)
		return c->n == c->cap;
	it = &c->items[c->n++];
	it->rec = rec ? mgw_session_ref(rec) : NULL;
	it->idlen = keylen;
	memcpy(it->id, key, keylen);
	it->id[keylen] = '\0';
	if (rec)
		c->sessions++;
	else
		c->tombstones++;
	return 0;
}

static void wb_items_free(struct wb_job *j)
{
	for (size_t i = j->next; i < j->n; i++)
		mgw_session_unref(j->items[i].rec);
	free(j->items);
	j->items = NULL;
	j->n = j->next = 0;
}

/* A snapshot of the cache into j; 0 or MGW_ENOMEM. */
static int wb_snapshot(struct redis_store *s, struct wb_job *j)
{
	struct mgw_session_table_stats ts;
	struct wb_collect c = {0};

	mgw_session_table_stats(s->cache, &ts);
	c.cap = ts.count + 64;  /* room for entries added meanwhile */
	c.items = calloc(c.cap, sizeof(*c.items));
	if (!c.items)
		return MGW_ENOMEM;
	mgw_session_table_each(s->cache, now_ms(s), wb_collect_one, &c);
	wb_items_free(j);
	j->items = c.items;
	j->n = c.n;
	j->next = 0;
	j->sessions = c.sessions;
	j->tombstones = c.tombstones;
	return 0;
}

static void wb_job_free(struct wb_job *j)
{
	if (!j)
		return;
	wb_items_free(j);
	if (j->tick)
		event_free(j->tick);
	free(j);
}

/* Everything sent and answered: the event, and the view is free for the
 * next one. */
static void wb_done(struct wb_job *j)
{
	struct redis_view *v = j->v;
	struct redis_store *s = rs_of(v->base.store);

	mgw_event(NULL, "store_writeback",
	          "store=redis url=%s phase=done restored=%llu present=%llu "
	          "deleted=%llu failed=%llu took_s=%.1f", s->display,
	          (unsigned long long)j->restored,
	          (unsigned long long)j->present,
	          (unsigned long long)j->deleted,
	          (unsigned long long)j->failed,
	          (double)(now_ms(s) - j->t0) / 1000.0);
	v->wb = NULL;
	wb_job_free(j);
	atomic_store(&s->wb_running, 0);
}

static void on_wb_reply(void *arg, int status, redisReply *rep)
{
	struct wb_cmd *c = arg;
	struct wb_job *j = c->job;
	struct redis_store *s;

	j->inflight--;
	if (!j->v) {            /* the view is going: nothing to count */
		free(c);
		return;
	}
	s = rs_of(j->v->base.store);
	if (status != 0 || rep->type == REDIS_REPLY_ERROR) {
		note_failure(s, status, rep);
		j->failed++;
		bump(&s->wb_failed);
	} else if (c->tomb || (rep->type == REDIS_REPLY_INTEGER &&
	                       rep->integer == 0)) {
		/* a tombstone written back, or the session found deleted
		 * elsewhere: no longer served from this cache */
		j->deleted++;
		bump(&s->wb_deleted);
		if (!c->tomb &&
		    mgw_session_table_put(s->cache, c->id, c->idlen, NULL,
		                          now_ms(s)) != 0)
			mgw_session_table_remove(s->cache, c->id, c->idlen);
	} else if (rep->type == REDIS_REPLY_INTEGER) {
		j->restored++;
		bump(&s->restored_wb);
	} else {
		j->present++;
		bump(&s->wb_present);
	}
	free(c);
	if (j->next == j->n && j->inflight == 0)
		wb_done(j);
}

/* Sends item it; 0, or nonzero when the connection refused it (kept for
 * the next tick).  An item with nothing to write is consumed as sent. */
static int wb_send(struct wb_job *j, struct wb_item *it)
{
	struct redis_view *v = j->v;
	struct redis_store *s = rs_of(v->base.store);
	struct wb_cmd *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return MGW_ENOMEM;
	c->job = j;
	c->tomb = it->rec == NULL;
	c->idlen = it->idlen;
	memcpy(c->id, it->id, it->idlen + 1);
	if (it->rec) {
		rc = restore_send(s, v->conn, it->id, it->idlen, it->rec,
		                  it->rec->version, on_wb_reply, c);
	} else {
		char key[KEY_MAX], tk[TOMB_KEY_MAX], px[24];
		const char *keys[2] = {key, tk}, *args[1] = {px};
		size_t keyl[2], lens[1], pl = strlen(s->rc->key_prefix);

		memcpy(key, s->rc->key_prefix, pl);
		memcpy(key + pl, it->id, it->idlen);
		keyl[0] = pl + it->idlen;
		key[keyl[0]] = '\0';
		keyl[1] = tomb_key(s, it->id, it->idlen, tk);
		lens[0] = (size_t)snprintf(px, sizeof(px), "%llu",
		                           (unsigned long long)s->idle_ms);
		rc = eval_on(s, v->conn, delete_script, 2, keys, keyl, 1, args,
		             lens, on_wb_reply, c);
	}
	if (rc == MGW_ENOTFOUND) {      /* past its lifetime: skipped */
		free(c);
		return 0;
	}
	if (rc != 0) {
		free(c);
		return rc;
	}
	j->inflight++;
	return 0;
}

static void on_wb_tick(evutil_socket_t fd, short what, void *arg)
{
	struct wb_job *j = arg;
	struct redis_view *v = j->v;
	struct redis_store *s = rs_of(v->base.store);
	double per_tick = (double)s->rc->writeback_rate * WB_TICK;

	(void)fd;
	(void)what;
	j->credit += per_tick;
	if (j->credit > per_tick + 1)
		j->credit = per_tick + 1;
	while (j->next < j->n && j->inflight < WB_INFLIGHT && j->credit >= 1 &&
	       conn_usable(v)) {
		struct wb_item *it = &j->items[j->next];

		if (wb_send(j, it) != 0)
			break;          /* connection gone: next tick */
		mgw_session_unref(it->rec);
		it->rec = NULL;
		j->next++;
		j->credit -= 1;
	}
	if (j->next == j->n && j->inflight == 0)
		wb_done(j);
}

/* The server lost this gateway's data: write back what the cache holds. */
static void writeback_start(struct redis_view *v)
{
	struct redis_store *s = rs_of(v->base.store);
	struct timeval tv = mgw_tv(WB_TICK);
	struct wb_job *j = v->wb;

	bump(&s->writebacks);
	if (!j && atomic_exchange(&s->wb_running, 1)) {
		/* another worker writes back the same cache already */
		return;
	}
	if (!j) {
		j = calloc(1, sizeof(*j));
		if (j)
			j->tick = event_new(v->base.base, -1, EV_PERSIST,
			                    on_wb_tick, j);
		if (!j || !j->tick) {
			free(j);
			atomic_store(&s->wb_running, 0);
			mgw_warn(NULL, "sessions: redis %s lost its data, and "
			         "there is no memory to write the sessions back",
			         s->display);
			return;
		}
		j->v = v;
		v->wb = j;
		event_add(j->tick, &tv);
	}
	j->t0 = now_ms(s);
	if (wb_snapshot(s, j) != 0)
		mgw_warn(NULL, "sessions: redis %s lost its data; no memory for "
		         "the list of sessions to write back", s->display);
	mgw_event(NULL, "store_writeback",
	          "store=redis url=%s phase=start sessions=%zu tombstones=%zu "
	          "rate=%u", s->display, j->sessions, j->tombstones,
	          (unsigned)s->rc->writeback_rate);
}

/* SET marker 1 PX ttl GET: the old value, nil when the marker was
 * missing (Redis 6.2 or later; an older server answers an error, counted,
 * and nothing is detected). */
static void on_marker_reply(void *arg, int status, redisReply *rep)
{
	struct redis_view *v = arg;
	struct redis_store *s = rs_of(v->base.store);

	v->checking = 0;
	if (status != 0 || (rep->type != REDIS_REPLY_NIL &&
	                    rep->type != REDIS_REPLY_STRING)) {
		note_failure(s, status, rep);
		return;
	}
	if (rep->type == REDIS_REPLY_STRING) {
		atomic_store(&s->marker_known, 1);
		return;
	}
	if (!v->check_known) {          /* the first check set it */
		atomic_store(&s->marker_known, 1);
		return;
	}
	writeback_start(v);
}

static void on_check(evutil_socket_t fd, short what, void *arg)
{
	struct redis_view *v = arg;
	struct redis_store *s = rs_of(v->base.store);
	char ttl[24];
	const char *argv[6] = {"SET", s->marker, "1", "PX", ttl, "GET"};
	size_t argl[6] = {3, strlen(s->marker), 1, 2, 0, 3};

	(void)fd;
	(void)what;
	if (v->checking || mgw_redis_state(v->conn) != MGW_REDIS_UP)
		return;
	argl[4] = (size_t)snprintf(ttl, sizeof(ttl), "%u", MARKER_TTL_MS);
	v->check_known = atomic_load(&s->marker_known);
	/* not counted in round_trips: those are the sessions' */
	if (mgw_redis_command_argv(v->conn, 6, argv, argl, on_marker_reply,
	                           v) == 0)
		v->checking = 1;
}

/* ---- views, sweep, stats, lifetime ---- */

static struct mgw_session_view *rs_view_new(struct mgw_session_store *st,
                                            struct event_base *base,
                                            char *err, size_t errlen)
{
	struct redis_store *s = rs_of(st);
	struct redis_view *v = calloc(1, sizeof(*v));
	struct mgw_redis_opts o = {
		.url = s->rc->url,
		.tls = &s->rc->tls,
		.timeout = s->rc->timeout,
		.backoff_min = BACKOFF_MIN,
		.backoff_max = BACKOFF_MAX,
		.on_state = on_conn_state,
		.sentinels = (const char *const *)s->rc->sentinels,
		.n_sentinels = s->rc->n_sentinels,
		.master_name = s->rc->master_name,
	};
	double every = (double)s->fresh_ms / 2000.0;
	struct timeval check = mgw_tv(every > 0.1 && every < CHECK_INTERVAL
	                              ? every : every <= 0.1 ? 0.1
	                              : CHECK_INTERVAL);

	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	mgw_session_view_init(&v->base, st, base);
	o.state_arg = v;
	v->check_ev = event_new(base, -1, EV_PERSIST, on_check, v);
	if (!v->check_ev || event_add(v->check_ev, &check) != 0) {
		if (v->check_ev)
			event_free(v->check_ev);
		free(v);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	v->conn = mgw_redis_new(base, &o, err, errlen);
	if (!v->conn) {
		event_free(v->check_ev);
		free(v);
		return NULL;
	}
	if (mgw_redis_state(v->conn) == MGW_REDIS_DOWN)
		view_set_down(v, 1, "cannot connect", 0);
	return &v->base;
}

static void rs_view_free(struct mgw_session_view *view)
{
	struct redis_view *v = (struct redis_view *)view;

	struct wb_job *j = v->wb;

	if (j) {
		j->v = NULL;    /* its commands' answers count nothing now */
		event_del(j->tick);
		atomic_store(&rs_of(view->store)->wb_running, 0);
	}
	/* Commands still out are answered MGW_EIO from inside, completing
	 * their ops (cancelled ones are freed then) while v is valid. */
	mgw_redis_free(v->conn);
	wb_job_free(j);         /* every answer came in mgw_redis_free */
	if (v->check_ev)
		event_free(v->check_ev);
	view_set_down(v, 0, NULL, 1);
	free(v);
}

static size_t rs_sweep(struct mgw_session_store *st, size_t max)
{
	return mgw_session_table_sweep(rs_of(st)->cache,
	                               mgw_session_store_mono_ms(st), max);
}

#define LOAD(x) atomic_load_explicit(&s->x, memory_order_relaxed)

static void rs_stats(struct mgw_session_store *st,
                     struct mgw_session_stats *out)
{
	struct redis_store *s = rs_of(st);
	struct mgw_session_table_stats ts;
	uint64_t now = now_ms(s);

	mgw_session_table_stats(s->cache, &ts);
	out->active = ts.count;
	out->memory_bytes = ts.bytes;
	out->evicted += ts.evicted;
	pthread_mutex_lock(&s->lock);
	out->unreachable = s->views_down > 0;
	out->outages = s->outages;
	out->outage_ms = s->outage_ms +
	                 (s->views_down > 0 ? now - s->down_since : 0);
	pthread_mutex_unlock(&s->lock);
	out->stale_hits = LOAD(stale_hits);
	out->local_updates = LOAD(local_updates);
	out->round_trips = LOAD(round_trips);
	out->writebacks = LOAD(writebacks);
	out->restored_writeback = LOAD(restored_wb);
	out->restored_lookup = LOAD(restored_lookup);
}

#undef LOAD

static void rs_destroy(struct mgw_session_store *st)
{
	struct redis_store *s = rs_of(st);

	mgw_session_store_deinit(st);
	mgw_session_table_free(s->cache);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static const struct mgw_session_store_ops redis_ops = {
	.name = "redis",
	.view_new = rs_view_new,
	.view_free = rs_view_free,
	.create = rs_create,
	.lookup = rs_lookup,
	.update = rs_update,
	.remove = rs_remove,
	.sweep = rs_sweep,
	.stats = rs_stats,
	.destroy = rs_destroy,
};

struct mgw_session_store *mgw_redis_store_new(
	const struct mgw_sessions_conf *conf, const struct mgw_session_env *env,
	char *err, size_t errlen)
{
	const struct mgw_session_redis_conf *rc = &conf->redis;
	struct redis_store *s;
	struct mgw_session_table_limits lim = {
		.max_count = rc->cache_size,
		.max_bytes = conf->max_memory,
		.idle_ms = (uint64_t)(conf->idle_timeout * 1000.0),
		.evict = 1,
	};
	uint64_t cache_ttl_ms = (uint64_t)(rc->cache_ttl * 1000.0);
	char display[300], instance[17];

	if (!rc->url || !rc->key_prefix || strlen(rc->key_prefix) > 128 ||
	    !rc->key_prefix[0]) {
		snprintf(err, errlen, "sessions.redis: url and a key_prefix of "
		         "1 to 128 characters are required");
		return NULL;
	}
	if (mgw_redis_url_check(rc->url, display, sizeof(display), err,
	                        errlen) != 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		snprintf(err, errlen, "cannot make a mutex");
		free(s);
		return NULL;
	}
	s->rc = rc;
	s->idle_ms = lim.idle_ms >= 1000 ? lim.idle_ms : 1000;
	s->fresh_ms = cache_ttl_ms < s->idle_ms / 2 ? cache_ttl_ms
	                                            : s->idle_ms / 2;
	memcpy(s->display, display, sizeof(s->display));
	if (rc->master_name)
		snprintf(s->display, sizeof(s->display), "sentinel:%.200s",
		         rc->master_name);
	if (mgw_random_hex(instance, 8) != 0) {
		snprintf(err, errlen, "no random bytes for the gateway's marker");
		goto fail;
	}
	snprintf(s->marker, sizeof(s->marker), "%s" MARKER_TAG "%s",
	         rc->key_prefix, instance);
	s->cache = mgw_session_table_new(&lim, err, errlen);
	if (!s->cache)
		goto fail;
	if (mgw_session_store_init(&s->base, &redis_ops, conf, env) != 0) {
		snprintf(err, errlen, "cannot set up the session sweep timer");
		goto fail;
	}
	s->base.max_id = ID_LEN;
	s->base.max_init = conf->max_initialize_bytes;
	return &s->base;
fail:
	mgw_session_table_free(s->cache);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return NULL;
}

static struct mgw_session_store *create_from_conf(
	const struct mgw_sessions_conf *conf, const struct mgw_session_env *env,
	char *err, size_t errlen)
{
	return mgw_redis_store_new(conf, env, err, errlen);
}

static const struct mgw_session_store_type redis_type = {
	.name = "redis",
	.create = create_from_conf,
};

int mgw_redis_store_register(void)
{
	return mgw_session_store_register(&redis_type);
}
