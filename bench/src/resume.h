/* resume.h - continuing an interrupted mcpgw-bench run (`mcpgw-bench
 * resume DIR`).  A full default run takes hours; a run that stops (an
 * interrupt, a reboot, the end of a working day) keeps every repetition
 * it finished under DIR/runs/, and a resume runs only the missing ones.
 *
 * Two runs must never mix, so a resume is refused unless it measures
 * with what the first sitting measured with: the same options (taken
 * from DIR/report.json's "argv", not from the new command line), the
 * same kind of machine (CPU model, CPU count, memory, OS) and the same
 * component builds (mcpgw's version and the SHA-256 of its executable,
 * mcpgw-bench, redis-server, haproxy).  A sitting may run on another
 * machine of that kind (a new virtual machine each working day), whose
 * kernel build differs: each sitting is listed in the report's
 * "sittings" with the kernel it ran on, and a repetition of a cell runs
 * whole within one sitting. */
#ifndef MGW_BENCH_RESUME_H
#define MGW_BENCH_RESUME_H

#include <stddef.h>

#include <jansson.h>

/* DIR/report.json as written by an earlier sitting, or NULL with a
 * message in err (missing, unreadable, not a bench report, or written
 * by a bench without "argv"). */
json_t *mgw_bench_resume_load(const char *dir, char *err, size_t errlen);

/* The earlier sitting's argv (report.json "argv") as a NULL-terminated
 * array of strings the caller frees with mgw_bench_resume_free_argv.
 * Returns the count, or -1 when "argv" is missing or malformed. */
int mgw_bench_resume_argv(const json_t *report, char ***argv);
void mgw_bench_resume_free_argv(char **argv);

/* 0 when the machine and the versions now equal the ones report.json
 * was measured with (the machine's load average, kernel and CPU model
 * aside, and mcpgw-bench's own SHA-256 when allow_harness), else -1 with
 * the first difference named in err. */
int mgw_bench_resume_compare(const json_t *report, const json_t *machine,
                             const json_t *versions, int allow_harness,
                             char *err, size_t errlen);

/* The record of repetition REP of a cell, DIR/runs/SCENE/SLUG-rNN.json,
 * when an earlier sitting finished it (the file parses and names that
 * cell and repetition), else NULL. */
json_t *mgw_bench_resume_run(const char *dir, const char *scene,
                             const char *slug, int rep);

#endif
