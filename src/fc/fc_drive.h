/* Firecracker's PATCH /drives/{id} and /network-interfaces/{id}: a drive's host file opened again (or a new one), rate limiters changed, under the running VM, through msivm's VM control. */
#ifndef MSIVM_FC_FC_DRIVE_H
#define MSIVM_FC_FC_DRIVE_H

#include <jansson.h>

#include "fc/fc.h"

/* Applies a checked PartialDrive `body` to the running VM: path_on_host is always opened again,
 * even when it is the path the drive has (Kata bind-mounts a container's disk over the same
 * path and sends the same PATCH to attach it, and again after unmounting it to detach), with
 * the requests in flight finished first; the guest learns the new size through a
 * configuration-change interrupt. A rate_limiter is applied to the running disk as Firecracker
 * updates one (fc_rate_limit_apply); a snapshot and GET /vm/config show the drive as it is
 * now. fc->lock held. Returns 0 or -errno with a message. */
int fc_drive_patch(struct fc_vmm *fc, struct api_target *t, const json_t *body, struct error *e);

/* Applies a checked PartialNetworkInterface `body` to the running VM: its rx_rate_limiter and
 * tx_rate_limiter, each direction's buckets apart, as fc_drive_patch does a drive's. fc->lock
 * held. Returns 0 or -errno with a message. */
int fc_net_patch(struct fc_vmm *fc, struct api_target *t, const json_t *body, struct error *e);

#endif
