/* Firecracker's metrics: msivm's statistics JSON -> Firecracker's metric names -> one line on a non-blocking file or FIFO. */
#include "fc/fc_metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fc/fc_config.h"
#include "fc/fc_schema.h"
#include "util/clock.h"
#include "util/log.h"
#include "vmm/vm.h"
#include "vmm/vm_stats.h"

int fc_log_level(const char *s, enum log_level *out)
{
	static const char *const words[] = { "Error", "Warning", "Warn", "Info", "Debug", "Trace",
					     "Off", NULL };
	static const enum log_level levels[] = { LOG_ERROR, LOG_WARN, LOG_WARN, LOG_INFO,
						 LOG_DEBUG, LOG_DEBUG, LOG_ERROR };
	int i = fc_word_index(words, s, true);
	if (i < 0)
		return -EINVAL;
	*out = levels[i];
	return 0;
}

int fc_logger_apply(struct fc_vmm *fc, const json_t *logger, struct error *e)
{
	const json_t *path = json_object_get(logger, "log_path"), *lv = json_object_get(logger, "level");
	enum log_level level;
	if (lv && fc_log_level(json_string_value(lv), &level))
		return error_set(e, -EINVAL, "Invalid level: %.40s", json_string_value(lv));
	if (path && fc->log_fd >= 0)
		return error_set(e, -EALREADY, "Reinitialization of logger not allowed.");
	if (path) {
		int fd = fc_open_sink(json_string_value(path), "log_path", e);
		if (fd < 0)
			return fd;
		fc->log_fd = fd;
		log_set_fd(fd);
	}
	if (lv)
		log_set_level(level);
	return 0;
}

int fc_open_sink(const char *path, const char *what, struct error *e)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENXIO) /* a FIFO nobody reads yet: hold it open both ways */
		fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return error_set(e, -errno, "%s '%.200s': %s", what, path, strerror(errno));
	return fd;
}

static void add(json_t *o, const char *key, json_int_t v)
{
	json_t *old = json_object_get(o, key);
	json_object_set_new(o, key, json_integer(json_integer_value(old) + v));
}

static json_int_t num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* The id of the Nth item of the document's array `key` in the guest's order, or NULL. */
static const char *nth_id(const json_t *doc, const char *key, const char *idkey, int n)
{
	if (!strcmp(key, "drives")) {
		const json_t *d;
		size_t i;
		json_array_foreach(json_object_get(doc, "drives"), i, d) {
			const char *id = json_string_value(json_object_get(d, idkey));
			if (fc_config_drive_index(doc, id) == n)
				return id;
		}
		return NULL;
	}
	return json_string_value(json_object_get(json_array_get(json_object_get(doc, key), (size_t)n),
						 idkey));
}

json_t *fc_metrics_object(const json_t *stats, const json_t *doc, long long utc_ms)
{
	json_t *m = json_pack("{s:I}", "utc_timestamp_ms", (json_int_t)utc_ms);
	json_t *block = json_object(), *net = json_object(), *vsock = json_object(),
	       *vcpu = json_object();
	size_t i;
	const json_t *d;
	int nblk = 0, nnet = 0;
	json_array_foreach(json_object_get(stats, "devices"), i, d) {
		const char *type = json_string_value(json_object_get(d, "type"));
		json_t *one = json_object(), *agg = NULL;
		char key[160];
		const char *id = NULL;
		if (type && !strcmp(type, "blk")) {
			const json_t *by = json_object_get(d, "requests_by_type");
			add(one, "read_count", num(by, "in"));
			add(one, "write_count", num(by, "out"));
			add(one, "flush_count", num(by, "flush"));
			add(one, "read_bytes", num(d, "bytes_read"));
			add(one, "write_bytes", num(d, "bytes_written"));
			add(one, "io_errors", num(d, "ioerr"));
			agg = block;
			id = nth_id(doc, "drives", "drive_id", nblk++);
			snprintf(key, sizeof(key), "block_%.120s", id ? id : "?");
		} else if (type && !strcmp(type, "net")) {
			add(one, "rx_bytes_count", num(d, "rx_bytes"));
			add(one, "tx_bytes_count", num(d, "tx_bytes"));
			add(one, "rx_packets_count", num(d, "rx_frames"));
			add(one, "tx_packets_count", num(d, "tx_frames"));
			agg = net;
			id = nth_id(doc, "network-interfaces", "iface_id", nnet++);
			snprintf(key, sizeof(key), "net_%.120s", id ? id : "?");
		} else if (type && !strcmp(type, "vsock")) {
			add(vsock, "activate_fails", 0);
			add(vsock, "kicks", num(d, "kicks"));
		}
		const char *k;
		json_t *v;
		json_object_foreach(one, k, v)
			if (agg)
				add(agg, k, json_integer_value(v));
		if (agg && id)
			json_object_set(m, key, one);
		json_decref(one);
	}
	const json_t *exits = json_object_get(stats, "exits");
	add(vcpu, "exits_io", num(exits, "msivm_io"));
	add(vcpu, "exits_mmio", num(exits, "msivm_mmio"));
	json_object_set_new(m, "block", block);
	json_object_set_new(m, "net", net);
	json_object_set_new(m, "vsock", vsock);
	json_object_set_new(m, "vcpu", vcpu);
	return m;
}

int fc_metrics_open(struct fc_vmm *fc, const json_t *metrics, struct error *e)
{
	if (fc->metrics_fd >= 0)
		return error_set(e, -EALREADY, "Reinitialization of metrics not allowed.");
	int fd = fc_open_sink(json_string_value(json_object_get(metrics, "metrics_path")),
			      "metrics_path", e);
	if (fd < 0)
		return fd;
	fc->metrics_fd = fd;
	return 0;
}

int fc_metrics_flush(struct fc_vmm *fc, struct error *e)
{
	if (fc->metrics_fd < 0)
		return error_set(e, -ENOENT, "Failed to flush metrics: the metrics system was not "
				 "initialized (PUT /metrics or --metrics-path first)");
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	json_t *stats = NULL;
	pthread_mutex_lock(&fc->target->lock);
	if (fc->target->vm)
		stats = vm_stats_json(fc->target->vm);
	pthread_mutex_unlock(&fc->target->lock);
	json_t *m = fc_metrics_object(stats, fc->doc,
				      (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
	json_decref(stats);
	char *line = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	if (!line)
		return error_set(e, -ENOMEM, "out of memory");
	size_t n = strlen(line);
	line[n] = '\n'; /* replaces the NUL: written by length */
	ssize_t w = write(fc->metrics_fd, line, n + 1);
	free(line);
	if (w < 0 && errno != EAGAIN)
		return error_set(e, -errno, "Failed to write metrics: %s", strerror(errno));
	if (w < 0)
		log_debug("firecracker: metrics: the reader is behind; a line dropped");
	return 0;
}

#define FC_METRICS_PERIOD_NS (60ull * 1000000000ull) /* Firecracker's period */

void fc_metrics_tick(struct api_target *t)
{
	struct fc_vmm *fc = t->front_ctx;
	pthread_mutex_lock(&fc->lock);
	pthread_mutex_lock(&t->lock);
	bool running = t->vm != NULL;
	pthread_mutex_unlock(&t->lock);
	uint64_t now = clock_now_ns();
	if (running && fc->metrics_fd >= 0 &&
	    (!fc->metrics_ns || now - fc->metrics_ns >= FC_METRICS_PERIOD_NS)) {
		struct error e;
		fc->metrics_ns = now;
		if (fc_metrics_flush(fc, &e))
			log_warn("firecracker: metrics: %s", e.msg);
	}
	pthread_mutex_unlock(&fc->lock);
}
