/* tcp_pair.h - the two ends of one TCP connection over loopback, for the
 * unit tests of socket-level helpers (read_now_test, write_now_test).
 * Include after cmocka.h. */
#ifndef MGW_TESTS_UNIT_HTTP_TCP_PAIR_H
#define MGW_TESTS_UNIT_HTTP_TCP_PAIR_H

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* *a connected to *b (both blocking); fails the test otherwise. */
static void tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(l >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &len), 0);
	*a = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(*a, (struct sockaddr *)&sa, sizeof(sa)), 0);
	*b = accept(l, NULL, NULL);
	assert_true(*b >= 0);
	close(l);
}

#endif
