/* Seed generator: writes small valid and near-valid inputs for every fuzz target under corpus/<target>/. */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_ops.h"

/* One input under construction. */
struct seed {
	uint8_t b[32768];
	uint8_t *p;
};

static const char *root; /* corpus directory */

static void start(struct seed *s) { s->p = s->b; }
static void put(struct seed *s, uint64_t v, unsigned n) { s->p = fz_put(s->p, v, n); }
static void bytes(struct seed *s, const void *d, size_t n) { memcpy(s->p, d, n); s->p += n; }

static void save(const char *target, const char *name, const struct seed *s)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, target);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", root, target, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(s->b, 1, (size_t)(s->p - s->b), f) != (size_t)(s->p - s->b) || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* ---- the virtio driver program (fuzz_ops.h) ---- */

static void hdr(struct seed *s, uint8_t mode, uint8_t setup, uint64_t drop, uint8_t dev)
{
	start(s);
	put(s, mode, 1);
	put(s, setup, 1);
	put(s, drop, 8);
	put(s, dev, 1);
}

/* A descriptor in the data area (asel 0) at data offset `off`. */
static void desc(struct seed *s, uint8_t q, uint8_t idx, uint16_t off, uint16_t len, uint8_t flags,
		 uint8_t next)
{
	put(s, FZ_OP_DESC, 1);
	put(s, q, 1); put(s, idx, 1); put(s, 0, 1); put(s, off, 2); put(s, len, 2);
	put(s, flags, 1); put(s, next, 1);
}

static void avail(struct seed *s, uint8_t q, uint16_t head) { put(s, FZ_OP_AVAIL, 1); put(s, q, 1); put(s, head, 2); }
static void kick(struct seed *s, uint8_t q) { put(s, FZ_OP_KICK, 1); put(s, q, 1); }
static void step(struct seed *s) { put(s, FZ_OP_STEP, 1); put(s, 0, 1); }

static void ram(struct seed *s, uint32_t off, const void *d, uint8_t n)
{
	put(s, FZ_OP_RAM, 1); put(s, off, 4); put(s, n, 1); bytes(s, d, n);
}

static void bar0(struct seed *s, int write, uint16_t off, uint8_t len, uint64_t v)
{
	put(s, write ? FZ_OP_WRITE : FZ_OP_READ, 1);
	put(s, off, 2);
	put(s, len - 1u, 1);
	if (write)
		put(s, v, 8);
}

#define NEXT 1
#define WRITE 2
#define INDIRECT 4
#define LOG2Q(n) ((n) << 4)

static void seeds_rng(const char *t)
{
	struct seed s;
	for (uint8_t mode = 0; mode < 4; mode++) {
		char name[32];
		hdr(&s, mode, LOG2Q(3), 0, 0);
		desc(&s, 0, 0, 0, 64, WRITE, 0);
		avail(&s, 0, 0);
		kick(&s, 0);
		step(&s);
		snprintf(name, sizeof(name), "one-buffer-mode%u", mode);
		save(t, name, &s);
	}
	hdr(&s, 0, LOG2Q(3), 0, 0);       /* a chain of two, then an indirect table */
	desc(&s, 0, 0, 0, 16, WRITE | NEXT, 1);
	desc(&s, 0, 1, 64, 16, WRITE, 0);
	avail(&s, 0, 0);
	uint8_t ind[32] = { 0 };
	fz_put(ind, FZ_DATA + 0x100, 8); fz_put(ind + 8, 32, 4); fz_put(ind + 12, WRITE | NEXT, 2); fz_put(ind + 14, 1, 2);
	fz_put(ind + 16, FZ_DATA + 0x200, 8); fz_put(ind + 24, 32, 4); fz_put(ind + 28, WRITE, 2);
	ram(&s, FZ_DATA + 0x1000, ind, 32);
	desc(&s, 0, 2, 0x1000, 32, INDIRECT, 0);
	avail(&s, 0, 2);
	kick(&s, 0);
	save(t, "chain-and-indirect", &s);
	hdr(&s, 0, LOG2Q(3), 0, 0);       /* a loop: near-valid */
	desc(&s, 0, 0, 0, 16, WRITE | NEXT, 1);
	desc(&s, 0, 1, 16, 16, WRITE | NEXT, 0);
	avail(&s, 0, 0);
	kick(&s, 0);
	save(t, "loop", &s);
}

/* virtio-blk request: header at data+off, data, status. */
static void blk_req(struct seed *s, uint8_t head, uint16_t off, uint32_t type, uint64_t sector,
		    uint16_t dlen, uint8_t dflags)
{
	uint8_t h[16] = { 0 };
	fz_put(h, type, 4);
	fz_put(h + 8, sector, 8);
	ram(s, FZ_DATA + off, h, 16);
	desc(s, 0, head, off, 16, NEXT, (uint8_t)(head + 1));
	if (dlen) {
		desc(s, 0, (uint8_t)(head + 1), (uint16_t)(off + 0x1000), dlen, dflags | NEXT, (uint8_t)(head + 2));
		desc(s, 0, (uint8_t)(head + 2), (uint16_t)(off + 0x800), 1, WRITE, 0);
	} else {
		desc(s, 0, (uint8_t)(head + 1), (uint16_t)(off + 0x800), 1, WRITE, 0);
	}
	avail(s, 0, head);
}

static void seeds_blk(const char *t)
{
	struct seed s;
	hdr(&s, 0, LOG2Q(4), 0, 0);
	blk_req(&s, 0, 0, 0 /* IN */, 0, 512, WRITE);
	blk_req(&s, 3, 0x20, 1 /* OUT */, 1, 1024, 0);
	blk_req(&s, 6, 0x40, 4 /* FLUSH */, 0, 0, 0);
	blk_req(&s, 8, 0x60, 8 /* GET_ID */, 0, 20, WRITE);
	kick(&s, 0);
	step(&s);
	save(t, "in-out-flush-getid", &s);
	hdr(&s, 3, LOG2Q(4), 1ull << 9 /* no FLUSH: writethrough */, 0);
	blk_req(&s, 0, 0, 1, 127, 512, 0);
	blk_req(&s, 3, 0x20, 0, 128, 512, WRITE);      /* past the end */
	kick(&s, 0);
	save(t, "writethrough-past-end-intx", &s);
	hdr(&s, 1, LOG2Q(4), 0, 1 /* read-only */);
	uint8_t seg[16] = { 0 };
	fz_put(seg, 4, 8); fz_put(seg + 8, 8, 4);
	ram(&s, FZ_DATA + 0x3000, seg, 16);
	blk_req(&s, 0, 0, 11 /* DISCARD */, 0, 0, 0);
	desc(&s, 0, 1, 0x3000, 16, NEXT, 2);
	desc(&s, 0, 2, 0x800, 1, WRITE, 0);
	kick(&s, 0);
	save(t, "discard-ro", &s);
	hdr(&s, 0, LOG2Q(2), 0, 2 | 1 << 2 /* io_uring, two queues */);
	blk_req(&s, 0, 0, 13 /* WRITE_ZEROES */, 0, 0, 0);
	kick(&s, 0);
	kick(&s, 1);
	step(&s);
	save(t, "uring-two-queues", &s);
}

static void seeds_net(const char *t)
{
	struct seed s;
	/* TX an ARP request for 10.0.2.2 on queue 1; RX buffers on queue 0. */
	uint8_t f[12 + 42] = { 0 };
	uint8_t *e = f + 12;
	memset(e, 0xff, 6);
	uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x00 };
	memcpy(e + 6, mac, 6);
	e[12] = 0x08; e[13] = 0x06;
	uint8_t arp[28] = { 0, 1, 8, 0, 6, 4, 0, 1 };
	memcpy(arp + 8, mac, 6);
	arp[14] = 10; arp[15] = 0; arp[16] = 2; arp[17] = 15;
	arp[24] = 10; arp[25] = 0; arp[26] = 2; arp[27] = 2;
	memcpy(e + 14, arp, 28);
	for (uint8_t mode = 0; mode < 4; mode += 3) {
		hdr(&s, mode, LOG2Q(3), 0, 0);
		for (uint8_t i = 0; i < 4; i++) {
			desc(&s, 0, i, (uint16_t)(0x4000 + i * 0x800), 0x800, WRITE, 0);
			avail(&s, 0, i);
		}
		kick(&s, 0);
		ram(&s, FZ_DATA, f, sizeof(f));
		desc(&s, 1, 0, 0, 12, NEXT, 1);
		desc(&s, 1, 1, 12, 42, 0, 0);
		avail(&s, 1, 0);
		kick(&s, 1);
		step(&s);
		save(t, mode ? "arp-intx" : "arp-msix", &s);
	}
	/* Two pairs with the control queue (index 4): VQ_PAIRS_SET 2. */
	hdr(&s, 0, LOG2Q(3), 0, 1);
	uint8_t cmd[4] = { 4, 0, 2, 0 };
	ram(&s, FZ_DATA + 0x100, cmd, 4);
	desc(&s, 4, 0, 0x100, 2, NEXT, 1);
	desc(&s, 4, 1, 0x102, 2, NEXT, 2);
	desc(&s, 4, 2, 0x200, 1, WRITE, 0);
	avail(&s, 4, 0);
	kick(&s, 4);
	save(t, "ctrl-mq-pairs", &s);
	/* Source peer, mergeable RX buffers of 256 bytes. */
	hdr(&s, 0, LOG2Q(3), 0, 2 << 3);
	for (uint8_t i = 0; i < 8; i++) {
		desc(&s, 0, i, (uint16_t)(0x4000 + i * 0x100), 0x100, WRITE, 0);
		avail(&s, 0, i);
	}
	kick(&s, 0);
	step(&s);
	save(t, "source-mergeable", &s);
}

static void seeds_console(const char *t)
{
	struct seed s;
	hdr(&s, 0, LOG2Q(3), 0, 0);
	s.p[-1] = 3;
	bytes(&s, "abc", 3);                 /* host input */
	desc(&s, 0, 0, 0x100, 64, WRITE, 0);
	avail(&s, 0, 0);
	kick(&s, 0);
	ram(&s, FZ_DATA, "hello\n", 6);
	desc(&s, 1, 0, 0, 6, 0, 0);
	avail(&s, 1, 0);
	kick(&s, 1);
	step(&s);
	save(t, "rx-and-tx", &s);
	hdr(&s, 3, LOG2Q(3), 0, 0);
	desc(&s, 1, 0, 0, 6, WRITE, 0);      /* a writable buffer on transmitq */
	avail(&s, 1, 0);
	kick(&s, 1);
	bar0(&s, 0, 0x2000, 4, 0);           /* device config */
	save(t, "tx-writable-intx", &s);
}

static void seeds_virtio_pci(const char *t)
{
	struct seed s;
	hdr(&s, 0, 1, 0, 0);                 /* raw: the status machine by hand */
	bar0(&s, 1, 0x14, 1, 0);
	bar0(&s, 1, 0x14, 1, 1);
	bar0(&s, 1, 0x14, 1, 3);
	bar0(&s, 1, 0x00, 4, 1);
	bar0(&s, 0, 0x04, 4, 0);
	bar0(&s, 1, 0x08, 4, 1);
	bar0(&s, 1, 0x0c, 4, 1);
	bar0(&s, 1, 0x14, 1, 11);
	bar0(&s, 0, 0x14, 1, 0);
	bar0(&s, 1, 0x16, 2, 0);
	bar0(&s, 0, 0x18, 2, 0);
	bar0(&s, 1, 0x18, 2, 8);
	bar0(&s, 1, 0x20, 8, FZ_DESC(0));
	bar0(&s, 1, 0x28, 4, FZ_AVAIL(0));
	bar0(&s, 1, 0x2c, 4, 0);
	bar0(&s, 1, 0x30, 8, FZ_USED(0));
	bar0(&s, 1, 0x1c, 2, 1);
	bar0(&s, 1, 0x14, 1, 15);
	bar0(&s, 0, 0x1000, 1, 0);           /* ISR */
	bar0(&s, 0, 0x2000, 8, 0);           /* device config (none on rng) */
	save(t, "status-machine-rng", &s);
	hdr(&s, 0, LOG2Q(3), 0, 1 | 3 << 1); /* console, 3 MSI-X vectors */
	bar0(&s, 0, 0x2000, 2, 0);
	bar0(&s, 0, 0x2002, 2, 0);
	bar0(&s, 0, 0x2004, 4, 0);
	bar0(&s, 0, 0x2006, 4, 0);           /* straddles the end */
	bar0(&s, 1, 0x1a, 2, 7);             /* vector out of range */
	put(&s, FZ_OP_MSIX, 1); put(&s, 0x800, 2); put(&s, 0x80 | 7, 1); put(&s, 0, 8); /* PBA read */
	put(&s, FZ_OP_MSIX, 1); put(&s, 0x0c, 2); put(&s, 3, 1); put(&s, 1, 8);        /* mask vector 0 */
	save(t, "console-config-msix", &s);
	hdr(&s, 2, LOG2Q(3), 0, 0);          /* MSI, then a reset in the middle */
	bar0(&s, 1, 0x14, 1, 0);
	bar0(&s, 0, 0x18, 2, 0);
	put(&s, FZ_OP_BRINGUP, 1);
	save(t, "msi-reset", &s);
}

/* ---- fuzz_pci ---- */

static void pio(struct seed *s, uint8_t port, uint8_t len, uint32_t v)
{
	put(s, FZP_PIO, 1); put(s, port, 1); put(s, len, 1); put(s, v, 4);
}

static void seeds_pci(const char *t)
{
	struct seed s;
	start(&s);
	put(&s, 65, 1);                      /* vectors from the mode */
	pio(&s, 0, 2, 0x80000800);           /* 00:01.0 vendor/device */
	pio(&s, 4, 0x80 | 2, 0);
	pio(&s, 0, 2, 0x80000810);           /* BAR0 sizing */
	pio(&s, 4, 2, 0xffffffff);
	pio(&s, 4, 0x80 | 2, 0);
	pio(&s, 4, 2, 0xc0100000);           /* moved */
	pio(&s, 0, 2, 0x80000804);
	pio(&s, 4, 1, 0x06);                 /* memory decode + master */
	put(&s, FZP_BAR, 1); put(&s, 0, 1); put(&s, 0, 1); put(&s, 0x14, 2); put(&s, 0x80, 1); put(&s, 0, 8);
	save("fuzz_pci", "cf8-bar-sizing-move", &s);
	start(&s);
	put(&s, 4, 1);                       /* three MSI-X vectors */
	put(&s, FZP_ECAM, 1); put(&s, 0x08000, 4); put(&s, 0x83, 1); put(&s, 0, 8);       /* 00:01.0 id */
	put(&s, FZP_ECAM, 1); put(&s, 0x08004, 4); put(&s, 1, 1); put(&s, 0x06, 8);       /* decode on */
	put(&s, FZP_ECAM, 1); put(&s, 0x08042, 4); put(&s, 1, 1); put(&s, 0x8000, 8);     /* MSI-X cap? */
	put(&s, FZP_BAR, 1); put(&s, 0, 1); put(&s, 2, 1); put(&s, 0, 2); put(&s, 3, 1); put(&s, FZ_MSI_ADDR, 8);
	put(&s, FZP_BAR, 1); put(&s, 0, 1); put(&s, 2, 1); put(&s, 0xc, 2); put(&s, 3, 1); put(&s, 0, 8);
	put(&s, FZP_SIGNAL, 1); put(&s, 0, 1); put(&s, 0, 1);
	put(&s, FZP_SIGNAL, 1); put(&s, 1, 1); put(&s, 0, 1);
	put(&s, FZP_EOI, 1); put(&s, 2, 1);
	save(t, "ecam-msix-signal", &s);
	start(&s);
	put(&s, 0, 1);                       /* no MSI-X: INTx/MSI only */
	put(&s, FZP_ECAM, 1); put(&s, 0x10050, 4); put(&s, 3, 1); put(&s, 0x00010005, 8);
	put(&s, FZP_MMIO, 1); put(&s, 0x20000000, 4); put(&s, 0x83, 1); put(&s, 0, 8);     /* ECAM via the hole */
	put(&s, FZP_SIGNAL, 1); put(&s, 1, 1); put(&s, 3, 1);
	save(t, "msi-mmio", &s);
	start(&s);
	put(&s, 0, 1);
	pio(&s, 0, 2, 0x80002030);           /* 00:04.0 (pci-testdev) expansion ROM BAR */
	pio(&s, 4, 2, 0xffffffff);           /* sizing */
	pio(&s, 4, 0x80 | 2, 0);
	pio(&s, 4, 2, 0xc0200001);           /* placed, enabled */
	pio(&s, 0, 2, 0x80002004);
	pio(&s, 4, 1, 0x02);                 /* memory decode on: the ROM is reachable */
	put(&s, FZP_MMIO, 1); put(&s, 0x200000, 4); put(&s, 0x83, 1); put(&s, 0, 8);     /* read */
	put(&s, FZP_MMIO, 1); put(&s, 0x200ffe, 4); put(&s, 0x07, 1); put(&s, ~0ull, 8); /* write */
	save(t, "rom-enable-read", &s);
}

/* ---- fuzz_virtq ---- */

static void q_desc(uint8_t *r, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	uint8_t *p = r + 16u * i;
	fz_put(p, addr, 8); fz_put(p + 8, len, 4); fz_put(p + 12, flags, 2); fz_put(p + 14, next, 2);
}

static void seeds_virtq(const char *t)
{
	/* Layout: desc 0x0, avail 0x1000, used 0x2000, data 0x4000; image of 0x5000 bytes. */
	static uint8_t r[0x5000];
	struct seed s;
	for (int v = 0; v < 4; v++) {
		memset(r, 0, sizeof(r));
		q_desc(r, 0, 0x4000, 16, NEXT, 1);
		q_desc(r, 1, 0x4100, 64, WRITE, 0);
		q_desc(r, 2, 0x4800, 32, INDIRECT, 0);
		q_desc(r + 0x4800, 0, 0x4200, 8, NEXT, 1);
		q_desc(r + 0x4800, 1, 0x4300, 8, WRITE, 0);
		if (v == 2)
			q_desc(r, 1, 0x4100, 64, WRITE | NEXT, 0);   /* loop */
		if (v == 3)
			q_desc(r, 1, 0xfff0, 64, WRITE, 0);          /* past RAM */
		fz_put(r + 0x1004, 0, 2);
		fz_put(r + 0x1006, 2, 2);
		fz_put(r + 0x1002, 2, 2);                             /* avail idx */
		start(&s);
		put(&s, 3, 1);                   /* 8 entries */
		put(&s, v == 1, 1);              /* event_idx */
		put(&s, 0, 2); put(&s, 0x1000, 2); put(&s, 0x2000, 2);
		put(&s, 4, 1);
		put(&s, 0xf0, 1); put(&s, 0x07, 1); put(&s, 0x04, 1); put(&s, 0x25, 1);
		bytes(&s, r, 0x4900);
		char name[32];
		snprintf(name, sizeof(name), "chain-indirect-%d", v);
		save(t, name, &s);
	}
}

/* ---- loaders ---- */

static void seeds_pvh(const char *t)
{
	struct seed s;
	start(&s);
	put(&s, 8, 1); put(&s, 16, 1); put(&s, 0, 2);
	put(&s, 0x200000, 4); put(&s, 0x1000, 4); put(&s, 0xe0000, 4);
	uint8_t *img = s.p;
	memset(img, 0, 0x200);
	Elf64_Ehdr eh = { .e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			  .e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
			  .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 2 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(img, &eh, sizeof(eh));
	size_t note_off = 0x100, code_off = 0x140;
	Elf64_Phdr ph[2] = {
		{ .p_type = PT_NOTE, .p_offset = note_off, .p_filesz = 20, .p_align = 4 },
		{ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = code_off, .p_vaddr = 0x100000,
		  .p_paddr = 0x100000, .p_filesz = 16, .p_memsz = 0x1000, .p_align = 8 },
	};
	memcpy(img + sizeof(eh), ph, sizeof(ph));
	uint8_t *n = img + note_off;
	fz_put(n, 4, 4); fz_put(n + 4, 4, 4); fz_put(n + 8, 18, 4);
	memcpy(n + 12, "Xen", 4);
	fz_put(n + 16, 0x100000, 4);
	memset(img + code_off, 0xf4, 16);
	s.p = img + code_off + 16;
	save(t, "minimal-pvh", &s);
	img[sizeof(eh) + sizeof(Elf64_Phdr) + 16] = 0x00; /* PT_LOAD paddr 0x1000...: over boot data */
	fz_put(img + sizeof(eh) + sizeof(Elf64_Phdr) + 24, 0x1000, 8);
	save(t, "segment-over-boot-data", &s);
}

/* A multiboot v1 ELF32 kernel as kvm-unit-tests builds them: header in the first 8 KiB, one
 * PT_LOAD at 4 MiB with bss, entry inside; 8 MiB of RAM, a command line and a module. */
static void seeds_multiboot(const char *t)
{
	struct seed s;
	start(&s);
	put(&s, 8, 1); put(&s, 12, 1); put(&s, 32, 2); put(&s, 0, 4);
	uint8_t *img = s.p;
	memset(img, 0, 0x200);
	Elf32_Ehdr eh = { .e_type = ET_EXEC, .e_machine = EM_386, .e_version = EV_CURRENT,
			  .e_entry = 0x400010, .e_phoff = sizeof(Elf32_Ehdr),
			  .e_ehsize = sizeof(Elf32_Ehdr), .e_phentsize = sizeof(Elf32_Phdr),
			  .e_phnum = 1 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(img, &eh, sizeof(eh));
	Elf32_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x100,
			  .p_vaddr = 0x400000, .p_paddr = 0x400000, .p_filesz = 0x40,
			  .p_memsz = 0x3000, .p_align = 4 };
	memcpy(img + sizeof(eh), &ph, sizeof(ph));
	fz_put(img + 0x100, 0x1BADB002, 4); fz_put(img + 0x104, 0, 4);
	fz_put(img + 0x108, (uint32_t)(0u - 0x1BADB002u), 4);
	memset(img + 0x110, 0xf4, 0x30);
	s.p = img + 0x140;
	save(t, "minimal-multiboot", &s);
	fz_put(img + sizeof(eh) + 12, 0x2000, 4); /* p_paddr over the boot data */
	save(t, "segment-over-boot-data", &s);
	fz_put(img + sizeof(eh) + 12, 0x400000, 4);
	fz_put(img + 0x104, 0x10000, 4); /* a.out kludge */
	fz_put(img + 0x108, (uint32_t)(0u - 0x1BADB002u - 0x10000u), 4);
	save(t, "aout-kludge", &s);
}

static void seeds_bzimage(const char *t)
{
	struct seed s;
	for (int v = 0; v < 3; v++) {
		start(&s);
		put(&s, 64, 1); put(&s, 1 | 2, 1); put(&s, 100, 2);
		put(&s, v == 2 ? 0x300000 : 0x1234, 4); put(&s, 0xe0000, 4); put(&s, 0, 4);
		uint8_t *b = s.p;
		size_t setup = 5 * 512, pm = 256;
		memset(b, 0, setup + pm);
		b[0x1f1] = 4;
		fz_put(b + 0x1f4, pm / 16, 4);
		fz_put(b + 0x1fe, 0xaa55, 2);
		b[0x200] = 0xeb; b[0x201] = 0x6a;
		memcpy(b + 0x202, "HdrS", 4);
		fz_put(b + 0x206, v == 1 ? 0x020b : 0x020f, 2);
		b[0x211] = 0x01;
		fz_put(b + 0x214, 0x100000, 4);
		fz_put(b + 0x22c, 0x7fffffff, 4);
		fz_put(b + 0x230, 0x200000, 4);
		b[0x234] = 1; b[0x235] = 21;
		fz_put(b + 0x236, 3, 2);
		fz_put(b + 0x238, 2047, 4);
		fz_put(b + 0x258, 16u << 20, 8);
		fz_put(b + 0x260, 4u << 20, 4);
		memset(b + setup, 0x90, pm);
		s.p = b + setup + pm;
		char name[32];
		snprintf(name, sizeof(name), "synthetic-%d", v);
		save(t, name, &s);
	}
}

static void seeds_initrd(const char *t)
{
	static const uint64_t v[][4] = {
		{ 64u << 20, 3u << 20, 1u << 20, UINT64_MAX },
		{ 8ull << 30, 100u << 20, 20u << 20, 0x7fffffff },
		{ 2u << 20, 4096, 0, UINT64_MAX },
		{ 64u << 20, 64u << 20, 0, UINT64_MAX },
	};
	struct seed s;
	for (unsigned i = 0; i < 4; i++) {
		start(&s);
		for (unsigned j = 0; j < 4; j++)
			put(&s, v[i][j], 8);
		char name[32];
		snprintf(name, sizeof(name), "place-%u", i);
		save(t, name, &s);
	}
}

static void seeds_parse(const char *t)
{
	static const struct { uint8_t which; uint64_t min, max; const char *s; } v[] = {
		{ 0, 0, 0, "256M" }, { 0, 0, 0, "1GiB" }, { 0, 0, 0, "18446744073709551615" },
		{ 0, 0, 0, "17179869184T" }, { 1, 1, 16, "8" }, { 1, 0, 99, "100" },
		{ 2, 0, 0, "msix-shared" }, { 3, 0, 0, "signal-msi" }, { 4, 0, 0, "uring" },
		{ 5, 0, 0, "socket" }, { 6, 0, 0, "source" }, { 7, 0, 0, "xsave,avx2" },
		{ 8, 2, 0, "vcpu0=0,vcpu1=1,io=0" },
	};
	struct seed s;
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		start(&s);
		put(&s, v[i].which, 1); put(&s, v[i].min, 8); put(&s, v[i].max, 8);
		bytes(&s, v[i].s, strlen(v[i].s));
		char name[32];
		snprintf(name, sizeof(name), "p%02u", i);
		save(t, name, &s);
	}
}

/* fuzz_config: u8 what (0: a config file, 1-4: an --rng/--disk/--console/--net string), text. */
static void seeds_config(const char *t)
{
	static const struct { uint8_t what; const char *s; } v[] = {
		{ 0, "{\"kernel\": \"k\", \"mem\": 512, \"cpus\": 2, \"pit\": true, \"rng\": [{\"irq\": "
		     "\"msi\"}, \"vectors=0\"], \"console\": [{\"out\": \"o\", \"max\": \"1M\"}], \"net\": "
		     "[{\"backend\": \"peer\", \"peer\": \"source\", \"rate\": 10, \"size\": 100}, "
		     "\"tap=t0,num_queues=2\"], \"log-level\": \"debug\", \"serial\": \"tty\", "
		     "\"cpuid-hide\": \"xsave,avx\"}" },
		{ 0, "{\"kernel\": \"k\", \"disk\": [{\"path\": \"/dev/null\", \"readonly\": true}], "
		     "\"net\": [\"backend=socket,path=/tmp/x,mac=52:54:00:00:00:01,mtu=9000\"], "
		     "\"shutdown-timeout\": 0, \"halt-poll\": 10, \"seccomp\": \"log\", \"user\": \"0:0\", "
		     "\"cpu-pin\": \"vcpu0=0,io=0\", \"initrd\": null}" },
		{ 0, "{\"kernel\": \"k\",\n \"cpus\": \"2\",\n}" },
		{ 1, "irq=msix-shared,irqpath=signal-msi,latency=100,bps=4K,ops=10" },
		{ 2, "path=/dev/null,ro,queues=2,engine=sync,irq=intx" },
		{ 3, "out=o,in=/dev/null,max=0,vectors=3" },
		{ 4, "backend=peer,peer=source,rate=5,size=60,mtu=68" },
	};
	struct seed s;
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		start(&s);
		put(&s, v[i].what, 1);
		bytes(&s, v[i].s, strlen(v[i].s));
		char name[32];
		snprintf(name, sizeof(name), "c%02u", i);
		save(t, name, &s);
	}
}

int main(int argc, char **argv)
{
	root = argc > 1 ? argv[1] : "tests/fuzz/corpus";
	if (mkdir(root, 0755) && errno != EEXIST) {
		perror(root);
		return 1;
	}
	seeds_rng("fuzz_virtio_rng");
	seeds_blk("fuzz_virtio_blk");
	seeds_net("fuzz_virtio_net");
	seeds_console("fuzz_virtio_console");
	seeds_virtio_pci("fuzz_virtio_pci");
	seeds_pci("fuzz_pci");
	seeds_virtq("fuzz_virtq");
	seeds_pvh("fuzz_pvh");
	seeds_multiboot("fuzz_multiboot");
	seeds_bzimage("fuzz_bzimage");
	seeds_initrd("fuzz_initrd");
	seeds_parse("fuzz_parse");
	seeds_config("fuzz_config");
	return 0;
}
