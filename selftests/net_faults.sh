#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Faults around apply and remove on the router of:
#
#   h1 ---------------- r ------------------ h2
#   $H1_IF     $R_IF1        $R_IF2 (faults)    $H2_IF
#
#  - qosctl killed by SIGKILL (QOSCTL_FAULT=STEP, see
#    Documentation/reliability.rst) at every step of a fresh apply and of
#    a re-apply over an applied profile; the next apply, and separately the
#    next remove, reach a known state: after remove the default root qdisc,
#    no clsact of ours, no files in /run/qosctl; after apply `qosctl show -j`
#    matches what tc reports;
#    Under emulation (KSFT_MACHINE_SLOW=yes) every step of both kinds is
#    still killed, but the recovery alternates between apply and remove
#    instead of trying both after each kill: the whole matrix takes longer
#    than CI gives a TCG guest. The host runs the whole matrix;
#  - the interface deleted and re-created under an applied profile;
#  - applies on two interfaces at the same time;
#  - bpffs missing (unmounted in a private mount namespace only);
#  - the rule table at capacity: a clear error, the rules and the traffic
#    they steer unchanged.

HERE=$(dirname "$(readlink -f "$0")")
source "$HERE/lib.sh"

STEPS="record load rules police tree cfg attach prune commit"

require_root
require_cmd jq tc ping unshare
require_qosctl

tmp_setup

topo_h1_r_h2 || exit $ksft_fail

# is_clean DEV: what a device looks like when qosctl never touched it.
is_clean()
{
	local dev=$1

	dev_clean "$R" "$dev" || return 1
	[ -z "$(dev_files "$R" "$dev")" ] || { echo "dev $dev: files left in /run/qosctl"; return 1; }
}

# is_applied DEV PROFILE: `show -j` names PROFILE and agrees with tc on the
# root handle, the programs at both hooks and the leaf of every class.
is_applied()
{
	local dev=$1 profile=$2 show qd d c

	show=$(qosctl_ns "$R" show dev "$dev" -j) || { echo "dev $dev: show failed"; return 1; }
	qd=$(tc -n "$R" -j qdisc show dev "$dev")
	[ "$(jq -r .profile <<<"$show")" = "$profile" ] ||
		{ echo "dev $dev: profile $(jq -r .profile <<<"$show"), want $profile"; return 1; }
	[ "$(jq -r .handle <<<"$show")" = "$(jq -r '.[] | select(.root) | .handle' <<<"$qd")" ] ||
		{ echo "dev $dev: show and tc disagree on the root qdisc"; return 1; }
	for d in ingress egress; do
		[ "$(jq -r ".programs.$d // empty" <<<"$show")" = "$(slot_prog "$R" "$dev" $d)" ] ||
			{ echo "dev $dev: show and tc disagree on the $d program"; return 1; }
	done
	while read -r c; do
		set -- $c
		[ "$(jq -r --arg p "$1" '.[] | select(.parent == $p) | .kind' <<<"$qd")" = "$2" ] ||
			{ echo "dev $dev: class $1 has no $2 leaf"; return 1; }
	done < <(jq -r '.classes[] | "\(.classid) \(.leaf)"' <<<"$show")
}

# crash STEP PROFILE DEV: an apply killed by SIGKILL at STEP.
crash()
{
	local rc

	QOSCTL_FAULT=$1 qosctl_ns "$R" apply "$2" dev "$3" rate 100mbit 2>/dev/null
	rc=$?
	[ $rc -eq 137 ] || { echo "apply with QOSCTL_FAULT=$1 exited $rc, not by SIGKILL"; return 1; }
}

test_crash()
{
	local step mode out dev=$R_IF2 recovers s=0 m

	for step in $STEPS; do
		s=$((s + 1))
		m=0
		for mode in fresh-apply re-apply; do
			m=$((m + 1))
			recovers="apply remove"
			if [ "$KSFT_MACHINE_SLOW" = yes ]; then
				# apply, remove on odd steps; remove, apply on even
				[ $(((s + m) % 2)) -eq 0 ] && recovers=apply || recovers=remove
			fi
			for recover in $recovers; do
				out=""
				if [ $mode = re-apply ]; then
					out=$(qosctl_ns "$R" apply pip-20pct dev $dev rate 100mbit 2>&1)
					check_err $? "setup apply: $out"
				fi
				out=$(crash $step pip-5pct $dev)
				check_err $? "$out"
				if [ $recover = apply ]; then
					out=$(qosctl_ns "$R" apply pip-5pct dev $dev rate 100mbit 2>&1)
					check_err $? "apply after the crash: $out"
					out=$(is_applied $dev pip-5pct)
					check_err $? "$out"
				fi
				out=$(qosctl_ns "$R" remove dev $dev 2>&1)
				check_err $? "remove: $out"
				out=$(is_clean $dev)
				check_err $? "$out"
				log_test "killed at $step of a $mode: $recover recovers"
			done
		done
	done
}

# State is what runs on the device: a new device of the same name starts
# with nothing, and the old device's files are swept.
test_recreate()
{
	local a b out

	a=$(ifname_unique rca) b=$(ifname_unique rcb)
	ip -n "$R" link add "$a" type veth peer name "$b" && ip -n "$R" link set "$a" up
	check_err $? "creating $a"
	out=$(qosctl_ns "$R" apply pip-20pct dev "$a" rate 100mbit 2>&1)
	check_err $? "first apply: $out"
	ip -n "$R" link del "$a"
	ip -n "$R" link add "$a" type veth peer name "$b" && ip -n "$R" link set "$a" up
	check_err $? "re-creating $a"
	out=$(qosctl_ns "$R" apply pip-5pct dev "$a" rate 100mbit 2>&1)
	check_err $? "apply on the new device: $out"
	out=$(is_applied "$a" pip-5pct)
	check_err $? "$out"
	log_test "device deleted and re-created: apply starts afresh"

	ip -n "$R" link del "$a"
	ip -n "$R" link add "$a" type veth peer name "$b" && ip -n "$R" link set "$a" up
	out=$(qosctl_ns "$R" show dev "$a" 2>&1)
	check_fail $? "show reports the deleted device's profile: $out"
	out=$(qosctl_ns "$R" remove dev "$a" 2>&1)
	check_fail $? "remove of a device with nothing applied succeeded"
	[ -z "$(dev_files "$R" "$a")" ]
	check_err $? "files of the deleted device left behind: $(dev_files "$R" "$a")"
	ip -n "$R" link del "$a"
	log_test "device deleted and re-created: nothing reported, nothing left"
}

test_parallel()
{
	local i p1 p2 rc1 rc2 out

	for i in 1 2 3 4 5; do
		qosctl_ns "$R" apply pip-20pct dev "$R_IF1" rate 100mbit 2>"$TMP/e1" &
		p1=$!
		qosctl_ns "$R" apply pip-5pct dev "$R_IF2" rate 100mbit 2>"$TMP/e2" &
		p2=$!
		wait $p1; rc1=$?
		wait $p2; rc2=$?
		check_err $rc1 "dev $R_IF1: $(cat "$TMP/e1")"
		check_err $rc2 "dev $R_IF2: $(cat "$TMP/e2")"
	done
	out=$(is_applied "$R_IF1" pip-20pct && is_applied "$R_IF2" pip-5pct)
	check_err $? "$out"
	log_test "applies on two interfaces at the same time, 5 rounds"
	qosctl_ns "$R" remove dev "$R_IF1" && qosctl_ns "$R" remove dev "$R_IF2"
	check_err $? "remove after the parallel applies"
	out=$(is_clean "$R_IF1" && is_clean "$R_IF2")
	check_err $? "$out"
	[ -z "$(dev_files "$R" "$R_IF1")$(dev_files "$R" "$R_IF2")" ]
	check_err $? "lock files left after remove"
	log_test "both interfaces clean after remove, lock files gone"

	# One interface, applies and removes racing: remove deletes the lock
	# file while it holds the lock, so a waiter must start again on the
	# new file. Whatever the order, the interface ends applied with the
	# last profile or clean, and every command either worked or, for a
	# remove that ran on a clean interface, said so.
	local rounds=10
	[ "$KSFT_MACHINE_SLOW" = yes ] && rounds=4
	for i in $(seq $rounds); do
		local pids=() rcs=0 n=0 last=
		for p in pip-20pct remove pip-5pct remove pip-20pct; do
			if [ "$p" = remove ]; then
				qosctl_ns "$R" remove dev "$R_IF1" 2>"$TMP/r$n" &
			else
				qosctl_ns "$R" apply "$p" dev "$R_IF1" rate 100mbit 2>"$TMP/r$n" &
			fi
			pids+=($!)
			n=$((n + 1))
		done
		n=0
		for p in "${pids[@]}"; do
			if ! wait "$p" && ! grep -q "no qosctl profile applied" "$TMP/r$n"; then
				echo "# $(cat "$TMP/r$n")"
				rcs=1
			fi
			n=$((n + 1))
		done
		check_err $rcs "a racing command failed"
		last=$(qosctl_ns "$R" show dev "$R_IF1" -j 2>/dev/null | jq -r .profile)
		if [ -n "$last" ]; then
			out=$(is_applied "$R_IF1" "$last")
		else
			out=$(is_clean "$R_IF1")
		fi
		check_err $? "round $i: $out"
	done
	qosctl_ns "$R" remove dev "$R_IF1" >/dev/null 2>&1
	out=$(is_clean "$R_IF1")
	check_err $? "$out"
	log_test "applies and removes racing on one interface, $rounds rounds"
}

# qosctl keeps nothing in bpffs: it works without one. The host's bpffs
# stays: other users of this machine depend on it.
test_no_bpffs()
{
	local out rc

	out=$(unshare -m --propagation private -- sh -c '
		while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 99; done
		nsenter --net="/run/netns/$1" -- "$2" apply pip-20pct dev "$3" rate 100mbit &&
		nsenter --net="/run/netns/$1" -- "$2" show dev "$3" >/dev/null &&
		exec nsenter --net="/run/netns/$1" -- "$2" remove dev "$3"
		' sh "$R" "$QOSCTL" "$R_IF2" 2>&1)
	rc=$?
	check_err $rc "apply, show, remove without bpffs exited $rc: $out"
	out=$(is_clean "$R_IF2")
	check_err $? "$out"
	mountpoint -q /sys/fs/bpf
	check_err $? "the host lost its bpffs"
	log_test "bpffs missing: apply, show and remove work"
}

# ingress_pkts DEV CLASS FAMILY
ingress_pkts()
{
	qosctl_ns "$R" stats dev "$1" -j |
		jq --arg c "$2" ".classes[] | select(.name == \$c) | .ingress.$3.packets"
}

test_rules_full()
{
	local i out rc n before after

	sed -e '/^\[profile\]/a rules = 16' "$HERE/../tc-profiles/pip-20pct" >"$TMP/pip-small"
	out=$(qosctl_ns "$R" apply "$TMP/pip-small" dev "$R_IF1" rate 100mbit 2>&1)
	check_err $? "apply: $out"
	# h1's IPv6 address to lbe, then unrelated hosts until the table is full.
	qosctl_ns "$R" rule add dev "$R_IF1" name h1 src "$H1_V6/128" class lbe
	check_err $? "first rule"
	for i in $(seq 2 15); do
		qosctl_ns "$R" rule add dev "$R_IF1" src "2001:db8:99::$i/128" class lbe
		check_err $? "rule $i of 15"
	done
	out=$(qosctl_ns "$R" rule add dev "$R_IF1" src 2001:db8:99::ff/128 class lbe 2>&1)
	rc=$?
	[ $rc -ne 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && [[ "$out" == "qosctl: rule add: "* ]]
	check_err $? "16th rule: exit $rc, '$out'"
	[[ "$out" == *"holds"* || "$out" == *"full"* ]]
	check_err $? "16th rule: the message does not say the table is full: $out"
	n=$(qosctl_ns "$R" rule list dev "$R_IF1" -j | jq length)
	[ "$n" -eq 15 ]
	check_err $? "$n rules listed after the refused one, want 15"
	log_test "rule table at capacity: 16th rule refused with one line"

	before=$(ingress_pkts "$R_IF1" lbe ipv6)
	in_ns "$H1" ping -6 -q -n -i 0.01 -c 20 -W 1 "$H2_V6" >/dev/null
	check_err $? "IPv6 pings lost with the table full"
	after=$(ingress_pkts "$R_IF1" lbe ipv6)
	[ $((after - before)) -eq 20 ]
	check_err $? "rule h1 classified $((after - before)) of 20 pings into lbe"
	log_test "rule table at capacity: traffic still follows the existing rules"
	qosctl_ns "$R" remove dev "$R_IF1"
}

ALL_TESTS="test_crash test_recreate test_parallel test_no_bpffs test_rules_full"
tests_run
exit $EXIT_STATUS
