/* Fuzz target: Firecracker's JSON, as a --config-file document (checks, then its translation into a run_config) and as API requests before boot (fc_api_route over every method and path). */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fc/fc.h"
#include "fc/fc_config.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	return 0;
}

/* A document that passed its checks translates, or is refused with a message; drives are left
 * out (their images would be opened, and a writable one probed). */
static void document(const uint8_t *p, size_t n)
{
	struct error e = { "" };
	json_t *doc = json_loadb((const char *)p, n, JSON_REJECT_DUPLICATES, NULL);
	if (!doc)
		return;
	int ret = fc_config_check(doc, &e);
	FZ_CHECK(ret == 0 || e.msg[0]);
	if (!ret) {
		json_object_del(doc, "drives");
		struct run_config *c = malloc(sizeof(*c));
		if (!c)
			abort();
		run_config_init(c);
		fc_config_defaults(c);
		e.msg[0] = 0;
		ret = fc_config_build(doc, c, &e);
		FZ_CHECK(ret == 0 || e.msg[0]);
		FZ_CHECK(c->vm.ndevices <= VM_MAX_DEVICES);
		run_config_free(c);
		free(c);
	}
	json_decref(doc);
}

/* A sequence of requests against one Firecracker-mode process before InstanceStart: u8 method,
 * u8 path, u8 body length, body. The logger and metrics are already open (on /dev/null), so
 * that no request creates a file; InstanceStart and a snapshot load cannot reach a main thread
 * (no wake eventfd) and are refused. Oracle: every reply is 204 without a body, 200 with a JSON
 * object, or 400 with a fault_message (msivm's own routes on the same socket: an "error"); the
 * VM never starts. */
static void requests(struct fz_in *in)
{
	static const char *const methods[] = { "GET", "PUT", "PATCH", "DELETE" };
	static const char *const paths[] = {
		"/", "/version", "/machine-config", "/vm/config", "/boot-source", "/drives/rootfs",
		"/drives/drive_0", "/network-interfaces/eth0", "/vsock", "/logger", "/metrics",
		"/entropy", "/serial", "/actions", "/vm", "/snapshot/create", "/snapshot/load",
		"/balloon", "/mmds", "/cpu-config", "/drives/", "/nowhere",
	};
	int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct api_target t = { .lock = PTHREAD_MUTEX_INITIALIZER, .dump_dir = -1,
				.front = fc_api_route };
	struct fc_vmm fc = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
			     .doc = json_object(), .wake_fd = -1, .log_fd = null_fd,
			     .metrics_fd = null_fd, .target = &t };
	snprintf(fc.id, sizeof(fc.id), "fuzz");
	t.front_ctx = &fc;
	for (int i = 0; i < 16 && in->left; i++) {
		const char *method = methods[fz_u8(in) % 4];
		const char *path = paths[fz_u8(in) % (sizeof(paths) / sizeof(paths[0]))];
		size_t len = fz_u8(in);
		if (len > in->left)
			len = in->left;
		struct api_reply r;
		api_route(&t, method, path, (const char *)in->p, len, &r);
		in->p += len;
		in->left -= len;
		json_t *j = r.body ? json_loads(r.body, 0, NULL) : NULL;
		if (r.status == 204)
			FZ_CHECK(!r.body);
		else if (r.status == 400) /* msivm's own table (GET /metrics with a body) says "error" */
			FZ_CHECK(json_is_string(json_object_get(j, "fault_message")) ||
				 json_is_string(json_object_get(j, "error")));
		else if (r.status == 200)
			FZ_CHECK(json_is_object(j));
		else /* msivm's own table: GET /vm, PUT /vm/..., between boots here */
			FZ_CHECK(r.status == 405 || r.status == 404 || r.status == 503 || r.status == 400);
		json_decref(j);
		free(r.body);
	}
	FZ_CHECK(!fc.started);
	json_decref(fc.doc);
	if (null_fd >= 0)
		close(null_fd);
}

/* Input: u8 what (even: the rest is a --config-file document; odd: API requests). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint8_t what = fz_u8(&in);
	if (what % 2 == 0)
		document(in.p, in.left);
	else
		requests(&in);
	return 0;
}
