/* virtio-vsock over the kernel's vhost-vsock: the guest's CID on the host's AF_VSOCK; rx and tx rings to the kernel at DRIVER_OK (virtio/vhost_rings.c), the event queue stays here. */
#include "devices/virtio_vsock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/log.h"

#define VHOST_VSOCK_DEV "/dev/vhost-vsock"

static uint64_t bit(unsigned n) { return 1ULL << n; }

/* Ring features vhost must implement for the rings msivm's transport offers. */
#define VHOST_RING_FEATURES (bit(VIRTIO_F_EVENT_IDX) | bit(VIRTIO_F_INDIRECT_DESC) | \
			     bit(VIRTIO_F_VERSION_1))

int vsock_vhost_open(struct virtio_vsock *v, struct error *err)
{
	v->vhost = true;
	v->vhost_fd = open(VHOST_VSOCK_DEV, O_RDWR | O_CLOEXEC);
	if (v->vhost_fd < 0) {
		int e = errno;
		return error_set(err, -e, "%s: backend=vhost: cannot open %s: %s%s", v->name,
				 VHOST_VSOCK_DEV, strerror(e), e == ENOENT ? " (is the vhost_vsock "
				 "module loaded? 'modprobe vhost_vsock', or use backend=unix)" : "");
	}
	uint64_t features = 0, cid = v->cid;
	if (ioctl(v->vhost_fd, VHOST_SET_OWNER))
		return error_set(err, -errno, "%s: backend=vhost: VHOST_SET_OWNER: %s", v->name,
				 strerror(errno));
	if (ioctl(v->vhost_fd, VHOST_GET_FEATURES, &features))
		return error_set(err, -errno, "%s: backend=vhost: VHOST_GET_FEATURES: %s", v->name,
				 strerror(errno));
	if ((features & VHOST_RING_FEATURES) != VHOST_RING_FEATURES)
		return error_set(err, -EOPNOTSUPP, "%s: this kernel's vhost-vsock lacks VERSION_1, "
				 "EVENT_IDX or INDIRECT_DESC (features 0x%llx)", v->name,
				 (unsigned long long)features);
	if (ioctl(v->vhost_fd, VHOST_VSOCK_SET_GUEST_CID, &cid)) {
		int e = errno;
		return error_set(err, -e, "%s: backend=vhost: cid %llu: %s%s", v->name,
				 (unsigned long long)cid, strerror(e), e == EADDRINUSE ?
				 " (another VM on this host has that context id: choose another cid=)"
				 : "");
	}
	return 0;
}

int vsock_vhost_init(struct virtio_vsock *v, const struct guest_mem *mem, struct error *err)
{
	static const uint16_t qis[2] = { VSOCK_RXQ, VSOCK_TXQ };
	return vhost_rings_init(&v->vh, &v->pci, v->name, "vhost-vsock", v->vhost_fd, qis, 2, mem,
				v->loop, err);
}

static int set_running(struct virtio_vsock *v, int on)
{
	return ioctl(v->vhost_fd, VHOST_VSOCK_SET_RUNNING, &on) ? errno : 0;
}

void vsock_vhost_start(struct virtio_vsock *v)
{
	if (!v->vhost || v->vh.running)
		return;
	int e = 0;
	const char *why = vhost_rings_start(&v->vh, v->pci.negotiated & VHOST_RING_FEATURES, &e);
	/* vhost-vsock runs both rings or none: a driver that left one disabled is refused here */
	if (!why && (e = set_running(v, 1)))
		why = "VHOST_VSOCK_SET_RUNNING refused (are both rx and tx enabled?)";
	if (why) {
		char msg[128];
		snprintf(msg, sizeof(msg), "vhost-vsock: %s (%s)", why, strerror(e));
		vsock_vhost_stop(v);
		virtio_pci_set_needs_reset(&v->pci, msg);
	}
}

void vsock_vhost_stop(struct virtio_vsock *v)
{
	if (!v->vhost || !v->vh.running)
		return;
	/* Stopping flushes vhost's worker: it touches guest memory no more. */
	int e = set_running(v, 0);
	if (e)
		log_warn("%s: VHOST_VSOCK_SET_RUNNING(0): %s", v->name, strerror(e));
	vhost_rings_stop(&v->vh);
}

void vsock_vhost_kick(struct virtio_vsock *v, uint16_t qi)
{
	if (!vhost_rings_kick(&v->vh, qi))
		log_ratelimited(&v->rl, LOG_WARN, "%s: cannot pass a kick of queue %u to vhost: %s",
				v->name, qi, strerror(errno));
}

void vsock_vhost_destroy(struct virtio_vsock *v)
{
	if (!v->vhost)
		return;
	vsock_vhost_stop(v);
	vhost_rings_destroy(&v->vh);
	if (v->vhost_fd >= 0)
		close(v->vhost_fd);
	v->vhost_fd = -1;
	v->vhost = false;
}
