/* ACPI PM timer (--testdev): the 24-bit, 3.579545 MHz free-running counter that QEMU's PIIX4 has at port 0x608. */
#ifndef MSIVM_DEVICES_PM_TIMER_H
#define MSIVM_DEVICES_PM_TIMER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "bus/bus.h"
#include "util/log.h"

#define PM_TIMER_PORT 0x608       /* QEMU's (PIIX4 PM base 0x600 + 8); beside ACPI_PM_PORT's three */
#define PM_TIMER_SIZE 4
#define PM_TIMER_HZ   3579545ull
#define PM_TIMER_MASK 0xffffffu   /* 24 bits: the FADT does not set TMR_VAL_EXT */

/* The timer counts from `origin_ns` (CLOCK_MONOTONIC); `now_ns` overrides the clock (tests). */
struct pm_timer {
	uint64_t origin_ns;
	uint64_t (*now_ns)(void);
	_Atomic uint64_t ignored;  /* writes (the register is read-only) */
	pthread_mutex_t rl_lock;   /* guards rl (every vCPU may write) */
	struct ratelimit rl;
};

/* Sets up `t` counting from `origin_ns`, reading `now_ns` (NULL: CLOCK_MONOTONIC).
 * Returns 0 or -errno. */
int pm_timer_init(struct pm_timer *t, uint64_t origin_ns, uint64_t (*now_ns)(void));
void pm_timer_destroy(struct pm_timer *t);

/* The counter's value at `ns` past the origin, masked to 24 bits. */
uint32_t pm_timer_ticks(uint64_t ns);

/* Port PM_TIMER_PORT: a read of any width at any of the 4 ports gives those bytes of the
 * little-endian 32-bit register (the counter in bits 0-23); writes are dropped, counted in
 * `ignored` and logged (rate-limited). */
extern const struct bus_ops pm_timer_ops;

#endif
