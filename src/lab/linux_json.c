/* Linux guest workloads: fio and iperf3 JSON reports -> figures. */
#include "lab/linux_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Parses the JSON object starting at the first line whose first non-blank is '{'; text
 * after the object is ignored. `tool` names it in messages. Returns the object or NULL. */
static json_t *load_report(const char *text, const char *tool, struct error *err)
{
	const char *cursor = text, *line;
	size_t len;
	json_error_t jerr;
	json_t *root;

	for (;;) {
		if (!lp_next_line(&cursor, &line, &len)) {
			error_set(err, -EINVAL, "%s output: no JSON object (no line starting with '{')",
				  tool);
			return NULL;
		}
		line += strspn(line, " \t");
		if (*line == '{')
			break;
	}
	root = json_loads(line, JSON_DISABLE_EOF_CHECK, &jerr);
	if (!root) {
		error_set(err, -EINVAL, "%s output: invalid JSON at line %d column %d: %s", tool,
			  jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	return root;
}

enum kind { K_OBJECT, K_NUMBER, K_INTEGER };

/* o[key], checked to be of kind k; `path` names o in messages. NULL (and *err) if not. */
static json_t *member(json_t *o, const char *path, const char *key, enum kind k,
		      struct error *err)
{
	static const char *const kinds[] = { "an object", "a number", "an integer" };
	json_t *m = json_object_get(o, key);
	bool ok = k == K_OBJECT ? json_is_object(m) : k == K_NUMBER ? json_is_number(m)
								    : json_is_integer(m);

	if (!m)
		error_set(err, -EINVAL, "%s: no \"%s\"", path, key);
	else if (!ok)
		error_set(err, -EINVAL, "%s.%s is not %s", path, key, kinds[k]);
	return ok ? m : NULL;
}

/* o[key] as an object. */
static int get_obj(json_t *o, const char *path, const char *key, json_t **v, struct error *err)
{
	*v = member(o, path, key, K_OBJECT, err);
	return *v ? 0 : -EINVAL;
}

/* o[key] as a finite number >= 0. */
static int get_num(json_t *o, const char *path, const char *key, double *v, struct error *err)
{
	json_t *m = member(o, path, key, K_NUMBER, err);

	if (!m)
		return -EINVAL;
	*v = json_number_value(m);
	if (!isfinite(*v) || *v < 0)
		return error_set(err, -EINVAL, "%s.%s is negative: %g", path, key, *v);
	return 0;
}

/* o[key] as an integer >= 0. */
static int get_u64(json_t *o, const char *path, const char *key, uint64_t *v, struct error *err)
{
	json_t *m = member(o, path, key, K_INTEGER, err);

	if (!m)
		return -EINVAL;
	if (json_integer_value(m) < 0)
		return error_set(err, -EINVAL, "%s.%s is negative: %" JSON_INTEGER_FORMAT, path, key,
				 json_integer_value(m));
	*v = (uint64_t)json_integer_value(m);
	return 0;
}

struct fio_dir {
	bool has;
	double iops, mib_s, lat_us, p99_us, runtime_ms;
	uint64_t ios;
};

/* The 99th percentile (ns) of clat_ns, or of lat_ns when fio ran with --lat_percentiles. */
static int fio_p99(json_t *d, const char *path, double *ns, struct error *err)
{
	static const char *const keys[] = { "clat_ns", "lat_ns" };

	for (size_t i = 0; i < 2; i++) {
		json_t *lat = json_object_get(d, keys[i]);
		json_t *pct = json_is_object(lat) ? json_object_get(lat, "percentile") : NULL;
		char sub[64];

		if (!pct)
			continue;
		snprintf(sub, sizeof(sub), "%s.%s.percentile", path, keys[i]);
		if (!json_is_object(pct))
			return error_set(err, -EINVAL, "%s is not an object", sub);
		return get_num(pct, sub, "99.000000", ns, err);
	}
	return error_set(err, -EINVAL, "%s: no 99th percentile (clat_ns.percentile)", path);
}

/* jobs[0].read or .write. */
static int fio_dir(json_t *job, const char *dir, struct fio_dir *f, struct error *err)
{
	char path[32], sub[48];
	json_t *d, *lat;
	double bw_kib, lat_ns, p99_ns;
	int ret;

	memset(f, 0, sizeof(*f));
	if ((ret = get_obj(job, "fio jobs[0]", dir, &d, err)))
		return ret;
	snprintf(path, sizeof(path), "fio jobs[0].%s", dir);
	if ((ret = get_u64(d, path, "total_ios", &f->ios, err)) ||
	    (ret = get_num(d, path, "iops", &f->iops, err)) ||
	    (ret = get_num(d, path, "bw", &bw_kib, err)) ||
	    (ret = get_num(d, path, "runtime", &f->runtime_ms, err)))
		return ret;
	if (f->ios == 0)
		return 0;
	snprintf(sub, sizeof(sub), "%s.lat_ns", path);
	if ((ret = get_obj(d, path, "lat_ns", &lat, err)) ||
	    (ret = get_num(lat, sub, "mean", &lat_ns, err)) ||
	    (ret = fio_p99(d, path, &p99_ns, err)))
		return ret;
	f->has = true;
	f->mib_s = bw_kib / 1024.0;
	f->lat_us = lat_ns / 1e3;
	f->p99_us = p99_ns / 1e3;
	return 0;
}

/* jobs[0] of the report, checked: an object whose "error" is 0. */
static int fio_job(json_t *root, json_t **job, struct error *err)
{
	json_t *jobs = json_object_get(root, "jobs"), *e, *name;

	if (!jobs)
		return error_set(err, -EINVAL, "fio output: no \"jobs\"");
	if (!json_is_array(jobs))
		return error_set(err, -EINVAL, "fio output: \"jobs\" is not an array");
	*job = json_array_get(jobs, 0);
	if (!*job)
		return error_set(err, -EINVAL, "fio output: \"jobs\" is empty");
	if (!json_is_object(*job))
		return error_set(err, -EINVAL, "fio output: jobs[0] is not an object");
	e = json_object_get(*job, "error");
	name = json_object_get(*job, "jobname");
	if (e && !json_is_integer(e))
		return error_set(err, -EINVAL, "fio jobs[0].error is not an integer");
	if (e && json_integer_value(e) != 0)
		return error_set(err, -EINVAL, "fio job '%s' failed: error %" JSON_INTEGER_FORMAT,
				 json_is_string(name) ? json_string_value(name) : "?",
				 json_integer_value(e));
	return 0;
}

int lp_fio_json(const char *text, struct lp_fio *out, struct error *err)
{
	json_t *root = load_report(text, "fio", err), *job = NULL;
	struct fio_dir r, w;
	int ret;

	if (!root)
		return -EINVAL;
	ret = fio_job(root, &job, err);
	if (!ret)
		ret = fio_dir(job, "read", &r, err);
	if (!ret)
		ret = fio_dir(job, "write", &w, err);
	json_decref(root);
	if (ret)
		return ret;
	if (!r.has && !w.has)
		return error_set(err, -EINVAL, "fio jobs[0]: no I/O done (0 reads, 0 writes)");
	*out = (struct lp_fio){
		.has_read = r.has, .has_write = w.has,
		.read_iops = r.iops, .write_iops = w.iops,
		.read_mib_s = r.mib_s, .write_mib_s = w.mib_s,
		.read_lat_mean_us = r.lat_us, .write_lat_mean_us = w.lat_us,
		.read_lat_p99_us = r.p99_us, .write_lat_p99_us = w.p99_us,
		.runtime_s = (r.runtime_ms > w.runtime_ms ? r.runtime_ms : w.runtime_ms) / 1e3,
		.read_ios = r.ios, .write_ios = w.ios,
	};
	return 0;
}

/* start.test_start.reverse: 0/1 (iperf3 3.x) or a boolean. */
static int iperf_reverse(json_t *root, bool *reverse, struct error *err)
{
	json_t *start, *ts, *rv;
	int ret;

	if ((ret = get_obj(root, "iperf3 output", "start", &start, err)) ||
	    (ret = get_obj(start, "iperf3 start", "test_start", &ts, err)))
		return ret;
	rv = json_object_get(ts, "reverse");
	if (json_is_boolean(rv))
		*reverse = json_is_true(rv);
	else if (json_is_integer(rv))
		*reverse = json_integer_value(rv) != 0;
	else
		return error_set(err, -EINVAL, "iperf3 start.test_start: %s \"reverse\"",
				 rv ? "a mistyped" : "no");
	return 0;
}

static int iperf_report(json_t *root, struct lp_iperf *out, struct error *err)
{
	json_t *e = json_object_get(root, "error"), *end, *sent, *recv;
	struct lp_iperf r = { 0 };
	int ret;

	if (e)
		return error_set(err, -EINVAL, "iperf3 failed: %s",
				 json_is_string(e) ? json_string_value(e) : "(error of the wrong type)");
	if ((ret = get_obj(root, "iperf3 output", "end", &end, err)) ||
	    (ret = get_obj(end, "iperf3 end", "sum_sent", &sent, err)) ||
	    (ret = get_obj(end, "iperf3 end", "sum_received", &recv, err)) ||
	    (ret = get_num(sent, "iperf3 end.sum_sent", "bits_per_second", &r.sent_mbit_s, err)) ||
	    (ret = get_num(sent, "iperf3 end.sum_sent", "seconds", &r.seconds, err)) ||
	    (ret = get_num(recv, "iperf3 end.sum_received", "bits_per_second", &r.received_mbit_s,
			   err)) ||
	    (ret = iperf_reverse(root, &r.reverse, err)))
		return ret;
	if (json_object_get(sent, "retransmits") &&
	    (ret = get_u64(sent, "iperf3 end.sum_sent", "retransmits", &r.retransmits, err)))
		return ret;
	r.sent_mbit_s /= 1e6;
	r.received_mbit_s /= 1e6;
	*out = r;
	return 0;
}

int lp_iperf3_json(const char *text, struct lp_iperf *out, struct error *err)
{
	json_t *root = load_report(text, "iperf3", err);
	int ret;

	if (!root)
		return -EINVAL;
	ret = iperf_report(root, out, err);
	json_decref(root);
	return ret;
}
