/* state_redis.c - the "redis" handle design: a handle names a key in a
 * shared Redis, so every replica sees the same counter.  hiredis runs
 * asynchronously on the server's event loop (libevent adapter); a lost
 * connection is re-established with exponential backoff while operations
 * fail fast with MGW_EIO ("state store unavailable"). */
#include "autoconf.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/dns.h>
#include <event2/util.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/hiredis.h>

#include "backend/state.h"
#include "core/errors.h"
#include "core/log.h"
#include "util/parse.h"
#include "util/rand.h"
#include "util/time.h"

#define KEY_PREFIX "mcpgw:ctr:"
#define HANDLE_PREFIX "r_"
#define HANDLE_HEX 32
#define BACKOFF_MIN 0.1
#define BACKOFF_MAX 2.0
#define OP_TIMEOUT 2.0

/* Increment only an existing key, so a forgotten or foreign handle is an
 * "unknown handle" instead of a counter silently restarting at 1. */
static const char incr_script[] =
	"if redis.call('EXISTS', KEYS[1]) == 1 then "
	"local v = redis.call('INCR', KEYS[1]) "
	"redis.call('EXPIRE', KEYS[1], ARGV[1]) "
	"return v else return false end";

struct redis_store {
	struct mgw_be_store base;
	struct event_base *evb;
	struct evdns_base *dns;      /* only for non-numeric host names */
	struct evdns_getaddrinfo_request *resolving;
	char host[256];
	char addr[INET6_ADDRSTRLEN]; /* resolved host */
	uint16_t port;
	char *password;
	char *unix_path;             /* "unix:PATH" URLs */
	int db;
	char display[300];           /* URL without the password, for logs */
	redisAsyncContext *ac;       /* NULL while disconnected */
	int connected;
	struct event *retry;
	double backoff;
	int64_t ttl_s;
	int freeing;
	uint64_t connects, failures, errors, timeouts;
};

struct op {
	struct redis_store *r;
	mgw_be_store_cb cb;
	void *arg;
	struct event *timer;
	int answered;
	char handle[sizeof(HANDLE_PREFIX) + HANDLE_HEX];
};

static void connect_now(struct redis_store *r);

static void schedule_reconnect(struct redis_store *r)
{
	struct timeval tv;

	if (r->freeing)
		return;
	tv = mgw_tv(r->backoff);
	evtimer_add(r->retry, &tv);
	r->backoff *= 2;
	if (r->backoff > BACKOFF_MAX)
		r->backoff = BACKOFF_MAX;
}

static void on_connect(const redisAsyncContext *ac, int status)
{
	struct redis_store *r = ac->data;

	if (status != REDIS_OK) {
		/* hiredis frees the context after this callback. */
		if (r->failures++ == 0 || r->failures % 50 == 0)
			mgw_warn(NULL, "redis %s: connect failed: %s (retrying)",
			         r->display, ac->errstr);
		r->ac = NULL;
		r->connected = 0;
		schedule_reconnect(r);
		return;
	}
	r->connected = 1;
	r->connects++;
	r->backoff = BACKOFF_MIN;
	mgw_info(NULL, "redis %s: connected", r->display);
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
	struct redis_store *r = ac->data;

	r->ac = NULL;
	r->connected = 0;
	if (r->freeing)
		return;
	mgw_warn(NULL, "redis %s: connection lost%s%s (reconnecting)",
	         r->display, status == REDIS_OK ? "" : ": ",
	         status == REDIS_OK ? "" : ac->errstr);
	schedule_reconnect(r);
}

static void on_setup_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	struct redis_store *r = ac->data;
	redisReply *rep = reply;

	(void)priv;
	if (rep && rep->type == REDIS_REPLY_ERROR) {
		r->errors++;
		mgw_err(NULL, "redis %s: setup command failed: %s", r->display,
		        rep->str);
	}
}

static void start_context(struct redis_store *r, const char *ip)
{
	redisAsyncContext *ac = r->unix_path ? redisAsyncConnectUnix(r->unix_path)
	                                     : redisAsyncConnect(ip, r->port);

	if (!ac) {
		schedule_reconnect(r);
		return;
	}
	if (ac->err) {
		if (r->failures++ == 0)
			mgw_warn(NULL, "redis %s: %s (retrying)", r->display,
			         ac->errstr);
		redisAsyncFree(ac);
		schedule_reconnect(r);
		return;
	}
	ac->data = r;
	if (redisLibeventAttach(ac, r->evb) != REDIS_OK) {
		redisAsyncFree(ac);
		schedule_reconnect(r);
		return;
	}
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	r->ac = ac;
	/* Queued before the connection completes; hiredis sends them first. */
	if (r->password)
		redisAsyncCommand(ac, on_setup_reply, NULL, "AUTH %s", r->password);
	if (r->db)
		redisAsyncCommand(ac, on_setup_reply, NULL, "SELECT %d", r->db);
}

static void on_resolved(int result, struct evutil_addrinfo *res, void *arg)
{
	struct redis_store *r = arg;
	char ip[INET6_ADDRSTRLEN] = "";

	r->resolving = NULL;
	if (result == 0 && res) {
		if (res->ai_family == AF_INET)
			inet_ntop(AF_INET,
			          &((struct sockaddr_in *)res->ai_addr)->sin_addr,
			          ip, sizeof(ip));
		else if (res->ai_family == AF_INET6)
			inet_ntop(AF_INET6,
			          &((struct sockaddr_in6 *)res->ai_addr)->sin6_addr,
			          ip, sizeof(ip));
	}
	if (res)
		evutil_freeaddrinfo(res);
	if (result == EVUTIL_EAI_CANCEL || r->freeing)
		return;
	if (!ip[0]) {
		if (r->failures++ == 0 || r->failures % 50 == 0)
			mgw_warn(NULL, "redis %s: cannot resolve %s: %s (retrying)",
			         r->display, r->host, evutil_gai_strerror(result));
		schedule_reconnect(r);
		return;
	}
	snprintf(r->addr, sizeof(r->addr), "%s", ip);
	start_context(r, r->addr);
}

/* hiredis resolves names with a blocking getaddrinfo; names therefore go
 * through evdns first and hiredis only ever sees a numeric address. */
static void connect_now(struct redis_store *r)
{
	struct evutil_addrinfo hints;

	if (r->ac || r->resolving || r->freeing)
		return;
	if (r->unix_path || r->addr[0]) {
		start_context(r, r->addr);
		return;
	}
	if (!r->dns) {
		r->dns = evdns_base_new(r->evb, EVDNS_BASE_INITIALIZE_NAMESERVERS);
		if (!r->dns) {
			mgw_err(NULL, "redis %s: cannot initialize DNS", r->display);
			schedule_reconnect(r);
			return;
		}
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	r->resolving = evdns_getaddrinfo(r->dns, r->host, NULL, &hints,
	                                 on_resolved, r);
}

static int host_is_numeric(const char *h)
{
	unsigned char tmp[16];

	return evutil_inet_pton(AF_INET, h, tmp) == 1 ||
	       evutil_inet_pton(AF_INET6, h, tmp) == 1;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	struct redis_store *r = arg;

	(void)fd;
	(void)what;
	/* A name is looked up again on every attempt: the server may have
	 * moved (a restarted container gets a new address). */
	if (!host_is_numeric(r->host))
		r->addr[0] = '\0';
	connect_now(r);
}

/* ---- operations ------------------------------------------------------ */

static void op_answer(struct op *o, int err, int64_t value, const char *handle)
{
	if (o->answered)
		return;
	o->answered = 1;
	o->cb(err, value, handle, o->arg);
}

/* hiredis calls this exactly once per command: with the reply, or with
 * NULL when the connection is torn down.  That makes it the one place an
 * op is freed; the timeout only answers early. */
static void on_create_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	struct op *o = priv;
	redisReply *rep = reply;

	(void)ac;
	if (!rep) {
		op_answer(o, MGW_EIO, 0, NULL);
	} else if (rep->type == REDIS_REPLY_STATUS) {
		op_answer(o, 0, 0, o->handle);
	} else {
		if (rep->type == REDIS_REPLY_ERROR) {
			o->r->errors++;
			mgw_warn(NULL, "redis %s: SET failed: %s", o->r->display,
			         rep->str);
		}
		op_answer(o, MGW_EIO, 0, NULL);
	}
	event_free(o->timer);
	free(o);
}

static void on_incr_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	struct op *o = priv;
	redisReply *rep = reply;

	(void)ac;
	if (!rep) {
		op_answer(o, MGW_EIO, 0, NULL);
	} else if (rep->type == REDIS_REPLY_INTEGER) {
		op_answer(o, 0, (int64_t)rep->integer, NULL);
	} else if (rep->type == REDIS_REPLY_NIL) {
		op_answer(o, MGW_ENOTFOUND, 0, NULL);
	} else {
		if (rep->type == REDIS_REPLY_ERROR) {
			o->r->errors++;
			mgw_warn(NULL, "redis %s: EVAL failed: %s", o->r->display,
			         rep->str);
		}
		op_answer(o, MGW_EIO, 0, NULL);
	}
	event_free(o->timer);
	free(o);
}

static void on_op_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct op *o = arg;
	struct redis_store *r = o->r;

	(void)fd;
	(void)what;
	r->timeouts++;
	op_answer(o, MGW_EIO, 0, NULL);
	/* A server that stops answering is treated like a dead one: drop the
	 * connection and reconnect.  redisAsyncFree (not Disconnect, which
	 * waits for pending replies) answers pending ops with NULL replies,
	 * which frees o: nothing below may touch it. */
	if (r->ac) {
		mgw_warn(NULL, "redis %s: no answer within %.1fs, reconnecting",
		         r->display, OP_TIMEOUT);
		redisAsyncFree(r->ac);
	}
}

static struct op *op_new(struct redis_store *r, mgw_be_store_cb cb, void *arg)
{
	struct op *o = calloc(1, sizeof(*o));
	struct timeval tv = mgw_tv(OP_TIMEOUT);

	if (!o)
		return NULL;
	o->r = r;
	o->cb = cb;
	o->arg = arg;
	o->timer = evtimer_new(r->evb, on_op_timeout, o);
	if (!o->timer) {
		free(o);
		return NULL;
	}
	evtimer_add(o->timer, &tv);
	return o;
}

static void redis_create(struct mgw_be_store *s, mgw_be_store_cb cb, void *arg)
{
	struct redis_store *r = (struct redis_store *)s;
	struct op *o;

	if (!r->ac || !r->connected) {
		cb(MGW_EIO, 0, NULL, arg);
		return;
	}
	o = op_new(r, cb, arg);
	if (!o) {
		cb(MGW_ENOMEM, 0, NULL, arg);
		return;
	}
	memcpy(o->handle, HANDLE_PREFIX, sizeof(HANDLE_PREFIX) - 1);
	if (mgw_random_hex(o->handle + sizeof(HANDLE_PREFIX) - 1, HANDLE_HEX / 2) != 0) {
		event_free(o->timer);
		free(o);
		cb(MGW_EIO, 0, NULL, arg);
		return;
	}
	if (redisAsyncCommand(r->ac, on_create_reply, o, "SET " KEY_PREFIX "%s 0 EX %lld NX",
	                      o->handle, (long long)r->ttl_s) != REDIS_OK) {
		event_free(o->timer);
		free(o);
		cb(MGW_EIO, 0, NULL, arg);
	}
}

/* Only handles this design minted can name a key: anything else is
 * unknown without a round trip, and never reaches Redis as a key. */
static int handle_valid(const char *h)
{
	size_t pl = sizeof(HANDLE_PREFIX) - 1;

	if (strncmp(h, HANDLE_PREFIX, pl) != 0 || strlen(h) != pl + HANDLE_HEX)
		return 0;
	for (h += pl; *h; h++)
		if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
			return 0;
	return 1;
}

static void redis_increment(struct mgw_be_store *s, const char *handle,
                            mgw_be_store_cb cb, void *arg)
{
	struct redis_store *r = (struct redis_store *)s;
	struct op *o;

	if (!handle_valid(handle)) {
		cb(MGW_ENOTFOUND, 0, NULL, arg);
		return;
	}
	if (!r->ac || !r->connected) {
		cb(MGW_EIO, 0, NULL, arg);
		return;
	}
	o = op_new(r, cb, arg);
	if (!o) {
		cb(MGW_ENOMEM, 0, NULL, arg);
		return;
	}
	if (redisAsyncCommand(r->ac, on_incr_reply, o, "EVAL %s 1 " KEY_PREFIX "%s %lld",
	                      incr_script, handle, (long long)r->ttl_s) != REDIS_OK) {
		event_free(o->timer);
		free(o);
		cb(MGW_EIO, 0, NULL, arg);
	}
}

static void redis_describe(const struct mgw_be_store *s, json_t *obj)
{
	const struct redis_store *r = (const struct redis_store *)s;

	json_object_set_new(obj, "redis", json_string(r->display));
	json_object_set_new(obj, "connected", json_boolean(r->connected));
	json_object_set_new(obj, "connects", json_integer((json_int_t)r->connects));
	json_object_set_new(obj, "connect_failures", json_integer((json_int_t)r->failures));
	json_object_set_new(obj, "errors", json_integer((json_int_t)r->errors));
	json_object_set_new(obj, "timeouts", json_integer((json_int_t)r->timeouts));
}

static void redis_free(struct mgw_be_store *s)
{
	struct redis_store *r = (struct redis_store *)s;

	if (!r)
		return;
	r->freeing = 1;
	if (r->resolving)
		evdns_getaddrinfo_cancel(r->resolving);
	if (r->ac)
		redisAsyncFree(r->ac); /* pending ops are answered MGW_EIO */
	r->ac = NULL;
	if (r->dns)
		evdns_base_free(r->dns, 0);
	if (r->retry)
		event_free(r->retry);
	free(r->password);
	free(r->unix_path);
	free(r);
}

static const struct mgw_be_store_ops redis_ops = {
	.name = "redis",
	.create = redis_create,
	.increment = redis_increment,
	.describe = redis_describe,
	.free = redis_free,
};

/* Splits "redis://[:PASSWORD@]HOST[:PORT][/DB]" or takes "unix:PATH". */
static int parse_url(struct redis_store *r, const char *url, char *err,
                     size_t errlen)
{
	const char *p, *at, *slash;
	char hostport[300];
	size_t n;
	long long db = 0;

	if (strncmp(url, "unix:", 5) == 0 && url[5]) {
		r->unix_path = strdup(url + 5);
		snprintf(r->display, sizeof(r->display), "%.290s", url);
		return r->unix_path ? 0 : MGW_ENOMEM;
	}
	if (strncmp(url, "redis://", 8) != 0) {
		snprintf(err, errlen,
		         "redis URL must be redis://HOST[:PORT][/DB] or unix:PATH: %s",
		         url);
		return MGW_EINVAL;
	}
	p = url + 8;
	slash = strchr(p, '/');
	at = strchr(p, '@');
	if (at && (!slash || at < slash)) {
		const char *pw = memchr(p, ':', (size_t)(at - p));
		pw = pw ? pw + 1 : p;
		r->password = strndup(pw, (size_t)(at - pw));
		if (!r->password)
			return MGW_ENOMEM;
		p = at + 1;
	}
	n = slash ? (size_t)(slash - p) : strlen(p);
	if (n == 0 || n >= sizeof(hostport)) {
		snprintf(err, errlen, "redis URL has no host: %s", url);
		return MGW_EINVAL;
	}
	memcpy(hostport, p, n);
	hostport[n] = '\0';
	if (slash && slash[1] &&
	    mgw_parse_int(slash + 1, 0, 1 << 20, &db) != 0) {
		snprintf(err, errlen, "redis URL has a bad database number: %s", url);
		return MGW_EINVAL;
	}
	r->db = (int)db;
	/* A port is optional; parse_hostport wants one, so add the default. */
	if (!strchr(hostport, ':') || (hostport[0] == '[' && !strstr(hostport, "]:"))) {
		if (n + 6 >= sizeof(hostport))
			return MGW_EINVAL;
		strcat(hostport, ":6379");
	}
	if (mgw_parse_hostport(hostport, r->host, sizeof(r->host), &r->port) != 0 ||
	    r->port == 0) {
		snprintf(err, errlen, "redis URL has a bad host or port: %s", url);
		return MGW_EINVAL;
	}
	snprintf(r->display, sizeof(r->display), "redis://%s%s%s", hostport,
	         r->db ? "/" : "", r->db ? slash + 1 : "");
	return 0;
}

struct mgw_be_store *mgw_be_store_redis_new(struct event_base *base,
                                            const char *url, double ttl,
                                            char *err, size_t errlen)
{
	struct redis_store *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->base.ops = &redis_ops;
	r->evb = base;
	r->ttl_s = ttl >= 1.0 ? (int64_t)ttl : 1;
	r->backoff = BACKOFF_MIN;
	if (parse_url(r, url, err, errlen) != 0)
		goto fail;
	r->retry = evtimer_new(base, on_retry, r);
	if (!r->retry) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* A numeric host is at most INET6_ADDRSTRLEN - 1 characters. */
	if (host_is_numeric(r->host))
		snprintf(r->addr, sizeof(r->addr), "%.*s", (int)sizeof(r->addr) - 1,
		         r->host);
	connect_now(r);
	return &r->base;
fail:
	redis_free(&r->base);
	return NULL;
}
