#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t1110-board-examples.sh -- every board definition shipped with labd passes
# `labd check-config`, one test per file:
#   - devices/*.conf: each file alone (devices/README.md promises that one
#     file can be copied and used by itself), then the folder as a whole
#     (names are unique, so the folder works as a devices_dir as it is);
#   - contrib/lab/: a labd.conf is checked with -c; a board file together
#     with the other board files of its directory, as labd reads them.
# Hardware the files name (/dev/serial/by-id/..., a GPIO chip, a USB hub)
# does not exist here: check-config checks the configuration only.
. "$(dirname "$0")/lib.sh"

# check_boards NAME FILE...: check-config of a lab whose board directory
# holds FILE... (linked under their own names); at least one type or device
# must have been read from them.
check_boards() {
	local lab=$TMP/$1 f
	shift
	rm -rf "$lab"
	mkdir -p "$lab/devices"
	for f in "$@"; do
		ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$lab/devices/"
	done
	printf 'lab_name = "examples";\nstate_dir = "state";\ndevices_dir = "devices";\n' \
		>"$lab/labd.conf"
	check_lab "$lab/labd.conf"
}

# check_lab LABD_CONF: check-config passes and read something.
check_lab() {
	"$LABD" check-config -c "$1" >"$TMP/check.out" 2>&1 || { cat "$TMP/check.out"; return 1; }
	cat "$TMP/check.out"
	! grep -q "ok: 0 device types, 0 devices" "$TMP/check.out"
}

# is_labd_conf FILE: a labd.conf (it names the board directory), not a board file.
is_labd_conf() {
	grep -Eq '^[[:space:]]*devices_dir[[:space:]]*=' "$1"
}

# board_files DIR: the board files of DIR: its *.conf files but labd.conf files.
board_files() {
	local f
	for f in "$1"/*.conf; do
		is_labd_conf "$f" || echo "$f"
	done
}

cd "$TOP" || exit 1

test_expect_success 'a board file that does not validate fails its check' '
	sed "s/baud = 115200;/baud = \"fast\";/" devices/beaglebone-black.conf >"$TMP/broken.conf" &&
	! check_boards broken "$TMP/broken.conf" &&
	grep -q "broken.conf:[0-9]*: .*'\''baud'\'' must be an integer" "$TMP/check.out"
'

n=0
for f in devices/*.conf; do
	n=$((n + 1))
	test_expect_success "$f" "check_boards example-$n '$f'"
done
test_expect_success 'devices/ as a whole is one valid board directory' '
	check_boards all-examples devices/*.conf
'

while IFS= read -r f; do
	n=$((n + 1))
	if is_labd_conf "$f"; then
		test_expect_success "$f (labd.conf)" "check_lab '$f'"
	else
		test_expect_success "$f (with its directory)" \
			"check_boards example-$n \$(board_files '$(dirname "$f")')"
	fi
done < <(find contrib/lab -name '*.conf' | sort)

test_done
