// SPDX-License-Identifier: GPL-2.0-or-later
/* test-kmsg.c -- kernel reports in the console logs of tests/data/kmsg/ */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "results/kmsg.h"
#include "tap.h"

/* Every report as "name 'first line' @start-end [complete]"; excerpts kept apart. */
static struct strbuf got = STRBUF_INIT;
static struct strbuf excerpts = STRBUF_INIT;

static void record(const struct kmsg_report *rep, void *ud)
{
	strbuf_addf(&got, "%s '%s' @%lld-%lld%s\n", rep->name, rep->first_line,
		    (long long)rep->line_start, (long long)rep->line_end,
		    rep->complete ? " complete" : "");
	strbuf_addf(&excerpts, "%s\n--\n", rep->excerpt);
}

static const char *run_fixture(const char *name)
{
	const char *top = getenv("LABD_TOP");
	char path[4096], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int64_t n = 0;
	struct kmsg *k;
	FILE *f;

	strbuf_reset(&got);
	strbuf_reset(&excerpts);
	snprintf(path, sizeof(path), "%s/tests/data/kmsg/%s", top ? top : ".", name);
	f = fopen(path, "r");
	if (!f || kmsg_new(record, NULL, &k)) {
		printf("# cannot open '%s'\n", path);
		return "";
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		while (len && line[len - 1] == '\n')
			line[--len] = '\0';
		kmsg_feed(k, line, (size_t)len, ++n);
	}
	kmsg_flush(k);
	kmsg_free(k);
	free(line);
	fclose(f);
	return got.buf;
}

TEST(test_kmsg__timestamps)
{
	CHECK_INT(kmsg_timestamp_len("[   12.345678] x", 16), ==, 14);
	CHECK_INT(kmsg_timestamp_len("[    1.234567][    T1] x", 24), ==, 22);
	CHECK_INT(kmsg_timestamp_len("[    1.234567][C0] x", 20), ==, 18);
	CHECK_INT(kmsg_timestamp_len("[12.3]", 6), ==, 6);
	CHECK_INT(kmsg_timestamp_len("[ OK ]", 6), ==, 0);
	CHECK_INT(kmsg_timestamp_len("[   12.345678", 13), ==, 0);
	CHECK_INT(kmsg_timestamp_len("[0000000000000000] pgd=0", 24), ==, 0);
}

TEST(test_kmsg__classify)
{
	CHECK_INT(kmsg_classify("[ 1.0] Kernel panic - not syncing: VFS", 38), ==, KMSG_PANIC);
	CHECK_INT(kmsg_classify("Kernel panic - not syncing: x", 29), ==, KMSG_PANIC);
	CHECK_INT(kmsg_classify("abc[ 1.0] BUG: KASAN: use-after-free", 36), ==, KMSG_KASAN);
	CHECK_INT(kmsg_classify("[ 1.0] foo: BUG: not at the start", 33), ==, KMSG_NONE);
	CHECK_INT(kmsg_classify("[ 1.0] INFO: task sh:1 is fine", 30), ==, KMSG_NONE);
	CHECK_STR(kmsg_class_name(KMSG_RCU_STALL), "rcu-stall");
	CHECK(kmsg_is_fatal(KMSG_PANIC) && !kmsg_is_fatal(KMSG_OOPS));
}

TEST(test_kmsg__arm64_oops)
{
	CHECK_STR(run_fixture("arm64-oops.txt"),
		  "oops 'Unable to handle kernel NULL pointer dereference at virtual address 0000000000000000' @2-27 complete\n");
	CHECK_CONTAINS(excerpts.buf, "Internal error: Oops: 0000000096000045 [#1] PREEMPT SMP");
	CHECK(!strstr(excerpts.buf, "sim_crash: writing") && !strstr(excerpts.buf, "Segmentation"));
}

TEST(test_kmsg__x86_oops)
{
	CHECK_STR(run_fixture("x86-oops.txt"),
		  "oops 'BUG: kernel NULL pointer dereference, address: 0000000000000008' @1-23 complete\n");
	CHECK_CONTAINS(excerpts.buf, "Oops: 0000 [#1] PREEMPT SMP NOPTI");
}

TEST(test_kmsg__warning_with_cut_here)
{
	CHECK_STR(run_fixture("warning-cut-here.txt"),
		  "warning 'WARNING: CPU: 0 PID: 1 at drivers/gpu/drm/drm_atomic.c:1512 drm_atomic_check_only+0x4d4/0x880' @2-12 complete\n");
	CHECK(!strncmp(excerpts.buf, "[    3.104521] ------------[ cut here ]------------\n", 52));
	CHECK(!strstr(excerpts.buf, "echo interleaved"));
	CHECK(!strstr(excerpts.buf, "crng"));
}

TEST(test_kmsg__kasan_framed)
{
	CHECK_STR(run_fixture("kasan.txt"),
		  "kasan 'BUG: KASAN: slab-out-of-bounds in kmalloc_oob_right+0xc4/0x1e0' @2-24 complete\n");
	CHECK_CONTAINS(excerpts.buf, "Memory state around the buggy address:");
	CHECK(!strstr(excerpts.buf, "Disabling lock debugging"));
}

TEST(test_kmsg__kfence_and_ubsan)
{
	CHECK_STR(run_fixture("kfence-ubsan.txt"),
		  "kfence 'BUG: KFENCE: out-of-bounds read in test_out_of_bounds_read+0xa8/0x22a' @1-9 complete\n"
		  "ubsan 'UBSAN: array-index-out-of-bounds in drivers/misc/ubsan_demo.c:12:9' @10-18 complete\n");
}

/* Reports without an end marker end at user-space output or at the next report. */
TEST(test_kmsg__stalls_and_hung_tasks)
{
	CHECK_STR(run_fixture("rcu-stall-hung-task.txt"),
		  "rcu-stall 'rcu: INFO: rcu_preempt self-detected stall on CPU' @1-8\n"
		  "hung-task 'INFO: task kworker/0:1:32 blocked for more than 120 seconds.' @11-17\n"
		  "hung-task-2 'INFO: task kworker/1:2:77 blocked for more than 120 seconds.' @18-19\n"
		  "lockup 'watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [spin:250]' @20-20\n");
}

TEST(test_kmsg__panic_after_bug)
{
	CHECK_STR(run_fixture("panic-after-bug.txt"),
		  "oops 'kernel BUG at mm/slub.c:424!' @1-9 complete\n"
		  "panic 'Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b' @10-14 complete\n");
}

/* dmesg prints a report again; user space prints "BUG:"; a warning starts mid-line. */
TEST(test_kmsg__repeats_user_space_and_mid_line)
{
	CHECK_STR(run_fixture("dmesg-again-and-midline.txt"),
		  "warning 'WARNING: CPU: 0 PID: 1 at drivers/foo.c:42 foo_probe+0x10/0x20' @1-3 complete\n"
		  "warning-2 'WARNING: CPU: 1 PID: 9 at drivers/bar.c:7 bar+0x1/0x2' @10-11 complete\n");
}

/* User space printed before the timestamp of a report's line, its end marker included. */
TEST(test_kmsg__kernel_lines_after_user_output)
{
	CHECK_STR(run_fixture("midline-end-marker.txt"),
		  "oops 'Unable to handle kernel paging request at virtual address ffff800008000000' @1-10 complete\n"
		  "warning 'WARNING: CPU: 0 PID: 9 at drivers/bar.c:7 bar+0x1/0x2' @12-15 complete\n"
		  "hung-task 'INFO: task kworker/0:1:32 blocked for more than 120 seconds.' @16-18\n");
	CHECK_CONTAINS(excerpts.buf, "stress: writing block 12[   50.880050] pc : memcpy+0x80/0x1c0\n");
	CHECK(!strstr(excerpts.buf, "stress: done"));
}

/* Lockdep's old bracketed headers (also after a continuation fragment) and newer ones. */
TEST(test_kmsg__lockdep_headers)
{
	CHECK_STR(run_fixture("lockdep-old.txt"),
		  "lockdep '[ INFO: possible circular locking dependency detected ]' @2-10\n"
		  "lockdep-2 '[ BUG: bad unlock balance detected! ]' @13-16\n"
		  "lockdep-3 'WARNING: bad unlock balance detected!' @19-21\n"
		  "lockdep-4 'WARNING: HARDIRQ-safe -> HARDIRQ-unsafe lock order detected' @23-25\n");
	CHECK_INT(kmsg_classify("[ 1.0] [ INFO: suspicious RCU usage. ]", 38), ==, KMSG_LOCKDEP);
	CHECK_INT(kmsg_classify("[ 1.0] [ INFO: not closed", 25), ==, KMSG_NONE);
}

/* On a console without timestamps, the bracketed header after a continuation fragment. */
TEST(test_kmsg__lockdep_header_mid_line_without_timestamps)
{
	CHECK_STR(run_fixture("lockdep-no-timestamps.txt"),
		  "lockdep '[ BUG: bad unlock balance detected! ]' @3-10\n"
		  "lockdep-2 '[ INFO: possible circular locking dependency detected ]' @11-15\n");
	CHECK_CONTAINS(excerpts.buf, "usb 1-1: config 1 has an invalid descriptor[ BUG: bad unlock balance detected! ]\n"
				     "3.10.0 #1 Not tainted\n");
	CHECK_INT(kmsg_classify("text[ BUG: bad unlock balance detected! ]", 41), ==, KMSG_LOCKDEP);
	CHECK_INT(kmsg_classify("user text [ nothing ]", 21), ==, KMSG_NONE);
}

/*
 * An oops interleaved with other CPUs' warnings is one report: its first
 * lines and its "Internal error: Oops ... [#1]" line together, the warning
 * apart; a panic ends an oops that never died.
 */
TEST(test_kmsg__oops_interleaved_with_a_warning_is_one)
{
	CHECK_STR(run_fixture("oops-interleaved-warning.txt"),
		  "warning 'WARNING: CPU: 1 PID: 212 at kernel/sched/core.c:3066 try_to_wake_up+0x2ec/0x310' @4-10 complete\n"
		  "oops 'Unable to handle kernel paging request at virtual address ffff00000badc0de' @1-17 complete\n"
		  "warning-2 'WARNING: CPU: 1 PID: 9 at mm/slub.c:100 kfree+0x1/0x2' @19-20\n"
		  "oops-2 'Unable to handle kernel NULL pointer dereference at virtual address 0000000000000000' @18-22 complete\n"
		  "warning-3 'WARNING: CPU: 2 PID: 7 at kernel/irq.c:5 irq_work+0x1/0x2' @24-25\n"
		  "oops-3 'Unable to handle kernel paging request at virtual address 00000000deadbeef' @23-23\n"
		  "panic 'Kernel panic - not syncing: Attempted to kill init!' @26-27 complete\n");
	/* the oops' excerpt: its own lines, the die line with them, not the warning's */
	CHECK_CONTAINS(excerpts.buf, "[   80.100020]   ESR = 0x0000000096000005\n"
				     "[   80.100100]   EC = 0x25: DABT (current EL), IL = 32 bits\n"
				     "[   80.100110] Internal error: Oops: 0000000096000005 [#1] PREEMPT SMP\n");
}

/*
 * Another CPU's end marker inside an oops does not end it before the oops
 * died ("[#N]"); a BUG that dies is one oops report.
 */
TEST(test_kmsg__oops_ends_after_it_died)
{
	CHECK_STR(run_fixture("oops-other-cpu-end.txt"),
		  "warning 'WARNING: CPU: 1 PID: 77 at kernel/workqueue.c:3066 __flush_work+0x2ec/0x310' @1-2\n"
		  "oops 'Unable to handle kernel NULL pointer dereference at virtual address 0000000000000010' @3-12 complete\n"
		  "oops-2 'BUG: kernel NULL pointer dereference, address: 0000000000000008' @13-18 complete\n"
		  "oops-3 'kernel BUG at fs/ext4/inode.c:1234!' @19-22 complete\n"
		  "bug 'BUG: sleeping function called from invalid context at mm/slab.h:742' @23-24\n");
}

/* A report longer than the excerpt: cut, its end still found and shown. */
TEST(test_kmsg__long_report_is_cut_not_left_open)
{
	struct kmsg *k;
	char line[128];
	int64_t n = 0;
	int i;

	strbuf_reset(&got);
	strbuf_reset(&excerpts);
	CHECK(!kmsg_new(record, NULL, &k));
	snprintf(line, sizeof(line), "[    7.000000] Internal error: Oops: 96000045 [#1] SMP");
	kmsg_feed(k, line, strlen(line), ++n);
	for (i = 0; i < 3 * KMSG_MAX_EXCERPT_LINES; i++) {
		snprintf(line, sizeof(line), "[    7.%06d]  frame_%d+0x10/0x20", i + 1, i);
		kmsg_feed(k, line, strlen(line), ++n);
	}
	snprintf(line, sizeof(line), "[    7.999999] ---[ end trace 0000000000000000 ]---");
	kmsg_feed(k, line, strlen(line), ++n);
	kmsg_flush(k);
	kmsg_free(k);
	CHECK_STR(got.buf, "oops 'Internal error: Oops: 96000045 [#1] SMP' @1-302 complete\n");
	CHECK_CONTAINS(excerpts.buf, "frame_98+0x10/0x20\n[... 201 lines not kept ...]\n"
				     "[    7.999999] ---[ end trace 0000000000000000 ]---\n--\n");
}

/* A console printing every line twice: one report of each kind, complete. */
TEST(test_kmsg__reprinted_lines)
{
	CHECK_STR(run_fixture("reprinted.txt"),
		  "warning 'WARNING: CPU: 0 PID: 1 at drivers/foo.c:42 foo_probe+0x10/0x20' @1-7 complete\n"
		  "hung-task 'INFO: task kworker/0:1:32 blocked for more than 120 seconds.' @9-11\n"
		  "oops 'Unable to handle kernel NULL pointer dereference at virtual address 0000000000000000' @13-17 complete\n"
		  "panic 'Kernel panic - not syncing: Fatal exception' @19-23 complete\n");
	CHECK(!strstr(excerpts.buf, "SMP: stopping secondary CPUs\n[    6.000010] SMP"));
}

TEST_LIST(test_kmsg__lockdep_header_mid_line_without_timestamps,
	  test_kmsg__oops_interleaved_with_a_warning_is_one, test_kmsg__kernel_lines_after_user_output, test_kmsg__lockdep_headers,
	  test_kmsg__oops_ends_after_it_died, test_kmsg__long_report_is_cut_not_left_open,
	  test_kmsg__reprinted_lines, test_kmsg__timestamps, test_kmsg__classify, test_kmsg__arm64_oops, test_kmsg__x86_oops,
	  test_kmsg__warning_with_cut_here, test_kmsg__kasan_framed, test_kmsg__kfence_and_ubsan,
	  test_kmsg__stalls_and_hung_tasks, test_kmsg__panic_after_bug,
	  test_kmsg__repeats_user_space_and_mid_line);
