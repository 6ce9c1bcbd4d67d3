/* libmicrohttpd opened on first use (dlopen), so that only a VM with an API socket pays for loading it and gnutls; linked in by make static. */
#include "api/mhd_lib.h"

#include <errno.h>

#ifdef MSIVM_STATIC
/* make static: libmicrohttpd (built without HTTPS by scripts/static-deps.sh) is linked in, so the
 * table is its own symbols and there is nothing to open or to fail. */
static const struct mhd_lib linked = {
	.start_daemon = MHD_start_daemon,
	.stop_daemon = MHD_stop_daemon,
	.run = MHD_run,
	.get_timeout = MHD_get_timeout,
	.get_daemon_info = MHD_get_daemon_info,
	.get_connection_info = MHD_get_connection_info,
	.create_response_from_buffer = MHD_create_response_from_buffer,
	.add_response_header = MHD_add_response_header,
	.queue_response = MHD_queue_response,
	.destroy_response = MHD_destroy_response,
};

int mhd_lib_open(const struct mhd_lib **out, struct error *err)
{
	*out = &linked;
	return 0;
}
#else
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

/* Filled once under `once`; `failed` holds the message of a failed open. */
struct mhd_lib_state {
	pthread_once_t once;
	struct mhd_lib lib;
	char failed[200];
};

static struct mhd_lib_state state = { .once = PTHREAD_ONCE_INIT };

static const struct {
	const char *name;
	size_t off;
} syms[] = {
#define SYM(field, name) { #name, offsetof(struct mhd_lib, field) }
	SYM(start_daemon, MHD_start_daemon),
	SYM(stop_daemon, MHD_stop_daemon),
	SYM(run, MHD_run),
	SYM(get_timeout, MHD_get_timeout),
	SYM(get_daemon_info, MHD_get_daemon_info),
	SYM(get_connection_info, MHD_get_connection_info),
	SYM(create_response_from_buffer, MHD_create_response_from_buffer),
	SYM(add_response_header, MHD_add_response_header),
	SYM(queue_response, MHD_queue_response),
	SYM(destroy_response, MHD_destroy_response),
#undef SYM
};

static void open_once(void)
{
	void *h = dlopen(MHD_LIB_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(state.failed, sizeof(state.failed),
			 "cannot load " MHD_LIB_SONAME " (%s; Debian: apt-get install libmicrohttpd12)",
			 dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = dlsym(h, syms[i].name);
		if (!p) {
			snprintf(state.failed, sizeof(state.failed), MHD_LIB_SONAME " has no %s",
				 syms[i].name);
			dlclose(h);
			return;
		}
		/* POSIX: a function's address from dlsym converts to a function pointer. */
		*(void **)((char *)&state.lib + syms[i].off) = p;
	}
}

int mhd_lib_open(const struct mhd_lib **out, struct error *err)
{
	pthread_once(&state.once, open_once);
	*out = state.failed[0] ? NULL : &state.lib;
	return *out ? 0 : error_set(err, -ELIBACC, "%s", state.failed);
}
#endif
