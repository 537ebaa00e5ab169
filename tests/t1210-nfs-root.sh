#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1210-nfs-root.sh -- NFS root file systems (doc/nfs.md) on simulated boards:
# a root tarball unpacked while it downloads into a tree of labd.conf's
# nfs.export_dir, with its owners, modes, links, device nodes and file
# capabilities; the modules (through merged-/usr's lib -> usr/lib), the root's
# overlays and a git test definition's overlay unpacked into it; U-Boot's
# `nfs` command set booting the board with root=/dev/nfs on it, the board
# reading the tree (simboard reads the nfsroot= directory of this host) and
# running the definition from it; barebox's and depthcharge's nfs sets, two
# jobs at once; the boot phases; the tree removed when the
# job ends, and when labd comes back after being killed; bad inputs (404,
# checksum, corrupt and truncated archives, `..`, absolute paths, links out of
# the tree, the size limit, a full disk) each failing the job with its cause
# and leaving nothing, inside or outside the export directory.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/ci/lib.sh"

EXPORT=$TMP/exports
OUTSIDE=$TMP/outside
WWW=$TMP/www
mkdir -p "$EXPORT" "$OUTSIDE" "$WWW"
sim_start 3 --tftp-root "$LAB/state/tftp"
git_repo "$TMP/git/test-definitions"
# a definition the job's overlay carries into the root, checking the repository is there too
cat >"$TMP/git/test-definitions/nfs.yaml" <<'YAML'
metadata:
  format: Lava-Test Test Definition 1.0
  name: nfs-overlay
run:
  steps:
    - lava-test-case overlay-in-root --shell test -f automated/linux/smoke/smoke.sh
YAML
git -C "$TMP/git/test-definitions" add nfs.yaml
git -C "$TMP/git/test-definitions" commit -q -m nfs
git_daemon "$TMP/git"
write_lab_conf "nfs = { export_dir = \"$EXPORT\"; mount_options = \"nolock\"; };
git_allow = [ \"$GIT_URL\" ];"
sim_device sim-01 0
sim_device sim-bb-01 1 sim-barebox
sim_device sim-dc-01 2 sim-depthcharge
sim_ctl firmware sim1 barebox >/dev/null
sim_ctl firmware sim2 depthcharge >/dev/null
echo 99 >"$EXPORT/keep-me"
mkdir -p "$EXPORT/12-abcDEF/etc"		# a tree a killed labd left
HTTP_PORT=$(free_port)
$PY -m http.server "$HTTP_PORT" --bind 127.0.0.1 --directory "$WWW" >"$TMP/http.log" 2>&1 &
at_exit "kill $!"
URL=http://127.0.0.1:$HTTP_PORT
ART=$TOP/contrib/lab/artifacts

# The root: merged /usr, a marker, a capability, a device node, a user's home, a hard link.
R=$TMP/stage/root
mkdir -p "$R/usr/bin" "$R/usr/lib" "$R/etc" "$R/dev" "$R/home/user"
ln -s usr/lib "$R/lib"
ln -s usr/bin "$R/bin"
echo "nfs-root-$$" >"$R/etc/nfs-marker"
echo ping >"$R/usr/bin/ping"
setcap cap_net_raw+ep "$R/usr/bin/ping" 2>/dev/null || true
ln "$R/usr/bin/ping" "$R/usr/bin/ping6"
mknod "$R/dev/null" c 1 3
chmod 666 "$R/dev/null"
chown 1000:1000 "$R/home/user"
chmod 700 "$R/home/user"
tar --xattrs --xattrs-include='*' --numeric-owner -C "$R" -cJf "$WWW/root.tar.xz" .
M=$TMP/stage/modules
mkdir -p "$M/lib/modules/6.1.0-sim/kernel/fs/nfs"
echo "nfs module" >"$M/lib/modules/6.1.0-sim/kernel/fs/nfs/nfs.ko"
tar -C "$M" -cJf "$WWW/modules.tar.xz" .
K=$TMP/stage/kselftest
mkdir -p "$K"
echo "kselftest runner" >"$K/run_kselftest.sh"
tar -C "$K" -czf "$WWW/kselftest.tar.gz" .
head -c 300000 /dev/urandom >"$WWW/corrupt.tar.xz"
head -c $(($(stat -c %s "$WWW/root.tar.xz") / 2)) "$WWW/root.tar.xz" >"$WWW/truncated.tar.xz"
head -c 3000000 /dev/urandom >"$TMP/stage/big"
tar -C "$TMP/stage" -cf "$WWW/big.tar" big
$PY - "$WWW" "$OUTSIDE" <<'PY'
import io, sys, tarfile
www, outside = sys.argv[1], sys.argv[2]
def tar(name, entries):
    with tarfile.open(f"{www}/{name}", "w") as t:
        for path, kind, data in entries:
            ti = tarfile.TarInfo(path)
            if kind == "link":
                ti.type, ti.linkname = tarfile.SYMTYPE, data
                t.addfile(ti)
            else:
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
tar("absolute.tar", [("etc/ok", "file", b"ok"), (f"{outside}/abs", "file", b"x")])
tar("dotdot.tar", [("etc/ok", "file", b"ok"), ("../../outside/dotdot", "file", b"x")])
tar("escape.tar", [("evil", "link", outside), ("evil/x", "file", b"x")])
tar("escape-up.tar", [("up", "link", "../../outside"), ("up/y", "file", b"y")])
PY
sha() { sha256sum "$WWW/$1" | cut -c1-64; }

# nfs_job FILE NFSROOTFS-YAML [ACTIONS-YAML]: deploy the sim artifacts with this nfsrootfs.
nfs_job() {
	write_job "$1" <<JOB
job_name: nfs root
device_type: sim-uboot
timeouts: {job: {minutes: 3}, action: {seconds: 60}, connection: {seconds: 20}}
actions:
- deploy:
    to: tftp
    kernel: {url: 'file://$ART/Image', type: image}
    dtb: {url: 'file://$ART/sim.dtb'}
    nfsrootfs: $2
${3:-}
JOB
}

submit() {
	local rc=0
	labctl submit --follow "$1" >"$TMP/follow.out" 2>&1 || rc=$?
	if [ "$rc" != "$2" ]; then
		echo "labctl submit --follow $1: exit status $rc, expected $2"
		tail -30 "$TMP/follow.out"
		return 1
	fi
}

job_id() {
	sed -n 's/^job \([0-9]*\): .*/\1/p' "$TMP/follow.out" | tail -1
}

# no_trees: the export directory holds what the test put there, no tree of labd's.
no_trees() {
	wait_for "[ \"\$(ls -A '$EXPORT')\" = keep-me ]" 20 || { ls -la "$EXPORT"; return 1; }
}

test_expect_success 'check-config: an export directory missing or not writable is named' '
	cp "$LAB/labd.conf" "$TMP/good.conf" &&
	sed -i "s|export_dir = \"$EXPORT\"|export_dir = \"$TMP/nowhere\"|" "$LAB/labd.conf" &&
	test_must_fail "$LABD" check-config -c "$LAB/labd.conf" 2>"$TMP/check" &&
	grep -q "labd.conf:[0-9]*: the NFS export directory .$TMP/nowhere. does not exist: create it, and export it from the NFS server" "$TMP/check" &&
	test_must_fail "$LABD" -c "$LAB/labd.conf" --listen 127.0.0.1:0 2>"$TMP/start" &&
	grep -q "does not exist" "$TMP/start" &&
	sed -i "s|export_dir = \"$TMP/nowhere\"|export_dir = \"$EXPORT/keep-me\"|" "$LAB/labd.conf" &&
	test_must_fail "$LABD" check-config -c "$LAB/labd.conf" 2>"$TMP/check" &&
	grep -q "the NFS export directory .$EXPORT/keep-me. is not a directory" "$TMP/check" &&
	cp "$TMP/good.conf" "$LAB/labd.conf" &&
	"$LABD" check-config -c "$LAB/labd.conf" >/dev/null
'

labd_start
at_exit labd_stop

test_expect_success 'a tree left by a killed labd is removed at start, nothing else' '
	no_trees && [ "$(cat "$EXPORT/keep-me")" = 99 ]
'

nfs_job "$TMP/boot.yaml" "{url: '$URL/root.tar.xz', compression: xz, sha256sum: $(sha root.tar.xz),
      overlays: {kselftest: {url: '$URL/kselftest.tar.gz', compression: gz, format: tar, path: /opt/kselftest}}}
    modules: {url: '$URL/modules.tar.xz', compression: xz, path: /}
    os: debian
- boot:
    method: u-boot
    commands: nfs
    auto_login: {login_prompt: 'login:', username: root}
    # the simulated shell runs \`sh run.sh\` in itself: its cd stays
    prompts: ['root@sim:[^#]*# ']
- test:
    interactive:
    - name: nfs-root
      prompts: ['root@sim:[^#]*# ']
      script:
      - command: journal nfs-up; sleep 4
      - command: cat /etc/nfs-marker
        name: marker
        successes: [{message: 'nfs-root-$$'}]
      - command: cat /lib/modules/6.1.0-sim/kernel/fs/nfs/nfs.ko
        name: modules
        successes: [{message: 'nfs module'}]
      - command: cat /opt/kselftest/run_kselftest.sh
        name: overlay
        successes: [{message: 'kselftest runner'}]
      - command: cat /proc/cmdline
        name: cmdline
        successes: [{message: 'root=/dev/nfs rw nfsroot=10.0.2.2:$EXPORT/[0-9]+-[A-Za-z0-9]{6},tcp,hard,vers=3,nolock ip=dhcp'}]
- test:
    definitions:
    - from: git
      repository: ${GIT_URL}test-definitions
      name: from-the-root
      path: nfs.yaml"

(rc=0; submit "$TMP/boot.yaml" 0 >"$TMP/boot.status" 2>&1 || rc=$?; echo $rc >"$TMP/boot.rc") &

test_expect_success 'while the job runs: the tree holds the root as the archive has it' '
	wait_for "grep -q nfs-up $LAB/sim/journal" 90 &&
	T=$(ls -d "$EXPORT"/[0-9]*-*) && [ -d "$T" ] &&
	[ "$(cat "$T/etc/nfs-marker")" = "nfs-root-$$" ] &&
	[ "$(stat -c %u:%g:%a "$T/home/user")" = 1000:1000:700 ] &&
	[ "$(stat -c %F:%t:%T "$T/dev/null")" = "character special file:1:3" ] &&
	[ "$(stat -c %h "$T/usr/bin/ping")" = 2 ] &&
	{ ! command -v getcap >/dev/null || getcap "$T/usr/bin/ping" | grep -q cap_net_raw; } &&
	[ "$(readlink "$T/lib")" = usr/lib ] &&
	[ -f "$T/usr/lib/modules/6.1.0-sim/kernel/fs/nfs/nfs.ko" ] &&
	[ -f "$T/opt/kselftest/run_kselftest.sh" ] &&
	ls "$T"/lava-*/bin/lava-test-case &&
	ls "$T"/lava-*/tests/*_from-the-root/automated/linux/smoke/smoke.sh
'

test_expect_success 'the board booted from it and ran the definition the root holds' '
	wait_for "[ -s $TMP/boot.rc ]" 120 &&
	{ [ "$(cat "$TMP/boot.rc")" = 0 ] || { cat "$TMP/boot.status"; false; }; } &&
	id=$(job_id) &&
	labctl results "$id" >"$TMP/results" &&
	grep -q "marker.*pass" "$TMP/results" &&
	grep -q "modules.*pass" "$TMP/results" &&
	grep -q "overlay.*pass" "$TMP/results" &&
	grep -q "cmdline.*pass" "$TMP/results" &&
	grep -q "overlay-in-root.*pass" "$TMP/results"
'

test_expect_success 'the boot phases show the root downloading, unpacked, ready' '
	labctl show "$(job_id)" >"$TMP/show" &&
	grep -q "phases: *nfsroot-download 0.000s, nfsroot-unpacked [0-9.]*s, nfsroot-ready [0-9.]*s, power-on [0-9.]*s, bootloader-prompt" "$TMP/show" &&
	grep -q "NFS root unpacked in .* entries, .* MB/s downloaded, sha256 $(sha root.tar.xz)" "$LAB/state/jobs/$(job_id)/labd.log"
'

test_expect_success 'the tree is gone once the job ended' '
	no_trees
'

# dialect_job FILE TYPE METHOD: the root on NFS through barebox or depthcharge.
dialect_job() {
	write_job "$1" <<JOB
job_name: nfs root through $3
device_type: $2
timeouts: {job: {minutes: 3}, action: {seconds: 60}, connection: {seconds: 20}}
actions:
- deploy:
    to: tftp
    kernel: {url: 'file://$ART/Image', type: zimage}
    ramdisk: {url: 'file://$ART/initrd.cpio.gz'}
    dtb: {url: 'file://$ART/sim.dtb'}
    nfsrootfs: {url: '$URL/root.tar.xz', compression: xz}
- boot:
    method: $3
    commands: nfs
    auto_login: {login_prompt: 'login:', username: root}
    prompts: ['root@sim:~# ']
- test:
    interactive:
    - name: nfs
      prompts: ['root@sim:~# ']
      script:
      - command: cat /etc/nfs-marker
        name: marker
        successes: [{message: 'nfs-root-$$'}]
      - command: cat /proc/cmdline
        name: cmdline
        successes: [{message: 'root=/dev/nfs rw nfsroot=10.0.2.2:$EXPORT/[0-9]+-[A-Za-z0-9]{6},tcp'}]
JOB
}

test_expect_success 'barebox and depthcharge boot their roots on NFS, two jobs at once' '
	dialect_job "$TMP/bb.yaml" sim-barebox barebox &&
	dialect_job "$TMP/dc.yaml" sim-depthcharge depthcharge &&
	{ labctl submit --follow "$TMP/bb.yaml" >"$TMP/bb.out" 2>&1 & } &&
	labctl submit --follow "$TMP/dc.yaml" >"$TMP/dc.out" 2>&1 &&
	wait_for "grep -q \"^job [0-9]*: \" $TMP/bb.out" 60 &&
	{ grep -q "^job [0-9]*: complete" "$TMP/bb.out" &&
	  grep -q "^job [0-9]*: complete" "$TMP/dc.out" || { tail -5 "$TMP/bb.out" "$TMP/dc.out"; false; }; } &&
	no_trees
'

# fail_with FILE STATUS-REGEX: the job ends incomplete saying this, and leaves nothing.
fail_with() {
	submit "$1" 2 && grep -Eq "$2" "$TMP/follow.out" && no_trees && [ -z "$(ls -A "$OUTSIDE")" ] ||
		{ grep "job .*incomplete" "$TMP/follow.out"; false; }
}

test_expect_success 'HTTP 404: the job'"'"'s error naming the URL, before the board is touched' '
	nfs_job "$TMP/404.yaml" "{url: $URL/missing.tar.xz}" &&
	fail_with "$TMP/404.yaml" "incomplete \(job\): artifact URL check before the board was powered: nfsrootfs .$URL/missing.tar.xz.: HTTP 404"
'

test_expect_success 'wrong checksum: infrastructure error, the tree removed' '
	nfs_job "$TMP/sum.yaml" "{url: $URL/root.tar.xz, sha256sum: $(sha modules.tar.xz)}" &&
	fail_with "$TMP/sum.yaml" "incomplete \(infrastructure\): download of .$URL/root.tar.xz.: sha256 mismatch: got $(sha root.tar.xz)"
'

test_expect_success 'corrupt and truncated archives: the job'"'"'s error, saying so' '
	nfs_job "$TMP/corrupt.yaml" "{url: $URL/corrupt.tar.xz, compression: xz}" &&
	fail_with "$TMP/corrupt.yaml" "incomplete \(job\): cannot unpack the NFS root .$URL/corrupt.tar.xz.: corrupt or truncated archive" &&
	nfs_job "$TMP/cut.yaml" "{url: $URL/truncated.tar.xz, compression: xz}" &&
	fail_with "$TMP/cut.yaml" "incomplete \(job\): cannot unpack the NFS root .$URL/truncated.tar.xz.: corrupt or truncated archive"
'

test_expect_success 'absolute paths, .. and links out of the tree: refused, nothing written outside' '
	nfs_job "$TMP/abs.yaml" "{url: $URL/absolute.tar}" &&
	fail_with "$TMP/abs.yaml" "incomplete \(job\): .*archive entry .$OUTSIDE/abs. has an absolute path: refused" &&
	nfs_job "$TMP/dotdot.yaml" "{url: $URL/dotdot.tar}" &&
	fail_with "$TMP/dotdot.yaml" "incomplete \(job\): .*has a .\.\.. in its path: refused" &&
	nfs_job "$TMP/escape.yaml" "{url: $URL/escape.tar}" &&
	fail_with "$TMP/escape.yaml" "incomplete \(job\): .*.evil. goes through a symbolic link that leaves the tree: refused" &&
	nfs_job "$TMP/up.yaml" "{url: $URL/escape-up.tar}" &&
	fail_with "$TMP/up.yaml" "incomplete \(job\): .*.up. goes through a symbolic link that leaves the tree: refused"
'

test_expect_success 'a killed labd: its job'"'"'s tree is removed when it comes back' '
	nfs_job "$TMP/long.yaml" "{url: $URL/root.tar.xz}
- boot:
    method: u-boot
    commands: nfs
    auto_login: {login_prompt: \"login:\", username: root}
    prompts: [\"root@sim:~# \"]
- test:
    interactive:
    - name: wait
      prompts: [\"root@sim:~# \"]
      script:
      - command: journal long-up; sleep 60" &&
	: >"$LAB/sim/journal" &&
	id=$(labctl submit "$TMP/long.yaml") &&
	wait_for "grep -q long-up $LAB/sim/journal" 90 &&
	old=$(ls -d "$EXPORT"/[0-9]*-*) && [ -d "$old" ] &&
	labd_kill &&
	labd_restart &&
	wait_for "! [ -e $old ]" 20 &&
	labctl cancel "$id" >/dev/null &&
	no_trees
'

# the labd restarted inside the test above (a subshell): stop it by its pid
LABD_PID=$(tail -n 1 "$TMP/labd.pids")
labd_stop

test_expect_success 'max_size reached, when_full = fail: infrastructure error with the figures' '
	sed -i "s|mount_options = \"nolock\"; };|mount_options = \"nolock\"; max_size = \"64K\"; when_full = \"fail\"; };|" "$LAB/labd.conf" &&
	nfs_job "$TMP/big.yaml" "{url: $URL/big.tar}" &&
	run_job "$TMP/big.yaml" 2 &&
	grep -q "incomplete (infrastructure): the NFS export directory is full: its trees hold [0-9]* bytes, max_size is 65536" "$TMP/run.out" &&
	no_trees
'

test_expect_success 'a full disk: infrastructure error quoting the system, no tree left' '
	sed -i "s| max_size = \"64K\"; when_full = \"fail\";||" "$LAB/labd.conf" &&
	nfs_job "$TMP/full.yaml" "{url: $URL/big.tar}" &&
	if ! unshare -m true 2>/dev/null; then
		say "skipped the full disk: no mount namespace here (unshare -m)"
	else
		rc=0
		unshare -m sh -c "mount -t tmpfs -o size=1m tmpfs '"'"'$EXPORT'"'"' &&
			echo 99 >'"'"'$EXPORT/keep-me'"'"' &&
			'"'"'$LABD'"'"' -c '"'"'$LAB/labd.conf'"'"' run-job '"'"'$TMP/full.yaml'"'"' >'"'"'$TMP/run.out'"'"' 2>&1;
			echo \$? >'"'"'$TMP/full.rc'"'"'; ls -A '"'"'$EXPORT'"'"' >'"'"'$TMP/full.left'"'"'" &&
		[ "$(cat "$TMP/full.rc")" = 2 ] &&
		grep -q "incomplete (infrastructure): cannot unpack the NFS root .$URL/big.tar.: cannot write .*No space left on device" "$TMP/run.out" &&
		[ "$(cat "$TMP/full.left")" = keep-me ] || { cat "$TMP/run.out" | tail -5; false; }
	fi
'

test_done
