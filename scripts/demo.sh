#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make demo`: pip-20pct on a software router, in network namespaces.
#
#   h1                           r                             h2
#   $H1_IF ------------- $R_IF1       $R_IF2 ------------- $H2_IF
#   10.1.1.1/24           10.1.1.2     10.1.2.2              10.1.2.1/24
#   2001:db8:1::1/64      ::2          2001:db8:2::2         2001:db8:2::1/64
#                                      qosctl apply pip-20pct
#                                      rate 100mbit
#
# h1 probes h2 with irtt, as Premium IP (DSCP 46) and as best effort,
# first on an idle path, then while iperf3 pushes 150 Mbit/s of best-effort
# UDP into the 100 Mbit/s egress of r. PIP should not notice; BE waits in
# its queue. A third probe to r itself shows the machine's own jitter.
# Everything is removed at exit.
#
# QOSCTL=/path/to/qosctl (the Makefile sets it). Takes about 30 seconds.

source "$(dirname "$(readlink -f "$0")")/../selftests/lib.sh"

RATE=100mbit
FLOOD_RATE=150M
FLOOD_LABEL="150 Mbit/s"
PROBE_INTERVAL=10ms
PROBE_DURATION=5s
FLOOD_SECONDS=10	# covers 1.5 s of warm-up and the probes
# r's addresses toward h1, as topo_h1_r_h2 sets them.
R1_V4=10.1.1.2
R1_V6=2001:db8:1::2

section()
{
	printf '\n== %s ==\n\n' "$*"
}

die()
{
	echo "demo: $*" >&2
	exit 1
}

# rtt_summary FILE: "p50 p99 loss%" from irtt's JSON, RTTs in ms.
rtt_summary()
{
	jq -r '([.round_trips[] | select(.lost == "false") | .delay.rtt] | sort) as $r
	       | ($r | length) as $n
	       | def q(p): if $n == 0 then "nan" else $r[((p * $n) | ceil) - 1] / 1e6 end;
	       "\(q(0.5)) \(q(0.99)) \(.stats.packet_loss_percent)"' "$1"
}

# probe_pair FAMILY TAG: PIP and BE irtt clients to h2 side by side, and
# a control to r, which does not cross the shaped egress.
probe_pair()
{
	local dst=$H2_V4 r=$R1_V4 pip be ctl rc=0

	[ "$1" = 6 ] && dst="[$H2_V6]" r="[$R1_V6]"
	spawn_ns "$H1" pip nice -n -20 irtt client -Q -i $PROBE_INTERVAL -d $PROBE_DURATION \
		--dscp=0xb8 -o "$TMP/pip-$2.json" "$dst"
	spawn_ns "$H1" be nice -n -20 irtt client -Q -i $PROBE_INTERVAL -d $PROBE_DURATION \
		-o "$TMP/be-$2.json" "$dst"
	spawn_ns "$H1" ctl nice -n -20 irtt client -Q -i $PROBE_INTERVAL -d $PROBE_DURATION \
		--dscp=0xb8 -o "$TMP/ctl-$2.json" "$r"
	reap_pid "$pip" || rc=1
	reap_pid "$be" || rc=1
	reap_pid "$ctl" || rc=1
	[ $rc -eq 0 ] || cat "$TMP/pip.log" "$TMP/be.log" "$TMP/ctl.log" >&2
	return $rc
}

# measure FAMILY: unloaded probes, then probes under the flood.
measure()
{
	local fam=$1 dst=$H2_V4 flood

	[ "$fam" = 6 ] && dst=$H2_V6
	echo "IPv$fam: probing an idle path for $PROBE_DURATION ..."
	probe_pair "$fam" "u$fam" || die "irtt failed (IPv$fam, idle)"

	echo "IPv$fam: $FLOOD_LABEL best-effort UDP flood h1 -> h2, probing again ..."
	spawn_ns "$H1" flood nice -n 19 iperf3 -"$fam" -u -b $FLOOD_RATE -t $FLOOD_SECONDS -c "$dst"
	sleep 1.5
	kill -0 "$flood" 2>/dev/null || { cat "$TMP/flood.log" >&2; die "iperf3 did not start"; }
	probe_pair "$fam" "l$fam" || die "irtt failed (IPv$fam, flood)"
	kill -0 "$flood" 2>/dev/null ||
		echo "IPv$fam: warning: the flood ended before the probes did"
	reap_pid "$flood" || { cat "$TMP/flood.log" >&2; die "iperf3 failed"; }
	FLOOD_RX[$fam]=$(awk '/receiver/ { print $7, $8 }' "$TMP/flood.log")
}

row()
{
	local fam=$1 cls=$2 tag=$3 u50 u99 uloss l50 l99 lloss

	read -r u50 u99 uloss < <(rtt_summary "$TMP/$tag-u$fam.json")
	read -r l50 l99 lloss < <(rtt_summary "$TMP/$tag-l$fam.json")
	printf "%-6s  %-5s  %8.3f  %8.3f  %8.3f  %8.3f  %5.1f%% / %.1f%%\n" \
		"IPv$fam" "$cls" "$u50" "$u99" "$l50" "$l99" "$uloss" "$lloss"
}

require_root
require_cmd irtt iperf3 jq nsenter ss tc
[ -x "$QOSCTL" ] || die "$QOSCTL is not built (make)"
qdisc_available htb || die "the running kernel has no HTB qdisc"

TMP=$(mktemp -d)
defer rm -rf "$TMP"
declare -A FLOOD_RX
start=$(date +%s)

section "1. Testbed: h1 - r - h2 in network namespaces"
topo_h1_r_h2 || die "could not build the topology"
echo "namespaces   h1=$H1 r=$R h2=$H2"
echo "h1 $H1_IF $H1_V4 $H1_V6  ->  r $R_IF1 | r $R_IF2  ->  h2 $H2_IF $H2_V4 $H2_V6"

section "2. qosctl apply pip-20pct dev $R_IF2 rate $RATE (r's egress toward h2)"
qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate $RATE || die "qosctl apply failed"
qosctl_ns "$R" show dev "$R_IF2" || die "qosctl show failed"
BE_LEAF=$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -r '.classes[] | select(.name == "be") | .leaf')

section "3. Latency, idle and under a $FLOOD_LABEL best-effort flood"
# The probes get the CPU first: on a busy machine what should show is the
# queue in r, not how long irtt waited to be scheduled.
bg_ns "$H2" irtt_srv nice -n -20 irtt server -b "$H2_V4,[$H2_V6]" >"$TMP/irtt-server.log" 2>&1
bg_ns "$H2" iperf_srv nice -n 19 iperf3 -s >"$TMP/iperf3-server.log" 2>&1
bg_ns "$R" irtt_r nice -n -20 irtt server -b "$R1_V4,[$R1_V6]" >"$TMP/irtt-r.log" 2>&1
wait_listen "$H2" u 2112 && wait_listen "$H2" t 5201 && wait_listen "$R" u 2112 ||
	die "irtt or iperf3 server did not start"
measure 4
measure 6

section "4. Round-trip times h1 -> h2 -> h1 (irtt, every $PROBE_INTERVAL for $PROBE_DURATION)"
printf "%-6s  %-5s  %8s  %8s  %8s  %8s  %s\n" "" "" "idle" "idle" "flood" "flood" "loss"
printf "%-6s  %-5s  %8s  %8s  %8s  %8s  %s\n" "family" "class" "p50 ms" "p99 ms" "p50 ms" "p99 ms" "idle / flood"
for fam in 4 6; do
	row $fam PIP pip
	row $fam BE be
	row $fam ctl ctl
done
echo
for fam in 4 6; do
	echo "IPv$fam flood: $FLOOD_LABEL offered, ${FLOOD_RX[$fam]:-?} delivered to h2"
done
echo "ctl: h1 -> r only, never through the shaped egress: the machine's own noise."
echo "PIP (DSCP 46) is served first, capped at 20% of $RATE."
if [ "$BE_LEAF" = fq_codel ]; then
	echo "BE's leaf is fq_codel: the sparse BE probe flow gets its own queue and"
	echo "stays fast too; the flood is what waits and is dropped."
else
	echo "BE's leaf is a $BE_LEAF: BE probes wait behind the flood in the same queue."
fi

section "5. qosctl stats dev $R_IF2"
qosctl_ns "$R" stats dev "$R_IF2" || die "qosctl stats failed"

section "6. Cleanup"
qosctl_ns "$R" remove dev "$R_IF2" || die "qosctl remove failed"
echo "qosctl remove: $(tc -n "$R" qdisc show dev "$R_IF2" | head -1)"
echo "namespaces and servers go at exit."
echo "demo done in $(( $(date +%s) - start )) s"
exit 0
