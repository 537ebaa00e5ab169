#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t5000-reserve.sh -- reservations: holding a board, waiting in the queue with a position
# (in order with the jobs), release, expiry (the board powered off and freed), renewal,
# Ctrl-C while waiting, and restarts of labd with active, waiting and expired reservations.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session-lib.sh"

ART=$TOP/contrib/lab/artifacts
sim_lab 2
add_users
labd_start

# res_field ID FIELD: a field of GET /reservations/ID.
res_field() {
	curl -s "$LABD_URL/api/v1/reservations/$1" |
		$PY -c "import json, sys; v = json.load(sys.stdin)$2; print('' if v is None else v)"
}

powered() { sim_ctl status "sim$1" | grep -q "power=$2"; }

# on_failure CMD: CMD runs if the case's body fails (its EXIT trap; the last
# registered first), so that a case failing half-way leaves no client waiting
# in the queue and no board held to the cases after it.
undo=()
on_failure() {
	undo=("$1" "${undo[@]}")
	trap 'undo_case $?' EXIT
}
undo_case() {
	local c
	[ "$1" = 0 ] && return
	for c in "${undo[@]}"; do eval "$c" >/dev/null 2>&1 || true; done
}

# reserve_bg USER OUT ARGS...: `labctl reserve ARGS` as USER in the background,
# labctl itself (not a subshell, which ignores Ctrl-C), its output in OUT; its
# pid in $!.  OUT is emptied here, before the fork: the background process
# empties it only once it runs, and until then a wait_for reads an earlier
# case's output (t_compete's carol.out has "position 2 in the queue" too).
reserve_bg() {
	local who=$1 out=$2; shift 2
	: >"$out"
	"$LABCTL_BIN" --url "$LABD_URL" --token "$(token_of "$who")" reserve "$@" >>"$out" 2>&1 &
	on_failure "stop_waiting $who $!"
}

# stop_waiting USER PID: USER's labctl reserve PID gives up if it still runs:
# Ctrl-C (labctl takes its reservation out of the queue); killed if it still
# runs 10 s later, and USER's waiting reservations canceled.
stop_waiting() {
	local who=$1 pid=$2 id
	kill -INT "$pid" 2>/dev/null || return 0
	wait_for "! kill -0 $pid" 10 && return 0
	kill -KILL "$pid"
	for id in $(curl -s "$LABD_URL/api/v1/reservations" | $PY -c "import json, sys
print(*(r['id'] for r in json.load(sys.stdin) if r['state'] == 'waiting' and r['holder'] == '$who'))"); do
		api_as "$who" POST "/reservations/$id/cancel"
	done
}

t_hold() {
	[ "$(as alice whoami)" = "alice (developer)" ] && [ "$(as boss whoami)" = "boss (admin)" ] &&
	as alice reserve sim-01 --for 1h >"$TMP/out" &&
	grep -q '^sim-01 reserved until .* UTC (reservation 1)$' "$TMP/out" &&
	as rita devices >"$TMP/out" &&
	grep -q '^sim-01 *sim-uboot *reserved *- *alice *20[0-9-]* [0-9:]* *up' "$TMP/out" &&
	grep -q '^sim-02 *sim-uboot *idle *- *- *- *up' "$TMP/out" &&
	[ "$(board_field sim-01 '["reservation"]')" = 1 ] &&
	test_must_fail as alice reserve sim-01 2>"$TMP/err" &&
	grep -q "'alice' already holds 'sim-01' until" "$TMP/err"
}
test_expect_success 'labctl whoami; reserve a board: held; labctl devices shows who holds it until when' \
	t_hold

t_compete() {
	on_failure "as boss release sim-01" &&
	reserve_bg bob "$TMP/bob.out" sim-01 --for 1h && bob=$! &&
	wait_for 'grep -q "position 1 in the queue" "$TMP/bob.out"' 10 &&
	grep -q "^waiting for board 'sim-01': position 1 in the queue$" "$TMP/bob.out" &&
	reserve_bg carol "$TMP/carol.out" sim-01 --for 1h && carol=$! &&
	wait_for 'grep -q "position 2 in the queue" "$TMP/carol.out"' 10 &&
	as alice release sim-01 >"$TMP/out" &&
	grep -q '^sim-01 released' "$TMP/out" &&
	wait "$bob" &&
	grep -q '^sim-01 reserved until' "$TMP/bob.out" &&
	[ "$(board_field sim-01 '["holder"]')" = bob ] &&
	wait_for 'grep -q "position 1 in the queue" "$TMP/carol.out"' 10 &&
	as bob release sim-01 >/dev/null &&
	wait "$carol" &&
	grep -q '^sim-01 reserved until' "$TMP/carol.out" &&
	as carol release sim-01 >/dev/null &&
	wait_for '[ "$(board_field sim-01 "[\"state\"]")" = idle ]' 10
}
test_expect_success 'two users want one board: the second waits with its position, gets it' \
	t_compete

cat >"$TMP/job.yaml" <<JOB
job_name: a job in the queue with reservations
device_type: sim-uboot
timeouts: {job: {minutes: 3}, connection: {seconds: 30}}
actions:
$(sim_minimal_boot)
JOB

t_queue_order() {
	on_failure "as boss release sim-01" && on_failure "as boss release sim-02" &&
	as alice reserve sim-01 >/dev/null && as bob reserve sim-02 >/dev/null &&
	id=$(as gitlab submit "$TMP/job.yaml") && on_failure "as boss cancel $id" &&
	sleep 0.5 && as rita show "$id" | grep -q 'queued' &&
	reserve_bg carol "$TMP/carol.out" --type sim-uboot --tags sim && carol=$! &&
	wait_for 'grep -q "position 2 in the queue" "$TMP/carol.out"' 10 &&
	grep -q "^waiting for a 'sim-uboot' board: position 2 in the queue$" "$TMP/carol.out" &&
	as rita reservations >"$TMP/out" &&
	grep -q '^[0-9]* *waiting *carol *any sim-uboot *position 2$' "$TMP/out" &&
	as alice release sim-01 >/dev/null &&
	wait_for "as rita show $id | grep -q sim-01" 10 &&
	wait_for 'grep -q "position 1 in the queue" "$TMP/carol.out"' 10 &&
	as bob release sim-02 >/dev/null &&
	wait "$carol" &&
	grep -q '^sim-02 reserved until' "$TMP/carol.out" &&
	as carol release sim-02 >/dev/null &&
	wait_for "as rita show $id | grep -q complete" 60
}
test_expect_success 'reservations wait in the queue with jobs, in submission order' t_queue_order

# What waits is shown: labctl queue counts the waiting reservation beside the
# queued job, and submit --follow says where the job stands and for what, again
# when that changes, until it runs.
t_what_waits() {
	on_failure "as boss release sim-01" && on_failure "as boss release sim-02" &&
	as alice reserve sim-01 >/dev/null && as bob reserve sim-02 >/dev/null &&
	{ as gitlab submit --follow "$TMP/job.yaml" >"$TMP/follow.out" 2>"$TMP/follow.err" &
	  follower=$!; } &&
	wait_for 'grep -q "queued: position" "$TMP/follow.err"' 10 &&
	id=$(sed -n "s/^labctl: job \([0-9]*\) queued: .*/\1/p" "$TMP/follow.err" | head -1) &&
	on_failure "as boss cancel $id" &&
	grep -q "^labctl: job $id queued: position 1 in the 'sim-uboot' queue; sim-01 is held by alice, sim-02 is held by bob$" "$TMP/follow.err" &&
	reserve_bg carol "$TMP/carol.out" --type sim-uboot && carol=$! &&
	wait_for 'grep -q "position 2 in the queue" "$TMP/carol.out"' 10 &&
	as rita queue >"$TMP/out" && cat "$TMP/out" &&
	grep -q "^DEVICE TYPE *QUEUED *RESERVATIONS *OLDEST WAIT" "$TMP/out" &&
	grep -q "^sim-uboot *1 *1 " "$TMP/out" &&
	[ "$(grep -c '^sim-' "$TMP/out")" = 1 ] &&
	as boss device set-state sim-02 maintenance --reason "new cable" >/dev/null &&
	wait_for 'grep -q "sim-02 is in maintenance (new cable (set by boss))" "$TMP/follow.err"' 10 &&
	as alice release sim-01 >/dev/null &&
	wait "$follower" &&
	grep -q "^job $id: complete" "$TMP/follow.out" &&
	[ "$(grep -c "queued: position" "$TMP/follow.err")" = 2 ] &&
	as boss device set-state sim-02 idle >/dev/null &&
	as bob release sim-02 >/dev/null && wait "$carol" &&
	as carol release "$(sed -n 's/^\(sim-0[12]\) reserved until.*/\1/p' "$TMP/carol.out")" >/dev/null
}
test_expect_success 'labctl queue counts waiting reservations; submit --follow says what the job waits for' \
	t_what_waits

t_no_job_on_held() {
	wait_for '[ "$(board_field sim-02 "[\"state\"]")" = idle ]' 10 &&
	as boss device set-state sim-02 maintenance --reason t5000 >/dev/null &&
	as alice reserve sim-01 >/dev/null &&
	id=$(as gitlab submit "$TMP/job.yaml") &&
	sleep 2 && as rita show "$id" | grep -q queued &&
	as alice release sim-01 >/dev/null &&
	wait_for "as rita show $id | grep -q complete" 60 &&
	as boss device set-state sim-02 idle >/dev/null
}
test_expect_success 'the scheduler gives a held board no job until it is released' t_no_job_on_held

t_tags() {
	test_must_fail as alice reserve --type sim-uboot --tags sim,nope 2>"$TMP/err" &&
	grep -q "no board of type 'sim-uboot' with these tags" "$TMP/err" &&
	test_must_fail as alice reserve sim-99 2>"$TMP/err" && grep -q "no board 'sim-99'" "$TMP/err" &&
	test_must_fail as alice reserve --type nope 2>"$TMP/err" &&
	grep -q "no device type 'nope' in this lab" "$TMP/err" &&
	test_must_fail as alice reserve sim-01 --for 9999d 2>"$TMP/err" &&
	test_must_fail as alice reserve sim-01 --for soon 2>"$TMP/err" && grep -q "invalid duration" "$TMP/err"
}
test_expect_success 'refusals: tags no board has, unknown board or type, bad durations' t_tags

t_expiry() {
	wait_for '[ "$(board_field sim-01 "[\"state\"]")" = idle ]' 10 &&
	as alice reserve sim-01 --for 3s >"$TMP/out" &&
	id=$(sed -n 's/.*(reservation \([0-9]*\))$/\1/p' "$TMP/out") &&
	as alice power sim-01 on >/dev/null && powered 0 on &&
	wait_for "[ \"\$(res_field $id '[\"state\"]')\" = ended ]" 10 &&
	[ "$(res_field "$id" '["end_reason"]')" = expired ] &&
	wait_for 'powered 0 off' 10 &&
	wait_for '[ "$(board_field sim-01 "[\"state\"]")" = idle ]' 10 &&
	[ -z "$(board_field sim-01 '["holder"]')" ] &&
	grep -q "reservation $id of 'sim-01' by 'alice' ended: expired" "$LAB/labd.log"
}
test_expect_success 'expiry powers the board off and frees it' t_expiry

t_renew() {
	as alice reserve sim-01 --for 3s >/dev/null &&
	until1=$(board_field sim-01 '["hold_until"]') &&
	as alice reserve sim-01 --renew --for 1h >"$TMP/out" &&
	grep -q '^sim-01 reserved until' "$TMP/out" &&
	sleep 4 &&
	[ "$(board_field sim-01 '["holder"]')" = alice ] &&
	[ "$(board_field sim-01 '["hold_until"]')" != "$until1" ] &&
	test_must_fail as bob reserve sim-01 --renew 2>"$TMP/err" &&
	grep -q "user 'bob' (developer) may not renew the reservation of board 'sim-01': 'alice' holds it" "$TMP/err"
}
test_expect_success 'renew moves the end; only the holder renews' t_renew

t_interrupt() {
	# reserve_bg: labctl itself, which the signal must reach
	reserve_bg bob "$TMP/bob.out" sim-01 && bob=$! &&
	wait_for 'grep -q "position 1" "$TMP/bob.out"' 10 &&
	kill -INT "$bob" &&
	test_expect_code 130 wait "$bob" &&
	grep -q 'canceled' "$TMP/bob.out" &&
	as rita reservations --all >"$TMP/out" &&
	grep -q '^[0-9]* *ended *bob *sim-01 *canceled by bob$' "$TMP/out"
}
test_expect_success 'Ctrl-C while waiting takes the reservation out of the queue' t_interrupt

t_restart() {
	as bob reserve sim-01 --no-wait >"$TMP/bob.out" &&
	grep -q "position 1 in the queue" "$TMP/bob.out" &&
	alice_id=$(board_field sim-01 '["reservation"]') &&
	labd_kill && labd_restart &&
	[ "$(board_field sim-01 '["holder"]')" = alice ] &&
	[ "$(board_field sim-01 '["state"]')" = reserved ] &&
	[ "$(res_field "$alice_id" '["state"]')" = active ] &&
	as rita reservations >"$TMP/out" &&
	grep -q '^[0-9]* *waiting *bob *sim-01 *position 1$' "$TMP/out" &&
	grep -q "still holds 'sim-01'" "$LAB/labd.log" &&
	as alice release sim-01 >/dev/null &&
	wait_for '[ "$(board_field sim-01 "[\"holder\"]")" = bob ]' 10 &&
	as bob release sim-01 >/dev/null
}
test_expect_success 'restart: the active reservation holds, the waiting one is still queued' \
	t_restart

# The reservation lasts long enough for the power-on before labd goes (8 s: a
# loaded machine with ASan took over 2 s), and ends while labd is down.
t_expired_while_down() {
	wait_for '[ "$(board_field sim-02 "[\"state\"]")" = idle ]' 10 &&
	as carol reserve sim-02 --for 8s >/dev/null &&
	id=$(board_field sim-02 '["reservation"]') &&
	as carol power sim-02 on >/dev/null && powered 1 on &&
	labd_kill && sleep 9 && labd_restart &&
	wait_for "[ \"\$(res_field $id '[\"end_reason\"]')\" = 'expired while labd was stopped' ]" 10 &&
	wait_for 'powered 1 off' 10 &&
	wait_for '[ "$(board_field sim-02 "[\"state\"]")" = idle ]' 10
}
test_expect_success 'a reservation that expired while labd was down ends at restart' \
	t_expired_while_down

test_done
