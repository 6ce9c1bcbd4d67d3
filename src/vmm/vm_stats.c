/* VM statistics: collect transport counters and KVM stats; format them as a table or JSON. */
#include "vmm/vm_stats.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <string.h>

#include "vmm/kvm_stats.h"
#include "vmm/vcpu.h"
#include "vmm/vm_state.h"

static void collect_exits(struct vm *vm, struct kvm_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (uint32_t i = 0; i < vm->ncpus; i++)
		kvm_stats_accumulate(vm->vcpus[i].stats_fd, st);
}

static bool is_exit_stat(const char *name)
{
	return strstr(name, "exits") || !strcmp(name, "halt_wakeup") ||
	       !strcmp(name, "insn_emulation") || !strcmp(name, "irq_injections");
}

/* The label of MSI-X vector v of a device: which queue(s) point at it. */
static void vector_label(const struct virtio_pci *t, uint16_t v, char *buf, size_t len)
{
	uint32_t use = t->vec_use[v];
	int n = snprintf(buf, len, "%s", use & (1u << 31) ? "config" : "");
	for (uint16_t q = 0; q < t->info.nqueues && n >= 0 && (size_t)n < len; q++)
		if (use & (1u << q))
			n += snprintf(buf + n, len - (size_t)n, "%sq%u", n ? "," : "", q);
	if (n == 0)
		snprintf(buf, len, "-");
}

static uint64_t thread_cpu_ns(pthread_t t)
{
	clockid_t cid;
	struct timespec ts;
	if (pthread_getcpuclockid(t, &cid) || clock_gettime(cid, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void vm_stats_mark(void *opaque, unsigned id)
{
	struct vm *vm = opaque;
	if (id != LAB_MARK_WORK_START && id != LAB_MARK_WORK_END)
		return;
	struct vm_snapshot s = { .taken = true };
	struct kvm_stats st = { 0 };
	for (uint32_t i = 0; i < vm->ncpus; i++) {
		kvm_stats_accumulate(vm->vcpus[i].stats_fd, &st);
		s.msivm_io += __atomic_load_n(&vm->vcpus[i].exits_io, __ATOMIC_RELAXED);
		s.msivm_mmio += __atomic_load_n(&vm->vcpus[i].exits_mmio, __ATOMIC_RELAXED);
	}
	s.kvm_exits = kvm_stats_get(&st, "exits");
	s.cpu_ns = thread_cpu_ns(vm->io_thread);
	for (uint32_t i = 0; i < vm->ncpus; i++)
		s.cpu_ns += thread_cpu_ns(vm->vcpus[i].thread);
	for (uint32_t i = 0; i < vm->ndevs; i++)
		if (vm->devs[i].pci)
			s.isr_reads += __atomic_load_n(&vm->devs[i].pci->stats.isr_reads,
						       __ATOMIC_RELAXED);
	if (id == LAB_MARK_WORK_START)
		vm->work_start = s;
	else
		vm->work_end = s;
}

/* Per queue: completions, the notifications they took, and what EVENT_IDX and coalesce= saved. */
static void print_queues(struct vm *vm, FILE *out)
{
	fprintf(out, "notifications per queue (coalesce= holds: held, of which joined, time held):\n");
	fprintf(out, "  %-6s %-5s %11s %10s %10s %8s %8s %10s\n", "device", "queue", "completions",
		"interrupts", "suppressed", "held", "joined", "held us");
	for (uint32_t d = 0; d < vm->ndevs; d++) {
		struct virtio_pci *t = vm->devs[d].pci;
		for (uint16_t q = 0; t && q < t->info.nqueues; q++) {
			const struct vpci_queue_stats *s = &t->queues[q].stats;
			if (!s->completions)
				continue;
			fprintf(out, "  %-6s %-5u %11" PRIu64 " %10" PRIu64 " %10" PRIu64 " %8" PRIu64
				" %8" PRIu64 " %10" PRIu64 "\n", t->info.name, q, s->completions,
				s->notifications, s->suppressed, s->holds, s->holds_joined,
				s->hold_ns / 1000);
		}
	}
}

void vm_stats_print(struct vm *vm, FILE *out)
{
	fprintf(out, "interrupts (msivm's view):\n");
	fprintf(out, "  %-6s %-11s %-8s %-12s %10s %8s %9s %8s\n", "device", "mode", "source",
		"use", "delivered", "pended", "replayed", "dropped");
	for (uint32_t d = 0; d < vm->ndevs; d++) {
		struct virtio_pci *t = vm->devs[d].pci;
		if (!t)
			continue; /* VFIO: its own lines (print_stats) */
		const char *mode = irq_mode_name(t->cfg.mode);
		for (uint16_t v = 0; t->has_msix && v < t->msix.nvec; v++) {
			const struct msix_vec_stats *s = &t->msix.stats[v];
			char src[16], use[32];
			snprintf(src, sizeof(src), "msix%u", v);
			vector_label(t, v, use, sizeof(use));
			fprintf(out, "  %-6s %-11s %-8s %-12s %10" PRIu64 " %8" PRIu64 " %9" PRIu64
				" %8" PRIu64 "\n", t->info.name, mode, src, use, s->irqfd, s->pended,
				s->replayed, s->dropped);
		}
		for (uint32_t m = 0; t->has_msi && m < (1u << t->msi.log2_capable); m++)
			fprintf(out, "  %-6s %-11s msi%-5u %-12s %10" PRIu64 " %8" PRIu64 " %9" PRIu64
				" %8s\n", t->info.name, mode, m,
				t->msi.log2_enabled == 0 ? "all" : m ? "queues" : "config",
				t->msi.delivered[m], t->msi.pended[m], t->msi.replayed[m], "-");
		fprintf(out, "  %-6s %-11s gsi%-5u %-12s %10" PRIu64 " %8s %9" PRIu64 " %8s\n",
			t->info.name, mode, t->intx.gsi, "intx(level)", t->stats.intx_asserts, "-",
			t->stats.intx_resamples, "-");
	}
	print_queues(vm, out);
	struct kvm_stats st;
	collect_exits(vm, &st);
	fprintf(out, "VM exits (KVM stats, all vCPUs):\n");
	for (uint32_t i = 0; i < st.n; i++)
		if (is_exit_stat(st.s[i].name) && st.s[i].value)
			fprintf(out, "  %-24s %12" PRIu64 "\n", st.s[i].name, st.s[i].value);
	uint64_t io = 0, mmio = 0;
	for (uint32_t i = 0; i < vm->ncpus; i++) {
		io += __atomic_load_n(&vm->vcpus[i].exits_io, __ATOMIC_RELAXED);
		mmio += __atomic_load_n(&vm->vcpus[i].exits_mmio, __ATOMIC_RELAXED);
	}
	fprintf(out, "exits handled by msivm: io %" PRIu64 ", mmio %" PRIu64 "\n", io, mmio);
	for (uint32_t d = 0; d < vm->ndevs; d++)
		vm->devs[d].type->print_stats(vm->devs[d].dev, out);
	fprintf(out, "GSI route commits: %" PRIu64 " (unchanged updates skipped: %" PRIu64 ")\n",
		vm->routes.commits, vm->routes.unchanged);
}

static json_t *device_json(struct virtio_pci *t)
{
	json_t *d = json_object(), *vecs = json_array();
	json_object_set_new(d, "name", json_string(t->info.name));
	json_object_set_new(d, "mode", json_string(irq_mode_name(t->cfg.mode)));
	for (uint16_t v = 0; t->has_msix && v < t->msix.nvec; v++) {
		const struct msix_vec_stats *s = &t->msix.stats[v];
		char use[32];
		vector_label(t, v, use, sizeof(use));
		json_array_append_new(vecs, json_pack("{s:s,s:i,s:s,s:I,s:I,s:I,s:I}", "source", "msix",
						       "vector", v, "use", use, "delivered",
						       (json_int_t)s->irqfd, "pended", (json_int_t)s->pended,
						       "replayed", (json_int_t)s->replayed, "dropped",
						       (json_int_t)s->dropped));
	}
	for (uint32_t m = 0; t->has_msi && m < (1u << t->msi.log2_capable); m++)
		json_array_append_new(vecs, json_pack("{s:s,s:i,s:I,s:I,s:I}", "source", "msi",
						       "vector", m, "delivered",
						       (json_int_t)t->msi.delivered[m], "pended",
						       (json_int_t)t->msi.pended[m], "replayed",
						       (json_int_t)t->msi.replayed[m]));
	json_object_set_new(d, "vectors", vecs);
	json_object_set_new(d, "intx", json_pack("{s:i,s:I,s:I}", "gsi", t->intx.gsi, "asserts",
						 (json_int_t)t->stats.intx_asserts, "resamples",
						 (json_int_t)t->stats.intx_resamples));
	json_object_set_new(d, "suppressed", json_integer((json_int_t)t->stats.suppressed));
	json_object_set_new(d, "poll", json_pack("{s:i,s:I,s:I}", "max_us", (int)t->cfg.poll_us,
						 "hits", (json_int_t)t->stats.poll_hits, "windows",
						 (json_int_t)t->stats.poll_windows));
	json_t *queues = json_array();
	for (uint16_t q = 0; q < t->info.nqueues; q++) {
		const struct vpci_queue_stats *s = &t->queues[q].stats;
		json_array_append_new(queues, json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "queue", q,
							"completions", (json_int_t)s->completions,
							"notifications", (json_int_t)s->notifications,
							"suppressed", (json_int_t)s->suppressed,
							"holds", (json_int_t)s->holds, "holds_joined",
							(json_int_t)s->holds_joined, "hold_us",
							(json_int_t)(s->hold_ns / 1000), "hold_pickups",
							(json_int_t)s->hold_pickups, "whole_batches",
							(json_int_t)s->whole_batches));
	}
	json_object_set_new(d, "queues", queues);
	json_object_set_new(d, "coalesce_us", json_integer(t->cfg.coalesce_us));
	json_object_set_new(d, "kicks", json_integer((json_int_t)t->stats.kicks));
	json_object_set_new(d, "kicks_mmio", json_integer((json_int_t)t->stats.kicks_mmio));
	json_object_set_new(d, "isr_reads", json_integer((json_int_t)t->stats.isr_reads));
	return d;
}

json_t *vm_stats_json(struct vm *vm)
{
	json_t *root = json_object(), *devs = json_array(), *exits = json_object();
	for (uint32_t d = 0; d < vm->ndevs; d++) {
		const struct vm_device *dev = &vm->devs[d];
		json_t *dj = dev->pci ? device_json(dev->pci) : json_object();
		json_object_set_new(dj, "type", json_string(dev->type->name));
		dev->type->stats_json(dev->dev, dj);
		json_array_append_new(devs, dj);
	}
	struct kvm_stats st;
	collect_exits(vm, &st);
	for (uint32_t i = 0; i < st.n; i++)
		if (is_exit_stat(st.s[i].name))
			json_object_set_new(exits, st.s[i].name, json_integer((json_int_t)st.s[i].value));
	uint64_t io = 0, mmio = 0;
	for (uint32_t i = 0; i < vm->ncpus; i++) {
		io += __atomic_load_n(&vm->vcpus[i].exits_io, __ATOMIC_RELAXED);
		mmio += __atomic_load_n(&vm->vcpus[i].exits_mmio, __ATOMIC_RELAXED);
	}
	json_object_set_new(exits, "msivm_io", json_integer((json_int_t)io));
	json_object_set_new(exits, "msivm_mmio", json_integer((json_int_t)mmio));
	json_t *markers = json_object(), *cpu = json_object();
	for (unsigned i = 0; i < LAB_MARKER_MAX; i++)
		if (vm->marker.count[i]) {
			char key[8];
			snprintf(key, sizeof(key), "%u", i);
			json_object_set_new(markers, key, json_pack("{s:I,s:I}", "first_ns",
					    (json_int_t)vm->marker.first_ns[i], "count",
					    (json_int_t)vm->marker.count[i]));
		}
	uint64_t vcpu_ns = 0;
	for (uint32_t i = 0; i < vm->ncpus; i++)
		vcpu_ns += vm->vcpus[i].cpu_ns;
	json_object_set_new(cpu, "vcpu_ns", json_integer((json_int_t)vcpu_ns));
	json_object_set_new(cpu, "io_ns", json_integer((json_int_t)vm->io_cpu_ns));
	json_object_set_new(root, "markers", markers);
	if (vm->work_start.taken && vm->work_end.taken) {
		const struct vm_snapshot *a = &vm->work_start, *b = &vm->work_end;
		json_object_set_new(root, "workload", json_pack("{s:I,s:I,s:I,s:I,s:I}",
				    "cpu_ns", (json_int_t)(b->cpu_ns - a->cpu_ns),
				    "exits", (json_int_t)(b->kvm_exits - a->kvm_exits),
				    "msivm_io", (json_int_t)(b->msivm_io - a->msivm_io),
				    "msivm_mmio", (json_int_t)(b->msivm_mmio - a->msivm_mmio),
				    "isr_reads", (json_int_t)(b->isr_reads - a->isr_reads)));
	}
	json_object_set_new(root, "tsc_offset", json_integer((json_int_t)vm->tsc_offset));
	json_object_set_new(root, "first_run_ns", json_integer((json_int_t)vm->first_run_ns));
	json_object_set_new(root, "cpu", cpu);
	json_object_set_new(root, "devices", devs);
	json_object_set_new(root, "exits", exits);
	json_object_set_new(root, "route_commits", json_integer((json_int_t)vm->routes.commits));
	return root;
}

int vm_stats_write_json(struct vm *vm, FILE *out, const char *name, struct error *err)
{
	json_t *root = vm_stats_json(vm);
	int ret = json_dumpf(root, out, JSON_INDENT(2)) || fflush(out) ? -EIO : 0;
	json_decref(root);
	if (ret)
		return error_set(err, ret, "cannot write statistics to '%s'", name);
	return 0;
}
