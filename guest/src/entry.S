/* guest/src/entry.S - PVH 32-bit entry, static identity page tables, switch to long mode. */

#define XEN_ELFNOTE_PHYS32_ENTRY 18

#define CR0_PE      0x00000001
#define CR0_PG      0x80000000
#define CR4_PAE     0x00000020
#define MSR_EFER    0xc0000080
#define EFER_LME    0x00000100

#define PTE_P       0x001
#define PTE_RW      0x002
#define PTE_PWT     0x008
#define PTE_PCD     0x010
#define PTE_PS      0x080

#define SEL_CODE64  0x08
#define SEL_DATA    0x10

#define STACK_SIZE  16384

/*
 * PVH ELF note: name "Xen", type XEN_ELFNOTE_PHYS32_ENTRY, 4-byte descriptor =
 * physical address of the 32-bit entry point.
 */
    .section .note.Xen, "a", @note
    .balign 4
    .long 2f - 1f               /* n_namesz */
    .long 4f - 3f               /* n_descsz */
    .long XEN_ELFNOTE_PHYS32_ENTRY
1:  .asciz "Xen"
2:  .balign 4
3:  .long pvh_start32
4:  .balign 4

/*
 * Entry (PVH ABI): 32-bit protected mode, paging off, flat CS/DS/ES/SS,
 * %ebx = physical address of struct hvm_start_info, IF=0, GDTR/IDTR undefined.
 * Every instruction here runs emulated, so the path is kept minimal.
 */
    .section .text.entry, "ax", @progbits
    .code32
    .globl pvh_start32
    .type pvh_start32, @function
pvh_start32:
    movl    %ebx, %esi              /* start_info; becomes probe_main's %rdi */
    lgdt    gdt_desc
    movl    $CR4_PAE, %eax
    movl    %eax, %cr4
    movl    $pml4, %eax
    movl    %eax, %cr3
    movl    $MSR_EFER, %ecx
    movl    $EFER_LME, %eax
    xorl    %edx, %edx
    wrmsr
    movl    %cr0, %eax
    orl     $(CR0_PG | CR0_PE), %eax
    movl    %eax, %cr0
    ljmp    $SEL_CODE64, $start64
    .size pvh_start32, . - pvh_start32

    .code64
start64:
    movl    $SEL_DATA, %eax
    movl    %eax, %ds
    movl    %eax, %es
    movl    %eax, %ss
    movl    %eax, %fs
    movl    %eax, %gs
    movl    $stack_top, %esp
    /* Zero .bss (excluding the stack and .bss.noinit); ELF loaders should
     * already have. Each qword is an emulated iteration (~1 us under PVM),
     * so .bss is kept to a few KiB. */
    movl    $__bss_start, %edi
    movl    $__bss_qwords, %ecx
    xorl    %eax, %eax
    rep stosq
    movl    %esi, %edi
    call    probe_main
1:  cli
    hlt
    jmp     1b

/* GDT: null, 64-bit code (0x08), flat data (0x10). */
    .section .rodata
    .balign 8
gdt:
    .quad 0
    .quad 0x00af9a000000ffff
    .quad 0x00cf92000000ffff
gdt_end:
    .balign 4
gdt_desc:
    .word gdt_end - gdt - 1
    .long gdt

/*
 * Static page tables: PML4[0] -> PDPT, PDPT[0..3] -> PD0..PD3, each PD maps
 * 1 GiB with 2 MiB pages. 0xC0000000-0xFFFFFFFF (PD3: MMIO hole for IOAPIC,
 * LAPIC, PCI BARs) is uncacheable (PCD|PWT).
 */
    .section .data.pagetables, "aw", @progbits
    .balign 4096
pml4:
    .quad pdpt + (PTE_P | PTE_RW)
    .fill 511, 8, 0
pdpt:
    .quad pd + 0x0000 + (PTE_P | PTE_RW)
    .quad pd + 0x1000 + (PTE_P | PTE_RW)
    .quad pd + 0x2000 + (PTE_P | PTE_RW)
    .quad pd + 0x3000 + (PTE_P | PTE_RW)
    .fill 508, 8, 0
pd:
    .set .Lpd_idx, 0
    .rept 2048
    .if .Lpd_idx < 1536
    .quad (.Lpd_idx << 21) | (PTE_P | PTE_RW | PTE_PS)
    .else
    .quad (.Lpd_idx << 21) | (PTE_P | PTE_RW | PTE_PS | PTE_PCD | PTE_PWT)
    .endif
    .set .Lpd_idx, .Lpd_idx + 1
    .endr

/* 16 KiB boot stack, outside the zeroed .bss range. */
    .section .stack, "aw", @nobits
    .balign 16
stack_bottom:
    .skip STACK_SIZE
stack_top:

    .section .note.GNU-stack, "", @progbits
