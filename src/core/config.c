/* config.c - loading a configuration file into a root object assembled
 * from the parts modules contribute, and the sections every command
 * shares (listeners, log levels).
 *
 * Core knows no module's keys: each module declares its section tables
 * next to its code (backend/conf_backend.c, proxy/conf_*.c,
 * session/conf_sessions.c, http/conf_limits.c) and conf/config.c lists
 * them as the parts of the mcpgw root.  Here the parts' top-level fields
 * are merged into one section for the engine (cfgschema.c), so unknown
 * and duplicate keys are found across all of them. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cfgcheck.h"
#include "core/cfgschema.h"
#include "core/cfgtree.h"
#include "core/config.h"
#include "core/errors.h"
#include "core/log.h"
#include "util/parse.h"

/* ---- shared sections ---- */

const struct mgw_cfg_enum mgw_cfg_log_levels[] = {
	{"error", MGW_LOG_ERROR}, {"warn", MGW_LOG_WARN},
	{"info", MGW_LOG_INFO},   {"debug", MGW_LOG_DEBUG}, {NULL, 0},
};

/* "tls:" stores into the listener itself (tls_cert, tls_key). */
static const struct mgw_cfg_field tls_fields[] = {
	{.key = "cert", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_listener_conf, tls_cert),
	 .flags = MGW_CFG_REQUIRED | MGW_CFG_FILE,
	 .check = mgw_cfg_check_nonempty},
	{.key = "key", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_listener_conf, tls_key),
	 .flags = MGW_CFG_REQUIRED | MGW_CFG_FILE,
	 .check = mgw_cfg_check_nonempty},
};
static const struct mgw_cfg_section tls_section = {
	.size = sizeof(struct mgw_listener_conf),
	.fields = tls_fields, .nfields = MGW_CFG_COUNT(tls_fields),
};

static const struct mgw_cfg_field listener_fields[] = {
	{.key = "address", .type = MGW_CFG_STRING,
	 MGW_CFG_AT(struct mgw_listener_conf, address),
	 .flags = MGW_CFG_REQUIRED, .check = mgw_cfg_check_hostport},
	{.key = "tls", .type = MGW_CFG_SECTION, .off = 0,
	 .sub = &tls_section},
};
const struct mgw_cfg_section mgw_cfg_listener_section = {
	.size = sizeof(struct mgw_listener_conf),
	.fields = listener_fields, .nfields = MGW_CFG_COUNT(listener_fields),
};

static int same_address(const char *a, const char *b)
{
	char ha[256], hb[256];
	uint16_t pa, pb;

	if (mgw_parse_hostport(a, ha, sizeof(ha), &pa) != 0 ||
	    mgw_parse_hostport(b, hb, sizeof(hb), &pb) != 0)
		return 0;
	return pa != 0 && pa == pb && strcmp(ha, hb) == 0;
}

int mgw_cfg_check_listeners(struct mgw_cfg_ctx *c,
                            const struct mgw_cfg_node *list,
                            const struct mgw_listener_conf *l, size_t n)
{
	char key[64];

	for (size_t i = 1; i < n; i++) {
		for (size_t j = 0; j < i; j++) {
			if (!same_address(l[i].address, l[j].address))
				continue;
			snprintf(key, sizeof(key), "listeners[%zu].address", i);
			return mgw_cfg_fail(c, mgw_cfg_map_value(list->kids[i],
			                                         "address"),
			                    key, "same address as listeners[%zu]", j);
		}
	}
	return 0;
}

/* ---- the root: every part's top-level fields in one section ---- */

struct merged {
	struct mgw_cfg_section sec; /* first: check_parts finds the rest */
	const struct mgw_cfg_root *root;
	size_t first[MGW_CFG_MAX_PARTS]; /* each part's first field */
	struct mgw_cfg_field fields[MGW_CFG_MAX_FIELDS];
};

/* A part's offsets are relative to its own struct. */
static void shift_field(struct mgw_cfg_field *f, size_t off)
{
	f->off += off;
	if (f->type == MGW_CFG_LIST || f->type == MGW_CFG_STRLIST ||
	    f->type == MGW_CFG_STRMAP ||
	    (f->type == MGW_CFG_SECTION && (f->flags & MGW_CFG_PRESENCE)))
		f->aux += off;
}

/* Runs each part's own check on its own scope, in the root's order. */
static int check_parts(struct mgw_cfg_ctx *c, const struct mgw_cfg_scope *sc,
                       void *obj)
{
	const struct merged *m = (const struct merged *)sc->sec;

	for (size_t p = 0; p < m->root->n_parts; p++) {
		const struct mgw_cfg_part *part = &m->root->parts[p];
		struct mgw_cfg_scope sub = {.sec = part->sec, .map = sc->map};
		int rc;

		if (!part->sec->check)
			continue;
		memcpy(sub.val, sc->val + m->first[p],
		       part->sec->nfields * sizeof(sub.val[0]));
		rc = part->sec->check(c, &sub, (char *)obj + part->off);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Two parts claiming one key is a bug in the tables: abort(). */
static void merge(const struct mgw_cfg_root *r, struct merged *m)
{
	size_t n = 0;

	assert(r->n_parts <= MGW_CFG_MAX_PARTS);
	memset(m, 0, sizeof(*m));
	m->root = r;
	for (size_t p = 0; p < r->n_parts; p++) {
		const struct mgw_cfg_section *s = r->parts[p].sec;

		if (n + s->nfields > MGW_CFG_MAX_FIELDS)
			abort();
		m->first[p] = n;
		for (size_t i = 0; i < s->nfields; i++, n++) {
			m->fields[n] = s->fields[i];
			shift_field(&m->fields[n], r->parts[p].off);
			for (size_t j = 0; j < n; j++)
				if (strcmp(m->fields[j].key, m->fields[n].key) == 0)
					abort();
		}
	}
	m->sec.size = r->size;
	m->sec.fields = m->fields;
	m->sec.nfields = n;
	m->sec.check = check_parts;
}

static int set_source(const struct mgw_cfg_root *r, void *obj,
                      const char *name)
{
	char *old, *s = strdup(name);

	if (!s)
		return MGW_ENOMEM;
	memcpy(&old, (char *)obj + r->source_off, sizeof(old));
	free(old);
	memcpy((char *)obj + r->source_off, &s, sizeof(s));
	return 0;
}

void *mgw_cfg_root_defaults(const struct mgw_cfg_root *r)
{
	void *obj = calloc(1, r->size);

	if (!obj)
		return NULL;
	if (set_source(r, obj, "<defaults>") != 0) {
		free(obj);
		return NULL;
	}
	for (size_t p = 0; p < r->n_parts; p++)
		mgw_cfg_defaults(r->parts[p].sec, (char *)obj + r->parts[p].off);
	return obj;
}

void mgw_cfg_root_free(const struct mgw_cfg_root *r, void *obj)
{
	char *source;

	if (!obj)
		return;
	for (size_t p = 0; p < r->n_parts; p++)
		mgw_cfg_release(r->parts[p].sec, (char *)obj + r->parts[p].off);
	memcpy(&source, (char *)obj + r->source_off, sizeof(source));
	free(source);
	free(obj);
}

static void fail_plain(char *err, size_t errlen, const char *name,
                       const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", name, msg);
}

/* Loads text named name; MGW_CFG_FILE values resolve against dir (may be
 * NULL). */
static void *load_text(const struct mgw_cfg_root *r, const char *name,
                       const char *dir, const char *text, size_t len,
                       char *err, size_t errlen)
{
	struct mgw_cfg_ctx ctx = {.name = name, .dir = dir, .err = err,
	                          .errlen = errlen};
	struct mgw_cfg_node *tree = NULL;
	struct merged m;
	void *obj = NULL;

	if (mgw_cfg_tree_parse(name, text, len, &tree, err, errlen) != 0)
		goto fail;
	obj = mgw_cfg_root_defaults(r);
	if (!obj || set_source(r, obj, name) != 0) {
		fail_plain(err, errlen, name, "out of memory");
		goto fail;
	}
	merge(r, &m);
	if (tree && mgw_cfg_apply(&ctx, &m.sec, obj, tree) != 0)
		goto fail;
	mgw_cfg_tree_free(tree);
	return obj;
fail:
	mgw_cfg_tree_free(tree);
	mgw_cfg_root_free(r, obj);
	return NULL;
}

void *mgw_cfg_root_load_string(const struct mgw_cfg_root *r, const char *name,
                               const char *text, size_t len, char *err,
                               size_t errlen)
{
	return load_text(r, name, NULL, text, len, err, errlen);
}

/* ---- files ---- */

/* The folder of the file path, absolute when it can be made so (a
 * reload after a chdir still finds the same files): a malloc'd string,
 * or NULL when out of memory. */
static char *folder_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, *abs;

	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return NULL;
	abs = realpath(dir, NULL);
	if (!abs)
		return dir;
	free(dir);
	return abs;
}

/* Reads at most MGW_CFG_MAX_BYTES + 1 bytes so that a file growing while
 * it is read is still caught by the size limit.  O_NONBLOCK keeps a FIFO
 * given by mistake from blocking the open. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	size_t cap = MGW_CFG_MAX_BYTES + 1, used = 0;
	struct stat st;
	char *buf = NULL, msg[256];
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0) {
		snprintf(msg, sizeof(msg), "cannot open: %s", strerror(errno));
		goto fail;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(msg, sizeof(msg), "not a regular file");
		goto fail;
	}
	if ((unsigned long long)st.st_size > MGW_CFG_MAX_BYTES) {
		snprintf(msg, sizeof(msg), "file too large (%lld bytes, the limit is %zu)",
		         (long long)st.st_size, MGW_CFG_MAX_BYTES);
		goto fail;
	}
	buf = malloc(cap);
	if (!buf) {
		snprintf(msg, sizeof(msg), "out of memory");
		goto fail;
	}
	while (used < cap && (r = read(fd, buf + used, cap - used)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(msg, sizeof(msg), "read failed: %s", strerror(errno));
			goto fail;
		}
		used += (size_t)r;
	}
	close(fd);
	*len = used;
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	fail_plain(err, errlen, path, msg);
	return NULL;
}

void *mgw_cfg_root_load(const struct mgw_cfg_root *r, const char *path,
                        char *err, size_t errlen)
{
	void *obj;
	size_t len = 0;
	char *text = read_file(path, &len, err, errlen), *dir;

	if (!text)
		return NULL;
	dir = folder_of(path);
	if (!dir) {
		free(text);
		fail_plain(err, errlen, path, "out of memory");
		return NULL;
	}
	obj = load_text(r, path, strcmp(dir, "/") == 0 ? "" : dir, text, len,
	                err, errlen);
	free(dir);
	free(text);
	return obj;
}
