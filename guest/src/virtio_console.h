/* guest/src/virtio_console.h - virtio-console (virtio type 3) output driver: a line-buffered mirror of the probe's console. */
#ifndef PROBE_VIRTIO_CONSOLE_H
#define PROBE_VIRTIO_CONSOLE_H

#include <stdbool.h>

#include "pci.h"
#include "virtio_pci.h"

#define VIRTIO_TYPE_CONSOLE 3
#define VCON_LINE_MAX       256     /* bytes per transmit chain (one line, or a 256-byte piece) */

/* True if d is a virtio-console PCI function (modern 0x1043 or transitional). */
bool virtio_console_match(const struct pci_dev *d);

/*
 * Start d (needs lapic_init()) with receiveq0 and transmitq0, VERSION_1 only
 * (no MULTIPORT, SIZE or EMERG_WRITE), in irq mode `want` (see
 * virtio_pci_start), post 4 small receive buffers (read only by
 * virtio_console_input),
 * enable interrupts (IF=1, as after any device wait), send the banner line
 * "msivm-probe v0: cmdline=\"<cmdline>\"" through the virtio console only,
 * and from then on mirror all console output to it (console_set_mirror).
 * Prints "probe: virtio-console <bdf> ready" (on both). A failed start
 * prints virtio_pci's reason and "probe: virtio-console <bdf> unusable",
 * and the probe carries on with the UART alone. No exit status.
 */
void virtio_console_start(struct pci_dev *d, enum virtio_irq_mode want, const char *cmdline);

/*
 * `conin[=MS]`: take what the host puts in the receive buffers for `ms`
 * milliseconds (TSC), or, with `until_first`, until the first bytes came
 * (then 50 ms more for the rest) or `ms` passed; then print "probe: console
 * input N bytes" (N is 0 if nothing came). Buffers are not posted again.
 * Does nothing if the console is not running.
 */
void virtio_console_input(unsigned int ms, bool until_first);

#define CONIN_DEFAULT_MS 300
#define CONIN_MAX_MS     10000

/* The `conin` token: ms 0 if absent. */
struct conin_args {
    unsigned int ms;
    bool until_first;
};

#endif
