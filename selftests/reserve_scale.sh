#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A broker's file of reservations at scale (qosctl reserve apply), on a
# veth pair in a namespace of its own, no traffic:
#
#   r: $DEV (a profile whose pip takes 80 Gbit/s with a 1 s delay bound,
#            room for the rates and bursts of every request) --- peer
#
#  - as many requests as the device has policers for (1008 with a policer
#    each), IPv6 and IPv4 alternately, without ids: all admitted in one
#    transaction, named r1... without a clash; the same number with ids
#    sent twice: the second round changes nothing (not doubled);
#  - a file of 65,536 requests (the default rule table) is refused at once
#    with the numbers, and nothing changes;
#  - a file above the size limit is refused before it is read.
# Times are printed, not asserted.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq nsenter python3
require_qdisc htb
setup_ns R || { echo "FAIL: namespace"; exit $ksft_fail; }
DEV=$(ifname_unique rs)
ip -n "$R" link add "$DEV" type veth peer name "${DEV}p" || exit $ksft_fail
ip -n "$R" link set "$DEV" up
TMP=$(mktemp -d)
defer rm -rf "$TMP"
cat >"$TMP/wide.profile" <<PROF
[profile]
default = be
reserve-class = pip
reserve-delay = 1s
[class pip]
id = 2
dscp = 46
priority = 0
rate = 20%
ceil = 20%
leaf = pfifo
[class be]
id = 3
priority = 1
rate = 80%
ceil = 100%
leaf = auto
PROF
RET=0
qosctl_ns "$R" apply "$TMP/wide.profile" dev "$DEV" rate 400gbit >/dev/null
check_err $? "apply"
log_test "apply a wide pip at 400gbit"
[ $EXIT_STATUS -eq 0 ] || exit $ksft_fail

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

N=1008
RET=0
gen $N "$TMP/anon.json"
timed qosctl_ns "$R" reserve apply "$TMP/anon.json"
check_err $? "$out"
[ "$out" = "dev $DEV: $N reservations in force" ]
check_err $? "said '$out'"
[ "$(count)" = $N ] && [ "$(names)" = $N ]
check_err $? "$(count) reservations, $(names) names"
log_test "$N requests without ids in one transaction, each named once"

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

RET=0
gen 65536 "$TMP/big.json"
before=$(qosctl_ns "$R" rule list dev "$DEV" -j | md5sum)
timed qosctl_ns "$R" reserve apply "$TMP/big.json"
check_fail $? "65536 requests applied"
want="qosctl: reserve apply: $TMP/big.json: 65536 requests for dev $DEV, which holds at most 1008 reservations (its rule table 65535, policers 1008): nothing changed"
[ "$out" = "$want" ]
check_err $? "got '$out', want '$want'"
[ "$(qosctl_ns "$R" rule list dev "$DEV" -j | md5sum)" = "$before" ]
check_err $? "the refused file changed the rules"
log_test "65536 requests refused at once with the numbers, nothing changed"

RET=0
truncate -s $((64 * 1024 * 1024 + 1)) "$TMP/huge.json"
out=$(qosctl_ns "$R" reserve apply "$TMP/huge.json" 2>&1)
check_fail $? "a 64 MiB + 1 file applied"
want="qosctl: reserve apply: $TMP/huge.json: 67108865 bytes, more than the 67108864 a file may have: nothing changed"
[ "$out" = "$want" ]
check_err $? "got '$out', want '$want'"
log_test "a file above 64 MiB refused before it is read"

exit $EXIT_STATUS
