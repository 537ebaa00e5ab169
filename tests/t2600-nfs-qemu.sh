#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t2600-nfs-qemu.sh -- boards with their root file system on NFS, the way most
# of KernelCI's and LKFT's jobs boot: Debian's nfs-ganesha on loopback exports
# the lab's NFS directory; each job deploys a Debian kernel, an initramfs that
# loads the NFS modules, the kernel's modules and a Debian 12 root made by
# mmdebstrap (tests/nfs/prepare.sh, cached); labd unpacks the root into a tree
# of the export and the board mounts it (nfsroot=) through real firmware, then
# runs a git test definition served by `git daemon` from that root.  The board
# writes a file into its root that the test reads in the export, with the
# owner the board gave it.
#   arm64 through real U-Boot (`commands: nfs`), x86_64 through real iPXE, and
#   two arm64 boards at once, each in its own tree; each tree gone once its job ends.
# test-serial: tests/run runs it alone (QEMU's emulation takes the CPUs)
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/qemu/lib.sh"
. "$TOP/tests/ci/lib.sh"
. "$TOP/tests/nfs-lib.sh"

skip_all() {
	test_skip 'boards with their root on NFS (arm64 U-Boot, x86_64 iPXE, two at once)' "$1"
	test_done
	exit
}
qemu_fixtures x86_64 arm64 || skip_all "$QEMU_SKIP"
qemu_firmware ipxe || skip_all "$QEMU_SKIP"
nfs_fixtures x86_64 arm64 || skip_all "$NFS_SKIP"
nfs_lab || skip_all "$NFS_SKIP"
nfs_testdef_repo "$TMP/git/test-definitions"
git_daemon "$TMP/git"
cat >>"$LAB/labd.conf" <<CONF
git_allow = [ "$GIT_URL" ];
CONF
# a second arm64 board, for two roots at once
cat >"$LAB/devices/10-arm64-02.conf" <<CONF
devices = ( { name = "qemu-arm64-02"; type = "qemu-arm64"; tags = [ "qemu", "arm64" ];
	      console = { driver = "qemu"; }; power = { driver = "qemu"; }; } );
CONF
labd_start
at_exit labd_stop
nfs_watch_proof

# nfs_job FILE TYPE METHOD ARCH KERNEL PROOF: a job with its root on NFS, the
# git test definition writing PROOF into it.
nfs_job() {
	write_job "$1" <<JOB
job_name: $4 through $3, root on NFS
device_type: $2
tags: [qemu]
timeouts: {job: {minutes: 6}, action: {minutes: 3}, connection: {minutes: 2}}
actions:
- deploy:
    to: tftp
    os: debian
    kernel: {url: '$ART_URL/$4/$5', type: image}
    ramdisk: {url: '$ART_URL/$4/initrd.cpio.gz'}
    modules: {url: '$ART_URL/$4/modules.tar.xz', compression: xz}
    nfsrootfs: {url: '$ART_URL/$4/rootfs.tar.xz', compression: xz}
- boot:
    method: $3
    commands: nfs
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@debian-nfs:[^#]*# ']
- test:
    timeout: {minutes: 2}
    definitions:
    - from: git
      repository: ${GIT_URL}test-definitions
      path: automated/linux/nfs-root/nfs-root.yaml
      name: nfs-root
      parameters: {PROOF: $6}
JOB
}

# nfs_passed OUT: the job of OUT completed with its three results passed.
nfs_passed() {
	local id
	id=$(job_id "$1")
	grep -q "job $id: complete" "$1" &&
	labctl results "$id" >"$1.results" &&
	grep -q "0_nfs-root.root-on-nfs .*pass" "$1.results" &&
	grep -q "0_nfs-root.modules-in-root .*pass" "$1.results" &&
	grep -q "0_nfs-root.proof-written .*pass" "$1.results" ||
		{ cat "$1.results"; return 1; }
}

# proof PROOF ARCH: the board's file was read in the export: its text, the owner
# the board gave it, and the root it named is a tree of the export.
proof() {
	local f
	f=$(grep -l "^$1 " "$TMP"/proof/* 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "no proof $1 in the export"; ls -l "$TMP/proof"; return 1; }
	cat "$f"
	[ "$(head -1 "$f")" = 4321:4321 ] &&
	grep -q "^$1 $2 10.0.2.2:$LAB/nfs/${f##*/}\$" "$f"
}

# trees_gone: no job's tree is left in the export.
trees_gone() {
	wait_for '[ -z "$(ls -A "$LAB/nfs")" ]' 20 || { ls -la "$LAB/nfs"; return 1; }
}

nfs_job "$TMP/arm64.yaml" qemu-arm64 u-boot arm64 Image arm64-$$
test_expect_success 'arm64 through U-Boot: root on NFS, git test definition run from it' '
	submit_follow "$TMP/arm64.yaml" 0 "$TMP/arm64.out" &&
	nfs_passed "$TMP/arm64.out" &&
	console=$LAB/state/jobs/$(job_id "$TMP/arm64.out")/console.log &&
	grep -q "nfsroot=10.0.2.2:$LAB/nfs/[^ ]*port=$NFS_PORT,mountport=$NFS_MOUNT_PORT" "$console" &&
	grep -q "nfsroot: mounted 10.0.2.2:$LAB/nfs/" "$console"
'

test_expect_success 'arm64: the file the board wrote is in its tree, with its owner' '
	proof arm64-$$ aarch64
'

test_expect_success 'arm64: the tree is gone once the job ended' '
	trees_gone
'

nfs_job "$TMP/x86.yaml" qemu-x86_64-ipxe ipxe x86_64 bzImage x86-$$
test_expect_success 'x86_64 through iPXE: root on NFS, git test definition run from it' '
	submit_follow "$TMP/x86.yaml" 0 "$TMP/x86.out" &&
	nfs_passed "$TMP/x86.out" &&
	proof x86-$$ x86_64 &&
	trees_gone
'

nfs_job "$TMP/two-a.yaml" qemu-arm64 u-boot arm64 Image two-a-$$
nfs_job "$TMP/two-b.yaml" qemu-arm64 u-boot arm64 Image two-b-$$
test_expect_success 'two NFS jobs at once on two arm64 boards, each in its own tree' '
	submit_follow "$TMP/two-a.yaml" 0 "$TMP/two-a.out" & a=$!
	submit_follow "$TMP/two-b.yaml" 0 "$TMP/two-b.out" & b=$!
	rc=0
	wait $a || rc=1
	wait $b || rc=1
	[ $rc = 0 ] &&
	nfs_passed "$TMP/two-a.out" && nfs_passed "$TMP/two-b.out" &&
	proof two-a-$$ aarch64 && proof two-b-$$ aarch64 &&
	boards=$(for o in two-a two-b; do labctl show "$(job_id "$TMP/$o.out")"; done |
		 sed -n "s/^device: *//p" | sort -u | wc -l) &&
	[ "$boards" = 2 ] &&
	trees_gone
'

test_done
