# SPDX-License-Identifier: GPL-2.0-or-later
# tests/session-lib.sh -- helpers of the developer-session tests (t5xxx), after lib.sh:
# users with tokens, labctl as one of them, terminals in tmux driving labctl console.
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/session-lib.sh"
#   sim_lab 2; add_users; labd_start
#   as alice reserve sim-01
#   term alice-pane "$(labctl_as alice) console sim-01"
#   wait_screen alice-pane 'you may type' && keys alice-pane 'echo $((6*7))' Enter
#
# tmux runs on a socket of its own (-L), killed at exit: other tmux users are
# left alone.

CONSOLE_CLIENT="$PY $TOP/tests/helper/console-client.py"
TMUX_SOCKET=labd-test-$$
at_exit "tmux -L $TMUX_SOCKET kill-server"

# token_of USER: the test token of USER; hash_of TOKEN: its labd.conf form.
token_of() { echo "$1-secret-token"; }
hash_of() { printf 'sha256:%s' "$(printf %s "$1" | sha256sum | cut -c1-64)"; }

# add_users [EXTRA]: alice, bob, carol (developers), gitlab (ci), rita (reader) and
# boss (admin) in labd.conf, each with the token "<name>-secret-token".
add_users() {
	local u role list=""
	for u in alice:developer bob:developer carol:developer gitlab:ci rita:reader boss:admin; do
		role=${u#*:} u=${u%%:*}
		list="$list	{ name = \"$u\"; role = \"$role\"; tokens = [ \"$(hash_of "$(token_of "$u")")\" ]; ${1:-} },
"
	done
	printf 'users = (\n%s);\n' "${list%,
}" >>"$LAB/labd.conf"
}

# labctl_as USER: the labctl command line of USER (for terminals).
labctl_as() { echo "$LABCTL_BIN --url $LABD_URL --token $(token_of "$1")"; }

# as USER ARGS...: labctl as USER.
as() {
	local who=$1; shift
	"$LABCTL_BIN" --url "$LABD_URL" --token "$(token_of "$who")" "$@"
}

# api_as USER METHOD PATH [CURL ARGS...]: the status code; the body in $TMP/body.
api_as() {
	local who=$1 method=$2 path=$3; shift 3
	curl -s -o "$TMP/body" -w '%{http_code}' -X "$method" \
		-H "Authorization: Bearer $(token_of "$who")" "$@" "$LABD_URL/api/v1$path"
}

tm() { tmux -L "$TMUX_SOCKET" "$@"; }

# term NAME CMD: a 120x40 terminal running CMD; when it ends, its status and the
# terminal's settings are kept in $TMP/NAME.rc and $TMP/NAME.stty.
term() {
	tm new-session -d -s "$1" -x 120 -y 40 \
		"$2; echo \$? >$TMP/$1.rc; stty -a >$TMP/$1.stty; echo TERMINAL-DONE; sleep 600"
}

# screen NAME: what terminal NAME shows, with its scrollback.
screen() { tm capture-pane -p -J -S -1000 -t "$1"; }

# wait_screen NAME TEXT [TIMEOUT_S]: until terminal NAME shows TEXT (fixed string).
wait_screen() {
	local i=0 limit=$(( ${3:-20} * 10 ))
	while ! screen "$1" | grep -qF -- "$2"; do
		i=$((i + 1))
		if [ $i -ge $limit ]; then
			echo "terminal $1 never showed '$2':"
			screen "$1" | tail -20
			return 1
		fi
		sleep 0.1
	done
}

# keys NAME KEYS...: type into terminal NAME (tmux send-keys arguments).
keys() { local n=$1; shift; tm send-keys -t "$n" "$@"; }

# literal NAME TEXT: type TEXT as it is (no key names).
literal() { tm send-keys -t "$1" -l -- "$2"; }

# typed_by USER LOG: what USER typed, as the labd.log LOG records it: the text of USER's
# input records joined in their order, escaped as logged (Enter is \r).  labd logs keys
# as it reads them, one record per read: a line typed may come in pieces, or in one
# record with the Enter typed after it, as a loaded machine schedules the readers.
typed_by() { sed -n "s/^[^ ]* input L[0-9]* $1: //p" "$2" | tr -d '\n'; }

# sim_stage INDEX: the stage of simulated board sim<INDEX> (off, uboot, kernel, login, shell).
sim_stage() { sim_ctl status "sim$1" | sed -n 's/.*stage=\([a-z]*\).*/\1/p'; }

# sim_boots INDEX: how many times sim<INDEX> was powered on.
sim_boots() { sim_ctl status "sim$1" | sed -n 's/.*boots=\([0-9]*\).*/\1/p'; }

# board_field NAME FIELD: a field of GET /devices/NAME, in python syntax (["holder"]).
board_field() {
	curl -s "$LABD_URL/api/v1/devices/$1" -H "Authorization: Bearer $(token_of boss)" |
		$PY -c "import json, sys; v = json.load(sys.stdin)$2; print('' if v is None else v)"
}
