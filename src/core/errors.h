/* errors.h - the one error convention of mcpgw: functions return 0 on
 * success or a negative MGW_E* code. */
#ifndef MGW_CORE_ERRORS_H
#define MGW_CORE_ERRORS_H

enum {
	MGW_OK = 0,
	MGW_ENOMEM = -1,    /* allocation failed */
	MGW_EINVAL = -2,    /* invalid argument or input */
	MGW_EIO = -3,       /* system call / network failure */
	MGW_ELIMIT = -4,    /* a configured limit was exceeded */
	MGW_ECLOSED = -5,   /* peer or stream already closed */
	MGW_ENOTFOUND = -6, /* no such entry */
	MGW_EPROTO = -7,    /* protocol violation by the peer */
	MGW_ETIMEDOUT = -8, /* deadline passed */
	MGW_EEXPIRED = -9,  /* token or entry expired */
	MGW_EAUTH = -10,    /* authentication / integrity check failed */
	MGW_ECONFLICT = -11, /* compare-and-set lost: the entry changed */
	MGW_EAGAIN = -12,   /* a shared budget is used up: try later */
};

/* Returns a static, human readable name for an MGW_E* code. */
const char *mgw_strerror(int err);

/* Process exit codes of the mcpgw command line. */
enum {
	MGW_EXIT_OK = 0,
	MGW_EXIT_RUNTIME = 1,
	MGW_EXIT_USAGE = 2,
};

#endif
