/* capture.h - what a unit test's call writes on stdout and stderr: both
 * descriptors are pointed at temporary files between cap_begin and
 * cap_end, then read back as strings. */
#ifndef MGW_TEST_CAPTURE_H
#define MGW_TEST_CAPTURE_H

#include <stdio.h>

struct cap {
	char out[8192];         /* stdout text after cap_end */
	char err[8192];         /* stderr text after cap_end */
	FILE *fo, *fe;          /* the temporary files while capturing */
	int saved_out, saved_err;
};

/* Starts capturing (stdio buffers flushed first). */
void cap_begin(struct cap *c);
/* Stops capturing, restores both descriptors and fills c->out, c->err. */
void cap_end(struct cap *c);

#endif
