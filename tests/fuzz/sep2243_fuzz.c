/* sep2243_fuzz.c - libFuzzer target for SEP-2243 header handling.
 *
 * Input layout: the bytes up to the first '\n' are a header value fed to
 * the sentinel decoder and encoder (round-trip properties checked); the
 * rest is "BODY\nName: value\nName: value..." run through classification
 * and mgw_sep2243_validate with two declared Mcp-Param headers. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/headers.h"
#include "mcp/sep2243.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void codec(const char *v, size_t len)
{
	size_t dlen, d2len;
	char *dec, *enc, *dec2;

	dec = mgw_sep2243_decode(v, len, &dlen);
	if (dec) {
		/* Whatever decodes must encode to something that decodes back
		 * to the same bytes. */
		enc = mgw_sep2243_encode(dec, dlen);
		if (!enc)
			abort();
		dec2 = mgw_sep2243_decode(enc, strlen(enc), &d2len);
		if (!dec2 || d2len != dlen || memcmp(dec, dec2, dlen))
			abort();
		free(dec2);
		free(enc);
		free(dec);
	}
	/* Encoding never produces a value a header cannot carry. */
	enc = mgw_sep2243_encode(v, len);
	if (!enc)
		abort();
	if (!mgw_header_value_valid(enc, strlen(enc)))
		abort();
	free(enc);
}

static void validate(const char *p, size_t len)
{
	static const struct mgw_sep2243_param params[] = {
		{ "Region", "region" }, { "Deep", "/a/b~1c" },
	};
	struct mgw_sep2243_verdict v;
	struct mgw_headers h;
	struct mgw_jrpc_msg m;
	const char *nl = memchr(p, '\n', len), *end = p + len;

	if (!nl)
		nl = end;
	if (mgw_jrpc_classify(p, (size_t)(nl - p), 0, &m) < 0)
		return;
	mgw_headers_init(&h);
	p = nl < end ? nl + 1 : end;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *colon;

		if (!eol)
			eol = end;
		colon = memchr(p, ':', (size_t)(eol - p));
		if (colon && mgw_header_name_valid(p, (size_t)(colon - p)) &&
		    mgw_header_value_valid(colon + 1, (size_t)(eol - colon - 1)))
			mgw_headers_add(&h, p, (size_t)(colon - p), colon + 1,
			                (size_t)(eol - colon - 1));
		p = eol < end ? eol + 1 : end;
	}
	if (mgw_sep2243_validate(&h, &m, NULL, params, 2, &v) != 0)
		abort();
	if (v.ok ? v.status != 200 : (v.status < 400 || v.code == 0 ||
	                               !v.message[0]))
		abort();
	if (v.code == -32022) {
		json_t *d = mgw_sep2243_unsupported_data(NULL, v.requested);

		if (!d)
			abort();
		json_decref(d);
	}
	mgw_headers_deinit(&h);
	mgw_jrpc_msg_deinit(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	const char *nl = memchr(p, '\n', size);
	size_t vlen = nl ? (size_t)(nl - p) : size;

	codec(p, vlen);
	if (nl)
		validate(nl + 1, size - vlen - 1);
	return 0;
}
