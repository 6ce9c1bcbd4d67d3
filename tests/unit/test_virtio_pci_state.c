/* Unit tests for snapshot state of the virtio-pci transport: save a driven virtio-rng, load it into a new one, and go on; bad states refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio_rng.h"
#include "fake_driver.h"
#include "fake_vm.h"
#include "pci/msi.h"
#include "pci/msix.h"
#include "virtio/virtio_pci.h"
#include "virtio/virtio_pci_common.h"
#include "virtio/virtio_pci_state.h"

#define INTX_GSI  17
#define QSIZE     8
#define DESC_GPA  0x1000u
#define AVAIL_GPA 0x2000u
#define USED_GPA  0x3000u
#define DATA_GPA  0x10000u
#define BUF_LEN   512u
#define MSI_ADDR  0xfee00000u
#define MSI_OFF_CTRL 2
#define MSI_OFF_ADDR 4
#define MSI_OFF_DATA 12
#define MSI_OFF_MASK 16
#define ALL_OK (VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK | \
		VIRTIO_STATUS_DRIVER_OK)

/* One virtio-rng over its own fake VM: the source, or the restored copy. */
struct side {
	struct fake_vm *vm;
	struct virtio_rng *rng;
	struct virtio_pci *t;
	uint16_t avail_idx;
};

struct fx {
	enum irq_mode mode;
	struct side src, dst;
};

static int side_new(struct side *s, enum irq_mode mode)
{
	struct virtio_pci_config cfg = { .mode = mode, .vectors = -1 };
	struct error err;
	if (!(s->vm = fake_vm_new()) || !(s->rng = calloc(1, sizeof(*s->rng))) ||
	    virtio_rng_init(s->rng, 0, VIRTIO_RNG_GETRANDOM, &cfg, &s->vm->mem, -1, &s->vm->routes,
			    NULL, &s->vm->mmio, fake_window(), &err))
		return -1;
	s->t = &s->rng->pci;
	return virtio_pci_attach_intx(s->t, INTX_GSI);
}

static void side_free(struct side *s)
{
	if (s->rng) {
		virtio_rng_destroy(s->rng);
		free(s->rng);
	}
	fake_vm_free(s->vm);
}

static int setup(void **state, enum irq_mode mode)
{
	struct fx *x = calloc(1, sizeof(*x));
	if (!x || side_new(&x->src, mode) || side_new(&x->dst, mode))
		return -1;
	x->mode = mode;
	*state = x;
	return 0;
}
static int setup_msix(void **state) { return setup(state, IRQ_MODE_MSIX); }
static int setup_msi(void **state) { return setup(state, IRQ_MODE_MSI); }
static int setup_intx(void **state) { return setup(state, IRQ_MODE_INTX); }

static int teardown(void **state)
{
	struct fx *x = *state;
	side_free(&x->src);
	side_free(&x->dst);
	free(x);
	return 0;
}

/* ---- the guest's side ---- */

static void ram16(struct side *s, uint64_t gpa, uint16_t v)
{
	v = htole16(v);
	memcpy(s->vm->ram + gpa, &v, 2);
}

static uint16_t used_idx(struct side *s)
{
	uint16_t v;
	memcpy(&v, s->vm->ram + USED_GPA + 2, 2);
	return le16toh(v);
}

/* One device-writable buffer as descriptor (avail_idx % QSIZE), made available and kicked. */
static void request(struct side *s)
{
	uint16_t i = s->avail_idx % QSIZE;
	uint8_t *d = s->vm->ram + DESC_GPA + 16u * i;
	uint64_t a = htole64(DATA_GPA + (uint64_t)i * BUF_LEN);
	uint32_t l = htole32(BUF_LEN);
	uint16_t f = htole16(VIRTQ_DESC_F_WRITE);
	memset(d, 0, 16);
	memcpy(d, &a, 8);
	memcpy(d + 8, &l, 4);
	memcpy(d + 12, &f, 2);
	ram16(s, AVAIL_GPA + 4 + 2u * i, i);
	s->avail_idx++;
	ram16(s, AVAIL_GPA + 2, s->avail_idx);
	virtio_pci_kick(s->t, 0);
}

static void msix_entry(struct side *s, unsigned vec, uint32_t data, bool masked)
{
	uint32_t words[4] = { MSI_ADDR, 0, data, masked };
	for (unsigned w = 0; w < 4; w++)
		msix_bar_ops.write(&s->t->msix, vec * MSIX_ENTRY_SIZE + 4u * w, &words[w], 4);
}

/* The driver's bring-up: every offered feature, queue 0 with vector 1 (MSI-X), DRIVER_OK. */
static void bring_up(struct fx *x)
{
	struct side *s = &x->src;
	if (x->mode == IRQ_MODE_MSIX) {
		pci_func_cfg_write(&s->t->func, s->t->msix.cap + 2, 2, MSIX_CTRL_ENABLE);
		msix_entry(s, 0, 0x40, false);
		msix_entry(s, 1, 0x41, false);
	} else if (x->mode == IRQ_MODE_MSI) {
		uint32_t cap = s->t->msi.cap;
		pci_func_cfg_write(&s->t->func, cap + MSI_OFF_ADDR, 4, MSI_ADDR);
		pci_func_cfg_write(&s->t->func, cap + MSI_OFF_DATA, 2, 0x50);
		pci_func_cfg_write(&s->t->func, cap + MSI_OFF_CTRL, 2, 1 | 1 << 4); /* 2 messages */
	}
	vdrv_negotiate(s->t, 1ULL << VIRTIO_F_EVENT_IDX); /* every completion notifies */
	vdrv_write(s->t, VPCI_MSIX_CONFIG, 0, 2);
	vdrv_write(s->t, VPCI_Q_SELECT, 0, 2);
	vdrv_write(s->t, VPCI_Q_MSIX, 1, 2);
	vdrv_enable_queue(s->t, 0, QSIZE, DESC_GPA, AVAIL_GPA, USED_GPA);
	vdrv_write(s->t, VPCI_STATUS, ALL_OK, 1);
	assert_int_equal(vdrv_read(s->t, VPCI_STATUS, 1), ALL_OK);
}

/* Save the source, copy its RAM, load into the destination. Returns load's result. */
static int restore(struct fx *x, struct error *err)
{
	virtio_pci_quiesce(x->src.t);
	json_t *st = virtio_pci_state_save(x->src.t, err);
	assert_non_null(st);
	memcpy(x->dst.vm->ram, x->src.vm->ram, FAKE_RAM_SIZE);
	x->dst.avail_idx = x->src.avail_idx;
	int ret = virtio_pci_state_load(x->dst.t, st, err);
	json_decref(st);
	return ret;
}

/* ---- tests ---- */

/* A request completed on a masked vector: its PBA bit is saved and, after the restore, the
 * unmask delivers it once; the queue goes on from the saved indices. */
static void test_msix_pending_bit_and_queue_continue(void **state)
{
	struct fx *x = *state;
	bring_up(x);
	request(&x->src);
	assert_int_equal(used_idx(&x->src), 1);
	assert_int_equal(efd_take(x->src.t->msix.vecs[1].efd), 1);
	msix_entry(&x->src, 1, 0x41, true); /* the driver masks the queue's vector */
	request(&x->src);
	assert_int_equal(used_idx(&x->src), 2);
	assert_int_equal(x->src.t->msix.pba, 1u << 1);
	struct error err = { "" };
	assert_int_equal(restore(x, &err), 0);
	struct virtio_pci *t = x->dst.t;
	assert_int_equal(vdrv_read(t, VPCI_STATUS, 1), ALL_OK);
	assert_int_equal(t->negotiated, x->src.t->negotiated);
	assert_true(t->queues[0].enabled);
	assert_int_equal(t->queues[0].vq.last_avail, 2);
	assert_int_equal(t->queues[0].vq.used_idx, 2);
	assert_int_equal(t->queues[0].msix_vector, 1);
	assert_int_equal(t->config_vector, 0);
	assert_true(msix_enabled(&t->msix));
	assert_int_equal(t->msix.pba, 1u << 1);   /* still pending, not delivered */
	assert_int_equal(efd_take(t->msix.vecs[1].efd), 0);
	assert_memory_equal(t->msix.table, x->src.t->msix.table, 2 * MSIX_ENTRY_SIZE);
	msix_entry(&x->dst, 1, 0x41, false);      /* the restored driver unmasks */
	assert_int_equal(efd_take(t->msix.vecs[1].efd), 1);
	assert_int_equal(t->msix.pba, 0);
	request(&x->dst);                         /* and the queue goes on where it was */
	assert_int_equal(used_idx(&x->dst), 3);
	assert_int_equal(efd_take(t->msix.vecs[1].efd), 1);
}

/* MSI: a masked message's pending bit survives and is delivered at the unmask. */
static void test_msi_pending_bit(void **state)
{
	struct fx *x = *state;
	bring_up(x);
	uint32_t cap = x->src.t->msi.cap;
	pci_func_cfg_write(&x->src.t->func, cap + MSI_OFF_MASK, 4, 1u << 1);
	request(&x->src);
	assert_int_equal(efd_take(x->src.t->msi.vecs[1].efd), 0);
	struct error err = { "" };
	assert_int_equal(restore(x, &err), 0);
	struct virtio_pci *t = x->dst.t;
	assert_int_equal(msi_nr_enabled(&t->msi), 2);
	assert_int_equal(pci_func_cfg_read(&t->func, cap + MSI_OFF_MASK, 4), 1u << 1);
	assert_int_equal(pci_func_cfg_read(&t->func, cap + MSI_OFF_PENDING, 4), 1u << 1);
	assert_int_equal(efd_take(t->msi.vecs[1].efd), 0);
	pci_func_cfg_write(&t->func, cap + MSI_OFF_MASK, 4, 0);
	assert_int_equal(efd_take(t->msi.vecs[1].efd), 1);
}

/* INTx: a cause the guest has not read (ISR) raises the restored line again. */
static void test_intx_line_raised_again(void **state)
{
	struct fx *x = *state;
	bring_up(x);
	request(&x->src);
	assert_int_equal(efd_take(x->src.t->intx.fd), 1);
	struct error err = { "" };
	assert_int_equal(restore(x, &err), 0);
	assert_true(x->dst.t->intx_level);
	assert_int_equal(efd_take(x->dst.t->intx.fd), 1);
	assert_int_equal(vdrv_bar0_read(x->dst.t, VPCI_ISR_OFF, 1), 1); /* read: cleared */
	assert_int_equal(vdrv_bar0_read(x->dst.t, VPCI_ISR_OFF, 1), 0);
}

/* A saved state with `key` of the transport (or of queue 0 if q) replaced by `v`. */
static json_t *tampered(struct fx *x, const char *key, bool q, json_t *v)
{
	struct error err = { "" };
	json_t *st = virtio_pci_state_save(x->src.t, &err);
	assert_non_null(st);
	json_t *obj = q ? json_array_get(json_object_get(st, "queues"), 0) : st;
	json_object_set_new(obj, key, v);
	return st;
}

static void expect_refused(struct fx *x, json_t *st, const char *msg)
{
	struct error err = { "" };
	side_free(&x->dst); /* a fresh transport each time, as a restore has */
	memset(&x->dst, 0, sizeof(x->dst));
	assert_int_equal(side_new(&x->dst, x->mode), 0);
	memcpy(x->dst.vm->ram, x->src.vm->ram, FAKE_RAM_SIZE);
	int ret = virtio_pci_state_load(x->dst.t, st, &err);
	if (ret != -EINVAL || !strstr(err.msg, msg))
		fail_msg("load returned %d, '%s'; want -EINVAL and '%s'", ret, err.msg, msg);
	json_decref(st);
}

/* Values a driver could not have set are refused, with the field named; so are another device
 * type, a malformed config space or MSI-X table, and a queue the device cannot enable. */
static void test_bad_states_refused(void **state)
{
	struct fx *x = *state;
	bring_up(x);
	request(&x->src);
	expect_refused(x, tampered(x, "device_id", false, json_integer(2)), "another type");
	expect_refused(x, tampered(x, "config", false, json_string("00")), "config space");
	expect_refused(x, tampered(x, "status", false, json_string("x")), "common registers");
	expect_refused(x, tampered(x, "driver_features", false, json_integer(1ll << 40)),
		       "are refused by this device");
	expect_refused(x, tampered(x, "size", true, json_integer(6)), "cannot be enabled");
	expect_refused(x, tampered(x, "desc", true, json_integer(0xffff0)), "cannot be enabled");
	expect_refused(x, tampered(x, "last_avail", true, json_integer(70000)), "queue registers");
	expect_refused(x, tampered(x, "queues", false, json_array()), "queue list");
	json_t *st = tampered(x, "status", false, json_integer(ALL_OK));
	json_object_set_new(json_object_get(st, "msix"), "table", json_string("zz"));
	expect_refused(x, st, "MSI-X table");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_msix_pending_bit_and_queue_continue, setup_msix,
						teardown),
		cmocka_unit_test_setup_teardown(test_msi_pending_bit, setup_msi, teardown),
		cmocka_unit_test_setup_teardown(test_intx_line_raised_again, setup_intx, teardown),
		cmocka_unit_test_setup_teardown(test_bad_states_refused, setup_msix, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
