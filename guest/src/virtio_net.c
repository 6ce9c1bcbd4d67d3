/* guest/src/virtio_net.c - virtio-net driver: receiveq0/transmitq0, 2 KiB buffers, mergeable RX buffers gathered, TX slots. */
#include "virtio_net.h"
#include "console.h"
#include "lib.h"
#include "mem.h"

/* Feature bits (virtio 1.x, 5.1.3). */
#define NET_F_MTU       (1ull << 3)
#define NET_F_MAC       (1ull << 5)
#define NET_F_MRG_RXBUF (1ull << 15)
#define NET_F_STATUS    (1ull << 16)

/* struct virtio_net_config offsets. */
#define CFG_MAC         0
#define CFG_STATUS      6
#define CFG_MTU         10
#define NET_S_LINK_UP   1

#define RXQ             0
#define TXQ             1
#define GATHER_MAX      16384   /* largest frame accepted over several buffers */

struct vnet_hdr {
    uint8_t flags;
    uint8_t gso_type;
    uint16_t hdr_len;
    uint16_t gso_size;
    uint16_t csum_start;
    uint16_t csum_offset;
    uint16_t num_buffers;
} __attribute__((packed));

_Static_assert(sizeof(struct vnet_hdr) == VNET_HDR_LEN, "virtio_net_hdr is 12 bytes");

static const uint8_t default_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static struct {
    struct virtio_pci vp;
    uint8_t *rx, *tx;           /* nrx / ntx buffers of VNET_BUF_SIZE */
    unsigned int nrx, ntx;
    uint8_t txfree[VNET_TX_BUFS];
    unsigned int ntxfree;
    int cur_tx;                 /* slot handed out by vnet_tx_buf, -1: none */
    bool mrg;
    struct vnet_counters c;
} N __noinit;                   /* cleared by vnet_start */

static uint8_t gather[GATHER_MAX] __noinit;

bool virtio_net_match(const struct pci_dev *d)
{
    return virtio_pci_type(d) == VIRTIO_TYPE_NET;
}

struct virtio_pci *vnet_dev(void)
{
    return &N.vp;
}

const struct vnet_counters *vnet_counters(void)
{
    return &N.c;
}

static void rx_post(unsigned int slot)
{
    struct virtq_buf b = { (uintptr_t)(N.rx + (size_t)slot * VNET_BUF_SIZE), VNET_BUF_SIZE,
                           true };

    virtq_add_chain(&N.vp.vq[RXQ], &b, 1, (uint16_t)slot);
}

int vnet_start(struct pci_dev *d, enum virtio_irq_mode want, struct vnet_info *info)
{
    struct virtio_pci *vp = &N.vp;
    uint64_t offered, feat;
    unsigned int i;
    int rc;

    memset(info, 0, sizeof(*info));
    memset(&N, 0, sizeof(N));   /* one device per run: vnet_start is called once */
    N.cur_tx = -1;
    if ((rc = virtio_pci_open(vp, d)))
        return rc;
    offered = virtio_pci_offered(vp);
    feat = offered & (NET_F_MAC | NET_F_MTU | NET_F_STATUS | NET_F_MRG_RXBUF);
    /* Without mergeable buffers every frame must fit one 2 KiB buffer: a
     * larger device MTU is not accepted (the config may be read before
     * FEATURES_OK). */
    if ((feat & NET_F_MTU) && !(feat & NET_F_MRG_RXBUF) && vp->device &&
        virtio_pci_cfg16(vp, CFG_MTU) + 14u > VNET_BUF_SIZE - VNET_HDR_LEN)
        feat &= ~NET_F_MTU;
    if (!vp->device)
        feat &= ~(NET_F_MAC | NET_F_MTU | NET_F_STATUS);
    if ((rc = virtio_pci_setup(vp, feat, 2, want)))
        return rc;
    feat = vp->features;
    N.mrg = feat & NET_F_MRG_RXBUF;
    info->mrg_rxbuf = N.mrg;
    info->mac_from_dev = feat & NET_F_MAC;
    for (i = 0; i < 6; i++)
        info->mac[i] = info->mac_from_dev ? virtio_pci_cfg8(vp, CFG_MAC + i) : default_mac[i];
    info->mtu = (feat & NET_F_MTU) ? virtio_pci_cfg16(vp, CFG_MTU) : 1500;
    info->link = (feat & NET_F_STATUS) ? (virtio_pci_cfg16(vp, CFG_STATUS) & NET_S_LINK_UP) : -1;
    cprintf("probe: net %s mac=%02x:%02x:%02x:%02x:%02x:%02x mtu=%u link=%s mrg_rxbuf=%d\n",
            d->name, info->mac[0], info->mac[1], info->mac[2], info->mac[3], info->mac[4],
            info->mac[5], info->mtu,
            info->link < 0 ? "unknown" : info->link ? "up" : "down", info->mrg_rxbuf);

    N.nrx = vp->vq[RXQ].size < VNET_RX_BUFS ? vp->vq[RXQ].size : VNET_RX_BUFS;
    N.ntx = vp->vq[TXQ].size < VNET_TX_BUFS ? vp->vq[TXQ].size : VNET_TX_BUFS;
    if (!N.rx)
        N.rx = mem_alloc((size_t)(VNET_RX_BUFS + VNET_TX_BUFS) * VNET_BUF_SIZE);
    if (!N.rx) {
        console_puts("probe: net out of memory for buffers\n");
        return PROBE_EXIT_VIRTIO;
    }
    N.tx = N.rx + (size_t)VNET_RX_BUFS * VNET_BUF_SIZE;
    for (N.ntxfree = 0; N.ntxfree < N.ntx; N.ntxfree++)
        N.txfree[N.ntxfree] = (uint8_t)N.ntxfree;
    for (i = 0; i < N.nrx; i++)
        rx_post(i);
    virtio_pci_kick(vp, &vp->vq[RXQ]);
    return 0;
}

bool vnet_has_work(void)
{
    return virtq_has_used(&N.vp.vq[RXQ]) || virtq_has_used(&N.vp.vq[TXQ]);
}

/* Return completed TX slots to the free list. 0 or -1 (bad id). */
static int tx_reap(void)
{
    struct virtq *tq = &N.vp.vq[TXQ];
    uint32_t id, len;
    unsigned int s;

    while (virtq_pop_used(tq, &id, &len)) {
        if (id >= tq->size || (s = virtq_token(tq, id)) >= N.ntx) {
            cprintf("probe: net %s transmitq0 returned bad id %u\n", N.vp.pci->name, id);
            return -1;
        }
        N.txfree[N.ntxfree++] = (uint8_t)s;
    }
    return 0;
}

/* Pop one RX completion: its slot (or -1 on a device error, after a
 * message) and used length. false if there is none. */
static bool rx_pop(int *slot, uint32_t *len)
{
    struct virtq *rq = &N.vp.vq[RXQ];
    uint32_t id;
    unsigned int s;

    if (!virtq_pop_used(rq, &id, len))
        return false;
    if (id >= rq->size || (s = virtq_token(rq, id)) >= N.nrx) {
        cprintf("probe: net %s receiveq0 returned bad id %u\n", N.vp.pci->name, id);
        *slot = -1;
    } else {
        *slot = (int)s;
    }
    return true;
}

int vnet_poll(vnet_rx_fn rx, void *ctx, uint32_t *bad_rx)
{
    unsigned int reposted = 0, budget = N.nrx;
    int frames = 0, s;
    uint32_t len;

    if (tx_reap())
        return -1;
    /* At most one ring's worth per call: the device may refill re-posted
     * buffers while we work, and the caller must get to its deadline. */
    while (budget-- && rx_pop(&s, &len)) {
        const struct vnet_hdr *h;
        const uint8_t *b;
        uint16_t nb;

        if (s < 0)
            return -1;
        b = N.rx + (size_t)s * VNET_BUF_SIZE;
        h = (const struct vnet_hdr *)b;
        nb = N.mrg ? h->num_buffers : 1;
        if (len < VNET_HDR_LEN || len > VNET_BUF_SIZE || nb == 0) {
            (*bad_rx)++;
            rx_post((unsigned int)s);
            reposted++;
            continue;
        }
        if (nb == 1) {
            rx(b + VNET_HDR_LEN, len - VNET_HDR_LEN, ctx);
            N.c.rx_bytes += len - VNET_HDR_LEN;
        } else {
            /* Mergeable buffers: the rest of the frame follows in the next
             * nb - 1 used entries (published together), without headers. */
            uint32_t flen = len - VNET_HDR_LEN, k;
            bool ok = true;

            memcpy(gather, b + VNET_HDR_LEN, flen);
            rx_post((unsigned int)s);
            reposted++;
            for (k = 1; k < nb; k++) {
                if (!rx_pop(&s, &len)) {
                    ok = false;
                    break;
                }
                if (s < 0)
                    return -1;
                if (len > VNET_BUF_SIZE || flen + len > GATHER_MAX)
                    ok = false;
                else
                    memcpy(gather + flen, N.rx + (size_t)s * VNET_BUF_SIZE, len);
                flen += len;
                rx_post((unsigned int)s);
                reposted++;
            }
            if (!ok) {
                (*bad_rx)++;
                continue;
            }
            rx(gather, flen, ctx);
            N.c.rx_bytes += flen;
            N.c.rx_frames++;
            frames++;
            continue;
        }
        N.c.rx_frames++;
        frames++;
        rx_post((unsigned int)s);
        reposted++;
    }
    if (reposted)
        virtio_pci_kick(&N.vp, &N.vp.vq[RXQ]);
    return frames;
}

uint8_t *vnet_tx_buf(void)
{
    if (N.cur_tx < 0) {
        if ((!N.ntxfree || virtq_num_free(&N.vp.vq[TXQ]) < 2) && tx_reap())
            return NULL;
        if (!N.ntxfree || virtq_num_free(&N.vp.vq[TXQ]) < 2)
            return NULL;
        N.cur_tx = N.txfree[--N.ntxfree];
    }
    return N.tx + (size_t)N.cur_tx * VNET_BUF_SIZE + VNET_HDR_LEN;
}

void vnet_tx_send(uint32_t len, const void *tail, uint32_t tail_len, bool kick)
{
    struct virtq_buf vb[2];
    uint8_t *b;

    if (N.cur_tx < 0)
        return;
    b = N.tx + (size_t)N.cur_tx * VNET_BUF_SIZE;
    *(uint64_t *)b = 0;                 /* the whole header is 0: no offloads */
    *(uint32_t *)(b + 8) = 0;
    vb[0].addr = (uintptr_t)b;
    vb[0].len = VNET_HDR_LEN + len;
    vb[0].writable = false;
    vb[1].addr = (uintptr_t)tail;
    vb[1].len = tail_len;
    vb[1].writable = false;
    virtq_add_chain(&N.vp.vq[TXQ], vb, tail_len ? 2 : 1, (uint16_t)N.cur_tx);
    N.cur_tx = -1;
    N.c.tx_frames++;
    N.c.tx_bytes += len + tail_len;
    if (kick)
        vnet_tx_kick();
}

void vnet_tx_kick(void)
{
    virtio_pci_kick(&N.vp, &N.vp.vq[TXQ]);
}

unsigned int vnet_tx_in_flight(void)
{
    return N.vp.vq[TXQ].in_flight;
}
