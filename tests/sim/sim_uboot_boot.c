// SPDX-License-Identifier: GPL-2.0-or-later
/* sim_uboot_boot.c -- simboard: U-Boot commands that load and boot: tftp, dhcp, load, booti */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>

#define ETH_DEV		"ethernet@fe300000"
#define DEF_SERVERIP	"10.0.2.2"
#define DEF_IPADDR	"10.0.2.15"
#define DEF_BOOTARGS	"console=ttyAMA0,115200 root=/dev/mmcblk1p2 rw rootwait"

static uint64_t hex(const char *s)
{
	return strtoull(s, NULL, 16);
}

/* Deterministic sizes: a name always loads the same number of bytes. */
static uint64_t file_size(const char *name, bool *image)
{
	uint64_t h = 1469598103934665603ULL;
	const char *p;

	for (p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	*image = false;
	if (strstr(name, "dtb"))
		return 20000 + h % 40000;
	if (strstr(name, "cpio") || strstr(name, "initrd") || strstr(name, "ramdisk") ||
	    strstr(name, "rootfs"))
		return 6000000 + h % 8000000;
	*image = true;
	return 18000000 + h % 12000000;
}

/*
 * The size of TFTP file @file: from --tftp-root when given (-1: no such
 * file), else made up from its name.  @image: a kernel rather than a dtb or
 * a ramdisk (by name).
 */
int sim_tftp_size(const char *file, uint64_t *size, bool *image)
{
	char path[PATH_MAX];
	struct stat st;

	*size = file_size(file, image);
	if (!sim_cfg.tftp_root)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", sim_cfg.tftp_root, file);
	if (strstr(file, "..") || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* The text of TFTP file @file (first line, up to @size - 1 bytes); -1 when unknown. */
int sim_tftp_text(const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	FILE *f;

	if (!sim_cfg.tftp_root || strstr(file, ".."))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", sim_cfg.tftp_root, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\r\n")] = '\0';
	return 0;
}

static void record_load(struct board *b, uint64_t addr, uint64_t size, bool image)
{
	char buf[32];
	int i;

	for (i = 0; i < b->nloaded && b->loaded[i].addr != addr; i++)
		;
	if (i == SIM_MAX_LOADED)
		i = SIM_MAX_LOADED - 1;
	if (i == b->nloaded && b->nloaded < SIM_MAX_LOADED)
		b->nloaded++;
	b->loaded[i] = (struct sim_load){ addr, size, image };
	snprintf(buf, sizeof(buf), "%llx", (unsigned long long)size);
	sim_env_set(&b->uenv, "filesize", buf);
	snprintf(buf, sizeof(buf), "%llx", (unsigned long long)addr);
	sim_env_set(&b->uenv, "fileaddr", buf);
}

static const struct sim_load *find_load(struct board *b, uint64_t addr)
{
	int i;

	for (i = 0; i < b->nloaded; i++)
		if (b->loaded[i].addr == addr)
			return &b->loaded[i];
	return NULL;
}

static double mib_per_s(uint64_t bytes, uint64_t ns)
{
	return ns ? bytes / 1048576.0 / ((double)ns / NSEC_PER_SEC) : 0;
}

/* How long a tftp takes: about 0.3 s for a kernel, less for small files. */
static unsigned int tftp_ms(const struct board *b)
{
	uint64_t size = b->job_size < 20000000 ? b->job_size : 20000000;

	return sim_slow(b, 30 + (unsigned int)(size * 270 / 20000000));
}

/* tftp: rows of '#' as the file comes in, then the summary. */
static void tftp_step(struct board *b)
{
	uint64_t total = tftp_ms(b) * NSEC_PER_MSEC, el = sim_now() - b->job_t0;
	int target = el >= total ? b->job_n : (int)(b->job_n * el / total);
	bool image = false;

	for (; b->job_i < target; b->job_i++) {
		if (b->job_i && b->job_i % 65 == 0)
			sim_puts(b, "\r\n\t ");
		sim_puts(b, "#");
	}
	if (el < total) {
		sim_after(b, sim_slow(b, 30), tftp_step);
		return;
	}
	sim_printf(b, "\r\n\t %.1f MiB/s\r\ndone\r\n", mib_per_s(b->job_size, el));
	sim_printf(b, "Bytes transferred = %llu (%llx hex)\r\n", (unsigned long long)b->job_size,
		   (unsigned long long)b->job_size);
	file_size(b->job_name, &image);
	record_load(b, b->job_addr, b->job_size, image);
	sim_cmd_done(b, 0);
}

static void tftp_fail(struct board *b)
{
	sim_puts(b, "*\r\nTFTP error: 'File not found' (1)\r\nNot retrying...\r\n");
	sim_cmd_done(b, 1);
}

static bool is_hex(const char *s)
{
	char *end;

	strtoull(s, &end, 16);
	return *s && !*end;
}

/* tftp [ADDR] [[SERVER:]FILE], the address and file defaulting to $loadaddr and $bootfile */
int sim_ub_tftp(struct board *b, int argc, char **argv)
{
	const char *file = sim_uenv(b, "bootfile", NULL);
	const char *addr = sim_uenv(b, "loadaddr", "0x40400000");
	const char *server = sim_uenv(b, "serverip", DEF_SERVERIP), *colon;
	char host[64];
	bool image;

	if (argc >= 3) {
		addr = argv[1];
		file = argv[2];
	} else if (argc == 2 && is_hex(argv[1])) {
		addr = argv[1];
	} else if (argc == 2) {
		file = argv[1];
	}
	if (!file) {
		sim_puts(b, "*** ERROR: `bootfile' not set\r\n");
		return 1;
	}
	colon = strchr(file, ':');
	if (colon && colon - file < (long)sizeof(host) && strspn(file, "0123456789.") ==
	    (size_t)(colon - file)) {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - file), file);
		server = host;
		file = colon + 1;
	}
	snprintf(b->job_name, sizeof(b->job_name), "%s", file);
	b->job_addr = hex(addr);
	b->job_size = file_size(file, &image);
	b->job_n = (int)((b->job_size + 40959) / 40960);
	b->job_i = 0;
	b->job_t0 = sim_now();
	sim_puts(b, "Using " ETH_DEV " device\r\n");
	sim_printf(b, "TFTP from server %s; our IP address is %s\r\n", server,
		   sim_uenv(b, "ipaddr", DEF_IPADDR));
	sim_printf(b, "Filename '%s'.\r\nLoad address: 0x%llx\r\nLoading: ", file,
		   (unsigned long long)b->job_addr);
	if (b->cur == MODE_UBOOT_ERROR)
		sim_after(b, sim_slow(b, 50), tftp_fail);
	else
		sim_after(b, sim_slow(b, 30), tftp_step);
	return CMD_ASYNC;
}

static void dhcp_done(struct board *b)
{
	sim_printf(b, "DHCP client bound to address %s (%llu ms)\r\n", DEF_IPADDR,
		   (unsigned long long)((sim_now() - b->job_t0) / NSEC_PER_MSEC));
	sim_env_set(&b->uenv, "ipaddr", DEF_IPADDR);
	sim_env_set(&b->uenv, "serverip", DEF_SERVERIP);
	sim_env_set(&b->uenv, "gatewayip", DEF_SERVERIP);
	sim_env_set(&b->uenv, "netmask", "255.255.255.0");
	sim_env_set(&b->uenv, "dnsip", "10.0.2.3");
	sim_cmd_done(b, 0);
}

int sim_ub_dhcp(struct board *b, int argc, char **argv)
{
	b->job_t0 = sim_now();
	sim_puts(b, "BOOTP broadcast 1\r\n");
	sim_after(b, sim_slow(b, 120), dhcp_done);
	return CMD_ASYNC;
}

static void ping_done(struct board *b)
{
	sim_printf(b, "host %s is alive\r\n", b->job_name);
	sim_cmd_done(b, 0);
}

static void load_done(struct board *b)
{
	uint64_t el = sim_now() - b->job_t0;

	sim_printf(b, "%llu bytes read in %llu ms (%.1f MiB/s)\r\n",
		   (unsigned long long)b->job_size, (unsigned long long)(el / NSEC_PER_MSEC),
		   mib_per_s(b->job_size, el));
	record_load(b, b->job_addr, b->job_size, b->job_i);
	sim_cmd_done(b, 0);
}

static void sleep_done(struct board *b)
{
	sim_cmd_done(b, 0);
}

int sim_ub_ping(struct board *b, int argc, char **argv)
{
	if (argc < 2)
		return sim_ub_usage(b, argv[0]);
	snprintf(b->job_name, sizeof(b->job_name), "%s", argv[1]);
	sim_puts(b, "Using " ETH_DEV " device\r\n");
	sim_after(b, sim_slow(b, 20), ping_done);
	return CMD_ASYNC;
}

/* load/fatload/ext4load <interface> <dev[:part]> <addr> <filename>: from the SD card */
int sim_ub_load(struct board *b, int argc, char **argv)
{
	bool image;

	if (argc < 5)
		return sim_ub_usage(b, argv[0]);
	if (strcmp(argv[1], "mmc") || (argv[2][0] != '1' && argv[2][0] != '0')) {
		sim_printf(b, "** Bad device specification %s %s **\r\n", argv[1], argv[2]);
		return 1;
	}
	b->job_addr = hex(argv[3]);
	b->job_size = file_size(argv[4], &image);
	b->job_i = image;
	b->job_t0 = sim_now();
	sim_after(b, sim_slow(b, 150), load_done);
	return CMD_ASYNC;
}

int sim_ub_sleep(struct board *b, int argc, char **argv)
{
	double s;

	if (argc < 2)
		return sim_ub_usage(b, argv[0]);
	s = strtod(argv[1], NULL);
	if (s < 0 || s > 86400)
		s = 0;
	sim_after(b, (unsigned int)(s * 1000), sleep_done);
	return CMD_ASYNC;
}

static void kernel_go(struct board *b)
{
	sim_kernel_boot(b, sim_uenv(b, "bootargs", DEF_BOOTARGS), b->job_i);
}

/* The hand-over messages of booti/bootm, then the kernel. */
static int boot_image(struct board *b, int argc, char **argv, const struct sim_load *rd)
{
	uint64_t fdt = hex(argc > 3 ? argv[3] : sim_uenv(b, "fdtcontroladdr", "7ef0f000"));
	uint64_t top = 0x7e000000, rd_start = top, dt_start;

	if (!strcmp(argv[0], "bootm"))
		sim_printf(b, "## Booting kernel from Legacy Image at %08llx ...\r\n"
			   "   Image Name:   Linux-6.1.0-sim\r\n"
			   "   Image Type:   AArch64 Linux Kernel Image (uncompressed)\r\n"
			   "   Verifying Checksum ... OK\r\n", (unsigned long long)hex(argv[1]));
	sim_printf(b, "## Flattened Device Tree blob at %08llx\r\n"
		   "   Booting using the fdt blob at 0x%llx\r\nWorking FDT set to %llx\r\n",
		   (unsigned long long)fdt, (unsigned long long)fdt, (unsigned long long)fdt);
	if (rd) {
		rd_start = (top - rd->size) & ~0xfffULL;
		sim_printf(b, "   Loading Ramdisk to %08llx, end %08llx ... OK\r\n",
			   (unsigned long long)rd_start, (unsigned long long)(rd_start + rd->size));
	}
	dt_start = (rd_start - 0xb000) & ~0xfffULL;
	sim_printf(b, "   Loading Device Tree to %016llx, end %016llx ... OK\r\n"
		   "Working FDT set to %llx\r\n\r\nStarting kernel ...\r\n\r\n",
		   (unsigned long long)dt_start, (unsigned long long)(dt_start + 0xaa1f),
		   (unsigned long long)dt_start);
	b->job_i = rd != NULL;
	b->stage = STAGE_KERNEL;
	b->in = IN_DISCARD;
	sim_cmd_clear(b);
	sim_after_tx(b, sim_slow(b, 80), kernel_go);
	return CMD_GONE;
}

/* What booti, bootz and bootm say when there is no kernel at the address. */
static int no_image(struct board *b, const char *cmd)
{
	if (!strcmp(cmd, "bootz"))
		sim_puts(b, "Bad Linux ARM zImage magic!\r\n");
	else if (!strcmp(cmd, "bootm"))
		sim_puts(b, "Wrong Image Format for bootm command\r\n"
			    "ERROR: can't get kernel image!\r\n");
	else
		sim_puts(b, "Bad Linux ARM64 Image magic!\r\n");
	return 1;
}

/* booti/bootz/bootm KERNEL [RAMDISK:SIZE|-] [FDT]: the kernel must have been loaded */
int sim_ub_booti(struct board *b, int argc, char **argv)
{
	const struct sim_load *img, *rd = NULL;
	char *colon;

	img = argc > 1 ? find_load(b, hex(argv[1])) : NULL;
	if (b->cur == MODE_UBOOT_ERROR || !img || !img->image)
		return no_image(b, argv[0]);
	if (argc > 2 && strcmp(argv[2], "-")) {
		colon = strchr(argv[2], ':');
		if (!colon) {
			sim_puts(b, "Wrong Ramdisk Image Format\r\n"
				    "Ramdisk image is corrupt or invalid\r\n");
			return 1;
		}
		rd = find_load(b, hex(argv[2]));
	}
	/* like QEMU's U-Boot, the control DT at $fdtcontroladdr is always valid */
	if (argc > 3 && !find_load(b, hex(argv[3])) &&
	    hex(argv[3]) != hex(sim_uenv(b, "fdtcontroladdr", "7ef0f000"))) {
		sim_puts(b, "ERROR: Did not find a cmdline Flattened Device Tree\r\n"
			    "Could not find a valid device tree\r\n");
		return 1;
	}
	return boot_image(b, argc, argv, rd);
}

static void reset_go(struct board *b)
{
	sim_boot_begin(b);
	sim_firmware_start(b);
}

int sim_ub_reset(struct board *b, int argc, char **argv)
{
	sim_puts(b, "resetting ...\r\n");
	b->in = IN_DISCARD;
	sim_cmd_clear(b);
	sim_after_tx(b, 50, reset_go);
	return CMD_GONE;
}

