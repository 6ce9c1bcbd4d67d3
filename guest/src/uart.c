/* guest/src/uart.c - polled 8250/16550 UART output on COM1. */
#include "uart.h"
#include "io.h"

#define UART_THR 0      /* transmit holding register (DLAB=0) */
#define UART_DLL 0      /* divisor latch low (DLAB=1) */
#define UART_IER 1      /* interrupt enable (DLAB=0) */
#define UART_DLM 1      /* divisor latch high (DLAB=1) */
#define UART_FCR 2      /* FIFO control */
#define UART_LCR 3      /* line control */
#define UART_LSR 5      /* line status */

#define LCR_8N1     0x03
#define LCR_DLAB    0x80
#define FCR_ENABLE  0x01
#define FCR_CLR_RX  0x02
#define FCR_CLR_TX  0x04
#define LSR_THRE    0x20

#define UART_FIFO_DEPTH 16
#define UART_POLL_LIMIT 100000  /* give up waiting on a dead UART (each poll is an exit) */

/* Bytes that can still be written before THRE must be polled again. */
static unsigned int uart_room;

void uart_init(void)
{
    outb(UART_COM1_BASE + UART_IER, 0);
    outb(UART_COM1_BASE + UART_LCR, LCR_DLAB);
    outb(UART_COM1_BASE + UART_DLL, 1);
    outb(UART_COM1_BASE + UART_DLM, 0);
    outb(UART_COM1_BASE + UART_LCR, LCR_8N1);
    outb(UART_COM1_BASE + UART_FCR, FCR_ENABLE | FCR_CLR_RX | FCR_CLR_TX);
    uart_room = 0;
}

/* Wait until the TX FIFO is empty (THRE), i.e. UART_FIFO_DEPTH bytes fit. */
static void uart_wait_thre(void)
{
    unsigned int i;

    for (i = 0; i < UART_POLL_LIMIT; i++) {
        if (inb(UART_COM1_BASE + UART_LSR) & LSR_THRE)
            return;
        cpu_relax();
    }
}

void uart_write(const char *s, size_t n)
{
    while (n--) {
        if (uart_room == 0) {
            uart_wait_thre();
            uart_room = UART_FIFO_DEPTH;
        }
        outb(UART_COM1_BASE + UART_THR, (unsigned char)*s++);
        uart_room--;
    }
}
