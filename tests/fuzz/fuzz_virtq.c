/* Fuzz target: the split-virtqueue walker (virtq_init/pop/push, indirect tables, loops, bounds) over guest RAM the input fills. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "virtio/virtq.h"

/* The fixture: exactly FZQ_RAM_SIZE bytes of heap, so ASan sees any access past guest RAM. */
static uint8_t *ram;
static struct virtq_chain *chain;
static uint8_t *scratch; /* gather/scatter bounce buffer */

#define SCRATCH_SIZE (VIRTQ_CHAIN_MAX * 64u)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(FZQ_RAM_SIZE);
	chain = malloc(sizeof(*chain));
	scratch = malloc(SCRATCH_SIZE);
	return ram && chain && scratch ? 0 : -1;
}

/* virtq_pop's promises about a chain it returned. */
static void check_chain(const struct virtq *q, const struct virtq_chain *c)
{
	FZ_CHECK(c->head < q->size);
	FZ_CHECK(c->n_out + c->n_in <= VIRTQ_CHAIN_MAX);
	uint64_t out = 0, inb = 0;
	for (uint32_t i = 0; i < c->n_out + c->n_in; i++) {
		const uint8_t *h = c->buf[i].host;
		FZ_CHECK(c->buf[i].len > 0);
		FZ_CHECK(h >= ram && h + c->buf[i].len <= ram + FZQ_RAM_SIZE);
		if (i < c->n_out)
			out += c->buf[i].len;
		else
			inb += c->buf[i].len;
	}
	FZ_CHECK(out == c->out_bytes && inb == c->in_bytes);
}

/* Input: see fuzz_ops.h (virtqueue target). Each round's action byte:
 * bits 0-2: 0-3 pop and push, 4 pop and unpop, 5 set_notify(bit 3),
 * 6 has_work + avail_pending, 7 pop and keep; bits 4-7 scale the written length. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct guest_mem gm;
	uint16_t qsize = (uint16_t)(1u << (fz_u8(&in) % 16));
	uint8_t flags = fz_u8(&in);
	uint64_t desc, avail, used;
	if (flags & 2) {
		desc = fz_u64(&in);
		avail = fz_u64(&in);
		used = fz_u64(&in);
	} else {
		desc = fz_u16(&in);
		avail = fz_u16(&in);
		used = fz_u16(&in);
	}
	uint8_t rounds = fz_u8(&in);
	uint8_t actions[256];
	for (unsigned i = 0; i < rounds; i++)
		actions[i] = fz_u8(&in);
	memset(ram, 0, FZQ_RAM_SIZE);
	memcpy(ram, in.p, in.left < FZQ_RAM_SIZE ? in.left : FZQ_RAM_SIZE);
	if (guest_mem_init(&gm, ram, FZQ_RAM_SIZE, 0xC0000000ull, 0x100000000ull))
		abort();

	struct virtq q;
	memset(&q, 0, sizeof(q));
	if (virtq_init(&q, &gm, "fuzz q0", qsize, desc, avail, used, flags & 1)) {
		FZ_CHECK(virtq_pop(&q, chain) == -EIO);
		return 0;
	}
	uint16_t held = 0; /* popped, not pushed (for unpop) */
	for (unsigned i = 0; i < rounds; i++) {
		uint8_t a = actions[i];
		switch (a & 7) {
		case 4:
		case 7: {
			int got = virtq_pop(&q, chain);
			FZ_CHECK(got == 1 || got == 0 || got == -EIO);
			if (got == 1) {
				check_chain(&q, chain);
				held++;
				if ((a & 7) == 4) {
					virtq_unpop(&q, held);
					held = 0;
				}
			}
			break;
		}
		case 5:
			virtq_set_notify(&q, a & 8);
			break;
		case 6:
			(void)virtq_has_work(&q);
			(void)virtq_avail_pending(&q);
			break;
		default: {
			int got = virtq_pop(&q, chain);
			FZ_CHECK(got == 1 || got == 0 || got == -EIO);
			if (got != 1)
				break;
			check_chain(&q, chain);
			uint32_t g = chain->out_bytes < SCRATCH_SIZE ? chain->out_bytes : SCRATCH_SIZE;
			virtq_chain_gather(chain, a >> 4, scratch, g);
			uint32_t w = (uint32_t)((uint64_t)chain->in_bytes * (a >> 4) / 15u);
			if (w > SCRATCH_SIZE)
				w = SCRATCH_SIZE;
			virtq_chain_scatter(chain, scratch, w);
			virtq_push(&q, chain->head, w);
			(void)virtq_should_notify(&q);
			held = 0; /* earlier held chains stay with the device (never unpopped) */
			break;
		}
		}
	}
	return 0;
}
