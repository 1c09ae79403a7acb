#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# qosctl's state is keyed by (network namespace, ifindex): namespace twins,
# a renamed device, a device deleted and re-created under the same name.
#
#   H1                      T1                  T2                      H2
#   p0 -------------------- q0                  q0 -------------------- p0
#   10.5.0.2/24     10.5.0.1/24                 10.5.0.1/24     10.5.0.2/24
#   2001:db8:5::2/64  2001:db8:5::1/64          2001:db8:5::1/64  2001:db8:5::2/64
#                   pip-20pct                   diffserv4
#                   (ifindex N)                 (ifindex N)
#
#   H1: rc1 ------------------ T1: rc0          T1: ra (renamed rb) -- ra1
#       10.6.0.2/24  10.6.0.1/24                    (no traffic)
#       deleted and re-created
#
# The twins have the same interface name, ifindex and addresses; only the
# namespace tells them apart. Before the redesign every piece of qosctl
# state was keyed by the interface name alone (pins in
# /sys/fs/bpf/qosctl/NAME, /run/qosctl/NAME.lock), so:
#  - twins: the second apply found the first twin's pins and took them
#    for its own device; show, stats and rule list in one namespace
#    reported the other's profile, rules or counters, and remove in one
#    deleted the pins both programs' maps lived in;
#  - rename: show, stats and rule commands under the new name found no
#    pins ("no qosctl profile applied"), the old name kept them;
#  - re-create: the new device of the same name showed the deleted one's
#    profile and program ids, and the next apply found its counters.
# Each check below fails on that code and passes on a tree where the
# kernel's clsact slot of (netns, ifindex) is the only record. Neither
# twin keeps a file in /run/qosctl once its commands are done, applied or
# not: until this tree, an applied device kept its lock file, and one
# whose namespace was deleted kept it until reboot.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq tc ping python3 nsenter
require_qosctl

tmp_setup

PINGS1=5	# echo requests into T1, each family
PINGS2=3	# into T2

# quiet_ns NS: no IPv6 link-local address and MLD reports sent at once,
# so that exact counters see only the pings of the test.
quiet_ns()
{
	in_ns "$1" sysctl -qw net.ipv6.conf.default.addr_gen_mode=1 \
		net.ipv6.conf.all.mldv1_unsolicited_report_interval=1 \
		net.ipv6.conf.default.mldv1_unsolicited_report_interval=1 \
		net.ipv6.conf.all.mldv2_unsolicited_report_interval=1 \
		net.ipv6.conf.default.mldv2_unsolicited_report_interval=1
}

# link_pair NS IF PEER_NS PEER_IF V4 V6: a veth IF in NS with its peer in
# PEER_NS, configured by link_conf.
link_pair()
{
	ip -n "$1" link add "$2" type veth peer name "$4" netns "$3" && link_conf "$@"
}

# link_conf NS IF PEER_NS PEER_IF V4 V6: addresses V4.1 and V6::1 on IF,
# .2 and ::2 on PEER_IF, static neighbours both ways, both ends up.
link_conf()
{
	local ns=$1 dev=$2 pns=$3 pdev=$4 v4=$5 v6=$6 mac pmac

	ip -n "$ns" addr add "$v4.1/24" dev "$dev"
	ip -n "$ns" addr add "$v6::1/64" dev "$dev" nodad
	ip -n "$pns" addr add "$v4.2/24" dev "$pdev"
	ip -n "$pns" addr add "$v6::2/64" dev "$pdev" nodad
	mac=$(ip -n "$ns" -j link show dev "$dev" | jq -r '.[0].address')
	pmac=$(ip -n "$pns" -j link show dev "$pdev" | jq -r '.[0].address')
	ip -n "$ns" neigh replace "$v4.2" lladdr "$pmac" dev "$dev" nud permanent
	ip -n "$ns" -6 neigh replace "$v6::2" lladdr "$pmac" dev "$dev" nud permanent
	ip -n "$pns" neigh replace "$v4.1" lladdr "$mac" dev "$pdev" nud permanent
	ip -n "$pns" -6 neigh replace "$v6::1" lladdr "$mac" dev "$pdev" nud permanent
	ip -n "$ns" link set "$dev" up && ip -n "$pns" link set "$pdev" up
}

ifindex()
{
	ip -n "$1" -j link show dev "$2" | jq -r '.[0].ifindex'
}

# ef_pings NS V4 N V6: N echo requests with DSCP EF to V4.1 and to V6::1;
# fails unless every one is answered.
ef_pings()
{
	local tx rx fam

	for fam in 4 6; do
		read -r tx rx < <(in_ns "$1" ping -"$fam" -n -q -c "$3" -i 0.01 -W 2 -Q 0xb8 \
				  "$(if [ $fam = 4 ]; then echo "$2.1"; else echo "$4::1"; fi)" |
				  ping_summary)
		[ "$tx" -eq "$3" ] && [ "$rx" -eq "$3" ] ||
			{ echo "IPv$fam: $rx of $tx replies, want $3"; return 1; }
	done
}

# pip_in NS DEV FAMILY: packets class pip counted at DEV's ingress.
pip_in()
{
	qosctl_ns "$1" stats dev "$2" -j |
		jq -r --arg f "$3" '.classes[] | select(.name == "pip") | .ingress[$f].packets'
}

# snapshot NS DEV: everything tc and qosctl report about DEV, counters
# included.
snapshot()
{
	local d

	tc -n "$1" -s -d qdisc show dev "$2"
	tc -n "$1" -s -d class show dev "$2"
	for d in ingress egress; do
		tc -n "$1" -s -d filter show dev "$2" $d
	done
	qosctl_ns "$1" stats dev "$2" -j
	qosctl_ns "$1" show dev "$2" -j
	qosctl_ns "$1" rule list dev "$2" -j
}

# no_dev NS DEV: every command on DEV fails with "no such device".
no_dev()
{
	local out rc cmd

	for cmd in "show" "stats" "rule list" "rule add" "apply" "remove"; do
		case $cmd in
		"rule add") out=$(qosctl_ns "$1" rule add dev "$2" dst 2001:db8:79::/48 class pip 2>&1) ;;
		apply) out=$(qosctl_ns "$1" apply pip-20pct dev "$2" rate 100mbit 2>&1) ;;
		*) out=$(qosctl_ns "$1" $cmd dev "$2" 2>&1) ;;
		esac
		rc=$?
		[ $rc -ne 0 ] && [[ "$out" == *"dev $2: no such device"* ]] ||
			{ echo "$cmd dev $2: exit $rc, '$out'"; return 1; }
	done
}

setup()
{
	setup_ns T1 T2 H1 H2 || return 1
	defer_state "$T1" "$T2" "$H1" "$H2" || return 1
	for ns in "$T1" "$T2" "$H1" "$H2"; do
		quiet_ns "$ns"
	done
	# Same commands in the same order in fresh namespaces: same ifindex.
	link_pair "$T1" q0 "$H1" p0 10.5.0 2001:db8:5 &&
		link_pair "$T2" q0 "$H2" p0 10.5.0 2001:db8:5
}

test_twins()
{
	local c1 c2 i1 i2 s1 s2 p1 p2 snap_before snap_after out d f

	c1=$(ns_cookie "$T1") c2=$(ns_cookie "$T2")
	i1=$(ifindex "$T1" q0) i2=$(ifindex "$T2" q0)
	[ "$i1" = "$i2" ] && [ "$c1" != "$c2" ]
	check_err $? "ifindex $i1 and $i2, cookies $c1 and $c2"
	log_test "twins: q0 has ifindex $i1 in both namespaces"

	out=$(qosctl_ns "$T1" apply pip-20pct dev q0 rate 100mbit 2>&1)
	check_err $? "apply in T1: $out"
	out=$(qosctl_ns "$T2" apply diffserv4 dev q0 rate 100mbit 2>&1)
	check_err $? "apply in T2: $out"
	s1=$(qosctl_ns "$T1" show dev q0 -j) && s2=$(qosctl_ns "$T2" show dev q0 -j)
	check_err $? "show failed"
	[ "$(jq -r .profile <<<"$s1")" = pip-20pct ] && [ "$(jq -r .profile <<<"$s2")" = diffserv4 ]
	check_err $? "profiles: T1 $(jq -r .profile <<<"$s1"), T2 $(jq -r .profile <<<"$s2")"
	for d in ingress egress; do
		p1=$(slot_prog "$T1" q0 $d) p2=$(slot_prog "$T2" q0 $d)
		[ "$(jq -r ".programs.$d // empty" <<<"$s1")" = "$p1" ] &&
			[ "$(jq -r ".programs.$d // empty" <<<"$s2")" = "$p2" ] && [ "$p1" != "$p2" ]
		check_err $? "$d programs: T1 show $(jq -r .programs.$d <<<"$s1") tc $p1," \
			"T2 show $(jq -r .programs.$d <<<"$s2") tc $p2"
	done
	[ "$(jq -r '[.classes[].name] | join(" ")' <<<"$s2")" = "nc pip be lbe" ]
	check_err $? "T2 classes: $(jq -r '[.classes[].name] | join(" ")' <<<"$s2")"
	log_test "twins: each show reports its own profile and programs"

	out=$(qosctl_ns "$T1" rule add dev q0 name one dst 2001:db8:61::/48 class lbe 2>&1)
	check_err $? "rule add in T1: $out"
	out=$(qosctl_ns "$T2" rule add dev q0 name two src 10.62.0.0/16 class nc 2>&1)
	check_err $? "rule add in T2: $out"
	out=$(qosctl_ns "$T1" rule list dev q0 -j | jq -r '[.[].name] | join(" ")')
	[ "$out" = one ]
	check_err $? "rules in T1: '$out'"
	out=$(qosctl_ns "$T2" rule list dev q0 -j | jq -r '[.[].name] | join(" ")')
	[ "$out" = two ]
	check_err $? "rules in T2: '$out'"
	log_test "twins: each rule list holds its own rules"

	out=$(ef_pings "$H1" 10.5.0 $PINGS1 2001:db8:5)
	check_err $? "H1 -> T1: $out"
	out=$(ef_pings "$H2" 10.5.0 $PINGS2 2001:db8:5)
	check_err $? "H2 -> T2: $out"
	for f in ipv4 ipv6; do
		p1=$(pip_in "$T1" q0 $f) p2=$(pip_in "$T2" q0 $f)
		[ "$p1" = $PINGS1 ] && [ "$p2" = $PINGS2 ]
		check_err $? "$f pip ingress: T1 $p1 (want $PINGS1), T2 $p2 (want $PINGS2)"
	done
	log_test "twins: each stats counts its own traffic"

	sleep 0.5
	snap_before=$(snapshot "$T2" q0)
	out=$(qosctl_ns "$T1" remove dev q0 2>&1)
	check_err $? "remove in T1: $out"
	out=$(dev_clean "$T1" q0)
	check_err $? "T1: $out"
	snap_after=$(snapshot "$T2" q0)
	[ "$snap_before" = "$snap_after" ]
	check_err $? "T2 changed: $(diff <(echo "$snap_before") <(echo "$snap_after") | head -5)"
	# A device keeps a file only while a change is under way or waits
	# for confirmation: T2's profile is in its kernel alone, so deleting
	# T2 with it applied could leave nothing behind in /run/qosctl.
	out=$(ls -A /run/qosctl | grep -e "^$c1-" -e "^$c2-")
	[ -z "$out" ]
	check_err $? "files in /run/qosctl: $out"
	log_test "twins: remove in T1 leaves T2's qdiscs, filters, rules and counters"

	out=$(ef_pings "$H2" 10.5.0 2 2001:db8:5)
	check_err $? "H2 -> T2 after the remove: $out"
	p2=$(pip_in "$T2" q0 ipv4)
	[ "$p2" = $((PINGS2 + 2)) ]
	check_err $? "T2 pip ingress ipv4 $p2, want $((PINGS2 + 2))"
	log_test "twins: T2 still classifies after T1's remove"
	out=$(qosctl_ns "$T2" remove dev q0 2>&1)
	check_err $? "remove in T2: $out"
	out=$(dev_clean "$T2" q0)
	check_err $? "T2: $out"
	log_test "twins: remove in T2"
}

test_rename()
{
	local out s

	ip -n "$T1" link add ra type veth peer name ra1 && ip -n "$T1" link set ra up &&
		ip -n "$T1" link set ra1 up
	check_err $? "creating ra"
	out=$(qosctl_ns "$T1" apply pip-20pct dev ra rate 100mbit 2>&1)
	check_err $? "apply: $out"
	out=$(qosctl_ns "$T1" rule add dev ra name before dst 2001:db8:71::/48 class pip 2>&1)
	check_err $? "rule add: $out"
	ip -n "$T1" link set ra down && ip -n "$T1" link set ra name rb &&
		ip -n "$T1" link set rb up
	check_err $? "renaming ra to rb"
	log_test "rename: ra applied, renamed rb"

	s=$(qosctl_ns "$T1" show dev rb -j 2>&1)
	check_err $? "show dev rb: $s"
	[ "$(jq -r .profile <<<"$s" 2>/dev/null)" = pip-20pct ] &&
		[ "$(jq -r .dev <<<"$s")" = rb ] &&
		[ "$(jq -r .programs.ingress <<<"$s")" = "$(slot_prog "$T1" rb ingress)" ]
	check_err $? "show dev rb: $s"
	out=$(qosctl_ns "$T1" stats dev rb -j 2>&1)
	check_err $? "stats dev rb: $out"
	[ "$(jq -r .profile <<<"$out" 2>/dev/null)" = pip-20pct ]
	check_err $? "stats dev rb: $out"
	out=$(qosctl_ns "$T1" rule add dev rb name after src 10.72.0.0/16 class lbe 2>&1)
	check_err $? "rule add dev rb: $out"
	out=$(qosctl_ns "$T1" rule list dev rb -j 2>&1 | jq -r '[.[].name] | join(" ")')
	[ "$out" = "before after" ]
	check_err $? "rules on rb: '$out'"
	log_test "rename: show, stats, rule add and list work under the new name"

	out=$(no_dev "$T1" ra)
	check_err $? "$out"
	log_test "rename: every command under the old name says no such device"

	out=$(qosctl_ns "$T1" remove dev rb 2>&1)
	check_err $? "remove dev rb: $out"
	out=$(dev_clean "$T1" rb)
	check_err $? "$out"
	ip -n "$T1" link del rb
	log_test "rename: remove under the new name"
}

test_recreate()
{
	local out rc old_idx old_ids new_ids id i gone sum cmd

	link_pair "$T1" rc0 "$H1" rc1 10.6.0 2001:db8:6
	check_err $? "creating rc0"
	out=$(qosctl_ns "$T1" apply pip-20pct dev rc0 rate 100mbit 2>&1)
	check_err $? "apply: $out"
	out=$(qosctl_ns "$T1" rule add dev rc0 name old dst 2001:db8:73::/48 class pip 2>&1)
	check_err $? "rule add: $out"
	out=$(ef_pings "$H1" 10.6.0 4 2001:db8:6)
	check_err $? "H1 -> rc0: $out"
	[ "$(pip_in "$T1" rc0 ipv4)" = 4 ]
	check_err $? "pip ingress ipv4 $(pip_in "$T1" rc0 ipv4) before the delete, want 4"
	old_idx=$(ifindex "$T1" rc0)
	old_ids=$(qosctl_ns "$T1" show dev rc0 -j | jq -r '.programs | "\(.ingress) \(.egress)"')

	ip -n "$T1" link del rc0
	# Not up yet: nothing but the test's pings crosses it.
	ip -n "$T1" link add rc0 type veth peer name rc1 netns "$H1"
	check_err $? "re-creating rc0"
	[ "$(ifindex "$T1" rc0)" != "$old_idx" ]
	check_err $? "rc0 got its old ifindex back"
	for cmd in show stats "rule list"; do
		out=$(qosctl_ns "$T1" $cmd dev rc0 2>&1)
		rc=$?
		[ $rc -ne 0 ] && [[ "$out" == *"dev rc0: no qosctl profile applied"* ]]
		check_err $? "$cmd dev rc0: exit $rc, '$out'"
		for id in $old_ids; do
			[[ "$out" != *"$id"* ]]
			check_err $? "$cmd dev rc0 names program $id of the deleted device"
		done
	done
	[ -z "$(tc -n "$T1" filter show dev rc0 ingress)$(tc -n "$T1" filter show dev rc0 egress)" ]
	check_err $? "filters on the new rc0"
	gone=0
	# An RCU grace period frees them; under emulation it takes longer.
	for i in $(seq $([ "$KSFT_MACHINE_SLOW" = yes ] && echo 300 || echo 30)); do
		gone=1
		for id in $old_ids; do
			bpftool prog show id "$id" >/dev/null 2>&1 && gone=0
		done
		[ $gone = 1 ] && break
		sleep 0.1
	done
	[ $gone = 1 ]
	check_err $? "programs $old_ids of the deleted device still loaded"
	log_test "re-create: the new rc0 has no profile, no stale program ids"

	out=$(qosctl_ns "$T1" apply pip-20pct dev rc0 rate 100mbit 2>&1)
	check_err $? "apply on the new rc0: $out"
	new_ids=$(qosctl_ns "$T1" show dev rc0 -j | jq -r '.programs | "\(.ingress) \(.egress)"')
	[ "$new_ids" = "$(slot_prog "$T1" rc0 ingress) $(slot_prog "$T1" rc0 egress)" ]
	check_err $? "show says programs $new_ids, tc disagrees"
	sum=$(qosctl_ns "$T1" stats dev rc0 -j | jq '[.. | objects | .packets?, .bytes? | numbers] | add')
	[ "$sum" = 0 ]
	check_err $? "counters of the new rc0 sum to $sum, not 0"
	out=$(qosctl_ns "$T1" rule list dev rc0 -j | jq length)
	[ "$out" = 0 ]
	check_err $? "the new rc0 has $out rules, not 0"
	[ ! -e "/run/qosctl/$(ns_cookie "$T1")-$old_idx.lock" ]
	check_err $? "the deleted device's lock file is still in /run/qosctl"
	log_test "re-create: apply works, counters and rules start empty"

	link_conf "$T1" rc0 "$H1" rc1 10.6.0 2001:db8:6
	check_err $? "configuring the new rc0"
	out=$(ef_pings "$H1" 10.6.0 3 2001:db8:6)
	check_err $? "H1 -> rc0: $out"
	[ "$(pip_in "$T1" rc0 ipv4)" = 3 ] && [ "$(pip_in "$T1" rc0 ipv6)" = 3 ]
	check_err $? "pip ingress $(pip_in "$T1" rc0 ipv4)/$(pip_in "$T1" rc0 ipv6), want 3/3"
	out=$(qosctl_ns "$T1" remove dev rc0 2>&1)
	check_err $? "remove: $out"
	log_test "re-create: the new rc0 counts its own traffic only"
}

setup || { echo "setup failed"; exit $ksft_fail; }
ALL_TESTS="test_twins test_rename test_recreate"
tests_run
exit $EXIT_STATUS
