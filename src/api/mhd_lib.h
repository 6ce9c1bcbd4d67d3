/* libmicrohttpd opened on first use (dlopen): a VM without --api-socket loads neither it nor gnutls and the eight libraries under that. */
#ifndef MSIVM_API_MHD_LIB_H
#define MSIVM_API_MHD_LIB_H

#include <microhttpd.h>

#include "util/error.h"

/* The library's soname: the ABI microhttpd.h describes (Debian's libmicrohttpd12). */
#define MHD_LIB_SONAME "libmicrohttpd.so.12"

/* The entry points the API server uses, typed from microhttpd.h's own prototypes. */
struct mhd_lib {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_run) *run;
	__typeof__(MHD_get_timeout) *get_timeout;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
};

/* Opens MHD_LIB_SONAME once per process (thread-safe) and resolves every entry point into
 * *out. Returns 0, or -ELIBACC with a message naming the library and what failed; a failure
 * is remembered, so later calls fail the same way without trying again. Built with
 * MSIVM_STATIC (make static), *out is the linked library's own functions: always 0. */
int mhd_lib_open(const struct mhd_lib **out, struct error *err);

#endif
