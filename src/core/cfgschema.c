/* cfgschema.c - applies the declarative section tables of cfgschema-t.h to
 * a document tree: one converter per value type, one walk per mapping.
 * Every error names the node's position and the key path. */
#include "autoconf.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfgschema.h"
#include "core/cfgtree.h"
#include "core/errors.h"
#include "util/parse.h"

/* ---- key path and messages ---- */

static void path_append(struct mgw_cfg_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void path_append(struct mgw_cfg_ctx *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->plen >= sizeof(c->path) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(c->path + c->plen, sizeof(c->path) - c->plen, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->plen += (size_t)n;
	if (c->plen >= sizeof(c->path))
		c->plen = sizeof(c->path) - 1;
}

/* Appends a key; bytes that would garble a one-line message become '?'. */
static size_t path_push_key(struct mgw_cfg_ctx *c, const char *key)
{
	size_t saved = c->plen;
	char clean[64];
	size_t i;

	for (i = 0; key[i] && i < sizeof(clean) - 1; i++)
		clean[i] = (key[i] >= 0x20 && key[i] < 0x7f) ? key[i] : '?';
	clean[i] = '\0';
	path_append(c, "%s%s", c->plen ? "." : "", clean);
	return saved;
}

static size_t path_push_index(struct mgw_cfg_ctx *c, size_t i)
{
	size_t saved = c->plen;

	path_append(c, "[%zu]", i);
	return saved;
}

static void path_pop(struct mgw_cfg_ctx *c, size_t saved)
{
	c->plen = saved;
	c->path[saved] = '\0';
}

int mgw_cfg_fail(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *at,
                 const char *key, const char *fmt, ...)
{
	size_t saved = c->plen;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* messages quote values, which may span lines: keep one line */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (key)
		path_push_key(c, key);
	if (c->err && c->errlen)
		snprintf(c->err, c->errlen, "%s:%u:%u: %s%s%s", c->name, at->line,
		         at->col, c->path, c->plen ? ": " : "", msg);
	path_pop(c, saved);
	return MGW_EINVAL;
}

/* How a node that had the wrong type looks, for "expected X, got Y". */
static const char *got(const struct mgw_cfg_node *n, char *buf, size_t len)
{
	if (n->kind == MGW_CFG_MAP)
		return "a mapping";
	if (n->kind == MGW_CFG_SEQ)
		return "a list";
	if (mgw_cfg_node_is_null(n))
		return "null";
	if (!n->plain)
		return "a quoted string";
	snprintf(buf, len, "'%.40s'", n->text);
	return buf;
}

static int wrong_type(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *n,
                      const char *expected)
{
	char buf[64];

	return mgw_cfg_fail(c, n, NULL, "expected %s, got %s", expected,
	                    got(n, buf, sizeof(buf)));
}

/* A scalar that is not null and holds no NUL byte. */
static int need_text(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *n,
                     const char *expected)
{
	if (n->kind != MGW_CFG_SCALAR || mgw_cfg_node_is_null(n))
		return wrong_type(c, n, expected);
	if (strlen(n->text) != n->len)
		return mgw_cfg_fail(c, n, NULL, "must not contain a NUL byte");
	return 0;
}

static int out_of_memory(struct mgw_cfg_ctx *c, const struct mgw_cfg_node *n)
{
	mgw_cfg_fail(c, n, NULL, "out of memory");
	return MGW_ENOMEM;
}

/* ---- storing into members of any integer width ---- */

static void store_int(void *p, size_t size, long long v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;
	uint64_t u64 = (uint64_t)v;

	switch (size) {
	case 1: memcpy(p, &u8, 1); break;
	case 2: memcpy(p, &u16, 2); break;
	case 4: memcpy(p, &u32, 4); break;
	case 8: memcpy(p, &u64, 8); break;
	default: assert(!"integer member of unsupported size");
	}
}

static void store_string(void *p, char *s)
{
	char *old;

	memcpy(&old, p, sizeof(old));
	free(old);
	memcpy(p, &s, sizeof(s));
}

/* ---- value converters, one per type ---- */

typedef int (*convert_fn)(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                          void *base, const struct mgw_cfg_node *n);

/* A copy of a file name value: relative to c->dir when the field is a
 * file and the name is relative, as written otherwise. */
static char *file_name(const struct mgw_cfg_ctx *c,
                       const struct mgw_cfg_field *f, const char *text)
{
	size_t dl, tl;
	char *s;

	if (!(f->flags & MGW_CFG_FILE) || !c->dir || !*text || *text == '/')
		return strdup(text);
	dl = strlen(c->dir);
	tl = strlen(text);
	s = malloc(dl + 1 + tl + 1);
	if (!s)
		return NULL;
	memcpy(s, c->dir, dl);
	s[dl] = '/';
	memcpy(s + dl + 1, text, tl + 1);
	return s;
}

static int conv_string(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                       void *base, const struct mgw_cfg_node *n)
{
	char why[256] = "";
	char *s;
	int rc = need_text(c, n, "a string");

	if (rc != 0)
		return rc;
	s = file_name(c, f, n->text);
	if (!s)
		return out_of_memory(c, n);
	if (f->check && f->check(s, why, sizeof(why)) != 0) {
		free(s);
		return mgw_cfg_fail(c, n, NULL, "%s", why);
	}
	store_string((char *)base + f->off, s);
	return 0;
}

static int conv_bool(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                     void *base, const struct mgw_cfg_node *n)
{
	static const struct mgw_cfg_enum spell[] = {
		{"true", 1}, {"false", 0}, {"True", 1}, {"False", 0},
		{"TRUE", 1}, {"FALSE", 0}, {"yes", 1}, {"no", 0},
		{"on", 1}, {"off", 0}, {NULL, 0},
	};
	int v;

	if (n->kind != MGW_CFG_SCALAR || !n->plain ||
	    mgw_cfg_enum_lookup(spell, n->text, &v) != 0)
		return wrong_type(c, n, "a boolean (true or false)");
	store_int((char *)base + f->off, f->size, v);
	return 0;
}

static int all_digits(const char *s)
{
	if (*s == '-')
		s++;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int conv_int(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                    void *base, const struct mgw_cfg_node *n)
{
	long long v;

	if (n->kind != MGW_CFG_SCALAR || !n->plain || mgw_cfg_node_is_null(n))
		return wrong_type(c, n, "an integer");
	if (mgw_parse_int(n->text, f->min, f->max, &v) != 0) {
		if (!all_digits(n->text))
			return wrong_type(c, n, "an integer");
		return mgw_cfg_fail(c, n, NULL,
		                    "out of range: must be between %lld and %lld",
		                    f->min, f->max);
	}
	store_int((char *)base + f->off, f->size, v);
	return 0;
}

/* Sizes read back in the unit they were most likely written in. */
static const char *fmt_size(long long v, char *buf, size_t len)
{
	static const struct { const char *unit; unsigned shift; } u[] = {
		{"GiB", 30}, {"MiB", 20}, {"KiB", 10},
	};

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		long long unit = 1LL << u[i].shift;
		if (v >= unit && v % unit == 0) {
			snprintf(buf, len, "%lld%s", v / unit, u[i].unit);
			return buf;
		}
	}
	snprintf(buf, len, "%lld byte%s", v, v == 1 ? "" : "s");
	return buf;
}

static int conv_size(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                     void *base, const struct mgw_cfg_node *n)
{
	char lo[32], hi[32];
	uint64_t v;
	int rc = need_text(c, n, "a size (4096, 64KiB, 4MiB, 1GiB)");

	if (rc != 0)
		return rc;
	if (mgw_parse_size(n->text, &v) != 0)
		return wrong_type(c, n, "a size (4096, 64KiB, 4MiB, 1GiB)");
	if (v < (uint64_t)f->min || v > (uint64_t)f->max)
		return mgw_cfg_fail(c, n, NULL,
		                    "out of range: must be between %s and %s",
		                    fmt_size(f->min, lo, sizeof(lo)),
		                    fmt_size(f->max, hi, sizeof(hi)));
	store_int((char *)base + f->off, f->size, (long long)v);
	return 0;
}

static const char *fmt_duration(double v, char *buf, size_t len)
{
	if (v < 1.0)
		snprintf(buf, len, "%gms", v * 1000.0);
	else if (v >= 3600.0 && (long long)v % 3600 == 0 && v == (long long)v)
		snprintf(buf, len, "%gh", v / 3600.0);
	else if (v >= 60.0 && (long long)v % 60 == 0 && v == (long long)v)
		snprintf(buf, len, "%gm", v / 60.0);
	else
		snprintf(buf, len, "%gs", v);
	return buf;
}

static int conv_duration(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                         void *base, const struct mgw_cfg_node *n)
{
	static const char what[] = "a duration (250ms, 10s, 2m, 1h or seconds)";
	char lo[32], hi[32];
	double v;
	int rc = need_text(c, n, what);

	if (rc != 0)
		return rc;
	if (mgw_parse_duration(n->text, &v) != 0)
		return wrong_type(c, n, what);
	if (v < f->dmin || v > f->dmax)
		return mgw_cfg_fail(c, n, NULL,
		                    "out of range: must be between %s and %s",
		                    fmt_duration(f->dmin, lo, sizeof(lo)),
		                    fmt_duration(f->dmax, hi, sizeof(hi)));
	assert(f->size == sizeof(double));
	memcpy((char *)base + f->off, &v, sizeof(v));
	return 0;
}

/* A plain decimal: [-]DIGITS[.DIGITS] or [-].DIGITS.  No exponents, hex,
 * "inf" or "nan", which strtod would take but nobody writes on purpose. */
static int plain_decimal(const char *s)
{
	size_t digits = 0;

	if (*s == '-')
		s++;
	for (; *s >= '0' && *s <= '9'; s++)
		digits++;
	if (*s == '.') {
		s++;
		for (; *s >= '0' && *s <= '9'; s++)
			digits++;
	}
	return *s == '\0' && digits > 0;
}

static int conv_number(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                       void *base, const struct mgw_cfg_node *n)
{
	double v;

	if (n->kind != MGW_CFG_SCALAR || !n->plain || mgw_cfg_node_is_null(n) ||
	    strlen(n->text) != n->len || !plain_decimal(n->text))
		return wrong_type(c, n, "a number");
	v = strtod(n->text, NULL);
	if (!(v >= f->dmin && v <= f->dmax))
		return mgw_cfg_fail(c, n, NULL,
		                    "out of range: must be between %g and %g",
		                    f->dmin, f->dmax);
	assert(f->size == sizeof(double));
	memcpy((char *)base + f->off, &v, sizeof(v));
	return 0;
}

static int conv_enum(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                     void *base, const struct mgw_cfg_node *n)
{
	char list[256] = "";
	size_t used = 0;
	int v;

	if (n->kind == MGW_CFG_SCALAR && !mgw_cfg_node_is_null(n) &&
	    strlen(n->text) == n->len &&
	    mgw_cfg_enum_lookup(f->enums, n->text, &v) == 0) {
		store_int((char *)base + f->off, f->size, v);
		return 0;
	}
	for (size_t i = 0; f->enums[i].name && used < sizeof(list); i++) {
		int w = snprintf(list + used, sizeof(list) - used, "%s%s",
		                 i ? ", " : "", f->enums[i].name);
		used += w > 0 ? (size_t)w : 0;
	}
	if (n->kind == MGW_CFG_SCALAR && !mgw_cfg_node_is_null(n))
		return mgw_cfg_fail(c, n, NULL, "'%.40s' is not one of: %s",
		                    n->text, list);
	return mgw_cfg_fail(c, n, NULL, "expected one of: %s", list);
}

static int conv_section(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                        void *base, const struct mgw_cfg_node *n)
{
	if (f->flags & MGW_CFG_PRESENCE)
		store_int((char *)base + f->aux, sizeof(int), 1);
	return mgw_cfg_apply(c, f->sub, (char *)base + f->off, n);
}

static void release_list(const struct mgw_cfg_field *f, void *base)
{
	char *items;
	size_t count;

	memcpy(&items, (char *)base + f->off, sizeof(items));
	memcpy(&count, (char *)base + f->aux, sizeof(count));
	for (size_t i = 0; i < count; i++)
		mgw_cfg_release(f->sub, items + i * f->sub->size);
	free(items);
	items = NULL;
	count = 0;
	memcpy((char *)base + f->off, &items, sizeof(items));
	memcpy((char *)base + f->aux, &count, sizeof(count));
}

/* Items get their defaults first and are counted as soon as they exist, so
 * that a failure half way leaves a list mgw_cfg_release can free. */
static int conv_list(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                     void *base, const struct mgw_cfg_node *n)
{
	char *items;
	size_t count = 0;

	if (mgw_cfg_node_is_null(n))
		return 0;
	if (n->kind != MGW_CFG_SEQ)
		return wrong_type(c, n, "a list");
	release_list(f, base);
	items = calloc(n->n ? n->n : 1, f->sub->size);
	if (!items)
		return out_of_memory(c, n);
	memcpy((char *)base + f->off, &items, sizeof(items));
	for (size_t i = 0; i < n->n; i++) {
		void *item = items + i * f->sub->size;
		size_t saved;
		int rc;

		mgw_cfg_defaults(f->sub, item);
		count = i + 1;
		memcpy((char *)base + f->aux, &count, sizeof(count));
		saved = path_push_index(c, i);
		rc = n->kids[i]->kind == MGW_CFG_MAP || mgw_cfg_node_is_null(n->kids[i])
		             ? mgw_cfg_apply(c, f->sub, item, n->kids[i])
		             : wrong_type(c, n->kids[i], "a mapping");
		path_pop(c, saved);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static void release_strlist(const struct mgw_cfg_field *f, void *base)
{
	char **items;
	size_t count;

	memcpy(&items, (char *)base + f->off, sizeof(items));
	memcpy(&count, (char *)base + f->aux, sizeof(count));
	for (size_t i = 0; i < count; i++)
		free(items[i]);
	free(items);
	items = NULL;
	count = 0;
	memcpy((char *)base + f->off, &items, sizeof(items));
	memcpy((char *)base + f->aux, &count, sizeof(count));
}

/* Each item is a string checked like a STRING field; counted as soon as
 * it is stored, so a failure half way leaves a list that can be freed. */
static int conv_strlist(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                        void *base, const struct mgw_cfg_node *n)
{
	char **items;
	size_t count = 0;

	if (mgw_cfg_node_is_null(n))
		return 0;
	if (n->kind != MGW_CFG_SEQ)
		return wrong_type(c, n, "a list of strings");
	release_strlist(f, base);
	items = calloc(n->n ? n->n : 1, sizeof(*items));
	if (!items)
		return out_of_memory(c, n);
	memcpy((char *)base + f->off, &items, sizeof(items));
	for (size_t i = 0; i < n->n; i++) {
		char why[256] = "";
		size_t saved = path_push_index(c, i);
		int rc = need_text(c, n->kids[i], "a string");

		if (rc == 0 && !(items[i] = strdup(n->kids[i]->text)))
			rc = out_of_memory(c, n->kids[i]);
		if (rc == 0) {
			count = i + 1;
			memcpy((char *)base + f->aux, &count, sizeof(count));
			if (f->check && f->check(items[i], why, sizeof(why)) != 0)
				rc = mgw_cfg_fail(c, n->kids[i], NULL, "%s", why);
		}
		path_pop(c, saved);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Keys and values alike are scalars; a key given twice is refused as
 * a section's would be.  Stored as a STRLIST of 2n strings, so release
 * and comparison are the list's. */
static int conv_strmap(struct mgw_cfg_ctx *c, const struct mgw_cfg_field *f,
                       void *base, const struct mgw_cfg_node *n)
{
	char **items;
	size_t count = 0;

	if (mgw_cfg_node_is_null(n))
		return 0;
	if (n->kind != MGW_CFG_MAP)
		return wrong_type(c, n, "a mapping of strings");
	release_strlist(f, base);
	items = calloc(n->n ? n->n : 1, sizeof(*items));
	if (!items)
		return out_of_memory(c, n);
	memcpy((char *)base + f->off, &items, sizeof(items));
	for (size_t i = 0; i + 1 < n->n; i += 2) {
		const struct mgw_cfg_node *k = n->kids[i], *v = n->kids[i + 1];
		char why[256] = "";
		size_t saved = path_push_key(c, k->text);
		int rc = k->kind == MGW_CFG_SCALAR ? need_text(c, v, "a string")
		                                   : wrong_type(c, k, "a string");

		for (size_t j = 0; rc == 0 && j < i; j += 2)
			if (strcmp(items[j], k->text) == 0)
				rc = mgw_cfg_fail(c, k, NULL, "duplicate key "
				                  "(first given at line %u)",
				                  n->kids[j]->line);
		if (rc == 0 && !(items[i] = strdup(k->text)))
			rc = out_of_memory(c, k);
		if (rc == 0 && !(items[i + 1] = strdup(v->text))) {
			free(items[i]);
			rc = out_of_memory(c, v);
		}
		if (rc == 0) {
			count = i + 2;
			memcpy((char *)base + f->aux, &count, sizeof(count));
			if (f->check && f->check(items[i + 1], why, sizeof(why)) != 0)
				rc = mgw_cfg_fail(c, v, NULL, "%s", why);
		}
		path_pop(c, saved);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static const convert_fn converters[] = {
	[MGW_CFG_STRING] = conv_string,
	[MGW_CFG_BOOL] = conv_bool,
	[MGW_CFG_INT] = conv_int,
	[MGW_CFG_DURATION] = conv_duration,
	[MGW_CFG_SIZE] = conv_size,
	[MGW_CFG_ENUM] = conv_enum,
	[MGW_CFG_SECTION] = conv_section,
	[MGW_CFG_LIST] = conv_list,
	[MGW_CFG_NUMBER] = conv_number,
	[MGW_CFG_STRLIST] = conv_strlist,
	[MGW_CFG_STRMAP] = conv_strmap,
};

/* ---- sections ---- */

static int find_field(const struct mgw_cfg_section *sec,
                      const struct mgw_cfg_node *key)
{
	for (size_t i = 0; i < sec->nfields; i++) {
		const char *k = sec->fields[i].key;
		if (strlen(k) == key->len && memcmp(k, key->text, key->len) == 0)
			return (int)i;
	}
	return -1;
}

/* Applies one "key: value" pair; keys remembers where each field was set. */
static int apply_pair(struct mgw_cfg_ctx *c, struct mgw_cfg_scope *sc,
                      const struct mgw_cfg_node **keys, void *obj,
                      const struct mgw_cfg_node *key,
                      const struct mgw_cfg_node *val)
{
	const struct mgw_cfg_field *f;
	size_t saved;
	int idx = find_field(sc->sec, key), rc;

	if (idx < 0)
		return mgw_cfg_fail(c, key, key->text, "unknown key");
	if (sc->val[idx])
		return mgw_cfg_fail(c, key, key->text,
		                    "duplicate key (first given at line %u)",
		                    keys[idx]->line);
	sc->val[idx] = val;
	keys[idx] = key;
	f = &sc->sec->fields[idx];
	saved = path_push_key(c, f->key);
	rc = converters[f->type](c, f, obj, val);
	path_pop(c, saved);
	return rc;
}

int mgw_cfg_apply(struct mgw_cfg_ctx *c, const struct mgw_cfg_section *sec,
                  void *obj, const struct mgw_cfg_node *n)
{
	struct mgw_cfg_scope sc = {.sec = sec, .map = n};
	const struct mgw_cfg_node *keys[MGW_CFG_MAX_FIELDS] = {0};
	size_t pairs = 0;
	int rc;

	assert(sec->nfields <= MGW_CFG_MAX_FIELDS);
	if (n->kind == MGW_CFG_MAP)
		pairs = n->n / 2;
	else if (!mgw_cfg_node_is_null(n))
		return wrong_type(c, n, "a mapping");
	for (size_t i = 0; i < pairs; i++) {
		rc = apply_pair(c, &sc, keys, obj, n->kids[2 * i],
		                n->kids[2 * i + 1]);
		if (rc != 0)
			return rc;
	}
	for (size_t i = 0; i < sec->nfields; i++)
		if ((sec->fields[i].flags & MGW_CFG_REQUIRED) && !sc.val[i])
			return mgw_cfg_fail(c, n, sec->fields[i].key,
			                    "missing required key");
	return sec->check ? sec->check(c, &sc, obj) : 0;
}

const struct mgw_cfg_node *mgw_cfg_scope_value(const struct mgw_cfg_scope *sc,
                                               const char *key)
{
	for (size_t i = 0; i < sc->sec->nfields; i++)
		if (strcmp(sc->sec->fields[i].key, key) == 0)
			return sc->val[i];
	return NULL;
}

const struct mgw_cfg_node *mgw_cfg_map_value(const struct mgw_cfg_node *map,
                                             const char *key)
{
	for (size_t i = 0; map->kind == MGW_CFG_MAP && i + 1 < map->n; i += 2)
		if (strcmp(map->kids[i]->text, key) == 0)
			return map->kids[i + 1];
	return map;
}

/* ---- defaults and release ---- */

static void apply_default(const struct mgw_cfg_field *f, void *obj)
{
	struct mgw_cfg_node n = {.kind = MGW_CFG_SCALAR, .line = 1, .col = 1,
	                         .plain = 1, .text = (char *)f->def,
	                         .len = strlen(f->def)};
	struct mgw_cfg_ctx c = {.name = "<built-in default>"};
	char err[512];

	c.err = err;
	c.errlen = sizeof(err);
	path_push_key(&c, f->key);
	if (converters[f->type](&c, f, obj, &n) != 0) {
		fprintf(stderr, "mcpgw: bad schema default: %s\n", err);
		abort();
	}
}

void mgw_cfg_defaults(const struct mgw_cfg_section *sec, void *obj)
{
	if (sec->init)
		sec->init(obj);
	for (size_t i = 0; i < sec->nfields; i++) {
		const struct mgw_cfg_field *f = &sec->fields[i];

		if (f->type == MGW_CFG_SECTION)
			mgw_cfg_defaults(f->sub, (char *)obj + f->off);
		else if (f->def)
			apply_default(f, obj);
	}
}

void mgw_cfg_release(const struct mgw_cfg_section *sec, void *obj)
{
	for (size_t i = 0; i < sec->nfields; i++) {
		const struct mgw_cfg_field *f = &sec->fields[i];

		if (f->type == MGW_CFG_STRING)
			store_string((char *)obj + f->off, NULL);
		else if (f->type == MGW_CFG_SECTION)
			mgw_cfg_release(f->sub, (char *)obj + f->off);
		else if (f->type == MGW_CFG_LIST)
			release_list(f, obj);
		else if (f->type == MGW_CFG_STRLIST || f->type == MGW_CFG_STRMAP)
			release_strlist(f, obj);
	}
}

/* ---- comparing two snapshots ---- */

static int list_equal(const struct mgw_cfg_field *f, const char *a,
                      const char *b)
{
	size_t na = *(const size_t *)(a + f->aux), nb = *(const size_t *)(b + f->aux);
	const char *ia = *(char *const *)(a + f->off), *ib = *(char *const *)(b + f->off);

	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (!mgw_cfg_equal(f->sub, ia + i * f->sub->size,
		                   ib + i * f->sub->size))
			return 0;
	return 1;
}

static int strlist_equal(const struct mgw_cfg_field *f, const char *a,
                         const char *b)
{
	size_t na = *(const size_t *)(a + f->aux), nb = *(const size_t *)(b + f->aux);
	char *const *ia = *(char **const *)(a + f->off);
	char *const *ib = *(char **const *)(b + f->off);

	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (strcmp(ia[i], ib[i]) != 0)
			return 0;
	return 1;
}

static int field_equal(const struct mgw_cfg_field *f, const char *a,
                       const char *b)
{
	const char *sa, *sb;

	switch (f->type) {
	case MGW_CFG_STRING:
		sa = *(char *const *)(a + f->off);
		sb = *(char *const *)(b + f->off);
		return sa == sb || (sa && sb && strcmp(sa, sb) == 0);
	case MGW_CFG_DURATION:
	case MGW_CFG_NUMBER:
		return *(const double *)(a + f->off) == *(const double *)(b + f->off);
	case MGW_CFG_SECTION:
		if (f->flags & MGW_CFG_PRESENCE &&
		    *(const int *)(a + f->aux) != *(const int *)(b + f->aux))
			return 0;
		return mgw_cfg_equal(f->sub, a + f->off, b + f->off);
	case MGW_CFG_LIST:
		return list_equal(f, a, b);
	case MGW_CFG_STRLIST:
	case MGW_CFG_STRMAP:
		return strlist_equal(f, a, b);
	default: /* integers, booleans, enums: f->size bytes */
		return memcmp(a + f->off, b + f->off, f->size) == 0;
	}
}

int mgw_cfg_equal(const struct mgw_cfg_section *sec, const void *a,
                  const void *b)
{
	for (size_t i = 0; i < sec->nfields; i++)
		if (!field_equal(&sec->fields[i], a, b))
			return 0;
	return 1;
}

/* ---- enums ---- */

int mgw_cfg_enum_lookup(const struct mgw_cfg_enum *e, const char *s, int *value)
{
	for (; s && e->name; e++) {
		if (strcmp(e->name, s) == 0) {
			*value = e->value;
			return 0;
		}
	}
	return MGW_EINVAL;
}

const char *mgw_cfg_enum_name(const struct mgw_cfg_enum *e, int value)
{
	for (; e->name; e++)
		if (e->value == value)
			return e->name;
	return "?";
}
