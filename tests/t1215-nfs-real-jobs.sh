#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1215-nfs-real-jobs.sh -- the NFS jobs KernelCI and LKFT send
# (shared/jobs-real: every job with an `nfsrootfs`) pass `labctl check`
# against a lab with an NFS export directory whose device types have an
# `nfs` command set for their bootloader, as doc/nfs.md describes, nothing of
# their NFS parts refused; and a lab without an `nfs` group refuses them,
# saying why.  (t1160 checks the whole corpus, for everything else.)
. "$(dirname "$0")/lib.sh"

# Every one is accepted (NFS_REFUSED_MAX raises the bar for a lab that
# refuses some for other reasons), and none ever for an NFS reason; warnings
# and notes (a duplicate key, an image_arg ignored) are no refusals.
NFS_REFUSED_MAX=${NFS_REFUSED_MAX:-0}

JOBS=${JOBS_REAL:-$TOP/../shared/jobs-real}
[ -d "$JOBS" ] || [ -n "${JOBS_REAL:-}" ] || JOBS=$TOP/../../shared/jobs-real
if [ ! -d "$JOBS" ]; then
	test_skip 'the NFS jobs of KernelCI and LKFT' "no real jobs at $JOBS (set JOBS_REAL)"
	test_done
	exit 0
fi
mkdir -p "$LAB/devices" "$LAB/exports" "$TMP/jobs"
# copies, their placeholder URLs made URLs (LKFT's rendering left some as
# 'ramdisk-url'): artifact URLs are the only thing a lab may not take as is
grep -rl --include='*.yaml' 'nfsrootfs:' "$JOBS" | sort | while read -r f; do
	c=$TMP/jobs/$(echo "${f#$JOBS/}" | tr / _)
	sed -E "s#^( *url: *)'?([a-z-]+)'?\$#\1'https://storage.example.org/\2'#" "$f" >"$c"
	echo "$c"
done >"$TMP/nfs-jobs"

# One device type per type the jobs name, with the boot methods they use,
# each bootloader with an `nfs` set like the example boards' (devices/),
# the context keys they set allowed, and a board of it.
$PY - "$TMP/nfs-jobs" "$LAB/devices/real.conf" <<'PY'
import sys, yaml
sets = {
    "u-boot": ['setenv autoload no', 'dhcp', 'setenv serverip {SERVER_IP}',
               'tftp {KERNEL_ADDR} {KERNEL}', 'tftp {RAMDISK_ADDR} {RAMDISK}',
               'setenv initrd_size ${filesize}', 'tftp {DTB_ADDR} {DTB}',
               "setenv bootargs 'console=ttyS0,115200n8 root=/dev/nfs rw "
               "nfsroot={NFS_SERVER_IP}:{NFSROOTFS},tcp,hard{NFS_MOUNT_OPTIONS}"
               "{EXTRA_NFSROOT_ARGS} ip=dhcp {EXTRA_KERNEL_ARGS}'", '{BOOTX}'],
    "grub": ['linux (tftp,{SERVER_IP})/{KERNEL} console=ttyS0 root=/dev/nfs rw '
             'nfsroot={NFS_SERVER_IP}:{NFSROOTFS},tcp,hard{EXTRA_NFSROOT_ARGS} ip=dhcp',
             'initrd (tftp,{SERVER_IP})/{RAMDISK}', 'boot'],
    "ipxe": ['dhcp', 'kernel tftp://{SERVER_IP}/{KERNEL} console=ttyS0 root=/dev/nfs rw '
             'nfsroot={NFS_SERVER_IP}:{NFSROOTFS},tcp,hard{EXTRA_NFSROOT_ARGS} ip=dhcp',
             'initrd tftp://{SERVER_IP}/{RAMDISK}', 'boot'],
    "depthcharge": ['tftpboot {SERVER_IP} {KERNEL} {CMDLINE} {RAMDISK}'],
}
types = {}
for path in open(sys.argv[1]).read().split():
    job = yaml.safe_load(open(path))
    t = types.setdefault(job["device_type"], {"boot": set(), "context": set()})
    t["context"].update((job.get("context") or {}).keys())
    for a in job["actions"]:
        if "boot" in a:
            t["boot"].add(a["boot"]["method"])
def strs(v):
    return "[ " + ", ".join('"%s"' % x for x in sorted(v)) + " ]"
with open(sys.argv[2], "w") as f:
    f.write("device_types = (\n")
    for i, (name, t) in enumerate(sorted(types.items())):
        f.write('  { name = "%s"; boot_methods = %s; deploy_methods = [ "tftp", "nfs" ];\n'
                % (name, strs(t["boot"])))
        if t["context"]:
            f.write('    context_allowed = %s;\n' % strs(t["context"]))
        f.write('    parameters = { KERNEL_CMDLINE_NFS = "console=ttyS0 root=/dev/nfs rw '
                'nfsroot={NFS_SERVER_IP}:{NFSROOTFS},tcp,hard ip=dhcp"; };\n')
        for m in sorted(t["boot"]):
            cmds = ", ".join('"%s"' % c.replace('"', '\\"') for c in sets[m])
            f.write('    %s = { commands = { nfs = ( %s ); }; };\n' % (m, cmds))
        f.write("  }%s\n" % ("," if i + 1 < len(types) else ""))
    f.write(");\ndevices = (\n")
    for i, name in enumerate(sorted(types)):
        f.write('  { name = "board-%d"; type = "%s"; console = { driver = "pty"; '
                'path = "/nonexistent/board-%d"; }; power = { driver = "fake"; }; }%s\n'
                % (i, name, i, "," if i + 1 < len(types) else ""))
    f.write(");\n")
print(len(types), "device types", file=sys.stderr)
PY

write_conf() {
	cat >"$LAB/labd.conf" <<CONF
state_dir = "state";
devices_dir = "devices";
git_allow = [ "https://github.com/Linaro/", "https://github.com/linaro/",
	      "https://github.com/kernelci/" ];
$1
CONF
}
write_conf "nfs = { export_dir = \"exports\"; server_ip = \"192.168.10.1\"; };"

test_expect_success 'the lab of these device types is valid' '
	"$LABD" check-config -c "$LAB/labd.conf" >"$TMP/check" 2>&1 || { cat "$TMP/check"; false; }
'

labd_start

xargs -a "$TMP/nfs-jobs" "$LABCTL_BIN" --url "$LABD_URL" check >"$TMP/out" 2>&1
grep -v ": ok$\|: warning: \|: note: " "$TMP/out" | sed "s|^$TMP/jobs/||; s/^/# refused: /"

test_expect_success "the NFS jobs of KernelCI and LKFT ($(wc -l <"$TMP/nfs-jobs")) pass labctl check" '
	n=$(wc -l <"$TMP/nfs-jobs") && ok=$(grep -c ": ok$" "$TMP/out") &&
	[ "$n" -ge 270 ] && [ "$ok" -ge $((n - NFS_REFUSED_MAX)) ] &&
	! grep -v ": ok$\|: warning: \|: note: " "$TMP/out" | sed "s/^[^:]*:[0-9]*: //" |
		grep -iE "nfs|prefix|.path.|overlays|modules|command set"
'

labd_stop
write_conf ""

test_expect_success 'a lab without an nfs group refuses them, saying why' '
	labd_start &&
	test_must_fail labctl check "$(grep -m1 _x86_ "$TMP/nfs-jobs")" >"$TMP/out" 2>&1 &&
	grep -q "this lab has no NFS export directory (labd.conf.s nfs group, doc/nfs.md): it cannot deploy an .nfsrootfs." "$TMP/out"
'

test_done
