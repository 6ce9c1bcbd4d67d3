/* Network backend vhost: a tap plus /dev/vhost-net, so the kernel moves frames between the tap and guest rings. */
#include "backends/net_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define VHOST_NET_DEV "/dev/vhost-net"

int net_vhost_open(struct net_backend *b, const struct net_open_cfg *cfg, struct error *err)
{
	if (cfg->nqueues != 1)
		return error_set(err, -EINVAL, "backend=vhost: %u queue pairs asked for; it drives one",
				 cfg->nqueues);
	int ret = net_tap_open(b, cfg, err);
	if (ret)
		return ret;
	b->kind = "vhost";
	if (b->hdr_len != NET_OFFLOAD_HDR_LEN)
		return error_set(err, -EOPNOTSUPP, "backend=vhost: this kernel's tap has no "
				 "IFF_VNET_HDR, which vhost-net needs");
	int fd = open(VHOST_NET_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return error_set(err, -e, "backend=vhost: cannot open %s: %s%s", VHOST_NET_DEV,
				 strerror(e), e == ENOENT ? " (is the vhost_net module loaded? "
				 "'modprobe vhost_net', or use backend=tap)" : "");
	}
	b->vhost_fd = fd;
	if (ioctl(fd, VHOST_SET_OWNER))
		return error_set(err, -errno, "backend=vhost: VHOST_SET_OWNER: %s", strerror(errno));
	if (ioctl(fd, VHOST_GET_FEATURES, &b->vhost_features))
		return error_set(err, -errno, "backend=vhost: VHOST_GET_FEATURES: %s",
				 strerror(errno));
	char tap[sizeof(b->desc) - 16];
	snprintf(tap, sizeof(tap), "%.200s", b->desc); /* "tap NAME" */
	snprintf(b->desc, sizeof(b->desc), "vhost-net on %s", tap);
	return 0;
}
