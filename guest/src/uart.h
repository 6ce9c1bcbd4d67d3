/* guest/src/uart.h - polled 8250/16550 UART on COM1 (output only). */
#ifndef PROBE_UART_H
#define PROBE_UART_H

#include <stddef.h>

#define UART_COM1_BASE 0x3f8

/* Program COM1: 8N1, divisor 1 (115200), FIFOs on, interrupts off. Call once. */
void uart_init(void);

/* Write n raw bytes (no "\n" -> "\r\n" translation). LSR.THRE is polled only
 * once per 16 bytes (the TX FIFO depth), so each byte costs ~one port write. */
void uart_write(const char *s, size_t n);

#endif
