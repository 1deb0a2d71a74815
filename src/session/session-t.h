/* session-t.h - the record of one legacy (2025-11-25) MCP session as the
 * gateway terminates it (types only; see session.h for the functions).
 *
 * What a record holds and why:
 *   - the client-facing id, minted by the gateway (never the upstream's), so
 *     that the client keeps one id however often the session moves;
 *   - the client's own `initialize` request body, byte for byte, and the
 *     few request headers needed to replay it (see "replay headers" below),
 *     plus the client's `notifications/initialized` body, so a re-pin sends
 *     a new replica exactly what the client sent the first one;
 *   - the negotiated protocol version (for MCP-Protocol-Version on replayed
 *     requests that the gateway itself issues);
 *   - the pin: the upstream's Mcp-Session-Id and the pinned server, named by
 *     its configured URL string because server indices differ between
 *     gateway processes and configuration versions, while a URL means the
 *     same replica to every gateway that shares a configuration;
 *   - a pin generation, incremented on every re-pin, so that the proxy can
 *     tell whether an SSE event id was issued under the current pin
 *     (`Last-Event-ID` is only passed on when it was);
 *   - the names of the tools a `tools/list` result annotated readOnlyHint
 *     or idempotentHint, so that an in-flight `tools/call` of such a tool
 *     may be replayed after a re-pin;
 *   - a digest of the principal (SHA-256 of the Authorization header value)
 *     when sessions are bound to it.
 *
 * Replay headers.  Credentials are NOT stored: a replayed `initialize`
 * carries the end-to-end credentials (Authorization, Cookie) of the request
 * that triggered the re-pin, i.e. of the principal acting now, whose token
 * may have been refreshed since the session began; storing them would also
 * put bearer tokens in Redis and in sealed tokens.  What is stored is the
 * short list of non-credential headers the proxy chose to keep from the
 * client's original `initialize` (in practice MCP-Protocol-Version when the
 * client sent one, which 2025-06-18+ clients do not do on `initialize`);
 * the proxy adds Content-Type and Accept itself.
 *
 * Immutability.  A record handed to a store is immutable and reference
 * counted (atomically: stores are shared by worker threads); readers take a
 * reference and read without locks.  A change (re-pin, tools annotations,
 * the late `notifications/initialized`) is made on a private copy
 * (mgw_session_dup) that replaces the stored record by compare-and-set on
 * `version`. */
#ifndef MGW_SESSION_SESSION_T_H
#define MGW_SESSION_SESSION_T_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Limits on what one record may hold; anything a client controls is
 * bounded here or by the configured max_initialize_bytes. */
#define MGW_SESSION_ID_HEX_BYTES 16     /* random bytes of a minted id
                                         * (memory and redis stores) */
#define MGW_SESSION_UPSTREAM_ID_MAX 1024 /* an upstream Mcp-Session-Id */
#define MGW_SESSION_URL_MAX 2048        /* a pinned server URL */
#define MGW_SESSION_VERSION_MAX 64      /* a protocol version string */
#define MGW_SESSION_MAX_HEADERS 8       /* replay headers kept */
#define MGW_SESSION_HEADER_NAME_MAX 64
#define MGW_SESSION_HEADER_VALUE_MAX 1024
#define MGW_SESSION_INITIALIZED_MAX 4096 /* notifications/initialized body */
#define MGW_SESSION_MAX_SAFE_TOOLS 1024 /* replay-safe tool names kept */
#define MGW_SESSION_TOOL_NAME_MAX 256
#define MGW_SESSION_DIGEST_LEN 32       /* SHA-256 */

/* One non-credential request header of the client's `initialize`. */
struct mgw_session_header {
	char *name;                     /* as the client spelled it */
	char *value;
};

struct mgw_session {
	/* --- identity (set by the store at create) --- */
	char *id;                       /* client-facing id, visible ASCII
	                                 * (0x21..0x7e), NUL-terminated */
	size_t id_len;
	uint64_t version;               /* bumped by every successful update;
	                                 * the compare-and-set token */

	/* --- the client's handshake (immutable after create, except that a
	 * record created before `notifications/initialized` arrived gets it
	 * by one update) --- */
	unsigned char *init_body;       /* the `initialize` request, verbatim */
	size_t init_len;
	struct mgw_session_header *init_headers; /* replay headers (above) */
	size_t n_init_headers;
	unsigned char *initialized_body; /* `notifications/initialized`,
	                                 * verbatim; NULL until the client sent
	                                 * it (a replay then sends none, or, for
	                                 * a sealed session a gateway did not
	                                 * see, the canonical body) */
	size_t initialized_len;
	char *protocol_version;         /* negotiated (the InitializeResult's
	                                 * protocolVersion); NULL = unknown */
	int bound;                      /* principal holds a digest */
	unsigned char principal[MGW_SESSION_DIGEST_LEN]; /* SHA-256 of the
	                                 * Authorization value ("" if absent) */

	/* --- the pin (changed by updates) --- */
	char *pin_url;                  /* the pinned server's configured URL;
	                                 * NULL = not pinned (a sealed session
	                                 * opened without its pin, or a pin that
	                                 * was dropped): the proxy re-pins */
	char *upstream_sid;             /* the upstream's Mcp-Session-Id; NULL
	                                 * when the server minted none */
	uint32_t pin_gen;               /* 0 at create, +1 per re-pin */
	_Atomic uint64_t pin_tag_memo;  /* mgw_session_pin_tag's answer with
	                                 * bit 32 set once computed, 0 before:
	                                 * a record's pin never changes once a
	                                 * store holds it, so every reader that
	                                 * computes it writes the same value;
	                                 * the pin's setters clear it */

	/* --- replay safety, from the tools/list results the gateway saw --- */
	int tools_known;                /* a tools/list result was seen */
	char **safe_tools;              /* sorted, unique: tools annotated
	                                 * readOnlyHint or idempotentHint */
	size_t n_safe_tools;

	/* --- times --- */
	int64_t created_s;              /* wall clock, set at create */
	int64_t expires_s;              /* wall clock: end of the session's
	                                 * lifetime (max_lifetime after create);
	                                 * idle expiry is the store's business */

	/* --- bookkeeping --- */
	size_t mem_size;                /* bytes this record holds (for memory
	                                 * caps), kept by the setters */
	uint64_t cached_ms;             /* a caching store's own stamp (redis:
	                                 * monotonic ms when this copy was
	                                 * fetched from the authority), set
	                                 * before the record is shared; 0
	                                 * elsewhere; not copied by dup */
	atomic_uint refs;
};

#endif
