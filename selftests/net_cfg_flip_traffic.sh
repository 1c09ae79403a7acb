#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Data-path changes under traffic never misclassify a packet
# (Documentation/design.rst, "Two slots"): while h1 pings h2 with DSCP 8,
# IPv4 and IPv6 at once, r's egress profile alternates between P0 (DSCP 8
# in lbe) and P1 (DSCP 8 left to be), each apply a flip of the
# configuration. Every packet is counted exactly once, in lbe or in be:
# per family, the per-class counters of r's egress grow by exactly the
# requests h2 answered, plus for IPv6 the ICMPv6 messages r sent itself
# on that interface (its MLD reports: /proc/net/dev_snmp6), all of them in
# those two classes, and both got some (the flips fell inside the
# traffic).
#
#   h1 ---- r ($R_IF2: P0 <-> P1, re-applied in a loop) ---- h2
#      ping -Q 0x20 -i 0.002, v4 and v6, to h2: counted at $R_IF2's egress
#
# r's neighbours on $R_IF2 are made permanent, so that r sends no ARP or
# ND there.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
require_root
require_cmd jq ping bpftool
require_qosctl

tmp_setup
topo_setup
DEV=$R_IF2
N=1000
[ "$KSFT_MACHINE_SLOW" = yes ] && N=300

P0=$TMP/p0
P1=$TMP/p1
cp "$(dirname "$(readlink -f "$0")")/../tc-profiles/pip-20pct" "$P0"
sed 's/^dscp = 8$/dscp = 10/' "$P0" >"$P1"

# count FAM [CLASS]: packets of FAM counted at $DEV's egress, in CLASS or
# in every class.
count()
{
	qosctl_ns "$R" stats dev "$DEV" -j |
		jq --arg c "${2:-}" "[.classes[] | select(\$c == \"\" or .name == \$c) | .egress.$1.packets] | add"
}

# own6: ICMPv6 messages r sent itself on $DEV.
own6()
{
	nsenter --net="/run/netns/$R" -- awk '$1 == "Icmp6OutMsgs" { print $2 }' \
		"/proc/net/dev_snmp6/$DEV"
}

declare -A S_all S_lbe S_be
S_own=0

# snapshot: the counters of both families and own6 (S_*), read again
# until no ICMPv6 message of r's own (an MLD report, sent on a timer) went
# out while they were read: it would be in a class counter and not in
# own6's difference, or the other way round.
snapshot()
{
	local fam o tries

	for tries in 1 2 3 4 5; do
		o=$(own6)
		for fam in ipv4 ipv6; do
			S_all[$fam]=$(count $fam) S_lbe[$fam]=$(count $fam lbe)
			S_be[$fam]=$(count $fam be)
		done
		S_own=$(own6)
		[ "$o" = "$S_own" ] && return 0
	done
	return 1
}

flip_under_traffic()
{
	local mac fam p4 p6 loop g0 own0 flips sent recv rx all lbe be
	declare -A b_all b_lbe b_be

	RET=0
	qosctl_ns "$R" apply "$P0" dev "$DEV" rate 100mbit >/dev/null
	check_err $? "apply $P0"
	mac=$(ip -n "$H2" -j link show "$H2_IF" | jq -r '.[0].address')
	ip -n "$R" neigh replace "$H2_V4" lladdr "$mac" dev "$DEV" nud permanent &&
		ip -n "$R" neigh replace "$H2_V6" lladdr "$mac" dev "$DEV" nud permanent
	check_err $? "permanent neighbours on $DEV"
	g0=$(cfg_gen "$R" "$DEV")
	snapshot
	check_err $? "counters before: r kept sending ICMPv6 while they were read"
	for fam in ipv4 ipv6; do
		b_all[$fam]=${S_all[$fam]} b_lbe[$fam]=${S_lbe[$fam]} b_be[$fam]=${S_be[$fam]}
	done
	own0=$S_own

	nsenter --net="/run/netns/$H1" -- ping -4 -q -n -Q 0x20 -i 0.002 -c $N -W 2 "$H2_V4" \
		>"$TMP/v4" 2>&1 &
	p4=$!
	nsenter --net="/run/netns/$H1" -- ping -6 -q -n -Q 0x20 -i 0.002 -c $N -W 2 "$H2_V6" \
		>"$TMP/v6" 2>&1 &
	p6=$!
	(
		i=0
		while kill -0 $p4 2>/dev/null || kill -0 $p6 2>/dev/null; do
			p=$P0
			[ $((i % 2)) -eq 0 ] && p=$P1
			qosctl_ns "$R" apply "$p" dev "$DEV" rate 100mbit >/dev/null || exit 1
			i=$((i + 1))
		done
	) &
	loop=$!
	wait $p4 $p6
	wait $loop
	check_err $? "a re-apply under traffic failed"
	flips=$(($(cfg_gen "$R" "$DEV") - g0))
	[ "$flips" -ge 4 ]
	check_err $? "$flips flips during the traffic, want at least 4"

	snapshot
	check_err $? "counters after: r kept sending ICMPv6 while they were read"
	for fam in ipv4 ipv6; do
		read -r sent recv < <(ping_summary "$TMP/${fam/ipv/v}")
		all=$((S_all[$fam] - b_all[$fam]))
		lbe=$((S_lbe[$fam] - b_lbe[$fam]))
		be=$((S_be[$fam] - b_be[$fam]))
		rx=$recv
		[ $fam = ipv6 ] && rx=$((recv + S_own - own0))
		[ "$sent" -eq $N ] && [ "$recv" -eq $N ] && [ "$rx" -ge $N ]
		check_err $? "$fam: $recv of $sent pings answered, want $N"
		[ "$all" -eq "$rx" ] && [ $((lbe + be)) -eq "$rx" ]
		check_err $? "$fam: $all counted, lbe $lbe + be $be, want $rx"
		[ "$lbe" -gt 0 ] && [ "$be" -gt 0 ]
		check_err $? "$fam: lbe $lbe, be $be: want both, the flips inside the traffic"
		log_test "$fam: $rx packets ($N DSCP 8 pings) across $flips flips, lbe $lbe + be $be, none elsewhere"
	done
}

ALL_TESTS="flip_under_traffic"
tests_run
exit $EXIT_STATUS
