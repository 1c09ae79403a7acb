#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every shipped profile applies, shows and removes cleanly on the running
# kernel, or fails naming the kernel feature it lacks (then: SKIP for that
# profile). Each profile is applied over the previous one (in-place or
# fresh tree), then on its own from a clean interface, and removed.
#
#   r: $R_IF2 (veth)  <- apply PROFILE rate 100mbit, show, show -j, remove
#
# Checks: the root qdisc is the profile's scheduler with the recorded
# handle, show -j names the profile, remove leaves the kernel's default
# root, no clsact and no pins.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq tc

topo_h1_r_h2 || exit $ksft_fail
profiles=$(cd "$(dirname "$0")/../tc-profiles" && ls)
ran=0

# Every profile of tc-profiles/ over the previous one, then alone.
each_profile()
{
	local p out rc sched kind want name

	for p in $profiles; do
		out=$(qosctl_ns "$R" apply "$p" dev "$R_IF2" rate 100mbit 2>&1)
		rc=$?
		if [ $rc -ne 0 ] && grep -q "lacks" <<<"$out"; then
			log_test_skip "$p: apply" "$out"
			continue
		fi
		check_err $rc "$out"
		sched=$(awk -F' *= *' '$1 == "scheduler" { print $2 }' \
			"$(dirname "$0")/../tc-profiles/$p")
		kind=$(tc -n "$R" -j qdisc show dev "$R_IF2" root | jq -r '.[0].kind')
		# scheduler = none polices without queueing: the veth keeps its
		# default root qdisc.
		want=${sched:-htb}
		[ "$want" = none ] && want=noqueue
		[ "$kind" = "$want" ]
		check_err $? "root qdisc is $kind, profile asks for $want"
		name=$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -r .profile)
		[ "$name" = "$p" ]
		check_err $? "show -j says profile $name"
		qosctl_ns "$R" show dev "$R_IF2" >/dev/null
		check_err $? "show failed"
		log_test "$p: applies over the previous profile and shows"
		ran=$((ran + 1))

		qosctl_ns "$R" remove dev "$R_IF2"
		check_err $? "remove failed"
		qosctl_ns "$R" apply "$p" dev "$R_IF2" rate 1gbit
		check_err $? "apply on a clean interface failed"
		qosctl_ns "$R" remove dev "$R_IF2"
		check_err $? "second remove failed"
		kind=$(tc -n "$R" -j qdisc show dev "$R_IF2" root | jq -r '.[0].kind')
		[ "$kind" = noqueue ]
		check_err $? "root qdisc after remove is $kind"
		tc -n "$R" qdisc show dev "$R_IF2" | grep -q clsact
		check_fail $? "clsact left behind"
		[ -z "$(dev_files "$R" "$R_IF2")" ]
		check_err $? "files left behind in /run/qosctl"
		log_test "$p: applies on a clean interface and removes cleanly"
	done
}

ALL_TESTS="each_profile"
tests_run
[ $ran -gt 0 ] || exit $ksft_skip
exit $EXIT_STATUS
