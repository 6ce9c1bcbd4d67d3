/* Virtio PCI_CFG capability: a window in config space onto the function's BARs (virtio 1.x 4.1.4.9). */
#include <endian.h>
#include <inttypes.h>

#include "virtio/virtio_pci_common.h"

/* struct virtio_pci_cfg_cap: the generic virtio capability (bar at 4, offset at 8, length at
 * 12) followed by pci_cfg_data (4 bytes at 16). The driver programs bar/offset/length, then a
 * write of pci_cfg_data writes `length` bytes at BAR+offset and a read of it reads them. */
#define CFG_CAP_LEN   20u
#define CFG_CAP_BAR   4u
#define CFG_CAP_OFF   8u
#define CFG_CAP_SIZE  12u
#define CFG_CAP_DATA  16u

int vpci_cfg_cap_add(struct virtio_pci *t)
{
	uint8_t wmask[CFG_CAP_LEN] = { 0 };
	wmask[CFG_CAP_BAR] = 0xff;
	for (unsigned i = CFG_CAP_OFF; i < CFG_CAP_LEN; i++)
		wmask[i] = 0xff; /* offset, length, data */
	int c = pci_func_add_cap(&t->func, VIRTIO_CAP_VNDR, CFG_CAP_LEN, wmask);
	if (c < 0)
		return c;
	t->func.cfg[c + 2] = CFG_CAP_LEN;
	t->func.cfg[c + 3] = VIRTIO_CAP_PCI_CFG;
	t->cfg_cap = (uint8_t)c;
	t->func.trap_off = (uint8_t)(c + CFG_CAP_DATA);
	t->func.trap_len = 4;
	return 0;
}

void vpci_cfg_cap_access(void *opaque, bool write)
{
	struct virtio_pci *t = opaque;
	struct pci_func *f = &t->func;
	uint32_t c = t->cfg_cap;
	uint32_t bar = pci_func_cfg_load(f, c + CFG_CAP_BAR, 1);
	uint32_t off = pci_func_cfg_load(f, c + CFG_CAP_OFF, 4);
	uint32_t len = pci_func_cfg_load(f, c + CFG_CAP_SIZE, 4);
	/* BARs are declared before the guest runs and never change: no lock needed to look. */
	const struct pci_bar *b = bar < PCI_NUM_BARS ? &f->bars[bar] : NULL;
	if (!b || !b->size || !b->ops || (len != 1 && len != 2 && len != 4) || off % len ||
	    off > b->size - len) {
		t->stats.cfg_window_refused++;
		log_ratelimited(&t->rl, LOG_WARN, "%s: PCI_CFG window %s of BAR%u offset 0x%x length %u "
				"refused (no such BAR, length not 1/2/4, unaligned or past the end)",
				t->info.name, write ? "write" : "read", bar, off, len);
		if (!write)
			pci_func_cfg_store(f, c + CFG_CAP_DATA, 4, 0);
		return;
	}
	t->stats.cfg_window++;
	uint32_t v = 0;
	if (write) {
		v = htole32(pci_func_cfg_load(f, c + CFG_CAP_DATA, len));
		b->ops->write(b->opaque, off, &v, len);
	} else {
		b->ops->read(b->opaque, off, &v, len);
		pci_func_cfg_store(f, c + CFG_CAP_DATA, len, le32toh(v));
	}
}
