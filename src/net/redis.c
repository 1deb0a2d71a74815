/* redis.c - one asynchronous Redis connection (see redis.h): URL parsing,
 * evdns resolution, hiredis on the libevent adapter, a bounded connect,
 * per-command timers, and reconnection with exponential backoff.
 *
 * Ownership of a command: hiredis calls its reply callback exactly once,
 * with the reply or with NULL when the context is torn down, so that
 * callback is the one place a command is freed.  A timer only answers
 * early, and then tears the connection down (a server that leaves one
 * command unanswered leaves every later one unanswered too: replies come
 * in order), which makes hiredis hand the command back with NULL. */
#include "autoconf.h"

#include <ctype.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/util.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "core/errors.h"
#include "core/log.h"
#include "net/redis.h"
#include "util/redis_url.h"
#include "net/resolve.h"
#include "util/parse.h"
#include "util/time.h"

#define DEFAULT_TIMEOUT 2.0
#define DEFAULT_BACKOFF_MIN 0.1
#define DEFAULT_BACKOFF_MAX 2.0

struct mgw_redis {
	struct event_base *base;
	struct mgw_redis_opts o;
	char *url;                   /* o.url points here */
	char host[256];
	char addr[INET6_ADDRSTRLEN]; /* numeric host, or the resolved one */
	uint16_t port;
	char *user;                  /* ACL user (AUTH user password) */
	char *password;
	char *unix_path;             /* "unix:PATH" URLs */
	int db;
	char display[300];           /* URL without the password */
	struct mgw_resolver *res;    /* only for host names */
	struct mgw_resolve_req *resolving;
	redisAsyncContext *ac;       /* NULL: no attempt under way */
	enum mgw_redis_state state;
	struct event *retry;         /* next connection attempt */
	struct event *connect_timer; /* bounds one attempt */
	double backoff;
	int freeing;                 /* mgw_redis_free is running */
	int starting;                /* inside mgw_redis_new: no state
	                              * callback (the caller has no handle
	                              * yet; it reads mgw_redis_state) */
	int dropping;                /* drop_context is freeing ac */
	char setup_err[160];         /* AUTH / SELECT / PING refused: why */
	struct mgw_redis_stats st;
	/* Sentinel (o.master_name set) */
	char *master_name;
	struct sentinel_addr *sentinels;
	size_t n_sentinels;
	size_t s_first, s_tried;     /* the one that answered last; tried in
	                              * this round */
	redisAsyncContext *sac;      /* a sentinel being asked */
	struct event *drop_ev;       /* READONLY seen: drop from the loop */
};

struct sentinel_addr {
	char host[256];
	uint16_t port;
};

struct cmd {
	struct mgw_redis *r;
	mgw_redis_reply_cb cb;
	void *arg;
	struct event *timer;
	int answered;
};

/* ---- URL ---- */

/* Fills r's address fields from url (util/redis_url.c). */
static int parse_url(struct mgw_redis *r, const char *url, char *err,
                     size_t errlen)
{
	struct mgw_redis_url u;
	int rc = mgw_redis_url_parse(url, &u, err, errlen);

	if (rc != 0)
		return rc;
	memcpy(r->host, u.host, sizeof(r->host));
	r->port = u.port;
	free(r->user);
	free(r->password);
	free(r->unix_path);
	r->user = u.user;           /* ownership moves to r */
	r->password = u.password;
	r->unix_path = u.unix_path;
	r->db = u.db;
	memcpy(r->display, u.display, sizeof(r->display));
	return 0;
}

static int host_is_numeric(const char *h)
{
	unsigned char tmp[16];

	return evutil_inet_pton(AF_INET, h, tmp) == 1 ||
	       evutil_inet_pton(AF_INET6, h, tmp) == 1;
}

/* ---- connection ---- */

static void connect_now(struct mgw_redis *r);

static void set_state(struct mgw_redis *r, enum mgw_redis_state s,
                      const char *why)
{
	if (r->state == s || r->freeing)
		return;
	r->state = s;
	if (r->o.on_state && !r->starting)
		r->o.on_state(r->o.state_arg, s, why);
}

static void schedule_reconnect(struct mgw_redis *r)
{
	struct timeval tv;

	if (r->freeing)
		return;
	tv = mgw_tv(r->backoff);
	evtimer_add(r->retry, &tv);
	r->backoff *= 2;
	if (r->backoff > r->o.backoff_max)
		r->backoff = r->o.backoff_max;
}

/* An attempt failed or a connection ended: count, tell, retry later. */
static void went_down(struct mgw_redis *r, const char *why)
{
	evtimer_del(r->connect_timer);
	set_state(r, MGW_REDIS_DOWN, why);
	schedule_reconnect(r);
}

/* Tears the current context down ourselves (connect or command timeout).
 * hiredis answers every pending command with NULL from inside
 * redisAsyncFree; the disconnect callback it may run is ignored here. */
static void drop_context(struct mgw_redis *r, const char *why)
{
	redisAsyncContext *ac = r->ac;

	r->ac = NULL;
	if (ac) {
		r->dropping = 1;
		redisAsyncFree(ac);
		r->dropping = 0;
	}
	went_down(r, why);
}

static void on_connect(const redisAsyncContext *ac, int status)
{
	struct mgw_redis *r = ac->data;

	if (status != REDIS_OK) {
		/* hiredis frees the context after this callback. */
		r->ac = NULL;
		r->st.failures++;
		went_down(r, ac->errstr[0] ? ac->errstr : "connect failed");
		return;
	}
	/* TCP only: up once the server answered the setup (on_ready_reply);
	 * the connect timer bounds that too */
	r->st.connects++;
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
	struct mgw_redis *r = ac->data;

	if (r->freeing || r->dropping || r->ac != ac)
		return;
	r->ac = NULL;
	went_down(r, status == REDIS_OK ? "connection closed"
	                                : (ac->errstr[0] ? ac->errstr
	                                                 : "connection lost"));
}

static void sentinel_next(struct mgw_redis *r);

static void on_connect_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_redis *r = arg;

	(void)fd;
	(void)what;
	if (r->sac) {                   /* a sentinel did not answer */
		redisAsyncContext *sac = r->sac;

		r->sac = NULL;
		redisAsyncFree(sac);
		r->s_tried++;
		sentinel_next(r);
		return;
	}
	if (!r->ac || r->state == MGW_REDIS_UP)
		return;
	r->st.failures++;
	drop_context(r, r->setup_err[0] ? r->setup_err : "connect timed out");
}

/* AUTH or SELECT answered: an error fails the attempt (a wrong password
 * or database must not leave a connection that looks up), from the loop:
 * not inside hiredis's callback. */
static void on_setup_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	struct mgw_redis *r = ac->data;
	redisReply *rep = reply;
	struct timeval now = {0, 0};

	if (!rep || r->ac != ac || rep->type != REDIS_REPLY_ERROR ||
	    r->setup_err[0])
		return;
	r->st.errors++;
	snprintf(r->setup_err, sizeof(r->setup_err), "%s refused: %s",
	         (const char *)priv, rep->str);
	evtimer_add(r->connect_timer, &now);
}

/* The PING queued behind the setup: the server speaks Redis and took the
 * setup.  Only now is the connection up and the backoff reset (a server
 * that accepts and then closes, or never answers, stays down and backs
 * off). */
static void on_ready_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	struct mgw_redis *r = ac->data;
	redisReply *rep = reply;

	(void)priv;
	if (!rep || r->ac != ac || r->setup_err[0])
		return;
	if (rep->type == REDIS_REPLY_ERROR) {
		on_setup_reply(ac, reply, (void *)"PING");
		return;
	}
	evtimer_del(r->connect_timer);
	r->backoff = r->o.backoff_min;
	set_state(r, MGW_REDIS_UP, NULL);
}

/* ROLE of a server a sentinel named: anything but a master (a stale
 * answer during a failover) fails the attempt. */
static void on_role_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	struct mgw_redis *r = ac->data;
	redisReply *rep = reply;
	struct timeval now = {0, 0};

	(void)priv;
	if (!rep || r->ac != ac || r->setup_err[0])
		return;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
	    rep->element[0]->type == REDIS_REPLY_STRING &&
	    strcmp(rep->element[0]->str, "master") == 0)
		return;
	snprintf(r->setup_err, sizeof(r->setup_err),
	         "%s:%u is not the master of %s", r->addr, (unsigned)r->port,
	         r->master_name);
	evtimer_add(r->connect_timer, &now);
}

static void start_context(struct mgw_redis *r)
{
	redisAsyncContext *ac;
	struct timeval tv = mgw_tv(r->o.timeout);

	ac = r->unix_path ? redisAsyncConnectUnix(r->unix_path)
	                  : redisAsyncConnect(r->addr, r->port);
	if (!ac) {
		r->st.failures++;
		went_down(r, "out of memory");
		return;
	}
	if (ac->err) {
		r->st.failures++;
		went_down(r, ac->errstr);
		redisAsyncFree(ac);
		return;
	}
	ac->data = r;
	if (redisLibeventAttach(ac, r->base) != REDIS_OK) {
		redisAsyncFree(ac);
		r->st.failures++;
		went_down(r, "cannot attach to the event loop");
		return;
	}
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	r->ac = ac;
	r->setup_err[0] = '\0';
	evtimer_add(r->connect_timer, &tv);
	/* Queued before the connection completes; hiredis sends them first. */
	if (r->password && r->user)
		redisAsyncCommand(ac, on_setup_reply, (void *)"AUTH",
		                  "AUTH %s %s", r->user, r->password);
	else if (r->password)
		redisAsyncCommand(ac, on_setup_reply, (void *)"AUTH", "AUTH %s",
		                  r->password);
	if (r->db)
		redisAsyncCommand(ac, on_setup_reply, (void *)"SELECT",
		                  "SELECT %d", r->db);
	if (r->master_name)
		redisAsyncCommand(ac, on_role_reply, NULL, "ROLE");
	redisAsyncCommand(ac, on_ready_reply, NULL, "PING");
}

/* ---- Sentinel ---- */

static void sentinel_done(struct mgw_redis *r, redisAsyncContext *ac)
{
	if (r->sac == ac)
		r->sac = NULL;
	/* safe inside its callback: hiredis frees it once that returns */
	redisAsyncDisconnect(ac);
}

static void on_sentinel_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	struct mgw_redis *r = ac->data;
	redisReply *rep = reply;
	long long port = 0;

	(void)priv;
	if (!rep || r->sac != ac || r->freeing)
		return;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
	    rep->element[0]->type == REDIS_REPLY_STRING &&
	    rep->element[1]->type == REDIS_REPLY_STRING &&
	    host_is_numeric(rep->element[0]->str) &&
	    rep->element[0]->len < sizeof(r->addr) &&
	    mgw_parse_int(rep->element[1]->str, 1, 65535, &port) == 0) {
		memcpy(r->addr, rep->element[0]->str, rep->element[0]->len + 1);
		r->port = (uint16_t)port;
		r->s_first = (r->s_first + r->s_tried) % r->n_sentinels;
		sentinel_done(r, ac);
		evtimer_del(r->connect_timer);
		start_context(r);
		return;
	}
	/* nil: this sentinel does not know the master (yet) */
	sentinel_done(r, ac);
	r->s_tried++;
	sentinel_next(r);
}

static void on_sentinel_connect(const redisAsyncContext *ac, int status)
{
	struct mgw_redis *r = ac->data;

	if (status == REDIS_OK || r->sac != ac || r->freeing)
		return;
	r->sac = NULL;                  /* hiredis frees it after this */
	r->s_tried++;
	sentinel_next(r);
}

static void on_sentinel_disconnect(const redisAsyncContext *ac, int status)
{
	struct mgw_redis *r = ac->data;

	(void)status;
	if (r->sac != ac || r->freeing)
		return;
	r->sac = NULL;
	r->s_tried++;
	sentinel_next(r);
}

/* Asks the next sentinel of this round for the master's address; after
 * the last one the attempt failed. */
static void sentinel_next(struct mgw_redis *r)
{
	const struct sentinel_addr *sa;
	redisAsyncContext *ac;
	struct timeval tv = mgw_tv(r->o.timeout);

	if (r->freeing)
		return;
	if (r->s_tried >= r->n_sentinels) {
		r->st.failures++;
		went_down(r, "no sentinel named the master");
		return;
	}
	sa = &r->sentinels[(r->s_first + r->s_tried) % r->n_sentinels];
	ac = redisAsyncConnect(sa->host, sa->port);
	if (!ac || ac->err) {
		if (ac)
			redisAsyncFree(ac);
		r->s_tried++;
		sentinel_next(r);
		return;
	}
	ac->data = r;
	if (redisLibeventAttach(ac, r->base) != REDIS_OK) {
		redisAsyncFree(ac);
		r->s_tried++;
		sentinel_next(r);
		return;
	}
	redisAsyncSetConnectCallback(ac, on_sentinel_connect);
	redisAsyncSetDisconnectCallback(ac, on_sentinel_disconnect);
	r->sac = ac;
	evtimer_add(r->connect_timer, &tv);
	redisAsyncCommand(ac, on_sentinel_reply, NULL,
	                  "SENTINEL get-master-addr-by-name %s", r->master_name);
}

/* A READONLY answer: the master was demoted; reconnect (asking the
 * sentinels again), from the loop. */
static void on_drop(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_redis *r = arg;

	(void)fd;
	(void)what;
	if (r->ac && !r->sac)
		drop_context(r, "the master became a replica (READONLY)");
}

static void on_resolved(int err, const struct mgw_addrs *addrs,
                        const char *msg, void *arg)
{
	struct mgw_redis *r = arg;
	const struct sockaddr *sa;

	r->resolving = NULL;
	if (err != 0 || !addrs || addrs->n == 0) {
		r->st.failures++;
		went_down(r, msg ? msg : "cannot resolve the host");
		return;
	}
	sa = (const struct sockaddr *)&addrs->a[0];
	r->addr[0] = '\0';
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
		          r->addr, sizeof(r->addr));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		          r->addr, sizeof(r->addr));
	if (!r->addr[0]) {
		r->st.failures++;
		went_down(r, "no usable address");
		return;
	}
	start_context(r);
}

/* hiredis resolves names with a blocking getaddrinfo; names therefore go
 * through evdns first and hiredis only ever sees a numeric address. */
static void connect_now(struct mgw_redis *r)
{
	int rc;

	if (r->ac || r->resolving || r->freeing || r->sac)
		return;
	if (r->master_name) {
		r->s_tried = 0;
		sentinel_next(r);
		return;
	}
	if (r->unix_path || r->addr[0]) {
		start_context(r);
		return;
	}
	if (!r->res)
		r->res = mgw_resolver_new(r->base);
	rc = r->res ? mgw_resolve(r->res, r->host, r->port, on_resolved, r,
	                          &r->resolving)
	            : MGW_ENOMEM;
	if (rc != 0) {
		r->resolving = NULL;
		r->st.failures++;
		went_down(r, "cannot start resolving the host");
	}
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_redis *r = arg;

	(void)fd;
	(void)what;
	/* A name is looked up again on every attempt: the server may have
	 * moved (a restarted container gets a new address). */
	if (!r->unix_path && !host_is_numeric(r->host) && !r->master_name)
		r->addr[0] = '\0';
	connect_now(r);
}

/* The sentinels of o, parsed ("HOST:PORT", numeric hosts: hiredis
 * resolves names with a blocking call). */
static int sentinels_copy(struct mgw_redis *r, const struct mgw_redis_opts *o,
                          char *err, size_t errlen)
{
	if (!o->n_sentinels || !o->master_name[0]) {
		snprintf(err, errlen, "sentinel: a master name and at least one "
		         "sentinel are needed");
		return MGW_EINVAL;
	}
	r->master_name = strdup(o->master_name);
	r->sentinels = calloc(o->n_sentinels, sizeof(*r->sentinels));
	if (!r->master_name || !r->sentinels) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	for (size_t i = 0; i < o->n_sentinels; i++) {
		struct sentinel_addr *a = &r->sentinels[i];

		if (mgw_parse_hostport(o->sentinels[i], a->host, sizeof(a->host),
		                       &a->port) != 0 || a->port == 0 ||
		    !host_is_numeric(a->host)) {
			snprintf(err, errlen, "sentinel '%.100s': must be "
			         "IP:PORT", o->sentinels[i]);
			return MGW_EINVAL;
		}
	}
	r->n_sentinels = o->n_sentinels;
	snprintf(r->display, sizeof(r->display), "sentinel:%.200s%s",
	         r->master_name, r->db ? " (db set)" : "");
	return 0;
}

struct mgw_redis *mgw_redis_new(struct event_base *base,
                                const struct mgw_redis_opts *o, char *err,
                                size_t errlen)
{
	struct mgw_redis *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->base = base;
	r->o = *o;
	r->url = strdup(o->url ? o->url : "");
	if (!r->url) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	r->o.url = r->url;
	if (r->o.timeout <= 0)
		r->o.timeout = DEFAULT_TIMEOUT;
	if (r->o.backoff_min <= 0)
		r->o.backoff_min = DEFAULT_BACKOFF_MIN;
	if (r->o.backoff_max < r->o.backoff_min)
		r->o.backoff_max = r->o.backoff_min > DEFAULT_BACKOFF_MAX
		                   ? r->o.backoff_min : DEFAULT_BACKOFF_MAX;
	r->backoff = r->o.backoff_min;
	r->state = MGW_REDIS_CONNECTING;
	if (parse_url(r, r->url, err, errlen) != 0)
		goto fail;
	r->o.sentinels = NULL;
	r->o.master_name = NULL;
	if (o->master_name && sentinels_copy(r, o, err, errlen) != 0)
		goto fail;
	r->retry = evtimer_new(base, on_retry, r);
	r->connect_timer = evtimer_new(base, on_connect_timeout, r);
	r->drop_ev = evtimer_new(base, on_drop, r);
	if (!r->retry || !r->connect_timer || !r->drop_ev) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* A numeric host is at most INET6_ADDRSTRLEN - 1 characters. */
	if (!r->unix_path && host_is_numeric(r->host) && !r->master_name)
		snprintf(r->addr, sizeof(r->addr), "%.*s",
		         (int)sizeof(r->addr) - 1, r->host);
	r->starting = 1;
	connect_now(r);
	r->starting = 0;
	return r;
fail:
	mgw_redis_free(r);
	return NULL;
}

void mgw_redis_free(struct mgw_redis *r)
{
	if (!r)
		return;
	r->freeing = 1;
	if (r->resolving)
		mgw_resolve_cancel(r->resolving);
	r->resolving = NULL;
	if (r->ac)
		redisAsyncFree(r->ac); /* pending commands: answered MGW_EIO */
	r->ac = NULL;
	if (r->sac) {
		redisAsyncContext *sac = r->sac;

		r->sac = NULL;
		redisAsyncFree(sac);
	}
	mgw_resolver_free(r->res);
	if (r->drop_ev)
		event_free(r->drop_ev);
	free(r->sentinels);
	free(r->master_name);
	if (r->retry)
		event_free(r->retry);
	if (r->connect_timer)
		event_free(r->connect_timer);
	free(r->user);
	free(r->password);
	free(r->unix_path);
	free(r->url);
	free(r);
}

enum mgw_redis_state mgw_redis_state(const struct mgw_redis *r)
{
	return r->state;
}

const char *mgw_redis_display(const struct mgw_redis *r)
{
	return r->display;
}

void mgw_redis_get_stats(const struct mgw_redis *r, struct mgw_redis_stats *out)
{
	*out = r->st;
}

/* ---- commands ---- */

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cmd *c = priv;
	redisReply *rep = reply;

	(void)ac;
	if (!c->answered) {
		c->answered = 1;
		if (rep && rep->type == REDIS_REPLY_ERROR) {
			struct timeval now = {0, 0};

			c->r->st.errors++;
			if (c->r->master_name && !c->r->freeing &&
			    strncmp(rep->str, "READONLY", 8) == 0)
				evtimer_add(c->r->drop_ev, &now);
		}
		c->cb(c->arg, rep ? 0 : MGW_EIO, rep);
	}
	event_free(c->timer);
	free(c);
}

static void on_cmd_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct cmd *c = arg;
	struct mgw_redis *r = c->r;

	(void)fd;
	(void)what;
	r->st.timeouts++;
	c->answered = 1;
	c->cb(c->arg, MGW_ETIMEDOUT, NULL);
	/* Replies come in order: nothing behind this one will arrive either.
	 * Tearing down hands c (and every other pending command) back
	 * through on_reply, which frees it: c is not touched below. */
	if (r->ac)
		drop_context(r, "a command timed out");
}

static struct cmd *cmd_new(struct mgw_redis *r, mgw_redis_reply_cb cb,
                           void *arg)
{
	struct cmd *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->r = r;
	c->cb = cb;
	c->arg = arg;
	c->timer = evtimer_new(r->base, on_cmd_timeout, c);
	if (!c->timer) {
		free(c);
		return NULL;
	}
	return c;
}

static int cmd_sent(struct mgw_redis *r, struct cmd *c, int hrc)
{
	struct timeval tv = mgw_tv(r->o.timeout);

	if (hrc != REDIS_OK) {
		/* hiredis refused it (context going away): never queued. */
		event_free(c->timer);
		free(c);
		return MGW_EIO;
	}
	evtimer_add(c->timer, &tv);
	r->st.commands++;
	return 0;
}

int mgw_redis_command_argv(struct mgw_redis *r, int argc, const char **argv,
                           const size_t *argvlen, mgw_redis_reply_cb cb,
                           void *arg)
{
	struct cmd *c;

	if (r->state == MGW_REDIS_DOWN || !r->ac || r->freeing)
		return MGW_EIO;
	c = cmd_new(r, cb, arg);
	if (!c)
		return MGW_ENOMEM;
	return cmd_sent(r, c, redisAsyncCommandArgv(r->ac, on_reply, c, argc,
	                                            argv, argvlen));
}

int mgw_redis_command(struct mgw_redis *r, mgw_redis_reply_cb cb, void *arg,
                      const char *fmt, ...)
{
	struct cmd *c;
	va_list ap;
	int hrc;

	if (r->state == MGW_REDIS_DOWN || !r->ac || r->freeing)
		return MGW_EIO;
	c = cmd_new(r, cb, arg);
	if (!c)
		return MGW_ENOMEM;
	va_start(ap, fmt);
	hrc = redisvAsyncCommand(r->ac, on_reply, c, fmt, ap);
	va_end(ap);
	return cmd_sent(r, c, hrc);
}
