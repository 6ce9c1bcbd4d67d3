/* Unit tests for the API's routing: paths, methods, bodies and the between-boots state, without a VM. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/api.h"

static struct api_target target = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void expect_reply(const char *method, const char *url, const char *body, unsigned status,
			 const char *needle)
{
	struct api_reply r;
	api_route(&target, method, url, body, body ? strlen(body) : 0, &r);
	if (r.status != status || !r.body || !strstr(r.body, needle))
		fail_msg("%s %s: want %u with '%s', got %u %s", method, url, status, needle, r.status,
			 r.body ? r.body : "(no body)");
	free(r.body);
}

static void test_unknown_path_404(void **state)
{
	expect_reply("GET", "/nowhere", NULL, 404, "no such path");
	expect_reply("PUT", "/vm/explode", NULL, 404, "no such path");
	expect_reply("GET", "/vm/", NULL, 404, "no such path");
	expect_reply("GET", "", NULL, 404, "no such path");
}

static void test_wrong_method_405(void **state)
{
	expect_reply("GET", "/vm/pause", NULL, 405, "use PUT");
	expect_reply("DELETE", "/vm/shutdown", NULL, 405, "use PUT");
	expect_reply("PUT", "/vm", NULL, 405, "use GET");
	expect_reply("POST", "/metrics", NULL, 405, "use GET");
}

static void test_body_refused_400(void **state)
{
	expect_reply("PUT", "/vm/pause", "{}", 400, "takes no body");
	expect_reply("GET", "/vm", "x", 400, "takes no body");
}

static void test_between_boots(void **state)
{
	api_set_vm(&target, NULL, 3);
	expect_reply("GET", "/vm", NULL, 200, "\"state\":\"rebooting\",\"boot\":3");
	expect_reply("GET", "/metrics", NULL, 503, "between boots");
	expect_reply("PUT", "/vm/pause", NULL, 503, "between boots");
	expect_reply("PUT", "/vm/power-button", NULL, 503, "between boots");
}

static void test_config_in_vm_view(void **state)
{
	target.config_json = "{\"mem\": \"256M\"}";
	expect_reply("GET", "/vm", NULL, 200, "\"config\":{\"mem\":\"256M\"}");
	target.config_json = NULL;
	expect_reply("GET", "/vm", NULL, 200, "\"config\":null");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_path_404),
		cmocka_unit_test(test_wrong_method_405),
		cmocka_unit_test(test_body_refused_400),
		cmocka_unit_test(test_between_boots),
		cmocka_unit_test(test_config_in_vm_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
