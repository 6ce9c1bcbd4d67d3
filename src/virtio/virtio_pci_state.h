/* Virtio-pci transport state for snapshots: config space, MSI-X/MSI, common registers, queue indices <-> JSON. */
#ifndef MSIVM_VIRTIO_VIRTIO_PCI_STATE_H
#define MSIVM_VIRTIO_VIRTIO_PCI_STATE_H

#include <jansson.h>

#include "virtio/virtio_pci.h"

/* Snapshot, I/O thread with the vCPUs stopped: the device finishes what its backend has in
 * flight, and notifications held by coalesce= go out now (into the stopped vCPUs' LAPICs, which
 * the snapshot saves after this). Takes the transport lock. */
void virtio_pci_quiesce(struct virtio_pci *t);

/* The transport's state (PCI config space, MSI-X table and pending bits, common registers,
 * ISR, each queue's addresses and indices) and the device's own (its `save` hook) as a JSON
 * object. Call on a quiesced transport. Returns NULL with a message when the device cannot be
 * saved. Takes the transport lock. */
json_t *virtio_pci_state_save(struct virtio_pci *t, struct error *err);

/* Puts a saved state into a transport that was just created with the same configuration,
 * before the guest runs and after its vCPUs' LAPICs are restored: it replays what the driver
 * wrote through the guest-facing register handlers (so every value passes the checks a
 * driver's writes do), sets the queue indices, the device's own state, then DRIVER_OK;
 * pending MSI-X/MSI bits are signalled again (pending while masked, delivered if not) and an
 * INTx cause still in ISR raises the line. Returns 0 or -EINVAL with a message naming the
 * field; the transport may then be half set up (the caller destroys the VM). */
int virtio_pci_state_load(struct virtio_pci *t, const json_t *state, struct error *err);

#endif
