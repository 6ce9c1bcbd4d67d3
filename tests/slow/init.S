/* tests/slow: the initrd's /init for linux_boot.sh: prints a marker on the console, then restarts. */
	.globl _start
	.text
_start:
	mov	$1, %edi		/* write(1, marker, len) */
	lea	marker(%rip), %rsi
	mov	$marker_len, %edx
	mov	$1, %eax
	syscall
	mov	$0xfee1dead, %edi	/* reboot(MAGIC1, MAGIC2, RESTART, 0) */
	mov	$672274793, %esi
	mov	$0x01234567, %edx
	xor	%r10d, %r10d
	mov	$169, %eax
	syscall
1:	pause
	jmp	1b
	.section .rodata
marker:	.ascii "msivm-initrd: /init ran from the initrd\n"
	.set marker_len, . - marker
