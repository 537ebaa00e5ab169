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
		  "bug 'kernel BUG at mm/slub.c:424!' @1-9 complete\n"
		  "panic 'Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b' @10-14 complete\n");
}

/* dmesg prints a report again; user space prints "BUG:"; a warning starts mid-line. */
TEST(test_kmsg__repeats_user_space_and_mid_line)
{
	CHECK_STR(run_fixture("dmesg-again-and-midline.txt"),
		  "warning 'WARNING: CPU: 0 PID: 1 at drivers/foo.c:42 foo_probe+0x10/0x20' @1-3 complete\n"
		  "warning-2 'WARNING: CPU: 1 PID: 9 at drivers/bar.c:7 bar+0x1/0x2' @10-11 complete\n");
}

TEST_LIST(test_kmsg__timestamps, test_kmsg__classify, test_kmsg__arm64_oops, test_kmsg__x86_oops,
	  test_kmsg__warning_with_cut_here, test_kmsg__kasan_framed, test_kmsg__kfence_and_ubsan,
	  test_kmsg__stalls_and_hung_tasks, test_kmsg__panic_after_bug,
	  test_kmsg__repeats_user_space_and_mid_line);
