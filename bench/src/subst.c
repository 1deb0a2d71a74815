/* subst.c - expands the --external command for one cell.  The command is
 * run by /bin/sh, so everything substituted is either digits and
 * punctuation the bench made itself or, for {dir}, quoted: a run folder
 * with a space or a quote in its name cannot change what the shell runs. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "bench/src/subst.h"

struct out {
	char *buf;
	size_t len, cap;
	int overflow;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->overflow = 1;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_quoted(struct out *o, const char *s)
{
	put(o, "'", 1);
	for (; *s; s++) {
		if (*s == '\'')
			puts_(o, "'\\''");
		else
			put(o, s, 1);
	}
	put(o, "'", 1);
}

static int is_name(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_'))
			return 0;
	return 1;
}

static int expand(struct out *o, const char *name, size_t n,
                  const struct mgw_bench_subst_vars *v, char *err,
                  size_t errlen)
{
	char num[32];

#define IS(lit) (n == sizeof(lit) - 1 && memcmp(name, lit, n) == 0)
	if (IS("listen")) {
		snprintf(num, sizeof(num), "127.0.0.1:%d", v->listen_port);
		puts_(o, num);
	} else if (IS("listen_port")) {
		snprintf(num, sizeof(num), "%d", v->listen_port);
		puts_(o, num);
	} else if (IS("n")) {
		snprintf(num, sizeof(num), "%d", v->n_ports);
		puts_(o, num);
	} else if (IS("ports") || IS("addrs")) {
		int addrs = IS("addrs");

		for (int i = 0; i < v->n_ports; i++) {
			snprintf(num, sizeof(num), "%s%s%d",
			         i ? (addrs ? "," : " ") : "",
			         addrs ? "127.0.0.1:" : "", v->ports[i]);
			puts_(o, num);
		}
	} else if (IS("dir")) {
		put_quoted(o, v->dir ? v->dir : ".");
	} else if (n > 4 && memcmp(name, "port", 4) == 0) {
		char *end;
		long k = strtol(name + 4, &end, 10);

		if (end != name + n || k < 1 || k > v->n_ports) {
			snprintf(err, errlen, "{%.*s}: there %s only %d replica%s "
			         "({port1}..{port%d})", (int)n, name,
			         v->n_ports == 1 ? "is" : "are", v->n_ports,
			         v->n_ports == 1 ? "" : "s", v->n_ports);
			return MGW_EINVAL;
		}
		snprintf(num, sizeof(num), "%d", v->ports[k - 1]);
		puts_(o, num);
	} else {
		snprintf(err, errlen, "unknown placeholder {%.*s} (known: {listen}, "
		         "{listen_port}, {ports}, {addrs}, {port1}..{portN}, {n}, "
		         "{dir})", (int)n, name);
		return MGW_EINVAL;
	}
#undef IS
	return 0;
}

int mgw_bench_subst(const char *tmpl, const struct mgw_bench_subst_vars *v,
                    char *out, size_t len, char *err, size_t errlen)
{
	struct out o = { out, 0, len, 0 };
	const char *p = tmpl;

	if (len == 0)
		return MGW_ELIMIT;
	out[0] = '\0';
	if (errlen)
		err[0] = '\0';
	while (*p) {
		const char *close;

		if (*p == '{' && (p == tmpl || p[-1] != '$') &&
		    (close = strchr(p + 1, '}')) != NULL &&
		    is_name(p + 1, (size_t)(close - p - 1))) {
			int rc = expand(&o, p + 1, (size_t)(close - p - 1), v, err,
			                errlen);

			if (rc != 0)
				return rc;
			p = close + 1;
			continue;
		}
		put(&o, p, 1);
		p++;
	}
	if (o.overflow) {
		snprintf(err, errlen, "the expanded command is longer than %zu "
		         "bytes", len - 1);
		return MGW_ELIMIT;
	}
	return 0;
}
