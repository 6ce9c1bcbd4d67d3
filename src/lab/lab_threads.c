/* Lab VMM thread CPU: /proc/PID/task/TID/{stat,schedstat} -> per-thread samples -> CPU per thread kind over a window. */
#include "lab/lab_threads.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum lab_thread_kind lab_thread_kind(const char *comm)
{
	size_t n = strlen(comm);
	if ((!strncmp(comm, "msivm-vcpu", 10) && n > 10) ||
	    (!strncmp(comm, "CPU ", 4) && n > 8 && !strcmp(comm + n - 4, "/KVM")))
		return LAB_THREAD_VCPU;
	if (!strncmp(comm, "kvm-", 4))
		return LAB_THREAD_KVM;
	return LAB_THREAD_VMM;
}

int lab_parse_stat(const char *line, struct lab_task *t)
{
	/* "TID (comm) S f4 ... f52": the comm may hold spaces and parentheses. */
	const char *l = strchr(line, '('), *r = strrchr(line, ')');
	if (!l || !r || r < l || r[1] != ' ')
		return -1;
	snprintf(t->comm, sizeof(t->comm), "%.*s", (int)(r - l - 1), l + 1);
	unsigned long long v[41];
	unsigned n = 0;
	const char *p = r + 2;
	/* field 3 is the state letter; fields 4.. are numbers */
	if (!*p || p[1] != ' ')
		return -1;
	p += 2;
	while (n < 41 && *p) {
		char *end;
		v[n] = strtoull(p, &end, 10);
		if (end == p)
			break;
		n++;
		p = end + strspn(end, " \n");
	}
	if (n < 12) /* up to stime (field 15) */
		return -1;
	t->utime = v[14 - 4];
	t->stime = v[15 - 4];
	t->guest = n > 43 - 4 ? v[43 - 4] : 0;
	return 0;
}

int lab_parse_schedstat(const char *line, uint64_t *run_ns)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(line, &end, 10);
	if (end == line || errno || (*end != ' ' && *end != '\n' && *end))
		return -1;
	*run_ns = v;
	return 0;
}

/* A small file's text, NUL-terminated; -1 if unreadable. */
static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return n ? 0 : -1;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct lab_task *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int read_task(const char *task_dir, const char *tid, double tick_ns, struct lab_task *t)
{
	char path[4352], buf[1024];
	snprintf(path, sizeof(path), "%s/%s/stat", task_dir, tid);
	if (read_text(path, buf, sizeof(buf)) || lab_parse_stat(buf, t))
		return -1;
	snprintf(path, sizeof(path), "%s/%s/schedstat", task_dir, tid);
	if (read_text(path, buf, sizeof(buf)) || lab_parse_schedstat(buf, &t->run_ns))
		t->run_ns = (uint64_t)((double)(t->utime + t->stime) * tick_ns);
	t->tid = atoi(tid);
	t->kind = lab_thread_kind(t->comm);
	return 0;
}

int lab_cpu_snap_read(const char *task_dir, struct lab_cpu_snap *s)
{
	s->ok = s->truncated = false;
	s->n = 0;
	DIR *d = opendir(task_dir);
	if (!d)
		return -errno;
	double tick_ns = 1e9 / (double)sysconf(_SC_CLK_TCK);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (s->n == LAB_MAX_TASKS) {
			s->truncated = true;
			break;
		}
		if (!read_task(task_dir, de->d_name, tick_ns, &s->t[s->n]))
			s->n++; /* else the thread ended meanwhile */
	}
	closedir(d);
	qsort(s->t, s->n, sizeof(s->t[0]), cmp_tid);
	s->ok = true;
	return 0;
}

uint64_t lab_proc_cpu_ns(pid_t pid)
{
	char path[64], buf[1024];
	struct lab_task t;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_text(path, buf, sizeof(buf)) || lab_parse_stat(buf, &t))
		return 0;
	return (t.utime + t.stime) * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* Is `tid` among t[0, n)? */
static bool has_tid(const struct lab_task *t, unsigned n, int tid)
{
	for (unsigned i = 0; i < n; i++)
		if (t[i].tid == tid)
			return true;
	return false;
}

/* Is `comm` "vhost-N" with N the process or one of its threads t[0, n)? */
static bool vhost_of(const char *comm, pid_t pid, const struct lab_task *t, unsigned n)
{
	if (strncmp(comm, "vhost-", 6) || !comm[6] || strspn(comm + 6, "0123456789") != strlen(comm + 6))
		return false;
	int owner = atoi(comm + 6);
	return owner == pid || has_tid(t, n, owner);
}

int lab_cpu_snap_add_vhost(const char *proc_root, pid_t pid, struct lab_cpu_snap *s)
{
	DIR *d = opendir(proc_root);
	if (!d)
		return -errno;
	double tick_ns = 1e9 / (double)sysconf(_SC_CLK_TCK);
	unsigned own = s->n;
	int added = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char path[4352], comm[64];
		snprintf(path, sizeof(path), "%s/%s/comm", proc_root, de->d_name);
		if (read_text(path, comm, sizeof(comm)))
			continue;
		comm[strcspn(comm, "\n")] = 0;
		/* a thread of the process itself (vhost_task, Linux 6.4+) is already in s */
		if (!vhost_of(comm, pid, s->t, own) || has_tid(s->t, s->n, atoi(de->d_name)))
			continue;
		if (s->n == LAB_MAX_TASKS) {
			s->truncated = true;
			break;
		}
		if (!read_task(proc_root, de->d_name, tick_ns, &s->t[s->n])) {
			s->n++;
			added++;
		}
	}
	closedir(d);
	qsort(s->t, s->n, sizeof(s->t[0]), cmp_tid);
	return added;
}

int lab_cpu_snap_take(pid_t pid, struct lab_cpu_snap *s)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	int ret = lab_cpu_snap_read(dir, s);
	if (!ret)
		(void)lab_cpu_snap_add_vhost("/proc", pid, s);
	return ret;
}

static const struct lab_task *find_tid(const struct lab_cpu_snap *s, int tid)
{
	struct lab_task key = { .tid = tid };
	return bsearch(&key, s->t, s->n, sizeof(s->t[0]), cmp_tid);
}

/* "iou-wrk-1234" -> "iou-wrk-*"; other names as they are. */
static void group_name(const char *comm, char *out, size_t len)
{
	const char *dash = strrchr(comm, '-');
	if (dash && dash[1] && strspn(dash + 1, "0123456789") == strlen(dash + 1))
		snprintf(out, len, "%.*s-*", (int)(dash - comm), comm);
	else
		snprintf(out, len, "%s", comm);
}

static void add_name(struct lab_cpu_window *w, const char *comm, enum lab_thread_kind kind, double ns)
{
	char name[sizeof(w->names[0].name)];
	group_name(comm, name, sizeof(name));
	unsigned i;
	for (i = 0; i < w->nnames && strcmp(w->names[i].name, name); i++)
		;
	if (i == w->nnames && w->nnames < LAB_MAX_TNAMES) {
		snprintf(w->names[i].name, sizeof(w->names[i].name), "%s", name);
		w->names[i].kind = kind;
		w->nnames++;
	} else if (i == w->nnames) {
		i = LAB_MAX_TNAMES - 1;
	}
	w->names[i].ns += ns;
}

void lab_cpu_window(const struct lab_cpu_snap *a, const struct lab_cpu_snap *b,
		    struct lab_cpu_window *w)
{
	memset(w, 0, sizeof(*w));
	w->truncated = a->truncated || b->truncated;
	double tick_ns = 1e9 / (double)sysconf(_SC_CLK_TCK);
	for (unsigned i = 0; i < b->n; i++) {
		const struct lab_task *t = &b->t[i], *t0 = find_tid(a, t->tid);
		struct lab_task zero = { 0 };
		if (!t0 || t0->run_ns > t->run_ns) { /* new (or a reused tid) */
			w->started++;
			t0 = &zero;
		}
		double ns = (double)(t->run_ns - t0->run_ns);
		if (t->kind == LAB_THREAD_VCPU) {
			w->vcpus_seen++;
			w->vcpu_ns += ns;
			w->vcpu_utime_ns += (double)(t->utime - t0->utime) * tick_ns;
			w->vcpu_stime_ns += (double)(t->stime - t0->stime) * tick_ns;
			w->vcpu_guest_ns += (double)(t->guest - t0->guest) * tick_ns;
		} else if (t->kind == LAB_THREAD_KVM) {
			w->kvm_ns += ns;
		} else {
			w->vmm_ns += ns;
		}
		add_name(w, t->comm, t->kind, ns);
	}
	for (unsigned i = 0; i < a->n; i++) {
		if (find_tid(b, a->t[i].tid))
			continue;
		w->ended++;
		w->ended_core += a->t[i].kind != LAB_THREAD_KVM && strncmp(a->t[i].comm, "iou-", 4);
	}
}

bool lab_cpu_window_ok(const struct lab_cpu_window *w, char *why, size_t len)
{
	if (w->truncated)
		snprintf(why, len, "a thread snapshot was truncated");
	else if (!w->vcpus_seen)
		snprintf(why, len, "no vCPU thread at the window's end (%u threads ended in it)",
			 w->ended);
	else if (w->ended_core)
		snprintf(why, len, "%u of the VMM's threads ended inside the window: their CPU is "
			 "missing", w->ended_core);
	else
		return true;
	return false;
}
