#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t7000-backend-http.sh -- the http results backend against a real receiver on
# loopback: batching, order and sequence numbers, byte-exact logs, exactly-once
# delivery after an outage (500s, then the receiver gone), after a SIGKILL of
# labd with a non-empty spool, a full spool, and 4xx answers reported, not retried.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/backend-lib.sh"

sim_lab 1
sim_ctl mode all no-autoboot >/dev/null	# booting is not what this tests: no 2 s countdown
recorder_start rec
recorder_start tiny
cp "$LAB/labd.conf" "$TMP/base.conf"
cat >>"$LAB/labd.conf" <<CONF
backends = (
	{ type = "http"; url = "http://127.0.0.1:$REC_PORT/ingest"; token = "s3cret";
	  batch_bytes = 4096; batch_ms = 200; retry_max_ms = 1000; max_in_flight = 2; },
	{ type = "http"; name = "tiny"; url = "http://127.0.0.1:${REC_PORT_tiny}/ingest";
	  token = "t1ny"; spool_max = 65536; batch_ms = 100; retry_max_ms = 1000; }
);
CONF
SPEW=3000 sim_job "$TMP/job.yaml"
SPEW=40000 sim_job "$TMP/big.yaml"	# random bytes: several times the tiny spool once encoded

test_expect_success 'labd check-config accepts the backends' '
	"$LABD" check-config -c "$LAB/labd.conf"
'

test_expect_success 'bad backend settings are file:line errors' '
	cp "$TMP/base.conf" "$LAB/bad.conf" &&
	cat >>"$LAB/bad.conf" <<-CONF &&
	backends = ( { type = "http"; url = "ftp://x"; batch_ms = "soon"; colour = 1;
		       retry_max_ms = 5; max_in_flight = 0; },
		     { type = "carrier-pigeon"; } );
	CONF
	test_must_fail "$LABD" check-config -c "$LAB/bad.conf" 2>"$TMP/bad.err" &&
	cat "$TMP/bad.err" &&
	grep -q "bad.conf:[0-9]*: .url. must be an http:// or https:// URL" "$TMP/bad.err" &&
	grep -q "bad.conf:[0-9]*: unknown key .colour." "$TMP/bad.err" &&
	grep -q "bad.conf:[0-9]*: .batch_ms. must be" "$TMP/bad.err" &&
	grep -q "bad.conf:[0-9]*: .retry_max_ms. must be between 100 and 3600000, not 5" \
		"$TMP/bad.err" &&
	grep -q "bad.conf:[0-9]*: .max_in_flight. must be between 1 and 64, not 0" "$TMP/bad.err" &&
	grep -q "bad.conf:[0-9]*: unknown backend type .carrier-pigeon." "$TMP/bad.err"
'

labd_start

test_expect_success 'a job streams: batches of several items, in order, byte-exact' '
	id=$(submit "$TMP/job.yaml") &&
	wait_job $id && wait_delivered rec $id &&
	$PY "$STREAM_CHECK" "$TMP/rec.jsonl" "$LAB/state" --min-items 3 --max-bytes 40000 \
		--no-duplicates &&
	grep -q "\"Authorization\": \"Bearer s3cret\"" "$TMP/rec.jsonl" &&
	grep -q "base64" "$TMP/rec.jsonl"
'

test_expect_success 'receiver answering 500: retried with backoff, then exactly once' '
	recorder_mode rec 500 &&
	id=$(submit "$TMP/job.yaml") &&
	wait_job $id &&
	[ "$(count_requests rec 500)" -ge 2 ] &&
	! delivered rec $id &&
	grep -q "backend .http.: delivery to .* failed (1 in a row): HTTP status 500" "$LAB/labd.log" &&
	recorder_mode rec ok &&
	wait_delivered rec $id 60 &&
	$PY "$STREAM_CHECK" "$TMP/rec.jsonl" "$LAB/state" --no-duplicates
'

# The receiver goes away for a job and comes back (outside the tests: a
# test body runs in a subshell, and the recorder must outlive it).
recorder_stop rec
id=$(submit "$TMP/job.yaml")
wait_job $id
sleep 1
recorder_start rec
test_expect_success 'receiver stopped, then restarted: everything arrives exactly once' '
	wait_delivered rec $id 60 &&
	$PY "$STREAM_CHECK" "$TMP/rec.jsonl" "$LAB/state" --no-duplicates
'

# SIGKILL labd in the middle of a job while the receiver is down.
recorder_stop rec
SLEEP=3 sim_job "$TMP/slow.yaml"
id=$(submit "$TMP/slow.yaml")
wait_for "grep -q 'input L[0-9]* sleep 3' '$LAB/state/jobs/$id/labd.log'" 60
kill -9 $LABD_PID
wait $LABD_PID 2>/dev/null
segs=$(find "$LAB/state/spool/http" -name "*.seg" -size +0 | wc -l)
labd_start
wait_job $id 120
recorder_start rec
test_expect_success 'SIGKILL of labd with a non-empty spool, restart, receiver back: all delivered' '
	[ "$segs" -gt 0 ] &&
	wait_delivered rec $id 60 &&
	$PY "$STREAM_CHECK" "$TMP/rec.jsonl" "$LAB/state" --no-duplicates &&
	curl -sf "$LABD_URL/api/v1/jobs/$id" | grep -q "\"recovered\":true"
'

recorder_stop tiny
id=$(submit "$TMP/big.yaml")
wait_job $id
full_logged=$(grep -c "backend .tiny.: job $id: spool .*tiny. is full" "$LAB/labd.log")
spool_bytes=$(du -sb "$LAB/state/spool/tiny" | cut -f1)
recorder_start tiny
# tiny was up when labd was SIGKILLed: a batch it got whose answer labd had not
# yet kept comes again, identical (allowed); the big job's items come once.
test_expect_success 'a full spool is reported, holds data in the store, then catches up' '
	[ "$full_logged" -ge 1 ] &&
	curl -sf "$LABD_URL/api/v1/jobs/$id/events" | grep -q "backend-error" &&
	[ "$spool_bytes" -lt 80000 ] &&
	wait_delivered tiny $id 90 &&
	$PY "$STREAM_CHECK" "$TMP/tiny.jsonl" "$LAB/state" --max-item-bytes 16000 &&
	$PY "$STREAM_CHECK" "$TMP/tiny.jsonl" "$LAB/state" --job $id --no-duplicates &&
	grep -q "backend .tiny.: spool has room again" "$LAB/labd.log" &&
	wait_for "grep -q \"backend .tiny.: caught up\" \"$LAB/labd.log\"" 10 &&
	[ "$(grep -c "backend .tiny.: job $id: spool .* is full" "$LAB/labd.log")" = 1 ]
'

wait_delivered rec $id 60
recorder_mode rec 404
id=$(submit "$TMP/job.yaml")
wait_job $id
test_expect_success '4xx answers: reported with the body as a job event, never resent' '
	wait_for "curl -sf $LABD_URL/api/v1/jobs/$id/events | grep -q \"no such stream\"" 30 &&
	grep -q "backend .http.: job $id: receiver refused .* with HTTP 404: {\"error\": \"no such stream\"}" \
		"$LAB/labd.log" &&
	refused_once rec
'

recorder_mode rec ok
id=$(submit "$TMP/job.yaml")
wait_job $id
test_expect_success 'after refusals, the next jobs stream again' '
	wait_delivered rec $id &&
	$PY "$STREAM_CHECK" "$TMP/rec.jsonl" "$LAB/state" --job $id --no-duplicates &&
	refused_once rec
'

test_expect_success 'the console never waited for the receiver' '
	! grep -q "console.*overrun\|dropped console" "$LAB/labd.log"
'

test_done
