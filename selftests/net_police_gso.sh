#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Policing GSO and GRO super-packets by their wire size
# (Documentation/policing.rst, GSO and GRO), IPv4 and IPv6 side by side.
#
#   h1 ------------------------ r ------------------------------------ h2
#   $H1_IF        $R_IF1 (policer at ingress)   $R_IF2 (tso, gso off)  $H2_IF
#   iperf3 -c -C CC --fq-rate 20M                                      iperf3 -s
#
# One TCP flow paced at 20 Mbit/s through a 20 Mbit/s two-colour policer
# with a 15 kB bucket, for cubic and bbr, with the segmentation offloads of
# h1's and r's veths on (TSO, GSO, GRO: r sees super-packets of tens of kB,
# larger than the bucket) and off (r sees wire frames). Each case checks:
#
#  - the bytes the policer passed green are exactly the bytes r sent toward
#    h2: $R_IF2 has TSO and GSO off, so the kernel segments in software
#    before the device and its tx counter counts every frame with its own
#    headers, the wire size the policer must charge. Only TCP's bytes are
#    compared: r sends frames of its own toward h2 (an MLD report after
#    forwarding is turned on, 170 bytes, was seen in the first case), and
#    h1 sends r frames the policer passes but r does not forward (an MLD
#    report, 110 bytes, also in the first case). nftables counters count
#    what is not TCP at $R_IF2's egress hook and at $R_IF1's ingress hook,
#    and those bytes are taken off the tx counter and off green. Counters,
#    exact on any machine;
#  - goodput (iperf3's receiver) converted to the policer's layer, full
#    frames of 1514 bytes for an MSS of 1448 (IPv4) or 1428 (IPv6), at
#    least 85% of 20 Mbit/s in one of three runs, with h1's minimum RTO at
#    5 ms as in net_police.sh.
#
# A policer that charged a super-packet once with one set of headers fails
# the first with offloads on (it passed 2-5% more wire bytes than it
# counted); one that wanted a whole super-packet in a bucket smaller than
# it fails the second (bbr got 12-13 Mbit/s before). Under
# KSFT_MACHINE_SLOW the rate is an expected failure when it does not hold;
# the counters are checked as everywhere.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

RATE=20000000
BURST=15000
TIME=${TIME:-5}
MIN_PCT=85
TRIES=3

require_root
require_cmd iperf3 jq ethtool bc nft
require_qosctl
# bbr is a module on Debian's kernels; a kernel without it runs cubic only.
grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control || modprobe -q tcp_bbr
CCS=
for cc in cubic bbr; do
	if grep -qw $cc /proc/sys/net/ipv4/tcp_available_congestion_control; then
		CCS="$CCS $cc"
	else
		echo "# TCP congestion control $cc is not available: its cases are not run"
	fi
done
[ -n "$CCS" ] || { echo "SKIP: neither cubic nor bbr is available"; exit $ksft_skip; }

tmp_setup

setup()
{
	topo_h1_r_h2 || exit $ksft_fail
	cat >"$TMP/gso" <<-EOF
	[profile]
	description = net_police_gso.sh: police everything, queue nothing
	scheduler = none
	default = pol

	[class pol]
	id = 2
	police-rate = $((RATE / 1000000))mbit
	police-burst = $BURST
	EOF
	qosctl_ns "$R" apply "$TMP/gso" dev "$R_IF1" rate 10gbit || exit $ksft_fail
	in_ns "$R" ethtool -K "$R_IF2" tso off gso off || exit $ksft_fail
	# Frames that are not TCP come and go whole, never as super-packets:
	# the egress hook's bytes for them are the tx counter's; the ingress
	# hook's lack the 14-byte Ethernet header the policer charges (tc
	# sees the frame from its MAC header, netfilter from the network's).
	in_ns "$R" nft -f - <<-EOF || { echo "SKIP: no netdev egress hook for nftables"; exit $ksft_skip; }
	table netdev police_gso {
		counter other { }
		counter other_in { }
		chain egress {
			type filter hook egress device "$R_IF2" priority 0;
			meta protocol { ip, ip6 } meta l4proto tcp accept
			counter name other
		}
		chain ingress {
			type filter hook ingress device "$R_IF1" priority 0;
			meta protocol { ip, ip6 } meta l4proto != tcp counter name other_in
		}
	}
	EOF
	nsenter --net="/run/netns/$H2" -- iperf3 -s -p 5201 --logfile "$TMP/iperf3.log" &
	defer kill $!
	wait_listen "$H2" t 5201 || exit $ksft_fail
	# Linux's 200 ms minimum RTO is ~6000 RTTs of this testbed: one
	# timeout would cost a run most of its rate. 5 ms, as net_police.sh
	# (test_tcp) explains.
	ip -n "$H1" route change default via 10.1.1.2 rto_min 5ms &&
	ip -n "$H1" -6 route change default via 2001:db8:1::2 rto_min 5ms || exit $ksft_fail
}

# offload on|off: TSO, GSO and GRO of h1's and r's veths between them.
offload()
{
	in_ns "$H1" ethtool -K "$H1_IF" tso "$1" gso "$1" gro "$1" &&
	in_ns "$R" ethtool -K "$R_IF1" tso "$1" gso "$1" gro "$1"
}

# counters: "GREEN TX OTHER OTHER_IN", the bytes the policer passed green
# (both families), $R_IF2's tx bytes, those of its frames that are not TCP,
# and those of the frames that are not TCP into $R_IF1 (Ethernet header
# included); once two readings a tenth of a second apart agree, so that no
# packet is between the counters.
counters()
{
	local a b i

	for ((i = 0; i < 50; i++)); do
		a=$(qosctl_ns "$R" stats dev "$R_IF1" -j |
		    jq -r '.classes[] | select(.name == "pol") | .police.green
			   | .ipv4.bytes + .ipv6.bytes')
		a="$a $(ip -n "$R" -s -j link show dev "$R_IF2" | jq -r '.[0].stats64.tx.bytes')"
		a="$a $(in_ns "$R" nft -j list counters table netdev police_gso |
			jq -r '[.nftables[] | select(.counter) | .counter | {(.name): .}] | add
			       | "\(.other.bytes) \(.other_in.bytes + 14 * .other_in.packets)"')"
		[ "$a" = "$b" ] && { echo "$a"; return 0; }
		b=$a
		sleep 0.1
	done
	return 1
}

# run FAMILY CC: one iperf3 run and the counter check; the goodput in BPS,
# as L2 frames in L2BPS.
run()
{
	local dst=$H2_V4 mss=1448 s0 s1 green wire

	[ "$1" = 6 ] && dst=$H2_V6 mss=1428
	s0=$(counters)
	check_err $? "the counters did not go quiet before the run"
	BPS=$(in_ns "$H1" iperf3 -"$1" -c "$dst" -p 5201 -C "$2" --fq-rate $RATE \
	      -t "$TIME" -J | jq -r '.end.sum_received.bits_per_second')
	[ -n "$BPS" ] && [ "$BPS" != null ]
	check_err $? "iperf3 failed"
	s1=$(counters)
	check_err $? "the counters did not go quiet after the run"
	[ "$RET" -eq 0 ] || return 1
	read -r -a s0 <<<"$s0"
	read -r -a s1 <<<"$s1"
	L2BPS=$(echo "$BPS * 1514 / $mss" | bc -l)
	green=$((s1[0] - s0[0] - (s1[3] - s0[3])))
	wire=$((s1[1] - s0[1] - (s1[2] - s0[2])))
	printf "    ipv%s %-5s offloads %-3s: goodput %.2f Mbit/s, %.2f of L2; green %d B less %d B not TCP, %s tx %d B less %d B not TCP\n" \
		"$1" "$2" "$OFF" "$(echo "$BPS / 1000000" | bc -l)" "$(echo "$L2BPS / 1000000" | bc -l)" \
		$((s1[0] - s0[0])) $((s1[3] - s0[3])) "$R_IF2" $((s1[1] - s0[1])) $((s1[2] - s0[2]))
	[ "$green" -eq "$wire" ]
	check_err $? "the policer passed $green bytes of TCP, r sent $wire of TCP on the wire"
}

# run_case FAMILY CC: the counters in every run, the rate in one of TRIES.
run_case()
{
	local try ok=

	for ((try = 1; try <= TRIES; try++)); do
		run "$1" "$2"
		[ "$RET" -eq 0 ] || break
		if [ "$(echo "$L2BPS >= $RATE * $MIN_PCT / 100" | bc)" = 1 ]; then
			ok=1
			break
		fi
	done
	if [ "$RET" -eq 0 ]; then
		[ -n "$ok" ]
		xfail_on_slow check_err $? "goodput as L2 frames below $MIN_PCT% of $RATE bit/s in $TRIES runs"
	fi
	log_test "IPv$1 $2, offloads $OFF: green == wire, L2 goodput >= $MIN_PCT% of 20 Mbit/s"
}

# offload_cases on|off: every family and congestion control with the
# offloads on or off.
offload_cases()
{
	local cc fam

	OFF=$1
	offload $OFF || { echo "FAIL: ethtool -K ... $OFF"; exit $ksft_fail; }
	for cc in $CCS; do
		for fam in 4 6; do
			run_case $fam $cc
		done
	done
}

offloads_on()
{
	offload_cases on
}

offloads_off()
{
	offload_cases off
}

setup
ALL_TESTS="offloads_on offloads_off"
tests_run
exit $EXIT_STATUS
