/* report_json.h - report.json: the machine and component versions a run
 * is stamped with, and writing JSON files so that no reader ever sees a
 * half-written one. */
#ifndef MGW_BENCH_REPORT_JSON_H
#define MGW_BENCH_REPORT_JSON_H

#include <jansson.h>

#include "bench/src/bench-t.h"

/* {"kernel", "cpu", "cpus", "memory_mib", "os", "loadavg_1m"} of this
 * machine, read from uname(), /proc/cpuinfo, sysconf() and
 * /etc/os-release.  Returns a new reference (NULL on OOM). */
json_t *mgw_bench_machine(void);

/* {"mcpgw", "mcpgw-bench", "redis-server", "haproxy", "external"}: the
 * first line each component prints for its version ("not found" when it
 * cannot be run; "external" is the --external command as given, or
 * null).  Runs each program once, at most 5 s.  Returns a new reference. */
json_t *mgw_bench_versions(const struct mgw_bench_opts *o);

/* Writes v to path (indented, keys in insertion order) through path.tmp
 * and rename().  Returns 0 or MGW_EIO. */
int mgw_bench_write_json(const json_t *v, const char *path);

/* Writes versions and machine as "key: value" lines to path (the stamp
 * in the run folder a person reads first).  Returns 0 or MGW_EIO. */
int mgw_bench_write_versions_txt(const json_t *machine, const json_t *versions,
                                 const char *path);

#endif
