/* virtio-console as a device type: its files and device from the spec, counted for --stats, resized on SIGWINCH. */
#include "devices/device_type.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

static void *console_create(const struct device_env *env, const struct vm_device_spec *spec,
			    unsigned index, struct virtio_pci **pci, struct error *err)
{
	struct virtio_console *c = calloc(1, sizeof(*c));
	if (!c) {
		error_set(err, -ENOMEM, "out of memory for virtio-console");
		return NULL;
	}
	struct virtio_console_io io;
	if (virtio_console_open_io(&spec->console, STDOUT_FILENO, &io, err)) {
		free(c);
		return NULL;
	}
	if (virtio_console_init(c, index, &io, &spec->irq, env->mem, env->vm_fd, env->routes,
				env->loop, env->mmio, env->window, err)) {
		virtio_console_destroy(c); /* closes the files */
		free(c);
		return NULL;
	}
	*pci = &c->pci;
	return c;
}

static void console_destroy(void *dev)
{
	virtio_console_destroy(dev);
	free(dev);
}

static void console_print(const void *dev, FILE *out)
{
	const struct virtio_console *c = dev;
	const struct virtio_console_stats *cs = &c->stats;
	const struct vpci_irq_stats *s = &c->pci.stats;
	fprintf(out, "  %s: %" PRIu64 " bytes out in %" PRIu64 " buffers (%" PRIu64 " dropped), %"
		PRIu64 " bytes in in %" PRIu64 " buffers; %" PRIu64 " kicks (%" PRIu64
		" by MMIO exit), %" PRIu64 " ISR reads, %" PRIu64
		" interrupts suppressed by the driver\n", c->name, cs->bytes_out, cs->chains_out,
		cs->bytes_dropped, cs->bytes_in, cs->chains_in, s->kicks, s->kicks_mmio,
		s->isr_reads, s->suppressed);
}

static void console_json(const void *dev, json_t *dj)
{
	const struct virtio_console_stats *cs = &((const struct virtio_console *)dev)->stats;
	json_object_set_new(dj, "bytes", json_integer((json_int_t)(cs->bytes_out + cs->bytes_in)));
	json_object_set_new(dj, "bytes_out", json_integer((json_int_t)cs->bytes_out));
	json_object_set_new(dj, "bytes_dropped", json_integer((json_int_t)cs->bytes_dropped));
	json_object_set_new(dj, "buffers_out", json_integer((json_int_t)cs->chains_out));
	json_object_set_new(dj, "bytes_in", json_integer((json_int_t)cs->bytes_in));
	json_object_set_new(dj, "buffers_in", json_integer((json_int_t)cs->chains_in));
}

static int console_host_event(void *dev, unsigned ev)
{
	if (!(ev & DEVICE_EV_WINCH))
		return -1;
	virtio_console_resize(dev);
	return 0;
}

const struct device_type console_device_type = {
	.name = "console",
	.create = console_create,
	.destroy = console_destroy,
	.print_stats = console_print,
	.stats_json = console_json,
	.host_event = console_host_event,
};
