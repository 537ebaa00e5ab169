#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t2410-ci-qemu-jobs.sh -- a real KernelCI QEMU job and a real LKFT QEMU job
# (../shared/jobs-real/), edited only in their URLs, run to completion on
# QEMU with their tests' results:
#
#   KernelCI 0001_ltp_-_nfs_qemu.yaml (qemu-x86_64): QEMU "from" the container
#   image kernelci/qemu, which the lab's device type maps to its own QEMU;
#   image_arg -kernel/-append/-initrd; LTP from Linaro's test-definitions (git)
#   in the overlay appended to the ramdisk; its notify callback read by
#   KernelCI's parser.
#   LKFT qemu_x86_64/ltp-math.yaml (qemu): -hda {rootfs} -m 4096 -smp 4
#   -nographic, --append; the overlay and the modules written into the job's
#   copy of the ext4 root image (apply-overlay, modules path /), the cached
#   download untouched; a login at a getty; inline and git definitions.
#   The KernelCI job with its kernel's URL broken: its callback says why, and
#   holds no login or test case for what never ran.
#
# Stand-ins (nothing else is changed in the jobs): the artifacts are served on
# loopback: Debian's cloud kernel for both kernels, busybox images for
# KernelCI's buildroot ramdisk and LKFT's OpenEmbedded ext4 root and its
# modules (tests/qemu/ci-images.sh); test-definitions is a git repository
# with the same path layout (tests/linaro-lib.sh) on `git daemon`; the
# callback goes to a recorder.  The LKFT type gives QEMU a small initramfs of
# its own (disk-initrd): Debian's kernel needs its IDE disk modules, LKFT's
# has them built in.
# test-serial
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/qemu/lib.sh"
. "$TOP/tests/ci/lib.sh"
. "$TOP/tests/linaro-lib.sh"

REAL=${JOBS_REAL:-$TOP/../shared/jobs-real}
[ -n "${JOBS_REAL:-}" ] || [ -d "$REAL" ] || REAL=$TOP/../../shared/jobs-real
KCI_JOB=$REAL/kernelci/0001_ltp_-_nfs_qemu.yaml
LKFT_JOB=$REAL/lkft/qemu_x86_64/ltp-math.yaml
if [ ! -f "$KCI_JOB" ] || [ ! -f "$LKFT_JOB" ]; then
	test_skip 'real KernelCI and LKFT QEMU jobs run' "no real jobs at $REAL (set JOBS_REAL)"
	test_done
	exit
fi
if ! qemu_fixtures x86_64 x86_64-disk; then
	test_skip 'real KernelCI and LKFT QEMU jobs run' "$QEMU_SKIP"
	test_done
	exit
fi

ART=$TMP/art
mkdir -p "$ART"
"$TOP/tests/qemu/ci-images.sh" "$QEMU_FIX" "$ART" >"$TMP/ci-images.log" 2>&1 ||
	{ cat "$TMP/ci-images.log"; exit 1; }
ln -s "$QEMU_FIX/x86_64/vmlinux" "$ART/vmlinux"
echo "no device tree on x86" >"$ART/dtb"
sha256sum "$ART/lkft-rootfs.ext4.gz" >"$TMP/rootfs.sum"
ART_PORT=$(free_port)
ART_URL=http://127.0.0.1:$ART_PORT
$PY -m http.server "$ART_PORT" --bind 127.0.0.1 --directory "$ART" >"$TMP/artifacts.log" 2>&1 &
at_exit "kill $!"
wait_for "curl -sf $ART_URL/dtb -o /dev/null" 10
linaro_testdefs "$TMP/git/test-definitions.git"
git_daemon "$TMP/git"

callback_recorder

mkdir -p "$LAB/devices"
cat >"$LAB/labd.conf" <<CONF
lab_name = "ci-qemu-lab";
state_dir = "state";
devices_dir = "devices";
git_allow = [ "$GIT_URL" ];
notify = { tokens = { kernelci-callback = "$CB_TOKEN"; }; };
CONF
# The device types, named as the jobs name them; the jobs' own QEMU arguments
# (files, -append, -m, -smp, drives) come after these.
cat >"$LAB/devices/types.conf" <<CONF
device_types = (
	{
		name = "qemu-x86_64";		# KernelCI's
		boot_methods = [ "qemu" ];
		deploy_methods = [ "tmpfs" ];
		context_allowed = [ "arch", "cpu", "guestfs_interface" ];
		parameters = { MEMORY = "512"; };
		qemu = {
			binary = "qemu-system-x86_64";
			args = [ "-accel", "tcg", "-m", "{MEMORY}", "-nodefaults", "-no-reboot",
				 "-net", "none" ];
			append = "panic=-1 no_timer_check";
			append_allowed = true;
			allowed_images = [ "kernel", "ramdisk" ];
			container_images = [ "kernelci/qemu", "kernelci/qemu:*" ];
			arch = [ "x86_64" ];
		};
	},
	{
		name = "qemu";			# LKFT's
		boot_methods = [ "qemu" ];
		deploy_methods = [ "tmpfs" ];
		context_allowed = [ "extra_kernel_args", "arch", "guestfs_interface",
				    "guestfs_size" ];
		parameters = { MEMORY = "512"; DISK_INITRD = "$ART/disk-initrd.cpio.gz"; };
		qemu = {
			binary = "qemu-system-x86_64";
			args = [ "-accel", "tcg", "-m", "{MEMORY}", "-nodefaults", "-no-reboot",
				 "-net", "none", "-initrd", "{DISK_INITRD}" ];
			append = "panic=-1 no_timer_check";
			append_allowed = true;
			allowed_images = [ "kernel", "dtb", "modules", "rootfs" ];
			max_memory = 4096;
			max_cpus = 4;
			arch = [ "amd64", "i386" ];
		};
	}
);
devices = (
	{ name = "kci-qemu-01"; type = "qemu-x86_64"; console = { driver = "qemu"; };
	  power = { driver = "qemu"; }; },
	{ name = "lkft-qemu-01"; type = "qemu"; console = { driver = "qemu"; };
	  power = { driver = "qemu"; }; }
);
CONF
labd_start
at_exit labd_stop

# The jobs as they are, but their URLs: artifacts, test-definitions, the callback.
sed -e "s|https://storage.kernelci.org/x/Image|$ART_URL/vmlinux|" \
    -e "s|https://storage.kernelci.org/images/rootfs/buildroot/initrd.cpio.gz|$ART_URL/kernelci-initrd.cpio.gz|" \
    -e "s|https://github.com/linaro/test-definitions.git|${GIT_URL}test-definitions.git|" \
    -e "s|https://kernelci.example.org/|http://127.0.0.1:$CB_PORT/|" \
    "$KCI_JOB" >"$TMP/kernelci.yaml"
sed -e "s|https://storage.example.org/lkft/boot|$ART_URL/vmlinux|" \
    -e "s|https://storage.example.org/lkft/dtb|$ART_URL/dtb|" \
    -e "s|https://storage.example.org/lkft/modules|$ART_URL/lkft-modules.tar|" \
    -e "s|https://storage.example.org/lkft/rootfs|$ART_URL/lkft-rootfs.ext4.gz|" \
    -e "s|https://github.com/Linaro/test-definitions.git|${GIT_URL}test-definitions.git|" \
    "$LKFT_JOB" >"$TMP/lkft.yaml"

test_expect_success 'only the URLs of the real jobs were changed' '
	diff "$KCI_JOB" "$TMP/kernelci.yaml" | grep "^[<>]" | grep -v "https\?://\|git://" | tee "$TMP/diff" &&
	[ ! -s "$TMP/diff" ] &&
	diff "$LKFT_JOB" "$TMP/lkft.yaml" | grep "^[<>]" | grep -v "https\?://\|git://" | tee "$TMP/diff" &&
	[ ! -s "$TMP/diff" ]
'

test_expect_success 'KernelCI: QEMU of kernelci/qemu is the lab'\''s, the job completes with its LTP results' '
	submit_follow "$TMP/kernelci.yaml" 0 &&
	grep -q "job 1: complete, 4 passed" "$TMP/follow.out" &&
	grep -q "QEMU of container image .kernelci/qemu.: the device type.s qemu-system-x86_64 runs" \
		"$LAB/state/jobs/1/labd.log" &&
	grep -q "note: actions\[1\]\.boot\.docker: .binary. ignored: the device type.s QEMU binary runs" \
		"$LAB/state/jobs/1/labd.log" &&
	grep -q "QEMU arguments of the job: -kernel .*/vmlinux -initrd .*/kernelci-initrd.cpio.gz -append panic=-1 no_timer_check console=ttyS0,115200 root=/dev/ram0" \
		"$LAB/state/jobs/1/labd.log" &&
	labctl results 1 >"$TMP/results-1" &&
	grep -q "0_ltp-timers_qemu.timers_shell .*pass" "$TMP/results-1" &&
	grep -q "0_ltp-timers_qemu.uptime .*pass.*s" "$TMP/results-1"
'

test_expect_success 'KernelCI: its callback reads as KernelCI reads it' '
	wait_for "grep -q /node/6543abc $TMP/callbacks.jsonl" 20 &&
	$PY "$TOP/tests/ci/kernelci-callback.py" "$TMP/callbacks.jsonl" "/node/6543abc" \
		"$CB_TOKEN" >"$TMP/kernelci.out" &&
	cat "$TMP/kernelci.out" &&
	grep -q "suites \[.0_ltp-timers_qemu., .lava.\]" "$TMP/kernelci.out"
'

sed -e "s|$ART_URL/vmlinux|$ART_URL/no-such-kernel|" -e "s|/node/6543abc|/node/404|" \
	"$TMP/kernelci.yaml" >"$TMP/kernelci-404.yaml"
test_expect_success 'KernelCI: a job failing before power-on reports no login and no test that never ran' '
	rc=0; labctl submit --follow "$TMP/kernelci-404.yaml" >"$TMP/follow.out" 2>&1 || rc=$?
	[ "$rc" = 2 ] &&
	wait_for "grep -q /node/404 $TMP/callbacks.jsonl" 20 &&
	$PY "$TOP/tests/ci/kernelci-callback.py" "$TMP/callbacks.jsonl" "/node/404" \
		"$CB_TOKEN" --incomplete Job >"$TMP/kernelci-404.out" &&
	cat "$TMP/kernelci-404.out" &&
	grep -q "HTTP 404" "$TMP/kernelci-404.out"
'

test_expect_success 'LKFT: -hda, -m 4096 -smp 4, the overlay in the ext4 root, a login: complete' '
	submit_follow "$TMP/lkft.yaml" 0 &&
	grep -q "job 3: complete, 8 passed, 0 failed" "$TMP/follow.out" &&
	grep -q "QEMU arguments of the job: -kernel .*/vmlinux -append panic=-1 no_timer_check root=/dev/sda rw rootwait console=ttyS0,115200 .* -m 4096M -smp 4 -drive file=.*/lkft-rootfs.ext4,format=raw,media=disk,index=0$" \
		"$LAB/state/jobs/3/labd.log" &&
	grep -q "overlay written into .*/lkft-rootfs.ext4: [0-9]* files" "$LAB/state/jobs/3/labd.log" &&
	grep -q "overlay delivery: image" "$LAB/state/jobs/3/labd.log" &&
	grep -q "lkft login: root" "$LAB/state/jobs/3/console.log" &&
	labctl results 3 >"$TMP/results-2" &&
	grep -q "2_ltp-math.uptime .*pass.* s" "$TMP/results-2" &&
	grep -q "2_ltp-math.math_shell .*pass" "$TMP/results-2" &&
	grep -q "3_ltp-commands.commands_tmpdir .*pass" "$TMP/results-2"
'

test_expect_success 'LKFT: the job'\''s copy of the image holds the overlay and the modules; the download is as served' '
	img=$LAB/state/jobs/3/images/lkft-rootfs.ext4 &&
	debugfs -R "ls -l /lava-3/bin" "$img" 2>/dev/null | grep -q lava-test-case &&
	debugfs -R "ls /lib/modules/$(cat "$ART/kernel-version")/kernel/drivers/ata" "$img" 2>/dev/null |
		grep -q ata_piix.ko &&
	(cd "$ART" && sha256sum -c "$TMP/rootfs.sum")
'

test_done
