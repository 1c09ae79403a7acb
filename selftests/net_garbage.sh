#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Malformed frames on a live interface, among valid PIP traffic:
#
#   h1 ---------------------------- r (pip-20pct) ------------------ h2
#   garbage_send.py -> $R_IF1        $R_IF1   $R_IF2                 $H2_IF
#   ping -Q 0xb8, v4 and v6 -------------------------------------->
#
# garbage_send.py sends mutations of IPv6 with extension headers, 6in4,
# QinQ and IPv4 with options (truncated, bit flips, lying lengths) to the
# router's MAC while PIP pings of both families cross it. Checks:
#  - every ping is answered: garbage costs valid traffic nothing;
#  - the ingress program drops nothing (no policer verdict "drop"):
#    malformed frames are passed on, never dropped by the parser;
#  - counters are consistent: every frame tc ingress saw on $R_IF1 is
#    counted once, classified (per class, family, verdict) or unparsed
#    (per reason). tc ingress runs on every frame veth delivers except
#    VLAN frames too short to untag, which the kernel frees before
#    (skb_vlan_untag()); the sender counts those, and the sum must equal
#    the device's received-packets delta less them, exactly.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

FRAMES=20000
SEED=${SEED:-$RANDOM}

require_root
require_cmd jq ping python3
require_qosctl

tmp_setup
topo_h1_r_h2 || exit $ksft_fail
for dev in "$R_IF1" "$R_IF2"; do
	qosctl_ns "$R" apply pip-20pct dev "$dev" rate 100mbit || exit $ksft_fail
done

rx()
{
	ip -n "$R" -s -j link show dev "$R_IF1" | jq '.[0].stats64.rx.packets'
}

# seen DIR: packets the program counted at DIR, classified plus unparsed.
seen()
{
	qosctl_ns "$R" stats dev "$R_IF1" -j | jq --arg d "$1" \
		'([.classes[][$d][] | .packets] | add) + ([.unparsed[$d][] | .packets] | add)'
}

dropped()
{
	qosctl_ns "$R" stats dev "$R_IF1" -j |
		jq '[.classes[].ingress[] | .verdicts.drop.packets] | add'
}

unparsed()
{
	qosctl_ns "$R" stats dev "$R_IF1" -j |
		jq -r '.unparsed.ingress | to_entries | map("\(.key) \(.value.packets)") | join(", ")'
}

# PIP pings and mutated frames side by side; then the counters.
garbage_flood()
{
	rx0=$(rx) seen0=$(seen ingress) drop0=$(dropped)
	mac=$(ip -n "$R" -j link show dev "$R_IF1" | jq -r '.[0].address')

	in_ns "$H1" ping -4 -q -n -Q 0xb8 -i 0.005 -c 1000 -W 1 "$H2_V4" >"$TMP/v4" 2>&1 &
	p4=$!
	in_ns "$H1" ping -6 -q -n -Q 0xb8 -i 0.005 -c 1000 -W 1 "$H2_V6" >"$TMP/v6" 2>&1 &
	p6=$!
	defer kill $p4 $p6
	read -r sent short_vlan < <(in_ns "$H1" python3 \
		"$(dirname "$(readlink -f "$0")")/garbage_send.py" "$H1_IF" "$mac" $FRAMES "$SEED")
	[ "${sent:-0}" -eq $FRAMES ]
	check_err $? "garbage_send.py sent ${sent:-nothing}"
	wait $p4 $p6
	log_test "${sent:-0} mutated frames sent, $short_vlan too short to untag (SEED=$SEED)"

	for fam in v4 v6; do
		pings_answered "$TMP/$fam" 1000
		check_err $? "$(cat "$TMP/$fam")"
		log_test "$fam: $PING_RX/$PING_TX PIP pings answered among the garbage"
	done

	# Per-CPU counters are summed when read; nothing is in flight any more.
	rx1=$(rx) seen1=$(seen ingress) drop1=$(dropped)
	[ $((seen1 - seen0)) -eq $((rx1 - rx0 - short_vlan)) ]
	check_err $? "ingress counted $((seen1 - seen0)) frames, $R_IF1 received $((rx1 - rx0)), $short_vlan freed before tc"
	[ $((rx1 - rx0)) -ge $((FRAMES + 2000)) ]
	check_err $? "$R_IF1 received $((rx1 - rx0)) frames, fewer than the $FRAMES + 2000 pings sent"
	log_test "ingress: $((seen1 - seen0)) frames counted = $((rx1 - rx0)) received - $short_vlan"
	echo "	unparsed at ingress: $(unparsed)"

	[ "$drop1" -eq "$drop0" ]
	check_err $? "the ingress program dropped $((drop1 - drop0)) frames"
	log_test "ingress: no frame dropped"
}

ALL_TESTS="garbage_flood"
tests_run
exit $EXIT_STATUS
