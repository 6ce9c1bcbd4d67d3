/* KVM statistics: parse the binary stats fd (header, descriptors, data) into named counters. */
#include "vmm/kvm_stats.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static void add(struct kvm_stats *out, const char *name, uint64_t v)
{
	for (uint32_t i = 0; i < out->n; i++)
		if (!strcmp(out->s[i].name, name)) {
			out->s[i].value += v;
			return;
		}
	if (out->n == KVM_STATS_MAX)
		return;
	struct kvm_stat *s = &out->s[out->n++];
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->value = v;
}

int kvm_stats_open(int fd)
{
	int sfd = ioctl(fd, KVM_GET_STATS_FD, NULL);
	return sfd < 0 ? -errno : sfd;
}

int kvm_stats_accumulate(int sfd, struct kvm_stats *out)
{
	if (sfd < 0)
		return -EBADF;
	struct kvm_stats_header h;
	int ret = 0;
	uint8_t *descs = NULL;
	if (pread(sfd, &h, sizeof(h), 0) != sizeof(h)) {
		ret = -EIO;
		goto out;
	}
	size_t dsize = sizeof(struct kvm_stats_desc) + h.name_size;
	if (h.num_desc > 4096 || h.name_size > 4096) {
		ret = -EINVAL;
		goto out;
	}
	descs = malloc(dsize * h.num_desc);
	if (!descs) {
		ret = -ENOMEM;
		goto out;
	}
	if (pread(sfd, descs, dsize * h.num_desc, h.desc_offset) != (ssize_t)(dsize * h.num_desc)) {
		ret = -EIO;
		goto out;
	}
	for (uint32_t i = 0; i < h.num_desc; i++) {
		const struct kvm_stats_desc *d = (const void *)(descs + i * dsize);
		if (d->size != 1)
			continue; /* histograms are not counters */
		uint64_t v;
		if (pread(sfd, &v, sizeof(v), h.data_offset + d->offset) != sizeof(v))
			continue;
		char name[48];
		size_t nl = strnlen(d->name, h.name_size);
		snprintf(name, sizeof(name), "%.*s", (int)nl, d->name);
		add(out, name, v);
	}
out:
	free(descs);
	return ret;
}

uint64_t kvm_stats_get(const struct kvm_stats *st, const char *name)
{
	for (uint32_t i = 0; i < st->n; i++)
		if (!strcmp(st->s[i].name, name))
			return st->s[i].value;
	return 0;
}
