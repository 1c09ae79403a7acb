#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A flow-label rule steers one IPv6 flow into PIP while an identical flow
# (same addresses, ports and DSCP 0) with another label stays in BE, with
# exact per-class counters; deleting the rule live sends the flow back to
# BE without touching the programs.
#
#   h1                         r                           h2
#   udp_send ---- $R_IF1 [ingress: pip-20pct   $R_IF2 [egress: pip-20pct,
#   label 0x12345         + rule flowlabel      HTB, class from the
#   label 0x54321           0x12345 -> pip]     mark] ---------- sink
#
# Counted at r's ingress on $R_IF1 (where the rule classifies) and at r's
# egress on $R_IF2 (where the class picks the HTB class). Both also see a
# little IPv6 of their own (MLD), so BE is compared as a difference over
# each flow, taken once the counters are quiet.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

COUNT=200
LABEL=0x12345
OTHER=0x54321
UDP_SEND=${UDP_SEND:-${TEST_OUTPUT:-$(dirname "$(readlink -f "$0")")/../.output/selftests}/udp_send}

require_root
require_cmd jq nsenter tc
if [ ! -x "$UDP_SEND" ]; then
	echo "SKIP: $UDP_SEND not built (make)"
	exit $ksft_skip
fi
topo_h1_r_h2_applied pip-20pct 100mbit
qosctl_ns "$R" rule add dev "$R_IF1" name steer flowlabel $LABEL class pip
check_err $? "rule add"
log_setup "apply pip-20pct on r, rule flowlabel $LABEL class pip"

# ctr DEV DIR CLASS: IPv6 packets of CLASS in direction DIR on DEV.
ctr()
{
	qosctl_ns "$R" stats dev "$1" -j |
		jq -r --arg c "$3" --arg d "$2" '.classes[] | select(.name == $c) | .[$d].ipv6.packets'
}

qdisc_sent()
{
	qosctl_ns "$R" stats dev "$1" -j |
		jq -r --arg c "$2" '.classes[] | select(.name == $c) | .qdisc.sent_packets // 0'
}

snapshot()
{
	echo "$(ctr "$R_IF1" ingress pip) $(ctr "$R_IF1" ingress be)" \
	     "$(ctr "$R_IF2" egress pip) $(ctr "$R_IF2" egress be) $(qdisc_sent "$R_IF2" pip)"
}

# Counters that do not move for a second: the links' own MLD is over.
quiet_snapshot()
{
	local a b i

	a=$(snapshot)
	for i in 1 2 3 4 5 6 7 8 9 10; do
		sleep 1
		b=$(snapshot)
		[ "$a" = "$b" ] && break
		a=$b
	done
	echo "$b"
}

# send LABEL: COUNT datagrams h1 -> h2, same ports every time.
send()
{
	in_ns "$H1" "$UDP_SEND" "$H2_V6" 9 $COUNT "$1" 0 40000
}

# deltas BEFORE AFTER -> "pip_in be_in pip_out be_out pip_qdisc"
deltas()
{
	local -a b=($1) a=($2)
	local i out=

	for i in 0 1 2 3 4; do
		out+="$((a[i] - b[i])) "
	done
	echo $out
}

rule_hits()
{
	qosctl_ns "$R" rule list dev "$R_IF1" -j | jq -r '.[] | select(.name == "steer") | .packets'
}

# labelled LABEL: COUNT datagrams with LABEL between two quiet snapshots;
# DELTA is their difference ("pip_in be_in pip_out be_out pip_qdisc"),
# HITS the rule's hits before.
labelled()
{
	local before after

	before=$(quiet_snapshot)
	HITS=$(rule_hits)
	send "$1"
	check_err $? "udp_send"
	after=$(quiet_snapshot)
	DELTA=$(deltas "$before" "$after")
}

# The labelled flow goes to PIP at both ends of r.
label_steers()
{
	local hits

	labelled $LABEL
	hits=$HITS
	set -- $DELTA
	[ "$1" -eq $COUNT ]; check_err $? "ingress pip +$1, expected +$COUNT"
	[ "$2" -eq 0 ]; check_err $? "ingress be +$2, expected +0"
	[ "$(rule_hits)" -eq $((hits + COUNT)) ]; check_err $? "rule hits $(rule_hits), expected $((hits + COUNT))"
	log_test "flow label $LABEL classified PIP at r ingress ($1 packets, rule hits)"
	[ "$3" -eq $COUNT ]; check_err $? "egress pip +$3, expected +$COUNT"
	[ "$4" -eq 0 ]; check_err $? "egress be +$4, expected +0"
	[ "$5" -eq $COUNT ]; check_err $? "HTB pip class sent +$5, expected +$COUNT"
	log_test "flow label $LABEL queued in PIP at r egress ($5 packets through HTB pip)"
}

# The same flow with another label stays BE.
other_label()
{
	local hits

	labelled $OTHER
	hits=$HITS
	set -- $DELTA
	[ "$1" -eq 0 ]; check_err $? "ingress pip +$1, expected +0"
	[ "$2" -eq $COUNT ]; check_err $? "ingress be +$2, expected +$COUNT"
	[ "$3" -eq 0 ]; check_err $? "egress pip +$3, expected +0"
	[ "$4" -eq $COUNT ]; check_err $? "egress be +$4, expected +$COUNT"
	[ "$(rule_hits)" -eq "$hits" ]; check_err $? "rule hits $(rule_hits), expected $hits"
	log_test "identical flow with flow label $OTHER stays BE (in and out)"
}

# Deleted live, the rule steers nothing and the program stays.
rule_deleted()
{
	local ids_before ids_after

	ids_before=$(in_ns "$R" tc -j filter show dev "$R_IF1" ingress | jq -c '[.[].options.prog.id // empty]')
	qosctl_ns "$R" rule del dev "$R_IF1" name steer
	check_err $? "rule del"
	labelled $LABEL
	set -- $DELTA
	[ "$1" -eq 0 ]; check_err $? "ingress pip +$1, expected +0"
	[ "$2" -eq $COUNT ]; check_err $? "ingress be +$2, expected +$COUNT"
	ids_after=$(in_ns "$R" tc -j filter show dev "$R_IF1" ingress | jq -c '[.[].options.prog.id // empty]')
	[ "$ids_before" = "$ids_after" ]; check_err $? "programs changed: $ids_before -> $ids_after"
	log_test "rule deleted live: flow label $LABEL back to BE, same program"
}

ALL_TESTS="label_steers other_label rule_deleted"
tests_run
exit $EXIT_STATUS
