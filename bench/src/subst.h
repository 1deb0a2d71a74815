/* subst.h - placeholders of the --external proxy command. */
#ifndef MGW_BENCH_SUBST_H
#define MGW_BENCH_SUBST_H

#include <stddef.h>

#include "bench/src/bench-t.h"

/* What a proxy command can be told about its cell. */
struct mgw_bench_subst_vars {
	int listen_port;                      /* where the proxy must listen */
	int ports[MGW_BENCH_MAX_REPLICAS];    /* replica ports */
	int n_ports;
	const char *dir;                      /* a private working directory */
};

/* Expands tmpl into out:
 *   {listen}       127.0.0.1:PORT the proxy must listen on
 *   {listen_port}  that PORT
 *   {ports}        the replica ports, space-separated
 *   {addrs}        127.0.0.1:PORT of each replica, comma-separated
 *   {port1}...     one replica's port (1-based)
 *   {n}            the number of replicas
 *   {dir}          a directory for the proxy's files, single-quoted for
 *                  the shell
 * A {name} preceded by '$' is left alone (shell syntax), as is any brace
 * pair whose content is not [a-z0-9_]+.  Returns 0, MGW_EINVAL with a
 * message in err for an unknown placeholder or a {portN} beyond the
 * replicas, MGW_ELIMIT when out is too small. */
int mgw_bench_subst(const char *tmpl, const struct mgw_bench_subst_vars *v,
                    char *out, size_t len, char *err, size_t errlen);

#endif
