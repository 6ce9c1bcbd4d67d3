/* Firecracker mode: Firecracker's command line, config file and API as a second front end over msivm's run configuration and VM controls. */
#ifndef MSIVM_FC_FC_H
#define MSIVM_FC_FC_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"
#include "run/run_vm.h"

/* The Firecracker API version msivm implements (its swagger's), and what --version and
 * GET / say. */
#define FC_API_VERSION "1.10.0"

/* What the API thread asks of the main thread, which builds and runs the VM. */
enum fc_request { FC_REQ_NONE, FC_REQ_START, FC_REQ_LOAD };

/* One Firecracker-mode process: the staged configuration and the hand-over between the API
 * thread (which stages and asks) and the main thread (which builds, runs and answers). */
struct fc_vmm {
	pthread_mutex_t lock;     /* guards everything below */
	pthread_cond_t cond;      /* the main thread answered a request */
	json_t *doc;              /* the staged configuration, in --config-file's shape */
	char id[128];             /* --id */
	bool started;             /* InstanceStart or a snapshot load was accepted */
	enum fc_request req;      /* asked of the main thread, FC_REQ_NONE when answered */
	json_t *load;             /* FC_REQ_LOAD: the PUT /snapshot/load body */
	int answer;               /* 0 or -errno once the main thread answered */
	char answer_msg[256];
	int wake_fd;              /* eventfd: the main thread has a request */
	int log_fd;               /* the logger's file or FIFO (non-blocking), or -1 */
	int metrics_fd;           /* the metrics file or FIFO (non-blocking), or -1 */
	uint64_t metrics_ns;      /* CLOCK_MONOTONIC of the last periodic flush, 0: none yet */
	struct api_target *target;
};

/* The Firecracker route table (api_target.front): answers Firecracker's paths and methods,
 * leaves msivm's own (GET /vm, PUT /vm/pause, ...) to msivm's table. Replies are Firecracker's:
 * 204 without a body for a PUT or PATCH that succeeded, 200 with JSON for a GET, 400 with
 * {"fault_message": "..."} for anything refused (unknown path, malformed JSON, unknown field,
 * a pre-boot request after boot, what msivm does not implement). */
int fc_api_route(struct api_target *t, const char *method, const char *url, const char *body,
		 size_t len, struct api_reply *r);

/* Opens the logger's or metrics' path for writing without ever blocking: a FIFO with no reader
 * yet is opened read-write, and writes that would block are dropped. Returns the fd or -errno
 * with a message. */
int fc_open_sink(const char *path, const char *what, struct error *e);

/* Applies a checked "logger" section: opens its log_path (fc_open_sink) as msivm's log and
 * sets the level. Returns 0 or -errno with a message. */
int fc_logger_apply(struct fc_vmm *fc, const json_t *logger, struct error *e);

/* `msivm firecracker ...` (and msivm run as "firecracker"): Firecracker's command line. Returns
 * the exit status: 0 after --help or --version, 125 on bad usage or a configuration error,
 * else the run's, through `status_of` (main.c's mapping of outcomes). */
int fc_main(int argc, char **argv, int (*status_of)(struct run_outcome));

#endif
