/* VFIO MSI-X relay (relay=on, a lab/diagnostic mode): VFIO signals msivm's eventfds, the I/O thread reads each and delivers the vector itself. */
#include "vfio/vfio_dev.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

int vfio_relay_run(struct vfio_dev *d, uint16_t vec)
{
	uint64_t n = 0;
	if (vec >= d->relay.n || read(d->relay.vecs[vec].fd, &n, sizeof(n)) != sizeof(n) || !n)
		return -1;
	/* However many signals the count holds, one message: an edge interrupt, as the vector's
	 * irqfd would make of them. */
	return (int)msix_signal(&d->msix, vec);
}

static void relay_ready(void *opaque, uint32_t events)
{
	struct vfio_relay_vec *rv = opaque;
	(void)events;
	vfio_relay_run(rv->dev, rv->vec);
}

int vfio_relay_start(struct vfio_dev *d, struct evloop *loop, struct error *err)
{
	if (!d->has_msix)
		return error_set(err, -EINVAL, "%s: relay=on relays MSI-X, and the guest is offered "
				 "none (irq=msix and a device with MSI-X)", d->name);
	d->relay.loop = loop;
	d->relay.on = true;
	for (uint16_t i = 0; i < d->msix.nvec; i++) {
		struct vfio_relay_vec *rv = &d->relay.vecs[i];
		*rv = (struct vfio_relay_vec){ .dev = d, .vec = i, .fd = -1 };
		rv->h = (struct evloop_handler){ .cb = relay_ready, .opaque = rv };
		d->relay.n = (uint16_t)(i + 1);
		rv->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (rv->fd < 0)
			return error_set(err, -errno, "%s: relay eventfd: %s", d->name, strerror(errno));
		int ret = loop ? evloop_add(loop, rv->fd, EPOLLIN, &rv->h) : 0;
		if (ret)
			return error_set(err, ret, "%s: cannot watch the relay eventfd: %s", d->name,
					 strerror(-ret));
		rv->watched = loop != NULL;
	}
	return 0;
}

void vfio_relay_stop(struct vfio_dev *d)
{
	for (uint16_t i = 0; i < d->relay.n; i++) {
		struct vfio_relay_vec *rv = &d->relay.vecs[i];
		if (rv->watched)
			evloop_del(d->relay.loop, rv->fd);
		if (rv->fd >= 0)
			close(rv->fd);
		rv->fd = -1;
		rv->watched = false;
	}
	d->relay.n = 0;
}
