/* Fuzz target: a malicious driver drives virtio-net TX, RX (mergeable buffers) and the control queue over the built-in peer. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/net_backend.h"
#include "devices/virtio_net.h"
#include "fuzz_common.h"

static uint8_t *ram; /* the fixture: guest RAM, zeroed per run */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(FZ_RAM_SIZE);
	return ram ? 0 : -1;
}

/* What the event loop would do: backend timers and frames into RX buffers. */
static void step(void *opaque, uint8_t arg)
{
	virtio_net_poll(opaque);
}

/* Input: see fuzz_ops.h (device targets). Device byte: bits 0-2 queue pairs
 * (1..7), bits 3-4 peer mode (responder, sink, source), bit 5 MTU 68 (else
 * the default 1500), bit 6 MAC given. The peer answers ARP for 10.0.2.2,
 * ICMP echo and UDP port 7: frames the driver sends come back on RX. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct fz_vm vm;
	if (fz_vm_init(&vm, ram, FZ_RAM_SIZE))
		abort();
	struct virtio_pci_config cfg = { .mode = (enum irq_mode)(fz_u8(&in) % 4), .vectors = -1 };
	uint8_t setup = fz_u8(&in);
	uint64_t drop = fz_u64(&in);
	uint8_t dev = fz_u8(&in);
	struct virtio_net_opts o = {
		.be = { .kind = NET_BE_PEER, .nqueues = 1,
			.peer_mode = (enum net_peer_mode)((dev >> 3) % 3u),
			/* a source gives a run a few frames: filling all 256 slots
			 * each run took half of the target's time */
			.rate = 20000, .size = 60 },
		.mac = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0xef },
		.mac_set = dev & 0x40,
		.queues = (uint16_t)(1u + (dev & 7) % VIRTIO_NET_MAX_PAIRS),
		.mtu = dev & 0x20 ? VIRTIO_NET_MTU_MIN : 0,
	};
	struct net_backend *be;
	struct error err;
	if (net_backend_open(&be, &o.be, &err)) {
		fprintf(stderr, "fuzz_virtio_net: %s\n", err.msg);
		abort();
	}
	struct virtio_net *n = calloc(1, sizeof(*n));
	if (!n || virtio_net_init(n, 0, &o, be, &cfg, &vm.gm, -1, &vm.routes, NULL, &vm.mmio,
				  fz_window(), &err)) {
		fprintf(stderr, "fuzz_virtio_net: %s\n", err.msg);
		abort();
	}
	struct fz_drv d = { .step = step, .opaque = n };
	if (fz_drv_attach(&d, &vm, &n->pci))
		abort();
	fz_drv_main(&d, &in, setup, drop, NULL, 0);
	virtio_net_destroy(n);
	free(n);
	fz_vm_destroy(&vm);
	return 0;
}
