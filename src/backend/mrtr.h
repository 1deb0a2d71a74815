/* mrtr.h - multi round-trip requests (SEP-2322, basic/patterns/mrtr) in
 * the reference server: where the dialogue's requestState lives, selected
 * by --request-state:
 *   memory  "rm1." + 128-bit random id naming an entry in this replica;
 *           another replica does not know it (-32040)
 *   sealed  "rs1." PAYLOAD "." MAC: PAYLOAD = base64url(exp(8, big
 *           endian) || state JSON), MAC = base64url(HMAC-SHA256(key,
 *           "rs1." PAYLOAD)) with the --key-file keys (first signs, all
 *           verify); capped in size before the MAC is checked, and the MAC
 *           checked before anything is parsed.
 * The JSON-RPC error codes of each refusal are in doc/backend.md. */
#ifndef MGW_BACKEND_MRTR_H
#define MGW_BACKEND_MRTR_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "backend/handle_hmac.h"

/* The largest requestState accepted (sealed and memory). */
#define MGW_MRTR_MAX_STATE 8192

/* Refusal codes (JSON-RPC errors, server-defined range). */
#define MGW_MRTR_E_UNKNOWN   -32040 /* memory: not held by this replica */
#define MGW_MRTR_E_INVALID   -32041 /* malformed, truncated or bad MAC */
#define MGW_MRTR_E_TOOLARGE  -32042 /* longer than MGW_MRTR_MAX_STATE */
#define MGW_MRTR_E_EXPIRED   -32043 /* past its expiry */
#define MGW_MRTR_E_REQUEST   -32044 /* made for another tool/arguments */
#define MGW_MRTR_E_PRINCIPAL -32045 /* made for another Authorization */
#define MGW_MRTR_E_REPLAYED  -32046 /* --single-use: already presented */

struct mgw_backend;
struct mgw_be_call;

/* Seals state (borrowed) with expiry exp: a malloc'd "rs1.…" string or
 * NULL on no memory. */
char *mgw_mrtr_seal(const struct mgw_hmac_key *k, const json_t *state,
                    int64_t exp);

/* Opens a sealed state: 0 and *state (new reference), or one of the
 * MGW_MRTR_E_* codes (INVALID, TOOLARGE, EXPIRED). */
int mgw_mrtr_open(const struct mgw_hmac_key *keys, size_t nkeys,
                  const char *s, int64_t now, json_t **state);

/* Sets up be->mrtr from the configuration.  Returns 0 or a negative
 * MGW_E* with a message in err. */
int mgw_mrtr_init(struct mgw_backend *be, char *err, size_t errlen);
void mgw_mrtr_deinit(struct mgw_backend *be);
void mgw_mrtr_describe(const struct mgw_backend *be, json_t *obj);

/* The "book" tool. */
void mgw_mrtr_run_book(struct mgw_be_call *c, json_t *args);

#endif
