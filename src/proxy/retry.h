/* retry.h - the global retry budget, which keeps retries from turning an
 * overloaded or failing fleet into a retry storm.
 *
 * Over a sliding window of MGW_RETRY_WINDOW_S seconds a retry is allowed
 * while  retries < max(ratio * requests, min_per_second * window),
 * counting the retry being asked for.  So with the defaults (0.2, 10/s)
 * at most 20 % extra attempts go out under load, and a quiet gateway can
 * still retry up to 100 times per 10 s.  Per-request attempt limits
 * (routes' `retries`) are the forwarder's job; this only says yes or no
 * for the proxy as a whole.  Every function is safe from any thread
 * (lock-free); under concurrent bucket rotation a few counts may be lost,
 * which only makes the budget approximate, never unbounded. */
#ifndef MGW_PROXY_RETRY_H
#define MGW_PROXY_RETRY_H

#include <stdint.h>

#include "proxy/retry-t.h"

/* Creates a budget.  ratio >= 0.  Returns NULL on no memory. */
struct mgw_retry_budget *mgw_retry_budget_new(double ratio,
                                              uint32_t min_per_second);
void mgw_retry_budget_free(struct mgw_retry_budget *b); /* NULL allowed */

/* Counts one client request (its first attempt) at now (monotonic ms). */
void mgw_retry_budget_request(struct mgw_retry_budget *b, uint64_t now);

/* Asks for one retry at now.  Returns 1 and counts it when the budget
 * allows it, 0 (counted in b->denied) when it does not. */
int mgw_retry_budget_try(struct mgw_retry_budget *b, uint64_t now);

/* Requests and retries counted in the window ending at now. */
void mgw_retry_budget_window(struct mgw_retry_budget *b, uint64_t now,
                             uint64_t *requests, uint64_t *retries);

#endif
