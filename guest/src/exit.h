/* guest/src/exit.h - terminate the probe via the isa-debug-exit port. */
#ifndef PROBE_EXIT_H
#define PROBE_EXIT_H

#include <stdint.h>

#define DEBUG_EXIT_PORT 0xf4

/* Exit codes used by the probe itself (besides the exit=N value); each
 * failure has its own code (guest/README.md lists them). */
#define PROBE_EXIT_BAD_ARG      2   /* bad exit=, rng=, irq= or blk* value */
#define PROBE_EXIT_BAD_MAGIC    3   /* start_info magic wrong */
#define PROBE_EXIT_EXCEPTION    4   /* CPU exception (vector 0..31) */
#define PROBE_EXIT_IRQ_MODE     5   /* forced irq= mode unavailable */
#define PROBE_EXIT_RNG_TIMEOUT  6   /* virtio-rng request never completed */
#define PROBE_EXIT_RNG_DATA     7   /* virtio-rng data check failed */
#define PROBE_EXIT_VIRTIO       8   /* virtio device initialisation failed */
#define PROBE_EXIT_IRQ_CHECK    9   /* interrupt accounting check failed */
#define PROBE_EXIT_LAPIC        10  /* LAPIC not usable in xAPIC mode */
#define PROBE_EXIT_BLK_VERIFY   11  /* blk=verify read back different data */
#define PROBE_EXIT_BLK_RO       12  /* blk=rotest: the write did not fail with IOERR */
#define PROBE_EXIT_BLK_IOERR    13  /* a blk request completed with a non-OK status */
#define PROBE_EXIT_NO_BLK       14  /* blk= given but no usable virtio-blk device */
#define PROBE_EXIT_BLK_TIMEOUT  15  /* a virtio-blk request never completed */
#define PROBE_EXIT_NO_NET       16  /* net= given but no usable virtio-net device */
#define PROBE_EXIT_ARP_TIMEOUT  17  /* the peer's MAC (ARP) could not be resolved */
#define PROBE_EXIT_ECHO_MISSING 18  /* an ICMP/UDP echo reply did not arrive */
#define PROBE_EXIT_ECHO_WRONG   19  /* an echo reply with a wrong id/seq/payload */
#define PROBE_EXIT_NET_TX       20  /* a virtio-net transmit never completed */
#define PROBE_EXIT_NO_RNG       21  /* lat= given but no usable virtio-rng device */
#define PROBE_EXIT_SMP          22  /* smp: fewer CPUs answered than expected, or no trampoline page */
#define PROBE_EXIT_POWER        23  /* power=: the power-off or reset request had no effect */
#define PROBE_EXIT_NO_FLOOD     24  /* flood= names a device type with no usable unclaimed function */
#define PROBE_EXIT_INTX_LOST    25  /* intxstress: a completed request's INTx interrupt never came */
#define PROBE_EXIT_VSOCK        26  /* vsock=: a stream to or from the host failed */

/*
 * outb(code, DEBUG_EXIT_PORT). If that returns (no debug-exit device), print
 * "probe: no debug-exit device, halting" and halt forever with IF=0.
 */
__attribute__((noreturn)) void probe_exit(uint8_t code);

#endif
