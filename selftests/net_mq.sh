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
#     in a profile (file, line, key), each leaving the device as it was; a
#     failed apply rolls back to the single tree;
#   - remove restores the device's own root qdisc and leaves no files.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

NFLOWS=16		# flows in the spread check: all in one queue with p = 2^-15
COUNT=40		# packets per flow
LBE_TOS=0x20		# CS1: lbe, a class nothing else uses
PIP_TOS=0xb8		# EF

require_root
require_cmd tc jq python3
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
	tc -n "$R" qdisc show dev "$R_IF2" | diff -q "$TMP/before" - >/dev/null
	check_err $? "a refused apply changed the qdiscs"
	log_test "too many queues, TBF, a bad value: refused by name, device unchanged"
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

ALL_TESTS="tree show_queues flows dry_run reapply_in_place queues_one queues_auto refused remove"
tests_run
exit $EXIT_STATUS
