// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * testdef_helpers.c -- labd's helper scripts for test definitions on the board
 *
 * LAVA's test definitions report with lava-test-case, lava-test-set,
 * lava-test-reference and lava-test-raise, and find the board's disks with
 * lava-target-storage (LKFT's jobs make a scratch file system on the SATA or
 * USB one the board's storage_info names).  These are labd's own versions,
 * small POSIX sh scripts (busybox ash runs them), written for labd from the
 * signal syntax of lava_signals.h.  All of them print through labd-signal,
 * which writes "<LAVA_SIGNAL_...>" to the console, or, when the definition
 * asked for `lava-signal: kmsg` (LAVA_SIGNAL=kmsg in the environment), to
 * /dev/kmsg at level 0: the kernel prints each record whole on the console,
 * where stdout output would be cut by kernel messages printed in between.
 *
 * No line holds a TAB or "<LAVA_SIGNAL_" in one piece ("<LAVA_SIGNAL""_"), so
 * the scripts can be typed on a console whose echo is not taken for signals.
 */
#include "job/testdef.h"

#include <stdlib.h>

#include "core/strbuf.h"

static const char *const helper_signal[] = {
	"#!/bin/sh",
	"# labd-signal WORDS...: <LAVA_SIGNAL_WORDS...> for labd, through the kernel's",
	"# log when LAVA_SIGNAL=kmsg (printk never cuts a record), else on stdout",
	"if [ \"$LAVA_SIGNAL\" = kmsg ] && [ -w /dev/kmsg ]; then",
	"  echo \"<0><LAVA_SIGNAL\"\"_$*>\" > /dev/kmsg",
	"else",
	"  echo \"<LAVA_SIGNAL\"\"_$*>\"",
	"fi",
	NULL,
};

static const char *const helper_test_case[] = {
	"#!/bin/sh",
	"# lava-test-case NAME --result R [--measurement M] [--units U] | NAME --shell CMD...",
	"s=${0%/*}/labd-signal",
	"n=$1",
	"[ $# -gt 0 ] && shift",
	"if [ \"$1\" = --shell ]; then",
	"  shift",
	"  sh \"$s\" STARTTC \"$n\"",
	"  if [ $# = 1 ]; then eval \"$1\"; else \"$@\"; fi",
	"  rc=$?",
	"  sh \"$s\" ENDTC \"$n\"",
	"  if [ $rc = 0 ]; then r=pass; else r=fail; fi",
	"  sh \"$s\" TESTCASE \"TEST_CASE_ID=$n RESULT=$r\"",
	"  exit $rc",
	"fi",
	"r= m= u=",
	"while [ $# -gt 1 ]; do",
	"  case $1 in",
	"  --result) r=$2 ;;",
	"  --measurement) m=\" MEASUREMENT=$2\" ;;",
	"  --units) u=\" UNITS=$2\" ;;",
	"  esac",
	"  shift 2",
	"done",
	"if [ -z \"$n\" ] || [ -z \"$r\" ]; then",
	"  echo 'usage: lava-test-case NAME --result pass|fail|skip|unknown [--measurement M] [--units U]' >&2",
	"  echo '       lava-test-case NAME --shell COMMAND...' >&2",
	"  exit 1",
	"fi",
	"sh \"$s\" TESTCASE \"TEST_CASE_ID=$n RESULT=$r$m$u\"",
	NULL,
};

static const char *const helper_test_set[] = {
	"#!/bin/sh",
	"s=${0%/*}/labd-signal",
	"case $1 in",
	"start) sh \"$s\" TESTSET START \"$2\" ;;",
	"stop) sh \"$s\" TESTSET STOP ;;",
	"*) echo 'usage: lava-test-set start NAME | stop' >&2; exit 1 ;;",
	"esac",
	NULL,
};

static const char *const helper_test_reference[] = {
	"#!/bin/sh",
	"n=$1 r= u=",
	"[ $# -gt 0 ] && shift",
	"while [ $# -gt 1 ]; do",
	"  case $1 in --result) r=$2 ;; --reference) u=$2 ;; esac",
	"  shift 2",
	"done",
	"if [ -z \"$n\" ] || [ -z \"$r\" ] || [ -z \"$u\" ]; then",
	"  echo 'usage: lava-test-reference NAME --result R --reference URL' >&2",
	"  exit 1",
	"fi",
	"sh \"${0%/*}/labd-signal\" TESTREFERENCE \"$n $r $u\"",
	NULL,
};

static const char *const helper_test_raise[] = {
	"#!/bin/sh",
	"sh \"${0%/*}/labd-signal\" TESTRAISE \"$*\"",
	NULL,
};

/* The board's storage_info comes in LAVA_STORAGE_INFO ("SATA=/dev/sda ..."). */
static const char *const helper_target_storage[] = {
	"#!/bin/sh",
	"# lava-target-storage [KIND]: the board's storage devices, one \"KIND PATH\" a line;",
	"# with KIND, the path of that one, and status 1 when the board has none",
	"found=1",
	"for e in $LAVA_STORAGE_INFO; do",
	"  if [ $# = 0 ]; then",
	"    echo \"${e%%=*} ${e#*=}\"",
	"    found=0",
	"  elif [ \"${e%%=*}\" = \"$1\" ]; then",
	"    echo \"${e#*=}\"",
	"    exit 0",
	"  fi",
	"done",
	"exit $found",
	NULL,
};

static const struct testdef_helper helpers[] = {
	{ "labd-signal", helper_signal },
	{ "lava-test-case", helper_test_case },
	{ "lava-test-set", helper_test_set },
	{ "lava-test-reference", helper_test_reference },
	{ "lava-test-raise", helper_test_raise },
	{ "lava-target-storage", helper_target_storage },
};

const struct testdef_helper *testdef_helpers(size_t *n)
{
	*n = sizeof(helpers) / sizeof(helpers[0]);
	return helpers;
}

char *testdef_helper_text(const struct testdef_helper *h)
{
	struct strbuf sb = STRBUF_INIT;

	for (const char *const *l = h->lines; *l; l++)
		strbuf_addf(&sb, "%s\n", *l);
	return strbuf_detach(&sb, NULL);
}
