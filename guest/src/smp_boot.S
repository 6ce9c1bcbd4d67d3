/* guest/src/smp_boot.S - AP bring-up: real-mode SIPI trampoline (copied to SMP_TRAMP_PADDR), 32-bit and 64-bit AP entry. */
#include "smp.h"

#define CR0_PE      0x00000001
#define CR0_PG      0x80000000
#define CR4_PAE     0x00000020
#define MSR_EFER    0xc0000080
#define EFER_LME    0x00000100

#define AP_SEL_CODE32   0x08
#define AP_SEL_DATA     0x10
#define AP_SEL_CODE64   0x18

/*
 * The trampoline: smp.c copies [ap_tramp_start, ap_tramp_end) to
 * SMP_TRAMP_PADDR; a SIPI with vector SMP_SIPI_VECTOR starts the AP there in
 * real mode with CS = SMP_TRAMP_PADDR >> 4, IP = 0 (IF=0 after INIT). It only
 * loads the GDT (the descriptor is addressed DS-relative, so it must travel
 * with the code), sets CR0 = PE (clearing CD/NW left by INIT) and far-jumps
 * to the 32-bit code in the image. Every instruction is emulated under PVM,
 * so it is 6 instructions.
 */
    .section .rodata.ap_tramp, "a", @progbits
    .balign 16
    .globl ap_tramp_start, ap_tramp_end
    .code16
ap_tramp_start:
    movw    %cs, %ax
    movw    %ax, %ds
    lgdtl   ap_tramp_gdtr - ap_tramp_start
    movl    $CR0_PE, %eax
    movl    %eax, %cr0
    ljmpl   $AP_SEL_CODE32, $ap_start32
    .balign 4
ap_tramp_gdtr:
    .word   ap_gdt_end - ap_gdt - 1
    .long   ap_gdt
ap_tramp_end:

/* AP GDT: null, 32-bit code 0x08, flat data 0x10, 64-bit code 0x18; accessed
 * bits preset so no CPU writes it. Stays in the image (read-only data). */
    .section .rodata
    .balign 8
ap_gdt:
    .quad 0
    .quad 0x00cf9b000000ffff
    .quad 0x00cf93000000ffff
    .quad 0x00af9b000000ffff
ap_gdt_end:

/*
 * 32-bit protected mode, paging off: PAE, the BSP's CR3 (smp_ap_cr3, set by
 * smp.c before the first SIPI), EFER.LME, CR0.PG, far jump to 64-bit code.
 */
    .text
    .code32
ap_start32:
    movl    $AP_SEL_DATA, %eax
    movl    %eax, %ds
    movl    %eax, %es
    movl    %eax, %ss
    movl    $CR4_PAE, %eax
    movl    %eax, %cr4
    movl    smp_ap_cr3, %eax
    movl    %eax, %cr3
    movl    $MSR_EFER, %ecx
    movl    $EFER_LME, %eax
    xorl    %edx, %edx
    wrmsr
    movl    $(CR0_PG | CR0_PE), %eax
    movl    %eax, %cr0
    ljmp    $AP_SEL_CODE64, $ap_start64

/*
 * 64-bit: take stack number `lock xadd smp_ap_next` (4 KiB each, from
 * smp_ap_stacks) and call smp_ap_main (never returns). An AP beyond the
 * stacks parks at once.
 */
    .code64
ap_start64:
    movl    $1, %eax
    lock xaddl %eax, smp_ap_next(%rip)
    cmpl    $(SMP_MAX_CPUS - 1), %eax
    jae     1f
    incl    %eax
    shll    $12, %eax
    leaq    smp_ap_stacks(%rip), %rsp
    addq    %rax, %rsp
    call    smp_ap_main
1:  cli
    hlt
    jmp     1b

    .section .note.GNU-stack, "", @progbits
