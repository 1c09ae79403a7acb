#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A router's agent across a reboot with etcd out of reach
# (Documentation/domain.rst, "The agent", "Persistence"): the agent keeps
# its desired state in /var/lib/qosctl, and at start installs it again
# when the kernel has lost it, before etcd answers; once etcd is back it
# catches up with what changed meanwhile, with the same programs.
#
#   R (one namespace: the router, its agent and a one-member etcd on lo)
#     eth0 - p0   10.1.0.1/24  2001:db8:1::1/64   hosts of prefix A
#     eth1 - p1   10.2.0.1/24  2001:db8:2::1/64   hosts of prefix B
#
# The reboot: the agent SIGKILLed, etcd stopped, `qosctl remove` of both
# devices and their files in /run/qosctl removed (a tmpfs at boot).
#
# The suite runs itself inside R, so that etcd_lib.sh's member on
# 127.0.0.1 is the router's loopback; the outer copy only makes R and
# removes it (and R's files in /run/qosctl) at exit.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$(dirname "$(readlink -f "$0")")/etcd_lib.sh"

ALL_TESTS="agent_applies reboot_without_etcd etcd_back"

require_root
require_cmd jq etcd etcdctl bpftool
require_qosctl

if [ -z "${DPERSIST_NS:-}" ]; then
	setup_ns R || exit $ksft_fail
	defer_state "$R" || exit $ksft_fail
	DPERSIST_NS=$R nsenter --net="/run/netns/$R" -- "$0" "$@"
	exit $?
fi

R=$DPERSIST_NS
tmp_setup
RN=dp-$(mktemp -u XXXXXX | tr 'A-Z' 'a-z')
STATE=/var/lib/qosctl/agent-$RN.json
defer rm -f "$STATE" "/run/qosctl/agent-$RN.json"
defer agent_kill
defer etcd_again_stop
ectl()
{
	etcdctl --endpoints "$QOSCTL_ETCD" --command-timeout 3s "$@"
}

status()
{
	ectl get --print-value-only "/qosctl/status/$RN"
}

# settled: the agent published a status, applied what it has seen.
settled()
{
	status | jq -se 'length == 1 and
		(.[0] | .applied_revision == .desired_revision and .error == "")' >/dev/null
}

profile_of()
{
	"$QOSCTL" show dev "$1" -j 2>/dev/null | jq -r .profile
}

resv_on()
{
	"$QOSCTL" reserve list dev "$1" -j 2>/dev/null | jq -c '[.reservations[].id] | sort'
}

# as_desired PROFILES RESV: both devices run pip-20pct (PROFILES: "yes")
# and eth1 has the reservations RESV (resv_on's form).
as_desired()
{
	[ "$(profile_of eth0)" = pip-20pct ] && [ "$(profile_of eth1)" = pip-20pct ] &&
		[ "$(resv_on eth1)" = "$1" ]
}

prog_ids()
{
	bpftool -j net show dev "$1" | jq -c '[.. | .id? // empty] | sort'
}

# agent_start: the agent in the background, its log appended to
# $TMP/agent.log; AGENT is its PID. It outlives the test that starts it:
# agent_kill, deferred at top level, ends the one that runs at exit.
agent_start()
{
	"$QOSCTL" agent --router "$RN" >>"$TMP/agent.log" 2>&1 &
	AGENT=$!
}

agent_kill()
{
	[ -n "${AGENT:-}" ] || return 0
	kill -KILL "$AGENT" 2>/dev/null
	wait "$AGENT" 2>/dev/null
	AGENT=
}

# etcd_down / etcd_up: stop the member, start it again on the same
# ports and data (its command line, as etcd_start ran it).
etcd_down()
{
	mapfile -d '' ETCD_CMD <"/proc/$ETCD_PID/cmdline"
	etcd_stop "$ETCD_PID"
}

etcd_up()
{
	"${ETCD_CMD[@]}" >>"$TMP/etcd/etcd.log" 2>&1 &
	ETCD_PID=$!
	ETCD_AGAIN=$ETCD_PID
	until_ok 10 ectl endpoint health >/dev/null 2>&1
}

# The member etcd_up started, at exit (etcd_start's own is deferred by it).
etcd_again_stop()
{
	[ -z "${ETCD_AGAIN:-}" ] || etcd_stop "$ETCD_AGAIN"
}

agent_applies()
{
	local out mode

	out=$("$QOSCTL" domain load "$TMP/domain.json" 2>&1)
	check_err $? "domain load: $out"
	agent_start
	until_ok 20 settled
	check_err $? "agent not settled: $(status); $(tail -3 "$TMP/agent.log")"
	out=$("$QOSCTL" domain reserve add src 10.1.0.0/24 dst 10.2.0.0/24 proto udp dport 7000 \
		rate 1mbit id v4 2>&1)
	check_err $? "reserve add v4: $out"
	out=$("$QOSCTL" domain reserve add src 2001:db8:1::/64 dst 2001:db8:2::/64 proto udp \
		dport 7000 rate 1mbit id v6 2>&1)
	check_err $? "reserve add v6: $out"
	until_ok 10 as_desired '["v4","v6"]'
	check_err $? "eth0 runs $(profile_of eth0), eth1 $(profile_of eth1) with $(resv_on eth1)"
	until_ok 5 settled
	check_err $? "agent not settled after the reservations: $(status)"
	mode=$(stat -c %a /var/lib/qosctl)
	[ "$mode" = 700 ]
	check_err $? "/var/lib/qosctl has mode $mode, not 700"
	mode=$(stat -c %a "$STATE" 2>&1)
	[ "$mode" = 600 ]
	check_err $? "$STATE: mode $mode, not 600"
	[ "$(jq -r .revision "$STATE")" = "$(status | jq -r .desired_revision)" ]
	check_err $? "$STATE is of revision $(jq -r .revision "$STATE"), status says $(status)"
	[ ! -e "/run/qosctl/agent-$RN.json" ]
	check_err $? "the agent keeps its state in /run/qosctl, which a reboot empties"
	log_test "agent applies pip-20pct to eth0 and eth1 and reservations v4, v6; state in $STATE"
}

reboot_without_etcd()
{
	local d out t0 t

	agent_kill
	# Changed in etcd while the agent is down: the persisted state still
	# has v6, etcd no longer.
	out=$("$QOSCTL" domain reserve del id v6 2>&1)
	check_err $? "reserve del v6: $out"
	PERSISTED=$(jq -r .revision "$STATE")
	etcd_down
	for d in eth0 eth1; do
		out=$("$QOSCTL" remove dev $d 2>&1)
		check_err $? "remove dev $d: $out"
	done
	# What /run loses at boot: the devices' files, and whatever the agent
	# kept there.
	rm -f "/run/qosctl/$(ns_cookie "$R")-"* "/run/qosctl/agent-$RN.json"
	[ "$(profile_of eth0)" != pip-20pct ] && [ "$(profile_of eth1)" != pip-20pct ] &&
		[ "$(tc -j qdisc show dev eth1 root | jq -r '.[0].kind')" != htb ]
	check_err $? "the reboot left eth0 $(profile_of eth0), eth1 $(profile_of eth1)"
	: >"$TMP/agent.log"
	t0=$(date +%s%N)
	agent_start
	until_ok 15 as_desired '["v4","v6"]'
	check_err $? "etcd down, after the reboot: eth0 $(profile_of eth0), eth1 $(profile_of eth1), \
resv $(resv_on eth1); $(tail -3 "$TMP/agent.log")"
	t=$((($(date +%s%N) - t0) / 1000000))
	grep -q "persisted desired state of revision $PERSISTED .*: [0-9]* change(s) made" \
		"$TMP/agent.log"
	check_err $? "the log does not say revision $PERSISTED was installed: \
$(head -3 "$TMP/agent.log")"
	kill -0 "$AGENT"
	check_err $? "the agent died without etcd: $(tail -3 "$TMP/agent.log")"
	REBOOT_IDS=$(prog_ids eth1)
	log_test "reboot, etcd down: persisted revision $PERSISTED installed again in $t ms"
}

etcd_back()
{
	local out st

	etcd_up
	check_err $? "etcd did not come back: $(tail -3 "$TMP/etcd/etcd.log")"
	until_ok 15 as_desired '["v4"]'
	check_err $? "etcd back: eth1 has $(resv_on eth1), not v4 alone; \
$(tail -3 "$TMP/agent.log")"
	until_ok 10 settled
	check_err $? "not settled on etcd's return: $(status)"
	st=$(status)
	[ "$(jq -r .started_revision <<<"$st")" = "$PERSISTED" ] &&
		[ "$(jq -r .applied_revision <<<"$st")" -gt "$PERSISTED" ]
	check_err $? "status: started from $(jq -r .started_revision <<<"$st"), not $PERSISTED, \
or applied $(jq -r .applied_revision <<<"$st") is not newer"
	out=$("$QOSCTL" domain reserve add src 2001:db8:1::/64 dst 2001:db8:2::/64 proto udp \
		dport 7001 rate 1mbit id v6b 2>&1)
	check_err $? "reserve add v6b: $out"
	until_ok 10 as_desired '["v4","v6b"]'
	check_err $? "a new reservation: eth1 has $(resv_on eth1), not v4 and v6b"
	[ "$(prog_ids eth1)" = "$REBOOT_IDS" ]
	check_err $? "programs on eth1 were $REBOOT_IDS, now $(prog_ids eth1)"
	[ "$(jq -r .revision "$STATE")" = "$(status | jq -r .desired_revision)" ]
	check_err $? "the persisted state did not follow: $(jq -r .revision "$STATE")"
	log_test "etcd back: caught up (v6 gone, v6b installed), same programs"
}

mkdir "$TMP/etcd"
etcd_start "$TMP/etcd"
check_err $? "etcd did not start"
log_setup "one etcd member on R's loopback"
ip link add eth0 type veth peer name p0 && ip link add eth1 type veth peer name p1 &&
	for d in eth0 eth1 p0 p1; do ip link set $d up || break; done &&
	ip addr add 10.1.0.1/24 dev eth0 && ip addr add 2001:db8:1::1/64 dev eth0 nodad &&
	ip addr add 10.2.0.1/24 dev eth1 && ip addr add 2001:db8:2::1/64 dev eth1 nodad
check_err $? "veth pairs"
log_setup "router R: eth0, eth1"
domain_json_one "$RN" >"$TMP/domain.json"

tests_run
exit $EXIT_STATUS
