#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make demo-domain`: a DiffServ domain of three routers on etcd, in network
# namespaces (Documentation/domain.rst).
#
#   h1 ---- r1 ---------- r2 ---------- r3 ---- h2      every link pip-20pct
#   10.1.0.0/24                          10.3.0.0/24   r2 -> r3 50mbit
#   2001:db8:1::/64                      2001:db8:3::/64
#   management bridge: etcd (3 members), an agent per router
#
# It loads the domain, starts the agents, admits a Premium IP reservation
# over the three hops (printed with its path and figures), shows that only
# r1 holds it, sends the flow at twice its rate and shows r1's policer and
# the EF packets at r2 and r3, kills r1's agent (nothing changes) and
# restarts it, then kills an etcd member and admits another reservation.
# Everything is removed at exit. About a minute.

source "$(dirname "$(readlink -f "$0")")/../selftests/lib.sh"
source "$(dirname "$(readlink -f "$0")")/../selftests/domain_lib.sh"
QOSCTL=${QOSCTL:-$(dirname "$(readlink -f "$0")")/../.output/qosctl}
require_root
require_cmd etcd etcdctl jq nsenter python3

section()
{
	printf '\n== %s ==\n\n' "$*"
}

# show CMD...: print the command, then run it.
show()
{
	echo "\$ $*"
	"$@"
}

TMP=$(mktemp -d)
defer rm -rf "$TMP"
SFX=$(mktemp -u XXXXXX | tr 'A-Z' 'a-z')
setup_ns M E1 E2 E3 H1 R1 R2 R3 H2 || exit 1
defer_state "$R1" "$R2" "$R3"
ETCD_NS=("" "$E1" "$E2" "$E3")
ROUTER=("" "$R1" "$R2" "$R3")
RN=("" r1 r2 r3)
defer domain_stop
domain_line || exit 1

domain_json_line r1 r2 r3 "" "100mbit 100mbit 100mbit 50mbit 100mbit 100mbit" >"$TMP/domain.json"

section "etcd: three members on the management bridge"
etcd_cluster_start 3 || { echo "demo: etcd did not start" >&2; exit 1; }
ectl member list
section "the declared domain, then an agent per router"
show dom load "$TMP/domain.json"
for i in 1 2 3; do
	agent_start $i
done
for i in 1 2 3; do
	until_ok 30 settled $i || echo "demo: r$i's agent has not settled: $(status $i)"
done
show dom status

section "a Premium IP reservation over three hops, installed at the edge only"
show dom reserve add src 10.1.0.0/24 dst 10.3.0.0/24 proto udp dport 5004 rate 1mbit \
	remark ef id call-1
until_ok 5 grep -q call-1 <(qosctl_ns "$R1" reserve list dev eth1 2>/dev/null)
for i in 1 2 3; do
	for d in eth0 eth1 eth2; do
		ip -n "${ROUTER[i]}" link show $d >/dev/null 2>&1 || continue
		echo "r$i $d: $(qosctl_ns "${ROUTER[i]}" reserve list dev $d -j |
			jq -c '[.reservations[].id]')"
	done
done

section "the flow at twice its rate for 3 s: r1 polices it, r2 and r3 see EF"
send_paced "$H1" 10.3.0.1 5004 2083 3 78
show qosctl_ns "$R1" rule list dev eth1
for i in 2 3; do
	d=eth2
	[ $i = 3 ] && d=eth0
	echo "r$i $d egress, pip, ipv4: $(qosctl_ns "${ROUTER[i]}" stats dev $d -j |
		jq -c '.classes[] | select(.name == "pip") | .egress.ipv4.packets') packets"
done

section "r1's agent SIGKILLed: the data plane stays; restarted, it catches up"
agent_kill 1
show dom reserve add src 10.1.0.0/24 dst 10.3.0.7 rate 256kbit burst 500 id call-2
qosctl_ns "$R1" reserve list dev eth1
agent_start 1
until_ok 10 grep -q call-2 <(qosctl_ns "$R1" reserve list dev eth1 2>/dev/null)
qosctl_ns "$R1" reserve list dev eth1

section "the etcd leader SIGKILLed: admission goes on with two members"
l=$(etcd_leader)
echo "killing member m$l"
etcd_kill "$l"
show dom reserve add src 10.1.0.0/24 dst 10.3.0.8 rate 256kbit burst 500 id call-3
until_ok 15 grep -q call-3 <(qosctl_ns "$R1" reserve list dev eth1 2>/dev/null)
show dom status
