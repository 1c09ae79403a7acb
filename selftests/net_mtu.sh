#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Jumbo frames through every shipped profile: at MTU 9000 the TBF bursts,
# FIFO limits and policer bursts qosctl derives hold a full frame, so
# every echo request of the largest size passes, IPv4 and IPv6, in each
# class the pings are marked for.
#
#   h1                          r                           h2
#   $H1_IF ------------ $R_IF1      $R_IF2 ------------ $H2_IF
#   10.1.1.1/24         10.1.1.2    10.1.2.2            10.1.2.1/24
#   2001:db8:1::1/64    ::2         2001:db8:2::2       2001:db8:2::1/64
#   mtu 9000 on every veth          qosctl apply PROFILE on $R_IF1 and
#                                   $R_IF2, rate 100mbit
#
#   ping -M do -s <MTU - headers>, DSCP EF and 0, paced: 9014-byte frames
#
# Per profile and family: every request answered, and r's egress program
# on $R_IF2 counted exactly $PINGS more packets of 9014 bytes for each
# DSCP; nothing dropped by a qdisc. Then the sizes themselves: a TBF
# without a burst gets 1 ms at its rate plus a 9014-byte frame, a bfifo a
# floor of two such frames, a CBQ maxburst N frames of 9014 bytes; a burst
# the profile sets below the frame gets a warning from apply (the device's
# MTU) and from validate (mtu 9000, or 1500 assumed and said).
#
# PRIO profiles run where sch_prio exists, else skip.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

MTU=9000
FRAME=$((MTU + 14))
PINGS=10

require_root
require_cmd jq ping tc

tmp_setup
topo_h1_r_h2 || exit $ksft_fail
for ns_if in "$H1 $H1_IF" "$R $R_IF1" "$R $R_IF2" "$H2 $H2_IF"; do
	set -- $ns_if
	ip -n "$1" link set "$2" mtu $MTU || exit $ksft_fail
done

# egress_total FAMILY: packets and bytes the egress program on $R_IF2
# counted for FAMILY, every class.
egress_total()
{
	qosctl_ns "$R" stats dev "$R_IF2" -j |
		jq -r "[.classes[].egress.$1] | \"\([.[].packets] | add) \([.[].bytes] | add)\""
}

# own FAMILY: packets of FAMILY r itself has sent, on any device
# (OutRequests: its MLD reports, neighbour probes and the like).
own()
{
	local f=/proc/net/snmp6 k=Ip6OutRequests

	[ "$1" = 4 ] && f=/proc/net/snmp k=OutRequests
	in_ns "$R" awk -v k="$k" '
		$1 == "Ip:" && !n { for (i = 2; i <= NF; i++) col[$i] = i; n = 1; next }
		$1 == "Ip:" { print $col[k] }
		$1 == k { print $2 }' "$f"
}

# jumbo PROFILE FAMILY TOS: $PINGS echo requests of one full frame each,
# counted in a window where r sent nothing of its own (its own packets
# leave through $R_IF2 and are counted there too): up to three tries.
jumbo()
{
	local p=$1 fam=$2 tos=$3 b a sent got dst size o try

	if [ "$fam" = 4 ]; then
		dst=$H2_V4 size=$((MTU - 28))
	else
		dst=$H2_V6 size=$((MTU - 48))
	fi
	for try in 1 2 3; do
		o=$(own $fam)
		read -ra b <<<"$(egress_total ipv$fam)"
		read -r sent got <<<"$(in_ns "$H1" ping -$fam -M do -Q $tos -q -c $PINGS \
					-i 0.02 -W 2 -s $size "$dst" | ping_summary)"
		read -ra a <<<"$(egress_total ipv$fam)"
		[ "$(own $fam)" = "$o" ] && break
	done
	[ "$sent" -eq $PINGS ] && [ "$got" -eq $PINGS ]
	check_err $? "ipv$fam tos $tos: $got of $sent replies"
	[ $((a[0] - b[0])) -eq $PINGS ] && [ $((a[1] - b[1])) -eq $((PINGS * FRAME)) ]
	check_err $? "ipv$fam tos $tos: egress counted $((a[0] - b[0])) packets," \
		"$((a[1] - b[1])) bytes; want $PINGS, $((PINGS * FRAME))"
	log_test "$p: ipv$fam DSCP $((tos >> 2)): $PINGS frames of $FRAME bytes, all passed"
}

# Every profile at MTU 9000: jumbo frames of each family and DSCP pass.
jumbo_frames()
{
	local pf p sched dev out drops0 drops fam

	for pf in "$(dirname "$(readlink -f "$0")")"/../tc-profiles/*; do
		p=$(basename "$pf")
		sched=$(sed -n 's/^scheduler *= *//p' "$pf")
		if [ "$sched" = prio ] && ! qdisc_available prio; then
			log_test_skip "$p: jumbo frames" "sch_prio is not available on this kernel"
			continue
		fi
		for dev in "$R_IF1" "$R_IF2"; do
			out=$(qosctl_ns "$R" apply "$p" dev "$dev" rate 100mbit 2>&1 >/dev/null)
			check_err $? "apply $p dev $dev: $out"
		done
		drops0=$(qosctl_ns "$R" stats dev "$R_IF2" -j | jq '.qdisc.drops // 0')
		log_test "$p: applied on both of r's devices at MTU $MTU"
		for fam in 4 6; do
			jumbo "$p" $fam 0xb8
			jumbo "$p" $fam 0
		done
		drops=$(qosctl_ns "$R" stats dev "$R_IF2" -j | jq '.qdisc.drops // 0')
		[ "$drops" -eq "$drops0" ]
		check_err $? "the qdisc dropped $((drops - drops0)) packets"
		log_test "$p: no qdisc drop"
		for dev in "$R_IF1" "$R_IF2"; do
			qosctl_ns "$R" remove dev "$dev" >/dev/null
		done
	done
}

# tbf_profile LINE...: a one-class TBF profile ending with LINEs (line 8 on).
tbf_profile()
{
	printf '[profile]\nscheduler = tbf\ndefault = all\n\n[class all]\nid = 3\nrate = 100%%\n'
	printf '%s\n' "$@"
}
# The sizes, through --dry-run on $R_IF2.
dry_run_sizes()
{
	local out

	out=$(qosctl_ns "$R" apply "$TMP/tbf" dev "$R_IF2" rate 10mbit --dry-run 2>&1)
	grep -q "^tc qdisc replace dev $R_IF2 root handle 1: tbf rate 10000000bit burst $((1250 + FRAME))b " <<<"$out"
	check_err $? "TBF burst is not 1250 + $FRAME bytes: $(grep tbf <<<"$out")"
	log_test "TBF without a burst: 1 ms at 10mbit + one $FRAME-byte frame"
	out=$(qosctl_ns "$R" apply cbq-like dev "$R_IF2" rate 1mbit --dry-run 2>&1)
	grep -q "burst $((4 * FRAME))b cburst $((4 * FRAME))b" <<<"$out"
	check_err $? "cbq-like pip (maxburst 4): no burst of 4 x $FRAME bytes"
	grep -q "bfifo limit $((2 * FRAME))b" <<<"$out"
	check_err $? "no bfifo at its floor of 2 x $FRAME bytes: $(grep bfifo <<<"$out")"
	log_test "maxburst 4 is 4 frames of $FRAME bytes; a bfifo holds at least 2"
}

small_burst_warned()
{
	local W out

	W="qosctl: warning: $TMP/small:8: burst: [class all] a burst of 4096 bytes is less than a full frame at MTU $MTU ($FRAME bytes)"
	out=$(qosctl_ns "$R" apply "$TMP/small" dev "$R_IF2" rate 10mbit 2>&1 >/dev/null)
	[ "$out" = "$W" ]
	check_err $? "apply: got '$out', want '$W'"
	qosctl_ns "$R" remove dev "$R_IF2" >/dev/null
	out=$("$QOSCTL" validate "$TMP/small" mtu $MTU 2>&1 >/dev/null)
	[ "$out" = "$W" ]
	check_err $? "validate mtu $MTU: got '$out', want '$W'"
	out=$("$QOSCTL" validate "$TMP/small" 2>&1 | head -1)
	[ "$out" = "$TMP/small: ok (1 classes, 0 rules; bursts checked at MTU 1500, assumed: give 'mtu N')" ]
	check_err $? "validate without mtu: got '$out'"
	log_test "a 4kb burst at MTU $MTU: warned by apply and validate mtu $MTU, not at 1500"
}

tbf_profile "leaf = bfifo" "limit = 20000" >"$TMP/tbf"
tbf_profile "burst = 4kb" >"$TMP/small"
ALL_TESTS="jumbo_frames dry_run_sizes small_burst_warned"
tests_run
exit $EXIT_STATUS
