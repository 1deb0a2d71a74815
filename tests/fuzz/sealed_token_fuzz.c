/* sealed_token_fuzz.c - libFuzzer target for sealed session tokens
 * (src/session/store_sealed.c).
 *
 * Mode 0 (first byte % 3 == 0): the rest is a plaintext record given to
 * the decoder that runs after a token authenticated (the core layout of
 * session/record_codec.h, which record_codec_fuzz also drives).  Anything it accepts
 * must encode back to exactly the same bytes (one spelling per record).
 * Mode 1: the rest is a client's Mcp-Session-Id presented to a sealed
 * store: without the key nothing may open (always not found).
 * Mode 2: the rest is an initialize body; the record is sealed by one
 * store, must open on another with the same key to the same body, and
 * with any one character of the token changed must not open. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "conf/config-t.h"
#include "core/errors.h"
#include "session/record_codec.h"
#include "session/session.h"
#include "session/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static struct event_base *base;
static struct mgw_sessions_conf conf;
static struct mgw_session_store *sa, *sb;
static struct mgw_session_view *va, *vb;

struct result {
	int done, status;
	struct mgw_session *rec;
};

static void on_done(void *arg, int status, struct mgw_session *rec)
{
	struct result *r = arg;

	r->done = 1;
	r->status = status;
	r->rec = rec;
}

static void wait(struct result *r)
{
	for (int i = 0; i < 100 && !r->done; i++)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	if (!r->done)
		abort();
}

static void init(void)
{
	struct mgw_key256 k;
	char err[128];

	if (base)
		return;
	base = event_base_new();
	conf.store = MGW_SESSION_STORE_SEALED;
	conf.idle_timeout = 60;
	conf.max_lifetime = 3600;
	conf.max_sessions = 64;         /* small caches: eviction exercised */
	conf.max_memory = 1 << 20;
	conf.max_initialize_bytes = 8192;
	memset(&k, 0, sizeof(k));
	strcpy(k.kid, "fz");
	memset(k.key, 0x5a, sizeof(k.key));
	sa = mgw_session_store_sealed_new(&conf, NULL, &k, 1, err, sizeof(err));
	sb = mgw_session_store_sealed_new(&conf, NULL, &k, 1, err, sizeof(err));
	if (!base || !sa || !sb)
		abort();
	va = mgw_session_view_new(sa, base, err, sizeof(err));
	vb = mgw_session_view_new(sb, base, err, sizeof(err));
	if (!va || !vb)
		abort();
}

static void parse_plain(const uint8_t *d, size_t n)
{
	struct mgw_session *s = mgw_record_decode(d, n, MGW_RECORD_CORE);
	unsigned char *again;
	size_t len = 0;

	if (!s)
		return;
	again = mgw_record_encode(s, MGW_RECORD_CORE, &len);
	if (!again || len != n || memcmp(again, d, n) != 0)
		abort();
	free(again);
	mgw_session_unref(s);
}

static int lookup(struct mgw_session_view *v, const char *id, size_t n,
                  struct mgw_session **rec)
{
	struct result r = {0};

	if (mgw_session_lookup(v, id, n, NULL, on_done, &r, NULL) != 0)
		abort();
	wait(&r);
	*rec = r.rec;
	return r.status;
}

static void present(const uint8_t *d, size_t n)
{
	struct mgw_session *rec = NULL;

	if (lookup(vb, (const char *)d, n, &rec) != MGW_ENOTFOUND || rec)
		abort();
}

static void seal_open(const uint8_t *d, size_t n)
{
	struct mgw_session *draft = mgw_session_new(), *rec = NULL;
	struct result r = {0};
	char *tok;
	size_t pos;

	if (n < 3 || mgw_session_set_init(draft, d + 2, n - 2) != 0) {
		mgw_session_unref(draft);
		return;
	}
	mgw_session_set_pin(draft, "http://127.0.0.1:9001", "sid");
	if (mgw_session_create(va, draft, on_done, &r, NULL) != 0)
		abort();
	wait(&r);
	if (n - 2 > conf.max_initialize_bytes) {
		if (r.status != MGW_ELIMIT)
			abort();
		return;
	}
	if (r.status != 0)
		abort();
	tok = strdup(r.rec->id);
	mgw_session_unref(r.rec);
	if (lookup(vb, tok, strlen(tok), &rec) != 0 ||
	    rec->init_len != n - 2 || memcmp(rec->init_body, d + 2, n - 2))
		abort();
	mgw_session_unref(rec);
	pos = ((size_t)d[0] << 8 | d[1]) % strlen(tok);
	tok[pos] = b64url[(strchr(b64url, tok[pos]) - b64url + 1) % 64];
	if (lookup(vb, tok, strlen(tok), &rec) != MGW_ENOTFOUND || rec)
		abort();
	free(tok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	init();
	switch (data[0] % 3) {
	case 0:
		parse_plain(data + 1, size - 1);
		break;
	case 1:
		present(data + 1, size - 1);
		break;
	default:
		seal_open(data + 1, size - 1);
		break;
	}
	return 0;
}
