/* conf_limits.c - the "limits:" section: header, URI and body bounds,
 * HTTP/2 streams, connections (in all, and per client address) and the streaming write watermark. */
#include "autoconf.h"

#include <stddef.h>

#include "core/cfgschema.h"
#include "http/conf_limits.h"
#include "http/server.h"

static void limits_init(void *obj)
{
	mgw_http_limits_default(obj);
}

#define L(member) MGW_CFG_AT(struct mgw_http_limits, member)
static const struct mgw_cfg_field limits_fields[] = {
	{.key = "max_header_bytes", .type = MGW_CFG_SIZE, L(max_header_bytes),
	 .min = 256, .max = 16 * MGW_CFG_MiB},
	{.key = "max_headers", .type = MGW_CFG_INT, L(max_headers),
	 .min = 1, .max = 10000},
	{.key = "max_uri_bytes", .type = MGW_CFG_SIZE, L(max_uri),
	 .min = 16, .max = 1 * MGW_CFG_MiB},
	{.key = "max_body_bytes", .type = MGW_CFG_SIZE, L(max_body),
	 .min = 1, .max = 1 * MGW_CFG_GiB},
	{.key = "max_concurrent_streams", .type = MGW_CFG_INT, L(max_streams),
	 .min = 1, .max = 1000000},
	{.key = "max_connections", .type = MGW_CFG_INT, L(max_connections),
	 .min = 1, .max = 10000000},
	{.key = "max_connections_per_client", .type = MGW_CFG_INT,
	 L(max_connections_per_client), .min = 0, .max = 10000000},
	{.key = "new_connections_per_client", .type = MGW_CFG_INT,
	 L(new_connections_per_client), .min = 0, .max = 10000000},
	{.key = "write_watermark", .type = MGW_CFG_SIZE,
	 L(write_high_watermark), .min = 1 * MGW_CFG_KiB, .max = 1 * MGW_CFG_GiB},
};
#undef L
const struct mgw_cfg_section mgw_http_limits_section = {
	.size = sizeof(struct mgw_http_limits),
	.fields = limits_fields, .nfields = MGW_CFG_COUNT(limits_fields),
	.init = limits_init,
};
