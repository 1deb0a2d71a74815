/* connlim.h - connections per client address (limits.
 * max_connections_per_client, limits.new_connections_per_client): one
 * table shared by every worker's HTTP server of the process, since
 * SO_REUSEPORT spreads one client's connections over the workers.
 *
 * The table counts the open connections and keeps a token bucket of new
 * ones (per_second tokens a second, per_second at most) for each client
 * address (IPv4, IPv6; other families are not limited).  It holds at most
 * MGW_CONNLIM_MAX_CLIENTS addresses: an address with open connections is
 * never forgotten, an idle one may be (least recently seen first); when
 * none can go, a new address is let in untracked. */
#ifndef MGW_HTTP_CONNLIM_H
#define MGW_HTTP_CONNLIM_H

#include <stdint.h>
#include <sys/socket.h>

#define MGW_CONNLIM_MAX_CLIENTS 65536

enum mgw_connlim_verdict {
	MGW_CONNLIM_OK = 0,
	MGW_CONNLIM_CONCURRENT,   /* max_connections_per_client open already */
	MGW_CONNLIM_RATE,         /* over new_connections_per_client */
};

/* What an admitted connection holds, for mgw_http_connlim_leave. */
struct mgw_connlim_ticket {
	unsigned char addr[16];
	unsigned char len;        /* 0: nothing held */
};

struct mgw_http_connlim;

/* A table: max_concurrent open connections per address (0 = no limit),
 * per_second new connections per address (0 = no limit); seed keys the
 * hash.  NULL on no memory. */
struct mgw_http_connlim *mgw_http_connlim_new(uint32_t max_concurrent,
                                              uint32_t per_second,
                                              uint64_t seed);
void mgw_http_connlim_free(struct mgw_http_connlim *cl);

/* A new connection from sa at now_ns: MGW_CONNLIM_OK (then *tk holds it
 * until mgw_http_connlim_leave) or why it is refused (*tk holds
 * nothing).  Any thread. */
enum mgw_connlim_verdict mgw_http_connlim_enter(struct mgw_http_connlim *cl,
                                                const struct sockaddr *sa,
                                                uint64_t now_ns,
                                                struct mgw_connlim_ticket *tk);

/* The connection of tk ended (nothing happens when tk holds nothing). */
void mgw_http_connlim_leave(struct mgw_http_connlim *cl,
                            struct mgw_connlim_ticket *tk);

/* Open connections counted for the address of sa (tests, stats). */
uint32_t mgw_http_connlim_open(struct mgw_http_connlim *cl,
                               const struct sockaddr *sa);

#endif
