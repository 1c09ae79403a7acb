#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Multi-queue trees (queues N): an mq root with one HTB tree per TX queue,
# each at 1/N of the rates, and flows spread over the queues by their hash,
# IPv4 and IPv6.
#
#   h1 (UDP flows)          r                                  h2
#   $H1_IF ----------- $R_IF1   $R_IF2 ===================== $H2_IF
#   10.1.1.1                    2 TX queues (numtxqueues 2)
#   2001:db8:1::1               qosctl apply pip-20pct queues 2
#                               mq 1: -> htb 100: (queue 0), htb 200: (queue 1)
#
# Checks, from the kernel (tc -s) and from qosctl stats -j, whose class
# counters are the sum over the queues and list each queue:
#   - the tree: mq root, an HTB per queue with every class at half the rate,
#     its leaves, the same class numbers in both;
#   - one flow: all its packets in one queue's class, none in the other;
#   - many flows: in both queues, and the class counters add up exactly to
#     what was sent, per family; PIP (EF) only in the PIP classes;
#   - re-apply at another rate changes the classes in place; queues 1 goes
#     back to today's single tree; queues auto takes the device's 2;
#   - refused: more queues than the device has, a TBF profile, a bad value
#     in a profile (file, line, key), a balance period out of range, each
#     leaving the device as it was; a
#     failed apply rolls back to the single tree;
#   - remove restores the device's own root qdisc and leaves no files.
#
# With qosctl balance (the rates of each queue's tree shared by demand
# every 100 ms), at 100mbit, IPv4 and IPv6, from class byte counters over
# a measured interval:
#   - one TCP flow gets >= 85% of the link (without it: at most 55%, the
#     premise that the test can fail);
#   - two EF flows of 15 Mbit/s, steered into different queues (source
#     ports picked by their per-queue PIP counters), get 20 Mbit/s +-8%
#     together: Premium IP's cap is the link's, not 10 per queue;
#   - LBE in one queue under a BE flood gets its 1% floor (>= 0.9 Mbit/s);
#   - all along, read back from the kernel every 50 ms: the queues' link
#     rates add up to at most the link's, PIP's to at most 20 Mbit/s,
#     LBE's to at most 1 Mbit/s;
#   - show says it runs; SIGTERM puts back the static split, show says so,
#     and its status file goes;
#   - at a 10 ms period under a TCP flow, LBE datagrams in both families
#     are all counted and none dropped while classes change.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

NFLOWS=16		# flows in the spread check: all in one queue with p = 2^-15
COUNT=40		# packets per flow
LBE_TOS=0x20		# CS1: lbe, a class nothing else uses
PIP_TOS=0xb8		# EF

require_root
require_cmd tc jq python3 iperf3 ss
require_qosctl
require_qdisc htb

TOPO_TXQ=2 topo_h1_r_h2 || { echo "FAIL: topology"; exit $ksft_fail; }
tmp_setup

# send DST TOS NFLOWS COUNT PORT: NFLOWS UDP flows from h1 (source ports
# PORT, PORT+1, ...) of COUNT datagrams each, paced so no queue overflows.
send()
{
	in_ns "$H1" python3 - "$@" <<'EOF'
import socket, sys, time
dst, tos, nflows, count, port = sys.argv[1], int(sys.argv[2], 0), *map(int, sys.argv[3:6])
fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
socks = []
for i in range(nflows):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, tos)
    else:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    s.bind(("", port + i))
    socks.append(s)
for _ in range(count):
    for s in socks:
        s.sendto(b"q" * 64, (dst, 9))
        time.sleep(0.0003)
EOF
	sleep 0.3	# the queues drain
}

# sent CLASSID: packets tc counts for the class on r's egress, -1 if no
# such class. (tc 6.1 has no JSON for classes.)
sent()
{
	tc_class_sent "$R" "$R_IF2" "$1"
}

# bytes CLASSID...: bytes tc counts as sent by the classes together.
bytes()
{
	tc -n "$R" -s class show dev "$R_IF2" |
		awk -v c=" $* " '$1 == "class" { on = index(c, " " $3 " ") > 0 }
			on && $1 == "Sent" { n += $2 } END { print n + 0 }'
}

# drops CLASSID...: packets the classes' queues dropped, together.
drops()
{
	tc -n "$R" -s class show dev "$R_IF2" |
		awk -v c=" $* " '$1 == "class" { on = index(c, " " $3 " ") > 0 }
			on && $1 == "Sent" && match($0, /dropped [0-9]+/) {
				n += substr($0, RSTART + 8, RLENGTH - 8) }
			END { print n + 0 }'
}

# since B0 T0 CLASSID...: Mbit/s the classes sent since they had sent B0
# bytes at T0 (date +%s%N).
since()
{
	local b0=$1 t0=$2

	shift 2
	awk -v b=$(($(bytes "$@") - b0)) -v ns=$(($(date +%s%N) - t0)) \
		'BEGIN { printf "%.2f\n", b * 8e3 / ns }'
}

# mbps SECS CLASSID...: Mbit/s the classes sent together over SECS.
mbps()
{
	local secs=$1 b0 t0

	shift
	b0=$(bytes "$@") t0=$(date +%s%N)
	sleep "$secs"
	since "$b0" "$t0" "$@"
}

# class_line CLASSID: the class as tc prints it (rate and ceil in tc's units).
class_line()
{
	tc_classes "$R" "$R_IF2" "$1"
}

# stats_q NAME Q: packets of class NAME in queue Q, as qosctl stats -j has them.
stats_q()
{
	qosctl_ns "$R" stats dev "$R_IF2" -j |
		jq --arg n "$1" --argjson q "$2" '.classes[] | select(.name == $n) | .queues[$q].sent_packets'
}

stats_sum()
{
	qosctl_ns "$R" stats dev "$R_IF2" -j |
		jq --arg n "$1" '.classes[] | select(.name == $n) | .qdisc.sent_packets'
}

root_before=$(tc -n "$R" qdisc show dev "$R_IF2" root)

qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit queues 2
check_err $? "apply queues 2"
log_setup "apply pip-20pct queues 2 on a 2-queue veth"

tree()
{
	local q id

	tc -n "$R" -j qdisc show dev "$R_IF2" > "$TMP/q.json"
	[ "$(jq -r '.[] | select(.root == true) | "\(.kind) \(.handle)"' "$TMP/q.json")" = "mq 1:" ]
	check_err $? "root is not mq 1:: $(jq -c '.[] | select(.root == true)' "$TMP/q.json")"
	for q in 1 2; do
		[ "$(jq -r --arg p "1:$q" '.[] | select(.parent == $p) | "\(.kind) \(.handle)"' \
			"$TMP/q.json")" = "htb ${q}00:" ]
		check_err $? "no htb ${q}00: on mq class 1:$q"
		for id in 2 3 4; do
			[ "$(jq -r --arg p "${q}00:1$id" '.[] | select(.parent == $p) | .handle' \
				"$TMP/q.json")" = "${q}1$id:" ]
			check_err $? "no leaf ${q}1$id: under ${q}00:1$id"
		done
		# Half of 100mbit each: the link class, PIP (20%) and BE's ceiling.
		class_line ${q}00:1 | grep -q " rate 50Mbit ceil 50Mbit "
		check_err $? "${q}00:1 is not at 50mbit: $(class_line ${q}00:1)"
		class_line ${q}00:12 | grep -q " prio 0 rate 10Mbit ceil 10Mbit "
		check_err $? "${q}00:12 (pip) is not capped at 10mbit: $(class_line ${q}00:12)"
		class_line ${q}00:13 | grep -q " prio 1 rate 39500Kbit ceil 50Mbit "
		check_err $? "${q}00:13 (be) does not borrow up to 50mbit: $(class_line ${q}00:13)"
	done
	log_test "tree: mq 1:, htb 100: and 200: with the same classes at half the rates"
}

show_queues()
{
	qosctl_ns "$R" show dev "$R_IF2" | grep -q "^queues 2: mq root"
	check_err $? "show does not say queues 2"
	[ "$(qosctl_ns "$R" show dev "$R_IF2" -j | jq .queues)" = 2 ]
	check_err $? "show -j has no queues 2"
	log_test "show and show -j report the queues"
}

# Flows in each family: one queue per flow, all queues used, exact counters.
flows()
{
	local fam dst a0 a1 d0 d1 p0 p1 s0 s1 ss eg

	for fam in 4 6; do
		[ $fam = 4 ] && dst=$H2_V4 || dst=$H2_V6
		a0=$(sent 100:14) a1=$(sent 200:14)
		send $dst $LBE_TOS 1 $COUNT 5000
		d0=$(($(sent 100:14) - a0)) d1=$(($(sent 200:14) - a1))
		[ $((d0 + d1)) -eq $COUNT ] && [ $((d0 * d1)) -eq 0 ]
		check_err $? "one flow: $d0 packets in queue 0, $d1 in queue 1, sent $COUNT"
		log_test "IPv$fam: one flow's $COUNT packets all in one queue"

		a0=$(sent 100:14) a1=$(sent 200:14) p0=$(sent 100:12) p1=$(sent 200:12)
		s0=$(stats_q lbe 0) s1=$(stats_q lbe 1) ss=$(stats_sum lbe)
		send $dst $LBE_TOS $NFLOWS $COUNT 6000
		d0=$(($(sent 100:14) - a0)) d1=$(($(sent 200:14) - a1))
		[ $((d0 + d1)) -eq $((NFLOWS * COUNT)) ]
		check_err $? "class counters: $d0 + $d1 packets, sent $((NFLOWS * COUNT))"
		[ $d0 -gt 0 ] && [ $d1 -gt 0 ]
		check_err $? "$NFLOWS flows not spread: $d0 packets in queue 0, $d1 in queue 1"
		[ $((d0 % COUNT)) -eq 0 ] && [ $((d1 % COUNT)) -eq 0 ]
		check_err $? "a flow split across queues: $d0 and $d1 are not whole flows of $COUNT"
		[ $(($(stats_q lbe 0) - s0)) -eq $d0 ] && [ $(($(stats_q lbe 1) - s1)) -eq $d1 ] &&
			[ $(($(stats_sum lbe) - ss)) -eq $((d0 + d1)) ]
		check_err $? "qosctl stats -j disagrees with tc: queues $(stats_q lbe 0)/$(stats_q lbe 1)"
		[ $(($(sent 100:12) - p0 + $(sent 200:12) - p1)) -eq 0 ]
		check_err $? "lbe packets in the pip classes"
		log_test "IPv$fam: $NFLOWS flows over both queues ($d0 + $d1), exact counters"

		p0=$(sent 100:12) p1=$(sent 200:12)
		send $dst $PIP_TOS 8 10 7000
		[ $(($(sent 100:12) - p0 + $(sent 200:12) - p1)) -eq 80 ]
		check_err $? "pip: $(($(sent 100:12) - p0)) + $(($(sent 200:12) - p1)) packets, sent 80"
		log_test "IPv$fam: EF flows in the pip class of their queue"
	done

	# BPF counters per family: what the egress program classified.
	eg=$(qosctl_ns "$R" stats dev "$R_IF2" -j |
		jq '.classes[] | select(.name == "lbe") | [.egress.ipv4.packets, .egress.ipv6.packets]' -c)
	[ "$eg" = "[$((COUNT * (NFLOWS + 1))),$((COUNT * (NFLOWS + 1)))]" ]
	check_err $? "egress lbe packets per family: $eg"
	log_test "per-family egress counters exact over both queues"
}

# rate_sums: "LINK PIP LBE MAXQ" in bit/s, read back from the kernel: the
# sums over the queues of the link classes' rates, PIP's ceilings and
# LBE's rates, and the largest queue's link rate. tc prints rates rounded
# down, so a sum read is at most the true one.
rate_sums()
{
	tc_class_rates "$R" "$R_IF2" | awk '
	{ m = $1; sub(/^[0-9a-f]+:/, "", m) }
	m == "1" { link += $3; if ($3 > maxq) maxq = $3 }
	m == "12" { pip += $3 }
	m == "14" { lbe += $2 }
	END { printf "%d %d %d %d\n", link, pip, lbe, maxq }'
}

# iperf FAM DST PORT SECS ARGS...: an iperf3 server on h2 (one test) and
# its client on h1, both spawned as srvPORT and cliPORT.
iperf()
{
	local fam=$1 dst=$2 port=$3 secs=$4

	shift 4
	spawn_ns "$H2" "srv$port" iperf3 -s -1 -p "$port"
	wait_listen "$H2" t "$port" || return 1
	spawn_ns "$H1" "cli$port" iperf3 -"$fam" -c "$dst" -p "$port" -t "$secs" "$@"
}

iperf_end()
{
	local port

	for port in "$@"; do
		eval reap_pid "\$cli$port" "; reap_pid \$srv$port"
	done
}

# tcp_one FAM DST PORT: M, the Mbit/s one TCP flow from h1 gets through
# r's egress, over 3 s once it is under way.
tcp_one()
{
	M=0
	iperf "$1" "$2" "$3" 6 || return 1
	sleep 2
	M=$(mbps 3 100:1 200:1)
	iperf_end "$3"
}

# ef_flow FAM DST PORT Q: an EF flow of 15 Mbit/s from h1 on r's TX queue
# Q, its iperf3 started again until it is there (per-queue PIP counters).
# Source ports do not steer these: a packet a local socket sends carries
# the socket's random hash (sk_txhash) through veth into r, and the
# egress program spreads by that hash; a new socket draws a new one.
ef_flow()
{
	local fam=$1 dst=$2 port=$3 c=$(($4 + 1))00:12 try a

	for try in 1 2 3 4 5 6 7 8 9 10; do
		a=$(sent $c)
		iperf "$fam" "$dst" "$port" 15 -u -b 15M -l 1000 -S 0xb8 || return 1
		sleep 0.5
		[ "$(sent $c)" -gt "$a" ] && return 0
		eval stop_pid "\$cli$port" "; stop_pid \$srv$port"
	done
	return 1
}

# Without qosctl balance: the static split holds one flow to its queue's
# half, which is why the checks of balanced() can fail.
static_split()
{
	tcp_one 4 $H2_V4 5201
	xfail_on_slow check_err "$(fcmp "a <= b" "$M" 55; echo $?)" \
		"one TCP flow got $M Mbit/s of 100 with the static split"
	log_test "static split (no balance): one TCP flow at most 55% ($M Mbit/s)"
}

balanced_tcp()
{
	local fam=$1 dst=$2

	tcp_one "$fam" "$dst" 5201
	xfail_on_slow check_err "$(fcmp "a >= b" "$M" 85; echo $?)" "one TCP flow got $M Mbit/s of 100"
	log_test "IPv$fam: balanced, one TCP flow gets >= 85% of the link ($M Mbit/s)"
}

# Two EF flows of 15 Mbit/s, one in each queue: PIP's 20 Mbit/s together.
balanced_ef()
{
	local fam=$1 dst=$2 b0 b1 t0 m m0 m1

	ef_flow "$fam" "$dst" 5301 0 && ef_flow "$fam" "$dst" 5302 1
	check_err $? "no EF flow on queue 0 and one on queue 1 in 10 tries each"
	[ $RET -eq 0 ] || { log_test "IPv$fam: two EF flows in two queues"; return; }
	sleep 1
	b0=$(bytes 100:12) b1=$(bytes 200:12) t0=$(date +%s%N)
	sleep 3
	m0=$(since "$b0" "$t0" 100:12)
	m1=$(since "$b1" "$t0" 200:12)
	stop_pid "$cli5301"; stop_pid "$srv5301"; stop_pid "$cli5302"; stop_pid "$srv5302"
	fcmp "a >= b" "$m0" 5 && fcmp "a >= b" "$m1" 5
	check_err $? "not one flow in each queue: $m0 and $m1 Mbit/s in the pip classes"
	m=$(awk -v a="$m0" -v b="$m1" 'BEGIN { printf "%.2f", a + b }')
	xfail_on_slow check_err "$(fcmp "a >= b" "$m" 18.4 && fcmp "a <= b" "$m" 21.6; echo $?)" \
		"two EF flows got $m0 + $m1 = $m Mbit/s, PIP's cap is 20"
	log_test "IPv$fam: two EF flows in two queues get PIP's 20 Mbit/s +-8% ($m0 + $m1)"
}

# LBE (10 Mbit/s offered) under a BE flood over both queues: at least its
# 1% floor, and no more than the floor and an idle queue's minima (5%):
# BE, served first in a single tree, is served first across the queues.
balanced_lbe()
{
	local fam=$1 dst=$2 b0 l0 d0 t0 be lbe dropped

	iperf "$fam" "$dst" 5401 6 -u -b 60M -l 1400 -P 4 &&
		iperf "$fam" "$dst" 5402 6 -u -b 10M -l 1000 -S $LBE_TOS
	check_err $? "iperf3 did not start"
	sleep 2
	b0=$(bytes 100:13 200:13) l0=$(bytes 100:14 200:14) d0=$(drops 100:13 200:13)
	t0=$(date +%s%N)
	sleep 3
	dropped=$(($(drops 100:13 200:13) - d0))
	be=$(since "$b0" "$t0" 100:13 200:13)
	lbe=$(since "$l0" "$t0" 100:14 200:14)
	iperf_end 5401 5402
	xfail_on_slow check_err "$(fcmp "a >= b" "$be" 90 && [ $dropped -gt 0 ]; echo $?)" \
		"no BE flood held back: BE $be Mbit/s, $dropped BE drops (LBE $lbe)"
	xfail_on_slow check_err "$(fcmp "a >= b && a <= 5" "$lbe" 0.9; echo $?)" \
		"LBE got $lbe Mbit/s under a BE flood of $be, its floor is 1 (and 5 at most)"
	log_test "IPv$fam: LBE keeps its 1% floor under a BE flood ($lbe Mbit/s, BE $be)"
}

balance_stopped()
{
	local rc

	kill -TERM "$BAL"
	reap_pid "$BAL"
	rc=$?
	[ $rc -eq 0 ] && grep -q "periods balanced" "$TMP/BAL.log"
	check_err $? "balance exited with $rc: $(tail -3 "$TMP/BAL.log")"
	class_line 100:1 | grep -q " rate 50Mbit ceil 50Mbit " &&
		class_line 200:12 | grep -q " rate 10Mbit ceil 10Mbit " &&
		class_line 200:14 | grep -q " rate 500Kbit ceil 50Mbit "
	check_err $? "static split not put back: $(class_line 100:1) / $(class_line 200:12)"
	qosctl_ns "$R" show dev "$R_IF2" | grep -q "^queues 2: .*(static split: no qosctl balance runs)" &&
		[ "$(qosctl_ns "$R" show dev "$R_IF2" -j | jq .balance)" = null ]
	check_err $? "show after balance: $(qosctl_ns "$R" show dev "$R_IF2" | grep ^queues)"
	[ -z "$(dev_files "$R" "$R_IF2" | grep balance)" ]
	check_err $? "status file left: $(dev_files "$R" "$R_IF2")"
	log_test "SIGTERM: static split put back, show says so, no file left"
}

# Every packet through while the classes change every 10 ms under a TCP
# flow: a class change keeps the class's queue.
balanced_no_loss()
{
	local fam dst a0 a1 d0 changes

	spawn_ns "$R" BAL10 "$QOSCTL" balance dev "$R_IF2" period 10 -j
	iperf 4 $H2_V4 5501 4
	check_err $? "iperf3 did not start"
	sleep 0.5
	for fam in 4 6; do
		[ $fam = 4 ] && dst=$H2_V4 || dst=$H2_V6
		a0=$(sent 100:14) a1=$(sent 200:14) d0=$(drops 100:14 200:14)
		send $dst $LBE_TOS $NFLOWS $COUNT 8000
		[ $(($(sent 100:14) - a0 + $(sent 200:14) - a1)) -eq $((NFLOWS * COUNT)) ] &&
			[ "$(drops 100:14 200:14)" -eq "$d0" ]
		check_err $? "IPv$fam: $(($(sent 100:14) - a0 + $(sent 200:14) - a1)) of $((NFLOWS * COUNT)) lbe packets sent, $(($(drops 100:14 200:14) - d0)) dropped"
	done
	iperf_end 5501
	kill -TERM "$BAL10"
	reap_pid "$BAL10"
	changes=$(jq .class_changes "$TMP/BAL10.log")
	[ "${changes:-0}" -ge 20 ]
	check_err $? "the balancer changed ${changes:-no} classes meanwhile: $(tail -2 "$TMP/BAL10.log")"
	log_test "IPv4 and IPv6: every packet counted while $changes class changes are made"
}

# qosctl balance running, its rates read back every 50 ms meanwhile.
balanced()
{
	local fam dst sampler max

	spawn_ns "$R" BAL "$QOSCTL" balance dev "$R_IF2" period 100
	until_ok 5 eval 'qosctl_ns "$R" show dev "$R_IF2" | grep -q "shared by demand by qosctl balance (pid $BAL, every 100 ms)"'
	check_err $? "show: $(qosctl_ns "$R" show dev "$R_IF2" | grep ^queues)"
	[ "$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -c .balance)" = "{\"pid\":$BAL,\"period_ms\":100}" ]
	check_err $? "show -j: $(qosctl_ns "$R" show dev "$R_IF2" -j | jq -c .balance)"
	qosctl_ns "$R" balance dev "$R_IF2" 2> "$TMP/err"
	check_fail $? "a second balance for the device started"
	grep -q "already runs for it (pid $BAL)" "$TMP/err"
	check_err $? "unclear error: $(cat "$TMP/err")"
	log_test "qosctl balance runs, show says so, a second one is refused"

	( while :; do rate_sums; sleep 0.05; done ) > "$TMP/sums" &
	sampler=$!
	defer kill "$sampler"
	for fam in 4 6; do
		[ $fam = 4 ] && dst=$H2_V4 || dst=$H2_V6
		balanced_tcp $fam $dst
		balanced_ef $fam $dst
		balanced_lbe $fam $dst
	done
	kill "$sampler"
	max=$(awk '{ for (i = 1; i <= 4; i++) if ($i > m[i]) m[i] = $i }
		END { print m[1], m[2], m[3], m[4], NR }' "$TMP/sums")
	set -- $max
	[ "$1" -le 100000000 ] && [ "$2" -le 20000000 ] && [ "$3" -le 1000000 ]
	check_err $? "a sum over the queues exceeded the link's: link $1, pip $2, lbe $3 bit/s"
	[ "$5" -ge 100 ] && [ "$4" -ge 80000000 ]
	check_err $? "the rates were not read, or never moved: $5 readings, largest queue $4 bit/s"
	log_test "sums of the queues' rates read back $5 times: link <= 100mbit, pip <= 20, lbe <= 1"
	balance_stopped
}

dry_run()
{
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 200mbit queues 2 --dry-run > "$TMP/dry"
	check_err $? "dry run"
	grep -q "^tc qdisc replace dev $R_IF2 root handle 1: mq$" "$TMP/dry" &&
		grep -q "^tc qdisc replace dev $R_IF2 parent 1:2 handle 200: htb default 13" "$TMP/dry" &&
		grep -q "parent 200:1 classid 200:12 htb rate 20000000bit ceil 20000000bit" "$TMP/dry"
	check_err $? "dry run does not print the per-queue trees: $(head -5 "$TMP/dry")"
	log_test "--dry-run prints mq and each queue's tree"
}

reapply_in_place()
{
	local h100 b0

	h100=$(tc -n "$R" -j qdisc show dev "$R_IF2" | jq -r '.[] | select(.handle == "100:") | .kind')
	b0=$(sent 100:14)
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 200mbit queues 2
	check_err $? "re-apply at 200mbit"
	class_line 200:12 | grep -q " rate 20Mbit ceil 20Mbit "
	check_err $? "200:12 not at 20mbit after the re-apply: $(class_line 200:12)"
	[ "$h100" = htb ] && [ "$(sent 100:14)" -eq "$b0" ]
	check_err $? "the re-apply rebuilt the tree (counters $b0 -> $(sent 100:14))"
	log_test "re-apply at another rate changes each queue's classes in place"
}

queues_one()
{
	QOSCTL_FAIL=attach qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 200mbit queues 1 2>/dev/null
	check_fail $? "an apply told to fail succeeded"
	[ "$(tc -n "$R" -j qdisc show dev "$R_IF2" | jq -r '.[] | select(.root == true) | .kind')" = mq ] &&
		[ "$(sent 200:12)" != -1 ]
	check_err $? "a failed apply did not leave the mq tree"

	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit queues 1
	check_err $? "apply queues 1"
	[ "$(tc -n "$R" -j qdisc show dev "$R_IF2" | jq -r '.[] | select(.root == true) | "\(.kind) \(.handle)"')" = "htb 1:" ] &&
		[ "$(sent 1:12)" != -1 ] && [ "$(sent 100:12)" = -1 ]
	check_err $? "queues 1 is not the single tree htb 1:"
	QOSCTL_FAIL=tree qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit queues 2 2>/dev/null
	check_fail $? "an apply told to fail succeeded"
	[ "$(tc -n "$R" -j qdisc show dev "$R_IF2" | jq -r '.[] | select(.root == true) | "\(.kind) \(.handle)"')" = "htb 1:" ] &&
		[ "$(sent 1:12)" != -1 ] && [ "$(sent 100:12)" = -1 ]
	check_err $? "a failed mq apply did not roll back to htb 1:"
	log_test "queues 1 is the single tree; failed applies roll back either way"
}

queues_auto()
{
	printf '[profile]\nqueues = auto\ndefault = be\n[class be]\nid = 3\nrate = 100%%\n' > "$TMP/auto.conf"
	qosctl_ns "$R" apply "$TMP/auto.conf" dev "$R_IF2" rate 100mbit
	check_err $? "apply queues = auto"
	[ "$(qosctl_ns "$R" show dev "$R_IF2" -j | jq .queues)" = 2 ] && [ "$(sent 200:13)" != -1 ]
	check_err $? "queues = auto did not build 2 trees"
	log_test "queues = auto in a profile takes the device's 2 TX queues"
}

refused()
{
	tc -n "$R" qdisc show dev "$R_IF2" > "$TMP/before"
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit queues 3 2> "$TMP/err"
	check_fail $? "queues 3 on a 2-queue device accepted"
	grep -q "queues 3: the device has 2 TX queues, not 3" "$TMP/err"
	check_err $? "unclear error: $(cat "$TMP/err")"
	qosctl_ns "$R" apply tbf-shaper dev "$R_IF2" rate 100mbit queues 2 2> "$TMP/err"
	check_fail $? "queues 2 with a TBF profile accepted"
	grep -q "queues 2: a tree per TX queue is built for scheduler htb only, not tbf" "$TMP/err"
	check_err $? "unclear error: $(cat "$TMP/err")"
	printf '[profile]\nqueues = 0\ndefault = be\n[class be]\nid = 3\nrate = 100%%\n' > "$TMP/bad.conf"
	qosctl_ns "$R" apply "$TMP/bad.conf" dev "$R_IF2" rate 100mbit 2> "$TMP/err"
	check_fail $? "queues = 0 accepted"
	grep -q "bad.conf:2: queues: '0' is not auto or a number of TX queues" "$TMP/err"
	check_err $? "unclear error: $(cat "$TMP/err")"
	qosctl_ns "$R" balance dev "$R_IF2" period 5 2> "$TMP/err"
	check_fail $? "balance period 5 accepted"
	grep -q "balance: period '5': not a number of milliseconds (10-10000)" "$TMP/err"
	check_err $? "unclear error: $(cat "$TMP/err")"
	tc -n "$R" qdisc show dev "$R_IF2" | diff -q "$TMP/before" - >/dev/null
	check_err $? "a refused apply changed the qdiscs"
	log_test "too many queues, TBF, a bad value, a bad period: refused by name, device unchanged"
}

remove()
{
	qosctl_ns "$R" remove dev "$R_IF2"
	check_err $? "remove"
	[ "$(tc -n "$R" qdisc show dev "$R_IF2" root)" = "$root_before" ]
	check_err $? "root after remove: $(tc -n "$R" qdisc show dev "$R_IF2" root), before: $root_before"
	[ -z "$(dev_files "$R" "$R_IF2")" ]
	check_err $? "files left in /run/qosctl: $(dev_files "$R" "$R_IF2")"
	log_test "remove restores the device's own root qdisc"
}

ALL_TESTS="tree show_queues flows static_split balanced balanced_no_loss dry_run reapply_in_place queues_one queues_auto refused remove"
tests_run
exit $EXIT_STATUS
