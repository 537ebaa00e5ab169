// SPDX-License-Identifier: GPL-2.0-or-later
/* sim_kernel.c -- simboard: the kernel stage: boot log, Oops, WARN, panic, KTAP, dmesg */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim_kernel_log.h"

#define NKLINES		((int)(sizeof(klog_lines) / sizeof(klog_lines[0])))
#define DEF_CMDLINE	"console=ttyAMA0,115200 root=/dev/mmcblk1p2 rw rootwait"
#define HW_NAME		"Hardware name: Simulated ARM64 Board (DT)"
#define END_TRACE	"---[ end trace 0000000000000000 ]---"

static const char *const trace_probe[] = {
	"sim_sensor_probe+0x24/0x90", "platform_probe+0x70/0xe0", "really_probe+0xc8/0x3e0",
	"__driver_probe_device+0x84/0x190", "driver_probe_device+0x44/0x120",
	"__device_attach_driver+0xc4/0x160", "bus_for_each_drv+0x84/0xe0",
	"__device_attach+0xa8/0x1c0", "device_initial_probe+0x1c/0x30",
	"bus_probe_device+0xa4/0xb0", "deferred_probe_work_func+0xa8/0x100",
	"process_one_work+0x1f4/0x490", "worker_thread+0x6c/0x450", "kthread+0x110/0x114",
	"ret_from_fork+0x10/0x20", NULL
};

static const char *const trace_syscall[] = {
	"full_proxy_write+0x60/0xb0", "vfs_write+0xd8/0x370", "ksys_write+0x70/0x100",
	"__arm64_sys_write+0x24/0x30", "invoke_syscall+0x50/0x120",
	"el0_svc_common.constprop.0+0x48/0xf0", "do_el0_svc+0x24/0x90", "el0_svc+0x30/0xe0",
	"el0t_64_sync_handler+0x100/0x130", "el0t_64_sync+0x190/0x194", NULL
};

static const char *const trace_warn[] = {
	"foo_probe+0x10/0x20", "platform_probe+0x70/0xe0", "really_probe+0xc8/0x3e0",
	"__driver_probe_device+0x84/0x190", "driver_probe_device+0x44/0x120",
	"__driver_attach+0xf4/0x200", "bus_for_each_dev+0x7c/0xe0", "driver_attach+0x2c/0x40",
	"bus_add_driver+0x15c/0x240", "driver_register+0x80/0x140",
	"__platform_driver_register+0x30/0x40", "foo_init+0x24/0x30", "do_one_initcall+0x50/0x290",
	"kernel_init_freeable+0x20c/0x2f4", "kernel_init+0x2c/0x140", "ret_from_fork+0x10/0x20",
	NULL
};

static const char *const trace_mount[] = {
	"mount_block_root+0x1c8/0x1e4", "mount_root+0x1f4/0x230", "prepare_namespace+0x13c/0x180",
	"kernel_init_freeable+0x2c8/0x2f4", "kernel_init+0x2c/0x140", "ret_from_fork+0x10/0x20",
	NULL
};

static const char *const trace_sysrq[] = {
	"sysrq_handle_crash+0x24/0x30", "__handle_sysrq+0x98/0x1c0",
	"write_sysrq_trigger+0x78/0xa0", "proc_reg_write+0xa8/0x100", NULL
};

static const char *const trace_panic_head[] = {
	"dump_backtrace+0xe4/0x140", "show_stack+0x20/0x30", "dump_stack_lvl+0x64/0x80",
	"dump_stack+0x18/0x34", "panic+0x18c/0x37c", NULL
};

double sim_uptime(const struct board *b)
{
	return (double)(sim_now() - b->kstart) / NSEC_PER_SEC;
}

/* Keep a kernel log line for dmesg; the oldest lines go when it is full. */
void sim_dmesg_add(struct board *b, const char *line)
{
	size_t n = strlen(line) + 1;
	char *nl;

	if (n > SIM_DMESG_MAX)
		return;
	if (!b->dmesg) {
		b->dmesg = malloc(SIM_DMESG_MAX);
		if (!b->dmesg)
			return;
		b->dmesg_len = 0;
	}
	while (b->dmesg_len + n > SIM_DMESG_MAX) {
		nl = memchr(b->dmesg, '\n', b->dmesg_len);
		size_t cut = nl ? (size_t)(nl - b->dmesg) + 1 : b->dmesg_len;

		memmove(b->dmesg, b->dmesg + cut, b->dmesg_len - cut);
		b->dmesg_len -= cut;
	}
	memcpy(b->dmesg + b->dmesg_len, line, n - 1);
	b->dmesg[b->dmesg_len + n - 1] = '\n';
	b->dmesg_len += n;
}

/* "Not tainted" or the taint flags: D after an Oops, W after a warning. */
const char *sim_kernel_taint(const struct board *b)
{
	static char buf[40];
	char flags[19];

	if (!b->taint_d && !b->taint_w)
		return "Not tainted";
	memset(flags, ' ', sizeof(flags) - 1);
	flags[sizeof(flags) - 1] = '\0';
	flags[0] = 'G';
	if (b->taint_d)
		flags[7] = 'D';
	if (b->taint_w)
		flags[9] = 'W';
	snprintf(buf, sizeof(buf), "Tainted: %s", flags);
	return buf;
}

static void cpu_line(struct board *b, int cpu, int pid, const char *comm)
{
	sim_klog(b, "CPU: %d PID: %d Comm: %s %s 6.1.0-sim #1", cpu, pid, comm,
		 sim_kernel_taint(b));
	sim_klog(b, HW_NAME);
}

static uint64_t reg_value(struct board *b)
{
	uint64_t r = sim_rand(b);

	switch (r % 4) {
	case 0:
		return 0;
	case 1:
		return 0xffff000000000000ULL | (r >> 16 & 0xffffff8ULL);
	case 2:
		return 0xffff800008000000ULL | (r >> 20 & 0x3ffff8ULL);
	default:
		return r >> 48;
	}
}

static void dump_regs(struct board *b, const char *pc, const char *lr)
{
	char line[128];
	int r, i, len;

	sim_klog(b, "pstate: 60000005 (nZCv daif -PAN -UAO -TCO -DIT -SSBS BTYPE=--)");
	sim_klog(b, "pc : %s", pc);
	sim_klog(b, "lr : %s", lr);
	sim_klog(b, "sp : ffff80000a0bbb40");
	for (r = 29; r >= 0; r -= 3) {
		len = 0;
		for (i = r; i > r - 3 && i >= 0; i--)
			len += snprintf(line + len, sizeof(line) - len, "%sx%-2d: %016llx",
					i == r ? "" : " ", i, (unsigned long long)reg_value(b));
		sim_klog(b, "%s", line);
	}
}

static void dump_trace(struct board *b, const char *const *head, const char *const *frames)
{
	sim_klog(b, "Call trace:");
	for (; head && *head; head++)
		sim_klog(b, " %s", *head);
	for (; *frames; frames++)
		sim_klog(b, " %s", *frames);
}

/* A NULL pointer Oops: during boot in a kworker, from the shell in "sh". */
void sim_kernel_oops(struct board *b, bool from_shell)
{
	const char *fn = from_shell ? "sim_crash_write+0x1c/0x30" : trace_probe[0];

	sim_klog(b, "Unable to handle kernel NULL pointer dereference at virtual address "
		    "0000000000000000");
	sim_klog(b, "Mem abort info:");
	sim_klog(b, "  ESR = 0x0000000096000045");
	sim_klog(b, "  EC = 0x25: DABT (current EL), IL = 32 bits");
	sim_klog(b, "  SET = 0, FnV = 0");
	sim_klog(b, "  EA = 0, S1PTW = 0");
	sim_klog(b, "  FSC = 0x05: level 1 translation fault");
	sim_klog(b, "Data abort info:");
	sim_klog(b, "  ISV = 0, ISS = 0x00000045");
	sim_klog(b, "  CM = 0, WnR = 1");
	sim_klog(b, "user pgtable: 4k pages, 48-bit VAs, pgdp=0000000041d2e000");
	sim_klog(b, "[0000000000000000] pgd=0000000000000000, p4d=0000000000000000");
	sim_klog(b, "Internal error: Oops: 96000045 [#%d] SMP", ++b->oopses);
	sim_klog(b, "Modules linked in:%s", from_shell ? " sim_crash(O)" : "");
	if (from_shell)
		cpu_line(b, 0, 312, "sh");
	else
		cpu_line(b, 2, 57, "kworker/u8:2");
	dump_regs(b, fn, from_shell ? trace_syscall[0] : trace_probe[1]);
	if (from_shell) {
		const char *head[] = { fn, NULL };

		dump_trace(b, head, trace_syscall);
	} else {
		dump_trace(b, NULL, trace_probe);
	}
	sim_klog(b, "Code: f9400260 91004000 52800021 f9001c1f (b900001f) ");
	sim_klog(b, END_TRACE);
	b->taint_d = true;
}

void sim_kernel_warn(struct board *b)
{
	sim_klog(b, "------------[ cut here ]------------");
	sim_klog(b, "WARNING: CPU: 0 PID: 1 at drivers/foo.c:42 foo_probe+0x10/0x20");
	sim_klog(b, "Modules linked in:");
	cpu_line(b, 0, 1, "swapper/0");
	dump_regs(b, trace_warn[0], trace_warn[1]);
	dump_trace(b, NULL, trace_warn);
	sim_klog(b, END_TRACE);
	b->taint_w = true;
}

/* "Kernel panic - not syncing: why", then the board hangs for good. */
void sim_kernel_panic(struct board *b, const char *why, bool from_shell)
{
	sim_klog(b, "Kernel panic - not syncing: %s", why);
	if (from_shell)
		cpu_line(b, 0, 312, "sh");
	else
		cpu_line(b, 0, 1, "swapper/0");
	dump_trace(b, trace_panic_head, from_shell ? trace_sysrq : trace_mount);
	if (from_shell) {
		const char *const *f;

		for (f = trace_syscall; *f; f++)
			sim_klog(b, " %s", *f);
	}
	sim_klog(b, "SMP: stopping secondary CPUs");
	sim_klog(b, "Kernel Offset: disabled");
	sim_klog(b, "CPU features: 0x00000,01000100,0000420b");
	sim_klog(b, "Memory Limit: none");
	sim_klog(b, "---[ end Kernel panic - not syncing: %s ]---", why);
	sim_cancel(b);
	sim_cmd_clear(b);
	b->in = IN_DISCARD;
	b->talen = 0;
}

/* A KUnit run in KTAP v1: two suites, one with a parameterised case and a failure. */
void sim_kernel_ktap(struct board *b)
{
	static const char *const lines[] = {
		"KTAP version 1",
		"1..2",
		"    KTAP version 1",
		"    # Subtest: sim-list",
		"    # module: sim_list_test",
		"    1..3",
		"    ok 1 sim_list_add",
		"    ok 2 sim_list_del",
		"    ok 3 sim_list_splice # SKIP requires CONFIG_SIM_SPLICE",
		"# sim-list: pass:2 fail:0 skip:1 total:3",
		"# Totals: pass:2 fail:0 skip:1 total:3",
		"ok 1 sim-list",
		"    KTAP version 1",
		"    # Subtest: sim-string",
		"    # module: sim_string_test",
		"    1..3",
		"    ok 1 sim_strscpy_basic",
		"        KTAP version 1",
		"        # Subtest: sim_strscpy_param",
		"        ok 1 empty",
		"        ok 2 short",
		"        ok 3 truncated",
		"    # sim_strscpy_param: pass:3 fail:0 skip:0 total:3",
		"    ok 2 sim_strscpy_param",
		"    # sim_strncmp_overflow: EXPECTATION FAILED at lib/sim_string_test.c:87",
		"    Expected ret == 0, but",
		"        ret == -7 (0xfffffffffffffff9)",
		"    not ok 3 sim_strncmp_overflow",
		"# sim-string: pass:4 fail:1 skip:0 total:5",
		"# Totals: pass:4 fail:1 skip:0 total:5",
		"not ok 2 sim-string",
	};
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		sim_klog(b, "%s", lines[i]);
}

/* root=/dev/NAME of the command line, for the panic message. */
static void root_name(const struct board *b, char *buf, size_t size)
{
	const char *r = strstr(b->cmdline, "root=");
	size_t n;

	r = r ? r + 5 : "";
	if (!strncmp(r, "/dev/", 5))
		r += 5;
	n = strcspn(r, " ");
	snprintf(buf, size, "%.*s", (int)n, r);
}

static void reset_loop(struct board *b)
{
	sim_boot_begin(b);
	sim_firmware_start(b);
}

/* The half-way mark: where oops, hang-kernel and reset-loop strike. Returns false to stop. */
static bool kernel_mid(struct board *b)
{
	switch (b->cur) {
	case MODE_OOPS:
		sim_kernel_oops(b, false);
		return true;
	case MODE_HANG_KERNEL:
		return false;
	case MODE_RESET_LOOP:
		sim_after_tx(b, 100, reset_loop);	/* the watchdog bites, silently */
		return false;
	default:
		return true;
	}
}

/*
 * root=/dev/nfs nfsroot=SERVER:DIR[,options]: the root is DIR of this host
 * (the lab's NFS server), mounted if it is a directory.  False: a panic.
 */
static bool nfs_root(struct board *b)
{
	const char *p = strstr(b->cmdline, "nfsroot="), *colon, *end;
	struct stat st;

	p = p ? p + 8 : "";
	colon = strchr(p, ':');
	end = p + strcspn(p, " ,");
	free(b->nfsroot);
	b->nfsroot = colon && colon < end ? strndup(colon + 1, (size_t)(end - colon - 1)) : NULL;
	if (b->nfsroot && stat(b->nfsroot, &st) == 0 && S_ISDIR(st.st_mode)) {
		sim_klog(b, "VFS: Mounted root (nfs filesystem) on device 0:22.");
		return true;
	}
	sim_klog(b, "VFS: Unable to mount root fs via NFS.");
	sim_kernel_panic(b, "VFS: Unable to mount root fs on unknown-block(0,255)", false);
	return false;
}

static bool kernel_root(struct board *b)
{
	char dev[64];

	if (strstr(b->cmdline, "root=/dev/nfs") && b->cur != MODE_PANIC)
		return nfs_root(b);
	if (b->cur != MODE_PANIC)
		return true;
	root_name(b, dev, sizeof(dev));
	sim_klog(b, "VFS: Cannot open root device \"%s\" or unknown-block(0,0): error -6", dev);
	sim_klog(b, "Please append a correct \"root=\" boot option; here are the available "
		    "partitions:");
	sim_kernel_panic(b, "VFS: Unable to mount root fs on unknown-block(0,0)", false);
	return false;
}

/* Print one line of the boot log; false when the boot stops here. */
static bool kernel_line(struct board *b, const struct kline *k)
{
	const char *host = sim_cfg.hostname, *init = b->initrd ? "/init" : "/sbin/init";

	switch (k->kind) {
	case KL_TEXT:
		if (k->ms)
			sim_klog(b, k->text, host);
		else
			sim_klog_zero(b, k->text, host);
		break;
	case KL_CMDLINE:
		sim_klog_zero(b, "Kernel command line: %s", b->cmdline);
		break;
	case KL_RD:
	case KL_NORD:
		if (b->initrd == (k->kind == KL_RD) && !(b->nfsroot && k->kind == KL_NORD))
			sim_klog(b, k->text, host);
		break;
	case KL_MID:
		return kernel_mid(b);
	case KL_ROOT:
		return kernel_root(b);
	case KL_INIT:
		sim_klog(b, "Run %s as init process", init);
		sim_klog(b, "  with arguments:");
		sim_klog(b, "    %s", init);
		break;
	case KL_USER:
		sim_printf(b, k->text, host);
		sim_puts(b, "\r\n");
		break;
	case KL_END:
		sim_login_start(b);
		return false;
	}
	return true;
}

static void kernel_step(struct board *b)
{
	const struct kline *k = &klog_lines[b->pc++];

	if (!kernel_line(b, k) || b->pc >= NKLINES)
		return;
	k = &klog_lines[b->pc];
	sim_wake_tx(b, b->kstart + sim_slow(b, k->ms) * NSEC_PER_MSEC, kernel_step);
}

/* Start the kernel: from U-Boot's booti, or at power-on in no-uboot mode. */
void sim_kernel_boot(struct board *b, const char *cmdline, bool initrd)
{
	char *c = strdup(cmdline ? cmdline : DEF_CMDLINE);

	if (!c)
		return;
	free(b->cmdline);
	b->cmdline = c;
	free(b->nfsroot);
	b->nfsroot = NULL;
	b->stage = STAGE_KERNEL;
	b->in = IN_DISCARD;
	b->talen = 0;
	sim_cmd_clear(b);
	b->initrd = initrd;
	b->taint_d = b->taint_w = false;
	b->oopses = 0;
	b->dmesg_len = 0;
	b->kstart = sim_now();
	b->pc = 0;
	kernel_step(b);
}
