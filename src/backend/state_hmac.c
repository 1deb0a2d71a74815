/* state_hmac.c - the "hmac" handle design: the counter value and its
 * expiry travel inside a handle signed with HMAC-SHA256 (handle_hmac.h).
 * Any replica holding the key continues the counter, so no replica holds
 * state; every increment returns a successor handle. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>

#include <openssl/crypto.h>

#include "backend/handle_hmac.h"
#include "backend/state.h"
#include "core/errors.h"
#include "core/log.h"
#include "util/time.h"

#define HMAC_MAX_KEYS 16

struct hmac_store {
	struct mgw_be_store base;
	struct mgw_hmac_key keys[HMAC_MAX_KEYS]; /* keys[0] signs */
	size_t nkeys;
	int64_t ttl_s;
	int random_key;
};

static void seal_and_reply(struct hmac_store *h, int64_t value,
                           mgw_be_store_cb cb, void *arg)
{
	char *handle = mgw_hmac_handle_seal(&h->keys[0], value,
	                                    mgw_wall_s() + h->ttl_s);

	if (!handle) {
		cb(MGW_ENOMEM, 0, NULL, arg);
		return;
	}
	cb(0, value, handle, arg);
	free(handle);
}

static void hmac_create(struct mgw_be_store *s, mgw_be_store_cb cb, void *arg)
{
	seal_and_reply((struct hmac_store *)s, 0, cb, arg);
}

static void hmac_increment(struct mgw_be_store *s, const char *handle,
                           mgw_be_store_cb cb, void *arg)
{
	struct hmac_store *h = (struct hmac_store *)s;
	int64_t value = 0;
	int rc = mgw_hmac_handle_open(h->keys, h->nkeys, handle, mgw_wall_s(),
	                              &value);

	if (rc != 0) {
		cb(rc == MGW_EEXPIRED ? MGW_EEXPIRED : MGW_EAUTH, 0, NULL, arg);
		return;
	}
	seal_and_reply(h, value + 1, cb, arg);
}

static void hmac_describe(const struct mgw_be_store *s, json_t *obj)
{
	const struct hmac_store *h = (const struct hmac_store *)s;

	json_object_set_new(obj, "key_id", json_string(h->keys[0].kid));
	json_object_set_new(obj, "keys", json_integer((json_int_t)h->nkeys));
	json_object_set_new(obj, "random_key", json_boolean(h->random_key));
}

static void hmac_free(struct mgw_be_store *s)
{
	struct hmac_store *h = (struct hmac_store *)s;

	if (!h)
		return;
	/* Key material should not linger in freed heap memory. */
	OPENSSL_cleanse(h->keys, sizeof(h->keys));
	free(h);
}

static const struct mgw_be_store_ops hmac_ops = {
	.name = "hmac",
	.create = hmac_create,
	.increment = hmac_increment,
	.describe = hmac_describe,
	.free = hmac_free,
};

struct mgw_be_store *mgw_be_store_hmac_new(const char *key_file, double ttl,
                                           char *err, size_t errlen)
{
	struct hmac_store *h = calloc(1, sizeof(*h));
	int n;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->base.ops = &hmac_ops;
	h->ttl_s = ttl >= 1.0 ? (int64_t)ttl : 1;
	if (key_file) {
		n = mgw_hmac_keys_load(key_file, h->keys, HMAC_MAX_KEYS, err, errlen);
		if (n < 1)
			goto fail;
		h->nkeys = (size_t)n;
	} else {
		if (mgw_hmac_key_random(&h->keys[0]) != 0) {
			snprintf(err, errlen, "cannot generate a random HMAC key");
			goto fail;
		}
		h->nkeys = 1;
		h->random_key = 1;
		mgw_warn(NULL, "hmac state without --key-file: using a random key, "
		               "so other replicas cannot continue this replica's "
		               "handles");
	}
	return &h->base;
fail:
	hmac_free(&h->base);
	return NULL;
}
