/* guest/src/smp.c - `smp`: count the CPUs, start the APs (INIT/SIPI/SIPI), wait for them, report. */
#include "smp.h"

#include <stdbool.h>
#include <stdint.h>

#include "cmdline.h"
#include "console.h"
#include "exit.h"
#include "idt.h"
#include "io.h"
#include "lab.h"
#include "lapic.h"
#include "lib.h"

#define PAGE            4096u
#define CPUID1_EDX_HTT  (1u << 28)
#define INIT_WAIT_US    10000   /* INIT -> first SIPI */
#define SIPI_WAIT_US    200     /* first SIPI -> second SIPI */
#define ALIVE_WAIT_US   2000000 /* last SIPI -> every AP recorded */
#define SMP_DELAY_ASSUMED_HZ 4000000000ull

_Static_assert(SMP_AP_STACK_SIZE == 4096, "smp_boot.S shifts the stack index by 12");
_Static_assert(SMP_TRAMP_PADDR % PAGE == 0 && SMP_TRAMP_PADDR < 0x100000,
               "SIPI target: page aligned, below 1 MiB");

extern const char ap_tramp_start[], ap_tramp_end[];
extern char __image_start[], __image_end[];

/* Shared with smp_boot.S: the CR3 the APs load, the next stack index
 * (lock xadd) and the stacks (not zeroed at entry). */
uint32_t smp_ap_cr3;
uint32_t smp_ap_next;
__noinit __attribute__((aligned(16))) char smp_ap_stacks[SMP_MAX_CPUS - 1][SMP_AP_STACK_SIZE];

/* APIC IDs seen alive (bit per ID, lock or), and the number of APs that got
 * there (lock xadd). */
static volatile uint64_t alive[4];
static volatile uint32_t ap_arrived;

/* smp_ap_set_work: the first AP to arrive (claims `worker`) runs the work
 * once it is set; the others park. */
static void (*volatile ap_work)(void);
static volatile uint32_t worker;
static volatile bool work_wanted;

void smp_ap_want_work(void)
{
    work_wanted = true;
}

void smp_ap_set_work(void (*fn)(void))
{
    __atomic_store_n(&ap_work, fn, __ATOMIC_RELEASE);
}

unsigned int smp_ap_count(void)
{
    return __atomic_load_n(&ap_arrived, __ATOMIC_ACQUIRE);
}

void smp_ap_main(void)
{
    uint8_t id;

    uint32_t one = 1;

    idt_init();             /* an exception on an AP is reported, not a triple fault */
    lapic_ap_enable();
    id = lapic_id();
    __atomic_fetch_or(&alive[id >> 6], 1ull << (id & 63), __ATOMIC_SEQ_CST);  /* lock or */
    __asm__ volatile("lock xaddl %0, %1" : "+r"(one), "+m"(ap_arrived) : : "memory");
    if (work_wanted && __atomic_exchange_n(&worker, 1, __ATOMIC_ACQ_REL) == 0) {
        void (*fn)(void);

        while (!(fn = __atomic_load_n(&ap_work, __ATOMIC_ACQUIRE)))
            cpu_relax();
        fn();
    }
    cpu_halt_forever();
}

static void cpuid(uint32_t leaf, uint32_t r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
                     : "a"(leaf), "c"(0));
}

static uint32_t read_cr3(void)
{
    uint64_t v;

    __asm__ volatile("mov %%cr3, %0" : "=r"(v));
    return (uint32_t)v;
}

/* Logical processors from CPUID leaf 1 (EBX[23:16] when HTT is set), else 1. */
static unsigned long cpuid_cpus(void)
{
    uint32_t r[4];
    unsigned long n;

    cpuid(1, r);
    if (!(r[3] & CPUID1_EDX_HTT))
        return 1;
    n = (r[1] >> 16) & 0xff;
    return n ? n : 1;
}

static void tsc_delay(uint64_t cycles)
{
    uint64_t t0 = rdtsc();

    while (rdtsc() - t0 < cycles)
        cpu_relax();
}

/* [a, a + len) intersects the trampoline page. */
static bool hits_tramp(uint64_t a, uint64_t len)
{
    return len && a < SMP_TRAMP_PADDR + PAGE && a + len > SMP_TRAMP_PADDR;
}

/*
 * Why the trampoline page cannot be overwritten, or NULL if it can: it must
 * be RAM in the memory map (if there is one) and hold none of what the
 * loader handed over (start_info, command line, memory map, module list and
 * modules) nor the image. The probe allocates only above its image (mem.c),
 * so nothing else of its own lives below 1 MiB.
 */
static const char *tramp_conflict(const struct hvm_start_info *si, const char *cmdline)
{
    const struct hvm_memmap_table_entry *e;
    const struct hvm_modlist_entry *m;
    bool in_ram = false;
    uint32_t i;

    if (hits_tramp((uintptr_t)si, sizeof(*si)))
        return "start_info";
    if (si->cmdline_paddr && hits_tramp(si->cmdline_paddr, strlen(cmdline) + 1))
        return "command line";
    if (hits_tramp((uintptr_t)__image_start, (uintptr_t)(__image_end - __image_start)))
        return "probe image";
    if (si->nr_modules && si->modlist_paddr) {
        if (hits_tramp(si->modlist_paddr, (uint64_t)si->nr_modules * sizeof(*m)))
            return "module list";
        if (si->modlist_paddr < 0x100000000ull) {
            m = (const struct hvm_modlist_entry *)(uintptr_t)si->modlist_paddr;
            for (i = 0; i < si->nr_modules; i++)
                if (hits_tramp(m[i].paddr, m[i].size))
                    return "module";
        }
    }
    if (si->version < 1 || si->memmap_paddr == 0)
        return NULL;                /* no map: below 640 KiB is RAM by convention */
    if (hits_tramp(si->memmap_paddr, (uint64_t)si->memmap_entries * sizeof(*e)))
        return "memory map";
    if (si->memmap_paddr >= 0x100000000ull)
        return NULL;
    e = (const struct hvm_memmap_table_entry *)(uintptr_t)si->memmap_paddr;
    for (i = 0; i < si->memmap_entries && !in_ram; i++)
        in_ram = e[i].type == HVM_MEMMAP_TYPE_RAM && e[i].addr <= SMP_TRAMP_PADDR &&
                 e[i].addr + e[i].size >= SMP_TRAMP_PADDR + PAGE;
    return in_ram ? NULL : "not RAM";
}

/* Number of CPUs to expect; exits 2 on a bad cpus= value. */
static unsigned long expected_cpus(const char *cmdline)
{
    unsigned long n;
    size_t len;

    if (cmdline_get_uint(cmdline, "cpus", SMP_MAX_CPUS, &n) < 0 ||
        (cmdline_get(cmdline, "cpus", &len) && n == 0)) {
        console_puts("probe: bad cpus value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (cmdline_get(cmdline, "cpus", &len))
        return n;
    n = cpuid_cpus();
    if (n > SMP_MAX_CPUS) {
        cprintf("probe: smp clamped to %u cpus\n", (unsigned int)SMP_MAX_CPUS);
        n = SMP_MAX_CPUS;
    }
    return n;
}

void smp_run(const struct hvm_start_info *si, const char *cmdline)
{
    unsigned long expected = expected_cpus(cmdline), answered = 0, id, sent;
    uint64_t hz, us, delay_us, t0, seen[4], bits;
    unsigned int w;
    const char *why, *src, *sep = "";
    uint8_t bsp;

    if (lapic_init())
        probe_exit(PROBE_EXIT_LAPIC);
    bsp = lapic_id();
    alive[bsp >> 6] |= 1ull << (bsp & 63);

    if (expected > 1) {
        if ((why = tramp_conflict(si, cmdline))) {
            cprintf("probe: smp trampoline 0x%x unusable (%s)\n",
                    (unsigned int)SMP_TRAMP_PADDR, why);
            probe_exit(PROBE_EXIT_SMP);
        }
        smp_ap_cr3 = read_cr3();
        smp_ap_next = 0;
        memcpy((void *)(uintptr_t)SMP_TRAMP_PADDR, ap_tramp_start,
               (size_t)(ap_tramp_end - ap_tramp_start));
        /* Cycles per us: the CPUID TSC frequency; if it is only assumed
         * (2 GHz), the INIT/SIPI delays use 4 GHz so they are at least
         * nominal on faster hosts, while the 2 s deadline keeps 2 GHz. */
        hz = lab_tsc_hz(&src);
        us = hz / 1000000;
        delay_us = strcmp(src, "assumed") ? us : SMP_DELAY_ASSUMED_HZ / 1000000;
        /* APIC ID = vCPU index (msivm's CPUID and MADT): IDs 0, 1, ...
         * without the BSP's own, until N - 1 APs were started. */
        for (id = 0, sent = 0; sent < expected - 1 && id < 255; id++) {
            if (id == bsp)
                continue;
            sent++;
            lapic_send_init((uint8_t)id);
            tsc_delay(INIT_WAIT_US * delay_us);
            lapic_send_sipi((uint8_t)id, SMP_SIPI_VECTOR);
            tsc_delay(SIPI_WAIT_US * delay_us);
            lapic_send_sipi((uint8_t)id, SMP_SIPI_VECTOR);
        }
        t0 = rdtsc();
        while (ap_arrived < expected - 1 && rdtsc() - t0 < ALIVE_WAIT_US * us)
            cpu_relax();
    }

    /* Snapshot, then walk only the set bits (bsf; the loop is emulated). */
    for (w = 0; w < 4; w++) {
        seen[w] = alive[w];
        for (bits = seen[w]; bits; bits &= bits - 1)
            answered++;
    }
    cprintf("probe: cpus expected=%lu answered=%lu apic_ids=", expected, answered);
    for (w = 0; w < 4; w++) {
        for (bits = seen[w]; bits; bits &= bits - 1) {
            cprintf("%s%u", sep, w * 64 + (unsigned int)__builtin_ctzll(bits));
            sep = ",";
        }
    }
    console_puts("\n");
    if (answered < expected)
        probe_exit(PROBE_EXIT_SMP);
}
