/* Lab VMM thread CPU: per-thread samples of a VMM process from /proc, classified as vCPU, the VMM's own or KVM's. */
#ifndef MSIVM_LAB_LAB_THREADS_H
#define MSIVM_LAB_LAB_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LAB_MAX_TASKS  128     /* threads kept per sample; more: truncated */
#define LAB_MAX_TNAMES 12      /* thread names kept per window */

/*
 * vCPU: msivm's "msivm-vcpuN", QEMU's "CPU N/KVM" (-name debug-threads=on).
 * KVM: threads KVM adds to the VMM process itself ("kvm-nx-lpage-recovery",
 *      comm "kvm-nx-lpage-re"), the same under every VMM.
 * VMM: every other thread: the VMM's own (msivm's main, msivm-io, msivm-ctl,
 *      msivm-api; QEMU's main loop, call_rcu, worker, IO iothreads) and the
 *      kernel workers doing its I/O in its process (io_uring "iou-wrk-N",
 *      "iou-sqp-N", vhost "vhost-N"; before Linux 6.4 vhost's worker is a kernel thread
 *      outside the process, added by lab_cpu_snap_add_vhost).
 */
enum lab_thread_kind { LAB_THREAD_VMM, LAB_THREAD_VCPU, LAB_THREAD_KVM };

/* The kind of a thread by its comm (as in /proc/PID/task/TID/stat). */
enum lab_thread_kind lab_thread_kind(const char *comm);

/* One thread at one instant. */
struct lab_task {
	int tid;
	enum lab_thread_kind kind;
	char comm[16];
	uint64_t run_ns;            /* schedstat field 1 (time on a CPU, ns); without
				     * schedstat (utime + stime) ticks in ns */
	uint64_t utime, stime;      /* clock ticks: stat fields 14, 15 (utime includes guest) */
	uint64_t guest;             /* clock ticks: stat field 43, guest_time */
};

/* All threads of a process at one instant. */
struct lab_cpu_snap {
	bool ok;                    /* the task directory could be read */
	bool truncated;             /* more than LAB_MAX_TASKS threads: the rest is missing */
	unsigned n;
	struct lab_task t[LAB_MAX_TASKS];
};

/* CPU used between two snapshots, by thread kind (ns), and per thread name. */
struct lab_cpu_window {
	double vmm_ns, vcpu_ns, kvm_ns;
	double vcpu_utime_ns, vcpu_stime_ns, vcpu_guest_ns;  /* tick-sampled, from stat */
	unsigned started;           /* threads that appeared in the window (counted whole) */
	unsigned ended;             /* threads that ended in it (their share is missing) */
	unsigned ended_core;        /* of those, the VMM's own and vCPU threads (not io_uring's
				     * workers, which come and go): the figures lack their share */
	unsigned vcpus_seen;        /* vCPU threads present at the window's end */
	bool truncated;             /* a snapshot was truncated */
	unsigned nnames;
	struct {
		char name[16];      /* comm, a trailing "-<digits>" as "-*": "iou-wrk-*" */
		enum lab_thread_kind kind;
		double ns;
	} names[LAB_MAX_TNAMES];    /* further names are added to the last one */
};

/* Parses a /proc/PID/task/TID/stat line into t's comm, utime, stime and
 * guest (guest 0 when the line ends before field 43). 0, or -1 if malformed. */
int lab_parse_stat(const char *line, struct lab_task *t);

/* Parses a /proc/.../schedstat line (run ns, wait ns, timeslices). 0, or -1. */
int lab_parse_schedstat(const char *line, uint64_t *run_ns);

/* Reads every TID/stat and TID/schedstat under task_dir (/proc/PID/task, or a
 * recording of one); a thread that vanished meanwhile is left out. Sorted by
 * tid. Sets s->ok; 0, or -errno if task_dir cannot be read. */
int lab_cpu_snap_read(const char *task_dir, struct lab_cpu_snap *s);

/* CPU time (user + system, all threads, ended ones included; clock-tick
 * resolution) process `pid` has used so far; 0 if unreadable. */
uint64_t lab_proc_cpu_ns(pid_t pid);

/* Adds to s (a snapshot of process `pid`) the kernel threads under proc_root ("/proc") named
 * "vhost-N" with N the process or one of its threads: vhost's workers before Linux 6.4, which
 * run the VMM's data path outside its process (from 6.4 they are threads of the process and
 * already in s). Counted as the VMM's. Returns how many were added, or -errno. */
int lab_cpu_snap_add_vhost(const char *proc_root, pid_t pid, struct lab_cpu_snap *s);

/* lab_cpu_snap_read of /proc/PID/task, plus the process's vhost workers
 * (lab_cpu_snap_add_vhost). */
int lab_cpu_snap_take(pid_t pid, struct lab_cpu_snap *s);

/* The CPU between snapshots a and b of one process, matched by tid; a thread
 * only in b counts whole (an empty a gives b's totals). Both must be ok. */
void lab_cpu_window(const struct lab_cpu_snap *a, const struct lab_cpu_snap *b,
		    struct lab_cpu_window *w);

/* Whether w measured what its figures claim: a vCPU thread at its end, none of the VMM's own or
 * vCPU threads ended inside it, no snapshot truncated. False with the reason in why (one line):
 * its CPU figures are then a failed measurement, never a result. */
bool lab_cpu_window_ok(const struct lab_cpu_window *w, char *why, size_t len);

#endif
