/* state_table.c - the columns of the stateful scenes' second table.  The
 * losses that matter in each scene come first after the counts they are
 * a share of; the cost columns (bytes of a requestState, Redis commands
 * of a dialogue) last. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "bench/src/state_table.h"

static const struct mgw_bench_state_col MRTR_COLS[] = {
	{ "dialogues", "dialogues" },
	{ "rounds", "rounds" },
	{ "state lost", "state_losses" },
	{ "other failures", "other_failures" },
	{ "requestState bytes per round", "state_bytes_per_round" },
	{ "store ops per dialogue", "store_ops_per_dialogue" },
	{ NULL, NULL },
};

static const struct mgw_bench_state_col FORK_COLS[] = {
	{ "dialogues", "dialogues" },
	{ "re-presented", "represented" },
	{ "forked", "forked" },
	{ "refused", "refused" },
	{ "refused by the guard", "guard_refused" },
	{ "other failures", "other_failures" },
	{ "requestState bytes per round", "state_bytes_per_round" },
	{ NULL, NULL },
};

static const struct mgw_bench_state_col TASK_COLS[] = {
	{ "tasks", "tasks" },
	{ "polls", "task_polls" },
	{ "task lost", "task_losses" },
	{ "owner gone (gateway)", "task_owner_gone" },
	{ "other failures", "other_failures" },
	{ NULL, NULL },
};

const struct mgw_bench_state_col *mgw_bench_state_cols(const char *scene)
{
	if (!scene)
		return NULL;
	if (strcmp(scene, "mrtr") == 0)
		return MRTR_COLS;
	if (strcmp(scene, "fork") == 0)
		return FORK_COLS;
	if (strcmp(scene, "tasks") == 0)
		return TASK_COLS;
	return NULL;
}

void mgw_bench_state_value(const json_t *v, char *buf, size_t len)
{
	if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.1f", json_real_value(v));
	else
		snprintf(buf, len, "%s", "–");
}
