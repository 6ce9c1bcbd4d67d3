/* Unit tests for pci-testdev (QEMU's 1b36:0005): config space and BARs on a host bridge, the six
 * test headers, write counting, hostile accesses, and its ioeventfds on a real KVM VM. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "devices/pci_testdev.h"
#include "fake_vm.h"
#include "pci/pci_host.h"

#define MEMBAR 0xC0000000ull
#define IOBAR  0xC000u

struct fx {
	struct fake_vm *vm;
	struct pci_host host;
	struct pci_testdev d;
	int kvm, vm_fd;
	bool dev_up;
};

/* The device on a host bridge, BARs placed and decoding as vm_testdev_attach_pci leaves them;
 * `vm_fd` < 0: no KVM. */
static void up(struct fx *x, int vm_fd)
{
	assert_int_equal(pci_testdev_init(&x->d, vm_fd, &x->vm->mmio, &x->vm->pio, fake_window()), 0);
	x->dev_up = true;
	assert_int_equal(pci_host_add(&x->host, &x->d.func), 1);
	pci_func_set_bar_addr(&x->d.func, 0, MEMBAR);
	pci_func_set_bar_addr(&x->d.func, 1, IOBAR);
	pci_func_cfg_write(&x->d.func, PCI_COMMAND, 2, PCI_CMD_IO | PCI_CMD_MEMORY);
	assert_true(x->d.func.bars[0].mapped && x->d.func.bars[1].mapped);
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	x->vm = fake_vm_new();
	assert_non_null(x->vm);
	assert_int_equal(pci_host_init(&x->host, &x->vm->pio, &x->vm->mmio, FAKE_ECAM_BASE,
				       fake_window()), 0);
	x->kvm = x->vm_fd = -1;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	pci_host_destroy(&x->host, &x->vm->pio, &x->vm->mmio);
	if (x->dev_up)
		pci_testdev_destroy(&x->d);
	if (x->vm_fd >= 0)
		close(x->vm_fd);
	if (x->kvm >= 0)
		close(x->kvm);
	fake_vm_free(x->vm);
	free(x);
	return 0;
}

static uint32_t cfg(struct fx *x, uint32_t reg, uint32_t len)
{
	uint32_t a = 0x80000000u | 8u << 8 | reg, v = 0;
	assert_int_equal(bus_write(&x->vm->pio, 0xcf8, &a, 4), 0);
	assert_int_equal(bus_read(&x->vm->pio, 0xcfc, &v, len), 0);
	return v;
}

/* An access to BAR0 (io false) or BAR1 (io true) at `off`. */
static void bw(struct fx *x, bool io, uint32_t off, uint64_t v, uint32_t len)
{
	struct bus *b = io ? &x->vm->pio : &x->vm->mmio;
	assert_int_equal(bus_write(b, (io ? IOBAR : MEMBAR) + off, &v, len), 0);
}

static uint64_t br(struct fx *x, bool io, uint32_t off, uint32_t len)
{
	uint64_t v = 0;
	struct bus *b = io ? &x->vm->pio : &x->vm->mmio;
	assert_int_equal(bus_read(b, (io ? IOBAR : MEMBAR) + off, &v, len), 0);
	return v;
}

static void name_of(struct fx *x, bool io, char *out, size_t n)
{
	size_t i = 0;
	for (; i + 1 < n; i++)
		if (!(out[i] = (char)br(x, io, PCI_TESTDEV_NAME + (uint32_t)i, 1)))
			break;
	out[i] = 0;
}

static void test_config_space(void **state)
{
	struct fx *x = *state;
	up(x, -1);
	/* kvm-unit-tests reads the device id with CF8 = ...|2 and a 16-bit read at CFC. */
	assert_int_equal(cfg(x, PCI_VENDOR_ID, 2), PCI_TESTDEV_VENDOR);
	assert_int_equal(cfg(x, PCI_DEVICE_ID, 2), PCI_TESTDEV_DEVICE);
	assert_int_equal(cfg(x, PCI_REVISION, 4), 0xff000000u); /* revision 0, class 0xff */
	assert_int_equal(cfg(x, PCI_INT_PIN, 1), 0);
	assert_int_equal(cfg(x, PCI_BAR0, 4), (uint32_t)MEMBAR);          /* 32-bit memory */
	assert_int_equal(cfg(x, PCI_BAR0 + 4, 4), IOBAR | PCI_BAR_IO);   /* I/O */
	assert_int_equal(cfg(x, PCI_BAR0 + 8, 4), 0);                     /* no BAR2 */
}

/* The six tests as QEMU builds them, read through either BAR; selecting goes by the BAR. */
static void test_headers(void **state)
{
	struct fx *x = *state;
	up(x, -1);
	static const char *const names[] = {
		"mmio-no-eventfd", "mmio-wildcard-eventfd", "mmio-datamatch-eventfd",
		"portio-no-eventfd", "portio-wildcard-eventfd", "portio-datamatch-eventfd",
	};
	for (unsigned t = 0; t < PCI_TESTDEV_NTESTS; t++) {
		bool io = t >= 3;
		bw(x, io, 0, t % 3, 1);
		assert_int_equal(br(x, !io, 0, 1), t);        /* the header's test field */
		assert_int_equal(br(x, io, 1, 1), 1);         /* width */
		assert_int_equal(br(x, io, 4, 4), (io ? 128 : 2048) + t);
		assert_int_equal(br(x, io, 8, 4), t % 3 == 1 ? 0xce : 0xfa);
		assert_int_equal(br(x, io, 12, 4), 0);        /* count */
		char name[40];
		name_of(x, io, name, sizeof(name));
		assert_string_equal(name, names[t]);
	}
}

static void test_counting(void **state)
{
	struct fx *x = *state;
	up(x, -1);
	/* no-eventfd (datamatch 0xfa, as QEMU): only 0xfa at the offset counts, byte by byte. */
	bw(x, false, 0, 0, 4);      /* a 32-bit select: byte 0 selects, bytes 1-3 ignored */
	for (int i = 0; i < 16; i++)
		bw(x, false, 2048, 0xfa, 1);
	bw(x, false, 2048, 0xfb, 1);                 /* other data */
	bw(x, false, 2049, 0xfa, 1);                 /* other offset */
	bw(x, false, 2047, 0xfa00, 2);               /* wide: its second byte is at the offset */
	bw(x, false, 2048, 0xfafafafa, 4);           /* wide: only the first byte is */
	assert_int_equal(br(x, false, 12, 4), 18);
	assert_int_equal(pci_testdev_count(&x->d, 0), 18);
	/* wildcard: any value; no KVM here, so the writes come to msivm and count. */
	bw(x, false, 0, 1, 1);
	bw(x, false, 2049, 0x00, 1);
	bw(x, false, 2049, 0x77, 1);
	assert_int_equal(br(x, false, 12, 4), 2);
	/* portio-datamatch */
	bw(x, true, 0, 2, 1);
	bw(x, true, 133, 0xfa, 1);
	bw(x, true, 133, 0xce, 1);
	assert_int_equal(br(x, true, 12, 4), 1);
	/* Selecting again starts from 0. */
	bw(x, true, 0, 2, 1);
	assert_int_equal(br(x, true, 12, 4), 0);
	assert_int_equal(pci_testdev_count(&x->d, 99), 0);
}

/* What a hostile guest can do: no crash, nothing selected by nonsense, reads bounded. */
static void test_hostile(void **state)
{
	struct fx *x = *state;
	up(x, -1);
	/* Nothing selected: reads 0, writes ignored (and counted as such). */
	assert_int_equal(br(x, false, 0, 8), 0);
	uint64_t before = x->d.ignored;
	bw(x, false, 2048, 0xfa, 1);
	bw(x, true, 255, ~0ull, 1);
	assert_int_equal(x->d.ignored, before + 2);
	/* Out-of-range selectors (3 is the next BAR's first, 0xff) select nothing. */
	bw(x, false, 0, 1, 1);
	bw(x, false, 0, 3, 1);
	assert_int_equal(x->d.current, -1);
	bw(x, true, 0, 0xff, 1);
	assert_int_equal(x->d.current, -1);
	assert_int_equal(br(x, true, 16, 4), 0);
	/* Reads past the header (and its last byte, the NUL) give 0, at every width and offset. */
	bw(x, true, 0, 0, 1);
	for (uint32_t off = 0; off + 8 <= PCI_TESTDEV_IO_SIZE; off += 3)
		(void)br(x, true, off, 8);
	assert_int_equal(br(x, true, 16 + 17, 8), 0); /* "portio-no-eventfd" is 17 bytes */
	assert_int_equal(br(x, false, PCI_TESTDEV_MEM_SIZE - 8, 8), 0);
	/* 8-byte writes everywhere in both BARs. */
	for (uint32_t off = 0; off + 8 <= PCI_TESTDEV_MEM_SIZE; off += 7)
		bw(x, false, off, 0xfafafafafafafafaull, 8);
	for (uint32_t off = 0; off + 8 <= PCI_TESTDEV_IO_SIZE; off += 5)
		bw(x, true, off, ~0ull, 8);
}

/* The I/O BAR follows the guest's placement inside the 64 KiB port space, never over another
 * range; the memory BAR stays in the window. */
static void test_bar_placement(void **state)
{
	struct fx *x = *state;
	up(x, -1);
	uint32_t a = 0x80000000u | 8u << 8 | (PCI_BAR0 + 4);
	/* Sizing: all ones reads back the size mask with the I/O bit. */
	assert_int_equal(bus_write(&x->vm->pio, 0xcf8, &a, 4), 0);
	uint32_t v = ~0u;
	assert_int_equal(bus_write(&x->vm->pio, 0xcfc, &v, 4), 0);
	assert_int_equal(cfg(x, PCI_BAR0 + 4, 4), 0xffffff01u);
	assert_false(x->d.func.bars[1].mapped);
	/* Over the PCI config ports: refused. Past 64 KiB, or at 0: refused. */
	static const uint32_t bad[] = { 0xcf8 & ~0xffu, 0x10000, 0xffffff00u, 0 };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pci_func_cfg_write(&x->d.func, PCI_BAR0 + 4, 4, bad[i]);
		assert_false(x->d.func.bars[1].mapped);
	}
	/* A good place maps it, and the guest's accesses follow. */
	pci_func_cfg_write(&x->d.func, PCI_BAR0 + 4, 4, 0xd000);
	assert_true(x->d.func.bars[1].mapped);
	assert_int_equal(x->d.bar_addr[1], 0xd000);
	/* I/O decode off unmaps only the I/O BAR. */
	pci_func_cfg_write(&x->d.func, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	assert_false(x->d.func.bars[1].mapped);
	assert_false(x->d.bar_mapped[1]);
	assert_true(x->d.func.bars[0].mapped);
	/* The memory BAR outside the window: refused. */
	pci_func_cfg_write(&x->d.func, PCI_BAR0, 4, 0x1000);
	assert_false(x->d.func.bars[0].mapped);
}

/* With a KVM VM: the current test's ioeventfd is registered where the BAR is and follows it. */
static bool kvm_vm(struct fx *x)
{
	x->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (x->kvm < 0)
		return false;
	x->vm_fd = ioctl(x->kvm, KVM_CREATE_VM, 0);
	return x->vm_fd >= 0;
}

/* Whether test `t`'s ioeventfd is registered at `addr`: assigning it again says EEXIST. */
static bool registered(struct fx *x, unsigned t, uint64_t addr)
{
	const struct pci_testdev_test *tt = &x->d.tests[t];
	struct kvm_ioeventfd io = {
		.addr = addr, .len = tt->size, .fd = tt->efd, .datamatch = tt->data,
		.flags = (t >= 3 ? KVM_IOEVENTFD_FLAG_PIO : 0) |
			 (tt->match_data ? KVM_IOEVENTFD_FLAG_DATAMATCH : 0),
	};
	if (ioctl(x->vm_fd, KVM_IOEVENTFD, &io) == 0) {
		io.flags |= KVM_IOEVENTFD_FLAG_DEASSIGN;
		assert_int_equal(ioctl(x->vm_fd, KVM_IOEVENTFD, &io), 0);
		return false;
	}
	return errno == EEXIST;
}

static void test_ioeventfd(void **state)
{
	struct fx *x = *state;
	if (!kvm_vm(x))
		skip();
	up(x, x->vm_fd);
	bw(x, false, 0, 1, 1); /* mmio-wildcard: any length at BAR0 + 2049 */
	assert_true(x->d.efd_on);
	assert_true(registered(x, 1, MEMBAR + 2049));
	bw(x, false, 0, 2, 1); /* mmio-datamatch: the wildcard one is gone */
	assert_false(registered(x, 1, MEMBAR + 2049));
	assert_true(registered(x, 2, MEMBAR + 2050));
	bw(x, true, 0, 2, 1);  /* portio-datamatch at BAR1 + 133 */
	assert_false(registered(x, 2, MEMBAR + 2050));
	assert_true(registered(x, 5, IOBAR + 133));
	/* The BAR moves: the ioeventfd follows; decode off: it goes. */
	pci_func_cfg_write(&x->d.func, PCI_BAR0 + 4, 4, 0xd000);
	assert_false(registered(x, 5, IOBAR + 133));
	assert_true(registered(x, 5, 0xd000 + 133));
	pci_func_cfg_write(&x->d.func, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	assert_false(x->d.efd_on);
	assert_false(registered(x, 5, 0xd000 + 133));
	pci_func_cfg_write(&x->d.func, PCI_COMMAND, 2, PCI_CMD_MEMORY | PCI_CMD_IO);
	assert_true(registered(x, 5, 0xd000 + 133));
	pci_func_cfg_write(&x->d.func, PCI_BAR0 + 4, 4, IOBAR);
	assert_true(registered(x, 5, IOBAR + 133));
	/* no-eventfd has none; a bad selector removes the current one. */
	bw(x, true, 0, 0, 1);
	assert_false(x->d.efd_on);
	assert_false(registered(x, 5, IOBAR + 133));
	bw(x, true, 0, 1, 1);
	assert_true(registered(x, 4, IOBAR + 132));
	bw(x, true, 0, 9, 1);
	assert_false(registered(x, 4, IOBAR + 132));
	assert_int_equal(x->d.efd_failures, 0);
	bw(x, false, 0, 2, 1); /* left registered: destroy removes it (teardown) */
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_config_space), T(test_headers), T(test_counting), T(test_hostile),
		T(test_bar_placement), T(test_ioeventfd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
