#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t0210-debian-package.sh -- the Debian packages as a buildd makes them and a
# lab admin gets them.  In a fresh Debian 12 root made by mmdebstrap (cached
# under ~/.cache/labd-tests/debian-root/, keyed by its recipe; apt's downloads
# cached beside it), `apt-get build-dep` installs debian/control's
# Build-Depends and nothing else, and dpkg-buildpackage builds labd and labctl
# from a copy of the tree as an unprivileged user, with no network but
# loopback, running the unit tests (dh_auto_test): so the Build-Depends are
# complete.  lintian finds no error and no warning
# (debian/labd.lintian-overrides justifies its informational tags).  Then apt
# installs the packages into another fresh root, fetching their dependencies
# from Debian's archive: the labd user and its groups, the state directory,
# the conffile, `labd check-config`, `labd --version`; a job queued, kept
# through the upgrade to a rebuilt N+1 with the admin's edit of labd.conf;
# remove keeps the state, purge removes it.
#
# systemd does not run in the chroot: the maintainer scripts must cope (the
# unit is enabled, not started), as they do in an image build.  The N+1 build
# reuses N's objects (-nc) and skips the tests: the upgrade is what it checks.
. "$(dirname "$0")/lib.sh"

CACHE=${LABD_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/labd-tests}/debian-root
BROOT=$TMP/build-root
SRC=$BROOT/build/labd
ROOT=$TMP/root
DEBS=$TMP/debs

missing=
for t in dpkg-deb dpkg-parsechangelog lintian mmdebstrap zstd ip; do
	command -v $t >/dev/null || missing="$missing $t"
done
if [ -n "$missing" ]; then
	test_skip 'the Debian packages build, install, upgrade and purge' \
		"missing:$missing (make deps installs dpkg-dev, lintian, mmdebstrap, zstd, iproute2)"
	test_done
	exit
fi
if [ "$(id -u)" != 0 ] || ! unshare --mount --net true 2>/dev/null; then
	test_skip 'the Debian packages build, install, upgrade and purge' \
		'needs root: mmdebstrap --mode=root, mount and network namespaces, chroot'
	test_done
	exit
fi

# makevar NAME: a variable of labd's Makefile
makevar() {
	printf 'print-var:\n\t@echo $(%s)\n' "$1" | make -s -C "$TOP" -f Makefile -f - print-var
}

# The Debian 12 root: what mmdebstrap makes from this recipe, cached by its hash.
RECIPE="--mode=root --variant=apt --skip=cleanup/apt/lists bookworm
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main"
TARBALL=$CACHE/bookworm-$(echo "$RECIPE" | sha256sum | cut -c1-12).tar.zst

# debian_root DIR: the cached root unpacked in DIR (made first when missing,
# by one test at a time), with a resolv.conf for apt and the /etc/hosts
# buildds have
debian_root() {
	mkdir -p "$CACHE/archives"
	(
		flock 9
		[ -f "$TARBALL" ] && exit 0
		local args
		mapfile -t args <<<"$RECIPE"
		# shellcheck disable=SC2086
		mmdebstrap ${args[0]} "$TARBALL.tmp.tar.zst" "${args[@]:1}" >"$TMP/mmdebstrap.log" 2>&1 ||
			{ tail -20 "$TMP/mmdebstrap.log"; rm -f "$TARBALL.tmp.tar.zst"; exit 1; }
		mv "$TARBALL.tmp.tar.zst" "$TARBALL"
	) 9>"$CACHE/.lock" &&
	mkdir -p "$1" && tar -C "$1" -xf "$TARBALL" &&
	cp /etc/resolv.conf "$1/etc/resolv.conf" &&
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$1/etc/hosts"
}

# A mount namespace held by a sleep: /proc, /dev and apt's download cache are
# mounted into the roots there only, and go when it ends (no mount to undo).
unshare --mount --propagation private sleep 7200 &
NS_PID=$!
at_exit "kill $NS_PID"
# mount_root DIR: /proc, /dev and apt's download cache into the root DIR
mount_root() {
	nsenter -t "$NS_PID" -m sh -c "mount -t proc proc '$1/proc' && mount --rbind /dev '$1/dev' &&
		mount --bind '$CACHE/archives' '$1/var/cache/apt/archives'"
}
# inside DIR CMD...: CMD in the root DIR, as root, with a clean environment (but
# for the tags by which the test's leftovers are found and stopped);
# IN_EXEC=exec: in place of the calling (sub)shell
inside() {
	local dir=$1
	shift
	${IN_EXEC:-} nsenter -t "$NS_PID" -m chroot "$dir" env -i HOME=/root LANG=C.UTF-8 \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
		LABD_TEST_TMP="$TMP" ${LABD_TEST_TAG:+LABD_TEST_TAG="$LABD_TEST_TAG"} "$@"
}

# apt_get DIR ARGS...: apt-get in the root DIR; when the cached package lists
# name a version the archive no longer has, once more after apt-get update.
# One test at a time: the download cache is shared.
apt_get() {
	local dir=$1
	shift
	(
		flock -w 900 9
		inside "$dir" apt-get -y -q -o Dpkg::Use-Pty=0 "$@" >>"$TMP/apt.log" 2>&1 && exit 0
		inside "$dir" apt-get -q update >>"$TMP/apt.log" 2>&1 &&
			inside "$dir" apt-get -y -q -o Dpkg::Use-Pty=0 "$@" >>"$TMP/apt.log" 2>&1 ||
			{ tail -30 "$TMP/apt.log"; exit 1; }
	) 9>"$CACHE/archives.lock"
}

# build LOG ARGS...: dpkg-buildpackage in the build root as the user builder,
# in a network namespace of its own (loopback only), as a buildd builds;
# the packages are copied to $DEBS
build() {
	local log=$1
	shift
	nsenter -t "$NS_PID" -m unshare --net sh -c 'ip link set lo up && exec "$@"' sh \
		chroot "$BROOT" env -i HOME=/home/builder LANG=C.UTF-8 PATH=/usr/bin:/bin \
		DEB_BUILD_OPTIONS="parallel=2 $BUILD_OPTIONS" LABD_TEST_TMP="$TMP" \
		setpriv --reuid=builder --regid=builder --init-groups \
		sh -c 'cd /build/labd && exec dpkg-buildpackage -us -uc -b "$@"' sh "$@" \
		>"$TMP/$log" 2>&1 || { tail -40 "$TMP/$log"; grep -B8 "^ *not ok" "$TMP/$log" | head -60; return 1; }
	mkdir -p "$DEBS" && cp "$BROOT"/build/*.deb "$BROOT"/build/*.changes "$BROOT"/build/*.buildinfo "$DEBS/"
}

test_expect_success 'a fresh Debian 12 root with debian/control'"'"'s Build-Depends only' '
	debian_root "$BROOT" && mount_root "$BROOT" &&
	mkdir -p "$SRC" &&
	git -C "$TOP" ls-files -z --cached --others --exclude-standard |
		tar -C "$TOP" -c --null --ignore-failed-read -T - | tar -x -C "$SRC" &&
	apt_get "$BROOT" build-dep /build/labd &&
	inside "$BROOT" useradd --create-home builder && inside "$BROOT" chown -R builder: /build
'

test_expect_success 'dpkg-buildpackage builds labd and labctl there, and their unit tests pass' '
	BUILD_OPTIONS= build build-n.log &&
	V1=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -SVersion) && echo "$V1" >"$TMP/v1" &&
	ls "$DEBS/labd_${V1}_amd64.deb" "$DEBS/labctl_${V1}_amd64.deb" &&
	grep "^[0-9]* passed, 0 failed, [0-9]* skipped$" "$TMP/build-n.log" &&
	# the hardening flags reached the compiler and the linker, -Werror did not
	grep -q -- "-D_FORTIFY_SOURCE=2 .*-fstack-protector-strong .* -c -o build-deb/obj/dispatcher/daemon.o" \
		"$TMP/build-n.log" &&
	grep -q -- "-Wl,-z,now .*-o build-deb/labd " "$TMP/build-n.log" &&
	! grep -q -- "-Werror .*-c -o build-deb/obj/dispatcher/daemon.o" "$TMP/build-n.log" &&
	! grep -n "warning:" "$TMP/build-n.log"
'
V1=$(cat "$TMP/v1" 2>/dev/null || echo none)

test_expect_success 'debian/control builds with the Makefile'"'"'s DEB_BUILD packages' '
	want=$(makevar DEB_BUILD | tr " " "\n" | grep -vx build-essential | sort) &&
	have=$(sed -n "/^Build-Depends:/,/^Standards-Version:/p" "$TOP/debian/control" |
		sed "s/^Build-Depends://;/^Standards-Version:/d;/^#/d" | tr "," "\n" |
		grep -v "<!nocheck>" | sed "s/[[(<].*//;s/ //g" | grep . |
		grep -vx -e "debhelper-compat" -e "dh-sequence-installsysusers" | sort) &&
	[ "$want" = "$have" ] || { diff <(echo "$want") <(echo "$have"); exit 1; }
'

test_expect_success 'the packages hold what they should, with their dependencies' '
	dpkg-deb -c "$DEBS/labd_${V1}_amd64.deb" >"$TMP/labd.list" &&
	for f in ./usr/bin/labd ./lib/systemd/system/labd.service ./etc/labd/labd.conf \
		./usr/lib/sysusers.d/labd.conf ./usr/share/labd/web/index.html \
		./usr/share/labd/web/vendor/xterm/xterm.js ./usr/share/man/man8/labd.8.gz \
		./usr/share/man/man5/labd.conf.5.gz ./usr/share/doc/labd/examples/devices/sim.conf \
		./usr/share/doc/labd/examples/labd.conf.example; do
		grep -q " $f\$" "$TMP/labd.list" || { echo "labd lacks $f"; exit 1; }
	done &&
	# dh_compress compresses it once it is over 4 kB
	grep -q " ./usr/share/doc/labd/README.Debian\(.gz\)\?\$" "$TMP/labd.list" &&
	dpkg-deb -c "$DEBS/labctl_${V1}_amd64.deb" >"$TMP/labctl.list" &&
	for f in ./usr/bin/labctl ./usr/share/bash-completion/completions/labctl \
		./usr/share/man/man1/labctl.1.gz; do
		grep -q " $f\$" "$TMP/labctl.list" || { echo "labctl lacks $f"; exit 1; }
	done &&
	cmp "$TOP/web/vendor/xterm/xterm.js" <(dpkg-deb --fsys-tarfile "$DEBS/labd_${V1}_amd64.deb" |
		tar -xO ./usr/share/labd/web/vendor/xterm/xterm.js) &&
	dpkg-deb -f "$DEBS/labd_${V1}_amd64.deb" Depends | tee "$TMP/depends" &&
	grep -q "libcurl4" "$TMP/depends" && grep -q "libpq5" "$TMP/depends" &&
	grep -q "libjs-chart.js" "$TMP/depends" &&
	dpkg-deb -f "$DEBS/labd_${V1}_amd64.deb" Suggests | grep -q "qemu-system-x86" &&
	dpkg-deb -f "$DEBS/labctl_${V1}_amd64.deb" Depends | tee "$TMP/labctl-depends" &&
	# --as-needed: labctl does not need the daemon'"'"'s libraries
	! grep -q "libpq5\|libmicrohttpd" "$TMP/labctl-depends" &&
	[ "$(dpkg-deb --ctrl-tarfile "$DEBS/labd_${V1}_amd64.deb" | tar -xO ./conffiles)" = /etc/labd/labd.conf ]
'

test_expect_success 'lintian: no error, no warning' '
	lintian --pedantic -I --show-overrides --fail-on error,warning \
		"$DEBS/labd_${V1}_amd64.changes" 2>&1 | grep -v "running with root privileges" | tee "$TMP/lintian.log"
	[ "${PIPESTATUS[0]}" = 0 ] &&
	! grep "^[EW]: " "$TMP/lintian.log"
'

# inroot CMD...: CMD in the root the packages are installed in
inroot() {
	inside "$ROOT" "$@"
}

test_expect_success 'apt installs labd and labctl into another fresh root, their dependencies from Debian' '
	debian_root "$ROOT" && mount_root "$ROOT" &&
	[ ! -e "$ROOT/usr/bin/labd" ] &&
	mkdir -p "$ROOT/tmp/debs" && cp "$DEBS"/*.deb "$ROOT/tmp/debs/" &&
	apt_get "$ROOT" install --no-install-recommends "/tmp/debs/labd_${V1}_amd64.deb" \
		"/tmp/debs/labctl_${V1}_amd64.deb" &&
	inroot dpkg-query -W -f="\${Status} \${Version}\n" labd labctl | tee "$TMP/status" &&
	[ "$(grep -c "install ok installed $V1" "$TMP/status")" = 2 ] &&
	# libraries apt fetched (the root had none of them)
	inroot dpkg-query -W libcurl4 libpq5 libmicrohttpd12 libjs-chart.js
'

test_expect_success 'the labd user, its groups, its state directory; the unit enabled, not started' '
	inroot id labd | tee "$TMP/id" &&
	for g in labd dialout plugdev kvm; do grep -q "($g)" "$TMP/id" || { echo "not in $g"; exit 1; }; done &&
	inroot getent passwd labd | grep -q ":/var/lib/labd:/usr/sbin/nologin$" &&
	[ "$(inroot stat -c %U:%G /var/lib/labd)" = labd:labd ] &&
	[ -L "$ROOT/etc/systemd/system/multi-user.target.wants/labd.service" ] &&
	grep -q "deb-systemd-invoke start .labd.service" "$ROOT/var/lib/dpkg/info/labd.postinst" &&
	grep -q "deb-systemd-invoke stop .labd.service" "$ROOT/var/lib/dpkg/info/labd.prerm" &&
	grep -q "^User=labd$" "$ROOT/lib/systemd/system/labd.service"
'

test_expect_success 'labd check-config (as labd) and --version, labctl --version' '
	inroot setpriv --reuid=labd --regid=labd --init-groups labd check-config >"$TMP/check.out" 2>&1 &&
	cat "$TMP/check.out" &&
	grep -q "^/etc/labd/labd.conf: ok: 0 device types, 0 devices$" "$TMP/check.out" &&
	[ "$(inroot labd --version)" = "labd ${V1%%[+~-]*}" ] &&
	inroot labctl --version | grep -q "^labctl "
'

PORT=$(free_port)
LABD_IN_ROOT=
# labd_in_root: labd as the unit runs it (user labd, /run/labd), on $PORT;
# nsenter, chroot, env and setpriv exec each other: $! is labd
labd_in_root() {
	inroot install -d -o labd -g labd /run/labd &&
	{ (IN_EXEC=exec inroot setpriv --reuid=labd --regid=labd --init-groups \
		labd -c /etc/labd/labd.conf --listen "127.0.0.1:$PORT") >"$TMP/labd-root.log" 2>&1 &
	  LABD_IN_ROOT=$!; } &&
	for i in $(seq 100); do
		[ -S "$ROOT/run/labd/labd.sock" ] && return 0
		kill -0 "$LABD_IN_ROOT" || break
		sleep 0.1
	done
	cat "$TMP/labd-root.log"
	return 1
}
# labd_in_root_stop: SIGTERM, as systemctl stop sends; labd exits 0
labd_in_root_stop() {
	kill "$LABD_IN_ROOT" && wait "$LABD_IN_ROOT" && [ ! -e "$ROOT/run/labd/labd.sock" ]
}
# as root on the Unix socket: an admin (debian/labd.conf)
ctl() { inroot labctl --url unix:/run/labd/labd.sock "$@"; }

test_expect_success 'a board, an edit of labd.conf and a job queued (the board in maintenance)' '
	cp "$TOP/devices/sim.conf" "$ROOT/etc/labd/devices/" &&
	cat >"$ROOT/etc/labd/devices/sim-01.conf" <<-EOF &&
	device = {
		name = "sim-01";
		type = "sim-uboot";
		tags = [ "sim" ];
		console = { driver = "pty"; path = "/run/labd/sim-01.pty"; };
		power = { driver = "fake"; };
	};
	EOF
	echo "lab_name = \"pkg-test\";" >>"$ROOT/etc/labd/labd.conf" &&
	cp "$TOP/jobs/sim-uboot.yaml" "$ROOT/tmp/job.yaml" &&
	labd_in_root &&
	ctl device set-state sim-01 maintenance --reason upgrade &&
	[ "$(ctl submit /tmp/job.yaml)" = 1 ] &&
	ctl jobs | grep -q "^1 *queued" &&
	# on TCP without a token: a reader, who may not submit
	test_must_fail inroot labctl --url "http://127.0.0.1:$PORT" submit /tmp/job.yaml &&
	inroot labctl --url "http://127.0.0.1:$PORT" jobs | grep -q "^1 *queued" &&
	labd_in_root_stop
'

test_expect_success 'upgrade to a rebuilt N+1: the queue, the job, the board state and labd.conf kept' '
	V2="$V1+upgrade1" &&
	{ printf "labd (%s) unstable; urgency=medium\n\n  * t0210: the upgrade over %s.\n\n" "$V2" "$V1" &&
	  printf " -- labd tests <tests@labd.invalid>  %s\n\n" "$(date -R)" &&
	  cat "$SRC/debian/changelog"; } >"$TMP/changelog" &&
	cp "$TMP/changelog" "$SRC/debian/changelog" &&
	BUILD_OPTIONS=nocheck build build-n1.log -nc &&
	cp "$DEBS/labd_${V2}_amd64.deb" "$DEBS/labctl_${V2}_amd64.deb" "$ROOT/tmp/debs/" &&
	apt_get "$ROOT" install --no-install-recommends "/tmp/debs/labd_${V2}_amd64.deb" \
		"/tmp/debs/labctl_${V2}_amd64.deb" &&
	[ "$(inroot dpkg-query -W -f="\${Version}" labd)" = "$V2" ] &&
	grep -q "^lab_name = \"pkg-test\";$" "$ROOT/etc/labd/labd.conf" &&
	[ -z "$(ls "$ROOT"/etc/labd/*.dpkg-* 2>/dev/null)" ] &&
	labd_in_root &&
	ctl jobs --format json >"$TMP/jobs.json" &&
	$PY -c "import json,sys; j=json.load(open(sys.argv[1])); j=j.get(\"jobs\", j) if isinstance(j, dict) else j; \
		assert [(x[\"id\"], x[\"state\"]) for x in j] == [(1, \"queued\")], j" "$TMP/jobs.json" &&
	ctl device show sim-01 | grep -q maintenance &&
	labd_in_root_stop &&
	grep -q "lab .pkg-test.: 1 boards" "$TMP/labd-root.log"
'

test_expect_success 'remove keeps the state and labd.conf; purge removes them' '
	apt_get "$ROOT" remove labd labctl &&
	[ ! -e "$ROOT/usr/bin/labd" ] && [ ! -e "$ROOT/usr/bin/labctl" ] &&
	[ -f "$ROOT/var/lib/labd/labd.db" ] && [ -f "$ROOT/etc/labd/labd.conf" ] &&
	inroot dpkg-query -W -f="\${db:Status-Abbrev}" labd | grep -q "^rc" &&
	apt_get "$ROOT" purge labd labctl &&
	[ ! -e "$ROOT/var/lib/labd" ] && [ ! -e "$ROOT/etc/labd/labd.conf" ] &&
	[ ! -e "$ROOT/etc/systemd/system/multi-user.target.wants/labd.service" ] &&
	# the admin'"'"'s board files are not the package'"'"'s: they stay
	[ -f "$ROOT/etc/labd/devices/sim-01.conf" ] &&
	# apt'"'"'s cache keeps only what the archive still has
	inroot apt-get -q autoclean >/dev/null
'

test_done
