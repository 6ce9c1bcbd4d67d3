/* ACPI PM timer: a guest read -> the monotonic clock scaled to 3.579545 MHz, 24 bits. */
#include "devices/pm_timer.h"

#include <inttypes.h>
#include <string.h>

#include "util/clock.h"

int pm_timer_init(struct pm_timer *t, uint64_t origin_ns, uint64_t (*now_ns)(void))
{
	memset(t, 0, sizeof(*t));
	t->origin_ns = origin_ns;
	t->now_ns = now_ns;
	return -pthread_mutex_init(&t->rl_lock, NULL);
}

void pm_timer_destroy(struct pm_timer *t)
{
	pthread_mutex_destroy(&t->rl_lock);
}

uint32_t pm_timer_ticks(uint64_t ns)
{
	/* Whole seconds and the rest apart, so that no product overflows. */
	uint64_t t = ns / 1000000000ull * PM_TIMER_HZ + ns % 1000000000ull * PM_TIMER_HZ / 1000000000ull;
	return (uint32_t)t & PM_TIMER_MASK;
}

static void timer_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	struct pm_timer *t = opaque;
	uint64_t now = t->now_ns ? t->now_ns() : clock_now_ns();
	uint32_t v = pm_timer_ticks(now - t->origin_ns);
	uint8_t bytes[8] = { 0 };
	memcpy(bytes, &v, 4); /* x86: little-endian */
	memcpy(data, bytes + offset, len); /* the bus keeps offset + len <= 4 */
}

static void timer_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct pm_timer *t = opaque;
	atomic_fetch_add(&t->ignored, 1);
	pthread_mutex_lock(&t->rl_lock);
	log_ratelimited(&t->rl, LOG_INFO, "pm-timer: %u-byte write at port 0x%" PRIx64
			" ignored (read-only)", len, PM_TIMER_PORT + offset);
	pthread_mutex_unlock(&t->rl_lock);
}

const struct bus_ops pm_timer_ops = { .read = timer_read, .write = timer_write };
