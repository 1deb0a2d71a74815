/* cfgtree.c - libyaml event stream -> mgw_cfg_node tree.
 *
 * The event API is used rather than yaml_parser_load() because the
 * document loader resolves aliases into shared nodes (so they could not be
 * refused) and offers no way to stop early on depth or size. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "core/cfgtree.h"
#include "core/errors.h"

struct builder {
	yaml_parser_t parser;
	const char *name;
	const char *text;
	size_t len;
	char *err;
	size_t errlen;
	size_t nodes;
};

static int fail_at(struct builder *b, size_t line, size_t col, int rc,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail_at(struct builder *b, size_t line, size_t col, int rc,
                   const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (b->err && b->errlen)
		snprintf(b->err, b->errlen, "%s:%zu:%zu: %s", b->name, line, col,
		         msg);
	return rc;
}

static int fail_mark(struct builder *b, yaml_mark_t m, int rc, const char *msg)
{
	return fail_at(b, m.line + 1, m.column + 1, rc, "%s", msg);
}

/* libyaml reports reader errors (bad UTF-8, control characters) by byte
 * offset only; turn that into a line and column like the other errors. */
static void offset_position(const struct builder *b, size_t off, size_t *line,
                            size_t *col)
{
	size_t bol = 0;

	*line = 1;
	for (size_t i = 0; i < off && i < b->len; i++) {
		if (b->text[i] == '\n') {
			(*line)++;
			bol = i + 1;
		}
	}
	*col = off - bol + 1;
}

static int syntax_error(struct builder *b)
{
	const yaml_parser_t *p = &b->parser;
	const char *problem = p->problem ? p->problem : "unknown error";
	size_t line = p->problem_mark.line + 1, col = p->problem_mark.column + 1;

	if (p->error == YAML_MEMORY_ERROR)
		return fail_at(b, 1, 1, MGW_ENOMEM, "out of memory");
	if (p->error == YAML_READER_ERROR)
		offset_position(b, p->problem_offset, &line, &col);
	if (p->context)
		return fail_at(b, line, col, MGW_EINVAL,
		               "YAML syntax error: %s (%s)", problem, p->context);
	return fail_at(b, line, col, MGW_EINVAL, "YAML syntax error: %s",
	               problem);
}

static int next_event(struct builder *b, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&b->parser, ev))
		return syntax_error(b);
	return 0;
}

void mgw_cfg_tree_free(struct mgw_cfg_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		mgw_cfg_tree_free(n->kids[i]);
	free(n->kids);
	free(n->text);
	free(n);
}

int mgw_cfg_node_is_null(const struct mgw_cfg_node *n)
{
	static const char *const spell[] = {"", "~", "null", "Null", "NULL"};

	if (!n || n->kind != MGW_CFG_SCALAR || !n->plain)
		return 0;
	for (size_t i = 0; i < sizeof(spell) / sizeof(spell[0]); i++)
		if (strcmp(n->text, spell[i]) == 0)
			return 1;
	return 0;
}

static struct mgw_cfg_node *node_new(struct builder *b, enum mgw_cfg_kind kind,
                                     yaml_mark_t m)
{
	struct mgw_cfg_node *n;

	if (b->nodes >= MGW_CFG_MAX_NODES) {
		fail_mark(b, m, MGW_ELIMIT, "too many values in one file");
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		fail_mark(b, m, MGW_ENOMEM, "out of memory");
		return NULL;
	}
	b->nodes++;
	n->kind = kind;
	n->line = (unsigned)m.line + 1;
	n->col = (unsigned)m.column + 1;
	return n;
}

static int append(struct builder *b, struct mgw_cfg_node *parent,
                  struct mgw_cfg_node *kid)
{
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 8;
		struct mgw_cfg_node **k = realloc(parent->kids, cap * sizeof(*k));

		if (!k)
			return fail_at(b, kid->line, kid->col, MGW_ENOMEM,
			               "out of memory");
		parent->kids = k;
		parent->cap = cap;
	}
	parent->kids[parent->n++] = kid;
	return 0;
}

/* Refuses the YAML features a configuration does not need and that make
 * small files expand or mean surprising things. */
static int check_event(struct builder *b, const yaml_event_t *ev,
                       unsigned depth)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;

	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return fail_mark(b, ev->start_mark, MGW_EINVAL,
		                 "aliases are not allowed");
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		return fail_mark(b, ev->start_mark, MGW_EINVAL,
		                 "unexpected YAML event");
	}
	if (anchor)
		return fail_mark(b, ev->start_mark, MGW_EINVAL,
		                 "anchors are not allowed");
	if (tag)
		return fail_mark(b, ev->start_mark, MGW_EINVAL,
		                 "tags are not allowed");
	if (depth > MGW_CFG_MAX_DEPTH)
		return fail_at(b, ev->start_mark.line + 1, ev->start_mark.column + 1,
		               MGW_ELIMIT, "nesting deeper than %d levels",
		               MGW_CFG_MAX_DEPTH);
	return 0;
}

static int make_scalar(struct builder *b, const yaml_event_t *ev,
                       struct mgw_cfg_node **out)
{
	struct mgw_cfg_node *n = node_new(b, MGW_CFG_SCALAR, ev->start_mark);
	size_t len = ev->data.scalar.length;

	if (!n)
		return b->nodes >= MGW_CFG_MAX_NODES ? MGW_ELIMIT : MGW_ENOMEM;
	n->text = malloc(len + 1);
	if (!n->text) {
		mgw_cfg_tree_free(n);
		return fail_mark(b, ev->start_mark, MGW_ENOMEM, "out of memory");
	}
	memcpy(n->text, ev->data.scalar.value, len);
	n->text[len] = '\0';
	n->len = len;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	*out = n;
	return 0;
}

static int build(struct builder *b, yaml_event_t *ev, unsigned depth,
                 struct mgw_cfg_node **out);

/* Reads the entries of a mapping or sequence up to its end event. */
static int fill_container(struct builder *b, struct mgw_cfg_node *n,
                          unsigned depth)
{
	yaml_event_type_t end = n->kind == MGW_CFG_MAP ? YAML_MAPPING_END_EVENT
	                                                : YAML_SEQUENCE_END_EVENT;
	yaml_event_t ev;
	struct mgw_cfg_node *kid;
	int rc;

	for (;;) {
		if ((rc = next_event(b, &ev)) != 0)
			return rc;
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return 0;
		}
		if ((rc = build(b, &ev, depth + 1, &kid)) != 0)
			return rc;
		if ((rc = append(b, n, kid)) != 0) {
			mgw_cfg_tree_free(kid);
			return rc;
		}
		if (n->kind == MGW_CFG_MAP && n->n % 2 == 1 &&
		    kid->kind != MGW_CFG_SCALAR)
			return fail_at(b, kid->line, kid->col, MGW_EINVAL,
			               "mapping keys must be scalars");
	}
}

/* Builds the node that starts with ev (which this function consumes). */
static int build(struct builder *b, yaml_event_t *ev, unsigned depth,
                 struct mgw_cfg_node **out)
{
	struct mgw_cfg_node *n;
	int rc = check_event(b, ev, depth);

	if (rc == 0 && ev->type == YAML_SCALAR_EVENT)
		rc = make_scalar(b, ev, out);
	if (rc != 0 || ev->type == YAML_SCALAR_EVENT) {
		yaml_event_delete(ev);
		return rc;
	}
	n = node_new(b, ev->type == YAML_MAPPING_START_EVENT ? MGW_CFG_MAP
	                                                     : MGW_CFG_SEQ,
	             ev->start_mark);
	yaml_event_delete(ev);
	if (!n)
		return b->nodes >= MGW_CFG_MAX_NODES ? MGW_ELIMIT : MGW_ENOMEM;
	rc = fill_container(b, n, depth);
	if (rc != 0) {
		mgw_cfg_tree_free(n);
		return rc;
	}
	*out = n;
	return 0;
}

/* Expects an event of type want and discards it. */
static int expect(struct builder *b, yaml_event_type_t want, const char *what)
{
	yaml_event_t ev;
	int rc = next_event(b, &ev);

	if (rc != 0)
		return rc;
	if (ev.type != want)
		rc = fail_mark(b, ev.start_mark, MGW_EINVAL, what);
	yaml_event_delete(&ev);
	return rc;
}

/* Stream start, then either the stream end (empty input) or exactly one
 * document. */
static int parse_stream(struct builder *b, struct mgw_cfg_node **root)
{
	yaml_event_t ev;
	int rc;

	if ((rc = expect(b, YAML_STREAM_START_EVENT, "expected a YAML stream")))
		return rc;
	if ((rc = next_event(b, &ev)) != 0)
		return rc;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		return 0;
	}
	yaml_event_delete(&ev); /* the parser only yields DOCUMENT-START here */
	if ((rc = next_event(b, &ev)) != 0)
		return rc;
	if ((rc = build(b, &ev, 1, root)) != 0)
		return rc;
	if ((rc = expect(b, YAML_DOCUMENT_END_EVENT, "expected end of document")))
		return rc;
	return expect(b, YAML_STREAM_END_EVENT, "only one document is allowed");
}

int mgw_cfg_tree_parse(const char *name, const char *text, size_t len,
                       struct mgw_cfg_node **root, char *err, size_t errlen)
{
	struct builder b = {.name = name, .text = text, .len = len,
	                    .err = err, .errlen = errlen};
	int rc;

	*root = NULL;
	if (len > MGW_CFG_MAX_BYTES)
		return fail_at(&b, 1, 1, MGW_ELIMIT,
		               "file too large (%zu bytes, the limit is %zu)", len,
		               MGW_CFG_MAX_BYTES);
	if (!yaml_parser_initialize(&b.parser))
		return fail_at(&b, 1, 1, MGW_ENOMEM, "out of memory");
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&b.parser, YAML_UTF8_ENCODING);
	rc = parse_stream(&b, root);
	yaml_parser_delete(&b.parser);
	if (rc != 0) {
		mgw_cfg_tree_free(*root);
		*root = NULL;
	}
	return rc;
}
