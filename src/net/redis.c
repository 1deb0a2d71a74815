/* redis.c - one asynchronous Redis connection (see redis.h): URL parsing,
 * evdns resolution, our own bufferevent (a socket, or OpenSSL over one for
 * rediss://) with a bounded connect, hiredis for the protocol only
 * (redisFormatCommand* encodes, a redisReader decodes), per-command
 * timers, and reconnection with exponential backoff.
 *
 * A link is one connection (to the server, or to a sentinel being asked)
 * with its FIFO of commands sent and not yet answered: Redis answers in
 * order, so each reply belongs to the oldest one.  Closing a link answers
 * every one left with NULL, which is the one place a command is freed.  A
 * timer only answers early, and then tears the connection down (a server
 * that leaves one command unanswered leaves every later one unanswered
 * too), which hands the command back with NULL. */
#include "autoconf.h"

#include <ctype.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/util.h>
#include <hiredis/hiredis.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "core/errors.h"
#include "core/log.h"
#include "net/redis.h"
#include "net/tls_client.h"
#include "util/redis_url.h"
#include "net/resolve.h"
#include "util/parse.h"
#include "util/time.h"

#define DEFAULT_TIMEOUT 2.0
#define DEFAULT_BACKOFF_MIN 0.1
#define DEFAULT_BACKOFF_MAX 2.0

struct mgw_redis;

/* How a command sent on a link is answered: rep NULL when the link
 * closed first. */
typedef void (*reply_fn)(struct mgw_redis *r, void *priv, redisReply *rep);

struct pend {
	reply_fn fn;
	void *priv;
	struct pend *next;
};

struct link {
	struct mgw_redis *r;
	struct bufferevent *bev;     /* NULL: closed */
	redisReader *rd;
	struct pend *head, **tail;   /* sent, unanswered, oldest first */
	unsigned gen;                /* bumped by every close */
	int connected;               /* TCP (and TLS) established */
	int tls;                     /* rediss://: TLS once TCP is up */
	int tcp_up;                  /* TLS links: TCP connected */
	char name[256];              /* TLS: the certificate's name */
	int opening;                 /* inside bufferevent_socket_connect:
	                              * its failure is its return value */
};

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
	SSL_CTX *tls;                /* rediss:// only */
	char *tls_name;              /* tls.server_name */
	struct mgw_resolver *res;    /* only for host names */
	struct mgw_resolve_req *resolving;
	struct link m;               /* the server */
	enum mgw_redis_state state;
	struct event *retry;         /* next connection attempt */
	struct event *connect_timer; /* bounds one attempt */
	double backoff;
	int freeing;                 /* mgw_redis_free is running */
	int starting;                /* inside mgw_redis_new: no state
	                              * callback (the caller has no handle
	                              * yet; it reads mgw_redis_state) */
	char setup_err[160];         /* AUTH / SELECT / PING refused: why */
	char why[256];               /* the last link failure's text */
	struct mgw_redis_stats st;
	/* Sentinel (o.master_name set) */
	char *master_name;
	struct sentinel_addr *sentinels;
	size_t n_sentinels;
	size_t s_first, s_tried;     /* the one that answered last; tried in
	                              * this round */
	struct link s;               /* a sentinel being asked */
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
static int parse_url(struct mgw_redis *r, const char *url, int *tls,
                     char *err, size_t errlen)
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
	*tls = u.tls;
	memcpy(r->display, u.display, sizeof(r->display));
	return 0;
}

static int host_is_numeric(const char *h)
{
	unsigned char tmp[16];

	return evutil_inet_pton(AF_INET, h, tmp) == 1 ||
	       evutil_inet_pton(AF_INET6, h, tmp) == 1;
}

/* ---- links ---- */

static void link_event(struct mgw_redis *r, struct link *l, short what);
static int link_start_tls(struct mgw_redis *r, struct link *l);

/* Closes l and answers what it still had pending with NULL.  Commands
 * issued from those answers see a closed link. */
static void link_close(struct link *l)
{
	struct pend *p = l->head;

	if (!l->bev)
		return;
	bufferevent_free(l->bev);
	redisReaderFree(l->rd);
	l->bev = NULL;
	l->rd = NULL;
	l->head = NULL;
	l->tail = &l->head;
	l->connected = l->tcp_up = 0;
	l->gen++;
	while (p) {
		struct pend *next = p->next;

		p->fn(l->r, p->priv, NULL);
		free(p);
		p = next;
	}
}

/* Sends an encoded command; fn answers it.  Returns 0, or MGW_ENOMEM /
 * MGW_EIO (nothing sent, fn never runs). */
static int link_send(struct link *l, const char *buf, size_t len,
                     reply_fn fn, void *priv)
{
	struct pend *p;

	if (!l->bev)
		return MGW_EIO;
	p = calloc(1, sizeof(*p));
	if (!p)
		return MGW_ENOMEM;
	if (bufferevent_write(l->bev, buf, len) != 0) {
		free(p);
		return MGW_EIO;
	}
	p->fn = fn;
	p->priv = priv;
	*l->tail = p;
	l->tail = &p->next;
	return 0;
}

/* link_send with a hiredis format string. */
static int link_sendf(struct link *l, reply_fn fn, void *priv,
                      const char *fmt, ...)
{
	char *buf = NULL;
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = redisvFormatCommand(&buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MGW_ENOMEM;
	rc = link_send(l, buf, (size_t)n, fn, priv);
	redisFreeCommand(buf);
	return rc;
}

/* Hands every complete reply to the oldest pending command.  An answer
 * may close l (and even open it again): the generation tells. */
static void link_read(struct bufferevent *bev, void *arg)
{
	struct link *l = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	unsigned gen = l->gen;
	struct evbuffer_iovec v;

	while (evbuffer_peek(in, -1, NULL, &v, 1) > 0 && v.iov_len) {
		if (redisReaderFeed(l->rd, v.iov_base, v.iov_len) != REDIS_OK)
			break;
		evbuffer_drain(in, v.iov_len);
	}
	for (;;) {
		void *rep = NULL;
		struct pend *p;

		if (redisReaderGetReply(l->rd, &rep) != REDIS_OK ||
		    (rep && !l->head)) {
			if (rep)
				freeReplyObject(rep);
			snprintf(l->r->why, sizeof(l->r->why),
			         "protocol error: %s", l->head ? l->rd->errstr
			         : "a reply nothing asked for");
			link_event(l->r, l, BEV_EVENT_ERROR);
			return;
		}
		if (!rep)
			return;
		p = l->head;
		l->head = p->next;
		if (!l->head)
			l->tail = &l->head;
		p->fn(l->r, p->priv, rep);
		free(p);
		freeReplyObject(rep);
		if (l->gen != gen)
			return;
	}
}

/* OpenSSL's error for a TLS peer that closed the TCP connection without
 * close_notify (a server SIGKILLed, or crashed): after the handshake that
 * is the connection closed, as with plain redis://, not a TLS failure. */
static int tls_peer_vanished(unsigned long e, int connected)
{
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
	return connected && ERR_GET_LIB(e) == ERR_LIB_SSL &&
	       ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
#else
	(void)e;
	(void)connected;
	return 0;
#endif
}

/* libevent's own report of an I/O failure under TLS: it queues what
 * SSL_get_error said, SSL_ERROR_SYSCALL, which is no OpenSSL error code
 * (no library in it).  After the handshake that is the TCP connection
 * reset or cut (a server SIGKILLed with bytes of ours unread answers
 * with a reset), as with plain redis://, not a TLS failure. */
static int tls_io_failed(unsigned long e, int connected)
{
	return connected && e == SSL_ERROR_SYSCALL;
}

/* The text of a failure event on l, in r->why. */
static void link_why(struct mgw_redis *r, struct link *l, short what)
{
	SSL *ssl = r->tls ? bufferevent_openssl_get_ssl(l->bev) : NULL;
	unsigned long e = ssl ? bufferevent_get_openssl_error(l->bev) : 0;
	int err = EVUTIL_SOCKET_ERROR();

	if (tls_peer_vanished(e, l->connected)) {
		ERR_clear_error();
		snprintf(r->why, sizeof(r->why), "connection closed");
	} else if (tls_io_failed(e, l->connected)) {
		ERR_clear_error();
		if ((what & BEV_EVENT_EOF) || !err)
			snprintf(r->why, sizeof(r->why), "connection closed");
		else
			snprintf(r->why, sizeof(r->why), "connection lost: %s",
			         evutil_socket_error_to_string(err));
	} else if (ssl && (e || !l->connected))
		mgw_tls_client_why(ssl, e, l->connected, r->why, sizeof(r->why));
	else if (what & BEV_EVENT_EOF)
		snprintf(r->why, sizeof(r->why), "connection closed");
	else
		snprintf(r->why, sizeof(r->why), "%s: %s",
		         l->connected ? "connection lost" : "connect failed",
		         evutil_socket_error_to_string(err ? err : ECONNREFUSED));
}

static void set_nodelay(struct bufferevent *bev)
{
	int one = 1;

	setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one,
	           sizeof(one));
}

static void link_on_event(struct bufferevent *bev, short what, void *arg)
{
	struct link *l = arg;

	if (l->opening)
		return;
	if ((what & BEV_EVENT_CONNECTED) && l->tls && !l->tcp_up) {
		l->tcp_up = 1;
		set_nodelay(bev);
		if (link_start_tls(l->r, l) == 0)
			return;
		link_event(l->r, l, BEV_EVENT_ERROR);
		return;
	}
	if (what & BEV_EVENT_CONNECTED) {
		l->connected = 1;
		if (!l->tls && (!l->r->unix_path || l != &l->r->m))
			set_nodelay(bev);
		link_event(l->r, l, what);
		return;
	}
	link_why(l->r, l, what);
	link_event(l->r, l, what);
}

/* TCP is up on a rediss:// link: the same socket goes on in an OpenSSL
 * bufferevent checking the certificate against l->name, and what was
 * written so far (the setup) moves over unsent.  Returns 0, or -1 with
 * r->why set (l->bev unchanged). */
static int link_start_tls(struct mgw_redis *r, struct link *l)
{
	evutil_socket_t fd = bufferevent_getfd(l->bev);
	SSL *ssl = mgw_tls_client_ssl(r->tls, l->name, NULL, 0);
	/* a failed bufferevent_openssl_socket_new with CLOSE_ON_FREE frees
	 * ssl itself (libevent 2.1.12); the fd stays l->bev's */
	struct bufferevent *tb = ssl ? bufferevent_openssl_socket_new(
	    r->base, fd, ssl, BUFFEREVENT_SSL_CONNECTING,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS) : NULL;

	if (!tb || evbuffer_add_buffer(bufferevent_get_output(tb),
	                               bufferevent_get_output(l->bev)) != 0) {
		if (tb) {
			bufferevent_setfd(tb, -1);
			bufferevent_free(tb);
		}
		snprintf(r->why, sizeof(r->why), "TLS setup failed for %.100s",
		         l->name);
		return -1;
	}
	bufferevent_setfd(l->bev, -1);  /* the fd is tb's now */
	bufferevent_free(l->bev);
	l->bev = tb;
	bufferevent_openssl_set_allow_dirty_shutdown(tb, 1);
	bufferevent_setcb(tb, link_read, NULL, link_on_event, l);
	bufferevent_enable(tb, EV_READ | EV_WRITE);
	return 0;
}

/* Opens l to a numeric address (or r's socket path with unix set) with a
 * socket bufferevent; for rediss:// TLS starts once TCP is up
 * (link_start_tls: a refused connection then reads as one).  Returns 0,
 * or -1 with r->why set. */
static int link_open(struct mgw_redis *r, struct link *l, const char *addr,
                     uint16_t port, int unix, const char *name)
{
	struct sockaddr_storage ss;
	socklen_t sl = 0;
	int rc;
	/* A socket bufferevent only ever calls back from the loop, but for
	 * a connect that fails at once (l->opening).  OpenSSL's may report a
	 * failure from inside bufferevent_write (it writes as data is
	 * added): deferred (link_start_tls), so that a command is never
	 * answered inside mgw_redis_command. */
	int opts = BEV_OPT_CLOSE_ON_FREE;

	memset(&ss, 0, sizeof(ss));
	if (unix) {
		struct sockaddr_un *su = (struct sockaddr_un *)&ss;

		if (strlen(r->unix_path) >= sizeof(su->sun_path)) {
			snprintf(r->why, sizeof(r->why), "socket path too long");
			return -1;
		}
		su->sun_family = AF_UNIX;
		strcpy(su->sun_path, r->unix_path);
		sl = sizeof(*su);
	} else if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		sl = evutil_inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1
		     ? sizeof(*s6) : 0;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		sl = evutil_inet_pton(AF_INET, addr, &s4->sin_addr) == 1
		     ? sizeof(*s4) : 0;
	}
	if (!sl) {
		snprintf(r->why, sizeof(r->why), "bad address %.100s", addr);
		return -1;
	}
	l->tls = r->tls && !unix;
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->bev = bufferevent_socket_new(r->base, -1, opts);
	l->rd = l->bev ? redisReaderCreate() : NULL;
	if (!l->rd) {
		if (l->bev)
			bufferevent_free(l->bev);
		l->bev = NULL;
		snprintf(r->why, sizeof(r->why), "out of memory");
		return -1;
	}
	l->connected = l->tcp_up = 0;
	bufferevent_setcb(l->bev, link_read, NULL, link_on_event, l);
	bufferevent_enable(l->bev, EV_READ | EV_WRITE);
	l->opening = 1;
	rc = bufferevent_socket_connect(l->bev, (struct sockaddr *)&ss, (int)sl);
	l->opening = 0;
	if (rc != 0) {
		int err = EVUTIL_SOCKET_ERROR();

		bufferevent_free(l->bev);
		redisReaderFree(l->rd);
		l->bev = NULL;
		l->rd = NULL;
		snprintf(r->why, sizeof(r->why), "connect failed: %s",
		         evutil_socket_error_to_string(err));
		return -1;
	}
	return 0;
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

/* Tears the connection down (a failure, a timeout, READONLY): every
 * pending command is answered MGW_EIO first. */
static void drop_context(struct mgw_redis *r, const char *why)
{
	char copy[sizeof(r->why)];

	snprintf(copy, sizeof(copy), "%s", why); /* why may be r->why */
	link_close(&r->m);
	went_down(r, copy);
}

static void sentinel_next(struct mgw_redis *r);

/* The server's link: connected (TCP, and TLS done) or failed.  Up only
 * once the setup is answered (on_ready_reply); a failure before the
 * connection was established counts as a failed attempt. */
static void main_event(struct mgw_redis *r, short what)
{
	if (what & BEV_EVENT_CONNECTED) {
		r->st.connects++;
		return;
	}
	if (!r->m.connected)
		r->st.failures++;
	drop_context(r, r->why);
}

static void sentinel_event(struct mgw_redis *r, short what)
{
	if (what & BEV_EVENT_CONNECTED)
		return;
	link_close(&r->s);
	r->s_tried++;
	sentinel_next(r);
}

static void link_event(struct mgw_redis *r, struct link *l, short what)
{
	if (r->freeing)
		return;
	if (l == &r->m)
		main_event(r, what);
	else
		sentinel_event(r, what);
}

static void on_connect_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_redis *r = arg;

	(void)fd;
	(void)what;
	if (r->s.bev) {                 /* a sentinel did not answer */
		link_close(&r->s);
		r->s_tried++;
		sentinel_next(r);
		return;
	}
	if (!r->m.bev || r->state == MGW_REDIS_UP)
		return;
	r->st.failures++;
	drop_context(r, r->setup_err[0] ? r->setup_err : "connect timed out");
}

/* AUTH or SELECT answered: an error fails the attempt (a wrong password
 * or database must not leave a connection that looks up), from the loop:
 * not inside the reply's callback. */
static void on_setup_reply(struct mgw_redis *r, void *priv, redisReply *rep)
{
	struct timeval now = {0, 0};

	if (!rep || rep->type != REDIS_REPLY_ERROR || r->setup_err[0])
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
static void on_ready_reply(struct mgw_redis *r, void *priv, redisReply *rep)
{
	(void)priv;
	if (!rep || r->setup_err[0])
		return;
	if (rep->type == REDIS_REPLY_ERROR) {
		on_setup_reply(r, (void *)"PING", rep);
		return;
	}
	evtimer_del(r->connect_timer);
	r->backoff = r->o.backoff_min;
	set_state(r, MGW_REDIS_UP, NULL);
}

/* ROLE of a server a sentinel named: anything but a master (a stale
 * answer during a failover) fails the attempt. */
static void on_role_reply(struct mgw_redis *r, void *priv, redisReply *rep)
{
	struct timeval now = {0, 0};

	(void)priv;
	if (!rep || r->setup_err[0])
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

/* The name the server's certificate must carry: tls.server_name, else
 * the URL's host, or with Sentinel the address the sentinel named. */
static const char *tls_name(const struct mgw_redis *r, const char *addr)
{
	return r->tls_name ? r->tls_name : addr;
}

/* Connects to r->addr (or the socket path) and queues the setup:
 * AUTH, SELECT, ROLE (Sentinel), PING, sent once connected. */
static void start_context(struct mgw_redis *r)
{
	struct link *l = &r->m;
	struct timeval tv = mgw_tv(r->o.timeout);
	int rc = 0;

	if (link_open(r, l, r->addr, r->port, r->unix_path != NULL,
	              tls_name(r, r->master_name ? r->addr : r->host)) != 0) {
		r->st.failures++;
		went_down(r, r->why);
		return;
	}
	r->setup_err[0] = '\0';
	evtimer_add(r->connect_timer, &tv);
	if (r->password && r->user)
		rc = link_sendf(l, on_setup_reply, (void *)"AUTH", "AUTH %s %s",
		                r->user, r->password);
	else if (r->password)
		rc = link_sendf(l, on_setup_reply, (void *)"AUTH", "AUTH %s",
		                r->password);
	if (rc == 0 && r->db)
		rc = link_sendf(l, on_setup_reply, (void *)"SELECT", "SELECT %d",
		                r->db);
	if (rc == 0 && r->master_name)
		rc = link_sendf(l, on_role_reply, NULL, "ROLE");
	if (rc == 0)
		rc = link_sendf(l, on_ready_reply, NULL, "PING");
	if (rc != 0) {
		r->st.failures++;
		drop_context(r, "out of memory");
	}
}

/* ---- Sentinel ---- */

static void on_sentinel_reply(struct mgw_redis *r, void *priv,
                              redisReply *rep)
{
	long long port = 0;

	(void)priv;
	if (!rep || r->freeing)
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
		link_close(&r->s);
		evtimer_del(r->connect_timer);
		start_context(r);
		return;
	}
	/* nil: this sentinel does not know the master (yet) */
	link_close(&r->s);
	r->s_tried++;
	sentinel_next(r);
}

/* Asks the next sentinel of this round for the master's address; after
 * the last one the attempt failed.  With a rediss:// URL the sentinels
 * are asked over TLS too, with the same options. */
static void sentinel_next(struct mgw_redis *r)
{
	const struct sentinel_addr *sa;
	struct timeval tv = mgw_tv(r->o.timeout);

	if (r->freeing)
		return;
	while (r->s_tried < r->n_sentinels) {
		sa = &r->sentinels[(r->s_first + r->s_tried) % r->n_sentinels];
		if (link_open(r, &r->s, sa->host, sa->port, 0,
		              tls_name(r, sa->host)) == 0 &&
		    link_sendf(&r->s, on_sentinel_reply, NULL,
		               "SENTINEL get-master-addr-by-name %s",
		               r->master_name) == 0) {
			evtimer_add(r->connect_timer, &tv);
			return;
		}
		link_close(&r->s);
		r->s_tried++;
	}
	r->st.failures++;
	went_down(r, "no sentinel named the master");
}

/* A READONLY answer: the master was demoted; reconnect (asking the
 * sentinels again), from the loop. */
static void on_drop(evutil_socket_t fd, short what, void *arg)
{
	struct mgw_redis *r = arg;

	(void)fd;
	(void)what;
	if (r->m.bev && !r->s.bev)
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

/* Names go through evdns: the connection only ever sees a numeric
 * address, and the loop never blocks on getaddrinfo. */
static void connect_now(struct mgw_redis *r)
{
	int rc;

	if (r->m.bev || r->resolving || r->freeing || r->s.bev)
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

/* The sentinels of o, parsed ("HOST:PORT", numeric hosts: a sentinel
 * names its master by address too). */
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

SSL_CTX *mgw_redis_tls_ctx(const struct mgw_redis_tls_conf *t, char *err,
                           size_t errlen)
{
	SSL_CTX *ctx = mgw_tls_client_ctx(t ? t->ca_file : NULL,
	                                  t ? t->verify : 1, err, errlen);

	if (ctx && t && (t->cert_file || t->key_file) &&
	    mgw_tls_client_cert(ctx, t->cert_file, t->key_file, err,
	                        errlen) != 0) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

/* The TLS context of a rediss:// connection, built once per connection
 * (its files are read here, not on every reconnect). */
static int tls_setup(struct mgw_redis *r, const struct mgw_redis_tls_conf *t,
                     char *err, size_t errlen)
{
	char why[200];

	r->tls = mgw_redis_tls_ctx(t, why, sizeof(why));
	if (!r->tls) {
		snprintf(err, errlen, "%s: %s", r->display, why);
		return MGW_EINVAL;
	}
	if (t && t->server_name && !(r->tls_name = strdup(t->server_name))) {
		snprintf(err, errlen, "out of memory");
		return MGW_ENOMEM;
	}
	return 0;
}

struct mgw_redis *mgw_redis_new(struct event_base *base,
                                const struct mgw_redis_opts *o, char *err,
                                size_t errlen)
{
	struct mgw_redis *r = calloc(1, sizeof(*r));
	int tls = 0;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->base = base;
	r->o = *o;
	r->o.tls = NULL;            /* read by tls_setup only */
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
	r->m.r = r->s.r = r;
	r->m.tail = &r->m.head;
	r->s.tail = &r->s.head;
	if (parse_url(r, r->url, &tls, err, errlen) != 0 ||
	    (tls && tls_setup(r, o->tls, err, errlen) != 0))
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
	link_close(&r->m); /* pending commands: answered MGW_EIO */
	link_close(&r->s);
	SSL_CTX_free(r->tls);
	free(r->tls_name);
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

static void on_reply(struct mgw_redis *r, void *priv, redisReply *rep)
{
	struct cmd *c = priv;

	if (!c->answered) {
		c->answered = 1;
		if (rep && rep->type == REDIS_REPLY_ERROR) {
			struct timeval now = {0, 0};

			r->st.errors++;
			if (r->master_name && !r->freeing &&
			    strncmp(rep->str, "READONLY", 8) == 0)
				evtimer_add(r->drop_ev, &now);
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
	if (r->m.bev)
		drop_context(r, "a command timed out");
}

/* Queues an encoded command (n < 0: encoding failed). */
static int cmd_send(struct mgw_redis *r, char *buf, int n,
                    mgw_redis_reply_cb cb, void *arg)
{
	struct timeval tv = mgw_tv(r->o.timeout);
	struct cmd *c = n >= 0 ? calloc(1, sizeof(*c)) : NULL;
	int rc;

	if (c) {
		c->r = r;
		c->cb = cb;
		c->arg = arg;
		c->timer = evtimer_new(r->base, on_cmd_timeout, c);
	}
	rc = c && c->timer ? link_send(&r->m, buf, (size_t)n, on_reply, c)
	                   : MGW_ENOMEM;
	if (n >= 0)
		redisFreeCommand(buf);
	if (rc != 0) {
		if (c && c->timer)
			event_free(c->timer);
		free(c);
		return rc;
	}
	evtimer_add(c->timer, &tv);
	r->st.commands++;
	return 0;
}

static int refused(const struct mgw_redis *r)
{
	return r->state == MGW_REDIS_DOWN || !r->m.bev || r->freeing;
}

int mgw_redis_command_argv(struct mgw_redis *r, int argc, const char **argv,
                           const size_t *argvlen, mgw_redis_reply_cb cb,
                           void *arg)
{
	char *buf = NULL;
	int n;

	if (refused(r))
		return MGW_EIO;
	n = redisFormatCommandArgv(&buf, argc, argv, argvlen);
	return cmd_send(r, buf, n, cb, arg);
}

int mgw_redis_command(struct mgw_redis *r, mgw_redis_reply_cb cb, void *arg,
                      const char *fmt, ...)
{
	char *buf = NULL;
	va_list ap;
	int n;

	if (refused(r))
		return MGW_EIO;
	va_start(ap, fmt);
	n = redisvFormatCommand(&buf, fmt, ap);
	va_end(ap);
	return cmd_send(r, buf, n, cb, arg);
}
