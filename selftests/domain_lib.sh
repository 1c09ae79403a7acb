#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A domain testbed's pieces, shared by selftests/domain.sh,
# scripts/demo-domain.sh and scripts/bench/domain.sh: a management bridge,
# etcd members started (and SIGKILLed) by PID, agents per router, and the
# commands that read them. Sourced after lib.sh; it sources etcd_lib.sh,
# so the etcd helpers are one set: etcd_start/etcd_stop there (one member
# on loopback), etcd_cluster_start/etcd_cluster_stop here (members in the
# ETCD_NS namespaces). The caller sets:
#
#   M        the management namespace (its bridge br0: 10.254.255.254/16)
#   TMP      a scratch directory (etcd data, logs)
#   SFX      a suffix unique to the run (cluster tokens)
#   ETCD_NS  namespaces of the members: ETCD_NS[1..3] (member i: 10.254.1.i)
#   ROUTER   namespaces of the routers: ROUTER[1..n]
#   RN       the routers' names in the domain: RN[1..n]
#
# and defers domain_stop once, after TMP is made: the agents and members
# started later, by a suite's test too, run until then (or until
# agent_kill, etcd_kill, etcd_cluster_stop), so that a test can restart
# what the tests after it use.

DOMAIN_SLOW=1
[ "$KSFT_MACHINE_SLOW" = yes ] && DOMAIN_SLOW=4
declare -a ETCD_MEMBER_PID AGENT_PID
DOMAIN_GEN=0

source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/etcd_lib.sh"

mgmt_bridge()
{
	ip -n "$M" link add br0 type bridge &&
		ip -n "$M" addr add 10.254.255.254/16 dev br0 &&
		ip -n "$M" link set br0 up
}

# mgmt NS ADDR: NS on the management bridge, as m0 with ADDR/16.
mgmt()
{
	local peer=m$(mktemp -u XXXXXX)

	ip link add m0 netns "$1" type veth peer name "$peer" netns "$M" &&
		ip -n "$M" link set "$peer" master br0 up &&
		ip -n "$1" addr add "$2/16" dev m0 &&
		ip -n "$1" link set m0 up
}

# domain_link NS1 IF1 NS2 IF2 NET4 NET6: a veth link, NET4.1/24 and
# NET6::1/64 on NS1's end, .2 and ::2 on NS2's, both up.
domain_link()
{
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" &&
		ip -n "$1" addr add "$5.1/24" dev "$2" &&
		ip -n "$3" addr add "$5.2/24" dev "$4" &&
		ip -n "$1" addr add "$6::1/64" dev "$2" nodad &&
		ip -n "$3" addr add "$6::2/64" dev "$4" nodad &&
		ip -n "$1" link set "$2" up &&
		ip -n "$3" link set "$4" up
}

# domain_line: the line of three routers with hosts at both ends (H1, R1,
# R2, R3, H2, and M, E1..E3 on the management bridge), IPv4 and IPv6:
#
#   H1 ---- R1 ---------- R2 ---------- R3 ---- H2
#      eth0    eth1    eth1  eth2    eth1   eth0
#   10.1.0.0/24     10.12.0.0/24   10.23.0.0/24    10.3.0.0/24
#   2001:db8:1::/64 2001:db8:12::/64 2001:db8:23::/64 2001:db8:3::/64
#   (hosts .1/::1, the router toward them .2/::2; r2 .1, r3 .2 between them)
domain_line()
{
	local i r

	mgmt_bridge
	for i in 1 2 3; do
		mgmt "${ETCD_NS[i]}" 10.254.1.$i
		mgmt "${ROUTER[i]}" 10.254.0.$i
	done
	domain_link "$H1" eth0 "$R1" eth0 10.1.0 2001:db8:1
	domain_link "$R1" eth1 "$R2" eth1 10.12.0 2001:db8:12
	domain_link "$R2" eth2 "$R3" eth1 10.23.0 2001:db8:23
	domain_link "$H2" eth0 "$R3" eth0 10.3.0 2001:db8:3
	for r in "$R1" "$R2" "$R3"; do
		in_ns "$r" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	done
	ip -n "$H1" route add default via 10.1.0.2
	ip -n "$H1" -6 route add default via 2001:db8:1::2
	ip -n "$H2" route add default via 10.3.0.2
	ip -n "$H2" -6 route add default via 2001:db8:3::2
	ip -n "$R1" route add 10.3.0.0/16 via 10.12.0.2
	ip -n "$R1" route add 10.23.0.0/24 via 10.12.0.2
	ip -n "$R1" -6 route add 2001:db8:3::/64 via 2001:db8:12::2
	ip -n "$R1" -6 route add 2001:db8:23::/64 via 2001:db8:12::2
	ip -n "$R2" route add 10.1.0.0/24 via 10.12.0.1
	ip -n "$R2" route add 10.3.0.0/24 via 10.23.0.2
	ip -n "$R2" -6 route add 2001:db8:1::/64 via 2001:db8:12::1
	ip -n "$R2" -6 route add 2001:db8:3::/64 via 2001:db8:23::2
	ip -n "$R3" route add 10.1.0.0/24 via 10.23.0.1
	ip -n "$R3" route add 10.12.0.0/24 via 10.23.0.1
	ip -n "$R3" -6 route add 2001:db8:1::/64 via 2001:db8:23::1
	ip -n "$R3" -6 route add 2001:db8:12::/64 via 2001:db8:23::1
}

ectl()
{
	in_ns "$M" env ETCDCTL_API=3 etcdctl --endpoints "$QOSCTL_ETCD" --command-timeout 3s "$@"
}

# dom ARGS...: qosctl domain ARGS from the management namespace.
dom()
{
	in_ns "$M" "$QOSCTL" domain "$@"
}

# etcd_cluster_start N [ARGS...]: a new cluster of members 1..N (data and
# logs in $TMP, a token of its own), QOSCTL_ETCD set to their client URLs;
# waits until it is healthy.
etcd_cluster_start()
{
	local n=$1 i cluster= urls=

	shift
	DOMAIN_GEN=$((DOMAIN_GEN + 1))
	for ((i = 1; i <= n; i++)); do
		cluster+=${cluster:+,}m$i=http://10.254.1.$i:2380
		urls+=${urls:+,}http://10.254.1.$i:2379
	done
	for ((i = 1; i <= n; i++)); do
		nsenter --net="/run/netns/${ETCD_NS[i]}" -- etcd --name m$i \
			--data-dir "$TMP/etcd-$DOMAIN_GEN-$i" \
			--listen-client-urls http://10.254.1.$i:2379 \
			--advertise-client-urls http://10.254.1.$i:2379 \
			--listen-peer-urls http://10.254.1.$i:2380 \
			--initial-advertise-peer-urls http://10.254.1.$i:2380 \
			--initial-cluster "$cluster" --initial-cluster-token "qos-$SFX-$DOMAIN_GEN" \
			--initial-cluster-state new "$@" >"$TMP/etcd-$DOMAIN_GEN-$i.log" 2>&1 &
		ETCD_MEMBER_PID[i]=$!
		SPAWNED[$!]=1
	done
	export QOSCTL_ETCD=$urls
	until_ok 20 ectl endpoint health >/dev/null 2>&1
}

# etcd_cluster_stop: stop the members etcd_cluster_start started.
etcd_cluster_stop()
{
	local i

	for i in "${!ETCD_MEMBER_PID[@]}"; do
		stop_pid "${ETCD_MEMBER_PID[i]}"
	done
	ETCD_MEMBER_PID=()
}

# etcd_kill I: SIGKILL member I, by its PID.
etcd_kill()
{
	kill -KILL "${ETCD_MEMBER_PID[$1]}"
	wait "${ETCD_MEMBER_PID[$1]}" 2>/dev/null
	unset "SPAWNED[${ETCD_MEMBER_PID[$1]}]"
}

# etcd_leader: the index of the member that leads.
etcd_leader()
{
	local i

	for i in "${!ETCD_MEMBER_PID[@]}"; do
		in_ns "$M" env ETCDCTL_API=3 etcdctl --endpoints http://10.254.1.$i:2379 \
			endpoint status -w json 2>/dev/null |
			jq -e '.[0].Status.leader == .[0].Status.header.member_id' >/dev/null &&
			echo "$i" && return 0
	done
	return 1
}

# agent_start I: router I's agent, its output appended to $TMP/agentI.log.
agent_start()
{
	local i=$1

	nsenter --net="/run/netns/${ROUTER[i]}" -- env QOSCTL_ETCD="$QOSCTL_ETCD" \
		"$QOSCTL" agent --router "${RN[i]}" >>"$TMP/agent$i.log" 2>&1 &
	AGENT_PID[i]=$!
	SPAWNED[$!]=1
}

agent_kill()
{
	kill -KILL "${AGENT_PID[$1]}" 2>/dev/null
	wait "${AGENT_PID[$1]}" 2>/dev/null
	unset "SPAWNED[${AGENT_PID[$1]}]"
}

# domain_stop: the agents and members still running stopped, by PID, and
# the agents' state files removed.
domain_stop()
{
	local i

	for i in "${!AGENT_PID[@]}"; do
		stop_pid "${AGENT_PID[i]}"
		rm -f "/var/lib/qosctl/agent-${RN[i]}.json"
	done
	AGENT_PID=()
	etcd_cluster_stop
}

# status I: router I's status key, JSON ("" when absent).
status()
{
	ectl get --print-value-only "/qosctl/status/${RN[$1]}"
}

# settled I: router I's agent has published a status, and applied what it
# has seen without error. (jq -e on no input at all succeeds: -s.)
settled()
{
	status "$1" | jq -se 'length == 1 and
		(.[0] | .applied_revision == .desired_revision and .error == "")' >/dev/null
}
