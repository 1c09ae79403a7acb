#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Re-applying a changed profile on a live interface loses no PIP packet:
# PIP pings (DSCP 46, every 2 ms, IPv4 and IPv6 side by side) cross the
# router while pip-20pct and pip-5pct replace each other 10 times on both
# of its interfaces (class change in place, programs replaced atomically).
# Each swap also changes the hook set: pip-20pct polices at ingress and
# runs both programs, pip-5pct has nothing to do there and runs the egress
# program alone (checked after every apply).
#
#   h1 ---- r (pip-20pct <-> pip-5pct on $R_IF1 and $R_IF2) ---- h2
#      ping -Q 0xb8 -i 0.002, v4 and v6, to h2

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ping jq

topo_h1_r_h2 || exit $ksft_fail
# The pins outlive the namespace: remove what was applied.
tmp_setup
tmp=$TMP
COUNT=3000

for dev in "$R_IF1" "$R_IF2"; do
	qosctl_ns "$R" apply pip-20pct dev "$dev" rate 100mbit || exit $ksft_fail
done

# PIP pings while the profiles replace each other; then the counters.
reapply_loop()
{
	local p4 p6 applies i p dev hooks fam pkts

	in_ns "$H1" ping -4 -q -n -Q 0xb8 -i 0.002 -c $COUNT -W 1 "$H2_V4" >"$tmp/v4" 2>&1 &
	p4=$!
	in_ns "$H1" ping -6 -q -n -Q 0xb8 -i 0.002 -c $COUNT -W 1 "$H2_V6" >"$tmp/v6" 2>&1 &
	p6=$!
	defer kill $p4 $p6
	sleep 0.5

	applies=0
	for i in $(seq 10); do
		p=pip-5pct
		[ $((i % 2)) -eq 0 ] && p=pip-20pct
		for dev in "$R_IF2" "$R_IF1"; do
			qosctl_ns "$R" apply $p dev "$dev" rate 100mbit
			check_err $? "apply $p dev $dev failed"
			applies=$((applies + 1))
			hooks=$(slot_prog "$R" "$dev" ingress | tr , " " | wc -w)
			[ "$hooks" -eq $([ $p = pip-20pct ] && echo 1 || echo 0) ]
			check_err $? "$p on $dev: $hooks programs at qosctl's ingress slot"
		done
	done
	wait $p4 $p6

	for fam in v4 v6; do
		pings_answered "$tmp/$fam" $COUNT
		check_err $? "$(cat "$tmp/$fam")"
		log_test "$fam: $applies re-applies, 1 and 2 hooks in turn, under PIP traffic: $PING_RX/$PING_TX PIP pings answered"
	done

	pkts=$(qosctl_ns "$R" stats dev "$R_IF2" -j |
		jq '[.classes[] | select(.name == "pip") | .egress.ipv4.packets, .egress.ipv6.packets] | add')
	[ "${pkts:-0}" -ge $((2 * COUNT)) ]
	check_err $? "egress pip counters saw $pkts packets, want >= $((2 * COUNT))"
	log_test "counters survived the re-applies ($pkts PIP packets at egress)"
}
ALL_TESTS="reapply_loop"
tests_run
exit $EXIT_STATUS
