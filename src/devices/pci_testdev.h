/* pci-testdev: QEMU's PCI test device (1b36:0005) for kvm-unit-tests' vmexit pci-mem/pci-io experiments. */
#ifndef MSIVM_DEVICES_PCI_TESTDEV_H
#define MSIVM_DEVICES_PCI_TESTDEV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"
#include "pci/pci_func.h"
#include "util/log.h"

#define PCI_TESTDEV_VENDOR   0x1b36   /* Red Hat */
#define PCI_TESTDEV_DEVICE   0x0005
#define PCI_TESTDEV_MEM_SIZE 4096     /* BAR0: the MMIO tests */
#define PCI_TESTDEV_IO_SIZE  256      /* BAR1: the port I/O tests */
#define PCI_TESTDEV_KINDS    3        /* no-eventfd, wildcard-eventfd, datamatch-eventfd */
#define PCI_TESTDEV_NTESTS   (2 * PCI_TESTDEV_KINDS) /* the kinds on BAR0, then on BAR1 */
#define PCI_TESTDEV_NAME     16       /* the header's name field starts here */
#define PCI_TESTDEV_HDR_MAX  48       /* header + the longest name ("portio-datamatch-eventfd") */

/* One test: the header the guest reads (test, width, offset, data, count of the writes that
 * reached msivm since the test was selected, name), where it writes, and the ioeventfd that takes those writes in the kernel (-1: no-eventfd). */
struct pci_testdev_test {
	uint8_t hdr[PCI_TESTDEV_HDR_MAX];
	uint32_t hdr_len;   /* header + name + NUL */
	uint32_t offset;    /* the write target, inside the test's BAR */
	uint8_t data;       /* the value it counts (datamatch) */
	bool match_data;    /* false: any value (wildcard) */
	uint32_t size;      /* ioeventfd length: 0 any (MMIO wildcard), else 1 */
	int efd;            /* eventfd, -1 for no-eventfd */
};

/* The device: a PCI function with BAR0 (MMIO) and BAR1 (I/O), each a window onto the selected
 * test. `lock` guards the tests and the BAR addresses (taken inside the function's lock when a
 * BAR moves, never the other way round). */
struct pci_testdev {
	pthread_mutex_t lock;
	struct pci_func func;
	struct pci_testdev_test tests[PCI_TESTDEV_NTESTS];
	int current;               /* the selected test, -1: none */
	bool efd_on;               /* the current test's ioeventfd is registered ... */
	uint64_t efd_addr;         /* ... at this guest address */
	uint64_t bar_addr[2];      /* BAR0 / BAR1 while mapped */
	bool bar_mapped[2];
	int vm_fd;                 /* KVM_IOEVENTFD's VM; < 0 (unit tests): none registered */
	uint64_t ignored;          /* writes that matched nothing (logged, rate-limited) */
	uint64_t efd_failures;     /* KVM_IOEVENTFD calls refused (the writes then come here) */
	struct ratelimit rl;
};

/* Sets up `d`: the function (class "other", no interrupt pin), BAR0 on `mmio` inside `window`
 * and BAR1 on `pio` (neither placed nor decoded yet), the six tests and their eventfds.
 * Returns 0 or -errno (nothing left to free). */
int pci_testdev_init(struct pci_testdev *d, int vm_fd, struct bus *mmio, struct bus *pio,
		     struct pci_window window);

/* Unregisters the current ioeventfd, closes the eventfds and releases the function. */
void pci_testdev_destroy(struct pci_testdev *d);

/* Writes that reached msivm for test `t` (< PCI_TESTDEV_NTESTS) since it was last selected. */
uint64_t pci_testdev_count(struct pci_testdev *d, unsigned t);

#endif
