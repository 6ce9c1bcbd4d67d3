/* guest/src/isr.S - interrupt/exception entry stubs (vectors 0..255) and the common save/dispatch/iretq path. */

/* Vectors that push an error code: 8, 10-14, 17, 21, 29, 30. */
#define ERRCODE_MASK 0x60227d00

#define ISR_STUB_SIZE 16

/*
 * isr_stubs[v] (at isr_stubs + v * ISR_STUB_SIZE): push a dummy error code if
 * the CPU did not, push the vector, jump to isr_common. At most 12 bytes each,
 * padded to 16 so idt.c can compute the addresses.
 */
    .text
    .balign ISR_STUB_SIZE
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

    .section .note.GNU-stack, "", @progbits
