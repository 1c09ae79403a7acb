#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Live rule changes racing re-applies on one device: every command takes
# the device's one lock, so none is lost.
#
#   H                                R
#   h0 ----------------------------- r0    qosctl: pip-20pct, re-applied
#   10.7.0.2/24            10.7.0.1/24            as pip-5pct and back
#   2001:db8:7::2/64  2001:db8:7::1/64
#   default via r0                         (no forwarding: packets to the
#                                          rules' prefixes end in R,
#                                          after its ingress program)
#
# Each round, on a fresh pip-20pct: 8 `qosctl rule add` (rule i: dst
# 2001:db8:10i::/48 for even i, 10.10i.0.0/16 for odd i, class pip) and 3
# applies (pip-5pct, pip-20pct, pip-5pct: both have class pip) start at
# once. All exit 0; then `qosctl rule list -j` holds exactly the 8 live
# rules with 8 distinct ids and their matches, and one UDP datagram from
# H to an address of each prefix is counted by its rule, once, and in
# class pip. 5 rounds.
#
# Then an apply that rolls back a killed one (QOSCTL_FAULT) holds the lock
# until it ends: stopped in its own install (QOSCTL_PAUSE), a second apply
# waits for it, blocked in flock on the same file (/proc/locks); both end
# with exit 0 and the second's profile applied. Until this tree, the
# rollback to no profile unlinked the lock file while the command went on,
# and the second apply locked a new file and ran beside it.
#
# First, 20 removes each racing show, stats and stats --prometheus in
# loops: none may leave clsact behind (readers_race_remove).
#
# Before the redesign rule add and del locked the pin directory while
# apply locked /run/qosctl/NAME.lock: an apply that read the live rules
# before a rule add committed and wrote its rule set after dropped that
# rule, so rounds ended with fewer than 8 rules (or an apply failed on a
# rule set switched under it).

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq tc python3 nsenter
require_qosctl

ROUNDS=5
NRULES=8
tmp_setup

# prefix I: the destination of rule I; addr I: an address in it.
prefix()
{
	if [ $(($1 % 2)) -eq 0 ]; then echo "2001:db8:10$1::/48"; else echo "10.10$1.0.0/16"; fi
}

addr()
{
	if [ $(($1 % 2)) -eq 0 ]; then echo "2001:db8:10$1::1"; else echo "10.10$1.0.1"; fi
}

setup()
{
	local mac hmac

	setup_ns H R || return 1
	defer_state "$H" "$R" || return 1
	ip -n "$R" link add r0 type veth peer name h0 netns "$H" || return 1
	ip -n "$R" addr add 10.7.0.1/24 dev r0
	ip -n "$R" addr add 2001:db8:7::1/64 dev r0 nodad
	ip -n "$H" addr add 10.7.0.2/24 dev h0
	ip -n "$H" addr add 2001:db8:7::2/64 dev h0 nodad
	ip -n "$R" link set r0 up && ip -n "$H" link set h0 up || return 1
	ip -n "$H" route add default via 10.7.0.1
	ip -n "$H" -6 route add default via 2001:db8:7::1
	mac=$(ip -n "$R" -j link show dev r0 | jq -r '.[0].address')
	ip -n "$H" neigh replace 10.7.0.1 lladdr "$mac" dev h0 nud permanent
	ip -n "$H" -6 neigh replace 2001:db8:7::1 lladdr "$mac" dev h0 nud permanent
}

# send_all: one UDP datagram from H to an address of each rule's prefix.
send_all()
{
	local dsts=() i

	for ((i = 1; i <= NRULES; i++)); do
		dsts+=("$(addr $i)")
	done
	in_ns "$H" python3 -c '
import socket, sys
for d in sys.argv[1:]:
    fam = socket.AF_INET6 if ":" in d else socket.AF_INET
    socket.socket(fam, socket.SOCK_DGRAM).sendto(b"state_concurrency", (d, 9))
' "${dsts[@]}"
}

pip_in()
{
	qosctl_ns "$R" stats dev r0 -j |
		jq -r --arg f "$1" '.classes[] | select(.name == "pip") | .ingress[$f].packets'
}

# round N
round()
{
	local n=$1 i p out pids=() what=() rc fails=0 list want got v4 v6 v4b v6b

	qosctl_ns "$R" remove dev r0 >/dev/null 2>&1
	out=$(qosctl_ns "$R" apply pip-20pct dev r0 rate 100mbit 2>&1)
	check_err $? "round $n: apply: $out"

	for ((i = 1; i <= NRULES; i++)); do
		qosctl_ns "$R" rule add dev r0 name "r$i" dst "$(prefix $i)" class pip \
			>"$TMP/out$i" 2>&1 &
		pids+=($!) what+=("rule add r$i")
		if [ $i -le 3 ]; then
			p=pip-5pct
			[ $i -eq 2 ] && p=pip-20pct
			qosctl_ns "$R" apply $p dev r0 rate 100mbit >"$TMP/apply$i" 2>&1 &
			pids+=($!) what+=("apply $p ($i)")
		fi
	done
	for ((i = 0; i < ${#pids[@]}; i++)); do
		wait "${pids[i]}"
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "# round $n: ${what[i]} exited $rc: $(cat "$TMP"/out* "$TMP"/apply* | sort -u)"
			fails=1
		fi
	done
	check_err $fails "round $n: a racing command failed"

	list=$(qosctl_ns "$R" rule list dev r0 -j)
	check_err $? "round $n: rule list failed"
	got=$(jq -c '[.[] | select(.origin == "live")] | sort_by(.name) | map({name, dst, class})' <<<"$list")
	want=$(for ((i = 1; i <= NRULES; i++)); do
		jq -nc --arg n "r$i" --arg d "$(prefix $i)" '{name: $n, dst: $d, class: "pip"}'
	done | jq -sc 'sort_by(.name)')
	[ "$got" = "$want" ]
	check_err $? "round $n: live rules $got"
	[ "$(jq '[.[].id] | unique | length' <<<"$list")" -eq "$(jq length <<<"$list")" ] &&
		[ "$(jq length <<<"$list")" -eq $NRULES ]
	check_err $? "round $n: $(jq length <<<"$list") rules, ids $(jq -c '[.[].id]' <<<"$list")"
	log_test "round $n: $NRULES rule adds racing 3 applies: all in, distinct ids"

	v4b=$(pip_in ipv4) v6b=$(pip_in ipv6)
	send_all
	check_err $? "round $n: sending failed"
	list=$(qosctl_ns "$R" rule list dev r0 -j)
	got=$(jq -c '[.[] | select(.origin == "live") | select(.packets != 1) | .name]' <<<"$list")
	[ "$got" = "[]" ]
	check_err $? "round $n: rules without exactly one hit: $got ($(jq -c 'map({name, packets})' <<<"$list"))"
	v4=$(pip_in ipv4) v6=$(pip_in ipv6)
	[ $((v4 - v4b)) -eq $((NRULES / 2)) ] && [ $((v6 - v6b)) -eq $((NRULES / 2)) ]
	check_err $? "round $n: class pip counted $((v4 - v4b)) IPv4 and $((v6 - v6b)) IPv6, want $((NRULES / 2)) each"
	log_test "round $n: one datagram per rule, each counted by its rule in pip"
}

# lock_state PID: "waiting" while PID is blocked in flock (a "->" line of
# /proc/locks), "ended" once it has exited, else "running".
lock_state()
{
	local st

	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
	if [ -z "$st" ] || [ "$st" = Z ]; then
		echo ended
	elif awk -v p="$1" '$2 == "->" && $3 == "FLOCK" && $6 == p { f = 1 } END { exit !f }' \
		/proc/locks; then
		echo waiting
	else
		echo running
	fi
}

recovery()
{
	local P Q i st rc out

	RET=0
	qosctl_ns "$R" remove dev r0 >/dev/null 2>&1
	QOSCTL_FAULT=cfg qosctl_ns "$R" apply pip-20pct dev r0 rate 100mbit >/dev/null 2>&1
	rc=$?
	[ $rc -eq 137 ]
	check_err $? "QOSCTL_FAULT=cfg: apply exited $rc, not by SIGKILL"
	spawn_ns "$R" P env QOSCTL_PAUSE=tree "$QOSCTL" apply pip-5pct dev r0 rate 100mbit
	defer kill -CONT "$P"
	stopped "$P"
	check_err $? "the recovering apply did not stop at tree"
	spawn_ns "$R" Q "$QOSCTL" apply pip-20pct dev r0 rate 100mbit
	for ((i = 0; i < 200; i++)); do
		st=$(lock_state "$Q")
		[ "$st" != running ] && break
		sleep 0.05
	done
	[ "$st" = waiting ]
	check_err $? "the second apply is $st while the first holds the device, not waiting for its lock"
	kill -CONT "$P"
	ended "$P" && ended "$Q"
	check_err $? "the applies did not end"
	reap_pid "$P"
	rc=$?
	[ $rc -eq 0 ]
	check_err $? "the recovering apply exited $rc: $(cat "$TMP/P.log")"
	reap_pid "$Q"
	rc=$?
	[ $rc -eq 0 ]
	check_err $? "the second apply exited $rc: $(cat "$TMP/Q.log")"
	out=$(qosctl_ns "$R" show dev r0 -j | jq -r .profile)
	[ "$out" = pip-20pct ]
	check_err $? "profile after both: $out, not the second's pip-20pct"
	log_test "an apply rolling back a killed one holds the lock: a second waits for it"
}

# Readers racing remove. show, stats and stats --prometheus take no lock,
# and each asks the kernel for qosctl's filters (RTM_GETTFILTER). While a
# filter request is in flight the kernel holds a reference on clsact and
# refuses to delete it ("Current ingress or clsact Qdisc has ongoing
# filter requests", EBUSY: Linux 6.5, and 6.1.y). remove took that for
# "not ours to delete" and left clsact behind: 3 to 7 rounds of 20 with
# show alone, the mechanism behind apply's read-back summary (d1de80c).
# READ_ROUNDS rounds: apply, three readers in a loop, remove; after each,
# no clsact on r0, and remove exited 0.
READ_ROUNDS=20
readers_race_remove()
{
	local i cmd pids left=0 failed=0 out n

	RET=0
	for ((i = 1; i <= READ_ROUNDS; i++)); do
		out=$(qosctl_ns "$R" apply pip-20pct dev r0 rate 100mbit 2>&1)
		check_err $? "round $i: apply: $out"
		touch "$TMP/readers"
		pids=()
		for cmd in show stats "stats --prometheus"; do
			while [ -e "$TMP/readers" ]; do
				qosctl_ns "$R" $cmd dev r0 >/dev/null 2>&1
			done &
			pids+=($!)
		done
		sleep 0.1
		out=$(qosctl_ns "$R" remove dev r0 2>&1) || { failed=$((failed + 1)); echo "# $out"; }
		rm -f "$TMP/readers"
		wait "${pids[@]}"
		n=$(tc -n "$R" -j qdisc show dev r0 | jq '[.[] | select(.kind == "clsact")] | length')
		if [ "$n" -ne 0 ]; then
			left=$((left + 1))
			tc -n "$R" qdisc del dev r0 clsact
		fi
	done
	[ $left -eq 0 ] && [ $failed -eq 0 ]
	check_err $? "clsact left behind by $left of $READ_ROUNDS removes, $failed removes failed"
	log_test "show, stats, stats --prometheus racing remove: no clsact left, $READ_ROUNDS rounds"
}

# ROUNDS rounds of rule adds racing applies.
rule_rounds()
{
	local r

	for ((r = 1; r <= ROUNDS; r++)); do
		round $r
	done
}

setup || { echo "setup failed"; exit $ksft_fail; }
ALL_TESTS="readers_race_remove rule_rounds recovery"
tests_run
qosctl_ns "$R" remove dev r0
exit $EXIT_STATUS
