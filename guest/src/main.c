/* guest/src/main.c - probe_main: banner, start_info checks, e820 dump, exit. */
#include <stdint.h>

#include "cmdline.h"
#include "console.h"
#include "exit.h"
#include "start_info.h"

/* Everything below 4 GiB is identity-mapped by entry.S. */
#define MAPPED_LIMIT 0x100000000ull

void probe_main(const struct hvm_start_info *si);

/* The command line, or "" if absent or unusable. */
static const char *boot_cmdline(const struct hvm_start_info *si)
{
    if (si->magic != HVM_START_MAGIC_VALUE || si->cmdline_paddr == 0 ||
        si->cmdline_paddr >= MAPPED_LIMIT)
        return "";
    return (const char *)(uintptr_t)si->cmdline_paddr;
}

static void dump_e820(const struct hvm_start_info *si)
{
    const struct hvm_memmap_table_entry *e;
    uint32_t i;

    if (si->version < 1 || si->memmap_paddr == 0 || si->memmap_paddr >= MAPPED_LIMIT) {
        console_puts("probe: no e820 map in start_info\n");
        return;
    }
    e = (const struct hvm_memmap_table_entry *)(uintptr_t)si->memmap_paddr;
    for (i = 0; i < si->memmap_entries; i++)
        cprintf("probe: e820 0x%016lx-0x%016lx type %u\n",
                (unsigned long)e[i].addr, (unsigned long)(e[i].addr + e[i].size),
                e[i].type);
}

/*
 * Called once from entry.S in 64-bit mode with si = the PVH start_info
 * (physical == virtual). Never returns.
 */
void probe_main(const struct hvm_start_info *si)
{
    const char *cmdline = boot_cmdline(si);
    unsigned long code = 0;

    console_init();
    cprintf("msivm-probe v0: cmdline=\"%s\"\n", cmdline);

    if (si->magic != HVM_START_MAGIC_VALUE) {
        console_puts("probe: bad start_info magic\n");
        probe_exit(PROBE_EXIT_BAD_MAGIC);
    }

    if (cmdline_has(cmdline, "verbose"))
        dump_e820(si);

    if (cmdline_get_uint(cmdline, "exit", 255, &code) < 0) {
        console_puts("probe: bad exit value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    probe_exit((uint8_t)code);
}
