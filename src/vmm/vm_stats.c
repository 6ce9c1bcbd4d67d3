/* VM statistics: collect transport counters and KVM stats; format them as a table or JSON. */
#include "vmm/vm_stats.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <string.h>

#include "vmm/kvm_stats.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

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

/* Device i's transport: rngs first, then disks, then consoles, then NICs. */
static struct virtio_pci *transport(struct vm *vm, uint32_t i)
{
	if (i < vm->nrngs)
		return &vm->rngs[i]->pci;
	i -= vm->nrngs;
	if (i >= vm->nblks + vm->nconsoles)
		return &vm->nets[i - vm->nblks - vm->nconsoles]->pci;
	return i < vm->nblks ? &vm->blks[i]->pci : &vm->consoles[i - vm->nblks]->pci;
}

static const char *const blk_stat_names[VBLK_NSTATS] = {
	"in", "out", "flush", "get_id", "discard", "write_zeroes", "other",
};

static void print_blk(const struct virtio_blk *b, FILE *out)
{
	const struct virtio_blk_stats *bs = &b->stats;
	const struct vpci_irq_stats *s = &b->pci.stats;
	uint64_t total = 0;
	for (unsigned i = 0; i < VBLK_NSTATS; i++)
		total += bs->requests[i];
	fprintf(out, "  %s: %" PRIu64 " requests (", b->name, total);
	for (unsigned i = 0; i < VBLK_NSTATS; i++)
		fprintf(out, "%s%s %" PRIu64, i ? ", " : "", blk_stat_names[i], bs->requests[i]);
	fprintf(out, "), %" PRIu64 " bytes read, %" PRIu64 " written, %" PRIu64 " IOERR, %" PRIu64
		" UNSUPP, engine %s; %" PRIu64 " kicks (%" PRIu64 " by MMIO exit), %" PRIu64
		" ISR reads, %" PRIu64 " interrupts suppressed by the driver\n", bs->bytes_read,
		bs->bytes_written, bs->ioerr, bs->unsupp, b->be ? b->be->ops->name : "-", s->kicks,
		s->kicks_mmio, s->isr_reads, s->suppressed);
}

static void print_net(struct virtio_net *n, FILE *out)
{
	const struct virtio_net_stats *ns = &n->stats;
	const struct vpci_irq_stats *s = &n->pci.stats;
	fprintf(out, "  %s: %s; tx %" PRIu64 " frames %" PRIu64 " bytes, rx %" PRIu64 " frames %"
		PRIu64 " bytes; drops", n->name, n->be ? n->be->desc : "-", ns->tx_frames,
		ns->tx_bytes, ns->rx_frames, ns->rx_bytes);
	for (unsigned i = 0; i < VNET_NDROPS; i++)
		fprintf(out, "%s %s %" PRIu64, i ? "," : "", virtio_net_drop_name(i), ns->drops[i]);
	fprintf(out, "; %" PRIu64 " rx stalls, %" PRIu64 " tx headers with unknown flags, control %"
		PRIu64 " ok %" PRIu64 " err; %" PRIu64
		" kicks (%" PRIu64 " by MMIO exit), %" PRIu64 " ISR reads, %" PRIu64
		" interrupts suppressed by the driver\n", ns->rx_stalls, ns->tx_flags_ignored,
		ns->ctrl_ok, ns->ctrl_err, s->kicks, s->kicks_mmio, s->isr_reads, s->suppressed);
	struct net_be_stat bs[NET_BE_MAX_STATS];
	unsigned nb = n->be ? net_backend_stats(n->be, bs, NET_BE_MAX_STATS) : 0;
	if (nb) {
		fprintf(out, "  %s backend:", n->name);
		for (unsigned i = 0; i < nb; i++)
			fprintf(out, "%s %s %" PRIu64, i ? "," : "", bs[i].name, bs[i].value);
		fprintf(out, "\n");
	}
}

void vm_stats_print(struct vm *vm, FILE *out)
{
	fprintf(out, "interrupts (msivm's view):\n");
	fprintf(out, "  %-6s %-11s %-8s %-12s %10s %8s %9s %8s\n", "device", "mode", "source",
		"use", "delivered", "pended", "replayed", "dropped");
	for (uint32_t d = 0; d < vm->nrngs + vm->nblks + vm->nconsoles + vm->nnets; d++) {
		struct virtio_pci *t = transport(vm, d);
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
			t->info.name, mode, t->intx_gsi, "intx(level)", t->stats.intx_asserts, "-",
			t->stats.intx_resamples, "-");
	}
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
	for (uint32_t d = 0; d < vm->nrngs; d++) {
		const struct vpci_irq_stats *s = &vm->rngs[d]->pci.stats;
		fprintf(out, "  %s: %" PRIu64 " requests, %" PRIu64 " kicks (%" PRIu64 " by MMIO exit), %"
			PRIu64 " ISR reads, %" PRIu64 " interrupts suppressed by the driver\n",
			vm->rngs[d]->name, vm->rngs[d]->requests, s->kicks, s->kicks_mmio,
			s->isr_reads, s->suppressed);
	}
	for (uint32_t d = 0; d < vm->nblks; d++)
		print_blk(vm->blks[d], out);
	for (uint32_t d = 0; d < vm->nconsoles; d++) {
		const struct virtio_console_stats *cs = &vm->consoles[d]->stats;
		const struct vpci_irq_stats *s = &vm->consoles[d]->pci.stats;
		fprintf(out, "  %s: %" PRIu64 " bytes out in %" PRIu64 " buffers (%" PRIu64 " dropped), %"
			PRIu64 " bytes in in %" PRIu64 " buffers; %" PRIu64 " kicks (%" PRIu64
			" by MMIO exit), %" PRIu64 " ISR reads, %" PRIu64
			" interrupts suppressed by the driver\n", vm->consoles[d]->name, cs->bytes_out,
			cs->chains_out, cs->bytes_dropped, cs->bytes_in, cs->chains_in, s->kicks,
			s->kicks_mmio, s->isr_reads, s->suppressed);
	}
	for (uint32_t d = 0; d < vm->nnets; d++)
		print_net(vm->nets[d], out);
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
	json_object_set_new(d, "intx", json_pack("{s:i,s:I,s:I}", "gsi", t->intx_gsi, "asserts",
						 (json_int_t)t->stats.intx_asserts, "resamples",
						 (json_int_t)t->stats.intx_resamples));
	json_object_set_new(d, "suppressed", json_integer((json_int_t)t->stats.suppressed));
	json_object_set_new(d, "poll", json_pack("{s:i,s:I,s:I}", "max_us", (int)t->cfg.poll_us,
						 "hits", (json_int_t)t->stats.poll_hits, "windows",
						 (json_int_t)t->stats.poll_windows));
	return d;
}

static json_t *blk_json(struct virtio_blk *b)
{
	json_t *dj = device_json(&b->pci), *reqs = json_object();
	const struct virtio_blk_stats *bs = &b->stats;
	uint64_t total = 0;
	for (unsigned i = 0; i < VBLK_NSTATS; i++) {
		json_object_set_new(reqs, blk_stat_names[i], json_integer((json_int_t)bs->requests[i]));
		total += bs->requests[i];
	}
	json_object_set_new(dj, "type", json_string("blk"));
	json_object_set_new(dj, "engine", json_string(b->be ? b->be->ops->name : "-"));
	json_object_set_new(dj, "inline_writes", json_boolean(b->be && b->be->inline_writes));
	json_object_set_new(dj, "requests", json_integer((json_int_t)total));
	json_object_set_new(dj, "requests_by_type", reqs);
	json_object_set_new(dj, "bytes", json_integer((json_int_t)(bs->bytes_read + bs->bytes_written)));
	json_object_set_new(dj, "bytes_read", json_integer((json_int_t)bs->bytes_read));
	json_object_set_new(dj, "bytes_written", json_integer((json_int_t)bs->bytes_written));
	json_object_set_new(dj, "ioerr", json_integer((json_int_t)bs->ioerr));
	json_object_set_new(dj, "unsupp", json_integer((json_int_t)bs->unsupp));
	const struct vpci_irq_stats *s = &b->pci.stats;
	json_object_set_new(dj, "kicks", json_integer((json_int_t)s->kicks));
	json_object_set_new(dj, "kicks_mmio", json_integer((json_int_t)s->kicks_mmio));
	json_object_set_new(dj, "isr_reads", json_integer((json_int_t)s->isr_reads));
	return dj;
}

static json_t *console_json(struct virtio_console *c)
{
	json_t *dj = device_json(&c->pci);
	const struct virtio_console_stats *cs = &c->stats;
	const struct vpci_irq_stats *s = &c->pci.stats;
	json_object_set_new(dj, "type", json_string("console"));
	json_object_set_new(dj, "bytes", json_integer((json_int_t)(cs->bytes_out + cs->bytes_in)));
	json_object_set_new(dj, "bytes_out", json_integer((json_int_t)cs->bytes_out));
	json_object_set_new(dj, "bytes_dropped", json_integer((json_int_t)cs->bytes_dropped));
	json_object_set_new(dj, "buffers_out", json_integer((json_int_t)cs->chains_out));
	json_object_set_new(dj, "bytes_in", json_integer((json_int_t)cs->bytes_in));
	json_object_set_new(dj, "buffers_in", json_integer((json_int_t)cs->chains_in));
	json_object_set_new(dj, "kicks", json_integer((json_int_t)s->kicks));
	json_object_set_new(dj, "kicks_mmio", json_integer((json_int_t)s->kicks_mmio));
	json_object_set_new(dj, "isr_reads", json_integer((json_int_t)s->isr_reads));
	return dj;
}

static json_t *net_json(struct virtio_net *n)
{
	json_t *dj = device_json(&n->pci), *drops = json_object(), *bej = json_object();
	const struct virtio_net_stats *ns = &n->stats;
	const struct vpci_irq_stats *s = &n->pci.stats;
	json_object_set_new(dj, "type", json_string("net"));
	json_object_set_new(dj, "backend", json_string(n->be ? n->be->kind : "-"));
	json_object_set_new(dj, "attached", json_string(n->be ? n->be->desc : "-"));
	json_object_set_new(dj, "queue_pairs", json_integer(n->max_pairs));
	json_object_set_new(dj, "tx_frames", json_integer((json_int_t)ns->tx_frames));
	json_object_set_new(dj, "tx_bytes", json_integer((json_int_t)ns->tx_bytes));
	json_object_set_new(dj, "rx_frames", json_integer((json_int_t)ns->rx_frames));
	json_object_set_new(dj, "rx_bytes", json_integer((json_int_t)ns->rx_bytes));
	json_object_set_new(dj, "bytes", json_integer((json_int_t)(ns->tx_bytes + ns->rx_bytes)));
	for (unsigned i = 0; i < VNET_NDROPS; i++)
		json_object_set_new(drops, virtio_net_drop_name(i), json_integer((json_int_t)ns->drops[i]));
	json_object_set_new(dj, "drops", drops);
	json_object_set_new(dj, "rx_stalls", json_integer((json_int_t)ns->rx_stalls));
	json_object_set_new(dj, "ctrl_ok", json_integer((json_int_t)ns->ctrl_ok));
	json_object_set_new(dj, "ctrl_err", json_integer((json_int_t)ns->ctrl_err));
	json_object_set_new(dj, "tx_flags_ignored", json_integer((json_int_t)ns->tx_flags_ignored));
	struct net_be_stat bs[NET_BE_MAX_STATS];
	unsigned nb = n->be ? net_backend_stats(n->be, bs, NET_BE_MAX_STATS) : 0;
	for (unsigned i = 0; i < nb; i++)
		json_object_set_new(bej, bs[i].name, json_integer((json_int_t)bs[i].value));
	json_object_set_new(dj, "backend_stats", bej);
	json_object_set_new(dj, "kicks", json_integer((json_int_t)s->kicks));
	json_object_set_new(dj, "kicks_mmio", json_integer((json_int_t)s->kicks_mmio));
	json_object_set_new(dj, "isr_reads", json_integer((json_int_t)s->isr_reads));
	return dj;
}

json_t *vm_stats_json(struct vm *vm)
{
	json_t *root = json_object(), *devs = json_array(), *exits = json_object();
	for (uint32_t d = 0; d < vm->nrngs; d++) {
		json_t *dj = device_json(&vm->rngs[d]->pci);
		json_object_set_new(dj, "type", json_string("rng"));
		json_object_set_new(dj, "requests", json_integer((json_int_t)vm->rngs[d]->requests));
		json_object_set_new(dj, "bytes", json_integer((json_int_t)vm->rngs[d]->bytes));
		json_object_set_new(dj, "source", json_string(vm->rngs[d]->source == VIRTIO_RNG_DRBG
							      ? "drbg" : "getrandom"));
		json_object_set_new(dj, "source_calls",
				    json_integer((json_int_t)vm->rngs[d]->pool_refills));
		if (vm->rngs[d]->period_us) {
			json_object_set_new(dj, "latency_period_us", json_integer(vm->rngs[d]->period_us));
			json_object_set_new(dj, "ticks", json_integer((json_int_t)vm->rngs[d]->ticks));
			json_object_set_new(dj, "ticks_idle", json_integer((json_int_t)vm->rngs[d]->ticks_idle));
		}
		const struct vpci_irq_stats *s = &vm->rngs[d]->pci.stats;
		json_object_set_new(dj, "kicks", json_integer((json_int_t)s->kicks));
		json_object_set_new(dj, "kicks_mmio", json_integer((json_int_t)s->kicks_mmio));
		json_object_set_new(dj, "isr_reads", json_integer((json_int_t)s->isr_reads));
		json_array_append_new(devs, dj);
	}
	for (uint32_t d = 0; d < vm->nblks; d++)
		json_array_append_new(devs, blk_json(vm->blks[d]));
	for (uint32_t d = 0; d < vm->nconsoles; d++)
		json_array_append_new(devs, console_json(vm->consoles[d]));
	for (uint32_t d = 0; d < vm->nnets; d++)
		json_array_append_new(devs, net_json(vm->nets[d]));
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
