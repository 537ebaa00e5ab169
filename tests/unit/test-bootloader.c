// SPDX-License-Identifier: GPL-2.0-or-later
/* test-bootloader.c -- the bootloader dialects: their patterns, how a boot's parameters
 * are resolved, and the patterns against what real firmware printed */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "core/strbuf.h"
#include "run/actions/bootloader.h"
#include "run/match.h"
#include "tap.h"

static const char *top_dir(void)
{
	const char *top = getenv("LABD_TOP");

	return top ? top : ".";
}

/* Add @re to @m; a pattern that does not compile fails the test with its message. */
static int add(struct matcher *m, const char *re, int id)
{
	char err[256] = "";
	int r = matcher_add(m, re, id, err, sizeof(err));

	if (r < 0)
		printf("#   '%s': %s\n", re, err);
	return r;
}

static void feed(struct matcher *m, const char *s, size_t n)
{
	matcher_feed(m, (const uint8_t *)s, n);
}

/* Every pattern of every dialect compiles, and every dialect is complete. */
TEST(test_bootloader__dialects_compile)
{
	struct matcher *m;
	int b, i;

	CHECK(matcher_new(&m) == 0);
	for (b = 0; b < BOOTLOADER_COUNT; b++) {
		const struct bootloader_dialect *d = bootloader_dialect(b);

		CHECK(d && !strcmp(d->name, config_bootloader_name(b)));
		CHECK(d->interrupt_what && d->interrupt_prompt && d->interrupt_char);
		CHECK(d->error_messages && d->job_error_messages);
		CHECK(add(m, d->interrupt_prompt, 1) == 0);
		CHECK(d->menu || add(m, d->bootloader_prompt, 1) == 0);
		CHECK(!d->final_message || add(m, d->final_message, 1) == 0);
		CHECK(!d->menu || (add(m, d->menu_item, 1) == 0 && d->menu_down && d->menu_select));
		for (i = 0; d->error_messages[i]; i++)
			CHECK(add(m, d->error_messages[i], 1) == 0);
		for (i = 0; d->job_error_messages[i]; i++)
			CHECK(add(m, d->job_error_messages[i], 1) == 0);
	}
	CHECK(!bootloader_dialect(-1) && !bootloader_dialect(BOOTLOADER_COUNT));
	matcher_free(m);
}

/* The dialect's defaults, the type's group over them, the job's context over both. */
TEST(test_bootloader__resolve)
{
	struct bootloader_params p = { .interrupt_newline = -1, .needs_interrupt = -1 };
	char *errs[] = { "TFTP timeout", NULL };
	struct bootloader_conf c;
	json_t *ctx = json_pack("{s:s, s:s}", "bootloader_prompt", "juno# ", "interrupt_char", "");

	bootloader_conf_resolve(&dialect_uboot, &p, NULL, &c);
	CHECK_STR(c.interrupt_prompt, "Hit any key to stop autoboot");
	CHECK_STR(c.bootloader_prompt, "=> ");
	CHECK(c.interrupt_newline && c.needs_interrupt);
	CHECK_STR(c.final_message, "Starting kernel");
	CHECK(c.error_messages == (char *const *)dialect_uboot.error_messages);

	p.bootloader_prompt = "U-Boot# ";
	p.interrupt_newline = 0;
	p.final_message = "";
	p.error_messages = errs;
	bootloader_conf_resolve(&dialect_uboot, &p, ctx, &c);
	CHECK_STR(c.bootloader_prompt, "juno# ");	/* the job's context wins */
	CHECK_STR(c.interrupt_char, " ");		/* an empty context value does not */
	CHECK(!c.interrupt_newline);
	CHECK(!c.final_message);			/* "" in the type: none */
	CHECK(c.error_messages == errs);
	CHECK(c.job_error_messages == (char *const *)dialect_uboot.job_error_messages);
	json_decref(ctx);

	bootloader_conf_resolve(&dialect_depthcharge, &p, NULL, &c);
	CHECK(!c.needs_interrupt);
	bootloader_conf_resolve(&dialect_uefi_menu, &p, NULL, &c);
	CHECK_STR(c.menu_down, "\x1b[B");
	CHECK_STR(c.menu_select, "\r");
}

/* The echo of a command, as GRUB on EFI prints it: a cursor move before each character,
 * and a wrapped line (captured from OVMF + GRUB 2.06). */
TEST(test_bootloader__echo_with_cursor_moves)
{
	static const char grub[] =
		"grub> \x1b[09;07Hl\x1b[09;08H\x1b[09;08Hs\x1b[09;09H\x1b[09;09H \x1b[09;10H"
		"\x1b[09;10H(\x1b[09;79Ht\x1b[09;80H\n\r\x1b[10;01H\x1b[10;01Hf\x1b[10;02Htp)\r\n";
	struct strbuf re = STRBUF_INIT;
	struct matcher *m;
	struct match res;

	CHECK(bootloader_echo_regex("ls (tftp)", &re) == 0);
	CHECK(matcher_new(&m) == 0);
	CHECK(add(m, re.buf, 7) == 0);
	feed(m, grub, sizeof(grub) - 1);
	CHECK(matcher_next(m, &res) && res.id == 7);
	matcher_clear(m);
	strbuf_reset(&re);
	CHECK(bootloader_echo_regex("ls (tftp)/", &re) == 0);	/* not typed yet */
	CHECK(add(m, re.buf, 7) == 0);
	feed(m, grub, sizeof(grub) - 1);
	CHECK(!matcher_next(m, &res));
	matcher_free(m);
	strbuf_release(&re);
}

/* A loaded QEMU drops output bytes: an echo with a broken escape sequence (captured:
 * "\x1b[08;24H\x1b[08;24H2" came out as "\x1b[08;24H\x1b2"); and only the end of a
 * long command is looked for. */
TEST(test_bootloader__echo_with_lost_bytes)
{
	static const char out[] =
		"\x1b[08;22H0\x1b[08;23H\x1b[08;23H.\x1b[08;24H\x1b" "2\x1b[08;25H\x1b[08;25H."
		"\x1b[08;26H\x1b[08;26H2\x1b[08;27H\x1b[08;27H)\x1b[08;28H\n\rgrub> ";
	struct strbuf re = STRBUF_INIT;
	struct matcher *m;
	struct match res;

	CHECK(bootloader_echo_regex("0.2.2)", &re) == 0);
	CHECK(matcher_new(&m) == 0);
	CHECK(add(m, re.buf, 7) == 0);
	feed(m, out, sizeof(out) - 1);
	CHECK(matcher_next(m, &res) && res.id == 7);
	matcher_clear(m);
	strbuf_reset(&re);
	/* the whole line was garbled early on: its last 16 bytes still match */
	CHECK(bootloader_echo_regex("linux (tftp,10.0XXXXXXXXXXXXXXXXXXXXXX0.2.2)", &re) == 0);
	CHECK(add(m, re.buf, 7) == 0);
	feed(m, out, sizeof(out) - 1);
	CHECK(!matcher_next(m, &res));	/* "XX0.2.2)" is not there */
	matcher_free(m);
	strbuf_release(&re);
}

/* iPXE's error link wrapped at 80 columns by SeaBIOS's serial console still matches. */
TEST(test_bootloader__ipxe_wrapped_error)
{
	static const char out[] = "kernel tftp://10.0.2.2/bzImage.missing\r\ntftp://10.0.2.2/"
				  "bzImage.missing... No such file or directory (http://ipxe.org/2d"
				  "\r\n12603b)\r\niPXE> ";
	struct matcher *m;
	struct match res;
	int i;

	CHECK(matcher_new(&m) == 0);
	for (i = 0; dialect_ipxe.job_error_messages[i]; i++)
		CHECK(add(m, dialect_ipxe.job_error_messages[i], 2) == 0);
	for (i = 0; dialect_ipxe.error_messages[i]; i++)
		CHECK(add(m, dialect_ipxe.error_messages[i], 1) == 0);
	feed(m, out, sizeof(out) - 1);
	CHECK(matcher_next(m, &res) && res.id == 1);
	CHECK(res.before_len >= 4 && !memcmp(res.before + res.before_len - 4, "ory ", 4));
	matcher_free(m);
}

/* OVMF's menus: the highlighted entries in the order a key moves them, from a capture. */
TEST(test_bootloader__ovmf_menu_highlights)
{
	static const char *const want[] = {
		"<Standard English>", "Device Manager", "Boot Manager",
		"UEFI PXEv4 (MAC:525400123456)",
	};
	char path[4096], *data;
	const uint8_t *item;
	struct matcher *m;
	struct match res;
	size_t n, len, i = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/data/firmware/ovmf-boot-manager.bin", top_dir());
	f = fopen(path, "rb");
	CHECK(f);
	data = malloc(1 << 16);
	n = fread(data, 1, 1 << 16, f);
	fclose(f);
	CHECK(matcher_new(&m) == 0);
	CHECK(add(m, dialect_uefi_menu.interrupt_prompt, 1) == 0);
	feed(m, data, n);
	CHECK(matcher_next(m, &res) && res.id == 1);	/* the console starts: send Esc */
	matcher_clear(m);
	CHECK(add(m, dialect_uefi_menu.menu_item, 2) == 0);
	while (i < 4 && matcher_next(m, &res)) {
		CHECK(matcher_group(m, "item", &item, &len));
		if (len == strlen(want[i]) && !memcmp(item, want[i], len))
			i++;	/* the next one the keys in the capture moved to */
	}
	CHECK_INT(i, ==, 4);
	free(data);
	matcher_free(m);
}

TEST_LIST(test_bootloader__dialects_compile, test_bootloader__resolve,
	  test_bootloader__echo_with_cursor_moves, test_bootloader__echo_with_lost_bytes,
	  test_bootloader__ipxe_wrapped_error,
	  test_bootloader__ovmf_menu_highlights)
