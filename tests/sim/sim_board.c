// SPDX-License-Identifier: GPL-2.0-or-later
/* sim_board.c -- simboard: board output queue, scheduling, power and line editing */
#include "sim.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const mode_names[MODE_COUNT] = {
	[MODE_NORMAL] = "normal",
	[MODE_HANG_UBOOT] = "hang-uboot",
	[MODE_NO_AUTOBOOT] = "no-autoboot",
	[MODE_UBOOT_ERROR] = "uboot-error",
	[MODE_PANIC] = "panic",
	[MODE_OOPS] = "oops",
	[MODE_HANG_KERNEL] = "hang-kernel",
	[MODE_SLOW] = "slow",
	[MODE_GARBAGE] = "garbage",
	[MODE_LOGIN_FAIL] = "login-fail",
	[MODE_RESET_LOOP] = "reset-loop",
	[MODE_NO_UBOOT] = "no-uboot",
};

const char *sim_mode_name(enum sim_mode m)
{
	return m < MODE_COUNT ? mode_names[m] : "?";
}

/* Returns the mode for a name, or -1. */
int sim_mode_parse(const char *s)
{
	int i;

	for (i = 0; i < MODE_COUNT; i++)
		if (!strcmp(s, mode_names[i]))
			return i;
	return -1;
}

const char *sim_stage_name(enum sim_stage s)
{
	static const char *const names[] = { "off", "uboot", "kernel", "login", "shell" };

	return s <= STAGE_SHELL ? names[s] : "?";
}

uint64_t sim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t sim_realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int sim_journal(struct board *b, const char *fmt, ...)
{
	char path[4096], line[1024];
	va_list ap;
	size_t n;
	int fd, r = 0;

	n = (size_t)snprintf(line, sizeof(line), "%s ", b->name);
	va_start(ap, fmt);
	if (n < sizeof(line))
		n += (size_t)vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	sim_dir_path(path, sizeof(path), "journal", "");
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, n) != (ssize_t)n)
		r = -1;
	if (fd >= 0)
		close(fd);
	return r;
}

/* splitmix64: small, good enough, and reproducible from the seed. */
uint64_t sim_rand(struct board *b)
{
	uint64_t z = (b->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Delays of the boot stages, five times longer in slow mode. */
unsigned int sim_slow(const struct board *b, unsigned int ms)
{
	return b->cur == MODE_SLOW ? ms * 5 : ms;
}

/*
 * Put bytes in the output queue for the pacing writer.  When the queue is
 * full the oldest bytes go, like a UART nobody listens to.
 */
void sim_queue(struct board *b, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t tail, first;

	if (b->master < 0 || !n)
		return;
	if (!b->q) {
		b->q = malloc(SIM_OUTQ_SIZE);
		if (!b->q)
			return;
	}
	if (n >= SIM_OUTQ_SIZE) {
		b->dropped += b->qlen + n - SIM_OUTQ_SIZE;
		s += n - SIM_OUTQ_SIZE;
		n = SIM_OUTQ_SIZE;
		b->qhead = b->qlen = 0;
	} else if (b->qlen + n > SIM_OUTQ_SIZE) {
		size_t over = b->qlen + n - SIM_OUTQ_SIZE;

		b->qhead = (b->qhead + over) % SIM_OUTQ_SIZE;
		b->qlen -= over;
		b->dropped += over;
	}
	tail = (b->qhead + b->qlen) % SIM_OUTQ_SIZE;
	first = SIM_OUTQ_SIZE - tail < n ? SIM_OUTQ_SIZE - tail : n;
	memcpy(b->q + tail, s, first);
	memcpy(b->q, s + first, n - first);
	b->qlen += n;
	if (!b->tx_at)
		b->tx_at = sim_now();
}

/* Queue output and advance the clock of the UART that sends it. */
static void emit(struct board *b, const void *p, size_t n)
{
	uint64_t now = sim_now();

	if (b->baud) {
		if (b->tx_done_at < now)
			b->tx_done_at = now;
		b->tx_done_at += n * 10 * NSEC_PER_SEC / b->baud;
	}
	sim_queue(b, p, n);
}

/* Garbage mode: a few random bytes after every few lines, as from a noisy line. */
static void emit_garbled(struct board *b, const char *s, size_t n)
{
	unsigned char junk[24];
	size_t i, j, start = 0, len;

	for (i = 0; i < n; i++) {
		if (s[i] != '\n')
			continue;
		emit(b, s + start, i + 1 - start);
		start = i + 1;
		if (b->garbage_gap-- > 0)
			continue;
		len = 4 + sim_rand(b) % (sizeof(junk) - 4);
		for (j = 0; j < len; j++)
			junk[j] = sim_rand(b) & 0xff;
		emit(b, junk, len);
		b->garbage_gap = 2 + sim_rand(b) % 4;
	}
	if (start < n)
		emit(b, s + start, n - start);
}

/* Console output of a powered board. */
void sim_write(struct board *b, const void *p, size_t n)
{
	if (!b->powered || b->redir_null)
		return;
	if (b->redir) {
		sim_file_append(b->redir, p, n);
		return;
	}
	if (b->cur == MODE_GARBAGE && (b->stage == STAGE_UBOOT || b->stage == STAGE_KERNEL))
		emit_garbled(b, p, n);
	else
		emit(b, p, n);
}

void sim_puts(struct board *b, const char *s)
{
	sim_write(b, s, strlen(s));
}

static void sim_vprintf(struct board *b, const char *fmt, va_list ap)
{
	char buf[2048];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n < 0)
		return;
	sim_write(b, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void sim_printf(struct board *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sim_vprintf(b, fmt, ap);
	va_end(ap);
}

/* A kernel console line "[    1.234567] text", also kept for dmesg. */
static void klogv(struct board *b, bool zero, const char *fmt, va_list ap)
{
	char text[1024], line[1100];
	uint64_t t = zero ? 0 : sim_now() - b->kstart;

	vsnprintf(text, sizeof(text), fmt, ap);
	snprintf(line, sizeof(line), "[%5llu.%06llu] %s", (unsigned long long)(t / NSEC_PER_SEC),
		 (unsigned long long)(t % NSEC_PER_SEC / 1000), text);
	sim_dmesg_add(b, line);
	sim_printf(b, "%s\r\n", line);
}

void sim_klog(struct board *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	klogv(b, false, fmt, ap);
	va_end(ap);
}

/* The same with the timestamp of the earliest boot messages, 0.000000. */
void sim_klog_zero(struct board *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	klogv(b, true, fmt, ap);
	va_end(ap);
}

/* Continue with fn at monotonic time at (ns). */
void sim_wake(struct board *b, uint64_t at, sim_fn fn)
{
	b->wake_at = at ? at : 1;
	b->wake_fn = fn;
}

void sim_after(struct board *b, unsigned int ms, sim_fn fn)
{
	sim_wake(b, sim_now() + ms * NSEC_PER_MSEC, fn);
}

/*
 * Continue ms after the UART has sent what is queued, so that a stage does not
 * run ahead of its output.  With a reader attached, also wait while the queue
 * is more than half full (baud 0 and slow readers), so nothing is dropped.
 */
static uint64_t tx_ready_at(const struct board *b)
{
	uint64_t now = sim_now(), at = now;

	if (b->tx_done_at > at)
		at = b->tx_done_at;
	if (sim_tx_backlog(b) && at < now + 2 * NSEC_PER_MSEC)
		at = now + 2 * NSEC_PER_MSEC;
	return at;
}

bool sim_tx_backlog(const struct board *b)
{
	return b->master >= 0 && !b->hup && b->qlen > SIM_OUTQ_SIZE / 2;
}

void sim_after_tx(struct board *b, unsigned int ms, sim_fn fn)
{
	sim_wake(b, tx_ready_at(b) + ms * NSEC_PER_MSEC, fn);
}

/* Continue at time at, or once the queued output is sent if that is later. */
void sim_wake_tx(struct board *b, uint64_t at, sim_fn fn)
{
	uint64_t ready = tx_ready_at(b);

	sim_wake(b, at > ready ? at : ready, fn);
}

void sim_cancel(struct board *b)
{
	b->wake_at = 0;
	b->wake_fn = NULL;
}

static void pump(struct board *b);

/* Run the pending continuation; the main loop calls it once wake_at has passed. */
void sim_run_wake(struct board *b)
{
	sim_fn fn = b->wake_fn;

	sim_cancel(b);
	if (fn && b->powered)
		fn(b);
	pump(b);
}

/* A fresh boot (power-on, reset, reboot): new random seed, nothing pending. */
void sim_boot_begin(struct board *b)
{
	b->boots++;
	sim_files_clear(b);
	b->rng = (uint64_t)(b->idx + 1) * 0x100000001b3ULL + b->boots;
	b->garbage_gap = 2 + sim_rand(b) % 4;
	sim_cancel(b);
	sim_cmd_clear(b);
	b->talen = 0;
	b->len = 0;
	b->last_cr = false;
	b->stream_until = 0;
	b->spew_left = 0;
	b->nloaded = 0;
}

void sim_power_on(struct board *b)
{
	if (b->powered)
		return;
	b->powered = true;
	b->cur = b->mode;
	b->tx_done_at = 0;
	sim_boot_begin(b);
	if (b->cur == MODE_NO_UBOOT)
		sim_kernel_boot(b, NULL, true);
	else
		sim_firmware_start(b);
}

/* The board's firmware, from power-on or a reset. */
void sim_firmware_start(struct board *b)
{
	switch (b->firmware) {
	case FW_BAREBOX:
		sim_barebox_start(b);
		break;
	case FW_DEPTHCHARGE:
		sim_depthcharge_start(b);
		break;
	default:
		sim_uboot_start(b);
		break;
	}
}

static const char *const firmware_names[FW_COUNT] = { "u-boot", "barebox", "depthcharge" };

const char *sim_firmware_name(enum sim_firmware f)
{
	return f < FW_COUNT ? firmware_names[f] : "?";
}

int sim_firmware_parse(const char *s)
{
	int i;

	for (i = 0; i < FW_COUNT; i++)
		if (!strcmp(s, firmware_names[i]))
			return i;
	return -1;
}

/* Power off: silence, and what the UART had not sent yet is lost. */
void sim_power_off(struct board *b)
{
	b->powered = false;
	sim_cancel(b);
	sim_cmd_clear(b);
	b->stage = STAGE_OFF;
	b->in = IN_DISCARD;
	b->qhead = b->qlen = 0;
	b->talen = 0;
	b->len = 0;
	b->stream_until = 0;
	b->spew_left = 0;
}

void sim_board_free(struct board *b)
{
	sim_files_clear(b);
	sim_cmd_clear(b);
	free(b->cmdq.cmd);
	free(b->cmdq.sep);
	sim_env_clear(&b->uenv);
	sim_env_clear(&b->saved_env);
	sim_env_clear(&b->senv);
	free(b->q);
	free(b->cmdline);
	free(b->nfsroot);
	free(b->dmesg);
}

/* Read a line (echoed unless secret) and hand it to fn. */
void sim_readline(struct board *b, bool secret, sim_line_fn fn)
{
	b->in = secret ? IN_SECRET : IN_LINE;
	b->line_fn = fn;
	b->len = 0;
}

static void hold(struct board *b, unsigned char c)
{
	if (b->talen < sizeof(b->typeahead))
		b->typeahead[b->talen++] = c;
}

/* Ctrl-C at a prompt: U-Boot says <INTERRUPT>, a terminal echoes ^C. */
static void interrupt_line(struct board *b)
{
	b->len = 0;
	sim_puts(b, b->stage == STAGE_UBOOT ? "<INTERRUPT>\r\n" : "^C\r\n");
	if (b->prompt_fn)
		b->prompt_fn(b);
}

static void line_byte(struct board *b, unsigned char c)
{
	bool echo = b->in == IN_LINE;

	if (c == '\n' && b->last_cr) {
		b->last_cr = false;
		return;
	}
	b->last_cr = c == '\r';
	if (c == '\r' || c == '\n') {
		if (echo)
			sim_puts(b, "\r\n");
		b->line[b->len] = '\0';
		b->len = 0;
		b->in = IN_HOLD;	/* until the handler says what comes next */
		b->line_fn(b, b->line);
	} else if (c == 0x7f || c == 0x08) {
		if (b->len) {
			b->len--;
			if (echo)
				sim_puts(b, "\b \b");
		}
	} else if (c == 0x03) {
		interrupt_line(b);
	} else if (c == 0x04 && !b->len && b->stage == STAGE_SHELL) {
		sim_puts(b, "logout\r\n");
		sim_login_start(b);
	} else if ((c >= 0x20 || c == '\t') && b->len + 1 < sizeof(b->line)) {
		b->line[b->len++] = (char)c;
		if (echo)
			sim_write(b, &c, 1);
	}
}

static void input_byte(struct board *b, unsigned char c)
{
	switch (b->in) {
	case IN_DISCARD:
		break;
	case IN_HOLD:
		hold(b, c);
		break;
	case IN_BUSY:
		if (c == 0x03)
			sim_cmd_abort(b);
		else
			hold(b, c);
		break;
	case IN_COUNTDOWN:
		b->key_fn(b, c);
		break;
	case IN_LINE:
	case IN_SECRET:
		line_byte(b, c);
		break;
	}
}

/* Feed the kept input once the board reads again. */
static void pump(struct board *b)
{
	unsigned char buf[SIM_TYPEAHEAD];
	size_t i, n;

	if (b->pumping)
		return;
	b->pumping = true;
	while (b->talen && b->powered &&
	       (b->in == IN_LINE || b->in == IN_SECRET || b->in == IN_COUNTDOWN)) {
		n = b->talen;
		memcpy(buf, b->typeahead, n);
		b->talen = 0;
		for (i = 0; i < n; i++)
			input_byte(b, buf[i]);
	}
	b->pumping = false;
}

/* Bytes typed on the console (written to the pty slave). */
void sim_input(struct board *b, const unsigned char *p, size_t n)
{
	size_t i;

	if (!b->powered)
		return;
	for (i = 0; i < n; i++)
		input_byte(b, p[i]);
	pump(b);
}
