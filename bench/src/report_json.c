/* report_json.c - what a run is stamped with.  A result without the
 * machine and the exact versions it came from cannot be compared with the
 * next one, so every run folder carries both, in report.json and in
 * versions.txt. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/errors.h"
#include "bench/src/proc.h"
#include "bench/src/report_json.h"

/* The value after "key" and ':' on the first line of file that starts
 * with key, trimmed (e.g. "model name" in /proc/cpuinfo). */
static int file_field(const char *file, const char *key, char sep, char *out,
                      size_t len)
{
	FILE *f = fopen(file, "re");
	char line[512];
	size_t kl = strlen(key);
	int rc = MGW_ENOTFOUND;

	if (!f)
		return MGW_EIO;
	while (fgets(line, sizeof(line), f)) {
		char *v, *e;

		if (strncmp(line, key, kl) != 0)
			continue;
		v = line + kl;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v != sep)
			continue;
		v++;
		while (*v == ' ' || *v == '\t' || *v == '"')
			v++;
		e = v + strlen(v);
		while (e > v && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '"'))
			*--e = '\0';
		snprintf(out, len, "%s", v);
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

json_t *mgw_bench_machine(void)
{
	struct utsname u;
	char kernel[400] = "unknown", cpu[256] = "unknown", os[256] = "unknown";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	double load[1] = { 0 };

	if (uname(&u) == 0)
		snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release,
		         u.machine);
	/* x86 names the CPU "model name"; arm64 often only "Hardware" or
	 * nothing (then the device tree's model would be the next place). */
	if (file_field("/proc/cpuinfo", "model name", ':', cpu, sizeof(cpu)) != 0 &&
	    file_field("/proc/cpuinfo", "Hardware", ':', cpu, sizeof(cpu)) != 0)
		file_field("/proc/cpuinfo", "CPU part", ':', cpu, sizeof(cpu));
	file_field("/etc/os-release", "PRETTY_NAME", '=', os, sizeof(os));
	if (getloadavg(load, 1) != 1)
		load[0] = -1;
	return json_pack("{s:s, s:s, s:I, s:I, s:s, s:f}", "kernel", kernel,
	                 "cpu", cpu, "cpus", (json_int_t)cpus, "memory_mib",
	                 (json_int_t)(pages > 0 && psz > 0
	                                  ? (long long)pages * psz / (1024 * 1024)
	                                  : 0),
	                 "os", os, "loadavg_1m", load[0]);
}

static json_t *version_of(char *const argv[])
{
	char line[256];

	if (mgw_bench_capture_line(argv, 5.0, line, sizeof(line)) == 0)
		return json_string(line);
	return json_string("not found");
}

/* The executable a command name runs: itself when it has a '/', else
 * the first match on PATH. */
static int which(const char *cmd, char *out, size_t len)
{
	const char *p = getenv("PATH");

	if (strchr(cmd, '/'))
		return snprintf(out, len, "%s", cmd) < (int)len ? 0 : MGW_EINVAL;
	while (p && *p) {
		size_t n = strcspn(p, ":");

		if (n > 0 && snprintf(out, len, "%.*s/%s", (int)n, p, cmd) < (int)len &&
		    access(out, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return MGW_ENOTFOUND;
}

/* SHA-256 of a file, lowercase hex, or "not found".  It names the exact
 * build a run measured: a version string stays the same while the code
 * changes, and a resumed run must not mix two builds. */
static json_t *file_sha256(const char *cmd)
{
	unsigned char buf[65536], md[EVP_MAX_MD_SIZE];
	char path[4096], hex[2 * EVP_MAX_MD_SIZE + 1];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx;
	FILE *f;
	size_t n;
	int ok;

	if (which(cmd, path, sizeof(path)) != 0 || !(f = fopen(path, "rbe")))
		return json_string("not found");
	ctx = EVP_MD_CTX_new();
	ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
	while (ok && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		ok = EVP_DigestUpdate(ctx, buf, n) == 1;
	ok = ok && !ferror(f) && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1;
	EVP_MD_CTX_free(ctx);
	fclose(f);
	if (!ok)
		return json_string("unreadable");
	for (unsigned int i = 0; i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return json_string(hex);
}

json_t *mgw_bench_versions(const struct mgw_bench_opts *o)
{
	char *mcpgw[] = { (char *)o->mcpgw, "version", NULL };
	char *redis[] = { (char *)o->redis_server, "--version", NULL };
	char *hap[] = { "haproxy", "-v", NULL };
	char *hap2[] = { "/usr/sbin/haproxy", "-v", NULL };
	json_t *v = json_object(), *h;

	if (!v)
		return NULL;
	json_object_set_new(v, "mcpgw", version_of(mcpgw));
	json_object_set_new(v, "mcpgw_sha256", file_sha256(o->mcpgw));
	json_object_set_new(v, "mcpgw-bench", json_string(PACKAGE_VERSION));
	/* the bench's own build too: it schedules the kills and judges them */
	json_object_set_new(v, "mcpgw-bench_sha256", file_sha256("/proc/self/exe"));
	json_object_set_new(v, "redis-server", version_of(redis));
	/* haproxy lives in /usr/sbin, which is not on every user's PATH */
	h = version_of(hap);
	if (strcmp(json_string_value(h), "not found") == 0) {
		json_decref(h);
		h = version_of(hap2);
	}
	json_object_set_new(v, "haproxy", h);
	json_object_set_new(v, "external",
	                    o->external ? json_string(o->external) : json_null());
	return v;
}

int mgw_bench_write_json(const json_t *v, const char *path)
{
	char tmp[1024];

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return MGW_EINVAL;
	if (json_dump_file(v, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	                               JSON_REAL_PRECISION(10)) != 0) {
		unlink(tmp);
		return MGW_EIO;
	}
	if (rename(tmp, path) != 0) {
		unlink(tmp);
		return MGW_EIO;
	}
	return 0;
}

int mgw_bench_write_versions_txt(const json_t *machine, const json_t *versions,
                                 const char *path)
{
	FILE *f = fopen(path, "we");
	const char *key;
	json_t *val;
	int rc;

	if (!f)
		return MGW_EIO;
	json_object_foreach((json_t *)versions, key, val)
		fprintf(f, "%s: %s\n", key,
		        json_is_string(val) ? json_string_value(val) : "-");
	json_object_foreach((json_t *)machine, key, val) {
		if (json_is_string(val))
			fprintf(f, "%s: %s\n", key, json_string_value(val));
		else if (json_is_integer(val))
			fprintf(f, "%s: %lld\n", key, (long long)json_integer_value(val));
		else if (json_is_real(val))
			fprintf(f, "%s: %.2f\n", key, json_real_value(val));
	}
	rc = ferror(f) ? MGW_EIO : 0;
	if (fclose(f) != 0)
		rc = MGW_EIO;
	return rc;
}
