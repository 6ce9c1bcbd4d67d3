/* guest/src/virtio_console.c - virtio-console driver: console output mirrored to transmitq0, one chain per line. */
#include "virtio_console.h"
#include "console.h"
#include "cpu.h"
#include "lab.h"
#include "lib.h"
#include "wait.h"

#define RXQ             0       /* receiveq0: host -> guest (buffers posted once; conin reads them) */
#define TXQ             1       /* transmitq0: guest -> host */
#define RX_BUFS         4
#define RX_BUF_SIZE     64
#define TX_BUFS         2       /* one fills while the other is with the device */
#define TX_MAX_WAKEUPS  1000    /* backstop; the 1 s TSC deadline ends a wait first */
#define RFLAGS_IF       0x200
#define ONES            0x0101010101010101ull
#define HIGHS           0x8080808080808080ull

static struct virtio_pci con_vp;
static char tx_buf[TX_BUFS][VCON_LINE_MAX] __noinit;
static uint8_t rx_buf[RX_BUFS][RX_BUF_SIZE] __noinit;
static unsigned int tx_cur, tx_len;     /* buffer being filled, bytes in it */
static unsigned int tx_posted;          /* bit b: tx_buf[b] is with the device */
static bool active, busy;
static uint64_t timeout_cycles, deadline;

bool virtio_console_match(const struct pci_dev *d)
{
    return virtio_pci_type(d) == VIRTIO_TYPE_CONSOLE;
}

static bool used_or_late(const void *ctx)
{
    return virtq_has_used(ctx) || (int64_t)(rdtsc() - deadline) >= 0;
}

static bool irqs_enabled(void)
{
    uint64_t flags;

    __asm__ volatile("pushfq; popq %0" : "=r"(flags) : : "memory");
    return flags & RFLAGS_IF;
}

static void disable(void)
{
    active = false;
    console_set_mirror(0, 0);
    console_puts("probe: console timeout\n");      /* the UART alone now */
}

/* Take back every chain the device has used. */
static void reap(struct virtq *vq)
{
    uint32_t id, len;

    while (virtq_pop_used(vq, &id, &len))
        if (id < vq->size)
            tx_posted &= ~(1u << virtq_token(vq, id));
}

/*
 * Reap until the buffers in `mask` are back, waiting at most 1 s of TSC for
 * each completion: with IF=1 asleep in wait_until (the device's interrupt
 * wakes it), with IF=0 (interrupt table, exception, exit) by polling the
 * used index, so no interrupt is taken while the caller has them off. A
 * timeout disables the virtio console. Returns false then.
 */
static bool tx_reclaim(unsigned int mask)
{
    struct virtq *vq = &con_vp.vq[TXQ];

    reap(vq);
    while (tx_posted & mask) {
        deadline = rdtsc() + timeout_cycles;
        if (irqs_enabled()) {
            wait_until(used_or_late, vq, TX_MAX_WAKEUPS);
        } else {
            while (!used_or_late(vq))
                cpu_relax();
        }
        if (!virtq_has_used(vq)) {
            disable();
            return false;
        }
        reap(vq);
    }
    return true;
}

/* Send the current buffer as one device-readable chain, then switch to the
 * other buffer once the device has given it back. */
static void tx_flush(void)
{
    struct virtq *vq = &con_vp.vq[TXQ];
    struct virtq_buf b = { (uintptr_t)tx_buf[tx_cur], tx_len, false };

    if (virtq_add_chain(vq, &b, 1, (uint16_t)tx_cur) < 0) {
        disable();
        return;
    }
    tx_posted |= 1u << tx_cur;
    virtio_pci_kick(&con_vp, vq);
    tx_cur = (tx_cur + 1) % TX_BUFS;
    tx_len = 0;
    tx_reclaim(1u << tx_cur);
}

/* Index of the first '\n' in s[0..n), or n; 8 bytes per step (the byte
 * loop costs ~10 emulated instructions per byte). */
static size_t find_nl(const char *s, size_t n)
{
    size_t i = 0;
    uint64_t x, m;

    for (; i + 8 <= n; i += 8) {
        __builtin_memcpy(&x, s + i, 8);
        x ^= '\n' * ONES;
        if ((m = (x - ONES) & ~x & HIGHS))     /* lowest set bit: the first '\n' */
            return i + ((unsigned int)__builtin_ctzll(m) >> 3);
    }
    while (i < n && s[i] != '\n')
        i++;
    return i;
}

/* Console mirror: append, sending at each '\n' and whenever 256 bytes are
 * pending. Output produced while a flush is under way (an exception taken
 * inside it) goes to the UART only. */
static void vcon_write(const char *s, size_t n)
{
    if (!active || busy)
        return;
    busy = true;
    while (n && active) {
        size_t room = VCON_LINE_MAX - tx_len, lim = n < room ? n : room;
        size_t k = find_nl(s, lim), take = k < lim ? k + 1 : lim;

        memcpy(tx_buf[tx_cur] + tx_len, s, take);
        tx_len += (unsigned int)take;
        s += take;
        n -= take;
        if (k < lim || tx_len == VCON_LINE_MAX)
            tx_flush();
    }
    busy = false;
}

/* Send a partial line and wait until the device has used every buffer. */
static void vcon_flush(void)
{
    if (!active || busy)
        return;
    busy = true;
    if (tx_len)
        tx_flush();
    if (active)
        tx_reclaim((1u << TX_BUFS) - 1);
    busy = false;
}

void virtio_console_start(struct pci_dev *d, enum virtio_irq_mode want, const char *cmdline)
{
    static const char banner[] = "msivm-probe v0: cmdline=\"";
    struct virtq *rx;
    unsigned int i;

    if (virtio_pci_start(&con_vp, d, 0, 2, want)) {
        cprintf("probe: virtio-console %s unusable\n", d->name);
        return;
    }
    rx = &con_vp.vq[RXQ];
    for (i = 0; i < RX_BUFS && i < rx->size; i++)
        virtq_add_buf(rx, (uintptr_t)rx_buf[i], RX_BUF_SIZE, true);
    virtio_pci_kick(&con_vp, rx);

    timeout_cycles = lab_tsc_hz(0);     /* 1 s */
    tx_cur = tx_len = tx_posted = 0;
    active = true;
    irq_enable();       /* as after any device's first wait */
    vcon_write(banner, sizeof(banner) - 1);
    vcon_write(cmdline, strlen(cmdline));
    vcon_write("\"\n", 2);
    if (!active)
        return;
    console_set_mirror(vcon_write, vcon_flush);
    cprintf("probe: virtio-console %s ready\n", d->name);
}

void virtio_console_input(unsigned int ms, bool until_first)
{
    struct virtq *vq = &con_vp.vq[RXQ];
    uint32_t id, len;
    unsigned long got = 0;
    bool settling = false;

    if (!active)
        return;
    /* Everything that arrives within `ms`: at most what the posted buffers hold. */
    deadline = rdtsc() + timeout_cycles / 1000 * ms;
    do {
        while (virtq_pop_used(vq, &id, &len))
            got += len < RX_BUF_SIZE ? len : RX_BUF_SIZE;
        if (until_first && got && !settling) {
            settling = true;                    /* the rest of a line comes within 50 ms */
            deadline = rdtsc() + timeout_cycles / 1000 * 50;
        }
        cpu_relax();
    } while ((int64_t)(rdtsc() - deadline) < 0);
    while (virtq_pop_used(vq, &id, &len))
        got += len < RX_BUF_SIZE ? len : RX_BUF_SIZE;
    cprintf("probe: console input %lu bytes\n", got);
}
