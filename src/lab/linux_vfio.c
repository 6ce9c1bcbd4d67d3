/* Linux lab passthrough experiment: the --vfio device (a path, or auto: the one bound to vfio-pci) checked before any run. */
#include "lab/linux_lab.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Whether /sys/bus/pci/devices/NAME (or `path`) is driven by vfio-pci. */
static bool bound_to_vfio(const char *path)
{
	char link[PATH_MAX], drv[PATH_MAX];
	snprintf(link, sizeof(link), "%s/driver", path);
	ssize_t n = readlink(link, drv, sizeof(drv) - 1);
	if (n <= 0)
		return false;
	drv[n] = 0;
	const char *base = strrchr(drv, '/');
	return !strcmp(base ? base + 1 : drv, "vfio-pci");
}

int ll_vfio_resolve(struct ll_options *o)
{
	static const char dir[] = "/sys/bus/pci/devices";
	if (!strcmp(o->vfio, "auto")) {
		DIR *d = opendir(dir);
		unsigned found = 0;
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char p[sizeof(o->vfio_buf)];
			if (de->d_name[0] == '.' ||
			    snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p))
				continue;
			if (bound_to_vfio(p) && !found++)
				snprintf(o->vfio_buf, sizeof(o->vfio_buf), "%s", p);
		}
		if (d)
			closedir(d);
		if (found != 1) {
			fprintf(stderr, "msivm lab: --vfio auto found %u devices bound to vfio-pci in %s "
					"(it takes exactly one): name it, --vfio %s/DDDD:BB:DD.F\n",
				found, dir, dir);
			return -1;
		}
		o->vfio = o->vfio_buf;
	}
	if (strlen(o->vfio) >= sizeof(o->vfio_buf) - 1 || !bound_to_vfio(o->vfio)) {
		fprintf(stderr, "msivm lab: --vfio %s is no PCI device bound to vfio-pci (bind it: "
				"docs/vfio.md, \"Preparing the host\")\n", o->vfio);
		return -1;
	}
	return 0;
}
