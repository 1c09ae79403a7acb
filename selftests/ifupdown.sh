#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The ifupdown hook (ifupdown/qosctl.in, installed in if-up.d and
# if-down.d). First run as ifupdown runs it, with the environment it sets
# (IFACE, LOGICAL, ADDRFAM, METHOD, MODE, PHASE and IF_QOS_* for the
# stanza's qos-* options): ifup applies qos-profile at qos-rate, with
# qos-ingress-rate (Linux 6.4 or later) and the words of qos-args, a second
# stanza or a changed profile re-applies, ifdown removes, a second ifdown
# and interfaces without qos-profile are left alone, a missing qos-rate or
# an unknown profile fails and changes nothing. Then by ifup and ifdown
# themselves, on an interfaces file, with the hook as the only script in
# /etc/network (a scratch directory mounted there in a private mount
# namespace).
#
#   $NS:  $DEV (veth) --- $PEER
#           ^ the hook, and ifup/ifdown

source "$(dirname "$0")/lib.sh"
require_root
require_cmd jq

src=$(readlink -f "$(dirname "$0")/..")
tmp_setup
tmp=$TMP
# The hook as installed, calling the qosctl under test.
hook=$tmp/qosctl
sed "s|@SBINDIR@/qosctl|$QOSCTL|; s|@SYSCONFDIR@|/etc|g" "$src/ifupdown/qosctl.in" >"$hook"
chmod 0755 "$hook"

setup_ns NS || exit $ksft_fail
defer_state "$NS"
DEV=$(ifname_unique qi) PEER=$(ifname_unique qp)
veth_pair "$NS" "$DEV" "$PEER" || exit $ksft_fail

# run_hook MODE [VAR=VALUE...]: the hook for $DEV, environment as ifupdown
# sets it for an "iface $DEV inet manual" stanza.
run_hook()
{
	local mode=$1 phase=post-up

	shift
	[ "$mode" = stop ] && phase=pre-down
	in_ns "$NS" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin IFACE="$DEV" LOGICAL="$DEV" \
		ADDRFAM=inet METHOD=manual MODE="$mode" PHASE="$phase" VERBOSITY=0 "$@" "$hook"
}

show()
{
	qosctl_ns "$NS" show dev "$DEV" -j 2>/dev/null | jq -r "$1"
}

# The hook run as ifupdown runs it, step by step on $DEV.
hook()
{
	run_hook start IF_QOS_PROFILE=pip-20pct IF_QOS_RATE=100mbit >/dev/null
	check_err $? "the hook failed"
	[ "$(show '.profile + " " + (.rate_bps | tostring)')" = "pip-20pct 100000000" ]
	check_err $? "pip-20pct at 100mbit not applied: $(show .)"
	log_test "ifup: qos-profile pip-20pct, qos-rate 100mbit applied"

	RET=0
	run_hook start IF_QOS_PROFILE=pip-20pct IF_QOS_RATE=100mbit IF_QOS_ARGS="overhead 38 mpu 84" \
		>/dev/null
	check_err $? "the hook failed with qos-args"
	[ "$(show '"\(.profile) \(.overhead) \(.mpu)"')" = "pip-20pct 38 84" ]
	check_err $? "qos-args overhead 38 mpu 84 not applied: $(show .)"
	log_test "ifup: qos-args overhead 38 mpu 84 applied"

	IFS=. read -r kmaj kmin _ <<<"$(uname -r)"
	if [ "$kmaj" -gt 6 ] || { [ "$kmaj" -eq 6 ] && [ "$kmin" -ge 4 ]; }; then
		RET=0
		run_hook start IF_QOS_PROFILE=pip-20pct IF_QOS_RATE=100mbit IF_QOS_INGRESS_RATE=20mbit \
			>/dev/null
		check_err $? "the hook failed with qos-ingress-rate"
		[ "$(show .ingress_rate_bps)" = 20000000 ]
		check_err $? "qos-ingress-rate 20mbit not applied: $(show .)"
		log_test "ifup: qos-ingress-rate 20mbit applied"
	else
		log_test_skip "ifup: qos-ingress-rate" "download shaping needs Linux 6.4 (this is $(uname -r))"
	fi

	RET=0
	run_hook start IF_QOS_PROFILE=pip-20pct IF_QOS_RATE=100mbit >/dev/null
	check_err $? "the hook failed on a second stanza"
	run_hook start IF_QOS_PROFILE=pip-5pct IF_QOS_RATE=200mbit >/dev/null
	check_err $? "the hook failed on a changed profile"
	[ "$(show '.profile + " " + (.rate_bps | tostring)')" = "pip-5pct 200000000" ]
	check_err $? "pip-5pct at 200mbit not applied: $(show .)"
	log_test "ifup again (second stanza, changed options): applied in place"

	out=$(run_hook start IF_QOS_PROFILE=pip-20pct 2>&1)
	check_fail $? "qos-profile without qos-rate succeeded"
	echo "$out" | grep -q "needs qos-rate"
	check_err $? "no message for a missing qos-rate: $out"
	out=$(run_hook start IF_QOS_PROFILE=no-such-profile IF_QOS_RATE=100mbit 2>&1)
	check_fail $? "an unknown profile succeeded"
	echo "$out" | grep -q "no-such-profile"
	check_err $? "the error does not name the profile: $out"
	[ "$(show .profile)" = pip-5pct ]
	check_err $? "a failed ifup changed the interface: $(show .)"
	log_test "ifup: missing qos-rate, unknown profile fail and change nothing"

	run_hook start >/dev/null
	check_err $? "the hook failed for an interface without qos-profile"
	in_ns "$NS" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin IFACE=--all LOGICAL=--all ADDRFAM=meta \
		METHOD=none MODE=start PHASE=post-up "$hook"
	check_err $? "the hook failed for ifup -a's call"
	run_hook stop >/dev/null
	check_err $? "the hook failed on ifdown of an interface without qos-profile"
	[ "$(show .profile)" = pip-5pct ]
	check_err $? "interfaces without qos-profile were touched"
	log_test "interfaces without qos-profile, and ifup -a's call, left alone"

	run_hook stop IF_QOS_PROFILE=pip-5pct IF_QOS_RATE=200mbit
	check_err $? "the hook failed on ifdown"
	[ -z "$(show .profile)" ] && [ -z "$(dev_files "$NS" "$DEV")" ]
	check_err $? "ifdown left the profile or its files"
	run_hook stop IF_QOS_PROFILE=pip-5pct IF_QOS_RATE=200mbit
	check_err $? "a second ifdown (second stanza) failed"
	log_test "ifdown: removed; a second stanza's ifdown is not an error"
}

ifup_ifdown()
{
	local etc mntpid i

	# ifup and ifdown themselves, when installed.
	if ! command -v ifup >/dev/null || [ ! -d /etc/network ]; then
		log_test_skip "ifup/ifdown on an interfaces file" "ifupdown is not installed"
		return
	fi
	etc=$tmp/etc-network
	mkdir -p "$etc"/if-up.d "$etc"/if-down.d "$etc"/if-pre-up.d "$etc"/if-post-down.d "$tmp/state"
	cp "$hook" "$etc/if-up.d/qosctl"
	cp "$hook" "$etc/if-down.d/qosctl"
	cat >"$etc/interfaces" <<EOF
iface $DEV inet manual
	qos-profile pip-20pct
	qos-rate 300mbit

iface $DEV inet6 manual
	qos-profile pip-20pct
	qos-rate 300mbit
EOF
	# nsenter and unshare exec: $! is the process in the new namespaces.
	nsenter --net="/run/netns/$NS" -- unshare --mount --propagation private sleep 600 &
	mntpid=$!
	defer "kill $mntpid"
	for ((i = 0; i < 50; i++)); do
		[ "$(readlink /proc/$mntpid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] && break
		sleep 0.1
	done
	# Never mount on the machine's own /etc/network.
	[ "$(readlink /proc/$mntpid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] ||
		{ echo "no private mount namespace"; exit $ksft_fail; }
	ifns()
	{
		nsenter -t "$mntpid" -m -n -- "$@"
	}
	ifns mount --bind "$etc" /etc/network || exit $ksft_fail
	ip -n "$NS" link set "$DEV" down
	ifns ifup --state-dir="$tmp/state" "$DEV" >"$tmp/ifup.log" 2>&1
	check_err $? "ifup failed: $(cat "$tmp/ifup.log")"
	[ "$(show '.profile + " " + (.rate_bps | tostring)')" = "pip-20pct 300000000" ]
	check_err $? "ifup did not apply pip-20pct at 300mbit: $(cat "$tmp/ifup.log")"
	ifns ifdown --state-dir="$tmp/state" "$DEV" >"$tmp/ifdown.log" 2>&1
	check_err $? "ifdown failed: $(cat "$tmp/ifdown.log")"
	[ -z "$(show .profile)" ]
	check_err $? "ifdown did not remove the profile: $(cat "$tmp/ifdown.log")"
	log_test "ifup/ifdown on an interfaces file: applied, then removed"
}

ALL_TESTS="hook ifup_ifdown"
tests_run
exit $EXIT_STATUS
