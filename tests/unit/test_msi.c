/* Unit tests for MSI: capability layout, multiple messages, per-vector mask and pending bits, delivery. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_vm.h"
#include "pci/msi.h"
#include "pci/pci_func.h"

/* Capability layout (64-bit, per-vector masking). */
#define OFF_CTRL    2
#define OFF_ADDR_LO 4
#define OFF_ADDR_HI 8
#define OFF_DATA    12
#define OFF_MASK    16
#define OFF_PENDING 20
#define CTRL_ENABLE 0x0001
#define CTRL_64BIT  0x0080
#define CTRL_PVM    0x0100
#define MMC(c)      (((c) >> 1) & 7)
#define MME(c)      (((c) >> 4) & 7)
#define MSI_ADDR    0xfee00000u

struct fx {
	struct fake_vm *vm;
	struct pci_func f;
	struct msi m;
	bool msi_up;
};

static void cfg_written(void *opaque, uint32_t off, uint32_t len)
{
	struct fx *x = opaque;
	if (x->msi_up && off < (uint32_t)x->m.cap + MSI_CAP_LEN && off + len > x->m.cap)
		msi_config_written(&x->m);
}

static const struct pci_func_ops fops = { .config_written = cfg_written };

static int fx_new(void **state, uint32_t nvec)
{
	struct fx *x = calloc(1, sizeof(*x));
	if (!x || !(x->vm = fake_vm_new()))
		return -1;
	if (pci_func_init(&x->f, "msifn", 0x1af4, 0x1044, 0x00ff00, 0x1af4, 4, &x->vm->mmio,
			  fake_window()))
		return -1;
	x->f.ops = &fops;
	x->f.opaque = x;
	if (nvec) {
		if (msi_init(&x->m, &x->f, &x->vm->routes, nvec))
			return -1;
		x->msi_up = true;
	}
	*state = x;
	return 0;
}

static int setup4(void **state) { return fx_new(state, 4); }
static int setup3(void **state) { return fx_new(state, 3); }
static int setup_bare(void **state) { return fx_new(state, 0); }

static int teardown(void **state)
{
	struct fx *x = *state;
	if (x->msi_up)
		msi_destroy(&x->m);
	pci_func_destroy(&x->f);
	fake_vm_free(x->vm);
	free(x);
	return 0;
}

static uint32_t cr(struct fx *x, uint32_t off, uint32_t len)
{
	return pci_func_cfg_read(&x->f, x->m.cap + off, len);
}

static void cw(struct fx *x, uint32_t off, uint32_t len, uint32_t v)
{
	pci_func_cfg_write(&x->f, x->m.cap + off, len, v);
}

/* What a driver does: address and data first, then enable with `log2n` messages. */
static void enable(struct fx *x, uint16_t data, unsigned log2n)
{
	cw(x, OFF_ADDR_LO, 4, MSI_ADDR);
	cw(x, OFF_ADDR_HI, 4, 0);
	cw(x, OFF_DATA, 2, data);
	cw(x, OFF_CTRL, 2, CTRL_ENABLE | log2n << 4);
}

static uint64_t fired(struct fx *x, unsigned i)
{
	return efd_take(x->m.vecs[i].efd);
}

/* ---- layout ---- */

static void test_capability_layout(void **state)
{
	struct fx *x = *state;
	assert_int_equal(pci_func_cfg_read(&x->f, PCI_CAP_PTR, 1), x->m.cap);
	assert_int_equal(cr(x, 0, 1), MSI_CAP_ID);
	assert_int_not_equal(pci_func_cfg_read(&x->f, PCI_STATUS, 2) & PCI_STATUS_CAPS, 0);
	uint16_t c = (uint16_t)cr(x, OFF_CTRL, 2);
	assert_int_not_equal(c & CTRL_64BIT, 0);
	assert_int_not_equal(c & CTRL_PVM, 0);
	assert_int_equal(c & CTRL_ENABLE, 0);
	assert_int_equal(MMC(c), 2);            /* 4 messages */
	assert_int_equal(MME(c), 0);
	assert_int_equal(cr(x, OFF_MASK, 4), 0);
	assert_int_equal(cr(x, OFF_PENDING, 4), 0);
	assert_int_equal(msi_nr_enabled(&x->m), 0);
}

static void test_mmc_is_count_rounded_up_to_power_of_two(void **state)
{
	struct fx *x = *state;   /* 3 requested */
	assert_int_equal(MMC(cr(x, OFF_CTRL, 2)), 2);
	const struct { uint32_t n; unsigned mmc; } cases[] = {
		{ 1, 0 }, { 2, 1 }, { 5, 3 }, { 8, 3 }, { 9, 4 }, { 17, 5 }, { 32, 5 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pci_func *f = calloc(1, sizeof(*f));
		struct msi *m = calloc(1, sizeof(*m));
		assert_non_null(f);
		assert_non_null(m);
		assert_int_equal(pci_func_init(f, "n", 1, 2, 0, 0, 0, &x->vm->mmio, fake_window()), 0);
		assert_int_equal(msi_init(m, f, &x->vm->routes, cases[i].n), 0);
		assert_int_equal(MMC(pci_func_cfg_read(f, m->cap + OFF_CTRL, 2)), cases[i].mmc);
		/* Only the offered messages have writable mask bits. */
		pci_func_cfg_write(f, m->cap + OFF_MASK, 4, 0xffffffff);
		uint32_t n = 1u << cases[i].mmc;
		assert_int_equal(pci_func_cfg_read(f, m->cap + OFF_MASK, 4),
				 n == 32 ? 0xffffffffu : (1u << n) - 1);
		msi_destroy(m);
		pci_func_destroy(f);
		free(m);
		free(f);
	}
}

static void test_bad_message_counts_are_refused(void **state)
{
	struct fx *x = *state;
	struct msi *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	assert_int_equal(msi_init(m, &x->f, &x->vm->routes, 0), -EINVAL);
	assert_int_equal(msi_init(m, &x->f, &x->vm->routes, 33), -EINVAL);
	free(m);
	assert_int_equal(pci_func_cfg_read(&x->f, PCI_CAP_PTR, 1), 0);
}

static void test_read_only_fields_ignore_writes(void **state)
{
	struct fx *x = *state;
	cw(x, 0, 4, 0xffffffff);                 /* id, next, whole control word */
	uint16_t c = (uint16_t)cr(x, OFF_CTRL, 2);
	assert_int_equal(cr(x, 0, 1), MSI_CAP_ID);
	assert_int_equal(cr(x, 1, 1), 0);
	assert_int_equal(MMC(c), 2);
	assert_int_not_equal(c & CTRL_64BIT, 0);
	assert_int_not_equal(c & CTRL_PVM, 0);
	assert_int_equal(c & 0xfe00, 0);
	assert_int_not_equal(c & CTRL_ENABLE, 0);
	/* Address bits 1:0 are reserved; pending bits are the device's. */
	cw(x, OFF_ADDR_LO, 4, MSI_ADDR | 3);
	assert_int_equal(cr(x, OFF_ADDR_LO, 4), MSI_ADDR);
	cw(x, OFF_PENDING, 4, 0xffffffff);
	assert_int_equal(cr(x, OFF_PENDING, 4), 0);
	cw(x, OFF_DATA, 4, 0xffff1234);          /* bytes 14-15 are reserved */
	assert_int_equal(cr(x, OFF_DATA, 4), 0x1234);
}

/* ---- enabling ---- */

static void test_mme_above_mmc_is_clamped(void **state)
{
	struct fx *x = *state;
	enable(x, 0x40, 5);                      /* 32 asked, 4 offered */
	assert_int_equal(MME(cr(x, OFF_CTRL, 2)), 2);
	assert_int_equal(msi_nr_enabled(&x->m), 4);
	cw(x, OFF_CTRL, 2, CTRL_ENABLE | 7 << 4);  /* reserved encoding */
	assert_int_equal(MME(cr(x, OFF_CTRL, 2)), 2);
	cw(x, OFF_CTRL, 2, CTRL_ENABLE | 1 << 4);
	assert_int_equal(MME(cr(x, OFF_CTRL, 2)), 1);
	assert_int_equal(msi_nr_enabled(&x->m), 2);
}

static void test_one_message_fires_its_vector(void **state)
{
	struct fx *x = *state;
	enable(x, 0x45, 0);
	assert_int_equal(msi_nr_enabled(&x->m), 1);
	assert_true(x->m.vecs[0].bound);
	assert_false(x->m.vecs[1].bound);
	const struct gsi_msi_route *r = fake_route(x->vm, x->m.vecs[0].gsi);
	assert_true(r->present);
	assert_int_equal(r->addr_lo, MSI_ADDR);
	assert_int_equal(r->addr_hi, 0);
	assert_int_equal(r->data, 0x45);         /* one message: data as written */
	assert_int_equal(msi_signal(&x->m, 0), MSI_DELIVERED);
	assert_int_equal(fired(x, 0), 1);
	assert_int_equal(x->vm->routes.commits, 1);
	/* Any index folds onto the only message. */
	assert_int_equal(msi_signal(&x->m, 3), MSI_DELIVERED);
	assert_int_equal(fired(x, 0), 1);
	assert_int_equal(fired(x, 3), 0);
	assert_int_equal(x->m.delivered[0], 2);
	assert_int_equal(x->vm->routes.commits, 1);
}

static void test_multiple_messages_fire_their_own_vectors(void **state)
{
	struct fx *x = *state;
	enable(x, 0x41, 2);                      /* 4 messages; low data bits are the number */
	for (unsigned i = 0; i < 4; i++) {
		assert_true(x->m.vecs[i].bound);
		const struct gsi_msi_route *r = fake_route(x->vm, x->m.vecs[i].gsi);
		assert_true(r->present);
		assert_int_equal(r->addr_lo, MSI_ADDR);
		assert_int_equal(r->data, 0x40 | i);
	}
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(msi_signal(&x->m, i), MSI_DELIVERED);
		for (unsigned j = 0; j < 4; j++)
			assert_int_equal(fired(x, j), i == j);
	}
	assert_int_equal(x->vm->routes.commits, 1);
	assert_int_equal(msi_signal(&x->m, 6), MSI_DELIVERED);   /* 6 mod 4 */
	assert_int_equal(fired(x, 2), 1);
}

static void test_fewer_messages_enabled_than_offered(void **state)
{
	struct fx *x = *state;
	enable(x, 0x80, 1);                      /* 2 of 4 */
	assert_true(x->m.vecs[0].bound);
	assert_true(x->m.vecs[1].bound);
	assert_false(x->m.vecs[2].bound);
	assert_false(x->m.vecs[3].bound);
	assert_int_equal(fake_route(x->vm, x->m.vecs[1].gsi)->data, 0x81);
	assert_int_equal(msi_signal(&x->m, 3), MSI_DELIVERED);   /* 3 mod 2 */
	assert_int_equal(fired(x, 1), 1);
	assert_int_equal(fired(x, 3), 0);
	/* Going back to one message drops the other route. */
	cw(x, OFF_CTRL, 2, CTRL_ENABLE);
	assert_false(x->m.vecs[1].bound);
	assert_false(fake_route(x->vm, x->m.vecs[1].gsi)->present);
	assert_int_equal(fake_route(x->vm, x->m.vecs[0].gsi)->data, 0x80);
}

static void test_data_change_moves_the_route(void **state)
{
	struct fx *x = *state;
	enable(x, 0x40, 0);
	assert_int_equal(msi_signal(&x->m, 0), MSI_DELIVERED);
	cw(x, OFF_DATA, 2, 0x50);
	assert_int_equal(fake_route(x->vm, x->m.vecs[0].gsi)->data, 0x50);
	cw(x, OFF_ADDR_LO, 4, MSI_ADDR | 0x2000);
	assert_int_equal(fake_route(x->vm, x->m.vecs[0].gsi)->addr_lo, MSI_ADDR | 0x2000);
	assert_int_equal(msi_signal(&x->m, 0), MSI_DELIVERED);
	assert_int_equal(x->vm->routes.commits, 2);
	assert_int_equal(fired(x, 0), 2);
}

/* ---- masking ---- */

static void test_masked_message_pends_and_unmask_replays_once(void **state)
{
	struct fx *x = *state;
	enable(x, 0x40, 2);
	cw(x, OFF_MASK, 4, 1u << 1);
	assert_false(x->m.vecs[1].bound);
	assert_false(fake_route(x->vm, x->m.vecs[1].gsi)->present);
	assert_int_equal(msi_signal(&x->m, 1), MSI_PENDED);
	assert_int_equal(msi_signal(&x->m, 1), MSI_PENDED);   /* a bit, not a counter */
	assert_int_equal(fired(x, 1), 0);
	assert_int_equal(cr(x, OFF_PENDING, 4), 1u << 1);
	/* The others are unaffected. */
	assert_int_equal(msi_signal(&x->m, 2), MSI_DELIVERED);
	assert_int_equal(fired(x, 2), 1);

	cw(x, OFF_MASK, 4, 0);
	assert_true(x->m.vecs[1].bound);
	assert_int_equal(fired(x, 1), 1);
	assert_int_equal(cr(x, OFF_PENDING, 4), 0);
	assert_int_equal(x->m.replayed[1], 1);
	assert_int_equal(x->m.pended[1], 2);
	/* Later config writes replay nothing more. */
	cw(x, OFF_MASK, 4, 0);
	cw(x, OFF_DATA, 2, 0x40);
	assert_int_equal(fired(x, 1), 0);
}

static void test_pending_survives_unrelated_config_writes(void **state)
{
	struct fx *x = *state;
	enable(x, 0x40, 2);
	cw(x, OFF_MASK, 4, 0xf);
	assert_int_equal(msi_signal(&x->m, 0), MSI_PENDED);
	assert_int_equal(msi_signal(&x->m, 3), MSI_PENDED);
	cw(x, OFF_DATA, 2, 0x60);
	cw(x, OFF_MASK, 4, 0xe);                 /* unmask message 0 only */
	assert_int_equal(fired(x, 0), 1);
	assert_int_equal(fired(x, 3), 0);
	assert_int_equal(cr(x, OFF_PENDING, 4), 1u << 3);
	assert_int_equal(fake_route(x->vm, x->m.vecs[0].gsi)->data, 0x60);
	cw(x, OFF_MASK, 4, 0);
	assert_int_equal(fired(x, 3), 1);
	assert_int_equal(fake_route(x->vm, x->m.vecs[3].gsi)->data, 0x63);
}

/* ---- not delivering ---- */

static void test_disabled_msi_drops(void **state)
{
	struct fx *x = *state;
	assert_int_equal(msi_signal(&x->m, 0), MSI_DROPPED);
	assert_int_equal(cr(x, OFF_PENDING, 4), 0);
	assert_int_equal(x->m.dropped, 1);
	/* Programmed but not enabled. */
	cw(x, OFF_ADDR_LO, 4, MSI_ADDR);
	cw(x, OFF_DATA, 2, 0x40);
	cw(x, OFF_CTRL, 2, 2 << 4);
	assert_false(x->m.vecs[0].bound);
	assert_int_equal(msi_signal(&x->m, 0), MSI_DROPPED);
	/* Enabled, then disabled again. */
	cw(x, OFF_CTRL, 2, CTRL_ENABLE);
	assert_int_equal(msi_signal(&x->m, 0), MSI_DELIVERED);
	assert_int_equal(fired(x, 0), 1);
	cw(x, OFF_CTRL, 2, 0);
	assert_false(x->m.vecs[0].bound);
	assert_false(fake_route(x->vm, x->m.vecs[0].gsi)->present);
	assert_int_equal(msi_nr_enabled(&x->m), 0);
	assert_int_equal(msi_signal(&x->m, 0), MSI_DROPPED);
	assert_int_equal(fired(x, 0), 0);
	/* Masked while disabled: still dropped, nothing pends. */
	cw(x, OFF_MASK, 4, 1);
	assert_int_equal(msi_signal(&x->m, 0), MSI_DROPPED);
	assert_int_equal(cr(x, OFF_PENDING, 4), 0);
	assert_int_equal(x->m.dropped, 4);
}

static void test_non_msi_address_drops(void **state)
{
	struct fx *x = *state;
	cw(x, OFF_ADDR_LO, 4, 0x12345000);
	cw(x, OFF_DATA, 2, 0x40);
	cw(x, OFF_CTRL, 2, CTRL_ENABLE);
	assert_false(x->m.vecs[0].bound);
	assert_int_equal(msi_signal(&x->m, 0), MSI_DROPPED);
	assert_int_equal(fired(x, 0), 0);
	/* Upper address dword set: not an x86 MSI either. */
	cw(x, OFF_ADDR_LO, 4, MSI_ADDR);
	assert_true(x->m.vecs[0].bound);
	cw(x, OFF_ADDR_HI, 4, 1);
	assert_false(x->m.vecs[0].bound);
	assert_int_equal(msi_signal(&x->m, 0), MSI_DROPPED);
	cw(x, OFF_ADDR_HI, 4, 0);
	assert_int_equal(msi_signal(&x->m, 0), MSI_DELIVERED);
	assert_int_equal(fired(x, 0), 1);
}

/* A device writing the eventfds itself (commit_at_once: VFIO): msi_collect_pending, called
 * before a pending read, takes a masked message's eventfd count into its pending bit; without
 * that flag the eventfds are msivm's own and are left alone. */
static void test_collect_pending_takes_external_signals(void **state)
{
	struct fx *x = *state;
	enable(x, 0x40, 2);
	cw(x, OFF_MASK, 4, 1u << 3);
	uint64_t one = 1;
	assert_int_equal(write(x->m.vecs[3].efd, &one, 8), 8);
	msi_collect_pending(&x->m);
	assert_int_equal(cr(x, OFF_PENDING, 4), 0); /* not an external writer's eventfd */
	assert_int_equal(fired(x, 3), 1);

	x->m.commit_at_once = true;
	assert_int_equal(write(x->m.vecs[3].efd, &one, 8), 8);
	assert_int_equal(write(x->m.vecs[1].efd, &one, 8), 8); /* unmasked: KVM's irqfd reads it */
	msi_collect_pending(&x->m);
	assert_int_equal(cr(x, OFF_PENDING, 4), 1u << 3);
	assert_int_equal(fired(x, 1), 1);
	assert_int_equal(x->m.pended[3], 1);
	cw(x, OFF_MASK, 4, 0);
	assert_int_equal(fired(x, 3), 1);
	assert_int_equal(x->m.replayed[3], 1);
	assert_int_equal(cr(x, OFF_PENDING, 4), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup4, teardown)
	const struct CMUnitTest tests[] = {
		T(test_capability_layout),
		cmocka_unit_test_setup_teardown(test_mmc_is_count_rounded_up_to_power_of_two, setup3,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_message_counts_are_refused, setup_bare,
						teardown),
		T(test_read_only_fields_ignore_writes),
		T(test_mme_above_mmc_is_clamped),
		T(test_one_message_fires_its_vector),
		T(test_multiple_messages_fire_their_own_vectors),
		T(test_fewer_messages_enabled_than_offered),
		T(test_data_change_moves_the_route),
		T(test_masked_message_pends_and_unmask_replays_once),
		T(test_pending_survives_unrelated_config_writes),
		T(test_collect_pending_takes_external_signals),
		T(test_disabled_msi_drops),
		T(test_non_msi_address_drops),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
