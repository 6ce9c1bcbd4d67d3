/* MSI-X: table/PBA accesses, mask and enable transitions, per-vector routes, pending replay. */
#include "pci/msix.h"

#include <errno.h>
#include <string.h>

#define MSI_ADDR_MASK 0xfff00000u
#define MSI_ADDR_BASE 0xfee00000u

uint64_t msix_bar_size(uint16_t nvec, uint32_t *pba_offset)
{
	uint64_t table = (uint64_t)nvec * MSIX_ENTRY_SIZE;
	uint64_t pba_off = (table + 0x7ff) & ~0x7ffULL; /* PBA on its own 2 KiB boundary */
	if (pba_off == 0)
		pba_off = 0x800;
	*pba_offset = (uint32_t)pba_off;
	uint64_t size = 0x1000;
	while (size < pba_off + 8)
		size <<= 1;
	return size;
}

int msix_init(struct msix *m, struct pci_func *f, struct gsi_routes *routes, uint16_t nvec,
	      unsigned bar, uint32_t pba_offset)
{
	struct msix_layout l = { .table_bar = bar, .pba_bar = bar, .table_offset = 0,
				 .pba_offset = pba_offset };
	return msix_init_layout(m, f, routes, nvec, &l);
}

int msix_init_layout(struct msix *m, struct pci_func *f, struct gsi_routes *routes,
		     uint16_t nvec, const struct msix_layout *l)
{
	memset(m, 0, sizeof(*m));
	if (nvec == 0 || nvec > MSIX_MAX_VECTORS || l->table_bar >= PCI_NUM_BARS ||
	    l->pba_bar >= PCI_NUM_BARS || (l->table_offset & 7) || (l->pba_offset & 7))
		return -EINVAL;
	if (pthread_mutex_init(&m->lock, NULL))
		return -ENOMEM;
	m->func = f;
	m->nvec = nvec;
	m->table_bar = (uint8_t)l->table_bar;
	m->pba_bar = (uint8_t)l->pba_bar;
	m->table_offset = l->table_offset;
	m->pba_offset = l->pba_offset;
	for (uint16_t i = 0; i < nvec; i++) {
		m->table[i].ctrl = MSIX_ENTRY_MASKED;
		int ret = irq_vec_init(&m->vecs[i], routes);
		if (ret) {
			m->nvec = (uint16_t)(i + 1); /* vector i may hold a GSI without an eventfd */
			msix_destroy(m);
			return ret;
		}
	}
	/* Message control: table size (N-1), enable and function mask writable. */
	uint8_t wmask[MSIX_CAP_LEN] = { 0 };
	wmask[3] = (MSIX_CTRL_ENABLE | MSIX_CTRL_FMASK) >> 8;
	int off = pci_func_add_cap(f, MSIX_CAP_ID, MSIX_CAP_LEN, wmask);
	if (off < 0) {
		msix_destroy(m);
		return off;
	}
	m->cap = (uint8_t)off;
	pci_cfg_set16(f, m->cap + 2, (uint16_t)(nvec - 1));
	pci_cfg_set32(f, m->cap + 4, m->table_offset | m->table_bar); /* table: offset | BIR */
	pci_cfg_set32(f, m->cap + 8, m->pba_offset | m->pba_bar);     /* PBA */
	return 0;
}

void msix_set_path(struct msix *m, enum irq_path path)
{
	for (uint16_t i = 0; i < m->nvec; i++)
		irq_vec_set_path(&m->vecs[i], path);
}

void msix_destroy(struct msix *m)
{
	for (uint16_t i = 0; i < m->nvec; i++)
		irq_vec_destroy(&m->vecs[i]);
	pthread_mutex_destroy(&m->lock);
}

static bool addr_valid(const struct msix_entry *e)
{
	return e->addr_hi == 0 && (e->addr_lo & MSI_ADDR_MASK) == MSI_ADDR_BASE;
}

/* True if a signal on vector i goes out now (lock held). */
static bool deliverable(const struct msix *m, uint16_t i)
{
	return m->enabled && !m->fmask && !(m->table[i].ctrl & MSIX_ENTRY_MASKED);
}

static void deliver(struct msix *m, uint16_t i)
{
	if (irq_vec_fire(&m->vecs[i]))
		m->stats[i].dropped++;
}

/* Vector i's share of collect_external (below): a signal another writer left in its eventfd
 * while it held no irqfd becomes its pending bit (lock held). */
static void collect_one(struct msix *m, uint16_t i)
{
	if (irq_vec_take_unbound(&m->vecs[i])) {
		m->pba |= 1ULL << i;
		m->stats[i].pended++;
	}
}

/* Brings vector i's route, irqfd and pending bit in line with its state (lock held). */
static void sync_vector(struct msix *m, uint16_t i)
{
	const struct msix_entry *e = &m->table[i];
	if (!deliverable(m, i) || !addr_valid(e)) {
		irq_vec_unbind(&m->vecs[i]);
		return;
	}
	/* Becoming deliverable: another writer's signals left in the eventfd go by the pending bit,
	 * so one taken by a PBA read and one after it are one interrupt at the unmask, not two. */
	if (!m->vecs[i].bound)
		collect_one(m, i);
	if (irq_vec_bind(&m->vecs[i], e->addr_lo, e->addr_hi, e->data))
		return;
	if (m->pba & (1ULL << i)) {
		m->pba &= ~(1ULL << i);
		m->stats[i].replayed++;
		deliver(m, i);
	}
}

static void sync_all(struct msix *m)
{
	for (uint16_t i = 0; i < m->nvec; i++)
		sync_vector(m, i);
}

/* A device writing the eventfds itself needs KVM's routes current before it fires: one
 * commit for whatever this guest write changed (nothing if nothing did). Lock held. */
static void commit_if_external(struct msix *m)
{
	if (m->commit_at_once && m->nvec)
		gsi_routes_commit(m->vecs[0].routes);
}

void msix_config_written(struct msix *m)
{
	uint16_t ctrl = pci_cfg_get16(m->func, m->cap + 2);
	pthread_mutex_lock(&m->lock);
	bool en = ctrl & MSIX_CTRL_ENABLE, fm = ctrl & MSIX_CTRL_FMASK;
	if (en != m->enabled || fm != m->fmask) {
		m->enabled = en;
		m->fmask = fm;
		sync_all(m);
		commit_if_external(m);
	}
	pthread_mutex_unlock(&m->lock);
}

bool msix_enabled(struct msix *m)
{
	pthread_mutex_lock(&m->lock);
	bool en = m->enabled;
	pthread_mutex_unlock(&m->lock);
	return en;
}

enum msix_path msix_signal(struct msix *m, uint16_t vec)
{
	enum msix_path path;
	pthread_mutex_lock(&m->lock);
	if (vec >= m->nvec || !m->enabled) {
		path = MSIX_DROPPED;
	} else if (!deliverable(m, vec)) {
		m->pba |= 1ULL << vec;
		m->stats[vec].pended++;
		path = MSIX_PENDED;
	} else if (!addr_valid(&m->table[vec])) {
		log_ratelimited(&m->rl, LOG_WARN, "%s: MSI-X vector %u has address 0x%x:%08x, "
				"not an x86 MSI address; interrupt dropped", m->func->name, vec,
				m->table[vec].addr_hi, m->table[vec].addr_lo);
		m->stats[vec].dropped++;
		path = MSIX_DROPPED;
	} else {
		m->stats[vec].irqfd++;
		deliver(m, vec);
		path = MSIX_DELIVERED;
	}
	pthread_mutex_unlock(&m->lock);
	return path;
}

/* Signals another writer of a vector's eventfd (vhost) made while the vector held no irqfd
 * (masked, lock held): they wait in the eventfd's count, which KVM would deliver when the irqfd
 * is assigned again. Taken into the pending bits here, so that the PBA shows them; the unmask
 * replays them like any other pending bit. */
static void collect_external(struct msix *m)
{
	for (uint16_t i = 0; i < m->nvec; i++)
		collect_one(m, i);
}

static void bad_access(struct msix *m, const char *dir, uint64_t off, uint32_t len)
{
	m->bad_accesses++;
	log_ratelimited(&m->rl, LOG_WARN, "%s: bad MSI-X %s of %u bytes at BAR offset 0x%llx",
			m->func->name, dir, len, (unsigned long long)off);
}

/* Accesses of 4 or 8 bytes, naturally aligned, inside [base, base+size). */
static bool in_region(uint64_t off, uint32_t len, uint64_t base, uint64_t size)
{
	return (len == 4 || len == 8) && off % len == 0 && off >= base && off - base + len <= size;
}

static void table_read(struct msix *m, uint64_t off, void *data, uint32_t len)
{
	uint64_t v = ~0ULL;
	if (in_region(off, len, 0, msix_table_len(m->nvec))) {
		const uint32_t *words = (const uint32_t *)&m->table[off / MSIX_ENTRY_SIZE];
		uint32_t w = (uint32_t)(off % MSIX_ENTRY_SIZE) / 4;
		v = words[w];
		if (len == 8)
			v |= (uint64_t)words[w + 1] << 32;
	} else {
		bad_access(m, "read", m->table_offset + off, len);
	}
	memcpy(data, &v, len);
}

static void pba_read(struct msix *m, uint64_t off, void *data, uint32_t len)
{
	uint64_t v = ~0ULL;
	if (in_region(off, len, 0, 8)) {
		collect_external(m);
		v = m->pba >> (8 * off);
	} else if (in_region(off, len, 0, msix_pba_len(m->nvec))) {
		v = 0; /* words past the 64 vectors msivm offers: nothing pending there */
	} else {
		bad_access(m, "read", m->pba_offset + off, len);
	}
	memcpy(data, &v, len);
}

static void write_word(struct msix *m, uint16_t i, uint32_t w, uint32_t v)
{
	uint32_t *words = (uint32_t *)&m->table[i];
	if (w == 3)
		v &= MSIX_ENTRY_MASKED; /* only the mask bit is writable in vector control */
	words[w] = v;
}

static void table_write(struct msix *m, uint64_t off, const void *data, uint32_t len)
{
	uint64_t v = 0;
	memcpy(&v, data, len);
	if (!in_region(off, len, 0, msix_table_len(m->nvec))) {
		bad_access(m, "write", m->table_offset + off, len);
		return;
	}
	uint16_t i = (uint16_t)(off / MSIX_ENTRY_SIZE);
	uint32_t w = (uint32_t)(off % MSIX_ENTRY_SIZE) / 4;
	write_word(m, i, w, (uint32_t)v);
	if (len == 8)
		write_word(m, i, w + 1, (uint32_t)(v >> 32));
	sync_vector(m, i);
	commit_if_external(m);
}

bool msix_bar_access(struct msix *m, unsigned bar, uint64_t off, void *data, uint32_t len,
		     bool write)
{
	bool table = bar == m->table_bar && off >= m->table_offset &&
		     off - m->table_offset < msix_table_len(m->nvec);
	bool pba = bar == m->pba_bar && off >= m->pba_offset &&
		   off - m->pba_offset < msix_pba_len(m->nvec);
	if (!table && !pba)
		return false;
	pthread_mutex_lock(&m->lock);
	if (table && write)
		table_write(m, off - m->table_offset, data, len);
	else if (table)
		table_read(m, off - m->table_offset, data, len);
	else if (!write)
		pba_read(m, off - m->pba_offset, data, len);
	else if (!in_region(off - m->pba_offset, len, 0, msix_pba_len(m->nvec)))
		bad_access(m, "write", off, len);
	/* else: PBA writes are ignored, it is read-only */
	pthread_mutex_unlock(&m->lock);
	return true;
}

static void msix_bar_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct msix *m = opaque;
	if (!msix_bar_access(m, m->table_bar, off, data, len, false)) {
		pthread_mutex_lock(&m->lock);
		bad_access(m, "read", off, len);
		pthread_mutex_unlock(&m->lock);
		memset(data, 0xff, len);
	}
}

static void msix_bar_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct msix *m = opaque;
	if (!msix_bar_access(m, m->table_bar, off, (void *)data, len, true)) {
		pthread_mutex_lock(&m->lock);
		bad_access(m, "write", off, len);
		pthread_mutex_unlock(&m->lock);
	}
}

const struct bus_ops msix_bar_ops = {
	.read = msix_bar_read,
	.write = msix_bar_write,
};
