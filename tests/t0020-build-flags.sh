#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t0020-build-flags.sh -- the Makefile as packagers drive it: the user's CFLAGS,
# CPPFLAGS and LDFLAGS are added to labd's own flags, never replace them;
# -Werror unless WERROR=0; a library pkg-config cannot find stops the build,
# named.  Then three real builds: `make CFLAGS=-O0`, `make CC=clang` and one with
# dpkg-buildflags' hardening flags (as debian/rules has them), each with -Werror.
. "$(dirname "$0")/lib.sh"

# mk ARGS...: make in the source tree, building into $TMP (never into build/)
mk() {
	make -C "$TOP" --no-print-directory "$@"
}

# compile_line BUILD_DIR FILE [MAKE ARGS...]: the command make would compile FILE with
compile_line() {
	local b=$1 f=$2
	shift 2
	mk -n BUILD="$b" "$@" "$b/obj/${f%.c}.o" | grep -F -- "-c -o $b/obj/${f%.c}.o"
}

test_expect_success 'make CFLAGS=-O0: labd'"'"'s own flags stay, the user'"'"'s come last' '
	line=$(compile_line "$TMP/n" dispatcher/main.c CFLAGS=-O0 CPPFLAGS=-DUSER_CPP) &&
	echo "$line" &&
	for f in -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE "-iquote dispatcher" \
		-fvisibility=hidden "$(echo $(pkg-config --cflags-only-I libpq))" -DUSER_CPP -O0; do
		case " $line " in *" $f "*) ;; *) echo "lacks $f"; exit 1 ;; esac
	done &&
	case "$line" in *-O2*) echo "the default CFLAGS stayed"; exit 1 ;; esac &&
	# the user has the last word: -O0 after every flag of labd
	[ "${line##* -O0 }" = "-MMD -MP -c -o $TMP/n/obj/dispatcher/main.o dispatcher/main.c" ]
'

test_expect_success 'make CFLAGS=...: the flags one file adds stay too' '
	compile_line "$TMP/n" dispatcher/api/api_web.c CFLAGS=-O0 | grep -q -- "-DLABD_WEB_DIR=" &&
	compile_line "$TMP/n" dispatcher/api/api_lava_rpc.c CFLAGS=-O0 | grep -q -- "-O0" &&
	compile_line "$TMP/n-san" dispatcher/main.c CFLAGS=-O0 SANITIZE=1 |
		grep -q -- "-fsanitize=address,undefined .*-O0"
'

test_expect_success 'WERROR=0 turns -Werror off, and only it' '
	line=$(compile_line "$TMP/n" dispatcher/main.c WERROR=0) &&
	case "$line" in *-Werror*) echo "$line"; exit 1 ;; esac &&
	case "$line" in *" -Wall -Wextra "*" -O2 -g "*) ;; *) echo "$line"; exit 1 ;; esac
'

test_expect_success 'LDFLAGS and LDLIBS are added to the links, after labd'"'"'s' '
	mk -n BUILD="$TMP/n" LDFLAGS=-Wl,-z,now LDLIBS=-lrt "$TMP/n/labctl" >"$TMP/link.txt" &&
	grep -- "-o $TMP/n/labctl " "$TMP/link.txt" >"$TMP/link1.txt" &&
	grep -Eq -- " -O2 -g +-Wl,-z,now -o .* -ljansson.* -lrt$" "$TMP/link1.txt"
'

# a pkg-config that does not know libzstd, like a machine without libzstd-dev
cat >"$TMP/pkg-config" <<'SH'
#!/bin/sh
for a; do
	case $a in libzstd) echo "Package libzstd was not found in the pkg-config search path." >&2; exit 1 ;; esac
done
exec pkg-config "$@"
SH
chmod +x "$TMP/pkg-config"

test_expect_success 'a missing pkg-config package stops the build, named' '
	test_must_fail mk BUILD="$TMP/nozstd" PKG_CONFIG="$TMP/pkg-config" all >"$TMP/nozstd.log" 2>&1 &&
	cat "$TMP/nozstd.log" &&
	grep -q "labd: $TMP/pkg-config finds no libzstd: install their -dev packages (make deps)" \
		"$TMP/nozstd.log" &&
	[ -z "$(find "$TMP/nozstd" -name "*.o" 2>/dev/null)" ]
'

# build NAME ARGS...: a full build into $TMP/NAME; its programs run
build() {
	local name=$1
	shift
	mk -j2 V=1 BUILD="$TMP/$name" "$@" all >"$TMP/$name.log" 2>&1 || { tail -30 "$TMP/$name.log"; return 1; }
	! grep -n "warning:" "$TMP/$name.log" &&
	"$TMP/$name/labd" --version | grep -q "^labd [0-9]" &&
	"$TMP/$name/labctl" --version | grep -q "^labctl [0-9]"
}

test_expect_success 'make CFLAGS=-O0 builds labd, with -Werror' '
	build o0 CFLAGS="-O0 -g" &&
	grep -q -- "-Werror .*-O0 -g -MMD -MP -c -o $TMP/o0/obj/dispatcher/daemon.o" "$TMP/o0.log"
'

if command -v clang >/dev/null; then
	test_expect_success 'make CC=clang builds labd, with -Werror' '
		build clang CC=clang &&
		grep -q "^clang .*-Werror .* -c -o $TMP/clang/obj/dispatcher/daemon.o" "$TMP/clang.log"
	'
else
	test_skip 'make CC=clang builds labd, with -Werror' 'clang not installed (make deps)'
fi

if command -v dpkg-buildflags >/dev/null; then
	test_expect_success 'a build with dpkg-buildflags (hardening=+all) as debian/rules has it' '
		(export DEB_BUILD_MAINT_OPTIONS=hardening=+all &&
		 eval "$(cd "$TOP" && dpkg-buildflags --export=sh)" && build dpkg) &&
		grep -q -- "-Werror .*-D_FORTIFY_SOURCE=2 .*-fstack-protector-strong .* -c -o $TMP/dpkg/obj/dispatcher/daemon.o" \
			"$TMP/dpkg.log" &&
		# the LDFLAGS reached the link: immediate binding, read-only relocations
		readelf -d "$TMP/dpkg/labd" | grep -q "BIND_NOW" &&
		readelf -lW "$TMP/dpkg/labd" | grep -q GNU_RELRO &&
		# and the CPPFLAGS the compiler: fortified calls
		nm -D "$TMP/dpkg/labd" | grep -q "_chk@"
	'
else
	test_skip 'a build with dpkg-buildflags (hardening=+all) as debian/rules has it' 'dpkg-dev not installed'
fi

test_done
