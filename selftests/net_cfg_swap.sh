#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The configuration is flipped when, and only when, what the programs read
# changes (Documentation/design.rst, "The configuration, switched whole",
# "Two slots"): a re-apply that changes only the link rate (meta, read by
# qosctl and the qdisc tree alone) leaves the generation of qos_cfg_gen as
# it is, and shows the new rate; one that moves a DSCP to another class
# flips exactly once, and packets of both families see the new mapping at
# once, counted exactly by the per-class counters. Two such re-applies in a
# row both land: the second rewrites the slot the first left, byte for
# byte what was active before. A failed one is undone by a second flip back
# to the same bytes.
#
#   h1 ---- r ($R_IF2: the profile, re-applied) ---- h2
#      ping -Q DSCP, v4 and v6, to h2: counted at $R_IF2's egress

source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq ping bpftool
require_qosctl

tmp_setup
topo_setup
DEV=$R_IF2
N=20

# P0 maps DSCP 8 to lbe; P1 maps DSCP 10 there instead (DSCP 8 falls to be).
P0=$TMP/p0
P1=$TMP/p1
cp "$(dirname "$(readlink -f "$0")")/../tc-profiles/pip-20pct" "$P0"
sed 's/^dscp = 8$/dscp = 10/' "$P0" >"$P1"

gen()
{
	cfg_gen "$R" "$DEV"
}

# active: the bytes of the active slot.
active()
{
	cfg_slot "$R" "$DEV" $(($(gen) & 1))
}

# lbe FAM: packets of FAM (ipv4, ipv6) counted in lbe at $DEV's egress.
lbe()
{
	qosctl_ns "$R" stats dev "$DEV" -j |
		jq ".classes[] | select(.name == \"lbe\") | .egress.$1.packets"
}

shown_rate()
{
	qosctl_ns "$R" show dev "$DEV" -j | jq -r '.rate_bps'
}

# pings_in_lbe TOS WANT: N pings of each family with TOS from h1 to h2;
# WANT of them (N or 0) counted in lbe, IPv4 and IPv6 each.
pings_in_lbe()
{
	local tos=$1 want=$2 fam b a

	for fam in ipv4 ipv6; do
		b=$(lbe $fam)
		if [ $fam = ipv4 ]; then
			in_ns "$H1" ping -4 -q -n -Q "$tos" -i 0.01 -c $N -W 1 "$H2_V4" >/dev/null
		else
			in_ns "$H1" ping -6 -q -n -Q "$tos" -i 0.01 -c $N -W 1 "$H2_V6" >/dev/null
		fi
		check_err $? "$fam pings with TOS $tos not all answered"
		a=$(lbe $fam)
		[ $((a - b)) -eq "$want" ]
		check_err $? "$fam: $((a - b)) of $N pings with TOS $tos in lbe, want $want"
	done
}

# p1_mapping: packets classified by $P1: DSCP 10 in lbe, DSCP 8 not.
p1_mapping()
{
	pings_in_lbe 0x20 0
	pings_in_lbe 0x28 $N
}

# kept_shown GEN BPS WHAT: the generation is still GEN and qosctl show reads
# BPS, after WHAT.
kept_shown()
{
	local now

	now=$(gen)
	[ "$1" = "$now" ]
	check_err $? "$3: generation $1 -> $now"
	[ "$(shown_rate)" = "$2" ]
	check_err $? "$3: qosctl show reads rate_bps $(shown_rate), want $2"
}

rate_only()
{
	local g0

	RET=0
	qosctl_ns "$R" apply "$P0" dev "$DEV" rate 100mbit
	check_err $? "apply $P0"
	g0=$(gen)
	[ "$g0" -ge 1 ]
	check_err $? "generation $g0 after an apply, want >= 1"
	pings_in_lbe 0x20 $N
	qosctl_ns "$R" apply "$P0" dev "$DEV" rate 200mbit
	check_err $? "re-apply at 200mbit"
	kept_shown "$g0" 200000000 "rate-only re-apply"
	pings_in_lbe 0x20 $N
	log_test "rate-only re-apply: generation $g0 kept, rate shown 200mbit, DSCP 8 still lbe (v4, v6)"
}

dscp_change()
{
	local g0 g1 g2

	RET=0
	g0=$(gen)
	qosctl_ns "$R" apply "$P1" dev "$DEV" rate 200mbit
	check_err $? "apply $P1"
	g1=$(gen)
	qosctl_ns "$R" apply "$P1" dev "$DEV" rate 100mbit
	check_err $? "re-apply $P1 at 100mbit"
	g2=$(gen)
	[ "$g1" -eq $((g0 + 1)) ] && [ "$g1" = "$g2" ]
	check_err $? "generations $g0 -> $g1 -> $g2: want one flip, at the DSCP change"
	p1_mapping
	log_test "DSCP change: flipped once ($g0 -> $g1), DSCP 8 left lbe, DSCP 10 in it (v4, v6)"
}

# Two data-path re-applies in a row, the second at once: both flip, and the
# second writes the slot the first left (no program may read it by then).
back_to_back()
{
	local g0 b1 b0

	RET=0
	g0=$(gen)
	b1=$(active)
	qosctl_ns "$R" apply "$P0" dev "$DEV" rate 100mbit
	check_err $? "apply $P0"
	b0=$(active)
	qosctl_ns "$R" apply "$P1" dev "$DEV" rate 100mbit
	check_err $? "apply $P1 right after"
	[ "$(gen)" -eq $((g0 + 2)) ]
	check_err $? "generation $g0 -> $(gen), want $((g0 + 2))"
	[ "$b0" != "$b1" ] && [ "$(active)" = "$b1" ] && [ "$(cfg_slot "$R" "$DEV" $((g0 & 1)))" = "$b1" ] &&
		[ "$(cfg_slot "$R" "$DEV" $(((g0 + 1) & 1)))" = "$b0" ]
	check_err $? "slots: want $P1's bytes active again, $P0's in the other"
	p1_mapping
	log_test "two DSCP changes in a row: flipped twice, slots hold both values, newest used (v4, v6)"
}

# A re-apply that fails after its configuration step (QOSCTL_FAIL=cfg)
# rolls back: the meta (the rate shown) and the data path (DSCP 10 in lbe)
# are as before; a rate-only one flips nothing, a DSCP change flips and
# flips back to the same bytes.
failed_reapply()
{
	local g0 b0 out

	RET=0
	g0=$(gen)
	b0=$(active)
	out=$(QOSCTL_FAIL=cfg qosctl_ns "$R" apply "$P1" dev "$DEV" rate 300mbit 2>&1)
	check_fail $? "QOSCTL_FAIL=cfg rate-only apply succeeded: $out"
	kept_shown "$g0" 100000000 "rolled-back rate-only apply"
	out=$(QOSCTL_FAIL=cfg qosctl_ns "$R" apply "$P0" dev "$DEV" rate 100mbit 2>&1)
	check_fail $? "QOSCTL_FAIL=cfg DSCP change succeeded: $out"
	[ "$(gen)" -eq $((g0 + 2)) ] && [ "$(active)" = "$b0" ]
	check_err $? "generation $g0 -> $(gen), want $((g0 + 2)) and the bytes before"
	p1_mapping
	log_test "failed re-applies rolled back: rate, configuration bytes and DSCP mapping kept (v4, v6)"
}

ALL_TESTS="rate_only dscp_change back_to_back failed_reapply"
tests_run
exit $EXIT_STATUS
