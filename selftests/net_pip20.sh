#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# pip-20pct end to end through a router, IPv4 and IPv6 side by side.
#
#   h1                           r                             h2
#   $H1_IF ------------- $R_IF1       $R_IF2 ------------- $H2_IF
#   10.1.1.1/24           10.1.1.2     10.1.2.2              10.1.2.1/24
#   2001:db8:1::1/64      ::2          2001:db8:2::2         2001:db8:2::1/64
#                                      qosctl apply pip-20pct
#                                      rate 100mbit: BPF at
#                                      clsact in+out, HTB out
#
#   irtt client  ----------- PIP (DSCP 46) and BE probes -----> irtt server
#   irtt client  --- control --> irtt server (in r: never crosses $R_IF2)
#   iperf3 -u    ----------- 150 Mbit/s BE flood ------------> iperf3 -s
#   ping -Q      ----------- fixed counts per class ---------> (echo replies)
#
# The bottleneck is r's egress toward h2 (HTB at 100 Mbit/s): requests
# h1 -> h2 queue there, the replies come back into r through $R_IF2's
# ingress program and leave by $R_IF1, which has no policy.
#
# a. Latency: the PIP RTT p99 under the flood stays within 1 ms of the
#    unloaded p99 (or of the control's p99 under the same load, when the
#    machine itself is that slow), while the BE leaf queue is full: the
#    BE class drops packets during the probes (a counter) and the BE
#    median rises tenfold (the queue is full most of the time, not only
#    at moments). The flood runs at nice 19: at the default level it
#    competed with the probes' forwarding on a machine loaded by a VM
#    beside the suite, and PIP's p99 grew by 2-3 ms in every attempt. The
#    price: a job at nice 0 beside the suite can starve the flood, and
#    then this premise fails (the queue full only at moments).
# b. Exact counters: the per-class, per-family egress and ingress counters
#    move by exactly the echo requests sent and the replies received.
# c. remove leaves the kernel's default qdisc, no filter, no qosctl file.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

PROBE_INTERVAL=10ms
PROBE_DURATION=5s
PROBES=500		# PROBE_DURATION / PROBE_INTERVAL
MIN_SAMPLES=400		# for a p99 worth the name (80%)
ATTEMPTS=3
FLOOD_RATE=150M
PINGS=100

# Timing bounds: behavioural, not micro-benchmarks. A slow machine (a VM
# without KVM) gets wider margins; nothing else changes.
if [ "$KSFT_MACHINE_SLOW" = yes ]; then
	PIP_SLACK_MS=5
	BE_RATIO=3
else
	PIP_SLACK_MS=1
	BE_RATIO=10
fi

# probes FAMILY TAG: three irtt clients in h1 side by side, JSON into
# $TMP/{pip,be,ctl}-TAG.json: PIP and BE to h2 through r's shaped egress,
# and a control to r itself, which never reaches that egress but shares
# everything else with the PIP probe (h1's CPU, r's backlog, the machine).
probes()
{
	local h2=$H2_V4 r=$R1_V4 pip be ctl rc=0

	[ "$1" = 6 ] && h2="[$H2_V6]" r="[$R1_V6]"
	irtt_probe "$H1" pip "$h2" "$TMP/pip-$2.json" --dscp=0xb8
	irtt_probe "$H1" be "$h2" "$TMP/be-$2.json"
	irtt_probe "$H1" ctl "$r" "$TMP/ctl-$2.json" --dscp=0xb8
	reap_pid $pip || rc=1
	reap_pid $be || rc=1
	reap_pid $ctl || rc=1
	return $rc
}

# measure FAMILY: probes without load, then under the flood. Sets
# M_{PIP,BE,CTL}_{U,L} ("samples p50 p99 loss%"), M_BE_DROPS (the BE
# class's drops while the probes ran under load) and M_ERR (empty, or what
# went wrong with the tools).
measure()
{
	local fam=$1 dst=$H2_V4 flood none="0 -1 -1 -1" d0 d1

	[ "$fam" = 6 ] && dst=$H2_V6
	M_ERR=
	rm -f "$TMP"/*-[ul]"$fam".json
	probes "$fam" "u$fam" || M_ERR="irtt failed without load"

	# The flood outlasts the probes (irtt may have to retry its handshake
	# when the BE queue drops it); it is stopped once they are done.
	spawn_ns "$H1" flood nice -n 19 iperf3 -"$fam" -u -b $FLOOD_RATE -t 30 -c "$dst"
	sleep 1.5
	kill -0 "$flood" 2>/dev/null ||
		M_ERR="the iperf3 flood did not start: $(tail -1 "$TMP/flood.log")"
	d0=$(be_drops)
	probes "$fam" "l$fam" || M_ERR=${M_ERR:-"irtt failed under load"}
	d1=$(be_drops)
	M_BE_DROPS=$((d1 - d0))
	kill -0 "$flood" 2>/dev/null ||
		M_ERR=${M_ERR:-"the iperf3 flood ended before the probes: $(tail -1 "$TMP/flood.log")"}
	stop_pid "$flood"

	M_PIP_U=$(rtt_summary "$TMP/pip-u$fam.json") || M_PIP_U=$none
	M_BE_U=$(rtt_summary "$TMP/be-u$fam.json") || M_BE_U=$none
	M_CTL_U=$(rtt_summary "$TMP/ctl-u$fam.json") || M_CTL_U=$none
	M_PIP_L=$(rtt_summary "$TMP/pip-l$fam.json") || M_PIP_L=$none
	M_BE_L=$(rtt_summary "$TMP/be-l$fam.json") || M_BE_L=$none
	M_CTL_L=$(rtt_summary "$TMP/ctl-l$fam.json") || M_CTL_L=$none
}

# be_drops: the drops of the BE class's leaf qdisc on r.
be_drops()
{
	qosctl_ns "$R" stats dev "$R_IF2" -j |
		jq -r '.classes[] | select(.name == "be") | .qdisc.drops // -1'
}

# info_line LABEL PIP BE CTL: one line of measurements.
info_line()
{
	local k n p50 p99 loss label=$1 out=

	shift
	for k in pip be ctl; do
		read -r n p50 p99 loss <<<"$1"
		out+=$(printf "  %s %.3f/%.3f (%d, %.1f%%)" "$k" "$p50" "$p99" "$n" "$loss")
		shift
	done
	echo "INFO: $label p50/p99 ms (samples, loss):$out"
}

# PIP is judged against its own unloaded p99, or against the control's p99
# under the same load when that is higher: the probes are processes on a
# shared 2-core machine, and a CPU stall moves a p99 by milliseconds whether
# or not the packet crossed the shaped egress. A PIP probe queued behind
# the flood would see the BE queue's ~20 ms instead. An attempt that fails
# is repeated (up to $ATTEMPTS, every attempt printed).
latency_family()
{
	local fam=$1 name attempt pip_err be_err bound
	local pip_n pip_u50 pip_u99 pip_l50 pip_l99 be_n be_u50 be_l50 ctl_n ctl_l99 x

	name=$(fam_name "$fam")
	for ((attempt = 1; attempt <= ATTEMPTS; attempt++)); do
		measure "$fam"
		info_line "$name idle  (try $attempt)" "$M_PIP_U" "$M_BE_U" "$M_CTL_U"
		info_line "$name flood (try $attempt)" "$M_PIP_L" "$M_BE_L" "$M_CTL_L"
		echo "INFO: $name flood (try $attempt): BE class drops during the probes: $M_BE_DROPS"

		pip_err=$M_ERR be_err=$M_ERR
		read -r pip_n pip_u50 pip_u99 x <<<"$M_PIP_U"
		read -r be_n be_u50 x x <<<"$M_BE_U"
		[ "$pip_n" -ge $MIN_SAMPLES ] && [ "$be_n" -ge $MIN_SAMPLES ] ||
			pip_err=${pip_err:-"too few samples without load (pip $pip_n, be $be_n of $PROBES)"}
		be_err=${be_err:-$pip_err}
		read -r pip_n pip_l50 pip_l99 x <<<"$M_PIP_L"
		read -r be_n be_l50 x x <<<"$M_BE_L"
		read -r ctl_n x ctl_l99 x <<<"$M_CTL_L"
		[ "$pip_n" -ge $MIN_SAMPLES ] && [ "$ctl_n" -ge $MIN_SAMPLES ] ||
			pip_err=${pip_err:-"too few samples under load (pip $pip_n, control $ctl_n of $PROBES)"}
		[ "$be_n" -ge $((PROBES / 2)) ] ||
			be_err=${be_err:-"too few BE samples under load ($be_n of $PROBES)"}
		bound=$(awk -v a="$pip_u99" -v b="$ctl_l99" -v s=$PIP_SLACK_MS \
			'BEGIN { printf "%.3f", (a > b ? a : b) + s }')
		# The median is not moved by stalls: it keeps a noisy control
		# from covering for a PIP probe that waits in the BE queue.
		fcmp "b <= a + $PIP_SLACK_MS" "$pip_u50" "$pip_l50" ||
			pip_err=${pip_err:-"PIP median $pip_l50 ms under load > unloaded $pip_u50 ms + $PIP_SLACK_MS ms"}
		fcmp "b <= a" "$bound" "$pip_l99" ||
			pip_err=${pip_err:-"PIP p99 $pip_l99 ms under load > $bound ms (max of unloaded $pip_u99 and control $ctl_l99, + $PIP_SLACK_MS)"}
		[ "$M_BE_DROPS" -gt 0 ] ||
			be_err=${be_err:-"the BE class dropped $M_BE_DROPS packets while the probes ran: its queue was never full"}
		fcmp "a > 0 && b > a * $BE_RATIO" "$be_u50" "$be_l50" ||
			be_err=${be_err:-"BE median $be_l50 ms under load, not > ${BE_RATIO}x unloaded $be_u50 ms"}
		[ "$BE_LEAF" = fq_codel ] && be_err=

		[ -z "$pip_err" ] && [ -z "$be_err" ] && break
		[ $attempt -lt $ATTEMPTS ] && echo "INFO: $name try $attempt: ${pip_err:-$be_err}"
	done

	RET=0
	[ -z "$pip_err" ]
	xfail_on_slow check_err $? "$pip_err"
	log_test "$name PIP p99 under $FLOOD_RATE BE flood <= max(idle, control) + $PIP_SLACK_MS ms"

	if [ "$BE_LEAF" = fq_codel ]; then
		log_test_skip "$name BE queue full under $FLOOD_RATE BE flood: drops, median > ${BE_RATIO}x unloaded" \
			"BE leaf is fq_codel: a sparse probe flow gets its own queue and is not delayed"
		return
	fi
	RET=0
	[ -z "$be_err" ]
	xfail_on_slow check_err $? "$be_err"
	log_test "$name BE queue full under $FLOOD_RATE BE flood: drops, median > ${BE_RATIO}x unloaded"
}

latency_v4()
{
	latency_family 4
}

latency_v6()
{
	latency_family 6
}

# quiesce: wait until r's counters stop moving (MLD reports after link-up,
# the end of the flood), up to 10 s, so that deltas see only our pings.
quiesce()
{
	local a b i

	a=$(qosctl_ns "$R" stats dev "$R_IF2" -j | jq -c '[.classes[] | .ingress, .egress]')
	for ((i = 0; i < 20; i++)); do
		sleep 0.5
		b=$(qosctl_ns "$R" stats dev "$R_IF2" -j | jq -c '[.classes[] | .ingress, .egress]')
		[ "$a" = "$b" ] && return 0
		a=$b
	done
	return 1
}

# ping_count FAMILY TOS VAR_TX VAR_RX: send $PINGS echo requests h1 -> h2.
ping_count()
{
	local dst=$H2_V4 _tx _rx

	[ "$1" = 6 ] && dst=$H2_V6
	read -r _tx _rx < <(in_ns "$H1" ping -"$1" -n -q -c $PINGS -i 0.01 -W 2 -Q "$2" "$dst" |
		ping_summary)
	eval "$3=$_tx $4=$_rx"
}

# ctr JSON CLASS DIR FAMILY FIELD
ctr()
{
	jq -r --arg c "$2" --arg d "$3" --arg f "$4" --arg k "$5" \
		'.classes[] | select(.name == $c) | .[$d][$f][$k]' <<<"$1"
}

qdisc_sent()
{
	jq -r --arg c "$2" '.classes[] | select(.name == $c) | .qdisc.sent_packets // -1' <<<"$1"
}

counters()
{
	local before after fam cls cls_tos tos tx rx name d exp got frame
	local -A sent_tx sent_rx

	RET=0
	quiesce
	check_err $? "r's counters did not settle within 10 s"
	before=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
	check_err $? "qosctl stats failed"
	for fam in 4 6; do
		for cls_tos in pip:0xb8 lbe:0x20 be:0x28; do
			cls=${cls_tos%%:*} tos=${cls_tos#*:}
			ping_count "$fam" "$tos" tx rx
			sent_tx[$cls$fam]=$tx sent_rx[$cls$fam]=$rx
		done
	done
	after=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
	check_err $? "qosctl stats failed"
	log_test "counters: setup and $PINGS pings per class and family"

	for fam in 4 6; do
		name=$(fam_name "$fam")
		# Frame length as tc sees it: Ethernet + IP + ICMP 8 + 56 data.
		frame=$((14 + (fam == 4 ? 20 : 40) + 8 + 56))
		for d in egress ingress; do
			RET=0
			for cls in pip lbe be; do
				if [ $d = egress ]; then
					exp=${sent_tx[$cls$fam]}
				else
					exp=${sent_rx[$cls$fam]}
				fi
				[ "$exp" -eq $PINGS ]
				check_err $? "$cls: $exp of $PINGS $([ $d = egress ] && echo requests sent || echo replies received)"
				got=$(( $(ctr "$after" $cls $d ipv$fam packets) -
					$(ctr "$before" $cls $d ipv$fam packets) ))
				[ "$got" -eq "$exp" ]
				check_err $? "$cls $d ipv$fam: counter moved by $got packets, expected $exp"
				got=$(( $(ctr "$after" $cls $d ipv$fam bytes) -
					$(ctr "$before" $cls $d ipv$fam bytes) ))
				[ "$got" -eq $((exp * frame)) ]
				check_err $? "$cls $d ipv$fam: counter moved by $got bytes, expected $((exp * frame))"
			done
			if [ $d = egress ]; then
				log_test "$name egress counters pip/lbe/be == echo requests sent"
			else
				log_test "$name ingress counters pip/lbe/be == echo replies received"
			fi
		done
	done

	# The egress program's counters say what it decided; the HTB class
	# counters say where the packets were actually queued.
	RET=0
	for cls in pip lbe be; do
		exp=$((${sent_tx[${cls}4]} + ${sent_tx[${cls}6]}))
		got=$(( $(qdisc_sent "$after" $cls) - $(qdisc_sent "$before" $cls) ))
		[ "$got" -eq "$exp" ]
		check_err $? "HTB class of $cls sent $got packets, expected $exp"
	done
	log_test "HTB class counters pip/lbe/be == echo requests sent"

	RET=0
	got=$(jq '[.classes[] | .ingress.ipv6in4.packets, .egress.ipv6in4.packets,
		   .ingress.ipv6in4.bytes, .egress.ipv6in4.bytes] | add' <<<"$after")
	[ "$got" = 0 ]
	check_err $? "ipv6in4 counters are not 0 (sum $got)"
	log_test "ipv6in4 counters stay 0"
}

remove_check()
{
	local q

	RET=0
	qosctl_ns "$R" remove dev "$R_IF2"
	check_err $? "qosctl remove failed"
	q=$(tc -n "$R" -j qdisc show dev "$R_IF2")
	jq -e 'length == 1 and .[0].root == true and .[0].handle == "0:" and
	       .[0].kind != "clsact"' <<<"$q" >/dev/null
	check_err $? "qdiscs left: $q"
	[ "$q" = "$QDISC_BEFORE" ]
	check_err $? "root qdisc differs from before apply: $q, was $QDISC_BEFORE"
	for d in ingress egress; do
		q=$(tc -n "$R" -j filter show dev "$R_IF2" $d 2>&1)
		[ "$q" = "[]" ]
		check_err $? "$d filters left: $q"
	done
	[ -z "$(dev_files "$R" "$R_IF2")" ]
	check_err $? "files left in /run/qosctl: $(dev_files "$R" "$R_IF2")"
	log_test "remove: default root qdisc, no clsact, no filter, no state files"
}

# r's addresses toward h1, as topo_h1_r_h2 sets them.
R1_V4=10.1.1.2
R1_V6=2001:db8:1::2

ALL_TESTS="latency_v4 latency_v6 counters remove_check"

require_root
require_cmd irtt iperf3 jq ping tc ss nsenter awk
require_qosctl
require_qdisc htb
tmp_setup
topo_setup

QDISC_BEFORE=$(tc -n "$R" -j qdisc show dev "$R_IF2")
RET=0
qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit
check_err $? "qosctl apply failed"
log_setup "apply pip-20pct on r's egress toward h2 at 100mbit"

BE_LEAF=$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -r '.classes[] | select(.name == "be") | .leaf')
echo "INFO: BE leaf qdisc: ${BE_LEAF:-unknown}"

RET=0
bg_ns "$H2" irtt_srv nice -n -20 irtt server -b "$H2_V4,[$H2_V6]" >"$TMP/irtt-h2.log" 2>&1
bg_ns "$R" irtt_r nice -n -20 irtt server -b "$R1_V4,[$R1_V6]" >"$TMP/irtt-r.log" 2>&1
bg_ns "$H2" iperf_srv nice -n 19 iperf3 -s >"$TMP/iperf3-server.log" 2>&1
wait_listen "$H2" u 2112 && wait_listen "$H2" t 5201 && wait_listen "$R" u 2112
check_err $? "irtt or iperf3 server did not start"
log_setup "irtt and iperf3 servers in h2, irtt server in r"

tests_run
exit $EXIT_STATUS
