/* Unit tests for the PVH loader (pvh_load_elf) and start_info writer. ELF images
 * are built in memory; guest RAM is a plain buffer behind a guest_mem. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/e820.h"
#include "arch/x86/layout.h"
#include "arch/x86/pvh.h"
#include "core/guest_mem.h"

#define RAM_SIZE   (32 * MiB)
#define RAM_FILL   0xcc
#define IMG_CAP    (64 * 1024)
#define MAX_PHDRS  8
#define DATA_START (sizeof(Elf64_Ehdr) + MAX_PHDRS * sizeof(Elf64_Phdr))

/* ---- In-memory ELF image builder ---------------------------------------- */

struct img {
	union { /* the loader reads the headers in place: keep them aligned */
		uint8_t buf[IMG_CAP];
		uint64_t align;
	};
	size_t size; /* bytes of `buf` handed to the loader */
};

static Elf64_Ehdr *ehdr(struct img *im) { return (Elf64_Ehdr *)im->buf; }
static Elf64_Phdr *phdr(struct img *im, unsigned i)
{
	return (Elf64_Phdr *)(im->buf + sizeof(Elf64_Ehdr)) + i;
}

/* An x86-64 ET_EXEC with no segments yet; room for MAX_PHDRS headers. */
static void img_init(struct img *im)
{
	memset(im, 0, sizeof(*im));
	Elf64_Ehdr *eh = ehdr(im);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(Elf64_Ehdr);
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	im->size = DATA_START;
}

/* Appends `filesz` bytes of `data` (8-aligned in the file) and a program
 * header describing them; returns the header so a test can corrupt it. */
static Elf64_Phdr *img_add(struct img *im, uint32_t type, uint64_t paddr,
			   const void *data, uint64_t filesz, uint64_t memsz)
{
	Elf64_Ehdr *eh = ehdr(im);
	assert_true(eh->e_phnum < MAX_PHDRS);
	size_t off = (im->size + 7) & ~(size_t)7;
	assert_true(off + filesz <= IMG_CAP);
	if (filesz)
		memcpy(im->buf + off, data, filesz);
	im->size = off + filesz;
	Elf64_Phdr *ph = phdr(im, eh->e_phnum++);
	*ph = (Elf64_Phdr){
		.p_type = type, .p_flags = PF_R | PF_X, .p_offset = off,
		.p_vaddr = paddr + 0xffffffff80000000ULL, .p_paddr = paddr,
		.p_filesz = filesz, .p_memsz = memsz, .p_align = 8,
	};
	return ph;
}

/* Writes one ELF note (header, name, descriptor, each padded to 4) into
 * `out`; returns its length. */
static size_t make_note(uint8_t *out, const char *name, uint32_t namesz, uint32_t type,
			const void *desc, uint32_t descsz)
{
	Elf64_Nhdr nh = { .n_namesz = namesz, .n_descsz = descsz, .n_type = type };
	size_t n = 0;
	memcpy(out, &nh, sizeof(nh));
	n += sizeof(nh);
	memset(out + n, 0, (namesz + 3) & ~3u);
	memcpy(out + n, name, namesz);
	n += (namesz + 3) & ~3u;
	memset(out + n, 0, (descsz + 3) & ~3u);
	memcpy(out + n, desc, descsz);
	n += (descsz + 3) & ~3u;
	return n;
}

/* Adds a PT_NOTE segment holding the PVH entry note, 4- or 8-byte form. */
static Elf64_Phdr *img_add_pvh_note(struct img *im, uint64_t entry, uint32_t descsz)
{
	uint8_t note[64];
	size_t n;
	if (descsz == 8) {
		n = make_note(note, "Xen", 4, XEN_ELFNOTE_PHYS32_ENTRY, &entry, 8);
	} else {
		uint32_t e32 = (uint32_t)entry;
		n = make_note(note, "Xen", 4, XEN_ELFNOTE_PHYS32_ENTRY, &e32, 4);
	}
	return img_add(im, PT_NOTE, 0, note, n, 0);
}

#define KERNEL_BASE  0x100000ULL
#define KERNEL_ENTRY 0x100040ULL
#define TEXT_LEN     0x300
#define TEXT_MEMSZ   0x2000 /* 0x1d00 bytes of .bss */
#define DATA_BASE    0x400000ULL
#define DATA_LEN     0x80

static uint8_t text_bytes[TEXT_LEN];
static uint8_t data_bytes[DATA_LEN];

/* A typical kernel: text+bss at 1 MiB, data at 4 MiB, 4-byte PVH note. */
static void img_good(struct img *im, uint32_t note_descsz)
{
	img_init(im);
	img_add(im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	img_add(im, PT_LOAD, DATA_BASE, data_bytes, DATA_LEN, DATA_LEN);
	img_add_pvh_note(im, KERNEL_ENTRY, note_descsz);
}

/* ---- Fixture: 32 MiB of guest RAM filled with a pattern ------------------- */

struct fixture {
	struct guest_mem gm;
	uint8_t *ram;
	struct img im;
	struct error err;
	struct pvh_image out;
};

static int group_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->ram = calloc(1, RAM_SIZE);
	if (!f->ram || guest_mem_init(&f->gm, f->ram, RAM_SIZE, MMIO_HOLE_START, MMIO_HOLE_END))
		return -1;
	for (size_t i = 0; i < TEXT_LEN; i++)
		text_bytes[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < DATA_LEN; i++)
		data_bytes[i] = (uint8_t)(0xd0 ^ i);
	*state = f;
	return 0;
}

static int group_teardown(void **state)
{
	struct fixture *f = *state;
	free(f->ram);
	free(f);
	return 0;
}

static int setup(void **state)
{
	struct fixture *f = *state;
	memset(f->ram, RAM_FILL, RAM_SIZE);
	memset(&f->err, 0, sizeof(f->err));
	memset(&f->out, 0, sizeof(f->out));
	return 0;
}

static int ram_untouched(const struct fixture *f)
{
	return f->ram[0] == RAM_FILL && memcmp(f->ram, f->ram + 1, RAM_SIZE - 1) == 0;
}

static int load(struct fixture *f)
{
	return pvh_load_elf(&f->gm, f->im.buf, f->im.size, &f->out, &f->err);
}

/* The load fails with `code`, the message names the problem, and RAM is as
 * it was. */
#define assert_rejected(f, code, word)                                              \
	do {                                                                        \
		int ret_ = load(f);                                                 \
		if (ret_ != (code))                                                 \
			fail_msg("load returned %d, want %d (msg: '%s')", ret_,      \
				 (code), (f)->err.msg);                              \
		if (!strstr((f)->err.msg, (word)))                                  \
			fail_msg("message '%s' does not mention '%s'", (f)->err.msg, \
				 (word));                                            \
		assert_true(ram_untouched(f));                                      \
	} while (0)

/* ---- Good images --------------------------------------------------------- */

static void test_good_image_copies_segments_to_paddr(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	assert_int_equal(load(f), 0);
	assert_memory_equal(f->ram + KERNEL_BASE, text_bytes, TEXT_LEN);
	assert_memory_equal(f->ram + DATA_BASE, data_bytes, DATA_LEN);
	assert_int_equal(f->out.entry, KERNEL_ENTRY);
	assert_true(f->out.load_start == KERNEL_BASE);
	assert_true(f->out.load_end == DATA_BASE + DATA_LEN);
	/* Bytes just outside the segments are not written. */
	assert_int_equal(f->ram[KERNEL_BASE - 1], RAM_FILL);
	assert_int_equal(f->ram[KERNEL_BASE + TEXT_MEMSZ], RAM_FILL);
	assert_int_equal(f->ram[DATA_BASE - 1], RAM_FILL);
	assert_int_equal(f->ram[DATA_BASE + DATA_LEN], RAM_FILL);
}

static void test_bss_zeroed_over_garbage(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	assert_int_equal(load(f), 0);
	static const uint8_t zeros[TEXT_MEMSZ - TEXT_LEN];
	assert_memory_equal(f->ram + KERNEL_BASE + TEXT_LEN, zeros, sizeof(zeros));
}

static void test_entry_from_8_byte_note(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 8);
	assert_int_equal(load(f), 0);
	assert_int_equal(f->out.entry, KERNEL_ENTRY);
	assert_memory_equal(f->ram + KERNEL_BASE, text_bytes, TEXT_LEN);
}

static void test_entry_note_found_after_other_notes(void **state)
{
	struct fixture *f = *state;
	uint8_t notes[128];
	size_t n = 0;
	static const uint8_t build_id[20] = { 1, 2, 3 };
	uint32_t other = 0x12345678, entry = (uint32_t)KERNEL_ENTRY + 8;
	n += make_note(notes + n, "GNU", 4, NT_GNU_BUILD_ID, build_id, sizeof(build_id));
	/* Right name, other Xen note type: must be skipped. */
	n += make_note(notes + n, "Xen", 4, 6, &other, 4);
	n += make_note(notes + n, "Xen", 4, XEN_ELFNOTE_PHYS32_ENTRY, &entry, 4);
	img_init(&f->im);
	img_add(&f->im, PT_NOTE, 0, notes, n, 0);
	img_add(&f->im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	assert_int_equal(load(f), 0);
	assert_int_equal(f->out.entry, KERNEL_ENTRY + 8);
}

static void test_entry_at_last_loaded_byte_accepted(void **state)
{
	struct fixture *f = *state;
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	img_add_pvh_note(&f->im, KERNEL_BASE + TEXT_MEMSZ - 1, 4);
	assert_int_equal(load(f), 0);
	assert_int_equal(f->out.entry, KERNEL_BASE + TEXT_MEMSZ - 1);
}

static void test_segment_ending_at_top_of_ram_accepted(void **state)
{
	struct fixture *f = *state;
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, RAM_SIZE - DATA_LEN, data_bytes, DATA_LEN, DATA_LEN);
	img_add_pvh_note(&f->im, RAM_SIZE - DATA_LEN, 4);
	assert_int_equal(load(f), 0);
	assert_memory_equal(f->ram + RAM_SIZE - DATA_LEN, data_bytes, DATA_LEN);
}

/* ---- Bad images: an error, a message naming the problem, RAM untouched ---- */

static void test_not_elf_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	memcpy(f->im.buf, "MZ\x90\x00", 4);
	assert_rejected(f, -ENOEXEC, "not an ELF");
}

static void test_tiny_file_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	f->im.size = 4; /* just the magic: shorter than e_ident */
	assert_rejected(f, -ENOEXEC, "not an ELF");
}

static void test_truncated_header_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	f->im.size = sizeof(Elf64_Ehdr) - 1;
	assert_rejected(f, -ENOEXEC, "truncated");
}

static void test_32bit_elf_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	ehdr(&f->im)->e_ident[EI_CLASS] = ELFCLASS32;
	assert_rejected(f, -ENOEXEC, "64-bit");
}

static void test_big_endian_elf_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	ehdr(&f->im)->e_ident[EI_DATA] = ELFDATA2MSB;
	assert_rejected(f, -ENOEXEC, "little-endian");
}

static void test_wrong_machine_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	ehdr(&f->im)->e_machine = EM_AARCH64;
	assert_rejected(f, -ENOEXEC, "x86-64");
}

static void test_et_dyn_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	ehdr(&f->im)->e_type = ET_DYN;
	assert_rejected(f, -ENOEXEC, "executable");
}

static void test_phdrs_past_end_of_file_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	ehdr(&f->im)->e_phoff = f->im.size - sizeof(Elf64_Phdr) + 8;
	assert_rejected(f, -ENOEXEC, "program headers");
}

static void test_phnum_past_end_of_file_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	ehdr(&f->im)->e_phnum = 0xffff;
	assert_rejected(f, -ENOEXEC, "program headers");
}

static void test_huge_phoff_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	ehdr(&f->im)->e_phoff = UINT64_MAX - 8; /* off + len would wrap */
	assert_rejected(f, -ENOEXEC, "program headers");
}

static void test_no_note_rejected(void **state)
{
	struct fixture *f = *state;
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	assert_rejected(f, -ENOEXEC, "PVH");
}

static void test_note_with_wrong_name_rejected(void **state)
{
	struct fixture *f = *state;
	uint8_t note[32];
	uint32_t entry = (uint32_t)KERNEL_ENTRY;
	size_t n = make_note(note, "Xem", 4, XEN_ELFNOTE_PHYS32_ENTRY, &entry, 4);
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	img_add(&f->im, PT_NOTE, 0, note, n, 0);
	assert_rejected(f, -ENOEXEC, "PVH");
}

static void test_note_with_bad_desc_size_rejected(void **state)
{
	struct fixture *f = *state;
	uint8_t note[32];
	uint16_t entry = 0x40;
	size_t n = make_note(note, "Xen", 4, XEN_ELFNOTE_PHYS32_ENTRY, &entry, 2);
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, 0, text_bytes, TEXT_LEN, TEXT_LEN);
	img_add(&f->im, PT_NOTE, 0, note, n, 0);
	assert_rejected(f, -ENOEXEC, "PVH");
}

static void test_8_byte_note_above_4g_rejected(void **state)
{
	struct fixture *f = *state;
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	/* The low 32 bits point into the image; the value does not fit. */
	img_add_pvh_note(&f->im, (1ULL << 32) | KERNEL_ENTRY, 8);
	assert_rejected(f, -ENOEXEC, "PVH");
}

static void test_note_desc_running_past_segment_rejected(void **state)
{
	struct fixture *f = *state;
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	Elf64_Phdr *ph = img_add_pvh_note(&f->im, KERNEL_ENTRY, 4);
	/* n_descsz claims more bytes than the segment holds. */
	Elf64_Nhdr *nh = (Elf64_Nhdr *)(f->im.buf + ph->p_offset);
	nh->n_descsz = 0x1000;
	/* Keep the file longer than the note claims, so only the segment bound
	 * stops the parser. */
	f->im.size += 0x2000;
	assert_rejected(f, -ENOEXEC, "PVH");
}

static void test_note_name_size_huge_rejected(void **state)
{
	struct fixture *f = *state;
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	Elf64_Phdr *ph = img_add_pvh_note(&f->im, KERNEL_ENTRY, 4);
	Elf64_Nhdr *nh = (Elf64_Nhdr *)(f->im.buf + ph->p_offset);
	nh->n_namesz = UINT32_MAX;
	assert_rejected(f, -ENOEXEC, "PVH");
}

static void test_note_segment_past_end_of_file_rejected(void **state)
{
	struct fixture *f = *state;
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	Elf64_Phdr *ph = img_add_pvh_note(&f->im, KERNEL_ENTRY, 4);
	ph->p_filesz = 0x10000; /* the note is intact, but the segment overruns */
	assert_rejected(f, -ENOEXEC, "PVH");
}

static void test_segment_past_end_of_file_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	Elf64_Phdr *ph = phdr(&f->im, 1);
	ph->p_filesz = ph->p_memsz = f->im.size; /* offset + size > file */
	assert_rejected(f, -ENOEXEC, "past the end of the file");
}

static void test_segment_offset_wrapping_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	Elf64_Phdr *ph = phdr(&f->im, 1);
	ph->p_offset = UINT64_MAX - 0x10; /* offset + filesz wraps to a small value */
	assert_rejected(f, -ENOEXEC, "past the end of the file");
}

static void test_filesz_greater_than_memsz_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	phdr(&f->im, 0)->p_memsz = TEXT_LEN - 1;
	assert_rejected(f, -ENOEXEC, "file size exceeds memory size");
}

static void test_segment_outside_ram_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	phdr(&f->im, 1)->p_paddr = 2 * RAM_SIZE;
	assert_rejected(f, -ERANGE, "outside guest RAM");
}

static void test_segment_straddling_end_of_ram_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	phdr(&f->im, 1)->p_paddr = RAM_SIZE - DATA_LEN + 1;
	assert_rejected(f, -ERANGE, "outside guest RAM");
}

static void test_bss_past_end_of_ram_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	/* The file part fits; the zeroed part does not. */
	phdr(&f->im, 1)->p_paddr = RAM_SIZE - 0x1000;
	phdr(&f->im, 1)->p_memsz = 0x1001;
	assert_rejected(f, -ERANGE, "outside guest RAM");
}

static void test_segment_over_mmio_hole_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	phdr(&f->im, 1)->p_paddr = MMIO_HOLE_START + 0x1000;
	assert_rejected(f, -ERANGE, "MMIO hole");
}

static void test_segment_running_into_mmio_hole_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	phdr(&f->im, 1)->p_paddr = MMIO_HOLE_START - 0x40;
	assert_rejected(f, -ERANGE, "MMIO hole");
}

static void test_segment_overlapping_boot_data_rejected(void **state)
{
	struct fixture *f = *state;
	/* Ending one byte into the boot data... */
	img_good(&f->im, 4);
	phdr(&f->im, 1)->p_paddr = BOOT_DATA_START - DATA_LEN + 1;
	assert_rejected(f, -ERANGE, "boot data");
	/* ...and starting on its last byte. */
	img_good(&f->im, 4);
	phdr(&f->im, 1)->p_paddr = BOOT_DATA_END - 1;
	assert_rejected(f, -ERANGE, "boot data");
	/* Over the start_info page itself. */
	img_good(&f->im, 4);
	phdr(&f->im, 1)->p_paddr = PVH_START_INFO;
	assert_rejected(f, -ERANGE, "boot data");
}

/* Regression (hardening review, defect 5): nothing loads over the legacy
 * area; RAM below it (0x80000-0xA0000) is still fine. */
static void test_segment_over_legacy_area_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	phdr(&f->im, 1)->p_paddr = LOW_RAM_END - DATA_LEN + 1;
	assert_rejected(f, -ERANGE, "legacy");
	img_good(&f->im, 4);
	phdr(&f->im, 1)->p_paddr = 0xC0000;
	assert_rejected(f, -ERANGE, "legacy");
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, LOW_RAM_END - DATA_LEN, data_bytes, DATA_LEN, DATA_LEN);
	img_add(&f->im, PT_LOAD, HIGH_MEM_START, text_bytes, TEXT_LEN, TEXT_LEN);
	img_add_pvh_note(&f->im, HIGH_MEM_START, 4);
	assert_int_equal(load(f), 0);
}

static void test_segments_next_to_boot_data_accepted(void **state)
{
	struct fixture *f = *state;
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, BOOT_DATA_START - DATA_LEN, data_bytes, DATA_LEN, DATA_LEN);
	img_add(&f->im, PT_LOAD, BOOT_DATA_END, text_bytes, TEXT_LEN, TEXT_LEN);
	img_add_pvh_note(&f->im, BOOT_DATA_END, 4);
	assert_int_equal(load(f), 0);
	assert_memory_equal(f->ram + BOOT_DATA_START - DATA_LEN, data_bytes, DATA_LEN);
	assert_memory_equal(f->ram + BOOT_DATA_END, text_bytes, TEXT_LEN);
}

static void test_segment_wrapping_around_2_64_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	Elf64_Phdr *ph = phdr(&f->im, 1);
	ph->p_paddr = UINT64_MAX - 0x10;
	ph->p_memsz = 0x100; /* paddr + memsz wraps to 0xef */
	assert_rejected(f, -ERANGE, "wraps");
}

static void test_entry_outside_loaded_segments_rejected(void **state)
{
	struct fixture *f = *state;
	img_init(&f->im);
	img_add(&f->im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	img_add_pvh_note(&f->im, KERNEL_BASE + TEXT_MEMSZ, 4); /* one past the end */
	assert_rejected(f, -ENOEXEC, "entry");

	img_init(&f->im);
	img_add(&f->im, PT_LOAD, KERNEL_BASE, text_bytes, TEXT_LEN, TEXT_MEMSZ);
	img_add_pvh_note(&f->im, KERNEL_BASE - 1, 4);
	assert_rejected(f, -ENOEXEC, "entry");
}

/* Regression: the entry used to be checked against the span of all segments,
 * so an entry in a gap between two segments was accepted. */
static void test_entry_in_gap_between_segments_rejected(void **state)
{
	struct fixture *f = *state;
	img_good(&f->im, 4);
	Elf64_Phdr *note = phdr(&f->im, 2);
	Elf64_Nhdr *nh = (Elf64_Nhdr *)(f->im.buf + note->p_offset);
	uint32_t gap = 0x200000;
	memcpy((uint8_t *)(nh + 1) + 4, &gap, 4); /* descriptor follows "Xen\0" */
	assert_rejected(f, -ENOEXEC, "entry");
}

static void test_bad_later_segment_leaves_earlier_unloaded(void **state)
{
	struct fixture *f = *state;
	/* Segment 0 is fine; segment 1 is outside RAM: nothing may be copied. */
	img_good(&f->im, 4);
	phdr(&f->im, 1)->p_paddr = 64 * MiB;
	assert_rejected(f, -ERANGE, "segment 1");
}

static void test_no_loadable_segment_rejected(void **state)
{
	struct fixture *f = *state;
	img_init(&f->im);
	img_add_pvh_note(&f->im, KERNEL_ENTRY, 4);
	assert_rejected(f, -ENOEXEC, "loadable");
}

/* ---- pvh_write_start_info ------------------------------------------------ */

static void test_start_info_header(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(pvh_write_start_info(&f->gm, "console=ttyS0", &f->err), 0);
	struct hvm_start_info si;
	memcpy(&si, f->ram + PVH_START_INFO, sizeof(si));
	assert_true(si.magic == 0x336ec578u);
	assert_int_equal(si.version, 1);
	assert_int_equal(si.nr_modules, 0);
	assert_true(si.cmdline_paddr == CMDLINE_ADDR);
	assert_true(si.memmap_paddr == PVH_MEMMAP);
	assert_true(si.rsdp_paddr == 0);
}

static void test_start_info_cmdline_copied_and_terminated(void **state)
{
	struct fixture *f = *state;
	const char *cmdline = "console=ttyS0 earlyprintk=serial root=/dev/vda rw";
	assert_int_equal(pvh_write_start_info(&f->gm, cmdline, &f->err), 0);
	struct hvm_start_info si;
	memcpy(&si, f->ram + PVH_START_INFO, sizeof(si));
	const char *cl = (const char *)f->ram + si.cmdline_paddr;
	/* NUL within the area, although the RAM was full of 0xcc. */
	assert_non_null(memchr(cl, '\0', CMDLINE_MAX));
	assert_string_equal(cl, cmdline);
}

static void test_start_info_null_cmdline_is_empty(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(pvh_write_start_info(&f->gm, NULL, &f->err), 0);
	assert_int_equal(f->ram[CMDLINE_ADDR], '\0');
}

static void test_start_info_longest_cmdline_fits(void **state)
{
	struct fixture *f = *state;
	char *cmdline = malloc(CMDLINE_MAX);
	assert_non_null(cmdline);
	memset(cmdline, 'x', CMDLINE_MAX - 1);
	cmdline[CMDLINE_MAX - 1] = '\0';
	assert_int_equal(pvh_write_start_info(&f->gm, cmdline, &f->err), 0);
	assert_memory_equal(f->ram + CMDLINE_ADDR, cmdline, CMDLINE_MAX);
	free(cmdline);
}

static void test_start_info_cmdline_too_long_rejected(void **state)
{
	struct fixture *f = *state;
	char *cmdline = malloc(CMDLINE_MAX + 1);
	assert_non_null(cmdline);
	memset(cmdline, 'x', CMDLINE_MAX);
	cmdline[CMDLINE_MAX] = '\0'; /* CMDLINE_MAX bytes + NUL: one too many */
	assert_int_equal(pvh_write_start_info(&f->gm, cmdline, &f->err), -E2BIG);
	assert_non_null(strstr(f->err.msg, "command line"));
	assert_true(ram_untouched(f));
	free(cmdline);
}

static void test_start_info_memmap_matches_e820(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(pvh_write_start_info(&f->gm, "", &f->err), 0);
	struct hvm_start_info si;
	memcpy(&si, f->ram + PVH_START_INFO, sizeof(si));

	struct e820_entry map[E820_MAX_ENTRIES];
	uint32_t n = e820_build(&f->gm, map);
	assert_int_equal(si.memmap_entries, n);
	assert_true(n >= 3);

	uint64_t ram_bytes = 0, top = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct hvm_memmap_table_entry e;
		memcpy(&e, f->ram + si.memmap_paddr + i * sizeof(e), sizeof(e));
		assert_true(e.addr == map[i].addr);
		assert_true(e.size == map[i].size);
		assert_int_equal(e.type, map[i].type);
		assert_int_equal(e.reserved, 0);
		if (e.type == E820_RAM) {
			ram_bytes += e.size;
			if (e.addr + e.size > top)
				top = e.addr + e.size;
		}
	}
	/* RAM reaches the top of guest memory; only the legacy hole is missing. */
	assert_true(top == RAM_SIZE);
	assert_true(ram_bytes == RAM_SIZE - (HIGH_MEM_START - LOW_RAM_END));
}

static void test_start_info_ram_too_small_rejected(void **state)
{
	struct fixture *f = *state;
	struct guest_mem small;
	/* 64 KiB: start_info fits, the command line at 128 KiB does not. */
	assert_int_equal(guest_mem_init(&small, f->ram, 64 * KiB, MMIO_HOLE_START,
					MMIO_HOLE_END), 0);
	assert_int_equal(pvh_write_start_info(&small, "x", &f->err), -ERANGE);
	assert_true(ram_untouched(f));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup(fn, setup)
		T(test_good_image_copies_segments_to_paddr),
		T(test_bss_zeroed_over_garbage),
		T(test_entry_from_8_byte_note),
		T(test_entry_note_found_after_other_notes),
		T(test_entry_at_last_loaded_byte_accepted),
		T(test_segment_ending_at_top_of_ram_accepted),
		T(test_not_elf_rejected),
		T(test_tiny_file_rejected),
		T(test_truncated_header_rejected),
		T(test_32bit_elf_rejected),
		T(test_big_endian_elf_rejected),
		T(test_wrong_machine_rejected),
		T(test_et_dyn_rejected),
		T(test_phdrs_past_end_of_file_rejected),
		T(test_phnum_past_end_of_file_rejected),
		T(test_huge_phoff_rejected),
		T(test_no_note_rejected),
		T(test_note_with_wrong_name_rejected),
		T(test_note_with_bad_desc_size_rejected),
		T(test_8_byte_note_above_4g_rejected),
		T(test_note_desc_running_past_segment_rejected),
		T(test_note_name_size_huge_rejected),
		T(test_note_segment_past_end_of_file_rejected),
		T(test_segment_past_end_of_file_rejected),
		T(test_segment_offset_wrapping_rejected),
		T(test_filesz_greater_than_memsz_rejected),
		T(test_segment_outside_ram_rejected),
		T(test_segment_straddling_end_of_ram_rejected),
		T(test_bss_past_end_of_ram_rejected),
		T(test_segment_over_mmio_hole_rejected),
		T(test_segment_running_into_mmio_hole_rejected),
		T(test_segment_overlapping_boot_data_rejected),
		T(test_segment_over_legacy_area_rejected),
		T(test_segments_next_to_boot_data_accepted),
		T(test_segment_wrapping_around_2_64_rejected),
		T(test_entry_outside_loaded_segments_rejected),
		T(test_entry_in_gap_between_segments_rejected),
		T(test_bad_later_segment_leaves_earlier_unloaded),
		T(test_no_loadable_segment_rejected),
		T(test_start_info_header),
		T(test_start_info_cmdline_copied_and_terminated),
		T(test_start_info_null_cmdline_is_empty),
		T(test_start_info_longest_cmdline_fits),
		T(test_start_info_cmdline_too_long_rejected),
		T(test_start_info_memmap_matches_e820),
		T(test_start_info_ram_too_small_rejected),
#undef T
	};
	return cmocka_run_group_tests_name("pvh", tests, group_setup, group_teardown);
}
