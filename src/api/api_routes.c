/* API routes: method + path -> a VM control (pause, resume, power button, stop, reboot, disks, dump) or a JSON view. */
#include "api/api.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config_print.h"
#include "util/log.h"
#include "vmm/vm.h"
#include "vmm/vm_control.h"
#include "util/clock.h"
#include "vmm/vm_dump.h"
#include "vmm/vm_snapshot.h"
#include "vmm/vm_stats.h"

static void reply_json(struct api_reply *r, unsigned status, json_t *j)
{
	r->status = status;
	r->body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!r->body) {
		r->status = 500;
		r->body = strdup("{\"error\":\"out of memory\"}");
	}
}

static void reply_error(struct api_reply *r, unsigned status, const char *msg)
{
	reply_json(r, status, json_pack("{s:s}", "error", msg));
}

static void reply_ok(struct api_reply *r, const char *what)
{
	reply_json(r, 200, json_pack("{s:s}", "result", what));
}

static void get_vm(struct api_target *t, struct api_reply *r)
{
	const char *state = !t->vm ? "rebooting" : vm_is_paused(t->vm) ? "paused" : "running";
	json_t *j = json_pack("{s:s,s:I}", "state", state, "boot", (json_int_t)t->boot);
	json_t *cfg = t->config_json ? json_loads(t->config_json, 0, NULL) : NULL;
	json_object_set_new(j, "config", cfg ? cfg : json_null());
	reply_json(r, 200, j);
}

static void pause_vm(struct vm *vm, struct api_reply *r)
{
	struct error err = { "" };
	int ret = vm_pause(vm, &err);
	if (ret == -EALREADY)
		reply_error(r, 409, "the VM is paused already");
	else if (ret == -ESHUTDOWN)
		reply_error(r, 409, "the VM is stopping");
	else if (ret)
		reply_error(r, 500, err.msg);
	else
		reply_ok(r, "paused");
}

static void power_button(struct vm *vm, struct api_reply *r)
{
	int ret = vm_power_button(vm);
	if (ret == 1)
		reply_ok(r, "pressed");
	else if (ret == 0)
		reply_error(r, 409, "the guest does not listen for its power button "
				    "(its interrupt pin is masked: no ACPI button driver)");
	else
		reply_error(r, 500, strerror(-ret));
}

/* A crash dump on request: the vCPUs are parked for it (a running VM is paused, then resumed). */
static void dump_vm(struct api_target *t, struct api_reply *r)
{
	struct error err = { "" };
	if (t->dump_dir < 0) {
		reply_error(r, 409, "no dump directory: start msivm with --dump-on-crash DIR");
		return;
	}
	bool pause_for_it = !vm_is_paused(t->vm);
	int ret = pause_for_it ? vm_pause(t->vm, &err) : 0;
	if (ret) {
		reply_error(r, ret == -ESHUTDOWN ? 409 : 500, ret == -ESHUTDOWN ? "the VM is stopping"
			    : err.msg);
		return;
	}
	char stem[64], core[80], js[80];
	snprintf(stem, sizeof(stem), "msivm-%d-api%u", (int)getpid(), ++t->dumps);
	ret = vm_dump_write(t->vm, t->dump_dir, stem, &err);
	if (pause_for_it)
		vm_resume(t->vm);
	if (ret) {
		log_err("API dump: %s", err.msg);
		reply_error(r, 500, err.msg);
		return;
	}
	snprintf(core, sizeof(core), "%s.core", stem);
	snprintf(js, sizeof(js), "%s.json", stem);
	log_info("API dump: %s and %s", core, js);
	reply_json(r, 200, json_pack("{s:s,s:s,s:s,s:b}", "result", "dumped", "core", core, "json",
				     js, "paused_for_it", pause_for_it));
}

/* The stages of a snapshot, in ms (pause: the vCPUs parked; quiesce: the I/O thread parked with
 * every request finished; state: the state read; write: both files written). */
struct snap_times {
	double pause, quiesce, state, write;
};

static double ms_since(uint64_t *t)
{
	uint64_t now = clock_now_ns();
	double ms = (double)(now - *t) / 1e6;
	*t = now;
	return ms;
}

/* One file of a snapshot: a new file at `path`; with `overwrite`, a new file at PATH.msivm-new,
 * renamed over `path` once the whole snapshot is written (a failed snapshot leaves the old one). */
struct snap_file {
	const char *path;
	char tmp[4096];
	int fd;
};

static int snap_file_open(struct snap_file *f, const char *path, bool overwrite, struct error *err)
{
	*f = (struct snap_file){ .path = path, .fd = -1 };
	if (overwrite && (size_t)snprintf(f->tmp, sizeof(f->tmp), "%s.msivm-new", path) >= sizeof(f->tmp))
		return error_set(err, -ENAMETOOLONG, "'%s': the name is too long", path);
	const char *at = overwrite ? f->tmp : path;
	f->fd = open(at, VM_SNAPSHOT_OPEN_FLAGS, 0600);
	if (f->fd >= 0)
		return 0;
	if (errno == EEXIST && !overwrite)
		return error_set(err, -EEXIST, "'%s' exists: a snapshot never replaces a file (give new "
				 "names, or ask for \"overwrite\": true: msivm remote snapshot "
				 "--overwrite)", path);
	if (errno == EEXIST)
		return error_set(err, -EEXIST, "'%s' exists (left by an interrupted snapshot?): remove "
				 "it", at);
	return error_set(err, -errno, "cannot create '%s': %s", at, strerror(errno));
}

/* Closes the file; `ok`: the snapshot is whole (the new file renamed over the old one), else
 * the new file removed. Returns 0 or -errno with a message (when ok). */
static int snap_file_end(struct snap_file *f, bool ok, struct error *err)
{
	if (f->fd < 0)
		return 0;
	const char *at = f->tmp[0] ? f->tmp : f->path;
	int ret = 0;
	if (close(f->fd) && ok)
		ret = error_set(err, -errno, "cannot write '%s': %s", at, strerror(errno));
	if (ok && !ret && f->tmp[0] && rename(f->tmp, f->path))
		ret = error_set(err, -errno, "cannot rename '%s' to '%s': %s", f->tmp, f->path,
				strerror(errno));
	if (!ok || ret)
		(void)unlink(at);
	f->fd = -1;
	return ret;
}

/* The configuration a snapshot records: the one the VM was started with, its devices as they
 * are now (a disk's image replaced, a rate limit changed since: Firecracker's PATCH). Returns
 * a malloc'd text, or NULL with a message. */
static char *config_now(struct api_target *t, struct error *err)
{
	json_error_t jerr;
	json_t *cfg = json_loads(t->config_json ? t->config_json : "{}", 0, &jerr);
	if (!cfg) {
		error_set(err, -EINVAL, "the configuration is not JSON: %s", jerr.text);
		return NULL;
	}
	char *text = NULL;
	if (t->config_json && config_print_devices(cfg, &t->vm->cfg))
		error_set(err, -EINVAL, "cannot record a device's settings (not UTF-8)");
	else if (!(text = json_dumps(cfg, JSON_INDENT(2))))
		error_set(err, -ENOMEM, "out of memory");
	json_decref(cfg);
	return text;
}

/* The snapshot itself, on a VM whose vCPUs the caller parked or found parked. Returns 0 or -errno
 * with a message (-EOPNOTSUPP: a device cannot be saved; -ESHUTDOWN: the VM is stopping;
 * -EEXIST: a file exists and `overwrite` is false). */
static int take_snapshot(struct api_target *t, const char *state, const char *mem, bool overwrite,
			 struct snap_times *tm, uint64_t *clock, struct error *err)
{
	int ret = vm_io_park(t->vm, err);
	tm->quiesce = ms_since(clock);
	bool refused = false;
	char *cfg = ret ? NULL : config_now(t, err);
	json_t *snap = cfg ? vm_snapshot_state(t->vm, cfg, &refused, err) : NULL;
	free(cfg);
	if (!ret && !snap)
		ret = refused ? -EOPNOTSUPP : -EIO;
	tm->state = ms_since(clock);
	struct snap_file sf = { .fd = -1 }, mf = { .fd = -1 };
	if (!ret && !mem) /* the RAM stays in the --mem-file: the restore maps it from there */
		json_object_set_new(json_object_get(snap, "memory"), "file",
				    json_string(t->vm->cfg.mem_file));
	if (!ret)
		ret = snap_file_open(&sf, state, overwrite, err);
	if (!ret && mem)
		ret = snap_file_open(&mf, mem, overwrite, err);
	if (!ret)
		ret = vm_snapshot_write(t->vm, snap, sf.fd, mem ? mf.fd : -1, err);
	json_decref(snap);
	int r1 = snap_file_end(&sf, !ret, err);
	int r2 = snap_file_end(&mf, !ret && !r1, err);
	ret = ret ? ret : r1 ? r1 : r2;
	vm_io_release(t->vm);
	tm->write = ms_since(clock);
	return ret;
}

/* PUT /vm/snapshot {"state": FILE, "mem": FILE[, "resume": B, "overwrite": B]}: new files (409
 * when one exists, unless "overwrite": then written under new names, renamed over the old ones
 * at the end); the vCPUs parked (a running VM is paused for it), the I/O thread parked with every request finished, the files written,
 * then the VM runs again unless "resume" is false (a VM that was paused stays paused). Without
 * "mem", the RAM of a --mem-file VM stays in its file (flushed): "resume" must then be false,
 * since a guest that runs on would change the snapshot's memory. */
static void snapshot_vm(struct api_target *t, const char *body, size_t len, struct api_reply *r)
{
	json_error_t jerr;
	json_t *req = json_loadb(body ? body : "", len, 0, &jerr);
	const char *state = NULL, *mem = NULL;
	int resume = 1, overwrite = 0;
	if (!req || json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s,s?s,s?b,s?b}", "state", &state,
				   "mem", &mem, "resume", &resume, "overwrite", &overwrite)) {
		char msg[256];
		snprintf(msg, sizeof(msg), "the body must be {\"state\": FILE, \"mem\": FILE, "
			 "\"resume\": true|false, \"overwrite\": true|false}: %s", jerr.text);
		reply_error(r, 400, msg);
		json_decref(req);
		return;
	}
	const char *why = NULL;
	if (!mem && !t->vm->cfg.mem_file)
		why = "\"mem\" is needed: this VM's RAM is not a file (--mem-file)";
	else if (!mem && resume)
		why = "without \"mem\" the snapshot's RAM is the --mem-file itself, which a running "
		      "guest changes: ask for \"resume\": false (msivm remote snapshot --paused)";
	if (why) {
		reply_error(r, !mem && t->vm->cfg.mem_file ? 409 : 400, why);
		json_decref(req);
		return;
	}
	struct error err = { "" };
	struct snap_times tm = { 0 };
	uint64_t t0 = clock_now_ns(), clock = t0;
	bool pause_for_it = !vm_is_paused(t->vm);
	int ret = pause_for_it ? vm_pause(t->vm, &err) : 0;
	tm.pause = ms_since(&clock);
	if (!ret)
		ret = take_snapshot(t, state, mem, overwrite, &tm, &clock, &err);
	double ms = (double)(clock_now_ns() - t0) / 1e6;
	if (pause_for_it && resume && ret != -ESHUTDOWN)
		vm_resume(t->vm);
	if (ret) {
		log_err("API snapshot: %s", ret == -ESHUTDOWN ? "the VM is stopping" : err.msg);
		reply_error(r, ret == -ESHUTDOWN || ret == -EOPNOTSUPP || ret == -EEXIST ? 409 : 500,
			    ret == -ESHUTDOWN ? "the VM is stopping" : err.msg);
	} else {
		if (!mem)
			mem = t->vm->cfg.mem_file;
		log_info("API snapshot: %s and %s in %.1f ms (pause %.1f, quiesce %.1f, state %.1f, "
			 "write %.1f)", state, mem, ms, tm.pause, tm.quiesce, tm.state, tm.write);
		reply_json(r, 200, json_pack("{s:s,s:s,s:s,s:I,s:{s:f,s:f,s:f,s:f},s:b}", "result",
					     "saved", "state", state, "mem", mem, "ms",
					     (json_int_t)ms, "stages_ms", "pause", tm.pause,
					     "quiesce", tm.quiesce, "state", tm.state, "write",
					     tm.write, "paused", vm_is_paused(t->vm)));
	}
	json_decref(req);
}

/* The PUT actions on a VM that exists. */
static void put_action(struct api_target *t, const char *what, const char *body, size_t len,
		       struct api_reply *r)
{
	struct vm *vm = t->vm;
	if (!strcmp(what, "pause")) {
		pause_vm(vm, r);
	} else if (!strcmp(what, "resume")) {
		if (vm_resume(vm))
			reply_error(r, 409, "the VM is not paused");
		else
			reply_ok(r, "resumed");
	} else if (!strcmp(what, "power-button")) {
		power_button(vm, r);
	} else if (!strcmp(what, "shutdown")) {
		log_info("API: shutdown: stopping the VM");
		vm_operator_stop(vm, 0, true, "API shutdown");
		vm_resume(vm);
		reply_ok(r, "stopping");
	} else if (!strcmp(what, "reboot")) {
		log_info("API: reboot");
		vm_request_stop_reason(vm, VM_END_RESET, 0, "API reboot");
		vm_resume(vm);
		reply_ok(r, "rebooting");
	} else if (!strcmp(what, "dump")) {
		dump_vm(t, r);
	} else if (!strcmp(what, "snapshot")) {
		snapshot_vm(t, body, len, r);
	} else if (!strcmp(what, "resize-disks")) {
		vm_post_host_event(vm, VM_HOST_EV_DISKS);
		reply_ok(r, "disks measured again");
	} else {
		reply_error(r, 404, "no such action");
	}
}

static bool is_put_path(const char *url)
{
	static const char *const paths[] = { "/vm/pause", "/vm/resume", "/vm/power-button",
					     "/vm/shutdown", "/vm/reboot", "/vm/resize-disks",
					     "/vm/dump", "/vm/snapshot" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!strcmp(url, paths[i]))
			return true;
	return false;
}

void api_set_vm(struct api_target *t, struct vm *vm, unsigned boot)
{
	pthread_mutex_lock(&t->lock);
	t->vm = vm;
	t->boot = boot;
	pthread_mutex_unlock(&t->lock);
}

void api_route(struct api_target *t, const char *method, const char *url, const char *body,
	       size_t len, struct api_reply *r)
{
	*r = (struct api_reply){ 0 };
	if (t->front && t->front(t, method, url, body, len, r))
		return;
	api_route_own(t, method, url, body, len, r);
}

void api_route_own(struct api_target *t, const char *method, const char *url, const char *body,
		   size_t len, struct api_reply *r)
{
	*r = (struct api_reply){ 0 };
	bool get = !strcmp(method, "GET"), put = !strcmp(method, "PUT");
	bool known = !strcmp(url, "/vm") || !strcmp(url, "/metrics") || is_put_path(url);
	if (!known) {
		reply_error(r, 404, "no such path (GET /vm, GET /metrics, PUT /vm/pause|resume|"
				    "power-button|shutdown|reboot|resize-disks|dump|snapshot)");
		return;
	}
	if ((is_put_path(url) && !put) || (!is_put_path(url) && !get)) {
		reply_error(r, 405, is_put_path(url) ? "use PUT" : "use GET");
		return;
	}
	bool takes_body = !strcmp(url, "/vm/snapshot");
	if (len && !takes_body) {
		reply_error(r, 400, "this request takes no body");
		return;
	}
	pthread_mutex_lock(&t->lock);
	if (!strcmp(url, "/vm"))
		get_vm(t, r);
	else if (!t->vm)
		reply_error(r, 503, "the VM is between boots (a guest reboot): try again");
	else if (!strcmp(url, "/metrics"))
		reply_json(r, 200, vm_stats_json(t->vm));
	else
		put_action(t, url + strlen("/vm/"), body, len, r);
	pthread_mutex_unlock(&t->lock);
}
