#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# apply --confirm SECONDS (Junos' "commit confirmed") and the interface
# lock:
#
# - unconfirmed over nothing: removed after the timeout;
# - unconfirmed over pip-20pct: pip-20pct is back, classes and programs
#   as before (diffserv4's extra class pruned);
# - confirmed: kept after the timeout, a second confirm finds nothing;
# - a second --confirm while one is pending is refused; a plain apply
#   confirms the pending one;
# - qosctl waits for a holder of the interface's lock, and concurrent
#   applies all succeed and leave a consistent state.
#
#   r: $R_IF2 (veth)

source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq tc flock

topo_h1_r_h2 || exit $ksft_fail
T=2		# confirmation timeout
WAIT=4		# long enough for the rollback to have run
# Under emulation one qosctl command can take longer than T: the checks
# between an apply and its deadline need the deadline further out.
[ "$KSFT_MACHINE_SLOW" = yes ] && T=10 WAIT=14

# A pending rollback's keeper goes when the apply is confirmed.
defer qosctl_ns "$R" confirm dev "$R_IF2"

profile()
{
	qosctl_ns "$R" show dev "$R_IF2" -j 2>/dev/null | jq -r .profile
}

timeout_removes()
{
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit --confirm $T >/dev/null
	check_err $? "apply --confirm failed"
	[ "$(profile)" = pip-20pct ]
	check_err $? "not applied before the timeout"
	sleep $WAIT
	[ -z "$(profile)" ] && [ -z "$(dev_files "$R" "$R_IF2")" ]
	check_err $? "still applied after the timeout: $(profile)"
	[ "$(tc -n "$R" -j qdisc show dev "$R_IF2" root | jq -r '.[0].kind')" = noqueue ]
	check_err $? "root qdisc not restored"
	log_test "unconfirmed apply over nothing is removed on timeout"
}

rollback()
{
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit
	classes_before=$(tc -n "$R" class show dev "$R_IF2" | sort)
	progs_before=$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -c .programs)
	qosctl_ns "$R" apply diffserv4 dev "$R_IF2" rate 100mbit --confirm $T >/dev/null
	check_err $? "apply --confirm failed"
	[ "$(profile)" = diffserv4 ]
	check_err $? "diffserv4 not applied"
	out=$(qosctl_ns "$R" apply cbq-like dev "$R_IF2" rate 100mbit --confirm $T 2>&1)
	check_fail $? "a second --confirm was accepted"
	log_test "a second --confirm while one is pending is refused"
	sleep $WAIT
	[ "$(profile)" = pip-20pct ]
	check_err $? "profile after the timeout: $(profile)"
	[ "$(tc -n "$R" class show dev "$R_IF2" | sort)" = "$classes_before" ]
	check_err $? "classes differ from before"
	[ "$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -c .programs)" = "$progs_before" ]
	check_err $? "not the programs that ran before"
	log_test "unconfirmed apply over pip-20pct rolls back to it, programs and classes"
}

confirmed_kept()
{
	qosctl_ns "$R" apply tbf-shaper dev "$R_IF2" rate 100mbit --confirm $T >/dev/null
	qosctl_ns "$R" confirm dev "$R_IF2" >/dev/null
	check_err $? "confirm failed"
	sleep $WAIT
	[ "$(profile)" = tbf-shaper ]
	check_err $? "profile after the timeout: $(profile)"
	qosctl_ns "$R" confirm dev "$R_IF2" 2>/dev/null
	check_fail $? "a second confirm succeeded"
	log_test "confirmed apply is kept after the timeout"
}

plain_apply_confirms()
{
	qosctl_ns "$R" apply pip-5pct dev "$R_IF2" rate 100mbit --confirm $T >/dev/null
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit
	sleep $WAIT
	[ "$(profile)" = pip-20pct ]
	check_err $? "profile after the timeout: $(profile)"
	log_test "a plain apply confirms a pending one"
}

lock_wait()
{
	# A holder of the lock delays qosctl until it lets go.
	lock=$(lock_file "$R" "$R_IF2")
	flock "$lock" sleep 2 &
	holder=$!
	defer kill $holder
	sleep 0.3
	start=$(date +%s%N)
	qosctl_ns "$R" apply pip-5pct dev "$R_IF2" rate 100mbit
	check_err $? "apply failed"
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ $ms -ge 1400 ]
	check_err $? "apply did not wait for the lock (${ms}ms)"
	log_test "apply waits for the interface lock (${ms}ms)"
}

concurrent()
{
	pids=()
	for i in 1 2 3 4 5 6; do
		p=pip-20pct
		[ $((i % 2)) -eq 0 ] && p=pip-5pct
		[ $((i % 3)) -eq 0 ] && p=diffserv4
		qosctl_ns "$R" apply $p dev "$R_IF2" rate 100mbit &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid"
		check_err $? "a concurrent apply failed"
	done
	p=$(profile)
	want=$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -r '.classes[].classid' | sort | tr '\n' ' ')
	got=$(tc_classes "$R" "$R_IF2" | grep -vx 1:1 | sort | tr '\n' ' ')
	[ "$want" = "$got" ]
	check_err $? "state says $p with classes $want, the kernel has $got"
	log_test "concurrent applies are serialized (last: $p)"
}

ALL_TESTS="timeout_removes rollback confirmed_kept plain_apply_confirms lock_wait concurrent"
tests_run
qosctl_ns "$R" remove dev "$R_IF2"
exit $EXIT_STATUS
