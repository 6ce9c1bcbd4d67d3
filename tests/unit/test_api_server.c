/* Unit tests for the API server over a real unix socket: libmicrohttpd loaded only when a server starts, requests served without a VM. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "api/mhd_lib.h"
#include "vmm/seccomp.h"

/* Whether MHD_LIB_SONAME is mapped into this process. */
static bool mhd_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[512];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "libmicrohttpd") != NULL;
	fclose(f);
	return found;
}

/* msivm does not load libmicrohttpd (and gnutls under it) until an API socket is asked for. */
static void test_library_loaded_only_for_a_server(void **state)
{
	assert_false(mhd_mapped());
	struct api_target t = { .lock = PTHREAD_MUTEX_INITIALIZER, .dump_dir = -1 };
	char path[64];
	snprintf(path, sizeof(path), "/tmp/msivm-test-api-%d.sock", (int)getpid());
	struct api_server *s;
	struct error err = { { 0 } };
	int ret = api_server_start(&s, path, &t, SECCOMP_OFF, &err);
	if (ret)
		fail_msg("api_server_start: %d %s", ret, err.msg);
	assert_true(mhd_mapped());
	const struct mhd_lib *m;
	assert_int_equal(mhd_lib_open(&m, &err), 0);
	assert_non_null(m->start_daemon);
	assert_non_null(m->destroy_response);

	/* Served through the library: no VM yet ("rebooting", as between boots), and a 404. */
	assert_int_equal(api_server_run(s, &err), 0);
	char *reply = NULL;
	assert_int_equal(api_request(path, "GET", "/vm", "", 10, &reply), 0);
	assert_non_null(reply);
	if (!strstr(reply, " 200 ") || !strstr(reply, "application/json") ||
	    !strstr(reply, "\"state\":\"rebooting\""))
		fail_msg("reply: %s", reply);
	free(reply);
	assert_int_equal(api_request(path, "PUT", "/nowhere", "", 10, &reply), 0);
	if (!strstr(reply, " 404 "))
		fail_msg("reply: %s", reply);
	free(reply);
	api_server_stop(s);
	assert_int_equal(access(path, F_OK), -1); /* the socket's path is removed */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_library_loaded_only_for_a_server),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
