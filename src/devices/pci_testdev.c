/* pci-testdev: BAR accesses -> the selected test's header, write counting, and the KVM ioeventfd that takes its writes in the kernel. */
#include "devices/pci_testdev.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kvm.h>

/* QEMU's layout (hw/misc/pci-testdev.c): header fields and where each BAR's tests write. */
#define HDR_TEST      0
#define HDR_WIDTH     1
#define HDR_OFFSET    4
#define HDR_DATA      8
#define HDR_COUNT     12
#define MEM_TESTS_AT  2048
#define IO_TESTS_AT   128
#define DATA_MATCH    0xfa
#define DATA_NOMATCH  0xce
#define KIND_NONE     0
#define KIND_WILDCARD 1

static const char *const kind_names[PCI_TESTDEV_KINDS] = {
	"no-eventfd", "wildcard-eventfd", "datamatch-eventfd",
};

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static bool test_is_io(unsigned t)
{
	return t >= PCI_TESTDEV_KINDS;
}

/* Registers or removes the current test's ioeventfd at its BAR's address (lock held). */
static void set_efd(struct pci_testdev *d, bool on)
{
	if (d->current < 0 || on == d->efd_on)
		return;
	struct pci_testdev_test *t = &d->tests[d->current];
	unsigned bar = test_is_io((unsigned)d->current);
	if (t->efd < 0 || (on && !d->bar_mapped[bar]))
		return;
	uint64_t addr = on ? d->bar_addr[bar] + t->offset : d->efd_addr;
	struct kvm_ioeventfd io = {
		.addr = addr, .len = t->size, .fd = t->efd, .datamatch = t->data,
		.flags = (bar ? KVM_IOEVENTFD_FLAG_PIO : 0) |
			 (t->match_data ? KVM_IOEVENTFD_FLAG_DATAMATCH : 0) |
			 (on ? 0 : KVM_IOEVENTFD_FLAG_DEASSIGN),
	};
	if (d->vm_fd >= 0 && ioctl(d->vm_fd, KVM_IOEVENTFD, &io)) {
		d->efd_failures++;
		log_ratelimited(&d->rl, LOG_WARN, "pci-testdev: KVM_IOEVENTFD %s at 0x%" PRIx64
				" failed: %s (its writes come to msivm)", on ? "assign" : "deassign",
				addr, strerror(errno));
		if (on)
			return;
	}
	d->efd_on = on && d->vm_fd >= 0;
	d->efd_addr = addr;
}

/* A byte at offset 0 of BAR `bar`: ends the current test and starts test `val` of that BAR's
 * three, if there is one (QEMU's reset + start; lock held). */
static void select_test(struct pci_testdev *d, unsigned bar, uint8_t val)
{
	set_efd(d, false);
	d->current = -1;
	if (val >= PCI_TESTDEV_KINDS)
		return;
	unsigned n = bar * PCI_TESTDEV_KINDS + val;
	struct pci_testdev_test *t = &d->tests[n];
	put32(&t->hdr[HDR_COUNT], 0);
	uint64_t stale;
	if (t->efd >= 0 && read(t->efd, &stale, sizeof(stale)) < 0 && errno != EAGAIN)
		log_ratelimited(&d->rl, LOG_WARN, "pci-testdev: draining test %u's eventfd: %s", n,
				strerror(errno));
	d->current = (int)n;
	set_efd(d, true);
}

/* Guest write of `len` bytes at `offset` of BAR `bar`, byte by byte as QEMU splits it: offset 0
 * selects a test, a byte at the current test's offset with its data (any, for wildcard) counts. */
static void bar_write(struct pci_testdev *d, unsigned bar, uint64_t offset, const void *data,
		      uint32_t len)
{
	const uint8_t *b = data;
	bool used = false;
	pthread_mutex_lock(&d->lock);
	for (uint32_t i = 0; i < len; i++) {
		uint64_t at = offset + i;
		if (at == HDR_TEST) {
			select_test(d, bar, b[i]);
			used = true;
			continue;
		}
		if (d->current < 0)
			continue;
		struct pci_testdev_test *t = &d->tests[d->current];
		if (at != t->offset || (t->match_data && b[i] != t->data))
			continue;
		put32(&t->hdr[HDR_COUNT], get32(&t->hdr[HDR_COUNT]) + 1);
		used = true;
	}
	if (!used) {
		d->ignored++;
		log_ratelimited(&d->rl, LOG_INFO, "pci-testdev: %u-byte write at BAR%u+0x%" PRIx64
				" matches no register of the selected test (%s); ignored", len, bar,
				offset, d->current < 0 ? "none" : (const char *)
				&d->tests[d->current].hdr[PCI_TESTDEV_NAME]);
	}
	pthread_mutex_unlock(&d->lock);
}

/* Guest read: the selected test's header byte by byte, 0 past it or with no test selected. */
static void bar_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	struct pci_testdev *d = opaque;
	uint8_t *out = data;
	pthread_mutex_lock(&d->lock);
	const struct pci_testdev_test *t = d->current < 0 ? NULL : &d->tests[d->current];
	for (uint32_t i = 0; i < len; i++) {
		uint64_t at = offset + i;
		out[i] = t && at + 1 < t->hdr_len ? t->hdr[at] : 0;
	}
	pthread_mutex_unlock(&d->lock);
}

static void mem_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	bar_write(opaque, 0, offset, data, len);
}

static void io_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	bar_write(opaque, 1, offset, data, len);
}

static const struct bus_ops mem_ops = { .read = bar_read, .write = mem_write };
static const struct bus_ops io_ops = { .read = bar_read, .write = io_write };

/* A BAR was mapped or unmapped (the function's lock held): the current test's ioeventfd follows. */
static void bar_moved(void *opaque, unsigned idx, bool mapped, uint64_t addr)
{
	struct pci_testdev *d = opaque;
	if (idx > 1)
		return;
	pthread_mutex_lock(&d->lock);
	bool ours = d->current >= 0 && test_is_io((unsigned)d->current) == (idx == 1);
	if (ours)
		set_efd(d, false);
	d->bar_mapped[idx] = mapped;
	d->bar_addr[idx] = addr;
	if (ours)
		set_efd(d, true);
	pthread_mutex_unlock(&d->lock);
}

static const struct pci_func_ops func_ops = { .bar_moved = bar_moved };

static void close_efds(struct pci_testdev *d)
{
	for (unsigned i = 0; i < PCI_TESTDEV_NTESTS; i++)
		if (d->tests[i].efd >= 0)
			close(d->tests[i].efd);
}

/* Test `i`'s fixed header and write target, as QEMU builds them. Returns 0 or -errno. */
static int init_test(struct pci_testdev_test *t, unsigned i)
{
	unsigned kind = i % PCI_TESTDEV_KINDS;
	bool io = test_is_io(i);
	int n = snprintf((char *)&t->hdr[PCI_TESTDEV_NAME], PCI_TESTDEV_HDR_MAX - PCI_TESTDEV_NAME,
			 "%s-%s", io ? "portio" : "mmio", kind_names[kind]);
	t->hdr_len = PCI_TESTDEV_NAME + (uint32_t)n + 1;
	t->offset = (io ? IO_TESTS_AT : MEM_TESTS_AT) + i;
	t->match_data = kind != KIND_WILDCARD;
	t->data = t->match_data ? DATA_MATCH : DATA_NOMATCH;
	t->size = !io && !t->match_data ? 0 : 1; /* an MMIO wildcard takes any length */
	t->hdr[HDR_TEST] = (uint8_t)i;
	t->hdr[HDR_WIDTH] = 1;
	put32(&t->hdr[HDR_OFFSET], t->offset);
	t->hdr[HDR_DATA] = t->data;
	if (kind == KIND_NONE)
		return 0;
	t->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return t->efd < 0 ? -errno : 0;
}

int pci_testdev_init(struct pci_testdev *d, int vm_fd, struct bus *mmio, struct bus *pio,
		     struct pci_window window)
{
	memset(d, 0, sizeof(*d));
	d->current = -1;
	d->vm_fd = vm_fd;
	for (unsigned i = 0; i < PCI_TESTDEV_NTESTS; i++)
		d->tests[i].efd = -1;
	int ret = 0;
	for (unsigned i = 0; i < PCI_TESTDEV_NTESTS && !ret; i++)
		ret = init_test(&d->tests[i], i);
	if (ret || (ret = -pthread_mutex_init(&d->lock, NULL))) {
		close_efds(d);
		return ret;
	}
	/* Class 0xff ("other"), revision 0, no interrupt pin, QEMU's default subsystem ids. */
	if ((ret = pci_func_init(&d->func, "pci-testdev", PCI_TESTDEV_VENDOR, PCI_TESTDEV_DEVICE,
				 0xff0000, 0x1af4, 0x1100, mmio, window))) {
		pthread_mutex_destroy(&d->lock);
		close_efds(d);
		return ret;
	}
	d->func.cfg[PCI_REVISION] = 0;
	d->func.cfg[PCI_INT_PIN] = 0;
	d->func.ops = &func_ops;
	d->func.opaque = d;
	if ((ret = pci_func_add_bar(&d->func, 0, PCI_TESTDEV_MEM_SIZE, false, &mem_ops, d,
				    "pci-testdev-mmio")) ||
	    (ret = pci_func_add_io_bar(&d->func, 1, PCI_TESTDEV_IO_SIZE, pio, &io_ops, d,
				       "pci-testdev-portio"))) {
		pci_testdev_destroy(d);
		return ret;
	}
	return 0;
}

void pci_testdev_destroy(struct pci_testdev *d)
{
	pthread_mutex_lock(&d->lock);
	set_efd(d, false);
	d->current = -1;
	pthread_mutex_unlock(&d->lock);
	pci_func_destroy(&d->func);
	close_efds(d);
	pthread_mutex_destroy(&d->lock);
}

uint64_t pci_testdev_count(struct pci_testdev *d, unsigned t)
{
	if (t >= PCI_TESTDEV_NTESTS)
		return 0;
	pthread_mutex_lock(&d->lock);
	uint32_t n = get32(&d->tests[t].hdr[HDR_COUNT]);
	pthread_mutex_unlock(&d->lock);
	return n;
}
