#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t5100-console.sh -- labctl console in real terminals (tmux): the scrollback replayed on
# attach, typing that reaches the board and is logged with who typed it, read-only viewers,
# the escapes (~? ~b ~~ ~p ~.), the terminal restored on detach and on signals, a viewer
# that stops reading dropped while the others keep up, watching a CI job, labd stopping.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session-lib.sh"

sim_lab 2
add_users
labd_start
BLOG=$LAB/state/boards/sim-01/labd.log

t_replay() {
	as alice reserve sim-01 --for 10m &&
	as alice power sim-01 on &&
	wait_for '[ "$(sim_stage 0)" = login ]' 20 &&
	term alice "$(labctl_as alice) console sim-01" &&
	wait_screen alice "attached to 'sim-01' as 'alice': you may type" &&
	wait_screen alice "Debian GNU/Linux 12 sim ttyAMA0" &&
	wait_screen alice "sim login:"
}
test_expect_success 'attach replays what the board printed before' t_replay

t_typing() {
	local typed
	literal alice root && keys alice Enter &&
	wait_screen alice 'root@sim:~#' &&
	literal alice 'echo MARK-$((6*7))' && keys alice Enter &&
	wait_screen alice 'MARK-42' &&
	typed=$(typed_by alice "$BLOG") &&
	{ [ "$typed" = 'root\recho MARK-$((6*7))\r' ] ||
	  { echo "alice typed, as logged: '$typed'"; grep ' input ' "$BLOG"; false; }; }
}
test_expect_success 'the holder types: the board runs it, the board log names who typed' t_typing

t_read_only() {
	term bob "$(labctl_as bob) console sim-01" &&
	wait_screen bob "read-only: 'alice' holds it" &&
	literal bob 'echo BOB-$((1+1))' && keys bob Enter &&
	wait_screen bob "read-only: 'alice' holds 'sim-01', your keys are ignored" &&
	literal alice 'echo SHARED-$((2+3))' && keys alice Enter &&
	wait_screen bob 'SHARED-5' &&
	! screen alice | grep -q 'BOB-2' &&
	! grep -q 'bob:' "$BLOG" &&
	[ "$(board_field sim-01 '["viewers"]')" = 2 ]
}
test_expect_success 'another user watches read-only: keys ignored with a notice' t_read_only

t_escapes() {
	keys alice Enter && literal alice '~?' &&
	wait_screen alice '~b send a break' &&
	literal alice '~b' &&
	wait_screen alice 'break sent' &&
	grep -q 'alice: <break>' "$BLOG" &&
	literal alice '~~' && literal alice 'echo TILDE' && keys alice Enter &&
	wait_screen alice '~echo: not found' &&
	keys bob Enter && literal bob '~p' &&
	wait_screen bob "only the holder of 'sim-01' may power-cycle it" &&
	[ "$(sim_boots 0)" = 1 ] &&
	literal alice '~p' &&
	wait_screen alice 'power cycle done' &&
	wait_screen bob "power cycle by 'alice'" &&
	[ "$(sim_boots 0)" = 2 ]
}
test_expect_success 'escapes: ~? lists, ~b breaks, ~~ types a tilde, ~p power-cycles' t_escapes

t_detach() {
	keys alice Enter && literal alice '~.' &&
	wait_screen alice TERMINAL-DONE &&
	[ "$(cat "$TMP/alice.rc")" = 0 ] &&
	grep -qw icanon "$TMP/alice.stty" && ! grep -qw -- -icanon "$TMP/alice.stty" &&
	grep -qw echo "$TMP/alice.stty" && ! grep -qw -- -echo "$TMP/alice.stty" &&
	wait_for '[ "$(board_field sim-01 "[\"viewers\"]")" = 1 ]' 5
}
test_expect_success '~. detaches and gives the terminal back as it was' t_detach

t_signal() {
	term alice2 "$(labctl_as alice) console sim-01" &&
	wait_screen alice2 'you may type' &&
	pid=$(pgrep -P "$(tm list-panes -t alice2 -F '#{pane_pid}')" labctl) &&
	kill -TERM "$pid" &&
	wait_screen alice2 TERMINAL-DONE &&
	[ "$(cat "$TMP/alice2.rc")" = 130 ] &&
	grep -qw icanon "$TMP/alice2.stty" && ! grep -qw -- -icanon "$TMP/alice2.stty"
}
test_expect_success 'SIGTERM also gives the terminal back' t_signal

# The stuck viewer stays connected until it is told to look (SIGUSR1), however long
# a loaded machine takes to spew: it never leaves before labd drops it.
t_slow_viewer() {
	keys bob Enter && literal bob '~.' && wait_screen bob TERMINAL-DONE &&
	as alice power sim-01 cycle >/dev/null &&
	wait_for '[ "$(sim_stage 0)" = login ]' 20 &&
	$CONSOLE_CLIENT "$LABD_PORT" sim-01 --token "$(token_of alice)" --replay 0 \
		--send 'root\r' --until 'root@sim:~# ' --for 10 >/dev/null &&
	sim_ctl baud sim0 0 >/dev/null &&
	{ $CONSOLE_CLIENT "$LABD_PORT" sim-01 --token "$(token_of rita)" --no-read --for 300 \
		>"$TMP/stuck.out" 2>&1 & } &&
	stuck=$! &&
	{ $CONSOLE_CLIENT "$LABD_PORT" sim-01 --token "$(token_of carol)" --replay 0 --for 300 \
		--until AFTER-7 --out "$TMP/fast.out" 2>"$TMP/fast.err" & } &&
	fast=$! &&
	wait_for '[ "$(board_field sim-01 "[\"viewers\"]")" = 2 ]' 20 &&
	$CONSOLE_CLIENT "$LABD_PORT" sim-01 --token "$(token_of alice)" --replay 0 \
		--send 'spew 3000000\r' --until 'root@sim:~# ' --for 120 >/dev/null &&
	wait_for "grep -q \"console viewer 'rita' dropped\" '$LAB/labd.log'" 60 &&
	$CONSOLE_CLIENT "$LABD_PORT" sim-01 --token "$(token_of alice)" --replay 0 \
		--send 'echo AFTER-$((3+4))\r' --until AFTER-7 --for 30 >/dev/null &&
	wait "$fast" &&
	[ "$(stat -c %s "$TMP/fast.out")" -gt 3000000 ] &&
	grep -q AFTER-7 "$TMP/fast.out" &&
	kill -USR1 "$stuck" && wait "$stuck" &&
	grep -q closed "$TMP/stuck.out" &&
	grep -q "console viewer 'rita' dropped" "$BLOG" &&
	sim_ctl baud sim0 115200 >/dev/null
}
test_expect_success 'a viewer that stops reading is dropped; the board and the others go on' \
	t_slow_viewer

cat >"$TMP/ci.yaml" <<JOB
job_name: a CI boot others watch
device_type: sim-uboot
timeouts: {job: {minutes: 3}, connection: {seconds: 30}}
actions:
$(sim_uboot_boot)
- test:
    interactive:
    - name: wait
      prompts: ['root@sim:~# ']
      script:
      - command: sleep 3
        name: sleep
JOB

# rita attaches before the job is submitted: on a loaded machine the board could
# be past U-Boot before her terminal starts.
t_watch_job() {
	term rita "$(labctl_as rita) console sim-02 --replay 0" &&
	wait_screen rita "attached to 'sim-02' as 'rita', read-only" &&
	id=$(as gitlab submit "$TMP/ci.yaml") &&
	wait_screen rita 'Hit any key to stop autoboot' 30 &&
	wait_screen rita 'root@sim:~#' 30 &&
	literal rita 'reboot' && keys rita Enter &&
	wait_screen rita "read-only: your keys are ignored (reserve 'sim-02' to type on it)" &&
	wait_for "as rita show $id | grep -q complete" 30 &&
	! grep -q 'rita:' "$LAB/state/jobs/$id/labd.log"
}
test_expect_success 'a reader watches a CI job live, and cannot type into it' t_watch_job

# The board's log has what it printed outside jobs (alice's session on
# sim-01); a job's bytes are in the job's log only, the board's log says so.
t_board_log() {
	local blog2=$LAB/state/boards/sim-02 id
	grep -q 'MARK-42' "$LAB/state/boards/sim-01/console.log" &&
	id=$(sed -n "s/.* job \([0-9]*\): the console goes to the job's log\$/\1/p" "$blog2/labd.log") &&
	[ -n "$id" ] && grep -q "job $id: the console is logged here again" "$blog2/labd.log" &&
	grep -q 'Hit any key to stop autoboot' "$LAB/state/jobs/$id/console.log" &&
	! grep -q 'Hit any key to stop autoboot' "$blog2/console.log"
}
test_expect_success "the board's log has its console outside jobs, a job's is in the job's log" t_board_log

t_refused() {
	test_must_fail "$LABCTL_BIN" --url "$LABD_URL" --token nope console sim-01 </dev/null 2>"$TMP/err" &&
	grep -q 'invalid token' "$TMP/err" &&
	test_must_fail as alice console sim-99 </dev/null 2>"$TMP/err" &&
	grep -q "no board 'sim-99'" "$TMP/err" &&
	[ "$(api_as alice GET /devices/sim-01/console)" = 426 ] &&
	grep -q "Upgrade: labd-console" "$TMP/body"
}
test_expect_success 'refusals: a wrong token, an unknown board, a plain GET (426)' t_refused

t_labd_stops() {
	term carol "$(labctl_as carol) console sim-01 --replay 0" &&
	wait_screen carol "attached to 'sim-01' as 'carol'" &&
	labd_stop &&
	wait_screen carol 'connection closed by labd' &&
	wait_screen carol TERMINAL-DONE &&
	[ "$(cat "$TMP/carol.rc")" = 1 ] &&
	! grep -qw -- -icanon "$TMP/carol.stty"
}
test_expect_success 'labd stopping closes the consoles; labctl says so and exits 1' t_labd_stops

test_done
