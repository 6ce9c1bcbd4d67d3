/* Firecracker's PATCH /drives/{id}: a drive's host file opened again (or a new one) under the running VM, through msivm's VM control. */
#ifndef MSIVM_FC_FC_DRIVE_H
#define MSIVM_FC_FC_DRIVE_H

#include <jansson.h>

#include "fc/fc.h"

/* Applies a checked PartialDrive `body` to the running VM: path_on_host is always opened again,
 * even when it is the path the drive has (Kata bind-mounts a container's disk over the same
 * path and sends the same PATCH to attach it, and again after unmounting it to detach), with
 * the requests in flight finished first; the guest learns the new size through a
 * configuration-change interrupt. A rate_limiter cannot change while the VM runs: refused.
 * fc->lock held. Returns 0 or -errno with a message. */
int fc_drive_patch(struct fc_vmm *fc, struct api_target *t, const json_t *body, struct error *e);

#endif
