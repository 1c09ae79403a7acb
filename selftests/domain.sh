#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A DiffServ domain on etcd, end to end: three routers in a line, an agent
# on each, etcd started here (one member, then three), the broker's
# commands run from the management namespace (Documentation/domain.rst).
#
#   data:   H1 ---- R1 ---------- R2 ---------- R3 ---- H2
#              eth0    eth1    eth1  eth2    eth1   eth0
#   10.1.0.0/24     10.12.0.0/24   10.23.0.0/24    10.3.0.0/24
#   2001:db8:1::/64 2001:db8:12::/64 2001:db8:23::/64 2001:db8:3::/64
#   (hosts .1/::1, the router toward them .2/::2; r2 .1, r3 .2 between them)
#   (every link 100mbit pip-20pct; R2 -> R3 is declared 50mbit: the
#    bottleneck, pip admits 9mbit there and holds 12500 bytes of bursts)
#
#   management: bridge br0 in M (10.254.255.254, where qosctl domain runs)
#     E1..E3 10.254.1.1-3: etcd members (client :2379, peer :2380)
#     R1..R3 10.254.0.1-3: agents (qosctl agent --router rN-SFX)
#
# Router names carry a suffix unique to the run, so two copies of the
# test (their namespaces, etcd data dirs and agent state files) never meet.
#
# The tests are the steps of one scenario: the setup starts one member,
# loads the domain and starts the agents; each test goes on from where
# the one before it left the domain (its reservations, its agents, its
# etcd: three members from test_three_members on). Run alone, a test
# starts where the setup leaves the domain. Agents and members a test
# starts run on after it, for the tests after it (domain_stop at exit).

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/domain_lib.sh"
require_root
require_cmd etcd etcdctl jq nsenter python3 tc bpftool

if ! "$QOSCTL" help domain >/dev/null 2>&1; then
	echo "SKIP: this qosctl has no 'domain' command"
	exit $ksft_skip
fi

TMP=$(mktemp -d)
defer rm -rf "$TMP"
SFX=$(mktemp -u XXXXXX | tr 'A-Z' 'a-z')
RN=("" "r1-$SFX" "r2-$SFX" "r3-$SFX")
UDP_SEND=${TEST_OUTPUT:-$(dirname "$(readlink -f "$0")")/../.output/selftests}/udp_send

setup_ns M E1 E2 E3 H1 R1 R2 R3 H2 || exit $ksft_fail
defer_state "$R1" "$R2" "$R3"
ROUTER=("" "$R1" "$R2" "$R3")
ETCD_NS=("" "$E1" "$E2" "$E3")
defer domain_stop

# --- the namespaces ------------------------------------------------------------
domain_line || exit $ksft_fail

# --- reading the routers -------------------------------------------------------
# resv_on NS DEV: the reservation ids installed on DEV of NS, sorted.
resv_on()
{
	qosctl_ns "$1" reserve list dev "$2" -j 2>/dev/null | jq -c '[.reservations[].id] | sort'
}

# resv_is NS DEV IDS: DEV of NS has the reservations IDS (resv_on's form).
resv_is()
{
	[ "$(resv_on "$1" "$2")" = "$3" ]
}

# every_resv: "R DEV ID" for each reservation installed anywhere.
every_resv()
{
	local i d

	for i in 1 2 3; do
		for d in eth0 eth1 eth2; do
			ip -n "${ROUTER[i]}" link show "$d" >/dev/null 2>&1 || continue
			qosctl_ns "${ROUTER[i]}" reserve list dev "$d" -j 2>/dev/null |
				jq -r --arg r "$i" --arg d "$d" '.reservations[] | "r\($r) \($d) \(.id)"'
		done
	done
}

# no_key ID: etcd has no key of reservation ID.
no_key()
{
	! ectl get --keys-only --prefix /qosctl/ | grep -q "/$1\$"
}

none_installed()
{
	[ -z "$(every_resv)" ]
}

prog_ids()
{
	in_ns "$1" bpftool -j net show dev "$2" | jq -c '[.. | .id? // empty] | sort'
}

# drift I: router I's drift list, as "ID DEV ROUTE_DEV" sorted, one line.
drift()
{
	status "$1" | jq -r '[.drift[] | "\(.id) \(.dev) \(.route_dev)"] | sort | join(";")'
}
drift_is()
{
	[ "$(drift "$1")" = "$2" ]
}

# pip FAM NS DEV: packets of FAM in pip at DEV's egress.
pip()
{
	qosctl_ns "$2" stats dev "$3" -j |
		jq -r --arg f "$1" '.classes[] | select(.name == "pip") | .egress[$f].packets'
}
rule_json()
{
	qosctl_ns "$R1" rule list dev eth1 -j | jq -r --arg n "$1" ".[] | select(.name == \$n) | $2"
}

# domain_up N: a new cluster of N members, the domain loaded, an agent on
# each router, each settled.
domain_up()
{
	local i out

	etcd_cluster_start "$1" --heartbeat-interval 100 --election-timeout 1000
	check_err $? "etcd ($1 members) did not become healthy"
	out=$(dom load "$TMP/domain.json" 2>&1)
	check_err $? "domain load ($1 members): $out"
	for i in 1 2 3; do
		agent_start $i
	done
	for i in 1 2 3; do
		until_ok 20 settled $i
		check_err $? "agent ${RN[i]} ($1 members) not settled: $(status $i)"
	done
}

# snap: the routers' filters, profiles and reservations.
snap()
{
	local i d

	for i in 1 2 3; do
		for d in ${DEVS[i]}; do
			tc -n "${ROUTER[i]}" filter show dev $d egress
			tc -n "${ROUTER[i]}" filter show dev $d ingress
			qosctl_ns "${ROUTER[i]}" show dev $d -j | jq -c 'del(.counters?, .classes[]?.stats?)'
			qosctl_ns "${ROUTER[i]}" reserve list dev $d -j |
				jq -c '[.reservations[] | [.id, .rate_bps]]'
		done
	done
}

# --- admitted end to end, installed at the edge only -----------------------------
test_admitted()
{
	local t0 out st

	RET=0
	t0=$(date +%s%N)
	out=$(dom reserve add src 10.1.0.0/24 dst 10.3.0.0/24 proto udp dport 7300 rate 1mbit \
		remark ef id v4 2>&1)
	check_err $? "reserve add v4: $out"
	out=$(dom reserve add src 2001:db8:1::/64 dst 2001:db8:3::/64 flowlabel 0x5eed \
		rate 504kbit burst 252 remark ef id v6 2>&1)
	check_err $? "reserve add v6: $out"
	until_ok 5 resv_is "$R1" eth1 '["v4","v6"]'
	check_err $? "r1 eth1 has $(resv_on "$R1" eth1), not v4 and v6"
	echo "    added and installed at r1 in $((($(date +%s%N) - t0) / 1000000)) ms"
	[ "$(every_resv | sort | tr '\n' ' ')" = "r1 eth1 v4 r1 eth1 v6 " ]
	check_err $? "reservations installed: $(every_resv | tr '\n' ';')"
	until_ok 5 settled 1
	st=$(status 1)
	[ "$(jq -c '[.resv[] | select(.installed) | .id] | sort' <<<"$st")" = '["v4","v6"]' ] &&
		[ "$(jq -c '.drift' <<<"$st")" = '[]' ]
	check_err $? "r1's status: $st"
	log_test "reservations admitted over 3 hops, installed on r1 eth1 only, no drift"
}

# --- path drift: a route that leaves the declared path -------------------------
test_drift()
{
	local t0

	RET=0
	until_ok 10 drift_is 2 ""
	check_err $? "r2 reports drift on the declared path: $(drift 2)"
	[ "$(drift 3)" = "" ]
	check_err $? "r3 reports drift on the declared path: $(drift 3)"
	# r2 now sends 10.3.0.0/24 back to r1: v4 leaves by eth1, not eth2.
	ip -n "$R2" route replace 10.3.0.0/24 via 10.12.0.1
	t0=$(date +%s%N)
	until_ok 15 drift_is 2 "v4 eth2 eth1"
	check_err $? "r2's drift after the route change: '$(drift 2)'"
	echo "    drift at r2 reported $((($(date +%s%N) - t0) / 1000000)) ms after the route change"
	ip -n "$R2" route replace 10.3.0.0/24 via 10.23.0.2
	until_ok 15 drift_is 2 ""
	check_err $? "r2's drift after the route came back: '$(drift 2)'"
	log_test "path drift: a transit router reports the flow leaving elsewhere, and clears"
}

# --- at twice its rate: Premium IP at its rate through the bottleneck ------------
# 2 Mbit/s of 120-byte IPv4 frames (78-byte payloads): 2083 frames/s, 3 s.
test_held_v4()
{
	local b2 b3 secs sent took g r e2 e3 bound lower

	RET=0
	in_ns "$H2" ip -s link show eth0 >/dev/null
	b2=$(pip ipv4 "$R2" eth2)
	b3=$(pip ipv4 "$R3" eth0)
	secs=$((3 * DOMAIN_SLOW))
	send_paced "$H1" 10.3.0.1 7300 2083 $secs 78 >"$TMP/send4"
	read -r sent took <"$TMP/send4"
	g=$(rule_json v4 .police.green.ipv4.packets)
	r=$(rule_json v4 .police.red.ipv4.packets)
	e2=$(($(pip ipv4 "$R2" eth2) - b2))
	e3=$(($(pip ipv4 "$R3" eth0) - b3))
	bound=$(python3 -c "print(int(2 + ($took + 0.05) * 1000000 / 8 / 120) + 1)")
	lower=$(python3 -c "print(int(0.8 * $took * 1000000 / 8 / 120))")
	echo "    ipv4: sent $sent in ${took}s; r1 green $g (<= $bound, >= $lower) red $r;" \
		"pip at r2 eth2 $e2, at r3 eth0 $e3"
	[ $((g + r)) -eq "$sent" ] && [ "$g" -le "$bound" ] && [ "$r" -gt 0 ]
	check_err $? "ipv4: not held to its 1mbit at the edge"
	[ "$g" -ge "$lower" ]
	xfail_on_slow check_err $? "ipv4: green $g below 80% of the reservation"
	[ "$e2" -eq "$g" ] && [ "$e3" -eq "$g" ]
	check_err $? "ipv4: pip at r2 eth2 $e2 and r3 eth0 $e3, not the $g green packets"
	log_test "ipv4 at 2x its 1mbit: held at r1, exactly its green packets in pip at r2, r3"
}

test_held_v6()
{
	local b2 b3 t0 took g r e2 e3 bound

	RET=0
	b2=$(pip ipv6 "$R2" eth2)
	b3=$(pip ipv6 "$R3" eth0)
	t0=$(date +%s.%N)
	in_ns "$H1" "$UDP_SEND" 2001:db8:3::1 7350 1000 0x5eed >/dev/null
	check_err $? "udp_send"
	took=$(python3 -c "print($(date +%s.%N) - $t0)")
	g=$(rule_json v6 .police.green.ipv6.packets)
	r=$(rule_json v6 .police.red.ipv6.packets)
	e2=$(($(pip ipv6 "$R2" eth2) - b2))
	e3=$(($(pip ipv6 "$R3" eth0) - b3))
	bound=$(python3 -c "print(int(2 + ($took + 0.05) * 504000 / 8 / 126) + 1)")
	echo "    ipv6 flow label: 1000 sent in ${took}s; r1 green $g (<= $bound) red $r;" \
		"pip at r2 eth2 $e2, at r3 eth0 $e3"
	[ $((g + r)) -eq 1000 ] && [ "$g" -le "$bound" ] && [ "$r" -gt 0 ]
	check_err $? "ipv6: not held to its 504kbit at the edge"
	[ "$e2" -eq "$g" ] && [ "$e3" -eq "$g" ]
	check_err $? "ipv6: pip at r2 eth2 $e2 and r3 eth0 $e3, not the $g green packets"
	log_test "ipv6 flow label at 2x its 504kbit: held at r1, its green packets in pip at r2, r3"
}

# --- an agent SIGKILLed, changes meanwhile, restarted ---------------------------
# ids, r1 eth1's programs, is the next test's too.
test_agent_restart()
{
	local filters out

	RET=0
	ids=$(prog_ids "$R1" eth1)
	filters=$(tc -n "$R1" filter show dev eth1 egress)
	agent_kill 1
	out=$(dom reserve add src 10.1.0.0/24 dst 10.3.0.5 proto udp dport 7301 rate 256kbit \
		burst 500 id late 2>&1)
	check_err $? "reserve add late: $out"
	out=$(dom reserve del id v4 2>&1)
	check_err $? "reserve del v4: $out"
	sleep 0.5
	[ "$(resv_on "$R1" eth1)" = '["v4","v6"]' ]
	check_err $? "with its agent down, r1 changed: $(resv_on "$R1" eth1)"
	[ "$(tc -n "$R1" filter show dev eth1 egress)" = "$filters" ]
	check_err $? "with its agent down, r1's filters changed"
	agent_start 1
	until_ok 5 resv_is "$R1" eth1 '["late","v6"]'
	check_err $? "restarted agent: r1 eth1 has $(resv_on "$R1" eth1), not late and v6"
	[ "$(prog_ids "$R1" eth1)" = "$ids" ]
	check_err $? "programs on r1 eth1 were $ids, now $(prog_ids "$R1" eth1)"
	until_ok 5 settled 1
	check_err $? "restarted agent not settled: $(status 1)"
	log_test "agent SIGKILLed: nothing changes; restarted: catches up, same BPF programs"
}

# --- compaction while an agent is down --------------------------------------------
test_compaction()
{
	local rev out

	RET=0
	: "${ids:=$(prog_ids "$R1" eth1)}"
	agent_kill 1
	dom reserve add src 10.1.0.0/24 dst 10.3.0.6 rate 128kbit burst 500 id gone >/dev/null 2>&1
	dom reserve del id gone >/dev/null 2>&1
	out=$(dom reserve add src 10.1.0.0/24 dst 10.3.0.7 rate 128kbit burst 500 id kept 2>&1)
	check_err $? "reserve add kept: $out"
	rev=$(ectl get / --prefix --keys-only --limit 1 -w json | jq -r .header.revision)
	out=$(ectl compact "$rev" 2>&1)
	check_err $? "etcdctl compact $rev: $out"
	agent_start 1
	until_ok 5 resv_is "$R1" eth1 '["kept","late","v6"]'
	check_err $? "after compaction: r1 eth1 has $(resv_on "$R1" eth1); agent: $(tail -5 "$TMP/agent1.log")"
	until_ok 5 grep -q "compacted" "$TMP/agent1.log"
	check_err $? "the agent did not see the compaction: $(cat "$TMP/agent1.log")"
	[ "$(status 1 | jq .relists)" -ge 1 ]
	check_err $? "status counts no relist: $(status 1)"
	[ "$(prog_ids "$R1" eth1)" = "$ids" ]
	check_err $? "programs on r1 eth1 changed across the compaction"
	log_test "compaction at revision $rev while r1's agent was down: relisted, caught up"
}

# --- expiry across the domain ---------------------------------------------------
test_expiry()
{
	local out t0 gone

	RET=0
	out=$(dom reserve add src 10.1.0.0/24 dst 10.3.0.0/24 proto udp dport 7400 rate 512kbit \
		burst 500 for 3s id brief 2>&1)
	check_err $? "reserve add brief: $out"
	t0=$(date +%s.%N)
	until_ok 3 resv_is "$R1" eth1 '["brief","kept","late","v6"]'
	check_err $? "brief was never installed: $(resv_on "$R1" eth1)"
	until_ok 6 resv_is "$R1" eth1 '["kept","late","v6"]'
	check_err $? "brief still on r1 eth1: $(resv_on "$R1" eth1)"
	gone=$(python3 -c "print('%.1f' % ($(date +%s.%N) - $t0))")
	until_ok 10 no_key brief
	check_err $? "brief's keys are still in etcd: $(ectl get --keys-only --prefix /qosctl/ | grep brief)"
	echo "    brief (3s) gone from r1 after ${gone}s; its keys gone from etcd"
	log_test "expiry: a 3s reservation leaves the edge by its end time, its keys by its lease"
	echo "    one-member cases took $(($(date +%s) - T0)) s"
}

# === three members ===============================================================
test_three_members()
{
	local ids i

	for i in 1 2 3; do
		agent_kill $i
	done
	etcd_cluster_stop
	T0=$(date +%s)
	RET=0
	ids=$(prog_ids "$R1" eth1)
	domain_up 3
	# The new cluster has none of the old reservations: the agents dropped them.
	until_ok 5 none_installed
	check_err $? "left from the old cluster: $(every_resv | tr '\n' ';')"
	[ "$(prog_ids "$R1" eth1)" = "$ids" ]
	check_err $? "programs on r1 eth1 replaced when the cluster changed"
	log_test "3 members, new cluster id: agents relist, old reservations gone, same programs"
}

# --- the leader SIGKILLed during admissions -----------------------------------------
# l, the member that led, is the next test's too.
test_leader_killed()
{
	local k acked have sum t0

	RET=0
	l=$(etcd_leader)
	check_err $? "no leader"
	# 2mbit each over r2 eth2, which admits 9mbit: at most 4 of 8 fit (their
	# bursts, 4 x 2014 bytes with a packet each, fit its 12500).
	for k in $(seq 1 8); do
		if dom reserve add src 10.1.0.0/24 dst 10.3.0.0/24 proto udp dport $((7500 + k)) \
			rate 2mbit burst 500 id k$k >"$TMP/k$k.out" 2>&1; then
			echo k$k >>"$TMP/acked"
		fi
		[ $k -eq 2 ] && etcd_kill "$l"
	done
	touch "$TMP/acked"
	acked=$(sort "$TMP/acked" | tr '\n' ' ')
	have=$(ectl get --keys-only --prefix /qosctl/resv/ | grep -o 'k[0-9]*$' | sort | tr '\n' ' ')
	[ "$acked" = "$have" ]
	check_err $? "acknowledged: $acked; in etcd: $have"
	sum=$(ectl get --print-value-only --prefix /qosctl/resv/ | jq -s '[.[].rate_bps] | add // 0')
	[ "$sum" -le 9000000 ] && [ "$(wc -w <<<"$acked")" -le 4 ] && [ "$(wc -w <<<"$acked")" -ge 1 ]
	check_err $? "$sum bit/s admitted through r2 eth2 (9000000 at most), acknowledged: $acked"
	t0=$(date +%s%N)
	until_ok 15 resv_is "$R1" eth1 "$(jq -Rc 'split(" ") | map(select(. != ""))' <<<"$acked")"
	check_err $? "r1 eth1 has $(resv_on "$R1" eth1), acknowledged: $acked"
	echo "    leader m$l killed after the 2nd request: acknowledged $acked; $sum bit/s;" \
		"all on r1 $((($(date +%s%N) - t0) / 1000000)) ms after the last add"
	log_test "leader SIGKILLed during admissions: every acknowledged one present, none over"
}

# --- quorum lost ---------------------------------------------------------------------
test_quorum_lost()
{
	local before other i t0 out rc ms

	RET=0
	: "${l:=$(etcd_leader)}"
	before=$(snap)
	for i in 1 2 3; do
		[ $i -ne "$l" ] && { other=$i; break; }
	done
	etcd_kill "$other"
	t0=$(date +%s%N)
	out=$(in_ns "$M" timeout 30 "$QOSCTL" domain reserve add src 10.1.0.0/24 dst 10.3.0.9 \
		rate 64kbit burst 500 id noquorum 2>&1)
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "    add without quorum: exit $rc after $ms ms: $out"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $ms -le $((15000 * DOMAIN_SLOW)) ] && [ -n "$out" ]
	check_err $? "add without quorum: exit $rc after $ms ms"
	sleep 2
	for i in 1 2 3; do
		kill -0 "${AGENT_PID[i]}" 2>/dev/null
		check_err $? "agent ${RN[i]} died without quorum: $(tail -3 "$TMP/agent$i.log")"
	done
	[ "$(snap)" = "$before" ]
	check_err $? "the data plane changed without quorum: $(diff <(echo "$before") <(snap) | head -5)"
	log_test "quorum lost: adds fail in ${ms} ms with an error; filters, profiles, reservations unchanged"
	echo "    three-member cases took $(($(date +%s) - T0)) s"
}

# === one member ================================================================
# The setup: one member, the domain loaded, an agent on each router.
domain_json_line "${RN[1]}" "${RN[2]}" "${RN[3]}" "" \
	"100mbit 100mbit 100mbit 50mbit 100mbit 100mbit" >"$TMP/domain.json"
DEVS=("" "eth0 eth1" "eth1 eth2" "eth1 eth0")
T0=$(date +%s)
RET=0
domain_up 1
n=0
for i in 1 2 3; do
	for d in ${DEVS[i]}; do
		p=$(qosctl_ns "${ROUTER[i]}" show dev $d -j 2>/dev/null | jq -r .profile)
		root=$(tc -n "${ROUTER[i]}" -j qdisc show dev $d root | jq -r '.[0].kind')
		[ "$p" = pip-20pct ] && [ "$root" = htb ] && n=$((n + 1))
	done
done
[ $n -eq 6 ]
check_err $? "$n of 6 interfaces run pip-20pct under an HTB root"
rate=$(tc -n "$R2" class show dev eth2 | awk '$3 == "1:1" && $4 == "root" { print $6 }')
[ "$rate" = 50Mbit ]
check_err $? "r2 eth2: the link class runs at '$rate', not 50Mbit"
log_setup "load, then 3 agents apply all 6 interfaces (tc: HTB roots, 50mbit at r2 eth2)"

ALL_TESTS="test_admitted test_drift test_held_v4 test_held_v6 test_agent_restart
	test_compaction test_expiry test_three_members test_leader_killed test_quorum_lost"
tests_run
exit $EXIT_STATUS
