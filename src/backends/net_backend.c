/* Network backends, common part: option names, opening by kind, closing, optional-hook wrappers. */
#include "backends/net_backend.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/parse.h"

const char *const net_be_kind_names[NET_BE_NKINDS] = { "tap", "peer", "socket", "vhost" };
const char *const net_peer_mode_names[NET_PEER_NMODES] = { "responder", "sink", "source" };

int net_be_kind_parse(const char *s, enum net_be_kind *out)
{
	unsigned v;
	if (parse_word(s, net_be_kind_names, NET_BE_NKINDS, &v))
		return -EINVAL;
	*out = (enum net_be_kind)v;
	return 0;
}

int net_peer_mode_parse(const char *s, enum net_peer_mode *out)
{
	unsigned v;
	if (parse_word(s, net_peer_mode_names, NET_PEER_NMODES, &v))
		return -EINVAL;
	*out = (enum net_peer_mode)v;
	return 0;
}

struct net_backend *net_backend_alloc(void)
{
	struct net_backend *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	for (unsigned q = 0; q < NET_BE_MAX_QUEUES; q++)
		b->rx_fd[q] = -1;
	b->aux_fd = -1;
	b->vhost_fd = -1;
	return b;
}

int net_backend_open(struct net_backend **out, const struct net_open_cfg *cfg, struct error *err)
{
	*out = NULL;
	if (cfg->nqueues < 1 || cfg->nqueues > NET_BE_MAX_QUEUES)
		return error_set(err, -EINVAL, "network backend: %u queues, want 1 to %u",
				 cfg->nqueues, NET_BE_MAX_QUEUES);
	struct net_backend *b = net_backend_alloc();
	if (!b)
		return error_set(err, -ENOMEM, "network backend: out of memory");
	int ret;
	switch (cfg->kind) {
	case NET_BE_TAP:
		ret = net_tap_open(b, cfg, err);
		break;
	case NET_BE_PEER:
		ret = net_peer_open(b, cfg, err);
		break;
	case NET_BE_SOCKET:
		ret = net_socket_open(b, cfg, err);
		break;
	case NET_BE_VHOST:
		ret = net_vhost_open(b, cfg, err);
		break;
	default:
		ret = error_set(err, -EINVAL, "network backend: unknown kind %d", (int)cfg->kind);
		break;
	}
	if (ret) {
		net_backend_close(b);
		return ret;
	}
	*out = b;
	return 0;
}

void net_backend_close(struct net_backend *b)
{
	if (!b)
		return;
	if (b->vhost_fd >= 0)
		close(b->vhost_fd); /* first: vhost lets go of the tap */
	if (b->ops && b->ops->close)
		b->ops->close(b);
	free(b);
}

int net_backend_set_offload(struct net_backend *b, unsigned flags)
{
	return b->ops->set_offload ? b->ops->set_offload(b, flags) : (flags ? -EOPNOTSUPP : 0);
}

unsigned net_backend_stats(struct net_backend *b, struct net_be_stat *out, unsigned max)
{
	return b->ops->stats ? b->ops->stats(b, out, max) : 0;
}
