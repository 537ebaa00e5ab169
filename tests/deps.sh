#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# deps.sh PKG... -- apt-get install the Debian packages that are not installed yet.
# Uses sudo when not root; retries while another apt/dpkg holds the lock.
set -e
missing=
for p in "$@"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing:$missing"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
try=0
while :; do
	if $SUDO apt-get update -q >/dev/null 2>&1 || [ $try -gt 0 ]; then
		out=$($SUDO apt-get install -y -q --no-install-recommends $missing 2>&1) && exit 0
	fi
	try=$((try + 1))
	case "$out" in
	*"Could not get lock"*|*"Unable to acquire"*|*"is held by process"*)
		[ $try -lt 30 ] || break
		sleep 10 ;;
	*) break ;;
	esac
done
echo "$out" >&2
echo "deps: apt-get install failed" >&2
exit 1
