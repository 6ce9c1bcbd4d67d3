/* virtio-console as a device type: its options (files, socket, cap), its files and device from the spec, counted for --stats, resized on SIGWINCH. */
#include "devices/device_type.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/parse.h"

enum { K_OUT, K_IN, K_SOCKET, K_MAX };

static const struct device_key console_keys[] = {
	{ "out", DEVICE_KEY_STRING, K_OUT },
	{ "in", DEVICE_KEY_STRING, K_IN },
	{ "socket", DEVICE_KEY_STRING, K_SOCKET },
	{ "max", DEVICE_KEY_SIZE, K_MAX },
	{ NULL, 0, 0 },
};

static void console_spec_init(struct vm_device_spec *d)
{
	d->console.max_out = VIRTIO_CONSOLE_OUT_MAX;
}

static int console_set(struct device_opts *o, const struct device_key *k, const char *val,
		       struct error *e)
{
	struct virtio_console_opts *c = &o->spec->console;
	if (k->id == K_MAX) {
		if (parse_size(val, &c->max_out))
			return device_opt_refuse(o, DEVICE_MSG_KEY, e, "bad console max '%.100s': use a "
						 "size such as 64M, or 0 for no cap", val);
		return 0;
	}
	char *dst = k->id == K_OUT ? c->out_path : k->id == K_IN ? c->in_path : c->sock_path;
	if (!val[0] || strlen(val) >= VIRTIO_CONSOLE_PATH_MAX)
		return device_opt_refuse(o, DEVICE_MSG_KEY, e, "%s %s=: needs a file name of at most "
					 "4095 bytes", o->name, k->name);
	snprintf(dst, VIRTIO_CONSOLE_PATH_MAX, "%s", val);
	return 0;
}

static int console_check(struct device_opts *o, struct error *e)
{
	if ((o->seen & DEVICE_SEEN(K_SOCKET)) && (o->seen & (DEVICE_SEEN(K_OUT) | DEVICE_SEEN(K_IN))))
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "socket= carries the console both "
					 "ways: drop out= and in=");
	return 0;
}

static json_t *path_or_null(const char *s) { return s[0] ? json_string(s) : json_null(); }

static const char *console_spec_print(const struct vm_device_spec *d, json_t *o)
{
	const struct virtio_console_opts *c = &d->console;
	char max[SIZE_TEXT_MAX];
	if (json_object_set_new(o, "out", path_or_null(c->out_path)))
		return "out";
	if (json_object_set_new(o, "in", path_or_null(c->in_path)))
		return "in";
	if (json_object_set_new(o, "socket", path_or_null(c->sock_path)))
		return "socket";
	json_object_set_new(o, "max", json_string(size_text(c->max_out, max)));
	return NULL;
}

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
	.usage = "add a virtio-console (one port); OPTS: out=FILE (guest output;\n"
		 "                     default: standard output), max=SIZE (output cap, default 64M,\n"
		 "                     0: none; a file counts from its size), in=FILE (input for the\n"
		 "                     guest, read until its end; default: none), socket=PATH (instead\n"
		 "                     of out= and in=: as --serial socket=) and every device's keys\n"
		 "                     (below), or \"\"\n",
	.keys = console_keys,
	.spec_init = console_spec_init,
	.spec_set = console_set,
	.spec_check = console_check,
	.spec_print = console_spec_print,
	.create = console_create,
	.destroy = console_destroy,
	.print_stats = console_print,
	.stats_json = console_json,
	.host_event = console_host_event,
};
