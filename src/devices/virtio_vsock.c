/* virtio-vsock device: config (guest CID), tx queue -> checked packets -> connections, owed packets and socket data -> rx queue (backend=unix); queues to vhost (backend=vhost). */
#include "devices/virtio_vsock.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/log.h"

/* ---- wire format ---- */

void vsock_hdr_decode(const uint8_t *b, struct vsock_hdr *h)
{
	uint64_t q;
	uint32_t d;
	uint16_t w;
	memcpy(&q, b, 8), h->src_cid = le64toh(q);
	memcpy(&q, b + 8, 8), h->dst_cid = le64toh(q);
	memcpy(&d, b + 16, 4), h->src_port = le32toh(d);
	memcpy(&d, b + 20, 4), h->dst_port = le32toh(d);
	memcpy(&d, b + 24, 4), h->len = le32toh(d);
	memcpy(&w, b + 28, 2), h->type = le16toh(w);
	memcpy(&w, b + 30, 2), h->op = le16toh(w);
	memcpy(&d, b + 32, 4), h->flags = le32toh(d);
	memcpy(&d, b + 36, 4), h->buf_alloc = le32toh(d);
	memcpy(&d, b + 40, 4), h->fwd_cnt = le32toh(d);
}
/* ---- config ---- */

static void vsock_config_read(void *opaque, uint32_t off, void *data, uint32_t len)
{
	struct virtio_vsock *v = opaque;
	uint64_t cid = htole64(v->cid);
	memcpy(data, (const uint8_t *)&cid + off, len); /* the transport checked off + len <= 8 */
}

/* ---- transmit queue: the guest's packets ---- */

/* Why a packet from the guest is refused before any connection sees it, or NULL. */
static const char *bad_packet(const struct virtio_vsock *v, const struct vsock_hdr *h,
			      uint32_t out_bytes)
{
	if (h->src_cid != v->cid)
		return "source CID is not the guest's";
	if (h->dst_cid != VSOCK_HOST_CID)
		return "destination CID is not the host's (2)";
	if (h->type != VSOCK_TYPE_STREAM)
		return "type is not STREAM";
	if (h->op == VSOCK_OP_INVALID || h->op > VSOCK_OP_CREDIT_REQUEST)
		return "unknown operation";
	if (h->len > VSOCK_PKT_MAX || h->len > out_bytes - VSOCK_HDR_SIZE)
		return "length past the buffer or over 64 KiB";
	if (h->op != VSOCK_OP_RW && h->len)
		return "payload on a control packet";
	return NULL;
}

/* One chain of the tx queue: its header and payload (readable buffers) to the connections. */
static void tx_chain(struct virtio_vsock *v)
{
	const struct virtq_chain *c = &v->chain;
	uint8_t raw[VSOCK_HDR_SIZE];
	struct vsock_hdr h;
	if (c->out_bytes < VSOCK_HDR_SIZE) {
		v->stats.bad_packets++;
		log_ratelimited(&v->rl, LOG_WARN, "%s: tx packet of %u bytes, shorter than a header; "
				"dropped", v->name, c->out_bytes);
		return;
	}
	virtq_chain_gather(c, 0, raw, VSOCK_HDR_SIZE);
	vsock_hdr_decode(raw, &h);
	const char *why = bad_packet(v, &h, c->out_bytes);
	if (why) {
		v->stats.bad_packets++;
		bool answer = h.op != VSOCK_OP_RST && h.src_cid == v->cid;
		log_ratelimited(&v->rl, LOG_WARN, "%s: tx packet op %u %u -> %u: %s; %s", v->name,
				h.op, h.src_port, h.dst_port, why, answer ? "answered with RST" : "dropped");
		if (answer)
			vsock_owe_orphan_rst(v, &h);
		return;
	}
	if (h.len)
		virtq_chain_gather(c, VSOCK_HDR_SIZE, v->bounce, h.len);
	vsock_conn_packet(v, &h, v->bounce);
}

/* tx queue (lock held): every chain is consumed (its used length is 0: the device writes nothing). */
static void tx_serve(struct virtio_vsock *v)
{
	struct vbudget budget = vbudget_start(VBUDGET_BYTES);
	for (;;) {
		int got = virtio_pci_pop(&v->pci, VSOCK_TXQ, &budget, &v->chain);
		if (got != 1)
			break;
		vbudget_charge(&budget, v->chain.out_bytes);
		struct virtq *q = virtio_pci_queue(&v->pci, VSOCK_TXQ);
		tx_chain(v);
		if (q)
			virtq_push(q, v->chain.head, 0);
	}
	if (virtio_pci_queue(&v->pci, VSOCK_TXQ))
		virtio_pci_queue_done(&v->pci, VSOCK_TXQ);
	vsock_rx_serve(v); /* what the packets asked for: responses, credit, resets */
}

/* The event a restore owes the driver (virtio 1.2, 5.10.6.7): its connections were host sockets
 * of the process that took the snapshot, and are gone; it resets them and reads the guest CID
 * again. Sent in the first event buffer the driver gives (lock held). */
static void send_transport_reset(struct virtio_vsock *v)
{
	struct virtq *q = virtio_pci_queue(&v->pci, VSOCK_EVQ);
	if (!v->owe_reset || !q)
		return;
	int r = virtq_pop(q, &v->chain);
	if (r == 1 && v->chain.in_bytes < 4) {
		log_ratelimited(&v->rl, LOG_WARN, "%s: event buffer of %u bytes: too short for an "
				"event", v->name, v->chain.in_bytes);
		virtq_push(q, v->chain.head, 0);
	} else if (r == 1) {
		uint32_t id = htole32(VSOCK_EVENT_TRANSPORT_RESET);
		virtq_chain_scatter(&v->chain, &id, sizeof(id));
		virtq_push(q, v->chain.head, sizeof(id));
		v->owe_reset = false;
		v->transport_resets++;
	}
	if (r != 0)
		virtio_pci_queue_done(&v->pci, VSOCK_EVQ);
}

static void vsock_notify(void *opaque, uint16_t qi)
{
	struct virtio_vsock *v = opaque;
	if (v->vhost && qi != VSOCK_EVQ)
		vsock_vhost_kick(v, qi);
	else if (v->vhost)
		return;
	else if (qi == VSOCK_TXQ)
		tx_serve(v);
	else if (qi == VSOCK_RXQ)
		vsock_rx_serve(v);
	else
		send_transport_reset(v); /* the event queue's buffers wait for one (a restore) */
}

static void vsock_driver_ok(void *opaque)
{
	vsock_vhost_start(opaque);
}

/* Device reset: every connection ends (the driver's sockets were reset with it). */
static void vsock_reset(void *opaque)
{
	struct virtio_vsock *v = opaque;
	vsock_vhost_stop(v);
	for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++)
		if (v->conns[i].state != VC_FREE)
			vsock_conn_free(&v->conns[i]);
	v->norphans = 0;
}

static uint32_t vsock_live_conns(const struct virtio_vsock *v)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++)
		n += v->conns[i].state != VC_FREE;
	return n;
}

/* Snapshot: the connections are not saved (they are host sockets of this process): the
 * restored device owes the driver a TRANSPORT_RESET. backend=vhost is refused: the kernel owns
 * its rings. */
static json_t *vsock_save(void *opaque, struct error *err)
{
	struct virtio_vsock *v = opaque;
	if (v->vhost) {
		error_set(err, -EOPNOTSUPP, "%s: backend=vhost cannot be saved yet (the kernel owns "
			  "its rings)", v->name);
		return NULL;
	}
	return json_pack("{s:I}", "connections_dropped", (json_int_t)vsock_live_conns(v));
}

/* Restore (before DRIVER_OK is replayed): a TRANSPORT_RESET is owed. */
static int vsock_load(void *opaque, const json_t *o, struct error *err)
{
	struct virtio_vsock *v = opaque;
	(void)o;
	(void)err;
	v->owe_reset = true;
	return 0;
}

static const struct virtio_dev_ops vsock_ops = {
	.config_read = vsock_config_read,
	.queue_notify = vsock_notify,
	.driver_ok = vsock_driver_ok,
	.reset = vsock_reset,
	.save = vsock_save,
	.load = vsock_load,
};

/* ---- the listener, and the guest's connects (both on the I/O thread) ---- */

static void on_dial(void *opaque, uint32_t events)
{
	struct virtio_vsock *v = opaque;
	uint64_t n;
	if (read(v->dial_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn("%s: dial eventfd: %s", v->name, strerror(errno));
	pthread_mutex_lock(&v->pci.lock);
	vsock_dial(v);
	vsock_rx_serve(v);
	pthread_mutex_unlock(&v->pci.lock);
}

static void on_listen(void *opaque, uint32_t events)
{
	struct virtio_vsock *v = opaque;
	pthread_mutex_lock(&v->pci.lock);
	vsock_accept(v);
	vsock_rx_serve(v);
	pthread_mutex_unlock(&v->pci.lock);
}

static int bind_path(struct virtio_vsock *v, struct error *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", v->path);
	v->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (v->listen_fd < 0)
		return error_set(err, -errno, "%s: socket: %s", v->name, strerror(errno));
	if (bind(v->listen_fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = errno;
		close(v->listen_fd);
		v->listen_fd = -1;
		return error_set(err, -e, "%s: cannot create the unix socket '%s': %s%s", v->name,
				 v->path, strerror(e), e == EADDRINUSE ? " (remove it first)" : "");
	}
	if (listen(v->listen_fd, 16))
		return error_set(err, -errno, "%s: listen on '%s': %s", v->name, v->path,
				 strerror(errno));
	return 0;
}

int virtio_vsock_init(struct virtio_vsock *v, unsigned index, const struct virtio_vsock_opts *o,
		      const struct virtio_pci_config *cfg, const struct guest_mem *mem, int vm_fd,
		      struct gsi_routes *routes, struct evloop *loop, struct bus *mmio,
		      struct pci_window window, struct error *err)
{
	memset(v, 0, sizeof(*v));
	v->listen_fd = v->dial_fd = v->vhost_fd = -1;
	for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++)
		v->conns[i] = (struct vsock_conn){ .dev = v, .fd = -1 };
	snprintf(v->name, sizeof(v->name), "vsock%u", index);
	if (o->cid < VSOCK_CID_MIN || o->cid > VSOCK_CID_MAX)
		return error_set(err, -EINVAL, "%s: cid %llu: use 3 to 4294967294", v->name,
				 (unsigned long long)o->cid);
	if (o->backend == VSOCK_BE_UNIX && (!o->path[0] || strlen(o->path) >= VSOCK_PATH_MAX))
		return error_set(err, -EINVAL, "%s: path= needs a unix socket path of 1 to %d bytes",
				 v->name, VSOCK_PATH_MAX - 1);
	v->cid = o->cid;
	snprintf(v->path, sizeof(v->path), "%s", o->path);
	v->next_host_port = 1u << 30;
	if (!(v->bounce = malloc(VSOCK_PKT_MAX)))
		return error_set(err, -ENOMEM, "%s: out of memory", v->name);
	int ret = o->backend == VSOCK_BE_VHOST ? vsock_vhost_open(v, err) : bind_path(v, err);
	if (ret)
		return ret;
	struct virtio_dev_info info = {
		.name = v->name, .device_id = VIRTIO_ID_VSOCK, .nqueues = VSOCK_NQUEUES,
		.queue_max = VSOCK_QUEUE_SIZE, .config_size = VSOCK_CONFIG_SIZE,
		.pci_class = 0x078000, .features = 1ULL << VIRTIO_VSOCK_F_STREAM,
	};
	v->pci_ready = true;
	ret = virtio_pci_init(&v->pci, &info, &vsock_ops, v, cfg, mem, vm_fd, routes, loop, mmio,
			      window, err);
	if (ret)
		return ret;
	v->loop = loop;
	if (v->vhost)
		return vsock_vhost_init(v, mem, err);
	if (loop) {
		v->listen_handler = (struct evloop_handler){ on_listen, v };
		if ((ret = evloop_add(loop, v->listen_fd, EPOLLIN, &v->listen_handler)))
			return error_set(err, ret, "%s: epoll: %s", v->name, strerror(-ret));
		v->listen_watched = true;
		if ((v->dial_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
			return error_set(err, -errno, "%s: eventfd: %s", v->name, strerror(errno));
		v->dial_handler = (struct evloop_handler){ on_dial, v };
		if ((ret = evloop_add(loop, v->dial_fd, EPOLLIN, &v->dial_handler)))
			return error_set(err, ret, "%s: epoll: %s", v->name, strerror(-ret));
		v->dial_watched = true;
	}
	return 0;
}

void virtio_vsock_destroy(struct virtio_vsock *v)
{
	vsock_vhost_destroy(v); /* before the transport's queues go */
	for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++)
		if (v->conns[i].state != VC_FREE)
			vsock_conn_free(&v->conns[i]);
	if (v->listen_watched)
		evloop_del(v->loop, v->listen_fd);
	if (v->dial_watched)
		evloop_del(v->loop, v->dial_fd);
	v->listen_watched = v->dial_watched = false;
	if (v->dial_fd >= 0)
		close(v->dial_fd);
	v->dial_fd = -1;
	if (v->listen_fd >= 0) {
		close(v->listen_fd);
		unlink(v->path);
	}
	v->listen_fd = -1;
	if (v->pci_ready)
		virtio_pci_destroy(&v->pci);
	v->pci_ready = false;
	free(v->bounce);
	v->bounce = NULL;
}
