/* handler.h - the mode handlers of the request pipeline.
 *
 * A handler is what runs once dispatch has classified the request, run
 * the request checks and chosen the route (pipeline.h): the stateless
 * balancer (stateless.c) or the stateful session terminator
 * (stateful.c).  The transaction calls it for each upstream event; the
 * relay (relay.h) answers the client once the handler hands it a head.
 * Every hook but start and on_error may be NULL. */
#ifndef MGW_PROXY_HANDLER_H
#define MGW_PROXY_HANDLER_H

#include <stddef.h>

#include "http/client-t.h"
#include "http/headers-t.h"
#include "proxy/txn-t.h"

struct mgw_handler {
	const char *name;
	unsigned bit;          /* MGW_H_* (request checks name theirs) */
	/* The request passed the checks and has its route: go upstream or
	 * answer.  t is answered in every case, now or later. */
	void (*start)(struct mgw_txn *t);
	/* An upstream answer head (status already reported to the server's
	 * health): start the relay (mgw_relay_begin) or keep it. */
	void (*on_head)(struct mgw_txn *t, int status,
	                const struct mgw_headers *h);
	/* Body bytes and the end while the relay is not answering (a head
	 * the handler kept). */
	void (*on_data)(struct mgw_txn *t, const unsigned char *d, size_t n);
	void (*on_end)(struct mgw_txn *t);
	/* The attempt failed (already reported, logged, server released). */
	void (*on_error)(struct mgw_txn *t, const struct mgw_client_error *e);
	/* A relayed answer is complete (body: collected, or the stream's
	 * captured copy; NULL when none), right before its end goes out. */
	void (*on_complete)(struct mgw_txn *t, const void *body, size_t len);
	/* The relay started streaming (its head went out). */
	void (*on_stream)(struct mgw_txn *t);
	/* The transaction goes: free hd, cancel what the handler waits for. */
	void (*release)(struct mgw_txn *t);
};

#define MGW_H_STATELESS 1u
#define MGW_H_STATEFUL  2u
#define MGW_H_ALL       (MGW_H_STATELESS | MGW_H_STATEFUL)

extern const struct mgw_handler mgw_stateless_handler;
extern const struct mgw_handler mgw_stateful_handler;

#endif
