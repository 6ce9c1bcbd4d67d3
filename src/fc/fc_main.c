/* Firecracker mode: its command line -> logger, config file, API socket -> the main thread waits for InstanceStart (or a snapshot load) -> run_vm_served -> exit status. */
#include "fc/fc.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "config/config_json.h"
#include "fc/fc_config.h"
#include "fc/fc_metrics.h"
#include "fc/fc_schema.h"
#include "util/file.h"
#include "util/log.h"
#include "vmm/seccomp.h"
#include "vmm/vm.h"

#define EXIT_USAGE 125
#define FC_MAX_PAYLOAD_DEFAULT 51200 /* Firecracker's --http-api-max-payload-size default */

struct fc_opts {
	const char *api_sock, *id, *config_file, *level, *log_path, *metrics_path;
	bool no_api, no_seccomp, help, version;
	size_t max_payload;
};

static const char usage[] =
	"usage: msivm firecracker [--api-sock PATH] [--id ID] [--config-file FILE [--no-api]]\n"
	"                         [--level LEVEL] [--log-path PATH] [--metrics-path PATH]\n"
	"                         [--no-seccomp] [--http-api-max-payload-size BYTES] [--boot-timer]\n"
	"                         [--version] [--help]\n"
	"msivm in Firecracker's place: Firecracker's command line, --config-file and REST API on the\n"
	"unix socket --api-sock (default /run/firecracker.socket). Started as 'firecracker' (a\n"
	"symlink to msivm), msivm is in this mode at once. Devices are on PCI; a guest command line's\n"
	"pci=off and acpi=off are dropped. What is covered, endpoint by endpoint: docs/kata.md.\n";

/* Options that take a value, and those msivm takes without acting on them (the jailer's
 * timing options, MMDS's size: msivm has no MMDS). */
static const char *const valued[] = { "--api-sock", "--id", "--config-file", "--level",
				      "--log-path", "--metrics-path", "--http-api-max-payload-size",
				      "--start-time-us", "--start-time-cpu-us",
				      "--parent-cpu-time-us", "--mmds-size-limit", "--module",
				      "--seccomp-filter", NULL };
static const char *const flags[] = { "--no-api", "--no-seccomp", "--boot-timer", "--help",
				     "-h", "--version", "--show-level", "--show-log-origin",
				     "--enable-pci", NULL };

static int parse_opts(int argc, char **argv, struct fc_opts *o, struct error *e)
{
	*o = (struct fc_opts){ .api_sock = "/run/firecracker.socket", .id = "anonymous-instance",
			       .max_payload = FC_MAX_PAYLOAD_DEFAULT };
	for (int i = 1; i < argc; i++) {
		char name[64];
		const char *a = argv[i], *eq = strchr(a, '='), *val = NULL;
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a) : 63, a);
		if (fc_word_index(valued, name, false) >= 0) {
			if (!eq && i + 1 >= argc)
				return error_set(e, -EINVAL, "option %s needs a value", name);
			val = eq ? eq + 1 : argv[++i];
		} else if (fc_word_index(flags, name, false) < 0 || eq) {
			return error_set(e, -EINVAL, "unknown option '%.100s' (see msivm firecracker "
					 "--help)", a);
		}
		if (!strcmp(name, "--api-sock"))
			o->api_sock = val;
		else if (!strcmp(name, "--id"))
			o->id = val;
		else if (!strcmp(name, "--config-file"))
			o->config_file = val;
		else if (!strcmp(name, "--level"))
			o->level = val;
		else if (!strcmp(name, "--log-path"))
			o->log_path = val;
		else if (!strcmp(name, "--metrics-path"))
			o->metrics_path = val;
		else if (!strcmp(name, "--seccomp-filter"))
			return error_set(e, -EINVAL, "--seccomp-filter: msivm installs its own filters "
					 "per thread (give --no-seccomp to run without)");
		else if (!strcmp(name, "--http-api-max-payload-size")) {
			char *end;
			unsigned long long n = strtoull(val, &end, 10);
			if (*end || !*val || n < 1024 || n > (16u << 20))
				return error_set(e, -EINVAL, "--http-api-max-payload-size '%.40s': give a "
						 "number of bytes from 1024 to 16777216", val);
			o->max_payload = (size_t)n;
		} else if (!strcmp(name, "--no-api"))
			o->no_api = true;
		else if (!strcmp(name, "--no-seccomp"))
			o->no_seccomp = true;
		else if (!strcmp(name, "--help") || !strcmp(name, "-h"))
			o->help = true;
		else if (!strcmp(name, "--version"))
			o->version = true;
	}
	if (strlen(o->id) >= sizeof(((struct fc_vmm *)0)->id) || !o->id[0])
		return error_set(e, -EINVAL, "--id: give 1 to 64 characters");
	if (o->no_api && !o->config_file)
		return error_set(e, -EINVAL, "--no-api needs --config-file (without the API, the "
				 "configuration comes from the file)");
	return 0;
}

/* --config-file: the document checked, its logger and metrics opened. */
static int load_file(struct fc_vmm *fc, const char *path, struct error *e)
{
	struct mapped_file f;
	int ret = file_map(path, "--config-file", &f, e);
	if (ret)
		return ret;
	json_error_t je;
	json_t *doc = json_loadb((const char *)f.data, f.size, JSON_REJECT_DUPLICATES, &je);
	file_unmap(&f);
	if (!doc)
		return error_set(e, -EINVAL, "%.100s:%d:%d: malformed JSON: %s", path, je.line,
				 je.column, je.text);
	struct error why;
	ret = fc_config_check(doc, &why);
	const json_t *v;
	if (!ret && (v = json_object_get(doc, "logger")))
		ret = fc_logger_apply(fc, v, &why);
	if (!ret && (v = json_object_get(doc, "metrics")))
		ret = fc_metrics_open(fc, v, &why);
	if (ret) {
		json_decref(doc);
		return error_set(e, ret, "%.100s: %s", path, why.msg);
	}
	json_decref(fc->doc);
	fc->doc = doc;
	return 0;
}

/* network_overrides: each interface of the snapshot named by its iface_id (msivm's net id=)
 * attaches to another tap, as Firecracker's. */
static int network_overrides(const json_t *list, struct run_config *c, struct error *e)
{
	size_t k;
	const json_t *o;
	json_array_foreach(list, k, o) {
		const char *id = json_string_value(json_object_get(o, "iface_id")),
			   *dev = json_string_value(json_object_get(o, "host_dev_name"));
		struct net_open_cfg *be = NULL;
		for (uint32_t i = 0; !be && i < c->vm.ndevices; i++)
			if (c->vm.devices[i].type == VM_DEV_NET && !strcmp(c->vm.devices[i].net.id, id))
				be = &c->vm.devices[i].net.be;
		if (!be)
			return error_set(e, -EINVAL, "network_overrides: the snapshot has no network "
					 "interface %.64s", id);
		if (be->kind != NET_BE_TAP)
			return error_set(e, -EINVAL, "network_overrides: interface %.64s is not on a "
					 "tap", id);
		if (!dev[0] || strlen(dev) >= sizeof(be->ifname) || strpbrk(dev, "/: \t"))
			return error_set(e, -EINVAL, "network_overrides: bad host_dev_name '%.64s': 1 to "
					 "15 characters, no '/', ':' or blanks", dev);
		snprintf(be->ifname, sizeof(be->ifname), "%s", dev);
	}
	return 0;
}

/* PUT /snapshot/load's body into c: msivm's --restore of snapshot_path with the memory file. */
static int load_snapshot(const json_t *load, struct run_config *c, struct error *e)
{
	const json_t *mb = json_object_get(load, "mem_backend");
	const char *state = json_string_value(json_object_get(load, "snapshot_path")),
		   *mem = mb ? json_string_value(json_object_get(mb, "backend_path"))
			     : json_string_value(json_object_get(load, "mem_file_path"));
	const json_t *vo = json_object_get(load, "vsock_override");
	if (strchr(state, ',') || strchr(mem, ','))
		return error_set(e, -EINVAL, "snapshot and memory paths with a ',' are not supported");
	char *arg = NULL;
	if (asprintf(&arg, "state=%s,mem=%s%s", state, mem,
		     json_is_true(json_object_get(load, "resume_vm")) ? "" : ",paused") < 0)
		return error_set(e, -ENOMEM, "out of memory");
	int ret = config_restore_load(c, arg, e);
	free(arg);
	for (uint32_t i = 0; !ret && vo && i < c->vm.ndevices; i++) {
		struct virtio_vsock_opts *v = &c->vm.devices[i].vsock;
		const char *p = json_string_value(json_object_get(vo, "uds_path"));
		if (c->vm.devices[i].type != VM_DEV_VSOCK)
			continue;
		if (strlen(p) >= sizeof(v->path))
			ret = error_set(e, -ENAMETOOLONG, "vsock_override: uds_path is too long");
		else
			snprintf(v->path, sizeof(v->path), "%s", p);
		vo = NULL;
	}
	if (!ret && vo)
		ret = error_set(e, -EINVAL, "vsock_override: the snapshot has no vsock device");
	return ret ? ret : network_overrides(json_object_get(load, "network_overrides"), c, e);
}

/* An empty configuration keeping the descriptors noted as inherited. */
static void build_init(struct run_config *c)
{
	struct jail_config inherited = c->jail;
	run_config_init(c);
	memcpy(c->jail.inherited, inherited.inherited, sizeof(c->jail.inherited));
	c->jail.ninherited = inherited.ninherited;
}

/* Builds c for a request (START from the document, LOAD from the snapshot). */
static int build(struct fc_vmm *fc, enum fc_request req, const json_t *load, bool no_seccomp,
		 struct run_config *c, struct error *e)
{
	run_config_free(c);
	build_init(c);
	fc_config_defaults(c);
	int ret = req == FC_REQ_LOAD ? load_snapshot(load, c, e) : fc_config_build(fc->doc, c, e);
	if (req == FC_REQ_LOAD) { /* the snapshot's own settings, but Firecracker's behaviour */
		c->vm.fc_thread_names = true;
		c->vm.shutdown_timeout_ms = 0;
		c->no_reboot = true;
	}
	if (no_seccomp)
		c->vm.seccomp = SECCOMP_OFF;
	return ret ? ret : run_config_finish(c, e);
}

/* Waits for a request or a stop signal: FC_REQ_* or -(128 + signal). */
static int wait_request(struct fc_vmm *fc, int sig_fd)
{
	for (;;) {
		pthread_mutex_lock(&fc->lock);
		enum fc_request req = fc->req;
		pthread_mutex_unlock(&fc->lock);
		if (req != FC_REQ_NONE)
			return (int)req;
		struct pollfd p[2] = { { .fd = fc->wake_fd, .events = POLLIN },
				       { .fd = sig_fd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return -(128 + SIGTERM);
		uint64_t v;
		if (p[0].revents && read(fc->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -(128 + SIGTERM);
		struct signalfd_siginfo si;
		if (p[1].revents && read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
			log_info("firecracker: signal %u before the VM started: stopping", si.ssi_signo);
			return -(128 + (int)si.ssi_signo);
		}
	}
}

static void answer(struct fc_vmm *fc, int ret, const char *msg)
{
	pthread_mutex_lock(&fc->lock);
	fc->answer = ret;
	snprintf(fc->answer_msg, sizeof(fc->answer_msg), "%s", msg);
	fc->req = FC_REQ_NONE;
	json_decref(fc->load);
	fc->load = NULL;
	pthread_cond_broadcast(&fc->cond);
	pthread_mutex_unlock(&fc->lock);
}

/* The main thread's part: requests until one runs a VM, then that run's status. */
static int serve(struct fc_vmm *fc, struct api_target *t, struct api_server *srv,
		 const struct fc_opts *o, struct run_config *c, int (*status_of)(struct run_outcome))
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	int sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sig_fd < 0) {
		fprintf(stderr, "msivm: signalfd: %s\n", strerror(errno));
		return EXIT_USAGE;
	}
	bool from_file = o->config_file != NULL;
	int status = EXIT_USAGE;
	for (;;) {
		int req = from_file ? FC_REQ_START : wait_request(fc, sig_fd);
		if (req < 0) {
			status = -req;
			break;
		}
		struct error e = { "" };
		pthread_mutex_lock(&fc->lock);
		fc->started = true; /* no pre-boot request while the VM is built */
		int ret = build(fc, (enum fc_request)req, fc->load, o->no_seccomp, c, &e);
		if (ret)
			fc->started = false;
		pthread_mutex_unlock(&fc->lock);
		if (ret && from_file) {
			fprintf(stderr, "msivm: %s\n", e.msg);
			break;
		}
		if (!from_file)
			answer(fc, ret, e.msg);
		if (ret)
			continue;
		struct run_outcome out = run_vm_served(c, t, srv);
		if (out.end == RUN_NOT_STARTED)
			answer(fc, -EIO, "the VM could not start (msivm's standard error says why)");
		status = status_of(out);
		break;
	}
	close(sig_fd);
	return status;
}

int fc_main(int argc, char **argv, int (*status_of)(struct run_outcome))
{
	struct fc_opts o;
	struct error e;
	if (parse_opts(argc, argv, &o, &e)) {
		fprintf(stderr, "msivm firecracker: %s\n", e.msg);
		return EXIT_USAGE;
	}
	if (o.help) {
		fputs(usage, stdout);
		return 0;
	}
	if (o.version) { /* Kata reads the second word of the first line as a semver */
		printf("msivm v%s (msivm %s in Firecracker's place: Firecracker API %s)\n",
		       FC_API_VERSION, MSIVM_VERSION, FC_API_VERSION);
		return 0;
	}
	enum log_level level = LOG_WARN;
	if (o.level && fc_log_level(o.level, &level)) {
		fprintf(stderr, "msivm firecracker: --level '%.40s': Error, Warning, Info, Debug, "
			"Trace or Off\n", o.level);
		return EXIT_USAGE;
	}
	log_set_level(level);
	if (vm_signals_init() || seccomp_signals_init()) { /* before any thread: they inherit it */
		fprintf(stderr, "msivm: cannot set up signal handling\n");
		return EXIT_USAGE;
	}
	struct run_config *c = calloc(1, sizeof(*c));
	if (c) /* what msivm inherited, before it opens anything: closed when the VM runs */
		jail_note_inherited(&c->jail);
	struct api_target t = { .lock = PTHREAD_MUTEX_INITIALIZER, .dump_dir = -1,
				.front = fc_api_route, .tick = fc_metrics_tick,
				.max_body = o.max_payload };
	struct fc_vmm fc = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
			     .doc = json_object(), .log_fd = -1, .metrics_fd = -1, .target = &t,
			     .wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) };
	snprintf(fc.id, sizeof(fc.id), "%s", o.id);
	t.front_ctx = &fc;
	struct api_server *srv = NULL;
	int status = EXIT_USAGE, ret = 0;
	if (!c || !fc.doc || fc.wake_fd < 0)
		ret = error_set(&e, -ENOMEM, "out of memory");
	else
		build_init(c);
	json_t *sink = NULL;
	if (!ret && o.log_path && (sink = json_pack("{s:s}", "log_path", o.log_path)))
		ret = fc_logger_apply(&fc, sink, &e);
	json_decref(sink);
	sink = NULL;
	if (!ret && o.metrics_path && (sink = json_pack("{s:s}", "metrics_path", o.metrics_path)))
		ret = fc_metrics_open(&fc, sink, &e);
	json_decref(sink);
	if (!ret && o.config_file)
		ret = load_file(&fc, o.config_file, &e);
	enum seccomp_mode mode = o.no_seccomp ? SECCOMP_OFF : c->vm.seccomp;
	if (!ret && !o.no_api && !(ret = api_server_start(&srv, o.api_sock, &t, mode, &e)))
		ret = api_server_run(srv, &e);
	if (ret)
		fprintf(stderr, "msivm firecracker: %s\n", e.msg);
	else
		status = serve(&fc, &t, srv, &o, c, status_of);
	api_server_stop(srv);
	if (c)
		run_config_free(c);
	free(c);
	json_decref(fc.doc);
	json_decref(fc.load);
	if (fc.wake_fd >= 0)
		close(fc.wake_fd);
	if (fc.metrics_fd >= 0)
		close(fc.metrics_fd);
	return status;
}
