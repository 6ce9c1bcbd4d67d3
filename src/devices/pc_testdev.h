/* pc-testdev: QEMU's ISA test device for kvm-unit-tests (scratch ports, page flush, IRQ lines, MMIO scratch). */
#ifndef MSIVM_DEVICES_PC_TESTDEV_H
#define MSIVM_DEVICES_PC_TESTDEV_H

#include <pthread.h>
#include <stdint.h>

#include "bus/bus.h"
#include "core/guest_mem.h"
#include "irq/irq_line.h"

#define PC_TESTDEV_IOPORT      0xe0    /* 4 ports: a 32-bit scratch register, any width */
#define PC_TESTDEV_FLUSH       0xe4    /* 4 ports: a 32-bit write flushes that guest page */
#define PC_TESTDEV_IOPORT_BYTE 0xe8    /* 4 ports: the same register byte by byte */
#define PC_TESTDEV_IRQ         0x2000  /* 24 ports: a byte write sets GSI n's level */
#define PC_TESTDEV_IRQ_LINES   24
#define PC_TESTDEV_IOMEM       0xff000000ULL /* 64 KiB of MMIO scratch */
#define PC_TESTDEV_IOMEM_LEN   0x10000

/* The device. `lock` guards the scratch state (every vCPU may use it at once). */
struct pc_testdev {
	pthread_mutex_t lock;
	uint32_t ioport_data;
	uint8_t iomem[PC_TESTDEV_IOMEM_LEN];
	const struct guest_mem *mem;   /* for the page flush */
	/* Sets GSI n's level (KVM_IRQ_LINE); opaque is irq.opaque, the gsi the line number. */
	struct irq_line irq;
	uint64_t flushes;              /* pages flushed */
	uint64_t bad;                  /* accesses refused (logged, rate-limited) */
	struct ratelimit rl;
};

/* Sets up `d` over guest RAM `mem`, raising lines through `irq` (its gsi is ignored: a write
 * to port 0x2000+n drives GSI n). Returns 0 or -errno. */
int pc_testdev_init(struct pc_testdev *d, const struct guest_mem *mem, struct irq_line irq);
void pc_testdev_destroy(struct pc_testdev *d);

/* Scratch ports 0xe0 and 0xe8: bytes [offset, offset+len) of the register. */
extern const struct bus_ops pc_testdev_ioport_ops;
/* Port 0xe4: a 4-byte write of a guest physical address makes the host mapping of its page
 * read-only and writable again, which makes KVM drop its own mapping of it (the guest's next
 * access faults into KVM); an address outside RAM or another width is refused and logged. */
extern const struct bus_ops pc_testdev_flush_ops;
/* Ports 0x2000-0x2017: a byte write to 0x2000+n sets line n to (value != 0); a wider write sets
 * one line per byte (QEMU's split of a wide access); reads give 0. */
extern const struct bus_ops pc_testdev_irq_ops;
/* The 64 KiB MMIO scratch: reads return what was written, little-endian. */
extern const struct bus_ops pc_testdev_iomem_ops;

#endif
