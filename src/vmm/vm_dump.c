/* Guest crash dumps: stopped vCPUs' registers -> ELF notes; guest RAM -> PT_LOAD segments (sparse); device state -> JSON. */
#include "vmm/vm_dump.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/procfs.h>
#include <unistd.h>

#include "util/file.h"
#include "vmm/vcpu.h"
#include "vmm/vm_state.h"
#include "vmm/vm_stats.h"

#define PAGE 4096u
#define NOTE_MSIVM 0x4d53u /* the "MSIVM" note's type: struct msivm_sregs */

/* The control registers a debugger needs to walk the guest's page tables. */
struct msivm_sregs {
	uint64_t cr0, cr2, cr3, cr4, efer;
};

/* QEMU's per-CPU note ("QEMU", type 0, version 1), as `dump-guest-memory` writes it: the
 * `crash` utility finds a KASLR kernel's offset from its IDTR and CR3 (no VMCOREINFO needed). */
struct qemu_seg {
	uint32_t selector, limit, flags, pad;
	uint64_t base;
};

struct qemu_cpu_state {
	uint32_t version, size;
	uint64_t rax, rbx, rcx, rdx, rsi, rdi, rsp, rbp;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rip, rflags;
	struct qemu_seg cs, ds, es, fs, gs, ss, ldt, tr, gdt, idt;
	uint64_t cr[5];
	uint64_t kernel_gs_base;
};

#define MSR_KERNEL_GS_BASE 0xc0000102u

static size_t align4(size_t n) { return (n + 3) & ~(size_t)3; }

/* Appends one ELF note (name, type, desc) at buf + *off; the caller sized buf. */
static void put_note(uint8_t *buf, size_t *off, const char *name, uint32_t type, const void *desc,
		     size_t len)
{
	Elf64_Nhdr h = { .n_namesz = (Elf64_Word)strlen(name) + 1, .n_descsz = (Elf64_Word)len,
			 .n_type = type };
	memcpy(buf + *off, &h, sizeof(h));
	*off += sizeof(h);
	memcpy(buf + *off, name, h.n_namesz);
	*off += align4(h.n_namesz);
	memcpy(buf + *off, desc, len);
	*off += align4(len);
}

static size_t note_size(const char *name, size_t len)
{
	return sizeof(Elf64_Nhdr) + align4(strlen(name) + 1) + align4(len);
}

/* A segment as QEMU's note has it: the descriptor's attribute bits 8-23 in `flags`. */
static struct qemu_seg qseg(const struct kvm_segment *s)
{
	uint32_t f = (uint32_t)s->type << 8 | (uint32_t)s->s << 12 | (uint32_t)s->dpl << 13 |
		     (uint32_t)s->present << 15 | (uint32_t)s->avl << 20 | (uint32_t)s->l << 21 |
		     (uint32_t)s->db << 22 | (uint32_t)s->g << 23;
	return (struct qemu_seg){ .selector = s->selector, .limit = s->limit, .flags = f,
				  .base = s->base };
}

static struct qemu_seg qtable(const struct kvm_dtable *t)
{
	return (struct qemu_seg){ .limit = t->limit, .base = t->base };
}

static void qemu_state(const struct vcpu *c, const struct kvm_regs *r, const struct kvm_sregs *s,
		       struct qemu_cpu_state *q)
{
	struct { struct kvm_msrs h; struct kvm_msr_entry e; } m = { .h.nmsrs = 1,
		.e.index = MSR_KERNEL_GS_BASE };
	if (ioctl(c->fd, KVM_GET_MSRS, &m) != 1)
		m.e.data = 0;
	*q = (struct qemu_cpu_state){
		.version = 1, .size = sizeof(*q),
		.rax = r->rax, .rbx = r->rbx, .rcx = r->rcx, .rdx = r->rdx, .rsi = r->rsi,
		.rdi = r->rdi, .rsp = r->rsp, .rbp = r->rbp, .r8 = r->r8, .r9 = r->r9,
		.r10 = r->r10, .r11 = r->r11, .r12 = r->r12, .r13 = r->r13, .r14 = r->r14,
		.r15 = r->r15, .rip = r->rip, .rflags = r->rflags,
		.cs = qseg(&s->cs), .ds = qseg(&s->ds), .es = qseg(&s->es), .fs = qseg(&s->fs),
		.gs = qseg(&s->gs), .ss = qseg(&s->ss), .ldt = qseg(&s->ldt), .tr = qseg(&s->tr),
		.gdt = qtable(&s->gdt), .idt = qtable(&s->idt),
		.cr = { s->cr0, 0, s->cr2, s->cr3, s->cr4 }, .kernel_gs_base = m.e.data,
	};
}

/* vCPU i's registers as the kernel's core files carry them, and as QEMU's note does. */
static int vcpu_notes(const struct vcpu *c, struct elf_prstatus *ps, struct msivm_sregs *sr,
		      struct qemu_cpu_state *q)
{
	struct kvm_regs r;
	struct kvm_sregs s;
	if (ioctl(c->fd, KVM_GET_REGS, &r) || ioctl(c->fd, KVM_GET_SREGS, &s))
		return -errno;
	memset(ps, 0, sizeof(*ps));
	ps->pr_pid = (int)c->id + 1;
	struct user_regs_struct *u = (struct user_regs_struct *)&ps->pr_reg;
	*u = (struct user_regs_struct){
		.r15 = r.r15, .r14 = r.r14, .r13 = r.r13, .r12 = r.r12, .rbp = r.rbp, .rbx = r.rbx,
		.r11 = r.r11, .r10 = r.r10, .r9 = r.r9, .r8 = r.r8, .rax = r.rax, .rcx = r.rcx,
		.rdx = r.rdx, .rsi = r.rsi, .rdi = r.rdi, .orig_rax = (unsigned long long)-1,
		.rip = r.rip, .cs = s.cs.selector, .eflags = r.rflags, .rsp = r.rsp,
		.ss = s.ss.selector, .fs_base = s.fs.base, .gs_base = s.gs.base,
		.ds = s.ds.selector, .es = s.es.selector, .fs = s.fs.selector, .gs = s.gs.selector,
	};
	*sr = (struct msivm_sregs){ s.cr0, s.cr2, s.cr3, s.cr4, s.efer };
	qemu_state(c, &r, &s, q);
	return 0;
}

static int write_core(struct vm *vm, int fd)
{
	const struct guest_mem *gm = &vm->mem;
	size_t notes = vm->ncpus * (note_size("CORE", sizeof(struct elf_prstatus)) +
				    note_size("MSIVM", sizeof(struct msivm_sregs)) +
				    note_size("QEMU", sizeof(struct qemu_cpu_state)));
	uint16_t phnum = (uint16_t)(1 + gm->nregions);
	size_t hdrs = sizeof(Elf64_Ehdr) + phnum * sizeof(Elf64_Phdr);
	uint8_t *head = calloc(1, hdrs + notes);
	if (!head)
		return -ENOMEM;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)head;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_ident[EI_OSABI] = ELFOSABI_SYSV;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(Elf64_Ehdr);
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = phnum;
	size_t off = hdrs;
	int ret = 0;
	for (uint32_t i = 0; i < vm->ncpus && !ret; i++) {
		struct elf_prstatus ps;
		struct msivm_sregs sr;
		struct qemu_cpu_state q;
		if (!(ret = vcpu_notes(&vm->vcpus[i], &ps, &sr, &q))) {
			put_note(head, &off, "CORE", NT_PRSTATUS, &ps, sizeof(ps));
			put_note(head, &off, "MSIVM", NOTE_MSIVM, &sr, sizeof(sr));
			put_note(head, &off, "QEMU", 0, &q, sizeof(q));
		}
	}
	Elf64_Phdr *ph = (Elf64_Phdr *)(head + sizeof(Elf64_Ehdr));
	ph[0] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = hdrs, .p_filesz = off - hdrs };
	uint64_t data = (hdrs + notes + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	for (uint32_t r = 0; r < gm->nregions; r++) {
		const struct guest_mem_region *g = &gm->regions[r];
		/* p_align 0, as kdump's and QEMU's cores: `crash` then reads it as a kdump core */
		ph[1 + r] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
					  .p_offset = data, .p_vaddr = g->gpa, .p_paddr = g->gpa,
					  .p_filesz = g->size, .p_memsz = g->size };
		data += g->size;
	}
	if (!ret && pwrite(fd, head, off, 0) != (ssize_t)off)
		ret = -errno ? -errno : -EIO;
	for (uint32_t r = 0; r < gm->nregions && !ret; r++)
		ret = file_write_sparse(fd, gm->regions[r].host, gm->regions[r].size, ph[1 + r].p_offset);
	if (!ret && ftruncate(fd, (off_t)data))
		ret = -errno;
	free(head);
	return ret;
}

static json_t *transport_json(struct virtio_pci *t)
{
	json_t *o = json_object(), *qs = json_array(), *tab = json_array();
	pthread_mutex_lock(&t->lock);
	json_object_set_new(o, "name", json_string(t->info.name));
	json_object_set_new(o, "status", json_integer(t->status));
	json_object_set_new(o, "features", json_integer((json_int_t)t->negotiated));
	json_object_set_new(o, "isr", json_integer(t->isr));
	json_object_set_new(o, "intx_level", json_boolean(t->intx_level));
	for (uint16_t q = 0; q < t->info.nqueues; q++) {
		const struct vpci_queue *vq = &t->queues[q];
		json_array_append_new(qs, json_pack("{s:i,s:i,s:b,s:I,s:I,s:I,s:i,s:i,s:i,s:i,s:b}",
			"index", q, "size", vq->size, "enabled", vq->enabled,
			"desc", (json_int_t)vq->desc, "driver", (json_int_t)vq->driver,
			"device", (json_int_t)vq->device, "msix_vector", vq->msix_vector,
			"last_avail", vq->vq.last_avail, "used_idx", vq->vq.used_idx,
			"published_idx", vq->vq.published_idx, "broken", vq->vq.broken));
	}
	pthread_mutex_unlock(&t->lock);
	json_object_set_new(o, "queues", qs);
	if (t->has_msix) {
		pthread_mutex_lock(&t->msix.lock);
		for (uint16_t v = 0; v < t->msix.nvec; v++) {
			const struct msix_entry *e = &t->msix.table[v];
			json_array_append_new(tab, json_pack("{s:I,s:i,s:b,s:b}", "addr",
				(json_int_t)((uint64_t)e->addr_hi << 32 | e->addr_lo), "data", (int)e->data,
				"masked", (e->ctrl & 1) != 0, "pending", (t->msix.pba >> v) & 1));
		}
		json_object_set_new(o, "msix", json_pack("{s:b,s:b,s:o}", "enabled", t->msix.enabled,
							 "function_masked", t->msix.fmask, "table", tab));
		pthread_mutex_unlock(&t->msix.lock);
	} else {
		json_decref(tab);
	}
	return o;
}

static int write_devices(struct vm *vm, int fd)
{
	json_t *root = json_object(), *devs = json_array();
	for (uint32_t i = 0; i < vm->ndevs; i++)
		if (vm->devs[i].pci)
			json_array_append_new(devs, transport_json(vm->devs[i].pci));
	json_object_set_new(root, "transports", devs);
	json_object_set_new(root, "end_reason", json_string(vm->end_reason ? vm->end_reason : ""));
	json_object_set_new(root, "stats", vm_stats_json(vm));
	int ret = json_dumpfd(root, fd, JSON_INDENT(2)) ? -EIO : 0;
	json_decref(root);
	return ret;
}

int vm_dump_write(struct vm *vm, int dirfd, const char *stem, struct error *err)
{
	static const char *const ext[2] = { "core", "json" };
	for (int k = 0; k < 2; k++) {
		char name[256];
		snprintf(name, sizeof(name), "%s.%s", stem, ext[k]);
		int fd = openat(dirfd, name, VM_DUMP_OPEN_FLAGS, 0600);
		if (fd < 0)
			return error_set(err, -errno, "cannot create the dump file '%s': %s", name,
					 strerror(errno));
		int ret = k == 0 ? write_core(vm, fd) : write_devices(vm, fd);
		if (close(fd) && !ret)
			ret = -errno;
		if (ret)
			return error_set(err, ret, "cannot write the dump file '%s': %s", name,
					 strerror(-ret));
	}
	return 0;
}
