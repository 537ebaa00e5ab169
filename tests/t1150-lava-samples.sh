#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1150-lava-samples.sh -- LAVA's own sample jobs (shared/lava/lava-jobs): those
# using only what labd supports parse (at least LAVA_SAMPLES_MIN of the 243: the
# number only grows); every other one fails with a message saying what is
# unsupported, and none crashes the parser.
. "$(dirname "$0")/lib.sh"

SAMPLES=${LAVA_SAMPLES:-$TOP/../shared/lava/lava-jobs}
LAVA_SAMPLES_MIN=84
if [ ! -d "$SAMPLES" ]; then
	test_skip "LAVA's sample jobs parse or are refused as unsupported" \
		"no LAVA samples at $SAMPLES (set LAVA_SAMPLES)"
	test_done
	exit
fi

# check FILE: labctl check without a labd (the schema), status and output kept.
check() {
	"$LABCTL_BIN" --url http://127.0.0.1:1 check "$1" >"$TMP/out" 2>&1
}

test_expect_success 'every sample job parses or is refused with a reason, none crashes' '
	ok=0 refused=0 bad=0 &&
	for f in "$SAMPLES"/*.yaml; do
		rc=0; check "$f" || rc=$?
		case $rc in
		0) ok=$((ok + 1)) ;;
		1) if grep -qiE "unsupported|not supported|not allowed|cannot" "$TMP/out"; then
			refused=$((refused + 1))
		   else
			bad=$((bad + 1)); echo "no reason for refusing $f:"; cat "$TMP/out"
		   fi ;;
		*) bad=$((bad + 1)); echo "labctl check $f: exit status $rc"; cat "$TMP/out" ;;
		esac
	done &&
	echo "$ok parsed, $refused refused as unsupported, $bad bad" &&
	[ "$bad" = 0 ] && [ "$ok" -ge "$LAVA_SAMPLES_MIN" ] && [ "$refused" -ge 1 ]
'

test_expect_success 'a refusal names the file, line and cause' '
	f=$SAMPLES/doc_content__snippets_jobs__docker.yaml &&
	! check "$f" &&
	grep -q "^$f:12: actions\[0\]\.deploy: unsupported deploy method .docker." "$TMP/out"
'

test_expect_success 'the CI samples parse: git definitions, notify callbacks, skip timeouts, compressions' '
	for f in tests_lava_scheduler_app_sample_jobs__qemu.yaml \
		tests_lava_scheduler_app_sample_jobs__qemu_callback_custom_header.yaml \
		tests_lava_dispatcher_sample_jobs__kvm-params.yaml \
		tests_lava_dispatcher_sample_jobs__qemu-reboot.yaml \
		tests_lava_dispatcher_sample_jobs__compression.yaml \
		tests_lava_dispatcher_sample_jobs__bbb-uinitrd-nfs.yaml \
		doc_v2_examples_test-jobs__standard-armmp-ramdisk-bbb.yaml; do
		check "$SAMPLES/$f" || { cat "$TMP/out"; exit 1; }
	done
'

test_expect_success 'a multinode sample is refused for that and for its other mistakes' '
	f=$SAMPLES/tests_lava_scheduler_app_sample_jobs__qemu-ssh-parent.yaml &&
	! check "$f" &&
	grep -q "protocols: unsupported key .lava-multinode.: multinode jobs are not supported" "$TMP/out" &&
	grep -q "actions\[0\]\.deploy: .dtb. must be a mapping, not a string" "$TMP/out" &&
	! grep -q "role" "$TMP/out"
'

test_expect_success 'a LAVA U-Boot health check parses as it is' '
	check "$SAMPLES/tests_lava_scheduler_app_health-checks__rk3399-puma-haikou.yaml"
'

test_expect_success 'the samples of the bootloader methods whose other actions labd has parse' '
	for f in bbb-uboot-interactive b2260-bootloader depthcharge depthcharge_commands_override \
		 grub-installed-x86 grub-centos-installed-x86 grub-ramdisk-monitor ipxe-monitor \
		 synquacer-dtb; do
		check "$SAMPLES/tests_lava_dispatcher_sample_jobs__$f.yaml" ||
			{ echo "$f:"; cat "$TMP/out"; exit 1; }
	done
'

test_done
