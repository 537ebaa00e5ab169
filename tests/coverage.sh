#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/coverage.sh [FOLDER...] -- how many lines of labd the unit tests reach (gcov)
#
# Builds labd and the unit tests with gcov's instrumentation into
# build-cov/ (CC="gcc --coverage": the Makefile's own flags stay as they
# are), runs the unit tests only (tests/unit/test-*, through tests/run),
# then prints, per folder, the lines gcov counts as executable and those
# the tests ran:
#
#	folder                         lines    run      %
#	dispatcher/run                  1098    870   79.2
#
# The folders are those whose fast tests the runner's, the scheduler's and
# the API's unit tests are about, unless named on the command line
# (dispatcher/store, drivers/power ...).  Scenario scripts are not run:
# the figure is what a change can be checked against in seconds.  A file
# no unit test links counts with all its lines unrun.
#
# COV_KEEP=1 keeps the .gcov files (one per source file, each line with its
# count) in build-cov/gcov/ to see which lines were missed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
BUILD=build-cov
folders=("$@")
[ ${#folders[@]} -gt 0 ] ||
	folders=(dispatcher/run dispatcher/run/actions dispatcher/sched dispatcher/api)

make -j"${COV_JOBS:-2}" BUILD=$BUILD CC="gcc --coverage" tests >/dev/null
find "$BUILD" -name '*.gcda' -delete
BUILD=$BUILD tests/run /tests/unit/ | tail -n 1

out=$BUILD/gcov
rm -rf "$out" ./*.gcov
keep=-n
[ -z "${COV_KEEP:-}" ] || keep=
printf '%-30s %6s %6s %6s\n' folder lines run %
all=0 all_run=0
for f in "${folders[@]}"; do
	srcs=("$f"/*.c)
	[ -e "${srcs[0]}" ] || { echo "coverage: no C files in '$f'" >&2; exit 2; }
	# "File 'x.c'" then "Lines executed:12.34% of 56" per file; a file without
	# .gcda (no test linked it, or none ran it) has all its lines unrun.
	read -r n run < <(gcov $keep -o "$BUILD/obj/$f" "${srcs[@]}" 2>/dev/null |
		awk -v dir="$f/" '
			/^File / { f = $2; gsub(/\x27/, "", f); mine = index(f, dir) == 1 &&
				   substr(f, length(dir) + 1) !~ /\// }
			/^Lines executed:/ && mine { split($2, a, ":"); p = a[2]; sub(/%/, "", p)
				n += $4; run += int(p * $4 / 100 + 0.5); mine = 0 }
			END { print n + 0, run + 0 }')
	printf '%-30s %6d %6d %6.1f\n' "$f" "$n" "$run" "$(awk -v a="$run" -v b="$n" \
		'BEGIN { print b ? 100 * a / b : 0 }')"
	all=$((all + n)) all_run=$((all_run + run))
done
printf '%-30s %6d %6d %6.1f\n' total "$all" "$all_run" "$(awk -v a="$all_run" -v b="$all" \
	'BEGIN { print b ? 100 * a / b : 0 }')"
if [ -n "${COV_KEEP:-}" ]; then
	mkdir -p "$out"
	mv ./*.gcov "$out"/
fi
