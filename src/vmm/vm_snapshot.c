/* Snapshots: header + SHA-256 + JSON state file, sparse RAM file; restore checks the host and the shape, then maps RAM and puts every part back. */
#include "vmm/vm_snapshot.h"

#include <errno.h>
#include <linux/kvm.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/file.h"
#include "util/hex.h"
#include "virtio/virtio_pci_state.h"
#include "vmm/vcpu.h"
#include "vmm/vcpu_state.h"
#include "vmm/vm_state.h"

_Static_assert(sizeof(struct vm_snapshot_header) == 64, "the state file's header is 64 bytes");
_Static_assert(sizeof(struct vm_snapshot_mem_trailer) == 64, "the memory file's trailer is 64 bytes");
#define MEM_ID_LEN 16

/* ---- the guest's CPU: what a restore on another host must still offer ---- */

enum { EAX, EBX, ECX, EDX };
static const struct feature_reg {
	const char *name;
	uint32_t leaf, index;
	int reg;
	uint32_t ignore;          /* bits that change at run time (OSXSAVE follows CR4) */
} feature_regs[] = {
	{ "1.ecx", 1, 0, ECX, 1u << 27 }, { "1.edx", 1, 0, EDX, 0 },
	{ "7.0.ebx", 7, 0, EBX, 0 }, { "7.0.ecx", 7, 0, ECX, 1u << 4 /* OSPKE */ },
	{ "7.0.edx", 7, 0, EDX, 0 }, { "0xd.1.eax", 0xd, 1, EAX, 0 },
	{ "0x80000001.ecx", 0x80000001, 0, ECX, 0 }, { "0x80000001.edx", 0x80000001, 0, EDX, 0 },
};
#define NFEATURES (sizeof(feature_regs) / sizeof(feature_regs[0]))
#define MAX_CPUID 256

/* vCPU `fd`'s CPUID: its vendor string and the feature registers above. */
static int cpu_features(int fd, char vendor[13], uint32_t feat[NFEATURES])
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + MAX_CPUID * sizeof(struct kvm_cpuid_entry2));
	if (!c)
		return -ENOMEM;
	c->nent = MAX_CPUID;
	if (ioctl(fd, KVM_GET_CPUID2, c)) {
		int e = -errno;
		free(c);
		return e;
	}
	memset(vendor, 0, 13);
	memset(feat, 0, NFEATURES * sizeof(uint32_t));
	for (uint32_t i = 0; i < c->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &c->entries[i];
		uint32_t regs[4] = { e->eax, e->ebx, e->ecx, e->edx };
		if (e->function == 0) {
			memcpy(vendor, &e->ebx, 4);
			memcpy(vendor + 4, &e->edx, 4);
			memcpy(vendor + 8, &e->ecx, 4);
		}
		for (size_t k = 0; k < NFEATURES; k++)
			if (e->function == feature_regs[k].leaf && e->index == feature_regs[k].index)
				feat[k] = regs[feature_regs[k].reg] & ~feature_regs[k].ignore;
	}
	free(c);
	return 0;
}

static json_t *cpu_save(const struct vm *vm, struct error *err)
{
	char vendor[13];
	uint32_t feat[NFEATURES];
	int ret = cpu_features(vm->vcpus[0].fd, vendor, feat);
	if (ret) {
		error_set(err, ret, "cannot read the guest's CPUID: %s", strerror(-ret));
		return NULL;
	}
	json_t *f = json_object();
	for (size_t k = 0; k < NFEATURES; k++)
		json_object_set_new(f, feature_regs[k].name, json_integer(feat[k]));
	return json_pack("{s:s,s:o}", "vendor", vendor, "features", f);
}

/* The new host must be of the same vendor and offer every feature the guest was shown. */
static int cpu_check(const struct vm *vm, const json_t *cpu, struct error *err)
{
	char vendor[13];
	uint32_t feat[NFEATURES];
	int ret = cpu_features(vm->vcpus[0].fd, vendor, feat);
	if (ret)
		return error_set(err, ret, "cannot read this host's CPUID: %s", strerror(-ret));
	const char *saved = json_string_value(json_object_get(cpu, "vendor"));
	const json_t *f = json_object_get(cpu, "features");
	if (!saved || !json_is_object(f))
		return error_set(err, -EINVAL, "the snapshot has no CPU description");
	if (strcmp(saved, vendor))
		return error_set(err, -EINVAL, "wrong host: the snapshot was taken on a %s CPU, this "
				 "host has a %s one", saved, vendor);
	for (size_t k = 0; k < NFEATURES; k++) {
		const json_t *v = json_object_get(f, feature_regs[k].name);
		if (!json_is_integer(v))
			return error_set(err, -EINVAL, "the snapshot's CPU lacks CPUID %s",
					 feature_regs[k].name);
		uint32_t want = (uint32_t)json_integer_value(v) & ~feature_regs[k].ignore;
		if (want & ~feat[k])
			return error_set(err, -EINVAL, "wrong host: the guest was given CPUID %s bits "
					 "0x%x that this host lacks", feature_regs[k].name,
					 want & ~feat[k]);
	}
	return 0;
}

/* ---- the VM's own chips ---- */

static json_t *hex_blob(const void *p, size_t len)
{
	char *t = malloc(2 * len + 1);
	if (!t)
		return NULL;
	hex_encode(p, len, t);
	json_t *j = json_string(t);
	free(t);
	return j;
}

static int unhex(const json_t *v, void *p, size_t len)
{
	return json_is_string(v) ? hex_decode(json_string_value(v), json_string_length(v), p, len)
				 : -EINVAL;
}

static json_t *chips_save(const struct vm *vm, struct error *err)
{
	json_t *o = json_object(), *chips = json_array();
	struct kvm_clock_data clock = { 0 };
	for (uint32_t id = 0; id < 3; id++) { /* PIC master, PIC slave, IOAPIC */
		struct kvm_irqchip chip = { .chip_id = id };
		if (ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &chip)) {
			error_set(err, -errno, "cannot read irqchip %u: %s", id, strerror(errno));
			json_decref(o);
			json_decref(chips);
			return NULL;
		}
		json_array_append_new(chips, hex_blob(&chip, sizeof(chip)));
	}
	json_object_set_new(o, "irqchip", chips);
	if (vm->cfg.pit) {
		struct kvm_pit_state2 pit;
		if (ioctl(vm->vm_fd, KVM_GET_PIT2, &pit)) {
			error_set(err, -errno, "cannot read the PIT: %s", strerror(errno));
			json_decref(o);
			return NULL;
		}
		json_object_set_new(o, "pit", hex_blob(&pit, sizeof(pit)));
	}
	if (ioctl(vm->vm_fd, KVM_GET_CLOCK, &clock)) {
		error_set(err, -errno, "cannot read the kvmclock: %s", strerror(errno));
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "clock", json_integer((json_int_t)clock.clock));
	return o;
}

static int chips_load(struct vm *vm, const json_t *o, struct error *err)
{
	const json_t *chips = json_object_get(o, "irqchip"), *clk = json_object_get(o, "clock");
	if (!json_is_array(chips) || json_array_size(chips) != 3 || !json_is_integer(clk))
		return error_set(err, -EINVAL, "the snapshot's irqchip or clock is missing");
	for (uint32_t id = 0; id < 3; id++) {
		struct kvm_irqchip chip;
		if (unhex(json_array_get(chips, id), &chip, sizeof(chip)) || chip.chip_id != id)
			return error_set(err, -EINVAL, "the snapshot's irqchip %u is invalid", id);
		if (ioctl(vm->vm_fd, KVM_SET_IRQCHIP, &chip))
			return error_set(err, -errno, "KVM refused irqchip %u: %s", id, strerror(errno));
	}
	const json_t *pitv = json_object_get(o, "pit");
	if (vm->cfg.pit != (pitv != NULL))
		return error_set(err, -EINVAL, "the snapshot %s a PIT and this VM %s", pitv ? "has" :
				 "has no", vm->cfg.pit ? "has" : "has none");
	struct kvm_pit_state2 pit;
	if (pitv && (unhex(pitv, &pit, sizeof(pit)) || ioctl(vm->vm_fd, KVM_SET_PIT2, &pit)))
		return error_set(err, -EINVAL, "the snapshot's PIT is invalid or refused");
	struct kvm_clock_data clock = { .clock = (uint64_t)json_integer_value(clk) };
	if (ioctl(vm->vm_fd, KVM_SET_CLOCK, &clock))
		return error_set(err, -errno, "KVM refused the kvmclock: %s", strerror(errno));
	return 0;
}

/* ---- the whole state ---- */

/* --testdev's devices keep state a snapshot does not carry (fw_cfg's selector and offset,
 * pc-testdev's scratch register and IRQ line levels, pci-testdev's selected test, BARs and
 * ioeventfds): such a VM is neither saved nor restored. */
#define TESTDEV_REFUSED "--testdev: kvm-unit-tests' test devices (fw_cfg, pc-testdev, pci-testdev, " \
	"the PM timer) are not part of a snapshot: a VM with them is not saved or restored"

json_t *vm_snapshot_state(struct vm *vm, const char *config_json, bool *refused,
			  struct error *err)
{
	*refused = false;
	err->msg[0] = '\0';
	if (vm->cfg.testdev) {
		*refused = true;
		error_set(err, -EOPNOTSUPP, TESTDEV_REFUSED);
		return NULL;
	}
	if (!config_json)
		config_json = "{}";
	json_error_t jerr;
	json_t *root = json_object(), *cfg = json_loads(config_json, 0, &jerr);
	json_t *cpu = cfg ? cpu_save(vm, err) : NULL, *chips = cpu ? chips_save(vm, err) : NULL;
	if (!cfg && !cpu)
		error_set(err, -EINVAL, "the configuration is not JSON: %s", jerr.text);
	json_t *vcpus = json_array(), *devs = json_array(), *regions = json_array();
	int ok = cfg && cpu && chips;
	for (uint32_t i = 0; ok && i < vm->ncpus; i++) {
		json_t *s = vcpu_state_save(vm->kvm_fd, vm->vcpus[i].fd, err);
		ok = s != NULL;
		json_array_append_new(vcpus, s ? s : json_null());
	}
	for (uint32_t i = 0; ok && i < vm->ndevs; i++) {
		if (!vm->devs[i].pci) { /* VFIO: the device's state is in the hardware */
			error_set(err, -EOPNOTSUPP, "%s: a passed-through (VFIO) device cannot be "
				  "saved: its state lives in the host's hardware, which msivm cannot "
				  "read back or restore (as in QEMU, cloud-hypervisor and Firecracker)",
				  vm->devs[i].func->name);
			ok = 0;
			*refused = true;
			break;
		}
		json_t *s = virtio_pci_state_save(vm->devs[i].pci, err);
		ok = s != NULL;
		*refused = !ok;
		if (ok)
			json_array_append_new(devs, json_pack("{s:s,s:o}", "type", vm->devs[i].type->name,
							      "transport", s));
	}
	uint64_t off = 0;
	for (uint32_t r = 0; r < vm->mem.nregions; r++) {
		json_array_append_new(regions, json_pack("{s:I,s:I,s:I}", "gpa",
			(json_int_t)vm->mem.regions[r].gpa, "size", (json_int_t)vm->mem.regions[r].size,
			"offset", (json_int_t)off));
		off += vm->mem.regions[r].size;
	}
	json_object_set_new(root, "format", json_integer(VM_SNAPSHOT_FORMAT));
	json_object_set_new(root, "msivm_version", json_string(MSIVM_VERSION));
	json_object_set_new(root, "taken", json_integer((json_int_t)time(NULL)));
	json_object_set_new(root, "cpu", cpu ? cpu : json_null());
	json_object_set_new(root, "config", cfg ? cfg : json_null());
	uint8_t id[MEM_ID_LEN];
	char idhex[2 * MEM_ID_LEN + 1];
	if (ok && getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
		ok = 0;
		error_set(err, -EIO, "cannot draw the snapshot's id: %s", strerror(errno));
	}
	hex_encode(id, sizeof(id), idhex);
	json_object_set_new(root, "memory", json_pack("{s:I,s:o,s:s}", "size", (json_int_t)vm->mem.size,
						      "regions", regions, "id", idhex));
	json_object_set_new(root, "vm", chips ? chips : json_null());
	json_object_set_new(root, "vcpus", vcpus);
	json_object_set_new(root, "com1", uart8250_save(&vm->com1));
	json_object_set_new(root, "devices", devs);
	if (!ok) {
		json_decref(root);
		if (!err->msg[0])
			error_set(err, -ENOMEM, "out of memory for the state");
		return NULL;
	}
	return root;
}

static int sha256(const void *p, size_t len, uint8_t out[32])
{
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, len, p);
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
	return 0;
}

static int write_all(int fd, const void *p, size_t len, off_t off)
{
	const uint8_t *b = p;
	while (len) {
		ssize_t n = pwrite(fd, b, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		b += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

int vm_snapshot_write(struct vm *vm, const json_t *state, int state_fd, int mem_fd,
		      struct error *err)
{
	char *body = json_dumps(state, JSON_COMPACT | JSON_SORT_KEYS);
	if (!body)
		return error_set(err, -ENOMEM, "out of memory for the state file");
	struct vm_snapshot_header h = { .format = VM_SNAPSHOT_FORMAT, .header_size = sizeof(h),
					.body_len = strlen(body) };
	memcpy(h.magic, VM_SNAPSHOT_MAGIC, 8);
	int ret = sha256(body, h.body_len, h.sha256);
	if (!ret)
		ret = write_all(state_fd, &h, sizeof(h), 0);
	if (!ret)
		ret = write_all(state_fd, body, h.body_len, sizeof(h));
	free(body);
	if (ret)
		return error_set(err, ret, "cannot write the state file: %s", strerror(-ret));
	if (mem_fd < 0 && msync(vm->mem.host, vm->mem.size, MS_SYNC))
		return error_set(err, -errno, "cannot flush the RAM to %s: %s", vm->cfg.mem_file,
				 strerror(errno));
	struct vm_snapshot_mem_trailer t = { .format = VM_SNAPSHOT_FORMAT,
					     .trailer_size = VM_SNAPSHOT_MEM_TRAILER,
					     .ram_size = vm->mem.size };
	memcpy(t.magic, VM_SNAPSHOT_MEM_MAGIC, 8);
	const json_t *id = json_object_get(json_object_get(state, "memory"), "id");
	if (!json_is_string(id) || hex_decode(json_string_value(id), json_string_length(id), t.id,
					      sizeof(t.id)))
		return error_set(err, -EINVAL, "the state has no memory id");
	int fd = mem_fd < 0 ? vm->cfg.mem_fd : mem_fd;
	if (ftruncate(fd, (off_t)(vm->mem.size + VM_SNAPSHOT_MEM_TRAILER)))
		return error_set(err, -errno, "cannot size the memory file: %s", strerror(errno));
	ret = mem_fd < 0 ? 0 : file_write_sparse(mem_fd, vm->mem.host, vm->mem.size, 0);
	if (!ret)
		ret = write_all(fd, &t, sizeof(t), (off_t)vm->mem.size);
	if (ret)
		return error_set(err, ret, "cannot write the memory file: %s", strerror(-ret));
	return 0;
}

/* ---- reading and restoring ---- */

json_t *vm_snapshot_read(const char *path, struct error *err)
{
	struct mapped_file f;
	if (file_map(path, "snapshot state", &f, err))
		return NULL;
	struct vm_snapshot_header h;
	json_t *root = NULL;
	uint8_t sum[32];
	json_error_t jerr;
	if (f.size < sizeof(h)) {
		error_set(err, -EINVAL, "%s is not a snapshot state file (%zu bytes: shorter than its "
			  "header)", path, f.size);
		goto out;
	}
	memcpy(&h, f.data, sizeof(h));
	if (memcmp(h.magic, VM_SNAPSHOT_MAGIC, 8)) {
		error_set(err, -EINVAL, "%s is not a snapshot state file (no %s header)", path,
			  VM_SNAPSHOT_MAGIC);
	} else if (h.format != VM_SNAPSHOT_FORMAT || h.header_size != sizeof(h)) {
		error_set(err, -EINVAL, "%s is a snapshot of format %u; this msivm reads format %u",
			  path, h.format, VM_SNAPSHOT_FORMAT);
	} else if (h.body_len > VM_SNAPSHOT_BODY_MAX || h.body_len != f.size - sizeof(h)) {
		error_set(err, -EINVAL, "%s is truncated or has extra bytes (%zu bytes of state, the "
			  "header says %llu)", path, f.size - sizeof(h),
			  (unsigned long long)h.body_len);
	} else if (sha256(f.data + sizeof(h), h.body_len, sum) || memcmp(sum, h.sha256, 32)) {
		error_set(err, -EINVAL, "%s is corrupted (its SHA-256 does not match its header)",
			  path);
	} else if (!(root = json_loadb((const char *)f.data + sizeof(h), h.body_len, 0, &jerr)) ||
		   !json_is_object(root)) {
		error_set(err, -EINVAL, "%s: the state is not a JSON object (%s)", path, jerr.text);
		json_decref(root);
		root = NULL;
	}
out:
	file_unmap(&f);
	return root;
}

const json_t *vm_snapshot_config(const json_t *root)
{
	const json_t *c = json_object_get(root, "config");
	return json_is_object(c) ? c : NULL;
}

/* The memory file's data (its holes are zeroes the fresh RAM already holds) read into RAM. */
static int memory_copy(struct vm *vm, int fd, struct error *err)
{
	off_t off = 0, size = (off_t)vm->mem.size;
	while (off < size) {
		off_t data = lseek(fd, off, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break; /* only a hole is left */
		off_t hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (data < 0 || hole < 0) /* no SEEK_DATA here: read it all */
			data = off, hole = size;
		hole = hole > size ? size : hole;
		for (off = data; off < hole;) {
			ssize_t n = pread(fd, vm->mem.host + off, (size_t)(hole - off), off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return error_set(err, n < 0 ? -errno : -EIO, "cannot read the memory file: %s",
						 n < 0 ? strerror(errno) : "it ended early");
			off += n;
		}
	}
	return 0;
}

/* That `fd` is the memory file of the state whose memory.id is `id`: its size (the RAM and the
 * trailer) and its trailer's id; a state without an id (taken before the trailer existed) wants
 * the RAM alone. Reads 64 bytes, never the RAM. */
static int memory_bound(const struct vm *vm, const json_t *id, int fd, struct error *err)
{
	struct stat st;
	uint64_t want = vm->mem.size + (id ? VM_SNAPSHOT_MEM_TRAILER : 0);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != want)
		return error_set(err, -EINVAL, "the memory file is %lld bytes, the snapshot's RAM %llu%s",
				 (long long)st.st_size, (unsigned long long)vm->mem.size,
				 id ? " and its 4096-byte trailer: it is not this state file's memory"
				    : "");
	if (!id)
		return 0;
	uint8_t want_id[MEM_ID_LEN];
	struct vm_snapshot_mem_trailer t;
	if (!json_is_string(id) || hex_decode(json_string_value(id), json_string_length(id),
					      want_id, sizeof(want_id)))
		return error_set(err, -EINVAL, "the state's memory id is invalid");
	ssize_t n = pread(fd, &t, sizeof(t), (off_t)vm->mem.size);
	if (n != (ssize_t)sizeof(t) || memcmp(t.magic, VM_SNAPSHOT_MEM_MAGIC, 8) ||
	    t.ram_size != vm->mem.size)
		return error_set(err, -EINVAL, "the memory file has no snapshot trailer (%s): it is "
				 "not this state file's memory", VM_SNAPSHOT_MEM_MAGIC);
	if (memcmp(t.id, want_id, sizeof(want_id))) {
		char got[2 * MEM_ID_LEN + 1];
		hex_encode(t.id, sizeof(t.id), got);
		return error_set(err, -EINVAL, "the memory file belongs to another snapshot (its id %s, "
				 "the state file's %s): give the memory file written with this state "
				 "file", got, json_string_value(id));
	}
	return 0;
}

/* Guest RAM from the memory file: mapped privately over the anonymous RAM vm_create made
 * (nothing has touched it yet), so pages load on first touch and the file is never written;
 * or, with `copy`, read into that RAM (the file can go once the restore is done). */
static int memory_load(struct vm *vm, const json_t *mem, int mem_fd, bool copy, struct error *err)
{
	const json_t *size = json_object_get(mem, "size");
	if (!json_is_integer(size) || (uint64_t)json_integer_value(size) != vm->mem.size)
		return error_set(err, -EINVAL, "the snapshot's RAM is %lld bytes, this VM's %llu",
				 json_is_integer(size) ? (long long)json_integer_value(size) : -1LL,
				 (unsigned long long)vm->mem.size);
	int ret = memory_bound(vm, json_object_get(mem, "id"), mem_fd, err);
	if (ret)
		return ret;
	if (copy)
		return memory_copy(vm, mem_fd, err);
	void *p = mmap(vm->mem.host, vm->mem.size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, mem_fd, 0);
	if (p == MAP_FAILED)
		return error_set(err, -errno, "cannot map the memory file: %s", strerror(errno));
	(void)madvise(p, vm->mem.size, MADV_DONTDUMP);
	return 0;
}

static int shape_check(const struct vm *vm, const json_t *root, struct error *err)
{
	const json_t *vcpus = json_object_get(root, "vcpus"), *devs = json_object_get(root, "devices");
	if (!json_is_array(vcpus) || json_array_size(vcpus) != vm->ncpus)
		return error_set(err, -EINVAL, "the snapshot has %zu vCPUs, this VM %u",
				 json_array_size(vcpus), vm->ncpus);
	if (!json_is_array(devs) || json_array_size(devs) != vm->ndevs)
		return error_set(err, -EINVAL, "the snapshot has %zu devices, this VM %u",
				 json_array_size(devs), vm->ndevs);
	for (uint32_t i = 0; i < vm->ndevs; i++) {
		const char *t = json_string_value(json_object_get(json_array_get(devs, i), "type"));
		if (!t || strcmp(t, vm->devs[i].type->name))
			return error_set(err, -EINVAL, "device %u of the snapshot is %s, this VM's is %s",
					 i, t ? t : "(none)", vm->devs[i].type->name);
	}
	return 0;
}

int vm_snapshot_restore(struct vm *vm, const json_t *root, int mem_fd, bool copy, struct error *err)
{
	int ret;
	if (vm->cfg.testdev)
		return error_set(err, -EOPNOTSUPP, TESTDEV_REFUSED);
	if ((ret = cpu_check(vm, json_object_get(root, "cpu"), err)) ||
	    (ret = shape_check(vm, root, err)) ||
	    (ret = memory_load(vm, json_object_get(root, "memory"), mem_fd, copy, err)) ||
	    (ret = chips_load(vm, json_object_get(root, "vm"), err)))
		return ret;
	const json_t *vcpus = json_object_get(root, "vcpus"), *devs = json_object_get(root, "devices");
	for (uint32_t i = 0; i < vm->ncpus; i++)
		if ((ret = vcpu_state_load(vm->kvm_fd, vm->vcpus[i].fd, json_array_get(vcpus, i), err))) {
			char why[sizeof(err->msg)];
			memcpy(why, err->msg, sizeof(why));
			return error_set(err, ret, "vCPU %u: %s", i, why);
		}
	if (uart8250_load(&vm->com1, json_object_get(root, "com1")))
		return error_set(err, -EINVAL, "the snapshot's COM1 registers are invalid");
	/* Devices last: what they signal lands in the LAPICs just restored. */
	for (uint32_t i = 0; i < vm->ndevs; i++)
		if (!vm->devs[i].pci)
			return error_set(err, -EOPNOTSUPP, "%s: a passed-through (VFIO) device cannot "
					 "be restored", vm->devs[i].func->name);
		else if ((ret = virtio_pci_state_load(vm->devs[i].pci,
				json_object_get(json_array_get(devs, i), "transport"), err)))
			return ret;
	return 0;
}
