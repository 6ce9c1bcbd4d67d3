/* VFIO device errors: a failed device access or ioctl logged, and the device marked broken when it no longer answers. */
#include "vfio/vfio_dev.h"

#include <string.h>

void vfio_dev_error(struct vfio_dev *d, bool fatal, const char *what, int err)
{
	__atomic_fetch_add(&d->stats.device_errors, 1, __ATOMIC_RELAXED);
	log_ratelimited(&d->rl, LOG_ERROR, "%s: %s failed: %s%s", d->name, what, strerror(-err),
			fatal && !d->broken ? "; the device no longer answers: its reads return "
					      "all-ones and its writes are dropped" : "");
	if (fatal)
		d->broken = true;
}
