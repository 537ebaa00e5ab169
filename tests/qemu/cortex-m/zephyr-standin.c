// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zephyr-standin.c -- a bare-metal program for QEMU's lm3s6965evb (Cortex-M3)
 * that prints on UART0 what a Zephyr test image prints, for a job of LAVA's
 * Zephyr QEMU shape (a `monitors` test: "tc_start()", "PASS - <case>" /
 * "FAIL - <case>" lines, "PROJECT EXECUTION SUCCESSFUL|FAILED").  Each case
 * computes something and checks it.  picolibc's printf writes through UART0;
 * at the end the program asks for a system reset, which stops QEMU run with
 * -no-reboot.  Built by tests/qemu/cortex-m-image.sh.
 */
#include <stdint.h>
#include <stdio.h>

#define UART0_DR (*(volatile uint32_t *)0x4000c000)
#define UART0_FR (*(volatile uint32_t *)0x4000c018)
#define UART_FR_TXFF (1u << 5)
#define SCB_AIRCR (*(volatile uint32_t *)0xe000ed0c)
#define AIRCR_RESET 0x05fa0004u

static int uart_putc(char c, FILE *f)
{
	(void)f;
	while (UART0_FR & UART_FR_TXFF)
		;
	UART0_DR = (uint32_t)(unsigned char)c;
	return (unsigned char)c;
}

static FILE uart = FDEV_SETUP_STREAM(uart_putc, NULL, NULL, _FDEV_SETUP_WRITE);
FILE *const stdout = &uart;
FILE *const stderr = &uart;

static int failed;

static void report(const char *name, int ok)
{
	printf("%s - %s\n", ok ? "PASS" : "FAIL", name);
	failed += !ok;
}

/* sum of 1..n, the slow way */
static unsigned sum(unsigned n)
{
	unsigned s = 0;

	while (n)
		s += n--;
	return s;
}

static volatile uint32_t ram_word;

int main(void)
{
	printf("***** Booting Zephyr OS (labd's bare-metal stand-in) *****\n");
	printf("tc_start() - Test Microkernel Task API\n");
	report("test_task_sum", sum(100) == 5050);
	ram_word = 0xa5a5a5a5u;
	report("test_task_ram", ram_word == 0xa5a5a5a5u);
	report("test_task_printf", snprintf(NULL, 0, "%d-%s", 42, "ok") == 5);
	printf("===================================================================\n");
	printf("PROJECT EXECUTION %s\n", failed ? "FAILED" : "SUCCESSFUL");
	SCB_AIRCR = AIRCR_RESET;
	for (;;)
		;
}
