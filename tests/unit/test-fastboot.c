// SPDX-License-Identifier: GPL-2.0-or-later
/* test-fastboot.c -- the fastboot protocol module against a board emulated by umockdev */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "drivers/usb.h"
#include "drivers/usb/fastboot.h"
#include "usbbed.h"

#ifdef HAVE_UMOCKDEV

/* The board in fastboot mode is 1-3: bus 1, device 4, bulk 0x01 out and 0x81 in. */
#define DEV "device 1 4\n"
#define CMD(text) "bulk 01 - text=" text "\n"
#define RESPONSE(text) "bulk 81 256 rtext=\"" text "\"\n"
#define IMAGE_SIZE (600 * 1024)	/* five chunks: 4 of 128 KiB, one of 88 KiB */

struct session {
	struct bed bed;
	struct loop *loop;
	struct usb *usb;
	struct fastboot_config cfg;
	struct fastboot *fb;
	int done, err;
	char reply[512];
	char info[512];
	int n_progress;
	uint64_t last_sent;
};

static void on_info(struct fastboot *fb, const char *text, void *userdata)
{
	struct session *s = userdata;
	size_t n = strlen(s->info);

	snprintf(s->info + n, sizeof(s->info) - n, "%s|", text);
}

static void on_progress(struct fastboot *fb, uint64_t sent, uint64_t total, void *userdata)
{
	struct session *s = userdata;

	s->n_progress++;
	s->last_sent = sent;
}

static void on_done(struct fastboot *fb, int err, const char *reply, void *userdata)
{
	struct session *s = userdata;

	s->done++;
	s->err = err;
	snprintf(s->reply, sizeof(s->reply), "%s", reply);
}

static const struct fastboot_ops ops = {
	.info = on_info,
	.progress = on_progress,
	.done = on_done,
};

static int session_init(struct session *s, const char *spec)
{
	memset(s, 0, sizeof(*s));
	if (bed_new(&s->bed, "roothubs", "fastboot", NULL) < 0 || loop_new(&s->loop) < 0 ||
	    (spec && bed_pcap(&s->bed, "usb1/1-3", spec) < 0) || usb_get(s->loop, &s->usb) < 0)
		return -EIO;
	s->cfg.match.serial = strdup("FB0001");
	s->cfg.timeout = 2 * USEC_PER_SEC;
	return 0;
}

static void session_release(struct session *s)
{
	s->fb = fastboot_close(s->fb);
	loop_run_once(s->loop, 0);
	s->usb = usb_unref(s->usb);
	s->loop = loop_free(s->loop);
	fastboot_config_release(&s->cfg);
	bed_free(&s->bed);
}

static int session_wait(struct session *s, int n)
{
	uint64_t end = now_monotonic() + BED_WAIT_MAX;

	while (s->done < n && now_monotonic() < end)
		loop_run_once(s->loop, 100 * USEC_PER_MSEC);
	return s->done == n ? 0 : -ETIMEDOUT;
}

/* A file of IMAGE_SIZE bytes in the testbed's scratch directory, opened. */
static int make_image(struct session *s, char *path, size_t len)
{
	uint8_t buf[4096];
	int fd, i;

	snprintf(path, len, "%s/boot.img", s->bed.dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (i = 0; fd >= 0 && i < IMAGE_SIZE / 4096; i++) {
		memset(buf, i, sizeof(buf));
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return -EIO;
	}
	if (fd >= 0)
		lseek(fd, 0, SEEK_SET);
	return fd;
}

TEST(test_fastboot__getvar)
{
	struct session s;

	CHECK_INT(session_init(&s, DEV CMD("getvar:product") RESPONSE("OKAYsim-board")), ==, 0);
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, 0);
	CHECK_INT(fastboot_command(s.fb, "getvar:product", &ops, &s), ==, 0);
	CHECK(fastboot_is_busy(s.fb));
	CHECK_INT(fastboot_command(s.fb, "getvar:serialno", &ops, &s), ==, -EBUSY);
	CHECK_INT(session_wait(&s, 1), ==, 0);
	CHECK_INT(s.err, ==, 0);
	CHECK_STR(s.reply, "sim-board");
	CHECK(!fastboot_is_busy(s.fb));
	session_release(&s);
}

TEST(test_fastboot__download_flash_with_progress_and_info)
{
	char spec[2048], img[256];
	struct session s;
	int fd;

	CHECK_INT(session_init(&s, NULL), ==, 0);
	fd = make_image(&s, img, sizeof(img));
	CHECK(fd >= 0);
	snprintf(spec, sizeof(spec), DEV CMD("download:00096000") RESPONSE("DATA00096000")
		 "bulk 01 - file=%s:0:131072\nbulk 01 - file=%s:131072:131072\n"
		 "bulk 01 - file=%s:262144:131072\nbulk 01 - file=%s:393216:131072\n"
		 "bulk 01 - file=%s:524288:90112\n" RESPONSE("OKAY")
		 CMD("flash:boot") RESPONSE("INFOerasing 'boot'") RESPONSE("INFOwriting 'boot'")
		 RESPONSE("OKAY"), img, img, img, img, img);
	CHECK_INT(bed_pcap(&s.bed, "usb1/1-3", spec), ==, 0);
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, 0);
	CHECK_INT(fastboot_download(s.fb, fd, IMAGE_SIZE, &ops, &s), ==, 0);
	CHECK_INT(session_wait(&s, 1), ==, 0);
	CHECK_STR(s.reply, "");
	CHECK_INT(s.err, ==, 0);
	CHECK_INT(s.n_progress, ==, 5);
	CHECK_INT(s.last_sent, ==, IMAGE_SIZE);
	CHECK_INT(fastboot_command(s.fb, "flash:boot", &ops, &s), ==, 0);
	CHECK_INT(session_wait(&s, 2), ==, 0);
	CHECK_INT(s.err, ==, 0);
	CHECK_STR(s.info, "erasing 'boot'|writing 'boot'|");
	close(fd);
	session_release(&s);
}

TEST(test_fastboot__download_then_boot)
{
	char spec[1024], img[256];
	struct session s;
	int fd;

	CHECK_INT(session_init(&s, NULL), ==, 0);
	fd = make_image(&s, img, sizeof(img));
	CHECK(fd >= 0);
	CHECK_INT(ftruncate(fd, 4096), ==, 0);
	snprintf(spec, sizeof(spec), DEV CMD("download:00001000") RESPONSE("DATA00001000")
		 "bulk 01 - file=%s:0:4096\n" RESPONSE("OKAY") CMD("boot") RESPONSE("OKAY"), img);
	CHECK_INT(bed_pcap(&s.bed, "usb1/1-3", spec), ==, 0);
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, 0);
	CHECK_INT(fastboot_download(s.fb, fd, 4096, &ops, &s), ==, 0);
	CHECK_INT(session_wait(&s, 1), ==, 0);
	CHECK_INT(s.err, ==, 0);
	CHECK_INT(fastboot_command(s.fb, "boot", &ops, &s), ==, 0);
	CHECK_INT(session_wait(&s, 2), ==, 0);
	CHECK_INT(s.err, ==, 0);
	close(fd);
	session_release(&s);
}

TEST(test_fastboot__fail_response)
{
	struct session s;

	CHECK_INT(session_init(&s, DEV CMD("flash:nope") RESPONSE("FAILpartition does not exist")),
		  ==, 0);
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, 0);
	CHECK_INT(fastboot_command(s.fb, "flash:nope", &ops, &s), ==, 0);
	CHECK_INT(session_wait(&s, 1), ==, 0);
	CHECK_INT(s.err, ==, -EREMOTEIO);
	CHECK_STR(s.reply, "fastboot 'flash:nope' failed: partition does not exist");
	session_release(&s);
}

TEST(test_fastboot__short_data_transfer)
{
	char spec[1024], img[256];
	struct session s;
	int fd;

	CHECK_INT(session_init(&s, NULL), ==, 0);
	fd = make_image(&s, img, sizeof(img));
	CHECK(fd >= 0);
	CHECK_INT(ftruncate(fd, 4096), ==, 0);
	snprintf(spec, sizeof(spec), DEV CMD("download:00001000") RESPONSE("DATA00001000")
		 "bulk 01 - file=%s:0:4096 actual=512\n", img);
	CHECK_INT(bed_pcap(&s.bed, "usb1/1-3", spec), ==, 0);
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, 0);
	CHECK_INT(fastboot_download(s.fb, fd, 4096, &ops, &s), ==, 0);
	CHECK_INT(session_wait(&s, 1), ==, 0);
	CHECK_INT(s.err, ==, -EIO);
	CHECK_STR(s.reply, "fastboot 'download:00001000': sending data failed: "
		  "Input/output error (short transfer)");
	close(fd);
	session_release(&s);
}

TEST(test_fastboot__data_size_mismatch)
{
	char spec[1024], img[256];
	struct session s;
	int fd;

	CHECK_INT(session_init(&s, NULL), ==, 0);
	fd = make_image(&s, img, sizeof(img));
	CHECK(fd >= 0);
	snprintf(spec, sizeof(spec), DEV CMD("download:00001000") RESPONSE("DATA00000800"));
	CHECK_INT(bed_pcap(&s.bed, "usb1/1-3", spec), ==, 0);
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, 0);
	CHECK_INT(fastboot_download(s.fb, fd, 4096, &ops, &s), ==, 0);
	CHECK_INT(session_wait(&s, 1), ==, 0);
	CHECK_INT(s.err, ==, -EPROTO);
	CHECK_STR(s.reply, "fastboot 'download:00001000': device asked for 'DATA00000800', "
		  "not 4096 bytes");
	close(fd);
	session_release(&s);
}

TEST(test_fastboot__unknown_response)
{
	struct session s;

	CHECK_INT(session_init(&s, DEV CMD("reboot") RESPONSE("WHAT")), ==, 0);
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, 0);
	CHECK_INT(fastboot_command(s.fb, "reboot", &ops, &s), ==, 0);
	CHECK_INT(session_wait(&s, 1), ==, 0);
	CHECK_INT(s.err, ==, -EPROTO);
	CHECK_STR(s.reply, "fastboot 'reboot': unknown response 'WHAT'");
	session_release(&s);
}

TEST(test_fastboot__response_timeout)
{
	struct session s;
	uint64_t start;

	CHECK_INT(session_init(&s, DEV CMD("continue") "bulk 81 256 noreply\n"), ==, 0);
	s.cfg.timeout = 300 * USEC_PER_MSEC;
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, 0);
	start = now_monotonic();
	CHECK_INT(fastboot_command(s.fb, "continue", &ops, &s), ==, 0);
	CHECK_INT(session_wait(&s, 1), ==, 0);
	CHECK_INT(s.err, ==, -ETIMEDOUT);
	CHECK_STR(s.reply, "fastboot 'continue': reading the response failed: "
		  "Connection timed out");
	CHECK_INT(now_monotonic() - start, <, 1500 * USEC_PER_MSEC);
	session_release(&s);
}

TEST(test_fastboot__command_too_long)
{
	struct session s;
	char cmd[FASTBOOT_COMMAND_MAX + 2];

	CHECK_INT(session_init(&s, NULL), ==, 0);
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, 0);
	memset(cmd, 'x', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	CHECK_INT(fastboot_command(s.fb, cmd, &ops, &s), ==, -E2BIG);
	session_release(&s);
}

TEST(test_fastboot__not_in_fastboot_mode)
{
	struct session s;

	CHECK_INT(session_init(&s, NULL), ==, 0);
	free(s.cfg.match.serial);
	s.cfg.match.serial = strdup("OTHER");
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, -ENODEV);
	session_release(&s);
}

TEST(test_fastboot__permission_denied)
{
	struct session s;
	char node[256];

	CHECK_INT(session_init(&s, NULL), ==, 0);
	bed_node(&s.bed, 1, 4, node, sizeof(node));
	CHECK_INT(chmod(node, 0), ==, 0);
	CHECK_INT(bed_drop_dac(), ==, 0);
	CHECK_INT(fastboot_open(s.usb, &s.cfg, &s.fb), ==, -EACCES);
	bed_restore_dac();
	session_release(&s);
}

TEST(test_fastboot__config)
{
	struct fastboot_config cfg;
	struct diag diag = DIAG_INIT;
	config_t cf;

	config_init(&cf);
	CHECK(config_read_string(&cf, "vid = 0x18d1; timeout = 0; location = \"1-3\";"));
	CHECK_INT(fastboot_config_parse(config_root_setting(&cf), &cfg, &diag), ==, -EINVAL);
	CHECK_INT(diag.n, ==, 3);
	CHECK_CONTAINS(diag.msgs[0], "unknown key 'location'");
	CHECK_CONTAINS(diag.msgs[1], "missing key 'serial'");
	CHECK_CONTAINS(diag.msgs[2], "'timeout' must be more than 0");
	diag_release(&diag);
	config_destroy(&cf);
	config_init(&cf);
	CHECK(config_read_string(&cf, "serial = \"FB0001\"; timeout = 90;"));
	CHECK_INT(fastboot_config_parse(config_root_setting(&cf), &cfg, &diag), ==, 0);
	CHECK_STR(cfg.match.serial, "FB0001");
	CHECK_INT(cfg.timeout, ==, 90 * USEC_PER_SEC);
	fastboot_config_release(&cfg);
	config_destroy(&cf);
}

TEST_LIST(test_fastboot__getvar, test_fastboot__download_flash_with_progress_and_info,
	  test_fastboot__download_then_boot, test_fastboot__fail_response,
	  test_fastboot__short_data_transfer, test_fastboot__data_size_mismatch,
	  test_fastboot__unknown_response, test_fastboot__response_timeout,
	  test_fastboot__command_too_long, test_fastboot__not_in_fastboot_mode,
	  test_fastboot__permission_denied, test_fastboot__config);
#endif
