/* capture.c - stdout and stderr of a unit test's call, as strings. */
#include "autoconf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture.h"

/* Points fd at a new temporary file; returns the file, *saved the old fd. */
static FILE *redirect(int fd, int *saved)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	*saved = dup(fd);
	assert_true(*saved >= 0);
	assert_true(dup2(fileno(f), fd) >= 0);
	return f;
}

/* Puts fd back and reads what the file got into buf. */
static void restore(int fd, int saved, FILE *f, char *buf, size_t len)
{
	size_t n;

	dup2(saved, fd);
	close(saved);
	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

void cap_begin(struct cap *c)
{
	fflush(stdout);
	fflush(stderr);
	c->fo = redirect(STDOUT_FILENO, &c->saved_out);
	c->fe = redirect(STDERR_FILENO, &c->saved_err);
}

void cap_end(struct cap *c)
{
	fflush(stdout);
	fflush(stderr);
	restore(STDOUT_FILENO, c->saved_out, c->fo, c->out, sizeof(c->out));
	restore(STDERR_FILENO, c->saved_err, c->fe, c->err, sizeof(c->err));
}
