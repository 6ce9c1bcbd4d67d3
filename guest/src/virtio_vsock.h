/* guest/src/virtio_vsock.h - virtio-vsock (type 19) stream client and server for the vsock=PORT workload. */
#ifndef PROBE_VIRTIO_VSOCK_H
#define PROBE_VIRTIO_VSOCK_H

#include "exit.h"
#include "pci.h"
#include "virtio_pci.h"

#define VIRTIO_TYPE_VSOCK   19
#define VSOCK_PROBE_PORT    52      /* where the probe listens for the host's CONNECT */
#define VSOCK_SEND_BYTES    65536   /* what it sends the host */

/* True if d is a virtio-vsock PCI function. */
bool virtio_vsock_match(const struct pci_dev *d);

/*
 * Start d (three queues, mode `want`), then: connect to the host (CID 2) at `port`, send
 * VSOCK_SEND_BYTES of a counting pattern in RW packets within the host's credit, shut down and
 * wait for the host's RST; print "probe: vsock sent N bytes to port P fnv=X". Then print
 * "probe: vsock listening 52", answer the host's REQUEST to port 52 with RESPONSE, take its RW
 * packets until it shuts down, RST, and print "probe: vsock received N bytes on port 52
 * fnv=X" (FNV-1a 32 of the bytes). Every wait polls the used rings, 10 s at most. Returns 0 or
 * PROBE_EXIT_VSOCK after "probe: vsock <what failed>".
 */
int virtio_vsock_run(struct pci_dev *d, unsigned long port, enum virtio_irq_mode want);

#endif
