/* Work budget: how much guest-requested work one queue handler does per wake-up of the I/O thread. */
#ifndef MSIVM_VIRTIO_BUDGET_H
#define MSIVM_VIRTIO_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/* A guest can post a ring full of chains that each describe gigabytes
 * (indirect tables aliasing the same RAM). A handler stops when either limit
 * is reached and asks the transport to resume the queue on a later loop turn
 * (virtio_pci_queue_resume), so signals, other queues and other devices are
 * served in between. */
#define VBUDGET_CHAINS 64u
#define VBUDGET_BYTES  (1u << 20)

struct vbudget {
	uint32_t chains;
	uint64_t bytes;
};

static inline struct vbudget vbudget_start(uint64_t bytes)
{
	return (struct vbudget){ .chains = VBUDGET_CHAINS, .bytes = bytes };
}

/* True while chains and bytes are both left. */
static inline bool vbudget_left(const struct vbudget *b)
{
	return b->chains && b->bytes;
}

/* Charges one chain that moved `bytes`. */
static inline void vbudget_charge(struct vbudget *b, uint64_t bytes)
{
	if (b->chains)
		b->chains--;
	b->bytes = bytes >= b->bytes ? 0 : b->bytes - bytes;
}

#endif
