/* guest/src/isr.S - interrupt/exception entry stubs (vectors 0..255) and the common save/dispatch/iretq path. */

/* Vectors that push an error code: 8, 10-14, 17, 21, 29, 30. */
#define ERRCODE_MASK 0x60227d00

#define ISR_STUB_SIZE 16

#define SEL_CODE64      0x08    /* entry.S GDT */
#define GATE_INTR_DPL0  0x8e    /* present, DPL 0, 64-bit interrupt gate */

/*
 * isr_stubs[v] (at isr_stubs + v * ISR_STUB_SIZE): push a dummy error code if
 * the CPU did not, push the vector, jump to isr_common. At most 12 bytes each,
 * padded to 16. The 4 KiB block is 4 KiB aligned (probe.ld relies on it).
 */
    .text
    .balign 4096
    .globl isr_stubs
    .type isr_stubs, @function
isr_stubs:
    .set .Lvec, 0
    .rept 256
    .balign ISR_STUB_SIZE
    .if .Lvec < 32
    .if ((ERRCODE_MASK >> .Lvec) & 1) == 0
    pushq   $0
    .endif
    .else
    pushq   $0
    .endif
    pushq   $.Lvec
    jmp     isr_common
    .set .Lvec, .Lvec + 1
    .endr
    .balign ISR_STUB_SIZE
    .size isr_stubs, . - isr_stubs

/*
 * Stack on entry: vector, error code, RIP, CS, RFLAGS, RSP, SS. The CPU
 * 16-byte aligned RSP before pushing its 5 words; with the 2 pushed above and
 * the 9 caller-saved registers below RSP is 16-byte aligned again at the call.
 * Callee-saved registers are preserved by the C code itself; the guest is
 * built with general-purpose registers only, so there is no FPU/SSE state.
 * Every instruction here is emulated under PVM: keep it short.
 */
    .type isr_common, @function
isr_common:
    pushq   %rax
    pushq   %rcx
    pushq   %rdx
    pushq   %rsi
    pushq   %rdi
    pushq   %r8
    pushq   %r9
    pushq   %r10
    pushq   %r11
    movl    72(%rsp), %edi          /* vector */
    leaq    80(%rsp), %rsi          /* frame: error code, RIP, CS, RFLAGS, RSP, SS */
    cld
    call    isr_dispatch
    popq    %r11
    popq    %r10
    popq    %r9
    popq    %r8
    popq    %rdi
    popq    %rsi
    popq    %rdx
    popq    %rcx
    popq    %rax
    addq    $16, %rsp               /* vector and error code */
    iretq
    .size isr_common, . - isr_common

/*
 * Timed entry stubs. idt_time_vector() points a vector's gate at one of
 * these; it takes rdtsc as its third instruction, before anything else is
 * saved, stores it in isr_timed_tsc[k], restores %rax/%rdx and jumps on to
 * the vector's ordinary stub (isr_timed_target[k] = isr_stubs + 16 * v), so
 * the handler sees the usual frame. 8 instructions added per interrupt, on
 * the timed vectors only.
 */
#define ISR_NTIMED 4
    .globl isr_timed_stubs
    .type isr_timed_stubs, @function
    .balign 32
isr_timed_stubs:
    .set .Lk, 0
    .rept ISR_NTIMED
    .balign 32
    pushq   %rax
    pushq   %rdx
    rdtsc
    movl    %eax, isr_timed_tsc + 8 * .Lk(%rip)
    movl    %edx, isr_timed_tsc + 8 * .Lk + 4(%rip)
    popq    %rdx
    popq    %rax
    jmp     *isr_timed_target + 8 * .Lk(%rip)
    .set .Lk, .Lk + 1
    .endr
    .size isr_timed_stubs, . - isr_timed_stubs

    .data
    .balign 8
    .globl isr_timed_tsc, isr_timed_target
isr_timed_tsc:
    .fill ISR_NTIMED, 8, 0
isr_timed_target:
    .fill ISR_NTIMED, 8, 0

/*
 * The IDT itself, complete at link time (no run-time loop: every CPL0
 * instruction is emulated). Gate v points at isr_stubs + 16 * v; probe.ld
 * provides the two 16-bit halves of isr_stubs (offset 63:32 is 0). In .data
 * because idt_time_vector() repoints single gates at run time.
 */
    .data
    .balign 16
    .globl idt_table
    .type idt_table, @object
idt_table:
    .set .Lvec, 0
    .rept 256
    .word   __isr_stubs_lo16 + .Lvec * ISR_STUB_SIZE   /* offset 15:0 */
    .word   SEL_CODE64
    .byte   0                                          /* IST */
    .byte   GATE_INTR_DPL0
    .word   __isr_stubs_hi16                           /* offset 31:16 */
    .long   0                                          /* offset 63:32 */
    .long   0
    .set .Lvec, .Lvec + 1
    .endr
    .size idt_table, . - idt_table

    .section .note.GNU-stack, "", @progbits
