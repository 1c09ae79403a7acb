#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A broker's file of reservations at scale (qosctl reserve apply), on a
# veth pair in a namespace of its own, no traffic:
#
#   r: $DEV (a profile whose pip takes 80 Gbit/s with a 1 s delay bound,
#            room for the rates and bursts of every request) --- peer
#
#  - 1,000 requests, IPv6 and IPv4 alternately, without ids: all admitted
#    in one transaction, named r1... without a clash; the same number with
#    ids sent twice: the second round changes nothing (not doubled);
#  - 10,000 requests without ids, all in force;
#  - as many requests as the default rule table holds (65,535: its 65,536
#    entries less id 0), a policer each, without ids: all in force, the
#    rule policer hash holds one policer per reservation, and datagrams
#    sent out of $DEV to the last IPv4 and the last IPv6 reservation are
#    policed by their own policers (a burst of small frames, then red);
#  - one request more than the table is refused at once with the numbers,
#    and nothing changes;
#  - a file above the size limit is refused before it is read.
# Times are printed, not asserted.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq nsenter python3 bpftool
require_qdisc htb
setup_ns R || { echo "FAIL: namespace"; exit $ksft_fail; }
DEV=$(ifname_unique rs)
ip -n "$R" link add "$DEV" type veth peer name "${DEV}p" || exit $ksft_fail
ip -n "$R" link set "$DEV" up
tmp_setup
{
	profile_section profile default=be reserve-class=pip reserve-delay=1s
	profile_pip leaf=pfifo
	profile_section "class be" id=3 priority=1 rate=80% ceil=100% leaf=auto
} >"$TMP/wide.profile"
RET=0
qosctl_ns "$R" apply "$TMP/wide.profile" dev "$DEV" rate 400gbit >/dev/null
check_err $? "apply"
log_setup "apply a wide pip at 400gbit"

# gen N FILE [ids]: N requests of 1kbit, IPv6 and IPv4 prefixes in turn.
gen()
{
	python3 - "$@" <<'PY'
import json, sys
n, path, ids = int(sys.argv[1]), sys.argv[2], len(sys.argv) > 3
rs = []
for i in range(n):
    dst = "2001:db8:%x::/48" % i if i % 2 else "10.%d.%d.0/24" % (i >> 8, i & 255)
    r = {"dev": "DEV", "dst": dst, "rate": "1kbit"}
    if ids:
        r["id"] = "b%d" % i
    rs.append(r)
json.dump({"reservations": rs}, open(path, "w"))
PY
	sed -i "s/\"DEV\"/\"$DEV\"/g" "$2"
}
count() { qosctl_ns "$R" reserve list dev "$DEV" -j | jq '.reservations | length'; }
names() { qosctl_ns "$R" reserve list dev "$DEV" -j | jq '[.reservations[].id] | unique | length'; }
timed()
{
	local s e rc

	s=$(date +%s.%N)
	out=$("$@" 2>&1)
	rc=$?
	e=$(date +%s.%N)
	echo "    $(python3 -c "print('%.2f s' % ($e - $s))"): $*" >&2
	return $rc
}

ids_twice()
{
	local N=1000

	RET=0
	qosctl_ns "$R" remove dev "$DEV" >/dev/null
	qosctl_ns "$R" apply "$TMP/wide.profile" dev "$DEV" rate 400gbit >/dev/null
	gen $N "$TMP/ids.json" ids
	for round in 1 2; do
		timed qosctl_ns "$R" reserve apply "$TMP/ids.json"
		check_err $? "round $round: $out"
	done
	[ "$(count)" = $N ] && [ "$(names)" = $N ]
	check_err $? "$(count) reservations after two rounds"
	log_test "$N requests with ids sent twice: the second changes nothing"
}

# rule_pols: elements of the rule policer hash of $DEV's egress program.
rule_pols()
{
	local prog m

	prog=$(qosctl_ns "$R" show dev "$DEV" -j | jq -r '.programs.egress') || return 1
	for m in $(nsenter --net="/run/netns/$R" bpftool prog show id "$prog" -j |
		   jq -r '.map_ids[]'); do
		if [ "$(bpftool map show id "$m" -j | jq -r '.name')" = qos_rule_pols ]; then
			bpftool -j map dump id "$m" | jq length
			return 0
		fi
	done
	return 1
}

# police_ctr DST FAM COLOUR: packets of the reservation of DST in the rule
# list $TMP/rules.json.
police_ctr()
{
	jq --arg d "$1" ".[] | select(.dst == \$d) | .police.$3.$2.packets" "$TMP/rules.json"
}

# fresh N: $TMP/table.json of N requests without ids, applied on a device
# with nothing reserved.
fresh()
{
	qosctl_ns "$R" remove dev "$DEV" >/dev/null
	qosctl_ns "$R" apply "$TMP/wide.profile" dev "$DEV" rate 400gbit >/dev/null
	gen "$1" "$TMP/table.json"
	timed qosctl_ns "$R" reserve apply "$TMP/table.json"
}

anon_1000()
{
	local N=1000
	RET=0
	fresh $N
	check_err $? "$out"
	[ "$out" = "dev $DEV: $N reservations in force" ]
	check_err $? "said '$out'"
	[ "$(count)" = $N ] && [ "$(names)" = $N ]
	check_err $? "$(count) reservations, $(names) names"
	log_test "$N requests without ids in one transaction, each named once"
}

table_10000()
{
	local N=10000
	RET=0
	fresh $N
	check_err $? "$out"
	n=$(count)
	[ "$n" = $N ]
	check_err $? "$n reservations in force"
	log_test "$N requests without ids in force"
}

table_full()
{
	local N=65535
	RET=0
	fresh $N
	check_err $? "$out"
	[ "$out" = "dev $DEV: $N reservations in force" ]
	check_err $? "said '$out'"
	n=$(count)
	[ "$n" = $N ]
	check_err $? "$n reservations in force"
	n=$(rule_pols)
	[ "$n" = $N ]
	check_err $? "$n rule policers in the map"
	log_test "$N requests without ids (the default rule table) in force, a policer each"

	# The last reservation of each family: 10.255.254.0/24 (request 65534)
	# and 2001:db8:fffd::/48 (request 65533), reached through a neighbour
	# that needs no answer. 40 datagrams of 100 bytes: more than the burst.
	RET=0
	ip -n "$R" link set "${DEV}p" up
	ip -n "$R" addr add 192.0.2.1/24 dev "$DEV"
	ip -n "$R" addr add 2001:db8:ff::1/64 dev "$DEV" nodad
	ip -n "$R" neigh add 192.0.2.2 lladdr 02:00:00:00:00:02 dev "$DEV" nud permanent
	ip -n "$R" neigh add 2001:db8:ff::2 lladdr 02:00:00:00:00:02 dev "$DEV" nud permanent
	ip -n "$R" route add 10.255.254.0/24 via 192.0.2.2
	ip -n "$R" -6 route add 2001:db8:fffd::/48 via 2001:db8:ff::2
	ip netns exec "$R" python3 - <<-'PY'
	import socket
	for fam, dst in ((socket.AF_INET, "10.255.254.1"), (socket.AF_INET6, "2001:db8:fffd::1")):
	    s = socket.socket(fam, socket.SOCK_DGRAM)
	    for _ in range(40):
	        s.sendto(b"x" * 100, (dst, 9))
	PY
	check_err $? "sending"
	qosctl_ns "$R" rule list dev "$DEV" -j >"$TMP/rules.json"
	for t in "10.255.254.0/24 ipv4" "2001:db8:fffd::/48 ipv6"; do
		set -- $t
		g=$(police_ctr "$1" "$2" green)
		r=$(police_ctr "$1" "$2" red)
		[ "$((g + r))" = 40 ] && [ "$r" -gt 0 ] && [ "$g" -gt 0 ]
		check_err $? "$1: $g green, $r red of 40 datagrams"
	done
	log_test "the last IPv4 and IPv6 reservations of $N are policed"

	RET=0
	gen $((N + 1)) "$TMP/big.json"
	before=$(jq -c 'del(.[].police, .[].hits)' "$TMP/rules.json" | md5sum)
	timed qosctl_ns "$R" reserve apply "$TMP/big.json"
	check_fail $? "$((N + 1)) requests applied"
	want="qosctl: reserve apply: $TMP/big.json: $((N + 1)) requests for dev $DEV, which holds at most $N reservations (its rule table): nothing changed"
	[ "$out" = "$want" ]
	check_err $? "got '$out', want '$want'"
	[ "$(qosctl_ns "$R" rule list dev "$DEV" -j | jq -c 'del(.[].police, .[].hits)' | md5sum)" = \
	  "$before" ]
	check_err $? "the refused file changed the rules"
	log_test "one request more than the table refused at once with the numbers, nothing changed"
}

huge_file()
{
	RET=0
	truncate -s $((64 * 1024 * 1024 + 1)) "$TMP/huge.json"
	out=$(qosctl_ns "$R" reserve apply "$TMP/huge.json" 2>&1)
	check_fail $? "a 64 MiB + 1 file applied"
	want="qosctl: reserve apply: $TMP/huge.json: 67108865 bytes, more than the 67108864 a file may have: nothing changed"
	[ "$out" = "$want" ]
	check_err $? "got '$out', want '$want'"
	log_test "a file above 64 MiB refused before it is read"
}

ALL_TESTS="anon_1000 ids_twice table_10000 table_full huge_file"
tests_run
exit $EXIT_STATUS
