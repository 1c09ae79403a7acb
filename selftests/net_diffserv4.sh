#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# diffserv4 protects network control: a routing-protocol-like flow (small
# CS6 packets, 100 per second, IPv4 and IPv6) crosses a 10 Mbit/s link
# that a best-effort UDP flood of 40 Mbit/s saturates, and loses nothing,
# while best effort visibly drops (the control: the flood really
# congests). GRNET saw IPv6 BGP sessions break in exactly this situation.
#
#   h1 ------------ r ------------------ h2
#      CS6 pings    $R_IF2: diffserv4     iperf3 -s
#      UDP flood    rate 10mbit

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ping iperf3 jq

topo_h1_r_h2 || exit $ksft_fail
# The pins outlive the namespace: remove what was applied.
tmp_setup
tmp=$TMP
COUNT=400

for dev in "$R_IF1" "$R_IF2"; do
	qosctl_ns "$R" apply diffserv4 dev "$dev" rate 10mbit || exit $ksft_fail
done

# CS6 pings through a BE flood: all answered, nc never drops.
cs6_under_flood()
{
	local p4 p6 fam stats be_drops nc_drops nc_pkts

	# bg_ns kills the shell that started iperf3: kill by PID whatever still
	# runs in our own namespaces instead.
	defer 'ip netns pids "$H1" | xargs -r kill'
	defer 'ip netns pids "$H2" | xargs -r kill'
	in_ns "$H2" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	sleep 0.5
	in_ns "$H1" iperf3 -c "$H2_V4" -p 5201 -u -b 40M -l 1200 -t 8 -J --logfile "$tmp/iperf" &
	sleep 1

	# CS6 = DSCP 48, TOS byte 0xc0; 64-byte payloads like BGP keepalives.
	in_ns "$H1" ping -4 -q -n -Q 0xc0 -s 56 -i 0.01 -c $COUNT -W 1 "$H2_V4" >"$tmp/v4" 2>&1 &
	p4=$!
	in_ns "$H1" ping -6 -q -n -Q 0xc0 -s 56 -i 0.01 -c $COUNT -W 1 "$H2_V6" >"$tmp/v6" 2>&1 &
	p6=$!
	defer kill $p4 $p6
	wait $p4 $p6

	for fam in v4 v6; do
		pings_answered "$tmp/$fam" $COUNT
		check_err $? "$(cat "$tmp/$fam")"
		log_test "$fam: CS6 flow under a BE flood: $PING_RX/$PING_TX answered"
	done

	stats=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
	be_drops=$(jq '.classes[] | select(.name == "be") | .qdisc.drops' <<<"$stats")
	nc_drops=$(jq '.classes[] | select(.name == "nc") | .qdisc.drops' <<<"$stats")
	nc_pkts=$(jq '.classes[] | select(.name == "nc") | .egress.ipv4.packets + .egress.ipv6.packets' <<<"$stats")
	# The premise, not the claim: an emulated guest may not push 40 Mbit/s.
	[ "${be_drops:-0}" -gt 0 ]
	xfail_on_slow check_err $? "best effort dropped nothing: the link was not congested"
	[ "${nc_drops:-1}" -eq 0 ] && [ "${nc_pkts:-0}" -ge $((2 * COUNT)) ]
	check_err $? "nc: $nc_pkts packets, $nc_drops dropped"
	log_test "flood congested BE ($be_drops drops), nc queued $nc_pkts, dropped ${nc_drops}"
}

ALL_TESTS="cs6_under_flood"
tests_run
exit $EXIT_STATUS
