#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every change is a transaction: a failed apply, a killed apply and an
# unconfirmed apply all leave the device exactly as it was.
#
#   R: st0 ---- st1     profile A, then B over it (both in R, no traffic)
#      st2 ---- st3     nothing applied, then B killed at each step
#
# A is pip-20pct with a profile rule; B adds class nc, drops lbe, changes
# pip's rate, leaf and policer and has another profile rule, so that B
# touches every step: rules, policers, the tree in place, classes pruned.
# B2 is B with a larger rule table: the programs are replaced, not kept.
# A live rule (`qosctl rule add`) sits on A throughout.
#
# "Identical" is: tc -d qdisc and class (no counters), tc filter at
# ingress and egress (program ids included), `qosctl rule list -j` without
# packets and bytes, `qosctl show -j` and the policer lines of
# `qosctl show`.
#
# - QOSCTL_FAIL=STEP apply B|B2 fails at each step and rolls back in
#   process: identical to A, no transaction record left;
# - QOSCTL_FAULT=STEP apply B|B2 is killed after each step; the next
#   `qosctl show` rolls back to A: identical, program ids included unless
#   the killed apply had attached replacement programs (B2 from attach
#   on), whose predecessors died with it;
# - on a device with nothing applied, a kill at each step and the next
#   `qosctl show`: no profile, no filter at qosctl's slot, no clsact, the
#   default root qdisc;
# - apply B --confirm 4 with its keeper killed: after the deadline,
#   `qosctl show` rolls back to A; apply B --confirm 2 with the keeper
#   alive: it rolls back by itself (only tc runs in between).
#
# Before the redesign there was no QOSCTL_FAIL (every "must fail" apply
# succeeded), no step named as here (QOSCTL_FAULT=load and the rest were
# ignored: the apply was not killed), a killed apply was undone only by the
# next apply or remove (show reported "incomplete state" and changed
# nothing), and an unconfirmed apply whose keeper died stayed forever.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq tc python3 ps
require_qosctl

FAIL_STEPS="load rules police tree cfg attach prune"
FAULT_STEPS="record load rules police tree cfg attach prune commit"
PROFILES=$(dirname "$(readlink -f "$0")")/../tc-profiles
DEV=st0
FRESH=st2
# The keeper is killed before its deadline: a margin for a loaded machine.
KILL_CONFIRM=4
ALIVE_CONFIRM=2
# Under emulation one qosctl command takes seconds: the checks between an
# apply and its deadline need the deadline further out.
[ "$KSFT_MACHINE_SLOW" = yes ] && KILL_CONFIRM=20 ALIVE_CONFIRM=15

tmp_setup

make_profiles()
{
	{
		cat "$PROFILES/pip-20pct"
		printf '\n[rule a-rule]\nsrc = 2001:db8:aa::/48\nclass = lbe\n'
	} >"$TMP/A"
	cat >"$TMP/B" <<-EOF
	[profile]
	description = state_rollback.sh: B
	scheduler = htb
	default = be

	[class nc]
	id = 1
	dscp = cs6, cs7
	priority = 0
	rate = 5%
	ceil = 10%
	leaf = pfifo
	limit = 64

	[class pip]
	id = 2
	dscp = 46, 47, 40
	priority = 1
	rate = 10%
	ceil = 10%
	leaf = pfifo
	limit = 32
	police-rate = 10%
	police-burst = auto
	police-exceed = drop

	[class be]
	id = 3
	priority = 2
	rate = 85%
	ceil = 100%
	leaf = auto

	[rule b-rule]
	dst = 10.66.0.0/16
	class = pip
	EOF
	sed -e '/^\[profile\]/a rules = 2048' "$TMP/B" >"$TMP/B2"
}

# tc_state DEV: qdiscs and classes without counters, filters with ids
# (tc_snapshot: a leaf that a rollback re-created, pip's bfifo of A after
# B's pfifo, moves in the list of qdiscs and is the same state).
tc_state()
{
	tc_snapshot "$R" "$1"
}

# qosctl_state DEV: rules without counters, show -j, the policer lines.
qosctl_state()
{
	qosctl_ns "$R" rule list dev "$1" -j | jq -c 'map(del(.packets, .bytes))'
	qosctl_ns "$R" show dev "$1" -j
	qosctl_ns "$R" show dev "$1" | grep -w police
}

# state DEV [noids]: all of it; with noids, program ids replaced by "ID".
state()
{
	if [ "${2:-}" = noids ]; then
		{ tc_state "$1"; qosctl_state "$1"; } |
			sed -E -e 's/(qos_(ingress|egress)):\[[0-9]+\]/\1:[ID]/' \
			       -e 's/ id [0-9]+ name qos_/ id ID name qos_/' \
			       -e 's/("(ingress|egress)"):[0-9]+/\1:0/g' \
			       -e 's/ingress id [0-9]+, egress id [0-9]+/ingress id ID, egress id ID/'
	else
		tc_state "$1"
		qosctl_state "$1"
	fi
}

# same WANT GOT: print the first lines that differ.
same()
{
	[ "$1" = "$2" ] && return 0
	diff <(echo "$1") <(echo "$2") | head -6
	return 1
}

txn_file()
{
	echo "/run/qosctl/$COOKIE-$(ip -n "$R" -j link show dev "$1" | jq -r '.[0].ifindex').txn"
}

setup()
{
	setup_ns R || return 1
	defer_state "$R" || return 1
	COOKIE=$(ns_cookie "$R")
	ip -n "$R" link add $DEV type veth peer name st1 &&
		ip -n "$R" link add $FRESH type veth peer name st3 || return 1
	for i in $DEV st1 $FRESH st3; do
		ip -n "$R" link set $i up
	done
	make_profiles
}

# apply_a: A and the live rule on a clean $DEV; its state in A_IDS and
# A_NOIDS. Nothing to do when the device is exactly as A left it (the
# previous case rolled back well): loading programs is what takes time.
# Not in a $(...) subshell: errors in APPLY_ERR.
apply_a()
{
	[ -n "${A_IDS:-}" ] && [ "$(state $DEV)" = "$A_IDS" ] && return 0
	clean $DEV
	APPLY_ERR=$(qosctl_ns "$R" apply "$TMP/A" dev $DEV rate 100mbit 2>&1) &&
		APPLY_ERR=$(qosctl_ns "$R" rule add dev $DEV name live dst 2001:db8:77::/48 \
			    class pip 2>&1) || { APPLY_ERR="apply A: $APPLY_ERR"; return 1; }
	A_IDS=$(state $DEV)
	A_NOIDS=$(state $DEV noids)
	APPLY_ERR=$(rule_names $DEV)
	[ "$APPLY_ERR" = "a-rule live" ] || { APPLY_ERR="A's rules: $APPLY_ERR"; return 1; }
}

rule_names()
{
	qosctl_ns "$R" rule list dev "$1" -j | jq -r '[.[].name] | sort | join(" ")'
}

# clean DEV: back to the default qdiscs by tc alone, so that one case's
# failure does not carry into the next.
clean()
{
	tc -n "$R" qdisc del dev "$1" root 2>/dev/null
	tc -n "$R" qdisc del dev "$1" clsact 2>/dev/null
	rm -f "$(txn_file "$1")"
}

test_b_works()
{
	local b out

	for b in B B2; do
		apply_a
		check_err $? "$APPLY_ERR"
		out=$(qosctl_ns "$R" apply "$TMP/$b" dev $DEV rate 100mbit 2>&1)
		check_err $? "apply $b: $out"
		out=$(rule_names $DEV)
		[ "$out" = "b-rule live" ]
		check_err $? "rules after $b: '$out'"
		out=$(qosctl_ns "$R" show dev $DEV -j | jq -r '[.classes[].name] | join(" ")')
		[ "$out" = "nc pip be" ]
		check_err $? "classes after $b: '$out'"
	done
	log_test "A then B and B2 apply, keep the live rule, prune lbe"
}

test_fail()
{
	local b step out rc

	for b in B B2; do
		for step in $FAIL_STEPS; do
			apply_a
			check_err $? "$APPLY_ERR"
			out=$(QOSCTL_FAIL=$step qosctl_ns "$R" apply "$TMP/$b" dev $DEV rate 100mbit 2>&1)
			rc=$?
			[ $rc -eq 1 ] && [ "$out" = "qosctl: apply: injected failure at $step" ]
			check_err $? "QOSCTL_FAIL=$step apply $b: exit $rc, '$out'"
			[ ! -e "$(txn_file $DEV)" ]
			check_err $? "$step: transaction record left"
			out=$(same "$A_IDS" "$(state $DEV)")
			check_err $? "$b failed at $step: not A: $out"
			log_test "apply $b failing at $step leaves A identical"
		done
	done
}

test_fault()
{
	local b step out rc want got

	for b in B B2; do
		for step in $FAULT_STEPS; do
			apply_a
			check_err $? "$APPLY_ERR"
			QOSCTL_FAULT=$step qosctl_ns "$R" apply "$TMP/$b" dev $DEV rate 100mbit \
				>/dev/null 2>&1
			rc=$?
			[ $rc -eq 137 ]
			check_err $? "QOSCTL_FAULT=$step apply $b exited $rc, not by SIGKILL"
			[ -e "$(txn_file $DEV)" ]
			check_err $? "$step: no transaction record after the kill"
			out=$(qosctl_ns "$R" show dev $DEV -j 2>&1)
			check_err $? "show after the kill: $out"
			[ "$(jq -r .profile <<<"$out" 2>/dev/null)" = A ]
			check_err $? "show after the kill at $step: $out"
			[ ! -e "$(txn_file $DEV)" ]
			check_err $? "$step: show left the transaction record"
			want=$A_IDS got=$(state $DEV)
			if [ $b = B2 ] && [[ " attach prune commit " == *" $step "* ]]; then
				want=$A_NOIDS got=$(state $DEV noids)
			fi
			out=$(same "$want" "$got")
			check_err $? "$b killed after $step: not A: $out"
			log_test "apply $b killed after $step: show rolls back to A"
		done
	done
}

# is_clean DEV: what qosctl never touched.
is_clean()
{
	local n

	dev_clean "$R" "$1" || return 1
	n=$(tc -n "$R" filter show dev "$1" ingress; tc -n "$R" filter show dev "$1" egress)
	[ -z "$n" ] || { echo "filters left: $n"; return 1; }
}

test_fault_fresh()
{
	local step out rc

	for step in $FAULT_STEPS; do
		clean $FRESH
		out=$(is_clean $FRESH)
		check_err $? "$FRESH before: $out"
		QOSCTL_FAULT=$step qosctl_ns "$R" apply "$TMP/B" dev $FRESH rate 100mbit >/dev/null 2>&1
		rc=$?
		[ $rc -eq 137 ]
		check_err $? "QOSCTL_FAULT=$step exited $rc, not by SIGKILL"
		out=$(qosctl_ns "$R" show dev $FRESH 2>&1)
		rc=$?
		[ $rc -ne 0 ] && [ "$out" = "qosctl: show: dev $FRESH: no qosctl profile applied" ]
		check_err $? "show after the kill at $step: exit $rc, '$out'"
		out=$(is_clean $FRESH)
		check_err $? "killed after $step: $out"
		[ ! -e "$(txn_file $FRESH)" ]
		check_err $? "$step: transaction record left"
		log_test "fresh apply killed after $step: show leaves nothing"
	done
}

# keeper SECONDS: the PID of the confirm keeper in $R (a child of the
# apply, which has exited: its command line is the apply's).
keeper()
{
	local pid

	for pid in $(ip netns pids "$R"); do
		if ps -o args= -p "$pid" | grep -q -- "--confirm $1\$"; then
			echo "$pid"
		fi
	done
}

test_confirm()
{
	local b out pid t0 i

	for b in B B2; do
		apply_a
		check_err $? "$APPLY_ERR"
		t0=$(tc_state $DEV)
		out=$(qosctl_ns "$R" apply "$TMP/$b" dev $DEV rate 100mbit \
		      --confirm $KILL_CONFIRM 2>&1)
		check_err $? "apply $b --confirm $KILL_CONFIRM: $out"
		pid=$(keeper $KILL_CONFIRM)
		[ -n "$pid" ] && [ "$(wc -w <<<"$pid")" -eq 1 ]
		check_err $? "keeper: '$pid'"
		[ -n "$pid" ] && kill -KILL $pid
		[ "$(tc_state $DEV)" != "$t0" ]
		check_err $? "$b not applied when its keeper was killed"
		sleep $((KILL_CONFIRM + 1))
		out=$(qosctl_ns "$R" show dev $DEV -j 2>&1)
		[ "$(jq -r .profile <<<"$out" 2>/dev/null)" = A ]
		check_err $? "show after the deadline: $out"
		[ ! -e "$(txn_file $DEV)" ]
		check_err $? "transaction record left"
		# The keeper held the programs A ran with: killed, they are gone
		# if B2 replaced them.
		if [ $b = B2 ]; then
			out=$(same "$A_NOIDS" "$(state $DEV noids)")
		else
			out=$(same "$A_IDS" "$(state $DEV)")
		fi
		check_err $? "$out"
		log_test "apply $b --confirm $KILL_CONFIRM, keeper killed: show rolls back to A"

		apply_a
		check_err $? "$APPLY_ERR"
		t0=$(tc_state $DEV)
		out=$(qosctl_ns "$R" apply "$TMP/$b" dev $DEV rate 100mbit \
		      --confirm $ALIVE_CONFIRM 2>&1)
		check_err $? "apply $b --confirm $ALIVE_CONFIRM: $out"
		pid=$(keeper $ALIVE_CONFIRM)
		[ "$(tc_state $DEV)" != "$t0" ]
		check_err $? "$b did not change tc"
		sleep $((ALIVE_CONFIRM + 2))
		# A loaded machine may still be running the keeper's rollback.
		for i in $(seq 50); do
			[ -n "$pid" ] && [ -e "/proc/$pid" ] || break
			sleep 0.2
		done
		out=$(same "$t0" "$(tc_state $DEV)")
		check_err $? "tc after the deadline: $out"
		[ ! -e "$(txn_file $DEV)" ]
		check_err $? "transaction record left"
		[ -n "$pid" ] && [ ! -e "/proc/$pid" ]
		check_err $? "keeper '$pid' still there"
		out=$(same "$A_IDS" "$(state $DEV)")
		check_err $? "$out"
		log_test "apply $b --confirm $ALIVE_CONFIRM, keeper alive: rolls back to A by itself"
	done
}

setup || { echo "setup failed"; exit $ksft_fail; }
ALL_TESTS="test_b_works test_fail test_fault test_fault_fresh test_confirm"
tests_run
exit $EXIT_STATUS
