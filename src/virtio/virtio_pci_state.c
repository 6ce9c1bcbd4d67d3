/* Virtio-pci snapshot state: save reads the registers under the locks; load replays a driver's writes through the guest-facing handlers, then the indices. */
#include "virtio/virtio_pci_state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/hex.h"
#include "virtio/virtio_pci_common.h"

/* ---- save ---- */

void virtio_pci_quiesce(struct virtio_pci *t)
{
	pthread_mutex_lock(&t->lock);
	if (t->ops->quiesce)
		t->ops->quiesce(t->opaque);
	vpci_hold_flush(t);
	pthread_mutex_unlock(&t->lock);
}

static json_t *hex_json(const void *buf, size_t len)
{
	char text[2 * PCI_CFG_SIZE + 1];
	char *p = len <= PCI_CFG_SIZE ? text : malloc(2 * len + 1);
	if (!p)
		return NULL;
	hex_encode(buf, len, p);
	json_t *j = json_string(p);
	if (p != text)
		free(p);
	return j;
}

static json_t *msix_save(struct msix *m)
{
	uint64_t pba = 0;
	msix_bar_ops.read(m, m->pba_offset, &pba, 8); /* takes external signals into the bits */
	pthread_mutex_lock(&m->lock);
	json_t *o = json_pack("{s:o,s:I}", "table",
			      hex_json(m->table, (size_t)m->nvec * MSIX_ENTRY_SIZE), "pba",
			      (json_int_t)pba);
	pthread_mutex_unlock(&m->lock);
	return o;
}

static json_t *queue_save(const struct vpci_queue *q)
{
	const struct virtq *v = &q->vq;
	return json_pack("{s:i,s:i,s:b,s:I,s:I,s:I,s:i,s:i,s:i,s:b,s:b}", "size", q->size,
			 "msix_vector", q->msix_vector, "enabled", q->enabled,
			 "desc", (json_int_t)q->desc, "driver", (json_int_t)q->driver,
			 "device", (json_int_t)q->device, "last_avail", v->last_avail,
			 "used_idx", v->used_idx, "signalled_used", v->signalled_used,
			 "signalled_used_valid", v->signalled_used_valid, "notify_off",
			 v->notify_off);
}

json_t *virtio_pci_state_save(struct virtio_pci *t, struct error *err)
{
	pthread_mutex_lock(&t->lock);
	json_t *own = NULL;
	if (t->ops->save && !(own = t->ops->save(t->opaque, err))) {
		pthread_mutex_unlock(&t->lock);
		return NULL;
	}
	pthread_mutex_lock(&t->func.lock);
	json_t *cfg = hex_json(t->func.cfg, PCI_CFG_SIZE);
	pthread_mutex_unlock(&t->func.lock);
	json_t *qs = json_array();
	for (uint16_t q = 0; q < t->info.nqueues; q++) {
		virtq_flush(&t->queues[q].vq);
		json_array_append_new(qs, queue_save(&t->queues[q]));
	}
	json_t *o = json_pack("{s:s,s:i,s:o,s:I,s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:o}",
			      "name", t->info.name, "device_id", t->info.device_id, "config", cfg,
			      "driver_features", (json_int_t)t->driver_features,
			      "negotiated", (json_int_t)t->negotiated, "status", t->status,
			      "config_generation", t->config_generation, "queue_select",
			      t->queue_select, "config_vector", t->config_vector, "dfselect",
			      t->dfselect, "gfselect", t->gfselect, "isr", t->isr, "queues", qs);
	if (t->has_msix)
		json_object_set_new(o, "msix", msix_save(&t->msix));
	json_object_set_new(o, "device", own ? own : json_object());
	pthread_mutex_unlock(&t->lock);
	return o;
}

/* ---- load ---- */

static int bad(struct error *err, const struct virtio_pci *t, const char *what)
{
	return error_set(err, -EINVAL, "%s: the saved transport's %s is missing or invalid",
			 t->info.name, what);
}

/* A number field in [0, max]. */
static int get_uint(const json_t *o, const char *key, uint64_t max, uint64_t *out)
{
	const json_t *v = json_object_get(o, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
		return -EINVAL;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_hex(const json_t *o, const char *key, void *buf, size_t len)
{
	const json_t *v = json_object_get(o, key);
	return json_is_string(v) ? hex_decode(json_string_value(v), json_string_length(v), buf, len)
				 : -EINVAL;
}

static void common_write(struct virtio_pci *t, uint64_t off, uint64_t v, uint32_t len)
{
	vpci_common_write(t, off, &v, len);
}

/* The MSI-X table through the guest's BAR handler (every entry masked on the way, so no
 * route exists for a half-written one; then its saved control word). */
static int msix_load(struct virtio_pci *t, const json_t *o, uint64_t *pba, struct error *err)
{
	struct msix_entry tab[MSIX_MAX_VECTORS];
	size_t len = (size_t)t->msix.nvec * MSIX_ENTRY_SIZE;
	if (!json_is_object(o) || get_hex(o, "table", tab, len) ||
	    get_uint(o, "pba", UINT64_MAX >> 1, pba))
		return bad(err, t, "MSI-X table");
	for (uint16_t v = 0; v < t->msix.nvec; v++) {
		uint64_t base = (uint64_t)v * MSIX_ENTRY_SIZE;
		uint32_t words[4] = { tab[v].addr_lo, tab[v].addr_hi, tab[v].data, tab[v].ctrl };
		uint32_t masked = MSIX_ENTRY_MASKED;
		msix_bar_ops.write(&t->msix, base + 12, &masked, 4);
		for (unsigned w = 0; w < 4; w++)
			msix_bar_ops.write(&t->msix, base + 4 * w, &words[w], 4);
	}
	return 0;
}

/* The config space through the guest's config writes: BARs, capabilities (MSI-X and MSI
 * enables), interrupt line, then the command register (decode on: BARs mapped, the notify
 * ioeventfds placed). Read-only bytes stay what this msivm made; a saved function with other
 * identities is refused. */
static int config_load(struct virtio_pci *t, const uint8_t *cfg, struct error *err)
{
	struct pci_func *f = &t->func;
	if (memcmp(cfg, f->cfg, 4) || cfg[PCI_CAP_PTR] != f->cfg[PCI_CAP_PTR])
		return error_set(err, -EINVAL, "%s: the saved PCI function is another device",
				 t->info.name);
	for (uint32_t off = PCI_BAR0; off < PCI_BAR0 + 4 * PCI_NUM_BARS; off += 4)
		pci_func_cfg_write(f, off, 4, pci_cfg_get32_raw(cfg, off));
	for (uint32_t off = 0x40; off < PCI_CFG_SIZE; off += 4) {
		if (f->trap_len && off < f->trap_off + f->trap_len && off + 4 > f->trap_off)
			continue; /* the PCI_CFG window's data: an access, not state */
		pci_func_cfg_write(f, off, 4, pci_cfg_get32_raw(cfg, off));
	}
	pci_func_cfg_write(f, PCI_INT_LINE, 1, cfg[PCI_INT_LINE]);
	pci_func_cfg_write(f, PCI_COMMAND, 2, pci_cfg_get32_raw(cfg, PCI_COMMAND) & 0xffff);
	return 0;
}

/* One queue's registers as the driver wrote them, enabled if it was; then its indices. */
static int queue_load(struct virtio_pci *t, uint16_t q, const json_t *o, struct error *err)
{
	uint64_t size, vec, en, desc, drv, dev, last, used, sig, sigv, noff;
	if (!json_is_object(o) || get_uint(o, "size", VIRTQ_MAX_SIZE, &size) ||
	    get_uint(o, "msix_vector", 0xffff, &vec) || get_uint(o, "desc", UINT64_MAX >> 1, &desc) ||
	    get_uint(o, "driver", UINT64_MAX >> 1, &drv) ||
	    get_uint(o, "device", UINT64_MAX >> 1, &dev) ||
	    get_uint(o, "last_avail", 0xffff, &last) || get_uint(o, "used_idx", 0xffff, &used) ||
	    get_uint(o, "signalled_used", 0xffff, &sig))
		return bad(err, t, "queue registers");
	const json_t *jen = json_object_get(o, "enabled"), *jsv = json_object_get(o, "signalled_used_valid"),
		     *jno = json_object_get(o, "notify_off");
	if (!json_is_boolean(jen) || !json_is_boolean(jsv) || !json_is_boolean(jno))
		return bad(err, t, "queue flags");
	en = json_is_true(jen);
	sigv = json_is_true(jsv);
	noff = json_is_true(jno);
	common_write(t, VPCI_Q_SELECT, q, 2);
	common_write(t, VPCI_Q_SIZE, size, 2);
	common_write(t, VPCI_Q_DESC_LO, desc, 8);
	common_write(t, VPCI_Q_DRIVER_LO, drv, 8);
	common_write(t, VPCI_Q_DEVICE_LO, dev, 8);
	common_write(t, VPCI_Q_MSIX, vec, 2);
	if (!en)
		return 0;
	common_write(t, VPCI_Q_ENABLE, 1, 2);
	struct vpci_queue *vq = &t->queues[q];
	if (!vq->enabled)
		return error_set(err, -EINVAL, "%s: saved queue %u cannot be enabled again (see the "
				 "log)", t->info.name, q);
	vq->vq.last_avail = (uint16_t)last;
	vq->vq.used_idx = vq->vq.published_idx = (uint16_t)used;
	vq->vq.signalled_used = (uint16_t)sig;
	vq->vq.signalled_used_valid = sigv;
	if (noff)
		virtq_set_notify(&vq->vq, false);
	return 0;
}

/* Feature negotiation and the status bits before DRIVER_OK, as the driver did them. */
static int features_load(struct virtio_pci *t, const json_t *o, uint8_t status, struct error *err)
{
	uint64_t feats;
	if (get_uint(o, "driver_features", UINT64_MAX >> 1, &feats))
		return bad(err, t, "driver features");
	for (uint32_t half = 0; half < 2; half++) {
		common_write(t, VPCI_GFSELECT, half, 4);
		common_write(t, VPCI_GF, (uint32_t)(feats >> (32 * half)), 4);
	}
	uint8_t early = status & (VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
	if (early)
		common_write(t, VPCI_STATUS, early, 1);
	if ((status & VIRTIO_STATUS_FEATURES_OK) && !(t->status & VIRTIO_STATUS_FEATURES_OK))
		return error_set(err, -EINVAL, "%s: the saved driver features 0x%" PRIx64 " are refused "
				 "by this device", t->info.name, feats);
	return 0;
}

/* What was pending stays pending: signalled again now that every mask is in place. */
static void pending_load(struct virtio_pci *t, uint64_t pba, const uint8_t *cfg)
{
	for (uint16_t v = 0; t->has_msix && v < t->msix.nvec; v++)
		if (pba >> v & 1)
			msix_signal(&t->msix, v);
	if (t->has_msi) {
		uint32_t pend = pci_cfg_get32_raw(cfg, t->msi.cap + MSI_OFF_PENDING);
		for (uint32_t i = 0; i < MSI_MAX_VECTORS; i++)
			if (pend >> i & 1)
				msi_signal(&t->msi, i);
	}
}

static int load_locked(struct virtio_pci *t, const json_t *o, struct error *err)
{
	uint8_t cfg[PCI_CFG_SIZE];
	uint64_t pba = 0, status, gen, qsel, cvec, dfs, gfs, isr, devid;
	const json_t *qs = json_object_get(o, "queues");
	if (!json_is_object(o) || get_hex(o, "config", cfg, sizeof(cfg)))
		return bad(err, t, "config space");
	if (get_uint(o, "device_id", 0xffff, &devid) || devid != t->info.device_id)
		return error_set(err, -EINVAL, "%s: the saved device is of another type", t->info.name);
	if (get_uint(o, "status", 0xff, &status) || get_uint(o, "config_generation", 0xff, &gen) ||
	    get_uint(o, "queue_select", 0xffff, &qsel) || get_uint(o, "config_vector", 0xffff, &cvec) ||
	    get_uint(o, "dfselect", UINT32_MAX, &dfs) || get_uint(o, "gfselect", UINT32_MAX, &gfs) ||
	    get_uint(o, "isr", 0xff, &isr))
		return bad(err, t, "common registers");
	if (!json_is_array(qs) || json_array_size(qs) != t->info.nqueues)
		return bad(err, t, "queue list");
	int ret = 0;
	if (t->has_msix)
		ret = msix_load(t, json_object_get(o, "msix"), &pba, err);
	else if (json_object_get(o, "msix"))
		return bad(err, t, "MSI-X table (this device has none)");
	if (!ret)
		ret = config_load(t, cfg, err);
	if (!ret && status)
		ret = features_load(t, o, (uint8_t)status, err);
	for (uint16_t q = 0; !ret && q < t->info.nqueues; q++)
		ret = queue_load(t, q, json_array_get(qs, q), err);
	if (ret)
		return ret;
	common_write(t, VPCI_MSIX_CONFIG, cvec, 2);
	if (t->ops->load && (ret = t->ops->load(t->opaque, json_object_get(o, "device"), err)))
		return ret;
	t->config_generation = (uint8_t)gen;
	if (status & VIRTIO_STATUS_DRIVER_OK)
		common_write(t, VPCI_STATUS, status & ~(uint64_t)VIRTIO_STATUS_NEEDS_RESET, 1);
	if (status & VIRTIO_STATUS_NEEDS_RESET)
		virtio_pci_set_needs_reset(t, "it needed a reset when it was saved");
	common_write(t, VPCI_Q_SELECT, qsel, 2);
	common_write(t, VPCI_DFSELECT, dfs, 4);
	common_write(t, VPCI_GFSELECT, gfs, 4);
	pending_load(t, pba, cfg);
	vpci_isr_restore(t, (uint8_t)isr);
	return 0;
}

int virtio_pci_state_load(struct virtio_pci *t, const json_t *state, struct error *err)
{
	pthread_mutex_lock(&t->lock);
	int ret = load_locked(t, state, err);
	pthread_mutex_unlock(&t->lock);
	return ret;
}
