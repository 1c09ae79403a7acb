#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Shared by the experiments: the 100 Mbit/s namespace testbed, load
# generators (iperf3, irtt) and their results, plots.
#
#   h1 (iperf3/irtt clients)       r (qosctl, link rate EXP_LINK)   h2 (servers)
#   $H1_IF ------------------ $R_IF1      $R_IF2 ------------------ $H2_IF
#   10.1.1.1, 2001:db8:1::1   ingress:    egress: HTB at EXP_LINK,  10.1.2.1
#                             classify    the bottleneck            2001:db8:2::1
#
# Rates given to the helpers are Ethernet-frame rates (what HTB counts, FCS
# excluded): iperf3's -b counts UDP payload, so it is scaled by the header
# size of the family (42 bytes IPv4, 62 bytes IPv6, with EXP_LEN-byte
# datagrams) and both families offer the router the same load.

. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../bench/lib.sh"

EXP_LINK=${EXP_LINK:-100mbit}
EXP_LINK_MBIT=${EXP_LINK%mbit}
EXP_DURATION=${EXP_DURATION:-5}
EXP_LEN=${EXP_LEN:-1400}
EXP_FAMILIES=${EXP_FAMILIES:-ipv4 ipv6}
# One-way delay netem adds on both hosts' links ("" = none): the seeds'
# testbeds were wide-area, the namespaces' RTT is ~0.1 ms.
EXP_DELAY=${EXP_DELAY:-}

# DSCP as the ToS / Traffic Class byte.
TOS_PIP=0xb8
TOS_BE=0x00
TOS_LBE=0x20

# exp_init NAME [OUTDIR]: output directory and a scratch directory.
exp_init()
{
	EXP_NAME=$1
	EXP_OUT=${2:-$BENCH_TOP/.output/experiments/$1}
	mkdir -p "$EXP_OUT"
	EXP_TMP=$(mktemp -d)
	defer rm -rf "$EXP_TMP"
	require_root
	require_cmd iperf3 irtt jq tc gnuplot
	[ -x "$QOSCTL" ] || { echo "SKIP: $QOSCTL not built"; exit $ksft_skip; }
}

# exp_title TEXT: TEXT, plus the path delay when there is one.
exp_title()
{
	echo "$1${EXP_DELAY:+, +$EXP_DELAY each way}"
}

# testbed PROFILE: h1 - r - h2, PROFILE on both router interfaces at
# EXP_LINK, iperf3 servers on ports 5201-5204 and an irtt server in h2.
testbed()
{
	topo_h1_r_h2 || return 1
	wire_packets
	path_delay || return 1
	exp_apply "$R" "$R_IF1" "$1" "$EXP_LINK" &&
		exp_apply "$R" "$R_IF2" "$1" "$EXP_LINK" || return 1
	servers
}

# wire_packets: the hosts send one packet per skb. veth offers TSO, so a
# TCP sender would hand the router 64 KB GSO packets, and a queue limit in
# packets (PIP's pfifo) would hold 40 times what it holds on a wire; the
# seeds' routers saw 1500-byte packets.
wire_packets()
{
	ip -n "$H1" link set dev "$H1_IF" gso_max_segs 1
	ip -n "$H2" link set dev "$H2_IF" gso_max_segs 1
}

# path_delay: EXP_DELAY on h1's and h2's egress (netem), so that every
# round trip through r gains twice EXP_DELAY and r's own qdiscs stay
# qosctl's. Skips the experiment when the kernel has no netem.
path_delay()
{
	local ns_if

	[ -n "$EXP_DELAY" ] || return 0
	for ns_if in "$H1 $H1_IF" "$H2 $H2_IF"; do
		set -- $ns_if
		if ! tc -n "$1" qdisc add dev "$2" root netem delay "$EXP_DELAY" limit 100000 \
			2>"$EXP_TMP/netem.err"; then
			echo "SKIP: EXP_DELAY=$EXP_DELAY needs sch_netem, which kernel" \
				"$(uname -r) lacks: $(cat "$EXP_TMP/netem.err")"
			exit $ksft_skip
		fi
	done
	echo "$EXP_NAME: path delay $EXP_DELAY each way (netem on h1 and h2)"
}

# tunnel_6in4 [ARG...]: a sit (IPv6-in-IPv4) tunnel between h1 and h2 over
# the routed IPv4 path, fd00:64::1 - fd00:64::2 (h2_addr 6in4), ARGs added
# to both ends' `ip link add`. Fails without sit in the kernel.
tunnel_6in4()
{
	ip -n "$H1" link add s6in4 type sit local "$H1_V4" remote "$H2_V4" ttl 64 "$@" \
		2>/dev/null || return 1
	ip -n "$H2" link add s6in4 type sit local "$H2_V4" remote "$H1_V4" ttl 64 "$@" || return 1
	ip -n "$H1" addr add fd00:64::1/64 dev s6in4 nodad
	ip -n "$H2" addr add fd00:64::2/64 dev s6in4 nodad
	ip -n "$H1" link set s6in4 up
	ip -n "$H2" link set s6in4 up
}

# servers: iperf3 on ports 5201-5204 and irtt, in h2; returns once irtt
# answers a handshake from h1 on both families (a slow, emulated guest
# takes seconds to start it).
servers()
{
	local port pid dst i

	for port in 5201 5202 5203 5204; do
		bg_ns "$H2" pid iperf3 -s -p $port >/dev/null 2>&1
	done
	bg_ns "$H2" pid irtt server -i 0 -d 0 >/dev/null 2>&1
	sleep 0.5
	for dst in "$H2_V4" "[$H2_V6]"; do
		for i in $(seq 20); do
			in_ns "$H1" irtt client -Q -n --timeouts=500ms "$dst:2112" >/dev/null 2>&1 &&
				break
			sleep 0.5
		done
	done
}

# exp_apply NS DEV PROFILE RATE: qosctl apply, its remove registered.
exp_apply()
{
	qosctl_ns "$1" apply "$3" dev "$2" rate "$4" || return 1
	defer qosctl_ns "$1" remove dev "$2"
}

# h2_addr FAMILY: h2's address; family 6in4 is h2's end of the tunnel the
# parity experiment builds.
h2_addr()
{
	case $1 in
	ipv4)	echo "$H2_V4" ;;
	6in4)	echo fd00:64::2 ;;
	*)	echo "$H2_V6" ;;
	esac
}

# payload_mbit FAMILY L2_MBIT: the iperf3 -b value giving L2_MBIT of frames.
payload_mbit()
{
	local hdr=42

	[ "$1" = ipv6 ] && hdr=62
	[ "$1" = 6in4 ] && hdr=82
	awk -v r="$2" -v l="$EXP_LEN" -v h=$hdr 'BEGIN { printf "%.3f\n", r * l / (l + h) }'
}

# udp_flow FAMILY PORT L2_MBIT TOS OUT: iperf3 UDP from h1 to h2 for
# EXP_DURATION seconds, JSON into OUT, in the background; sets FLOW_PID.
udp_flow()
{
	in_ns "$H1" timeout $((EXP_DURATION + 15)) iperf3 -c "$(h2_addr "$1")" -p "$2" -u \
		-b "$(payload_mbit "$1" "$3")M" -l "$EXP_LEN" -t "$EXP_DURATION" \
		--tos "$4" -J > "$5" 2>/dev/null &
	FLOW_PID=$!
}

# tcp_flow FAMILY PORT TOS STREAMS OUT: iperf3 TCP, as udp_flow.
tcp_flow()
{
	in_ns "$H1" timeout $((EXP_DURATION + 15)) iperf3 -c "$(h2_addr "$1")" -p "$2" \
		-P "$4" -t "$EXP_DURATION" --tos "$3" -J > "$5" 2>/dev/null &
	FLOW_PID=$!
}

# rtt_probe FAMILY TOS OUT: irtt every 10 ms for EXP_DURATION seconds,
# JSON into OUT, in the background; sets FLOW_PID. The handshake waits 3 s
# before it retries: with irtt's default 1 s, a handshake queued behind a
# flood for more than a second (a slow, emulated guest) is sent twice, and
# irtt aborts the test when the second reply arrives ("UnexpectedOpenFlag",
# no probe sent).
rtt_probe()
{
	local dst

	dst=$(h2_addr "$1")
	[ "$1" != ipv4 ] && dst="[$dst]"
	in_ns "$H1" timeout $((EXP_DURATION + 30)) irtt client -Q -i 10ms \
		-d "${EXP_DURATION}s" --dscp="$2" --timeouts=3s,6s -o "$3" "$dst:2112" \
		>/dev/null 2>&1 &
	FLOW_PID=$!
}

# rtt_pct IRTT_JSON P: the P-th percentile of the round trips, in ms.
rtt_pct()
{
	jq -r --argjson p "$2" '[.round_trips[] | .delay.rtt // empty] | sort |
		if length == 0 then "nan" else
		.[((length * $p / 100) | ceil) - 1 | if . < 0 then 0 else . end] / 1e6 * 1000 |
		round / 1000 end' \
		"$1" 2>/dev/null || echo nan
}

# UDP results: loss in percent, jitter in ms, received rate in Mbit/s of
# payload (RFC 3550 jitter as iperf measures it, the 6NET paper's metric).
udp_loss()
{
	jq -r '.end.sum.lost_percent // "nan"' "$1" 2>/dev/null || echo nan
}

udp_jitter()
{
	jq -r '.end.sum.jitter_ms // "nan"' "$1" 2>/dev/null || echo nan
}

udp_rx_mbit()
{
	jq -r '(.end.sum_received.bits_per_second / 1e6) // "nan"' "$1" 2>/dev/null || echo nan
}

tcp_rx_mbit()
{
	jq -r '(.end.sum_received.bits_per_second / 1e6) // "nan"' "$1" 2>/dev/null || echo nan
}

# irtt results in ms: RTT mean, RTT median, round-trip IPDV mean (jitter),
# and loss in percent.
rtt_stat()
{
	local expr

	case $2 in
	mean)	expr='.stats.rtt.mean / 1e6' ;;
	median)	expr='.stats.rtt.median / 1e6' ;;
	ipdv)	expr='.stats.ipdv_round_trip.mean / 1e6' ;;
	loss)	expr='.stats.packet_loss_percent' ;;
	esac
	jq -r "($expr) // \"nan\"" "$1" 2>/dev/null || echo nan
}

# class_bytes NS DEV CLASSID: bytes sent by an HTB class (frames, no FCS).
class_bytes()
{
	tc -n "$1" -s class show dev "$2" classid "$3" | awk '/Sent/ { print $2; exit }'
}

# class_counts NS DEV CLASSID: "sent dropped" packets of an HTB class.
class_counts()
{
	tc -n "$1" -s class show dev "$2" classid "$3" |
		awk '/Sent/ { d = $7; sub(/,/, "", d); print $4, d; exit }'
}

# drop_pct "SENT0 DROP0" "SENT1 DROP1": percentage of the packets that
# reached the class between two class_counts that the router dropped. The
# end-to-end loss minus this is loss outside the router's queues (end
# hosts on a busy machine).
drop_pct()
{
	echo "$1 $2" | awk '{ s = $3 - $1; d = $4 - $2
		if (s + d > 0) printf "%.3f\n", 100 * d / (s + d); else print "nan" }'
}

# gnuplot preamble for a PNG of two panels side by side.
gp_begin()
{
	cat <<EOF
set terminal pngcairo size 1400,520 font ",11"
set output "$1"
set datafile separator ","
set grid
set key top left
set multiplot layout 1,2 title "$2"
EOF
}

# plot_done PNG: report the file or the failure.
plot_done()
{
	if [ -s "$1" ]; then
		echo "$EXP_NAME: plot $1"
	else
		echo "$EXP_NAME: plot $1 failed" >&2
	fi
}
