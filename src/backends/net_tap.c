/* Network backend, tap: frames <-> a Linux tap interface (one nonblocking fd per queue, vnet header for offloads). */
#include "backends/net_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/log.h"

/*
 * The tap is opened with IFF_TAP | IFF_NO_PI (plain Ethernet frames) and,
 * where the kernel has it, IFF_VNET_HDR with a 12-byte header, so frames
 * may carry checksum and segmentation offloads both ways. Offloads the
 * kernel may hand us (TUNSETOFFLOAD) start at none and follow what the
 * receiver accepts (net_backend_set_offload). An existing tap (made with
 * `ip tuntap add dev NAME mode tap user $USER`) is attached without
 * privileges; creating one needs CAP_NET_ADMIN. A tap msivm created goes
 * away when msivm exits; the interface is left down and unconfigured.
 *
 * Errors: a write while the link is down fails with EIO (the frame is
 * dropped, logged at a rate limit); once the interface is deleted every
 * read and write fails with EBADFD: that is logged once and the backend
 * drops every frame from then on.
 */

#define TAP_OFFLOADS (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN)

struct tap {
	char ifname[NET_IFNAME_MAX];
	bool gone;                 /* the interface was deleted: reported once */
	uint64_t link_down_drops;  /* writes refused with EIO while the link was down */
	uint64_t write_errors;     /* other failed writes */
	struct ratelimit rl;
};

static unsigned tun_flags_of(unsigned off)
{
	return (off & NET_OFFLOAD_CSUM ? TUN_F_CSUM : 0) | (off & NET_OFFLOAD_TSO4 ? TUN_F_TSO4 : 0) |
	       (off & NET_OFFLOAD_TSO6 ? TUN_F_TSO6 : 0) | (off & NET_OFFLOAD_ECN ? TUN_F_TSO_ECN : 0);
}

/* Marks the interface gone (once, with a log line). Returns -ENODEV. */
static int tap_gone(struct net_backend *b, const char *op, int e)
{
	struct tap *t = b->priv;
	if (!t->gone)
		log_warn("tap '%s' went away (%s: %s); its frames are dropped from now on", t->ifname,
			 op, strerror(e));
	t->gone = true;
	return -ENODEV;
}

/* EIO: deleted interface, or only a link that is down? TUNGETIFF tells. */
static bool detached(int fd)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	return ioctl(fd, TUNGETIFF, &ifr) < 0 && errno == EBADFD;
}

static int tap_send(struct net_backend *b, unsigned q, const struct iovec *iov, int iovcnt)
{
	struct tap *t = b->priv;
	if (t->gone)
		return -ENODEV;
	int fd = b->rx_fd[q < b->nqueues ? q : 0];
	for (;;) {
		ssize_t n = writev(fd, iov, iovcnt);
		if (n >= 0)
			return 0;
		int e = errno;
		if (e == EINTR)
			continue;
		if (e == EBADFD || e == ENODEV || (e == EIO && detached(fd)))
			return tap_gone(b, "write", e);
		if (e == EIO) {
			t->link_down_drops++;
			log_ratelimited(&t->rl, LOG_INFO, "tap '%s' is down: frame dropped", t->ifname);
		} else {
			t->write_errors++;
			log_ratelimited(&t->rl, LOG_WARN, "tap '%s': write: %s; frame dropped", t->ifname,
					strerror(e));
		}
		return -e;
	}
}

static ssize_t tap_recv(struct net_backend *b, unsigned q, void *buf, size_t len)
{
	struct tap *t = b->priv;
	if (t->gone)
		return -ENODEV;
	for (;;) {
		ssize_t n = read(b->rx_fd[q], buf, len);
		if (n >= 0)
			return n;
		int e = errno;
		if (e == EINTR)
			continue;
		if (e == EAGAIN)
			return -EAGAIN;
		if (e == EBADFD || e == ENODEV || (e == EIO && detached(b->rx_fd[q])))
			return tap_gone(b, "read", e);
		log_ratelimited(&t->rl, LOG_WARN, "tap '%s': read: %s", t->ifname, strerror(e));
		return -e;
	}
}

static int tap_set_offload(struct net_backend *b, unsigned flags)
{
	struct tap *t = b->priv;
	if (!b->hdr_len || t->gone)
		return flags ? -EOPNOTSUPP : 0;
	for (unsigned q = 0; q < b->nqueues; q++)
		if (ioctl(b->rx_fd[q], TUNSETOFFLOAD, (unsigned long)tun_flags_of(flags)))
			return -errno;
	return 0;
}

static unsigned tap_stats(struct net_backend *b, struct net_be_stat *out, unsigned max)
{
	struct tap *t = b->priv;
	struct net_be_stat s[] = {
		{ "link_down_drops", t->link_down_drops },
		{ "write_errors", t->write_errors },
		{ "gone", t->gone },
	};
	unsigned n = sizeof(s) / sizeof(s[0]) < max ? sizeof(s) / sizeof(s[0]) : max;
	memcpy(out, s, n * sizeof(s[0]));
	return n;
}

static void tap_close(struct net_backend *b)
{
	for (unsigned q = 0; q < NET_BE_MAX_QUEUES; q++)
		if (b->rx_fd[q] >= 0) {
			close(b->rx_fd[q]);
			b->rx_fd[q] = -1;
		}
	free(b->priv);
	b->priv = NULL;
}

static const struct net_backend_ops tap_ops = {
	.send = tap_send,
	.recv = tap_recv,
	.set_offload = tap_set_offload,
	.stats = tap_stats,
	.close = tap_close,
};

/* Why TUNSETIFF failed, in words a user can act on. */
static const char *setiff_hint(int e, bool named)
{
	switch (e) {
	case EPERM:
		return named ? " (creating a tap needs CAP_NET_ADMIN; or create it first: "
			       "ip tuntap add dev NAME mode tap user $USER)"
			     : " (creating a tap needs CAP_NET_ADMIN; or name an existing one with ifname=)";
	case EBUSY:
		return " (the tap is in use by another process)";
	case EINVAL:
		return " (an interface of that name exists and is not a tap with these flags, "
		       "or its single/multi-queue mode differs)";
	default:
		return "";
	}
}

/* Opens queue q of the tap named in *name ("" on the first: the kernel picks). */
static int open_queue(struct net_backend *b, struct tap *t, unsigned q, unsigned flags,
		      struct error *err)
{
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, -errno, "cannot open /dev/net/tun: %s", strerror(errno));
	b->rx_fd[q] = fd;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = (short)flags;
	memcpy(ifr.ifr_name, t->ifname, sizeof(ifr.ifr_name));
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		int e = errno;
		return error_set(err, -e, "cannot %s tap '%s': %s%s", t->ifname[0] ? "attach to" : "create",
				 t->ifname[0] ? t->ifname : "(any)", strerror(e),
				 setiff_hint(e, t->ifname[0]));
	}
	memcpy(t->ifname, ifr.ifr_name, sizeof(t->ifname));
	t->ifname[sizeof(t->ifname) - 1] = '\0';
	if (flags & IFF_VNET_HDR) {
		int sz = NET_OFFLOAD_HDR_LEN;
		if (ioctl(fd, TUNSETVNETHDRSZ, &sz))
			return error_set(err, -errno, "tap '%s': TUNSETVNETHDRSZ: %s", t->ifname,
					 strerror(errno));
	}
	return 0;
}

/* The interface's MTU, or 0 if it cannot be read. Any socket answers SIOCGIFMTU; an AF_UNIX
 * one is what the seccomp filter allows after a guest reboot rebuilds the devices. */
static uint32_t tap_mtu(const char *ifname)
{
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	int ret = ioctl(s, SIOCGIFMTU, &ifr);
	close(s);
	return ret || ifr.ifr_mtu <= 0 ? 0 : (uint32_t)ifr.ifr_mtu;
}

int net_tap_open(struct net_backend *b, const struct net_open_cfg *cfg, struct error *err)
{
	struct tap *t = calloc(1, sizeof(*t));
	if (!t)
		return error_set(err, -ENOMEM, "tap: out of memory");
	b->ops = &tap_ops;
	b->priv = t;
	b->kind = "tap";
	b->nqueues = cfg->nqueues;
	snprintf(t->ifname, sizeof(t->ifname), "%s", cfg->ifname);

	unsigned features = 0;
	int probe = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (probe < 0)
		return error_set(err, -errno, "cannot open /dev/net/tun: %s", strerror(errno));
	if (ioctl(probe, TUNGETFEATURES, &features))
		features = IFF_TAP | IFF_NO_PI;
	close(probe);
	if (cfg->nqueues > 1 && !(features & IFF_MULTI_QUEUE))
		return error_set(err, -EOPNOTSUPP, "tap: %u queues asked for, but this kernel's tun "
				 "has no IFF_MULTI_QUEUE", cfg->nqueues);
	unsigned flags = IFF_TAP | IFF_NO_PI | (features & IFF_VNET_HDR) |
			 (cfg->nqueues > 1 ? IFF_MULTI_QUEUE : 0);
	for (unsigned q = 0; q < cfg->nqueues; q++) {
		int ret = open_queue(b, t, q, flags, err);
		if (ret)
			return ret;
	}
	if (flags & IFF_VNET_HDR) {
		b->hdr_len = NET_OFFLOAD_HDR_LEN;
		/* Probe what the kernel accepts, then start with none. */
		if (!ioctl(b->rx_fd[0], TUNSETOFFLOAD, (unsigned long)TAP_OFFLOADS))
			b->offloads = NET_OFFLOAD_CSUM | NET_OFFLOAD_TSO4 | NET_OFFLOAD_TSO6 |
				      NET_OFFLOAD_ECN;
		else if (!ioctl(b->rx_fd[0], TUNSETOFFLOAD, (unsigned long)TUN_F_CSUM))
			b->offloads = NET_OFFLOAD_CSUM;
		int ret = tap_set_offload(b, 0);
		if (ret)
			return error_set(err, ret, "tap '%s': TUNSETOFFLOAD: %s", t->ifname,
					 strerror(-ret));
	}
	b->mtu = tap_mtu(t->ifname);
	snprintf(b->desc, sizeof(b->desc), "tap %s", t->ifname);
	return 0;
}
