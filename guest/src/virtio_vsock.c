/* guest/src/virtio_vsock.c - virtio-vsock: one stream to the host and one from it, polled, with the credit rules both ways. */
#include "virtio_vsock.h"
#include "console.h"
#include "cpu.h"
#include "lab.h"
#include "lib.h"

#define RXQ          0
#define TXQ          1
#define EVQ          2
#define HDR          44
#define RX_BUFS      8
#define RX_PAYLOAD   1024
#define TX_PAYLOAD   1024
#define GUEST_PORT   1234       /* the probe's port of its stream to the host */
#define BUF_ALLOC    65536      /* what the probe says it buffers */
#define WAIT_S       10

enum { OP_REQUEST = 1, OP_RESPONSE, OP_RST, OP_SHUTDOWN, OP_RW, OP_CREDIT_UPDATE, OP_CREDIT_REQUEST };

struct pkt {
    uint64_t src_cid, dst_cid;
    uint32_t src_port, dst_port, len;
    uint16_t type, op;
    uint32_t flags, buf_alloc, fwd_cnt;
} __attribute__((packed));

static struct virtio_pci vs_vp;
static uint8_t rx_buf[RX_BUFS][HDR + RX_PAYLOAD] __noinit __attribute__((aligned(64)));
static uint8_t tx_buf[HDR + TX_PAYLOAD] __noinit __attribute__((aligned(64)));
static uint8_t ev_buf[8] __noinit;
static uint64_t cid, tsc_hz;
static uint32_t host_buf_alloc, host_fwd_cnt, tx_cnt, fwd_cnt;

bool virtio_vsock_match(const struct pci_dev *d)
{
    return virtio_pci_type(d) == VIRTIO_TYPE_VSOCK;
}

static uint32_t fnv(uint32_t h, const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* Sends one packet (header and payload in one buffer) and waits for the device to take it. */
static int send(uint16_t op, uint32_t src_port, uint32_t dst_port, uint32_t flags,
                const uint8_t *payload, uint32_t len)
{
    struct virtq *vq = &vs_vp.vq[TXQ];
    struct pkt h = { .src_cid = cid, .dst_cid = 2, .src_port = src_port, .dst_port = dst_port,
                     .len = len, .type = 1, .op = op, .flags = flags, .buf_alloc = BUF_ALLOC,
                     .fwd_cnt = fwd_cnt };
    uint32_t id, used;
    uint64_t end = rdtsc() + tsc_hz * WAIT_S;

    memcpy(tx_buf, &h, HDR);
    if (len)
        memcpy(tx_buf + HDR, payload, len);
    if (virtq_add_buf(vq, (uintptr_t)tx_buf, HDR + len, false) < 0)
        return -1;
    virtio_pci_kick(&vs_vp, vq);
    while (!virtq_pop_used(vq, &id, &used))
        if ((int64_t)(rdtsc() - end) >= 0)
            return -1;
        else
            cpu_relax();
    return 0;
}

/* Receive buffer i, posted with token i (the device's used element names it). */
static void post_rx(uint32_t i)
{
    struct virtq_buf b = { (uintptr_t)rx_buf[i], HDR + RX_PAYLOAD, true };

    (void)virtq_add_chain(&vs_vp.vq[RXQ], &b, 1, (uint16_t)i);
}

/* The next packet from the device (its buffer is posted again after the copy), or -1 after
 * WAIT_S seconds. */
static int recv(struct pkt *h, uint8_t *payload)
{
    struct virtq *vq = &vs_vp.vq[RXQ];
    uint32_t id, len;
    uint64_t end = rdtsc() + tsc_hz * WAIT_S;

    while (!virtq_pop_used(vq, &id, &len)) {
        if ((int64_t)(rdtsc() - end) >= 0)
            return -1;
        cpu_relax();
    }
    uint32_t b = virtq_token(vq, id);
    memcpy(h, rx_buf[b], HDR);
    if (h->len > RX_PAYLOAD || len != HDR + h->len) {
        cprintf("probe: vsock bad rx packet: len %u, used %u\n", h->len, len);
        return -1;
    }
    if (payload && h->len)
        memcpy(payload, rx_buf[b] + HDR, h->len);
    post_rx(b);
    virtio_pci_kick(&vs_vp, vq);
    host_buf_alloc = h->buf_alloc;
    host_fwd_cnt = h->fwd_cnt;
    return 0;
}

/* Waits for a packet with operation op on (host port hp, guest port gp), answering the
 * device's CREDIT_REQUESTs on the way. Returns 0 or -1. */
static int expect(uint16_t op, uint32_t hp, uint32_t gp)
{
    static uint8_t payload[RX_PAYLOAD];
    struct pkt h;

    for (;;) {
        if (recv(&h, payload)) {
            cprintf("probe: vsock: no packet (waiting for op %u on %u -> %u)\n", op, hp, gp);
            return -1;
        }
        if (h.src_cid != 2 || h.dst_cid != cid || h.type != 1) {
            cprintf("probe: vsock: packet from cid %u to cid %u type %u\n", (unsigned)h.src_cid,
                    (unsigned)h.dst_cid, h.type);
            return -1;
        }
        if (h.src_port != hp || h.dst_port != gp) {
            cprintf("probe: vsock: packet op %u on %u -> %u, want %u -> %u\n", h.op, h.src_port,
                    h.dst_port, hp, gp);
            return -1;
        }
        if (h.op == OP_CREDIT_REQUEST) {
            if (send(OP_CREDIT_UPDATE, gp, hp, 0, NULL, 0))
                return -1;
            continue;
        }
        if (h.op == OP_CREDIT_UPDATE && op != OP_CREDIT_UPDATE)
            continue;
        if (h.op != op) {
            cprintf("probe: vsock: op %u on %u -> %u, want op %u\n", h.op, hp, gp, op);
            return -1;
        }
        return 0;
    }
}

/* The probe's stream to the host's port: REQUEST, RESPONSE, the pattern within the host's
 * credit, SHUTDOWN, RST. */
static int to_host(uint32_t port)
{
    static uint8_t chunk[TX_PAYLOAD];
    uint32_t sum = 2166136261u, sent = 0;

    tx_cnt = 0;
    if (send(OP_REQUEST, GUEST_PORT, port, 0, NULL, 0) ||
        expect(OP_RESPONSE, port, GUEST_PORT)) {
        cprintf("probe: vsock connect to port %lu failed\n", (unsigned long)port);
        return -1;
    }
    while (sent < VSOCK_SEND_BYTES) {
        uint32_t credit = host_buf_alloc - (tx_cnt - host_fwd_cnt), n = TX_PAYLOAD;
        if (credit < n) {
            /* out of credit: ask, then wait for the update */
            if (send(OP_CREDIT_REQUEST, GUEST_PORT, port, 0, NULL, 0) ||
                expect(OP_CREDIT_UPDATE, port, GUEST_PORT))
                return -1;
            continue;
        }
        for (uint32_t i = 0; i < n; i++)
            chunk[i] = (uint8_t)(sent + i);
        if (send(OP_RW, GUEST_PORT, port, 0, chunk, n))
            return -1;
        sum = fnv(sum, chunk, n);
        sent += n;
        tx_cnt += n;
    }
    if (send(OP_SHUTDOWN, GUEST_PORT, port, 3, NULL, 0) ||
        expect(OP_RST, port, GUEST_PORT))
        return -1;
    cprintf("probe: vsock sent %u bytes to port %lu fnv=%08x\n", sent, (unsigned long)port, sum);
    return 0;
}

/* The host's stream to port 52: its REQUEST (from whatever host port), RESPONSE, its bytes
 * until its SHUTDOWN, RST. */
static int from_host(void)
{
    static uint8_t payload[RX_PAYLOAD];
    uint32_t sum = 2166136261u, got = 0;
    struct pkt h;

    console_puts("probe: vsock listening 52\n");
    fwd_cnt = 0;
    if (recv(&h, payload) || h.op != OP_REQUEST || h.dst_port != VSOCK_PROBE_PORT) {
        console_puts("probe: vsock: no REQUEST to port 52 from the host\n");
        return -1;
    }
    uint32_t hp = h.src_port;
    if (send(OP_RESPONSE, VSOCK_PROBE_PORT, hp, 0, NULL, 0))
        return -1;
    for (;;) {
        if (recv(&h, payload) || h.src_port != hp || h.dst_port != VSOCK_PROBE_PORT) {
            console_puts("probe: vsock: the host's stream to port 52 broke off\n");
            return -1;
        }
        if (h.op == OP_RW) {
            sum = fnv(sum, payload, h.len);
            got += h.len;
            fwd_cnt += h.len;
            if ((got & 16383) < h.len && send(OP_CREDIT_UPDATE, VSOCK_PROBE_PORT, hp, 0, NULL, 0))
                return -1;
        } else if (h.op == OP_CREDIT_REQUEST) {
            if (send(OP_CREDIT_UPDATE, VSOCK_PROBE_PORT, hp, 0, NULL, 0))
                return -1;
        } else if (h.op == OP_SHUTDOWN) {
            /* the host sends no more: the probe closes the stream */
            if (send(OP_RST, VSOCK_PROBE_PORT, hp, 0, NULL, 0))
                return -1;
            cprintf("probe: vsock received %u bytes on port 52 fnv=%08x\n", got, sum);
            return 0;
        } else if (h.op != OP_CREDIT_UPDATE) {
            cprintf("probe: vsock: op %u on the host's stream to port 52\n", h.op);
            return -1;
        }
    }
}

int virtio_vsock_run(struct pci_dev *d, unsigned long port, enum virtio_irq_mode want)
{
    int rc = virtio_pci_start(&vs_vp, d, 1ull /* STREAM */, 3, want);

    if (rc)
        return rc;
    tsc_hz = lab_tsc_hz(0);
    cid = virtio_pci_cfg64(&vs_vp, 0);
    cprintf("probe: vsock cid %lu\n", (unsigned long)cid);
    for (uint32_t i = 0; i < RX_BUFS; i++)
        post_rx(i);
    (void)virtq_add_buf(&vs_vp.vq[EVQ], (uintptr_t)ev_buf, sizeof(ev_buf), true);
    virtio_pci_kick(&vs_vp, &vs_vp.vq[RXQ]);
    virtio_pci_kick(&vs_vp, &vs_vp.vq[EVQ]);
    if (to_host((uint32_t)port) || from_host())
        return PROBE_EXIT_VSOCK;
    return 0;
}
