#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The configuration is swapped when, and only when, what the programs read
# changes (Documentation/design.rst, "The configuration, switched whole"):
# a re-apply that changes only the link rate (meta, read by qosctl and the
# qdisc tree alone) keeps the inner map in the slot of qos_cfg, and shows
# the new rate; one that moves a DSCP to another class swaps exactly once,
# and packets of both families see the new mapping at once, counted
# exactly by the per-class counters.
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

# cfg_inner: id of the inner map in the slot of the qos_cfg map of the
# programs at qosctl's egress filter on $DEV.
cfg_inner()
{
	local prog m outer

	prog=$(slot_prog "$R" "$DEV" egress)
	for m in $(bpftool prog show id "$prog" -j | jq '.map_ids[]'); do
		outer=$(bpftool map show id "$m" -j | jq -r 'select(.name == "qos_cfg") | .id')
		[ -n "$outer" ] && break
	done
	bpftool map lookup id "$outer" key 0 0 0 0 -j |
		jq -r '.value | map(ltrimstr("0x")) | reverse | join("") | "0x" + .' |
		xargs printf '%d\n'
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

# kept_shown INNER BPS WHAT: the inner map is still INNER and qosctl show
# reads BPS, after WHAT.
kept_shown()
{
	local now

	now=$(cfg_inner)
	[ "$1" = "$now" ]
	check_err $? "$3: inner map $1 -> $now"
	[ "$(shown_rate)" = "$2" ]
	check_err $? "$3: qosctl show reads rate_bps $(shown_rate), want $2"
}

rate_only()
{
	local i0

	RET=0
	qosctl_ns "$R" apply "$P0" dev "$DEV" rate 100mbit
	check_err $? "apply $P0"
	i0=$(cfg_inner)
	pings_in_lbe 0x20 $N
	qosctl_ns "$R" apply "$P0" dev "$DEV" rate 200mbit
	check_err $? "re-apply at 200mbit"
	kept_shown "$i0" 200000000 "rate-only re-apply"
	pings_in_lbe 0x20 $N
	log_test "rate-only re-apply: inner map $i0 kept, rate shown 200mbit, DSCP 8 still lbe (v4, v6)"
}

dscp_change()
{
	local i0 i1 i2

	RET=0
	i0=$(cfg_inner)
	qosctl_ns "$R" apply "$P1" dev "$DEV" rate 200mbit
	check_err $? "apply $P1"
	i1=$(cfg_inner)
	qosctl_ns "$R" apply "$P1" dev "$DEV" rate 100mbit
	check_err $? "re-apply $P1 at 100mbit"
	i2=$(cfg_inner)
	[ "$i0" != "$i1" ] && [ "$i1" = "$i2" ]
	check_err $? "inner maps $i0 -> $i1 -> $i2: want one swap, at the DSCP change"
	pings_in_lbe 0x20 0
	pings_in_lbe 0x28 $N
	log_test "DSCP change: swapped once ($i0 -> $i1), DSCP 8 left lbe, DSCP 10 in it (v4, v6)"
}

# A re-apply that fails after its configuration step (QOSCTL_FAIL=cfg)
# rolls back: the meta (the rate shown) and the data path (DSCP 10 in lbe)
# are as before, and a rate-only one leaves the inner map in place.
failed_reapply()
{
	local i0 out

	RET=0
	i0=$(cfg_inner)
	out=$(QOSCTL_FAIL=cfg qosctl_ns "$R" apply "$P1" dev "$DEV" rate 300mbit 2>&1)
	check_fail $? "QOSCTL_FAIL=cfg rate-only apply succeeded: $out"
	kept_shown "$i0" 100000000 "rolled-back rate-only apply"
	out=$(QOSCTL_FAIL=cfg qosctl_ns "$R" apply "$P0" dev "$DEV" rate 100mbit 2>&1)
	check_fail $? "QOSCTL_FAIL=cfg DSCP change succeeded: $out"
	pings_in_lbe 0x20 0
	pings_in_lbe 0x28 $N
	log_test "failed re-applies rolled back: rate, inner map $i0 and DSCP mapping kept (v4, v6)"
}

ALL_TESTS="rate_only dscp_change failed_reapply"
tests_run
exit $EXIT_STATUS
