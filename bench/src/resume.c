/* resume.c - what `mcpgw-bench resume DIR` reads back from an earlier
 * sitting: its report (options, machine, versions) and the records of
 * the repetitions it finished. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/src/resume.h"

static const char *str_of(const json_t *v)
{
	const char *s = json_string_value(v);

	return s ? s : "";
}

json_t *mgw_bench_resume_load(const char *dir, char *err, size_t errlen)
{
	char path[4096];
	json_error_t je;
	json_t *rep;

	if (snprintf(path, sizeof(path), "%s/report.json", dir) >=
	    (int)sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return NULL;
	}
	rep = json_load_file(path, 0, &je);
	if (!rep) {
		snprintf(err, errlen, "cannot read %s: %s", path, je.text);
		return NULL;
	}
	if (!json_is_object(rep) ||
	    strcmp(str_of(json_object_get(rep, "tool")), "mcpgw-bench") != 0) {
		snprintf(err, errlen, "%s is not an mcpgw-bench report", path);
		json_decref(rep);
		return NULL;
	}
	if (mgw_bench_resume_argv(rep, NULL) < 0) {
		snprintf(err, errlen, "%s has no \"argv\" (written by an "
		         "mcpgw-bench that cannot resume)", path);
		json_decref(rep);
		return NULL;
	}
	return rep;
}

void mgw_bench_resume_free_argv(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}

int mgw_bench_resume_argv(const json_t *report, char ***argv)
{
	const json_t *arr = json_object_get(report, "argv"), *v;
	size_t i, n = json_array_size(arr);
	char **av;

	if (!json_is_array(arr) || n < 2 || n > 256)
		return -1;
	json_array_foreach(arr, i, v)
		if (!json_is_string(v))
			return -1;
	if (!argv)
		return (int)n;
	av = calloc(n + 1, sizeof(*av));
	if (!av)
		return -1;
	json_array_foreach(arr, i, v) {
		av[i] = strdup(json_string_value(v));
		if (!av[i]) {
			mgw_bench_resume_free_argv(av);
			return -1;
		}
	}
	*argv = av;
	return (int)n;
}

static int in_list(const char *const *list, const char *k)
{
	for (; *list; list++)
		if (strcmp(*list, k) == 0)
			return 1;
	return 0;
}

/* Every key of `then` but those in skip equals the same key of `now`, and
 * `now` has no key `then` lacks (a build that stamps more is another
 * build). */
static int same_fields(const char *what, const json_t *then, const json_t *now,
                       const char *const *skip, char *err, size_t errlen)
{
	const char *k;
	const json_t *v;

	if (!json_is_object(then) || !json_is_object(now)) {
		snprintf(err, errlen, "the report has no \"%s\"", what);
		return -1;
	}
	json_object_foreach((json_t *)then, k, v) {
		const json_t *w = json_object_get(now, k);
		char *a, *b;

		if (in_list(skip, k) || json_equal((json_t *)v, (json_t *)w))
			continue;
		a = json_dumps(v, JSON_ENCODE_ANY);
		b = w ? json_dumps(w, JSON_ENCODE_ANY) : NULL;
		snprintf(err, errlen, "%s.%s was %s and is now %s", what, k,
		         a ? a : "?", b ? b : "missing");
		free(a);
		free(b);
		return -1;
	}
	json_object_foreach((json_t *)now, k, v) {
		if (!in_list(skip, k) && !json_object_get(then, k)) {
			snprintf(err, errlen, "%s.%s is stamped by this build but not "
			         "in the run (started by another build)", what, k);
			return -1;
		}
	}
	return 0;
}

int mgw_bench_resume_compare(const json_t *report, const json_t *machine,
                             const json_t *versions, int allow_harness,
                             char *err, size_t errlen)
{
	/* the kind of machine, not the one boot: a sitting may run on
	 * another machine of the kind (CPU count, memory, OS), whose kernel
	 * build or CPU model differs (each sitting's are in "sittings") */
	static const char *const machine_skip[] = { "loadavg_1m", "kernel",
	                                            "cpu", NULL };
	static const char *const no_skip[] = { NULL };
	static const char *const harness_skip[] = { "mcpgw-bench_sha256", NULL };

	if (same_fields("machine", json_object_get(report, "machine"), machine,
	                machine_skip, err, errlen) != 0)
		return -1;
	return same_fields("versions", json_object_get(report, "versions"),
	                   versions, allow_harness ? harness_skip : no_skip, err,
	                   errlen);
}

json_t *mgw_bench_resume_run(const char *dir, const char *scene,
                             const char *slug, int rep)
{
	char path[4096];
	json_t *rec;

	if (snprintf(path, sizeof(path), "%s/runs/%s/%s-r%02d.json", dir, scene,
	             slug, rep) >= (int)sizeof(path))
		return NULL;
	rec = json_load_file(path, 0, NULL);
	if (!json_is_object(rec) ||
	    strcmp(str_of(json_object_get(rec, "slug")), slug) != 0 ||
	    json_integer_value(json_object_get(rec, "rep")) != rep ||
	    !json_is_boolean(json_object_get(rec, "valid"))) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}
