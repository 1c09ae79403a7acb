#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every drop visible: each shipped profile with a qdisc tree is flooded
# through a router, IPv4 and IPv6 in turn, and the root qdisc's statistics
# in `qosctl stats -j` account for every packet the egress program counted.
#
#   h1                          r                           h2
#   $H1_IF ------------ $R_IF1      $R_IF2 ------------ $H2_IF
#   10.1.1.1/24         10.1.1.2    10.1.2.2            10.1.2.1/24
#   2001:db8:1::1/64    ::2         2001:db8:2::2       2001:db8:2::1/64
#                                   qosctl apply PROFILE
#                                   rate 10mbit
#
#   mausezahn -c $FLOOD: back-to-back 1014-byte UDP frames ---> h2
#
# r's egress toward h2 is the bottleneck; the burst overflows the leaf.
# Per profile and per family, with exact counters (the namespaces are
# quiet: static neighbours, no DAD, no router solicitations):
#
# a. the egress program counted packets of the flooded family (and at
#    most 2 stray control packets), and the root qdisc sent + dropped
#    exactly as many as it counted, and dropped some (so the check can
#    fail);
# b. the profile's classes sent + dropped what the root did;
# c. qosctl's root statistics are the kernel's (`tc -s -j qdisc show`).
#
# PRIO profiles run where sch_prio exists (the 6.1/6.12 VMs), else skip.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

FLOOD=3000
PAYLOAD=972		# 14 + 20 + 8 + 972 = 1014 bytes on the wire for IPv4

require_root
require_cmd jq mausezahn tc

topo_h1_r_h2 || exit $ksft_fail
R_MAC=$(ip -n "$R" -j link show dev "$R_IF1" | jq -r '.[0].address')

# stats_sum JSON: "CLASSIFIED FAM4 FAM6 FAM6IN4 ROOT QUEUES" where
# CLASSIFIED is every packet the egress program counted (classes and
# unparsed), FAMn its per-family part, ROOT the root qdisc's sent +
# dropped and QUEUES the classes' sent + dropped.
stats_sum()
{
	jq -r '[.classes[].egress] as $e
	       | ([$e[].ipv4.packets] | add) as $v4
	       | ([$e[].ipv6.packets] | add) as $v6
	       | ([$e[].ipv6in4.packets] | add) as $v64
	       | ([.unparsed.egress[].packets] | add) as $u
	       | "\($v4 + $v6 + $v64 + $u) \($v4) \($v6) \($v64)
		  \(.qdisc.sent_packets + .qdisc.drops)
		  \([.classes[].qdisc | .sent_packets + .drops] | add)"' | tr -s ' \n\t' ' '
}

# flood FAMILY: FLOOD frames from h1 to h2 as fast as mausezahn sends.
flood()
{
	if [ "$1" = 4 ]; then
		in_ns "$H1" mausezahn "$H1_IF" -q -c $FLOOD -d 0 -b "$R_MAC" \
			-A $H1_V4 -B $H2_V4 -t udp "sp=4000,dp=9" -p $PAYLOAD
	else
		in_ns "$H1" mausezahn -6 "$H1_IF" -q -c $FLOOD -d 0 -b "$R_MAC" \
			-A $H1_V6 -B $H2_V6 -t udp "sp=4000,dp=9" -p $((PAYLOAD - 20))
	fi
}

# drained: the root qdisc holds nothing (polled for up to 10 s).
drained()
{
	local i

	for ((i = 0; i < 100; i++)); do
		[ "$(qosctl_ns "$R" stats dev "$R_IF2" -j |
		     jq '.qdisc.backlog_packets')" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

flood_check()
{
	local p=$1 fam=$2 before after d tc_root q_root i
	local -a b a

	before=$(qosctl_ns "$R" stats dev "$R_IF2" -j | stats_sum)
	flood "$fam" >/dev/null 2>&1
	check_err $? "mausezahn -$fam failed"
	drained
	check_err $? "the root qdisc did not drain"
	# r's own control packets (an MLD report after link up, 130 bytes)
	# may leave between the two readings: read both again until they
	# agree, at most 20 times. A qosctl that reported other statistics
	# than the root's would never agree.
	for ((i = 0; i < 20; i++)); do
		after=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
		tc_root=$(tc -n "$R" -s -j qdisc show dev "$R_IF2" root |
			  jq -r '.[0] | "\(.packets) \(.bytes) \(.drops) \(.overlimits) \(.requeues)"')
		q_root=$(jq -r '.qdisc | "\(.sent_packets) \(.sent_bytes) \(.drops) \(.overlimits) \(.requeues)"' \
			 <<<"$after")
		[ "$tc_root" = "$q_root" ] && break
		sleep 0.1
	done
	read -ra b <<<"$before"
	read -ra a <<<"$(stats_sum <<<"$after")"
	for i in 0 1 2 3 4 5; do
		d[i]=$((a[i] - b[i]))
	done
	local drops=$(($(jq '.qdisc.drops' <<<"$after")))
	local fi=$((fam == 4 ? 1 : 2))

	echo "    $p ipv$fam: classified ${d[0]} (ipv4 ${d[1]} ipv6 ${d[2]}" \
	     "ipv6in4 ${d[3]}), root sent+dropped ${d[4]}, classes ${d[5]}," \
	     "root drops so far $drops"
	# A stray control packet (an MLD report after link up) may cross
	# too: the root must account for it as well, exactly.
	[ "${d[$fi]}" -gt 0 ] && [ $((d[0] - d[fi])) -le 2 ]
	check_err $? "ipv$fam: classified ${d[0]} packets, ${d[$fi]} of them ipv$fam"
	[ "${d[4]}" -eq "${d[0]}" ]
	check_err $? "root sent + dropped ${d[4]} != classified ${d[0]}"
	[ "${d[5]}" -eq "${d[4]}" ]
	check_err $? "classes sent + dropped ${d[5]} != root ${d[4]}"
	[ "$tc_root" = "$q_root" ]
	check_err $? "qosctl root '$q_root' != tc root '$tc_root'"
	log_test "$p: ipv$fam flood: root sent + dropped = classified, exactly"
}

# Each profile at 10mbit, flooded in each family: the drops are accounted exactly.
profile_floods()
{
	for pf in "$(dirname "$(readlink -f "$0")")"/../tc-profiles/*; do
		p=$(basename "$pf")
		sched=$(sed -n 's/^scheduler *= *//p' "$pf")
		[ "$sched" = none ] && continue
		if [ "$sched" = prio ] && ! qdisc_available prio; then
			log_test_skip "$p: flood" "sch_prio is not available on this kernel"
			continue
		fi
		out=$(qosctl_ns "$R" apply "$p" dev "$R_IF2" rate 10mbit 2>&1)
		check_err $? "apply $p: $out"
		log_test "$p: apply rate 10mbit"
		drops0=$(qosctl_ns "$R" stats dev "$R_IF2" -j | jq '.qdisc.drops')
		flood_check "$p" 4
		flood_check "$p" 6
		drops=$(qosctl_ns "$R" stats dev "$R_IF2" -j | jq '.qdisc.drops')
		[ "$((drops - drops0))" -gt 0 ]
		check_err $? "the floods overflowed nothing: root drops $drops0 -> $drops"
		qosctl_ns "$R" stats dev "$R_IF2" | grep -q "^root $sched *egress .* $drops\$"
		check_err $? "stats has no root $sched row with $drops drops"
		log_test "$p: the root's drops ($((drops - drops0))) show in stats and stats -j"
		qosctl_ns "$R" remove dev "$R_IF2" >/dev/null
	done
}

ALL_TESTS="profile_floods"
tests_run
exit $EXIT_STATUS
