/* Firecracker's API routes: method + path -> the staged configuration (before InstanceStart) or msivm's own VM controls (after), in Firecracker's status codes and error body. */
#include "fc/fc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fc/fc_config.h"
#include "fc/fc_drive.h"
#include "fc/fc_metrics.h"
#include "fc/fc_schema.h"
#include "util/log.h"
#include "vmm/vm.h"
#include "vmm/vm_control.h"

#define AFTER_START "The requested operation is not supported after starting the microVM."
#define BEFORE_START "The requested operation is not supported before starting the microVM."

static void reply_json(struct api_reply *r, unsigned status, json_t *j)
{
	r->status = status;
	r->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (j && !r->body) {
		r->status = 500;
		r->body = strdup("{\"fault_message\":\"out of memory\"}");
	}
}

static void fault(struct api_reply *r, const char *msg)
{
	log_warn("firecracker API: %s", msg);
	reply_json(r, 400, json_pack("{s:s}", "fault_message", msg));
}

static void no_content(struct api_reply *r)
{
	r->status = 204;
	r->body = NULL;
}

/* "Not started" (also while the VM is being built: Kata takes "Running" to mean that the
 * vsock's socket exists), "Running" or "Paused"; fc->lock held. */
static const char *state_of(struct fc_vmm *fc, struct api_target *t)
{
	if (!fc->started)
		return "Not started";
	pthread_mutex_lock(&t->lock);
	bool built = t->vm != NULL, paused = built && vm_is_paused(t->vm);
	pthread_mutex_unlock(&t->lock);
	return !built ? "Not started" : paused ? "Paused" : "Running";
}

static json_t *machine_config(const json_t *doc)
{
	json_t *m = json_pack("{s:i,s:i,s:b,s:b,s:s}", "vcpu_count", 1, "mem_size_mib", 128, "smt", 0,
			      "track_dirty_pages", 0, "huge_pages", "None");
	json_object_update(m, json_object_get(doc, "machine-config"));
	return m;
}

/* Replaces section `key` of the staged document, or the item of an array section whose
 * `idkey` is `id`, in place (a new id is appended). */
static void stage(json_t *doc, const char *key, json_t *body, const char *idkey, const char *id)
{
	if (!idkey) {
		json_object_set_new(doc, key, body);
		return;
	}
	json_t *list = json_object_get(doc, key);
	if (!list) {
		list = json_array();
		json_object_set_new(doc, key, list);
	}
	size_t i;
	json_t *item;
	json_array_foreach(list, i, item)
		if (!strcmp(json_string_value(json_object_get(item, idkey)), id)) {
			json_array_set_new(list, i, body);
			return;
		}
	json_array_append_new(list, body);
}

/* A staged section after its checks; fc->lock held. */
static void put_section(struct fc_vmm *fc, const char *key, json_t *body, const char *idkey,
			const char *id, struct api_reply *r)
{
	struct error e;
	if (fc_config_check_section(key, body, idkey != NULL, &e)) { /* the body first, as Firecracker */
		json_decref(body);
		fault(r, e.msg);
		return;
	}
	if (fc->started) {
		json_decref(body);
		fault(r, AFTER_START);
		return;
	}
	if (idkey && strcmp(json_string_value(json_object_get(body, idkey)), id)) {
		json_decref(body);
		fault(r, "The id from the path does not match the id from the body!");
		return;
	}
	/* A second root drive is refused as Firecracker does. */
	if (!strcmp(key, "drives") && json_is_true(json_object_get(body, "is_root_device"))) {
		size_t i;
		json_t *d;
		json_array_foreach(json_object_get(fc->doc, "drives"), i, d)
			if (json_is_true(json_object_get(d, "is_root_device")) &&
			    strcmp(json_string_value(json_object_get(d, "drive_id")), id)) {
				json_decref(body);
				fault(r, "A root block device already exists!");
				return;
			}
	}
	if (!strcmp(key, "logger") && fc_logger_apply(fc, body, &e)) {
		json_decref(body);
		fault(r, e.msg);
		return;
	}
	if (!strcmp(key, "metrics") && fc_metrics_open(fc, body, &e)) {
		json_decref(body);
		fault(r, e.msg);
		return;
	}
	stage(fc->doc, key, body, idkey, id);
	no_content(r);
}

/* A request answered by msivm's own table, as Firecracker answers: 204, or 400 with its reason. */
static void own(struct api_target *t, const char *url, const char *body, struct api_reply *r)
{
	struct api_reply o;
	api_route_own(t, "PUT", url, body, body ? strlen(body) : 0, &o);
	if (o.status == 200) {
		free(o.body);
		no_content(r);
		return;
	}
	json_t *j = o.body ? json_loads(o.body, 0, NULL) : NULL;
	const char *why = json_string_value(json_object_get(j, "error"));
	char msg[300];
	snprintf(msg, sizeof(msg), "%s", why ? why : "the VM refused the request");
	json_decref(j);
	free(o.body);
	fault(r, msg);
}

/* Asks the main thread (FC_REQ_START, FC_REQ_LOAD) and waits for the VM to run or fail. */
static void ask_main(struct fc_vmm *fc, struct api_target *t, enum fc_request req, json_t *load,
		     struct api_reply *r)
{
	fc->req = req;
	fc->load = load;
	fc->answer = 0;
	uint64_t one = 1;
	if (write(fc->wake_fd, &one, sizeof(one)) != sizeof(one)) {
		fc->req = FC_REQ_NONE;
		json_decref(fc->load);
		fc->load = NULL;
		fault(r, "cannot reach msivm's main thread");
		return;
	}
	while (fc->req != FC_REQ_NONE)
		pthread_cond_wait(&fc->cond, &fc->lock);
	if (fc->answer) {
		fault(r, fc->answer_msg);
		return;
	}
	fc->started = true;
	/* The configuration holds: wait (10 s at most, as Kata) until the VM runs. */
	for (int i = 0; i < 5000; i++) {
		pthread_mutex_lock(&t->lock);
		bool up = t->vm != NULL;
		pthread_mutex_unlock(&t->lock);
		if (up) {
			no_content(r);
			return;
		}
		if (fc->answer) {
			fault(r, fc->answer_msg);
			return;
		}
		pthread_mutex_unlock(&fc->lock);
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
		pthread_mutex_lock(&fc->lock);
	}
	fault(r, "the VM did not start within 10 s (see msivm's log)");
}

static void action(struct fc_vmm *fc, struct api_target *t, json_t *body, struct api_reply *r)
{
	const char *a = json_string_value(json_object_get(body, "action_type"));
	if (!strcmp(a, "InstanceStart")) {
		if (fc->started)
			fault(r, AFTER_START);
		else if (!json_object_get(fc->doc, "boot-source"))
			fault(r, "Cannot start microvm without kernel configuration.");
		else
			ask_main(fc, t, FC_REQ_START, NULL, r);
	} else if (!strcmp(a, "FlushMetrics")) {
		struct error e;
		if (fc_metrics_flush(fc, &e))
			fault(r, e.msg);
		else
			no_content(r);
	} else if (!fc->started) {
		fault(r, BEFORE_START);
	} else { /* SendCtrlAltDel: msivm's guest is told by its ACPI power button */
		own(t, "/vm/power-button", NULL, r);
	}
	json_decref(body);
}

static void patch_vm(struct fc_vmm *fc, struct api_target *t, json_t *body, struct api_reply *r)
{
	bool pause = !strcmp(json_string_value(json_object_get(body, "state")), "Paused");
	json_decref(body);
	if (!fc->started) {
		fault(r, BEFORE_START);
		return;
	}
	const char *now = state_of(fc, t);
	if (!strcmp(now, pause ? "Paused" : "Running")) /* already so: nothing to do */
		no_content(r);
	else
		own(t, pause ? "/vm/pause" : "/vm/resume", NULL, r);
}

static void snapshot_create(struct fc_vmm *fc, struct api_target *t, json_t *body,
			    struct api_reply *r)
{
	const json_t *type = json_object_get(body, "snapshot_type");
	if (!fc->started)
		fault(r, BEFORE_START);
	else if (type && !strcmp(json_string_value(type), "Diff"))
		fault(r, "Diff snapshots are not supported: msivm takes full snapshots");
	else if (strcmp(state_of(fc, t), "Paused"))
		fault(r, "Cannot create a snapshot of a running microVM: pause it first "
			 "(PATCH /vm {\"state\": \"Paused\"})");
	else {
		/* Firecracker replaces existing files (create + truncate): so do we, by rename */
		json_t *own_body = json_pack("{s:O,s:O,s:b,s:b}", "state",
					     json_object_get(body, "snapshot_path"), "mem",
					     json_object_get(body, "mem_file_path"), "resume", 0,
					     "overwrite", 1);
		char *text = json_dumps(own_body, JSON_COMPACT);
		json_decref(own_body);
		own(t, "/vm/snapshot", text, r);
		free(text);
	}
	json_decref(body);
}

static void snapshot_load(struct fc_vmm *fc, struct api_target *t, json_t *body,
			  struct api_reply *r)
{
	const json_t *mb = json_object_get(body, "mem_backend");
	if (fc->started)
		fault(r, AFTER_START);
	else if (json_object_size(fc->doc))
		fault(r, "Loading a microVM snapshot not allowed after configuring boot-specific "
			 "resources.");
	else if (!mb == !json_object_get(body, "mem_file_path"))
		fault(r, "Exactly one of mem_backend and mem_file_path must be given.");
	else if (mb && strcmp(json_string_value(json_object_get(mb, "backend_type")), "File"))
		fault(r, "mem_backend Uffd: msivm loads a snapshot's memory from a file only");
	else if (json_is_true(json_object_get(body, "enable_diff_snapshots")) ||
		 json_is_true(json_object_get(body, "track_dirty_pages")))
		fault(r, "track_dirty_pages: msivm takes full snapshots only");
	else {
		ask_main(fc, t, FC_REQ_LOAD, body, r);
		return; /* the main thread owns body now */
	}
	json_decref(body);
}

/* The id in /drives/ID or /network-interfaces/ID (non-empty, no further '/'), or NULL. */
static const char *path_id(const char *url, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(url, prefix, n) || !url[n] || strchr(url + n, '/'))
		return NULL;
	return url + n;
}

static bool own_path(const char *method, const char *url)
{
	return (!strcmp(method, "GET") && (!strcmp(url, "/vm") || !strcmp(url, "/metrics"))) ||
	       (!strcmp(method, "PUT") && !strncmp(url, "/vm/", 4) && strcmp(url, "/vm/config"));
}

static const char *const unimplemented[] = { "/balloon", "/mmds", "/cpu-config", "/pmem",
					     "/hotplug", "/memory-hotplug", NULL };

/* Requests with a body, once it is parsed; fc->lock held. Returns false for an unknown route. */
static bool route_body(struct fc_vmm *fc, struct api_target *t, bool put, bool patch,
		       const char *url, json_t *body, struct api_reply *r)
{
	static const struct { const char *url, *key; } puts_[] = {
		{ "/boot-source", "boot-source" }, { "/machine-config", "machine-config" },
		{ "/vsock", "vsock" }, { "/logger", "logger" }, { "/metrics", "metrics" },
		{ "/entropy", "entropy" }, { "/serial", "serial" },
	};
	struct error e;
	const char *id;
	for (size_t i = 0; put && i < sizeof(puts_) / sizeof(puts_[0]); i++)
		if (!strcmp(url, puts_[i].url)) {
			put_section(fc, puts_[i].key, body, NULL, NULL, r);
			return true;
		}
	if (put && (id = path_id(url, "/drives/"))) {
		put_section(fc, "drives", body, "drive_id", id, r);
	} else if (put && (id = path_id(url, "/network-interfaces/"))) {
		put_section(fc, "network-interfaces", body, "iface_id", id, r);
	} else if (put && !strcmp(url, "/actions")) {
		if (fc_schema_check(&fc_action, body, &e)) {
			json_decref(body);
			fault(r, e.msg);
		} else {
			action(fc, t, body, r);
		}
	} else if (patch && !strcmp(url, "/machine-config")) {
		json_t *m = json_deep_copy(json_object_get(fc->doc, "machine-config"));
		int bad = fc_schema_check(&fc_machine_config_patch, body, &e);
		if (bad || fc->started) {
			json_decref(body);
			json_decref(m);
			fault(r, bad ? e.msg : AFTER_START);
			return true;
		}
		if (!m)
			m = json_pack("{s:i,s:i}", "vcpu_count", 1, "mem_size_mib", 128);
		json_object_update(m, body);
		json_decref(body);
		put_section(fc, "machine-config", m, NULL, NULL, r);
	} else if (patch && (id = path_id(url, "/drives/"))) {
		if (fc_schema_check(&fc_partial_drive, body, &e))
			fault(r, e.msg);
		else if (strcmp(json_string_value(json_object_get(body, "drive_id")), id))
			fault(r, "The id from the path does not match the id from the body!");
		else if (!fc->started)
			fault(r, BEFORE_START);
		else if (fc_drive_patch(fc, t, body, &e))
			fault(r, e.msg);
		else
			no_content(r);
		json_decref(body);
	} else if (patch && (id = path_id(url, "/network-interfaces/"))) {
		if (fc_schema_check(&fc_partial_network_interface, body, &e))
			fault(r, e.msg);
		else if (strcmp(json_string_value(json_object_get(body, "iface_id")), id))
			fault(r, "The id from the path does not match the id from the body!");
		else if (!fc->started)
			fault(r, BEFORE_START);
		else if (fc_net_patch(fc, t, body, &e))
			fault(r, e.msg);
		else
			no_content(r);
		json_decref(body);
	} else if (patch && !strcmp(url, "/vm")) {
		if (fc_schema_check(&fc_vm_state, body, &e)) {
			json_decref(body);
			fault(r, e.msg);
		} else {
			patch_vm(fc, t, body, r);
		}
	} else if (put && (!strcmp(url, "/snapshot/create") || !strcmp(url, "/snapshot/load"))) {
		bool create = !strcmp(url, "/snapshot/create");
		if (fc_schema_check(create ? &fc_snapshot_create : &fc_snapshot_load, body, &e)) {
			json_decref(body);
			fault(r, e.msg);
		} else if (create) {
			snapshot_create(fc, t, body, r);
		} else {
			snapshot_load(fc, t, body, r);
		}
	} else {
		json_decref(body);
		return false;
	}
	return true;
}

static void route_get(struct fc_vmm *fc, struct api_target *t, const char *url,
		      struct api_reply *r)
{
	if (!strcmp(url, "/"))
		reply_json(r, 200, json_pack("{s:s,s:s,s:s,s:s}", "id", fc->id, "state",
					     state_of(fc, t), "vmm_version", FC_API_VERSION,
					     "app_name", "msivm"));
	else if (!strcmp(url, "/version"))
		reply_json(r, 200, json_pack("{s:s}", "firecracker_version", FC_API_VERSION));
	else if (!strcmp(url, "/machine-config"))
		reply_json(r, 200, machine_config(fc->doc));
	else { /* /vm/config */
		json_t *doc = json_deep_copy(fc->doc);
		json_object_set_new(doc, "machine-config", machine_config(fc->doc));
		reply_json(r, 200, doc);
	}
}

int fc_api_route(struct api_target *t, const char *method, const char *url, const char *body,
		 size_t len, struct api_reply *r)
{
	struct fc_vmm *fc = t->front_ctx;
	bool get = !strcmp(method, "GET"), put = !strcmp(method, "PUT"),
	     patch = !strcmp(method, "PATCH");
	char msg[300];
	if (own_path(method, url))
		return 0;
	for (int i = 0; unimplemented[i]; i++)
		if (!strncmp(url, unimplemented[i], strlen(unimplemented[i]))) {
			snprintf(msg, sizeof(msg), "%.100s: msivm does not implement this part of "
				 "Firecracker's API (see docs/kata.md)", url);
			fault(r, msg);
			return 1;
		}
	pthread_mutex_lock(&fc->lock);
	if (get && (!strcmp(url, "/") || !strcmp(url, "/version") ||
		    !strcmp(url, "/machine-config") || !strcmp(url, "/vm/config"))) {
		route_get(fc, t, url, r);
		pthread_mutex_unlock(&fc->lock);
		return 1;
	}
	bool handled = false;
	if (put || patch) {
		json_error_t je;
		json_t *j = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &je) : NULL;
		if (!j) {
			snprintf(msg, sizeof(msg), "%s", len ? je.text : "The request body is empty: "
				 "this request takes a JSON object.");
			if (len)
				snprintf(msg, sizeof(msg), "An error occurred when deserializing the json "
					 "body of a request: %.200s at line %d column %d", je.text,
					 je.line, je.column);
			fault(r, msg);
			handled = true;
		} else {
			handled = route_body(fc, t, put, patch, url, j, r);
		}
	}
	pthread_mutex_unlock(&fc->lock);
	if (!handled) {
		snprintf(msg, sizeof(msg), "Invalid request method and/or path: %.10s %.200s.", method,
			 url);
		fault(r, msg);
	}
	return 1;
}
