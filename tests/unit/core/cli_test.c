/* cli_test.c - unit tests for src/core/cli.c: usage errors, the getopt
 * loop, repeatable flags, --log-level, -c FILE, the listeners a server is
 * asked for and the exit codes of set-up errors. */
#include "autoconf.h"

#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../capture.h"
#include "conf/cli_config.h"
#include "core/cli.h"
#include "conf/config.h"
#include "core/errors.h"
#include "core/log.h"

/* What the last captured call wrote. */
static struct cap cap;

/* ---- mgw_cli_usage_error ---- */

static void test_usage_error(void **state)
{
	int rc;

	(void)state;
	cap_begin(&cap);
	rc = mgw_cli_usage_error("demo", "bad %s %d", "thing", 7);
	cap_end(&cap);
	assert_int_equal(rc, MGW_EXIT_USAGE);
	assert_string_equal(cap.err, "mcpgw demo: bad thing 7\n"
	                    "Try 'mcpgw demo --help'.\n");
}

/* ---- mgw_cli_parse ---- */

enum { OPT_NAME = 256, OPT_FLAG, OPT_STOP, OPT_ODD };

static const struct option opts[] = {
	{"config", required_argument, NULL, 'c'},
	{"name", required_argument, NULL, OPT_NAME},
	{"flag", no_argument, NULL, OPT_FLAG},
	{"stop", no_argument, NULL, OPT_STOP},
	{"odd", no_argument, NULL, OPT_ODD},
	{NULL, 0, NULL, 0},
};

struct seen {
	char log[256];   /* "c=VALUE name=VALUE flag ..." in order */
};

static int on_opt(int c, char *v, void *arg)
{
	struct seen *s = arg;
	size_t len = strlen(s->log);

	switch (c) {
	case 'c':
		snprintf(s->log + len, sizeof(s->log) - len, "c=%s ", v);
		return 0;
	case OPT_NAME:
		snprintf(s->log + len, sizeof(s->log) - len, "name=%s ", v);
		return 0;
	case OPT_FLAG:
		snprintf(s->log + len, sizeof(s->log) - len, "flag%s ",
		         v ? "(value?)" : "");
		return 0;
	case OPT_STOP:
		return 42;
	default:
		return MGW_EINVAL; /* OPT_ODD: declared but not known here */
	}
}

/* Parses argv, a NULL-terminated list whose argv[0] is "demo". */
static int parse(struct seen *s, char **argv)
{
	int argc = 0, rc;

	while (argv[argc])
		argc++;
	memset(s, 0, sizeof(*s));
	cap_begin(&cap);
	rc = mgw_cli_parse("demo", argc, argv, ":c:", opts, on_opt, s);
	cap_end(&cap);
	return rc;
}

#define ARGV(...) ((char *[]){"demo", __VA_ARGS__, NULL})
#define PARSE(s, ...) parse(s, ARGV(__VA_ARGS__))

static void test_parse_in_order(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(PARSE(&s, "-c", "f.yaml", "--name=a", "--flag",
	                       "--name", "b", "-cg.yaml"), 0);
	assert_string_equal(s.log, "c=f.yaml name=a flag name=b c=g.yaml ");
	assert_string_equal(cap.err, "");
	/* parsing starts over on every call */
	assert_int_equal(PARSE(&s, "--flag"), 0);
	assert_string_equal(s.log, "flag ");
	assert_int_equal(parse(&s, (char *[]){"demo", NULL}), 0);
	assert_string_equal(s.log, "");
}

static void test_parse_errors(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(PARSE(&s, "--name"), MGW_EXIT_USAGE);
	assert_string_equal(cap.err, "mcpgw demo: option '--name' needs a value\n"
	                    "Try 'mcpgw demo --help'.\n");
	assert_int_equal(PARSE(&s, "--flag", "-c"), MGW_EXIT_USAGE);
	assert_string_equal(cap.err, "mcpgw demo: option '-c' needs a value\n"
	                    "Try 'mcpgw demo --help'.\n");
	assert_int_equal(PARSE(&s, "--bogus"), MGW_EXIT_USAGE);
	assert_string_equal(cap.err, "mcpgw demo: unknown option '--bogus'\n"
	                    "Try 'mcpgw demo --help'.\n");
	/* an option the callback does not know reads the same */
	assert_int_equal(PARSE(&s, "--odd"), MGW_EXIT_USAGE);
	assert_string_equal(cap.err, "mcpgw demo: unknown option '--odd'\n"
	                    "Try 'mcpgw demo --help'.\n");
	assert_int_equal(PARSE(&s, "--flag", "extra"), MGW_EXIT_USAGE);
	assert_string_equal(cap.err, "mcpgw demo: unexpected argument 'extra'\n"
	                    "Try 'mcpgw demo --help'.\n");
	/* operands are moved last: an option after one is still read */
	assert_int_equal(PARSE(&s, "extra", "--name", "x"), MGW_EXIT_USAGE);
	assert_string_equal(s.log, "name=x ");
	assert_non_null(strstr(cap.err, "unexpected argument 'extra'"));
}

static void test_parse_callback_stops(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(PARSE(&s, "--flag", "--stop", "--name", "x"), 42);
	assert_string_equal(s.log, "flag ");
	assert_string_equal(cap.err, "");
}

/* ---- mgw_cli_repeat, mgw_cli_set_str ---- */

static void test_repeat(void **state)
{
	const char *v[2];
	size_t n = 0;

	(void)state;
	cap_begin(&cap);
	assert_int_equal(mgw_cli_repeat("demo", v, &n, 2, "a", "--x"), 0);
	assert_int_equal(mgw_cli_repeat("demo", v, &n, 2, "b", "--x"), 0);
	assert_int_equal(mgw_cli_repeat("demo", v, &n, 2, "c", "--x"),
	                 MGW_EXIT_USAGE);
	cap_end(&cap);
	assert_int_equal(n, 2);
	assert_string_equal(v[0], "a");
	assert_string_equal(v[1], "b");
	assert_string_equal(cap.err, "mcpgw demo: at most 2 --x options\n"
	                    "Try 'mcpgw demo --help'.\n");
}

static void test_set_str(void **state)
{
	char *s = NULL;
	char buf[] = "two";

	(void)state;
	assert_int_equal(mgw_cli_set_str(&s, "one"), 0);
	assert_string_equal(s, "one");
	assert_int_equal(mgw_cli_set_str(&s, buf), 0);
	buf[0] = 'X'; /* a copy, not the caller's string */
	assert_string_equal(s, "two");
	free(s);
}

/* ---- mgw_cli_log_level ---- */

static void test_log_level(void **state)
{
	enum mgw_log_level before = mgw_log_get_level();

	(void)state;
	assert_int_equal(mgw_cli_log_level("demo", NULL, MGW_LOG_ERROR), 0);
	assert_int_equal(mgw_log_get_level(), MGW_LOG_ERROR);
	assert_int_equal(mgw_cli_log_level("demo", "debug", MGW_LOG_ERROR), 0);
	assert_int_equal(mgw_log_get_level(), MGW_LOG_DEBUG);
	cap_begin(&cap);
	assert_int_equal(mgw_cli_log_level("demo", "loud", MGW_LOG_ERROR),
	                 MGW_EXIT_USAGE);
	cap_end(&cap);
	assert_int_equal(mgw_log_get_level(), MGW_LOG_DEBUG); /* unchanged */
	assert_string_equal(cap.err, "mcpgw demo: invalid --log-level 'loud' "
	                    "(error, warn, info or debug)\n"
	                    "Try 'mcpgw demo --help'.\n");
	mgw_log_set_level(before);
}

/* ---- mgw_cli_config_load ---- */

static void test_config_load(void **state)
{
	struct mgw_config *cfg;

	(void)state;
	cfg = mgw_cli_config_load("demo", NULL);
	assert_non_null(cfg);
	assert_int_equal(cfg->n_listeners, 0);
	mgw_config_free(cfg);

	cap_begin(&cap);
	cfg = mgw_cli_config_load("demo", "/nonexistent/mcpgw.yaml");
	cap_end(&cap);
	assert_null(cfg);
	assert_string_equal(cap.err, "mcpgw demo: /nonexistent/mcpgw.yaml: "
	                    "cannot open: No such file or directory\n");
}

/* ---- mgw_cli_listen_add, mgw_cli_listen_specs ---- */

static void test_listen_add_limit(void **state)
{
	struct mgw_cli_listen l = {0};

	(void)state;
	cap_begin(&cap);
	for (int i = 0; i < MGW_CLI_MAX_LISTEN; i++)
		assert_int_equal(mgw_cli_listen_add("demo", &l, "127.0.0.1:0"), 0);
	assert_int_equal(mgw_cli_listen_add("demo", &l, "127.0.0.1:0"),
	                 MGW_EXIT_USAGE);
	cap_end(&cap);
	assert_int_equal(l.n, MGW_CLI_MAX_LISTEN);
	assert_string_equal(cap.err, "mcpgw demo: at most 16 --listen options\n"
	                    "Try 'mcpgw demo --help'.\n");
}

static struct mgw_listener_conf file2[] = {
	{.address = "127.0.0.1:8080"},
	{.address = "[::1]:8443", .tls_cert = "c.pem", .tls_key = "k.pem"},
};

/* mgw_cli_listen_specs with stderr captured. */
static int specs(const struct mgw_cli_listen *l,
                 const struct mgw_listener_conf *file, size_t n_file,
                 struct mgw_listen_spec *out, size_t *n)
{
	int rc;

	cap_begin(&cap);
	rc = mgw_cli_listen_specs("demo", l, file, n_file, ":", out, n);
	cap_end(&cap);
	return rc;
}

static void test_specs_from_flags(void **state)
{
	struct mgw_cli_listen l = {.address = {"127.0.0.1:0", "[::1]:0"}, .n = 2,
	                           .tls_cert = "c.pem", .tls_key = "k.pem"};
	struct mgw_listen_spec out[MGW_CLI_MAX_LISTEN];
	size_t n = 99;

	(void)state;
	/* the flags replace the file's listeners */
	assert_int_equal(specs(&l, file2, 2, out, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].address, "127.0.0.1:0");
	assert_string_equal(out[1].address, "[::1]:0");
	assert_string_equal(out[1].cert, "c.pem");
	assert_string_equal(out[1].key, "k.pem");
	assert_string_equal(cap.err, "");

	l.tls_cert = l.tls_key = NULL;
	assert_int_equal(specs(&l, NULL, 0, out, &n), 0);
	assert_null(out[0].cert);
	assert_null(out[0].key);
}

static void test_specs_from_file(void **state)
{
	struct mgw_cli_listen l = {0};
	struct mgw_listen_spec out[MGW_CLI_MAX_LISTEN];
	size_t n = 0;

	(void)state;
	assert_int_equal(specs(&l, file2, 2, out, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].address, "127.0.0.1:8080");
	assert_null(out[0].cert);
	assert_string_equal(out[1].address, "[::1]:8443");
	assert_string_equal(out[1].cert, "c.pem");
	assert_string_equal(out[1].key, "k.pem");
}

static void test_specs_errors(void **state)
{
	struct mgw_listener_conf many[MGW_CLI_MAX_LISTEN + 1];
	struct mgw_cli_listen l = {0};
	struct mgw_listen_spec out[MGW_CLI_MAX_LISTEN];
	size_t n = 0;

	(void)state;
	assert_int_equal(specs(&l, NULL, 0, out, &n), MGW_EXIT_USAGE);
	assert_int_equal(n, 0);
	assert_string_equal(cap.err, "mcpgw demo: no listener: give --listen "
	                    "HOST:PORT or a listeners: section\nTry 'mcpgw demo "
	                    "--help'.\n");

	l.tls_key = "k.pem";
	assert_int_equal(specs(&l, file2, 2, out, &n), MGW_EXIT_USAGE);
	assert_non_null(strstr(cap.err, ": --tls-cert and --tls-key go together\n"));

	l.tls_cert = "c.pem";
	assert_int_equal(specs(&l, file2, 2, out, &n), MGW_EXIT_USAGE);
	assert_non_null(strstr(cap.err, ": --tls-cert applies to --listen "
	                       "listeners; none given\n"));

	l = (struct mgw_cli_listen){.address = {"127.0.0.1:0", "nope"}, .n = 2};
	assert_int_equal(specs(&l, NULL, 0, out, &n), MGW_EXIT_USAGE);
	assert_string_equal(cap.err, "mcpgw demo: invalid --listen 'nope' "
	                    "(HOST:PORT)\nTry 'mcpgw demo --help'.\n");

	memset(&l, 0, sizeof(l));
	for (size_t i = 0; i <= MGW_CLI_MAX_LISTEN; i++)
		many[i] = (struct mgw_listener_conf){.address = "127.0.0.1:0"};
	assert_int_equal(specs(&l, many, MGW_CLI_MAX_LISTEN + 1, out, &n),
	                 MGW_EXIT_USAGE);
	assert_string_equal(cap.err, "mcpgw demo: 17 listeners: at most 16\n"
	                    "Try 'mcpgw demo --help'.\n");
	/* each command keeps its own words */
	cap_begin(&cap);
	assert_int_equal(mgw_cli_listen_specs("demo", &l, many,
	                                      MGW_CLI_MAX_LISTEN + 1,
	                                      " in the file;", out, &n),
	                 MGW_EXIT_USAGE);
	cap_end(&cap);
	assert_non_null(strstr(cap.err, ": 17 listeners in the file; at most 16\n"));
	/* exactly the limit is fine */
	assert_int_equal(specs(&l, many, MGW_CLI_MAX_LISTEN, out, &n), 0);
	assert_int_equal(n, MGW_CLI_MAX_LISTEN);
}

static const struct option server_opts[] = {
	MGW_CLI_SERVER_OPTIONS,
	{"name", required_argument, NULL, OPT_NAME},
	{NULL, 0, NULL, 0},
};

/* mgw_cli_parse_server over argv ("demo" first, NULL last). */
static int parse_server(struct mgw_cli_server *srv, struct seen *s,
                        char **argv)
{
	int argc = 0, rc;

	while (argv[argc])
		argc++;
	memset(srv, 0, sizeof(*srv));
	memset(s, 0, sizeof(*s));
	cap_begin(&cap);
	rc = mgw_cli_parse_server("demo", argc, argv, server_opts, srv, on_opt,
	                          s);
	cap_end(&cap);
	return rc;
}

static void test_parse_server(void **state)
{
	struct mgw_cli_server srv;
	struct seen s;

	(void)state;
	assert_int_equal(parse_server(&srv, &s, ARGV("-c", "f.yaml", "-h",
	                 "--listen", "127.0.0.1:0", "--name", "x",
	                 "--tls-cert=c.pem", "--tls-key", "k.pem",
	                 "--listen=[::1]:0", "--log-level", "warn")), 0);
	assert_string_equal(srv.config, "f.yaml");
	assert_int_equal(srv.help, 1);
	assert_int_equal(srv.listen.n, 2);
	assert_string_equal(srv.listen.address[0], "127.0.0.1:0");
	assert_string_equal(srv.listen.address[1], "[::1]:0");
	assert_string_equal(srv.listen.tls_cert, "c.pem");
	assert_string_equal(srv.listen.tls_key, "k.pem");
	assert_string_equal(srv.log_level, "warn");
	/* the command's own options reach its callback, and only those */
	assert_string_equal(s.log, "name=x ");
	assert_string_equal(cap.err, "");

	assert_int_equal(parse_server(&srv, &s, ARGV("--log-level")),
	                 MGW_EXIT_USAGE);
	assert_non_null(strstr(cap.err, "option '--log-level' needs a value"));
	assert_int_equal(parse_server(&srv, &s, ARGV("--flag")), MGW_EXIT_USAGE);
	assert_non_null(strstr(cap.err, "unknown option '--flag'"));
}

static void test_parse_server_listen_limit(void **state)
{
	char *argv[2 + 2 * (MGW_CLI_MAX_LISTEN + 1)] = {"demo"};
	struct mgw_cli_server srv;
	struct seen s;
	int argc = 1;

	(void)state;
	for (int i = 0; i <= MGW_CLI_MAX_LISTEN; i++) {
		argv[argc++] = "--listen";
		argv[argc++] = "127.0.0.1:0";
	}
	argv[argc] = NULL;
	assert_int_equal(parse_server(&srv, &s, argv), MGW_EXIT_USAGE);
	assert_int_equal(srv.listen.n, MGW_CLI_MAX_LISTEN);
	assert_string_equal(cap.err, "mcpgw demo: at most 16 --listen options\n"
	                    "Try 'mcpgw demo --help'.\n");
}

static void demo_usage(FILE *out)
{
	fputs("usage: mcpgw demo\n", out);
}

static const struct mgw_cli_server_cmd demo_cmd = {
	.name = "demo", .longopts = server_opts, .on_opt = on_opt,
	.usage = demo_usage,
};

/* mgw_cli_server_begin over argv, output captured. */
static int begin(struct mgw_cli_server *srv, struct seen *s, char **argv,
                 struct mgw_config **cfg)
{
	int argc = 0, rc;

	while (argv[argc])
		argc++;
	memset(srv, 0, sizeof(*srv));
	memset(s, 0, sizeof(*s));
	cap_begin(&cap);
	rc = mgw_cli_server_begin(&demo_cmd, argc, argv, srv, s, cfg);
	cap_end(&cap);
	return rc;
}

static void test_server_begin(void **state)
{
	struct mgw_cli_server srv;
	struct mgw_config *cfg;
	struct seen s;

	(void)state;
	/* no -c: the defaults, and the options parsed */
	assert_int_equal(begin(&srv, &s, ARGV("--name", "x", "--listen",
	                                      "127.0.0.1:0"), &cfg), 0);
	assert_non_null(cfg);
	assert_string_equal(s.log, "name=x ");
	assert_int_equal(srv.listen.n, 1);
	mgw_config_free(cfg);
	/* -h: the help on stdout, exit 0, nothing loaded */
	assert_int_equal(begin(&srv, &s, ARGV("-c", "/nonexistent.yaml", "-h"),
	                       &cfg), MGW_EXIT_OK);
	assert_null(cfg);
	assert_string_equal(cap.out, "usage: mcpgw demo\n");
	assert_string_equal(cap.err, "");
	/* a usage error comes before the help */
	assert_int_equal(begin(&srv, &s, ARGV("-h", "--bogus"), &cfg),
	                 MGW_EXIT_USAGE);
	assert_null(cfg);
	assert_string_equal(cap.out, "");
	/* a file that does not load */
	assert_int_equal(begin(&srv, &s, ARGV("-c", "/nonexistent.yaml"), &cfg),
	                 MGW_EXIT_USAGE);
	assert_null(cfg);
	assert_string_equal(cap.err, "mcpgw demo: /nonexistent.yaml: cannot "
	                    "open: No such file or directory\n");
}

static void test_exit_code(void **state)
{
	(void)state;
	assert_int_equal(mgw_cli_exit_code(0), MGW_EXIT_OK);
	assert_int_equal(mgw_cli_exit_code(MGW_EINVAL), MGW_EXIT_USAGE);
	assert_int_equal(mgw_cli_exit_code(MGW_EIO), MGW_EXIT_RUNTIME);
	assert_int_equal(mgw_cli_exit_code(MGW_ENOMEM), MGW_EXIT_RUNTIME);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_error),
		cmocka_unit_test(test_parse_in_order),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_callback_stops),
		cmocka_unit_test(test_repeat),
		cmocka_unit_test(test_set_str),
		cmocka_unit_test(test_log_level),
		cmocka_unit_test(test_config_load),
		cmocka_unit_test(test_listen_add_limit),
		cmocka_unit_test(test_specs_from_flags),
		cmocka_unit_test(test_specs_from_file),
		cmocka_unit_test(test_specs_errors),
		cmocka_unit_test(test_parse_server),
		cmocka_unit_test(test_parse_server_listen_limit),
		cmocka_unit_test(test_server_begin),
		cmocka_unit_test(test_exit_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
