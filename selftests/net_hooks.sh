#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# One hook where one is enough (Documentation/design.rst, "Hooks"): a
# profile with no policer and no rule runs the egress program alone.
#
#   h1 ---------- $R_IF1 [r] $R_IF2 ---------- h2
#                 pip-5pct      pip-5pct
#                 (egress only) (egress only)
#      ping -Q 0xb8, v4 and v6, h1 -> h2
#
# a. pip-5pct: no filter at qosctl's ingress slot, show and show -j say
#    so, --dry-run too; the echo requests are counted exactly once, at
#    $R_IF2's egress (pip, per family, packets and bytes), nothing at any
#    ingress.
# b. $R_IF1 pip-5pct -> pip-20pct -> pip-5pct (1 -> 2 -> 1 hooks, the
#    policer of pip-20pct needs ingress) under PIP pings every 2 ms: none
#    lost; $R_IF2's egress counted every request once; $R_IF1's ingress
#    counted some (while it ran), never more than were sent.
# c. A rule added on an egress-only device brings the ingress program (the
#    rule is this device's), deleting it takes it away again.
# d. Rollback: an apply that goes from 2 hooks to 1 and fails (QOSCTL_FAIL
#    at cfg, attach, prune) leaves both programs, the same ids, and
#    pip-20pct; one from 1 to 2 that fails leaves the egress program alone.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
require_root
require_cmd ping jq

PINGS=50
# 10 s at 2 ms, 60 s under emulation: the two applies must end before the
# pings do (checked), or the switch was not under traffic.
SWITCH_PINGS=5000
[ "$KSFT_MACHINE_SLOW" = yes ] && SWITCH_PINGS=30000

topo_h1_r_h2_applied pip-5pct 100mbit
tmp_setup
tmp=$TMP

# ctr JSON DIR FAMILY FIELD: the pip counter of `stats -j`.
ctr()
{
	jq -r --arg d "$2" --arg f "$3" --arg k "$4" \
		'.classes[] | select(.name == "pip") | .[$d][$f][$k]' <<<"$1"
}

# ingress_sum JSON: every class and unparsed packet counted at ingress.
ingress_sum()
{
	jq '[(.classes[].ingress | .. | .packets? // empty), (.unparsed.ingress | .. | .packets? // empty)] | add // 0' <<<"$1"
}

# egress_only DEV: nothing at the ingress slot, the egress program there,
# and show agreeing.
egress_only()
{
	local p

	[ -z "$(slot_prog "$R" "$1" ingress)" ] && [ -n "$(slot_prog "$R" "$1" egress)" ] ||
		{ echo "$1: tc ingress '$(slot_prog "$R" "$1" ingress)' egress '$(slot_prog "$R" "$1" egress)'"; return 1; }
	p=$(shown_progs "$R" "$1")
	[ "$p" = "- $(slot_prog "$R" "$1" egress)" ] || { echo "$1: show -j programs '$p'"; return 1; }
	qosctl_ns "$R" show dev "$1" | grep -q "^programs: egress id [0-9]* alone" ||
		{ echo "$1: show does not say the egress program runs alone"; return 1; }
}

both_hooks()
{
	[ -n "$(slot_prog "$R" "$1" ingress)" ] && [ -n "$(slot_prog "$R" "$1" egress)" ] &&
		[ "$(shown_progs "$R" "$1")" = "$(slot_prog "$R" "$1" ingress) $(slot_prog "$R" "$1" egress)" ] ||
		{ echo "$1: tc '$(slot_prog "$R" "$1" ingress)/$(slot_prog "$R" "$1" egress)', show '$(shown_progs "$R" "$1")'"; return 1; }
}

# pip-5pct, as setup applied it: the egress program alone.
egress_alone()
{
	local dev out

	for dev in "$R_IF1" "$R_IF2"; do
		out=$(egress_only "$dev")
		check_err $? "$out"
	done
	log_test "pip-5pct: the egress program alone on both devices, show agrees"
}

dry_run()
{
	local out

	out=$(qosctl_ns "$R" apply pip-5pct dev "$R_IF1" rate 100mbit --dry-run)
	grep -q "^# no ingress filter" <<<"$out" && ! grep -q "ingress pref" <<<"$out"
	check_err $? "pip-5pct --dry-run: $(grep -i ingress <<<"$out")"
	out=$(qosctl_ns "$R" apply pip-20pct dev "$R_IF1" rate 100mbit --dry-run)
	grep -q "ingress pref 81 handle 0x51: bpf qos_ingress" <<<"$out"
	check_err $? "pip-20pct --dry-run names no ingress filter"
	log_test "--dry-run: no ingress filter for pip-5pct, one for pip-20pct"
}

one_hook_counters()
{
	local before1 before2 after1 after2 fam dst tx rx frame got bytes d a b

	# a. Exact counters with one hook per device.
	before1=$(qosctl_ns "$R" stats dev "$R_IF1" -j) && before2=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
	for fam in 4 6; do
		dst=$H2_V4
		[ $fam = 6 ] && dst=$H2_V6
		read -r tx rx < <(in_ns "$H1" ping -$fam -n -q -c $PINGS -i 0.01 -W 2 -Q 0xb8 "$dst" |
			ping_summary)
		[ "$tx" -eq $PINGS ] && [ "$rx" -eq $PINGS ]
		check_err $? "IPv$fam: $rx of $tx answered"
	done
	after1=$(qosctl_ns "$R" stats dev "$R_IF1" -j) && after2=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
	for fam in 4 6; do
		frame=$((14 + (fam == 4 ? 20 : 40) + 64))
		got=$(($(ctr "$after2" egress ipv$fam packets) - $(ctr "$before2" egress ipv$fam packets)))
		bytes=$(($(ctr "$after2" egress ipv$fam bytes) - $(ctr "$before2" egress ipv$fam bytes)))
		[ "$got" -eq $PINGS ] && [ "$bytes" -eq $((PINGS * frame)) ]
		check_err $? "$R_IF2 egress pip ipv$fam moved by $got packets, $bytes bytes;" \
			"want $PINGS, $((PINGS * frame))"
	done
	for d in 1 2; do
		eval "b=\$before$d a=\$after$d"
		[ "$(ingress_sum "$a")" -eq 0 ] && [ "$(ingress_sum "$b")" -eq 0 ]
		check_err $? "dev $d: ingress counted $(ingress_sum "$a") packets with no ingress program"
	done
	log_test "one hook: $PINGS requests per family counted once, at egress; nothing at ingress"
}

switch_under_pings()
{
	local before1 before2 after1 after2 fam dst p4 p6 out sent recv eg in

	# b. 1 -> 2 -> 1 hooks on $R_IF1 under PIP traffic.
	before1=$(qosctl_ns "$R" stats dev "$R_IF1" -j) && before2=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
	for fam in 4 6; do
		dst=$H2_V4
		[ $fam = 6 ] && dst=$H2_V6
		in_ns "$H1" ping -$fam -q -n -Q 0xb8 -i 0.002 -c $SWITCH_PINGS -W 1 "$dst" \
			>"$tmp/v$fam" 2>&1 &
		eval "p$fam=\$!"
	done
	defer kill $p4 $p6
	sleep 0.3
	out=$(qosctl_ns "$R" apply pip-20pct dev "$R_IF1" rate 100mbit 2>&1)
	check_err $? "apply pip-20pct: $out"
	out=$(both_hooks "$R_IF1")
	check_err $? "$out"
	sleep 0.3
	out=$(qosctl_ns "$R" apply pip-5pct dev "$R_IF1" rate 100mbit 2>&1)
	check_err $? "apply pip-5pct: $out"
	out=$(egress_only "$R_IF1")
	check_err $? "$out"
	kill -0 $p4 2>/dev/null && kill -0 $p6 2>/dev/null
	check_err $? "the pings ended before the switches did"
	wait $p4 $p6
	after1=$(qosctl_ns "$R" stats dev "$R_IF1" -j) && after2=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
	for fam in 4 6; do
		read -r sent recv < <(ping_summary "$tmp/v$fam")
		[ "$sent" -eq $SWITCH_PINGS ] && [ "$recv" -eq "$sent" ]
		check_err $? "IPv$fam: $(cat "$tmp/v$fam")"
		eg=$(($(ctr "$after2" egress ipv$fam packets) - $(ctr "$before2" egress ipv$fam packets)))
		in=$(($(ctr "$after1" ingress ipv$fam packets) - $(ctr "$before1" ingress ipv$fam packets)))
		[ "$eg" -eq "$sent" ] && [ "$in" -gt 0 ] && [ "$in" -lt "$sent" ]
		check_err $? "IPv$fam: $sent sent; $R_IF2 egress counted $eg (want all)," \
			"$R_IF1 ingress $in (want some, not all)"
	done
	log_test "1 -> 2 -> 1 hooks under PIP pings: none lost, each counted once at egress"
}

rule_hooks()
{
	local out

	# c. A rule brings the ingress program, and takes it away.
	out=$(qosctl_ns "$R" rule add dev "$R_IF1" name r1 src 2001:db8:77::/48 class lbe 2>&1)
	check_err $? "rule add: $out"
	out=$(both_hooks "$R_IF1")
	check_err $? "after rule add: $out"
	out=$(qosctl_ns "$R" rule del dev "$R_IF1" name r1 2>&1)
	check_err $? "rule del: $out"
	out=$(egress_only "$R_IF1")
	check_err $? "after rule del: $out"
	log_test "rule add attaches the ingress program, rule del detaches it"
}

# fails_back FROM TO HOOKS: with FROM applied on $R_IF1, an apply of TO
# failed at each of cfg, attach and prune leaves FROM, its programs, and
# HOOKS (egress_only or both_hooks) true.
fails_back()
{
	local from=$1 to=$2 hooks=$3 was step out

	out=$(qosctl_ns "$R" apply "$from" dev "$R_IF1" rate 100mbit 2>&1) ||
		{ echo "apply $from: $out"; return 1; }
	was=$(shown_progs "$R" "$R_IF1")
	for step in cfg attach prune; do
		QOSCTL_FAIL=$step qosctl_ns "$R" apply "$to" dev "$R_IF1" rate 100mbit 2>/dev/null &&
			{ echo "QOSCTL_FAIL=$step: the apply of $to succeeded"; return 1; }
		out=$($hooks "$R_IF1") || { echo "QOSCTL_FAIL=$step, $from -> $to: $out"; return 1; }
		[ "$(shown_progs "$R" "$R_IF1")" = "$was" ] &&
			[ "$(qosctl_ns "$R" show dev "$R_IF1" -j | jq -r .profile)" = "$from" ] ||
			{ echo "QOSCTL_FAIL=$step: programs $(shown_progs "$R" "$R_IF1"), want $was"; return 1; }
	done
}

# d. Rollback restores the hook set it found.
rollback()
{
	local out

	out=$(fails_back pip-20pct pip-5pct both_hooks)
	check_err $? "$out"
	log_test "a failed apply from 2 hooks to 1 leaves both, the same programs"
	out=$(fails_back pip-5pct pip-20pct egress_only)
	check_err $? "$out"
	log_test "a failed apply from 1 hook to 2 leaves the egress program alone"
}

ALL_TESTS="egress_alone dry_run one_hook_counters switch_under_pings rule_hooks rollback"
tests_run
exit $EXIT_STATUS
