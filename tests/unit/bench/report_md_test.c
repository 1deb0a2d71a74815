/* report_md_test.c - unit tests for bench/src/report_md.c: the table
 * starts with the study's exact header, rows show the median with its
 * range, latencies, the three losses and re-pins, a dash where there is
 * no number (never a zero), the saturation mark and legend, invalid
 * repetitions listed with their reasons, '|' in names escaped; the CSV
 * has one quoted-where-needed row per cell; the mrtr, fork and tasks
 * scenes add their state table, other scenes none. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "bench/src/report_md.h"

static const char report_text[] =
	"{\"machine\": {\"kernel\": \"Linux 6.1 x86_64\", \"cpu\": \"EPYC\","
	"  \"cpus\": 2, \"memory_mib\": 4096, \"os\": \"Debian 12\"},"
	" \"versions\": {\"mcpgw\": \"mcpgw 0.1.0\", \"redis-server\": \"v=7\"},"
	" \"started_at\": \"S\", \"finished_at\": \"F\","
	" \"scenes\": [{\"scene\": \"pod-kill\", \"title\": \"Pod kill\","
	"   \"offered_rps\": 100, \"duration_s\": 60, \"reps\": 10,"
	"   \"kill_at_s\": 20, \"kill_signal\": \"KILL\", \"readiness_delay_s\": 2,"
	"   \"cells\": ["
	"   {\"cell\": \"legacy direct 2 replicas\", \"n\": 10, \"valid\": 9,"
	"    \"achieved_rps\": {\"median\": 97.25, \"min\": 80.0, \"max\": 99.96},"
	"    \"p50_ms\": 0.712, \"p99_ms\": 31.5, \"session_losses\": 1922,"
	"    \"handle_losses\": 0, \"other_failures\": 14, \"repins\": null,"
	"    \"saturated\": false,"
	"    \"invalid\": [{\"run\": \"runs/pod-kill/a-r03.json\","
	"                   \"reason\": \"kill did not land: dead\"}]},"
	"   {\"cell\": \"legacy a|b 2 replicas\", \"n\": 10, \"valid\": 10,"
	"    \"achieved_rps\": {\"median\": 51.2, \"min\": 22.4, \"max\": 57.0},"
	"    \"p50_ms\": 12.34, \"p99_ms\": null, \"session_losses\": 0,"
	"    \"handle_losses\": 4461, \"other_failures\": 0, \"repins\": 7,"
	"    \"saturated\": true, \"invalid\": [],"
	"    \"cooldown_timeouts\": [{\"run\": \"runs/pod-kill/b-r04.json\","
	"      \"threshold\": 256, \"time_wait_before\": 273,"
	"      \"time_wait_after\": 304}]},"
	"   {\"cell\": \"x, \\\"quoted\\\"\", \"n\": 1, \"valid\": 0,"
	"    \"achieved_rps\": {\"median\": null, \"min\": null, \"max\": null},"
	"    \"p50_ms\": null, \"p99_ms\": null, \"session_losses\": null,"
	"    \"handle_losses\": null, \"other_failures\": null, \"repins\": null,"
	"    \"saturated\": null, \"invalid\": [{\"run\": \"r\", \"reason\": null}]}"
	"  ]}]}";

static char *render(int csv)
{
	json_t *rep = json_loads(report_text, 0, NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(rep);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(csv ? mgw_bench_report_csv(f, rep)
	                     : mgw_bench_report_md(f, rep), 0);
	fclose(f);
	json_decref(rep);
	return buf;
}

static void test_table(void **state)
{
	char *md = render(0);

	(void)state;
	assert_non_null(strstr(md, "\n| cell | users | n | achieved rps, median "
	                           "(range) | p50 ms | p99 ms | session losses | "
	                           "handle losses | deleted served | other "
	                           "failures | re-pins |\n"));
	/* the synthetic cells have neither users nor deleted_served: – */
	assert_non_null(strstr(md, "| legacy direct 2 replicas | – | 9† | 97.2 "
	                           "(80.0–100.0) | 0.71 | 31.5 | 1922 | 0 | – | "
	                           "14 | – |\n"));
	assert_non_null(strstr(md, "| legacy a\\|b 2 replicas | – | 10‡ | 51.2 "
	                           "(22.4–57.0) ⚠ | 12.3 | – | 0 | 4461 | – | 0 | "
	                           "7 |\n"));
	assert_non_null(strstr(md, "| 0† | – | – | – | – | – | – | – | – |\n"));
	assert_non_null(strstr(md, "⚠ saturated"));
	assert_non_null(strstr(md, "- legacy direct 2 replicas "
	                           "(`runs/pod-kill/a-r03.json`): kill did not "
	                           "land: dead\n"));
	assert_non_null(strstr(md, "‡ repetitions counted although the cooldown"));
	assert_non_null(strstr(md, "- legacy a\\|b 2 replicas "
	                           "(`runs/pod-kill/b-r04.json`): 273 before, 304 "
	                           "after (threshold 256)\n"));
	assert_non_null(strstr(md, "## pod-kill"));
	assert_non_null(strstr(md, "SIGKILL at 20 s"));
	assert_non_null(strstr(md, "Machine: Linux 6.1 x86_64, EPYC (2 CPUs)"));
	assert_non_null(strstr(md, "mcpgw: mcpgw 0.1.0"));
	free(md);
}

static const char state_text[] =
	"{\"scene\": \"mrtr\", \"cells\": ["
	" {\"cell\": \"modern direct 2 replicas, memory request state\","
	"  \"dialogues\": 1500, \"rounds\": 2100, \"state_losses\": 1200,"
	"  \"other_failures\": 40, \"state_bytes_per_round\": 36.0,"
	"  \"store_ops_per_dialogue\": null},"
	" {\"cell\": \"modern direct 2 replicas, redis request state\","
	"  \"dialogues\": 1500, \"rounds\": 4400, \"state_losses\": 0,"
	"  \"other_failures\": 41, \"state_bytes_per_round\": 36.0,"
	"  \"store_ops_per_dialogue\": 6.125}]}";

static void test_state_table(void **state)
{
	json_t *s = json_loads(state_text, 0, NULL), *other;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(s);
	f = open_memstream(&buf, &len);
	assert_int_equal(mgw_bench_report_md_state_table(f, s), 0);
	fclose(f);
	assert_string_equal(buf,
		"| cell | dialogues | rounds | state lost | other failures | "
		"requestState bytes per round | store ops per dialogue |\n"
		"|---|---:|---:|---:|---:|---:|---:|\n"
		"| modern direct 2 replicas, memory request state | 1500 | 2100 | "
		"1200 | 40 | 36.0 | – |\n"
		"| modern direct 2 replicas, redis request state | 1500 | 4400 | 0 | "
		"41 | 36.0 | 6.1 |\n");
	free(buf);
	/* other scenes have no second table */
	other = json_pack("{s:s, s:[]}", "scene", "pod-kill", "cells");
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(mgw_bench_report_md_state_table(f, other), 0);
	fclose(f);
	assert_string_equal(buf, "");
	free(buf);
	json_decref(other);
	json_decref(s);
}

static void test_csv(void **state)
{
	char *csv = render(1), *line2, *line3;
	static const char hdr[] =
		"scene,cell,path,era,replicas,connection,state,session_store,"
		"victim,offered_rps,duration_s,n,valid,achieved_rps_median,"
		"achieved_rps_min,achieved_rps_max,p50_ms,p99_ms,session_losses,"
		"handle_losses,other_failures,reinitializations,repins,"
		"saturated,users,deleted_served,state_losses,task_losses,flow,keep,"
		"guard,affinity,dialogues,rounds,represented,forked,refused,tasks,"
		"task_polls,task_owner_gone,guard_refused,state_bytes_per_round,"
		"store_ops_per_dialogue\r\n";
	static const char row3[] = "pod-kill,\"x, \"\"quoted\"\"\",";

	(void)state;
	assert_true(strncmp(csv, hdr, strlen(hdr)) == 0);
	line2 = strstr(csv, "\r\n") + 2;
	assert_true(strncmp(line2, "pod-kill,legacy direct 2 replicas,", 34) == 0);
	assert_non_null(strstr(line2, ",10,9,97.250,80.000,99.960,0.712,31.500,"
	                              "1922,0,14,,,false,,,"));
	line3 = strstr(strstr(line2, "\r\n") + 2, "\r\n") + 2;
	assert_true(strncmp(line3, row3, strlen(row3)) == 0);
	free(csv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_state_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
