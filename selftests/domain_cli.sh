#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# qosctl domain against an etcd of its own (one member, loopback, ports
# found free, data in a mktemp directory), no router involved:
#
#   10.1.0.0/24        r1 eth1 ---- eth0 r2 eth1 ---- eth1 r3        10.3.0.0/24
#   2001:db8:1::/64 -- eth0         (50mbit to r3)          eth0 -- 2001:db8:3::/64
#
# Every interface pip-20pct, at 100mbit (reservations up to 18 Mbit/s,
# bursts within 10 ms at 20 Mbit/s: 25000 bytes) but r2 eth1 at 50mbit
# (9 Mbit/s, 12500 bytes): the bottleneck.
#  - load: an unknown router, an unknown profile, a duplicate interface and
#    overlapping prefixes are each refused naming the entry, and etcd is
#    unchanged (keys and revision); a profile found in QOSCTL_PROFILE_DIR
#    only loads with it; loading the same file again writes nothing;
#  - reserve add for IPv4 (ports) and IPv6 (flow label): the path r1, r2,
#    r3, the figures per hop, the ledgers, the keys per router (edge and
#    transit); a lease of for + 10 s;
#  - a request over what r2 eth1 has left: exit 1 naming r2 eth1 and the
#    figures; a reload that would strand a reservation: exit 1 with the
#    figures, nothing written; del removes every key; list -j;
#  - 10 rounds of two brokers racing for the last megabit of r1 eth1:
#    exactly one admitted each round, the ledger never over 18 Mbit/s;
#  - a commit that times out (etcd stopped during the transaction, a
#    500 ms timeout, then resumed): the reservation is there exactly once
#    or not at all, and the ledgers agree.
#
# The tests are the steps of one scenario on one etcd, started in the
# setup with the domain files written: run alone, a test starts where the
# setup leaves etcd (empty). test_load_errors, test_load and test_race
# stand alone; the test_reserve_* steps use the domain test_load leaves
# and the reservations of the steps before them, test_timeout a loaded
# domain.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$(dirname "$(readlink -f "$0")")/etcd_lib.sh"

require_cmd etcd etcdctl jq python3
[ -x "$QOSCTL" ] || { echo "SKIP: $QOSCTL not built"; exit $ksft_skip; }

# domain_json RATE [PROFILE]: the domain, r2 eth1 at RATE, r3 eth0's profile PROFILE.
domain_json()
{
	domain_json_line r1 r2 r3 "eth0 eth1 eth0 eth1 eth1 eth0" \
		"100mbit 100mbit 100mbit $1 100mbit 100mbit" "${2:-pip-20pct}"
}

# run ARGS...: qosctl; stdout in $TMP/out, stderr in $TMP/err, $rc.
run()
{
	"$QOSCTL" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# ledger R DEV FIELD: a field of the ledger of R DEV (0 if none).
ledger()
{
	etcdctl --endpoints "$ETCD_URL" get --print-value-only "/qosctl/ledger/$1/$2" |
		jq -r ".$3 // 0" | grep . || echo 0
}

resv_count()
{
	etcdctl --endpoints "$ETCD_URL" get --prefix --keys-only /qosctl/resv/ | grep -c .
}

# load_refused NAME FILE MESSAGE: a load refused with MESSAGE, etcd unchanged.
load_refused()
{
	etcd_dump /qosctl/ >"$TMP/before"
	run domain load "$2"
	check_fail $rc "$1: load exited 0"
	grep -qF -- "$3" "$TMP/err"
	check_err $? "$1: no '$3' in: $(cat "$TMP/err")"
	etcd_dump /qosctl/ >"$TMP/after"
	cmp -s "$TMP/before" "$TMP/after"
	check_err $? "$1: etcd changed"
	log_test "domain load refuses $1, nothing written"
}

test_load_errors()
{
	domain_json 50mbit | sed 's/"router": "r2", "dev": "eth1"/"router": "r9", "dev": "eth1"/' \
		>"$TMP/d1.json"
	load_refused "an unknown router" "$TMP/d1.json" \
		"$TMP/d1.json: interfaces[3]: router 'r9' is not a declared router"
	domain_json 50mbit nope >"$TMP/d2.json"
	load_refused "an unknown profile" "$TMP/d2.json" \
		"$TMP/d2.json: interfaces[5]: profile 'nope':"
	domain_json 50mbit | sed 's/"router": "r3", "dev": "eth0"/"router": "r1", "dev": "eth0"/' \
		>"$TMP/d3.json"
	load_refused "a duplicate interface" "$TMP/d3.json" \
		"$TMP/d3.json: interfaces[5]: interface r1 eth0 is declared twice (first in interfaces[0])"
	domain_json 50mbit | sed 's|"2001:db8:3::/64"|"2001:db8::/32"|' >"$TMP/d4.json"
	load_refused "overlapping prefixes" "$TMP/d4.json" \
		"$TMP/d4.json: prefixes[3]: prefix 2001:db8::/32 overlaps 2001:db8:1::/64 of prefixes[1]"
	load_refused "a profile outside the search path" "$TMP/d5.json" "profile 'site-pip'"
}

test_load()
{
	local rev

	run domain load "$TMP/domain.json"
	check_err $rc "load: $(cat "$TMP/err")"
	[ "$(etcdctl --endpoints "$ETCD_URL" get --prefix --keys-only /qosctl/ | grep -c .)" = 20 ]
	check_err $? "not 20 keys (3 routers, 6 x 2 interfaces, 4 prefixes, stamp)"
	[ "$(etcdctl --endpoints "$ETCD_URL" get --print-value-only /qosctl/router/r2/iface/eth1 |
	     jq -c '[.rate_bps, .peer, .class.cap_bps, .class.delay_ns]')" = '[50000000,"r3",9000000,10000000]' ]
	check_err $? "r2 eth1's desired value"
	rev=$(etcd_dump /qosctl/ | tail -1)
	run -j domain load "$TMP/domain.json"
	check_err $rc "second load: $(cat "$TMP/err")"
	[ "$(jq -r .changed "$TMP/out")" = false ] && [ "$(etcd_dump /qosctl/ | tail -1)" = "$rev" ]
	check_err $? "second load changed etcd: $(cat "$TMP/out")"
	QOSCTL_PROFILE_DIR=$TMP/profiles run domain load "$TMP/d5.json"
	check_err $rc "QOSCTL_PROFILE_DIR: $(cat "$TMP/err")"
	[ "$(etcdctl --endpoints "$ETCD_URL" get --print-value-only /qosctl/router/r3/iface/eth0 |
	     jq -r .profile)" = site-pip ]
	check_err $? "r3 eth0 not site-pip"
	run domain load "$TMP/domain.json"
	check_err $rc "load back: $(cat "$TMP/err")"
	grep -q "domain $TMP/domain.json: 2 keys written, 0 deleted" "$TMP/out"
	check_err $? "reload wrote other than r3 eth0's two keys: $(cat "$TMP/out")"
	log_test "domain load: written once, again unchanged, QOSCTL_PROFILE_DIR"
}

test_reserve_add()
{
	local lease

	run domain reserve add src 10.1.0.5 dst 10.3.0.0/24 proto udp dport 5004 rate 2mbit id v4
	check_err $rc "v4: $(cat "$TMP/err")"
	grep -q "path r1 eth1 -> r2 eth1 -> r3 eth0, delay bound 30ms" "$TMP/out"
	check_err $? "v4 path: $(cat "$TMP/out")"
	grep -q "hop r2 dev eth1: class pip admits 9mbit, reserved 2mbit by 1, bursts 4542b" \
		"$TMP/out"
	check_err $? "v4 hop r2: $(cat "$TMP/out")"
	run -j domain reserve add src 2001:db8:1::5 dst 2001:db8:3::/64 flowlabel 0x12345 \
		rate 1mbit burst 6000 for 60s id v6
	check_err $rc "v6: $(cat "$TMP/err")"
	[ "$(jq -c '[.path[].router, .hops[1].rate_bps, .hops[1].burst_bytes, .delay_bound_ns]' \
	     "$TMP/out")" = '["r1","r2","r3",3000000,12056,30000000]' ]
	check_err $? "v6 figures: $(cat "$TMP/out")"
	[ "$(ledger r2 eth1 rate_bps) $(ledger r1 eth1 n) $(ledger r1 eth0 n)" = "3000000 2 0" ]
	check_err $? "ledgers: $(ledger r2 eth1 rate_bps) $(ledger r1 eth1 n) $(ledger r1 eth0 n)"
	etcdctl --endpoints "$ETCD_URL" get --print-value-only /qosctl/router/r1/resv/v6 |
		jq -e '.dev == "eth1" and ([.args[] | select(.[0] == "remark")][0][1] == "ef")' \
		>/dev/null
	check_err $? "edge key of v6 on r1"
	[ "$(etcdctl --endpoints "$ETCD_URL" get --prefix --keys-only /qosctl/router/ | grep /v6 |
	     tr '\n' ' ')" = "/qosctl/router/r1/resv/v6 /qosctl/router/r2/transit/v6 /qosctl/router/r3/transit/v6 " ]
	check_err $? "v6's keys per router"
	lease=$(etcdctl --endpoints "$ETCD_URL" get --print-value-only /qosctl/resv/v6 | jq -r .lease)
	etcdctl --endpoints "$ETCD_URL" lease timetolive "$lease" |
		grep -q "granted with TTL(70s)"
	check_err $? "v6's lease is not for + 10 s"
	log_test "domain reserve add: IPv4 and IPv6 along r1 r2 r3, ledgers, edge key, lease"
}

test_reserve_refused()
{
	run domain reserve add src 10.1.0.9 dst 10.3.0.9 rate 7mbit id big
	[ $rc = 1 ]
	check_err $? "over the bottleneck: exit $rc"
	grep -qF "refused at router r2 dev eth1 (hop 2 of 3): class pip admits 9mbit (ceiling 10mbit less 10% headroom), 3mbit is reserved by 2 reservations, 6mbit is free" "$TMP/err"
	check_err $? "refusal: $(cat "$TMP/err")"
	[ "$(resv_count) $(ledger r1 eth1 rate_bps)" = "2 3000000" ]
	check_err $? "the refusal changed etcd"
	log_test "domain reserve add: refused at r2 eth1 with the figures, exit 1"
}

test_reserve_strand()
{
	domain_json 20mbit >"$TMP/small.json"
	load_refused "a change that strands reservations" "$TMP/small.json" \
		"r2 eth1: the 2 reservations admitted there take 3mbit and bursts of 12056 bytes (worst-case delay 24112 us); profile pip-20pct at 20mbit admits 3600kbit in class pip with a delay bound of 10000 us"
}

test_reserve_del()
{
	run domain reserve del id v4
	check_err $rc "del: $(cat "$TMP/err")"
	[ -z "$(etcdctl --endpoints "$ETCD_URL" get --prefix --keys-only /qosctl/ | grep /v4)" ]
	check_err $? "keys of v4 left"
	[ "$(ledger r2 eth1 rate_bps) $(ledger r3 eth0 n)" = "1000000 1" ]
	check_err $? "ledgers after del: $(ledger r2 eth1 rate_bps) $(ledger r3 eth0 n)"
	run domain reserve del id v4
	[ $rc = 1 ] && grep -q "reservation 'v4': no such reservation" "$TMP/err"
	check_err $? "second del: exit $rc, $(cat "$TMP/err")"
	run -j domain reserve list
	[ "$(jq -c '[.reservations[] | [.id, .rate_bps, [.path[].dev]]]' "$TMP/out")" = \
	  '[["v6",1000000,["eth1","eth1","eth0"]]]' ]
	check_err $? "list: $(cat "$TMP/out")"
	run domain reserve del id v6
	check_err $rc "del v6: $(cat "$TMP/err")"
	log_test "domain reserve del: every key, the ledgers; list -j"
}

# Two brokers at once for the last megabit of r1 eth1 (18 Mbit/s: 17 held).
race_round()
{
	local i=$1 pa pb ra rb

	"$QOSCTL" domain reserve add src 2001:db8:1::1 dst 2001:db8:3::1 rate 1mbit id "a$i" \
		>/dev/null 2>"$TMP/ea" &
	pa=$!
	"$QOSCTL" domain reserve add src 10.1.0.2 dst 10.3.0.2 rate 1mbit id "b$i" \
		>/dev/null 2>"$TMP/eb" &
	pb=$!
	wait $pa; ra=$?
	wait $pb; rb=$?
	echo "$ra$rb"
}

test_race()
{
	local i got n

	domain_json 100mbit >"$TMP/race.json"
	run domain load "$TMP/race.json"
	check_err $rc "race domain: $(cat "$TMP/err")"
	run domain reserve add src 10.1.0.3 dst 10.3.0.3 rate 17mbit id base
	check_err $rc "base: $(cat "$TMP/err")"
	for ((i = 0; i < 10; i++)); do
		got=$(race_round $i)
		[ "$got" = 01 ] || [ "$got" = 10 ]
		check_err $? "round $i: exits $got ($(cat "$TMP/ea" "$TMP/eb"))"
		n=$(ledger r1 eth1 rate_bps)
		[ "$n" = 18000000 ]
		check_err $? "round $i: r1 eth1 holds $n bit/s"
		run domain reserve del id "$([ "$got" = 01 ] && echo a || echo b)$i"
		check_err $rc "round $i: del: $(cat "$TMP/err")"
	done
	grep -q "refused at router r1 dev eth1 (hop 1 of" "$TMP/ea" "$TMP/eb"
	check_err $? "the loser was not refused at r1 eth1"
	[ "$(resv_count)" = 1 ]
	check_err $? "$(resv_count) reservations left, not 1"
	log_test "domain reserve add: 10 rounds of two brokers for the last megabit"
	run domain reserve del id base
}

# A commit whose answer never comes: etcd stopped while it is sent.
test_timeout()
{
	local pid rc n i

	QOSCTL_PAUSE=domain-commit "$QOSCTL" --etcd-timeout 500ms domain reserve add \
		src 10.1.0.7 dst 10.3.0.7 rate 1mbit id lost >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	stopped $pid
	check_err $? "qosctl did not reach the commit"
	kill -STOP "$ETCD_PID"
	kill -CONT $pid
	sleep 2
	kill -CONT "$ETCD_PID"
	# Each new attempt stops at the commit again: let it on.
	for ((i = 0; i < 100; i++)); do
		kill -0 $pid 2>/dev/null || break
		kill -CONT $pid 2>/dev/null
		sleep 0.1
	done
	wait $pid
	rc=$?
	n=$(etcdctl --endpoints "$ETCD_URL" get --prefix --keys-only /qosctl/ | grep -c /lost)
	if [ $rc = 0 ]; then
		[ "$n" = 4 ] && [ "$(ledger r1 eth1 n)" = 1 ] && [ "$(ledger r2 eth1 n)" = 1 ]
		check_err $? "admitted but keys $n, ledgers $(ledger r1 eth1 n) $(ledger r2 eth1 n)"
	else
		[ "$n" = 0 ] && [ "$(ledger r1 eth1 n)" = 0 ]
		check_err $? "refused but keys $n, ledger $(ledger r1 eth1 n): $(cat "$TMP/err")"
	fi
	grep -q "reservation lost:" "$TMP/out" || [ $rc != 0 ]
	check_err $? "exit 0 without the reservation printed"
	log_test "domain reserve add: a timed-out commit is there once or not at all (exit $rc)"
	[ $rc = 0 ] || printf "\t%s\n" "$(cat "$TMP/err")"
}

TMP=$(mktemp -d /tmp/domain_cli.XXXXXX)
defer rm -rf "$TMP"
etcd_start "$TMP" || exit $ksft_fail
unset QOSCTL_PROFILE_DIR
# The domain test_load loads, and one with a profile found only in
# QOSCTL_PROFILE_DIR (refused by test_load_errors, loaded by test_load).
domain_json 50mbit >"$TMP/domain.json"
mkdir -p "$TMP/profiles"
cp "$(dirname "$(readlink -f "$0")")/../tc-profiles/pip-20pct" "$TMP/profiles/site-pip"
domain_json 50mbit site-pip >"$TMP/d5.json"

ALL_TESTS="test_load_errors test_load test_reserve_add test_reserve_refused
	test_reserve_strand test_reserve_del test_race test_timeout"
tests_run
exit $EXIT_STATUS
