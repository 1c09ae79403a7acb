#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The Prometheus text of `qosctl stats --prometheus` and `qosctl exporter`:
# promtool check metrics accepts it; its families, types and labels are the
# ones Documentation/metrics.rst lists; after known traffic every counter
# of both devices moved by exactly what was sent; the exporter serves the
# same series on an IPv6 and an IPv4 address; the Grafana dashboard queries
# only what exists.
#
#   h1 ------------------------- r ------------------------------ h2
#   $H1_IF         $R_IF1: test profile        $R_IF2: pip-20pct    $H2_IF
#                  pip policed hard (trTCM:    exporter on [::1]    nft drops
#                  yellow remarked to AF11,    and 127.0.0.1        6in4 and
#                  red dropped); 300 named                          udp/9999
#                  rules and 1 unnamed
#
# h1 -> h2, per family: pings in pip (EF), be (AF11) and lbe (CS1);
# 6in4 datagrams whose inner header is CS1 (lbe, family ipv6in4); IPv6 UDP
# in CS1 that rule h1udp on $R_IF1 puts in be. With G, Y, R the colours
# $R_IF1's policer gave the pip pings of a family, the counters must move
# by exactly (bytes: packets x frame size; 0 where nothing is listed):
#
#   $R_IF1 ingress  pip G+Y+R (drop verdicts R, remark Y), be pings (+UDP),
#                   lbe pings, lbe/ipv6in4 the 6in4 datagrams
#   $R_IF2 egress   the class in the mark: pip G+Y, be pings (+UDP), lbe
#                   pings, lbe/ipv6in4 the 6in4 datagrams
#   $R_IF2 ingress, $R_IF1 egress (replies, classified by their DSCP, the
#                   request's): pip G, be replies + Y, lbe replies
#   qdisc classes   sent what their egress counted; the root, their sum
#   rules           h1udp the UDP datagrams; series for 256 named rules

source "$(dirname "$(readlink -f "$0")")/lib.sh"
HERE=$(dirname "$(readlink -f "$0")")
TOP=$(readlink -f "$HERE/..")

PINGS_PIP=40		# enough to empty both buckets of the pip policer
RULES_NAMED=300		# past the 256 named rules that get series
TUN=7
UDP=9
UDP_PORT=9999

require_root
require_cmd ping nft jq
require_qosctl
# Debian's python3 has python3-prometheus-client; a python3 earlier in
# PATH (pyenv, venv) may not.
PY=
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import prometheus_client' 2>/dev/null; then
		PY=$py
		break
	fi
done
if [ -z "$PY" ]; then
	echo "SKIP: python3-prometheus-client is not installed"
	exit $ksft_skip
fi

tmp_setup

# The test profile of $R_IF1: pip-20pct's classes, pip policed at 1 and
# 2 kbit/s (the least a policer takes: even pings sent ten times slower
# than asked, in a slow VM, turn yellow and red), one rule that matters and
# many that only fill the table.
test_profile()
{
	local i

	profile_section profile "description=prometheus.sh: pip policed hard, many named rules" \
		scheduler=htb default=be rules=1024
	echo
	profile_pip police-mode=trtcm police-rate=1kbit police-burst=1514 police-peak-rate=2kbit \
		police-peak-burst=3028 police-exceed=remark:af11 police-violate=drop
	echo
	profile_section "class be" id=3 priority=1 rate=79% ceil=100%
	echo
	profile_section "class lbe" id=4 dscp=8 priority=2 rate=1% ceil=100%
	echo
	profile_section "rule h1udp" src="$H1_V6" proto=udp class=be
	for ((i = 1; i < RULES_NAMED; i++)); do
		printf '\n[rule fill%d]\nsrc = 2001:db8:ff:%x::/64\nclass = lbe\n' $i $i
	done
}

setup()
{
	topo_h1_r_h2 || exit $ksft_fail
	test_profile >"$TMP/test-profile"
	qosctl_ns "$R" apply "$TMP/test-profile" dev "$R_IF1" rate 100mbit || exit $ksft_fail
	qosctl_ns "$R" rule add dev "$R_IF1" src 2001:db8:fe::/64 class lbe || exit $ksft_fail
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit || exit $ksft_fail
	# h2 neither answers the 6in4 and UDP datagrams nor sends an ICMP
	# error for them: an error would be traffic no counter expects.
	in_ns "$H2" nft -f - <<-EOF || exit $ksft_fail
	table inet prometheus_sh {
		chain in {
			type filter hook input priority 0;
			ip protocol 41 drop
			udp dport $UDP_PORT drop
		}
	}
	EOF
}

# scrape SUFFIX: r's devices, one file each, and stats -j of $R_IF2.
scrape()
{
	qosctl_ns "$R" stats dev "$R_IF1" --prometheus >"$TMP/r1_$1" &&
		qosctl_ns "$R" stats dev "$R_IF2" --prometheus >"$TMP/r2_$1" &&
		qosctl_ns "$R" stats dev "$R_IF2" -j >"$TMP/stats_$1.json" &&
		qosctl_ns "$R" stats dev "$R_IF1" -j >"$TMP/r1_stats_$1.json" &&
		qosctl_ns "$R" stats dev "$R_IF1" -s >"$TMP/r1_stats_$1.txt"
}

# quiesce: wait until r's counters stop moving (up to 10 s), so that a
# scrape sees all of the test's packets and nothing else.
quiesce()
{
	local a b i

	a=$(qosctl_ns "$R" stats --prometheus)
	for ((i = 0; i < 20; i++)); do
		sleep 0.5
		b=$(qosctl_ns "$R" stats --prometheus)
		[ "$a" = "$b" ] && return 0
		a=$b
	done
	return 1
}

# ping_run FAMILY TOS COUNT: "TRANSMITTED RECEIVED".
ping_run()
{
	local dst=$H2_V4

	[ "$1" = 6 ] && dst=$H2_V6
	in_ns "$H1" ping -"$1" -n -q -c "$3" -i 0.01 -W 1 -Q "$2" "$dst" | ping_summary
}

# 6in4 from h1 to h2: IPv4 protocol 41 around IPv6 + UDP with a 36-byte
# payload (a 118-byte frame), Traffic Class CS1. The inner source is not
# h1's address, so rule h1udp does not match it.
send_6in4()
{
	in_ns "$H1" "$PY" - "$H2_V4" "$TUN" <<-'EOF'
	import socket, struct, sys
	src = socket.inet_pton(socket.AF_INET6, "2001:db8:64::1")
	dst = socket.inet_pton(socket.AF_INET6, "2001:db8:2::1")
	udp = struct.pack("!HHHH", 4000, 5000, 8 + 36, 0) + bytes(36)
	ip6 = struct.pack("!IHBB16s16s", 6 << 28 | 0x20 << 20, len(udp), 17, 64, src, dst) + udp
	s = socket.socket(socket.AF_INET, socket.SOCK_RAW, 41)
	for _ in range(int(sys.argv[2])):
	    s.sendto(ip6, (sys.argv[1], 0))
	EOF
}

# IPv6 UDP from h1, 56-byte payload (118-byte frame), Traffic Class CS1.
send_udp()
{
	in_ns "$H1" "$PY" - "$H2_V6" "$UDP_PORT" "$UDP" <<-'EOF'
	import socket, sys
	s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
	s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, 0x20)
	for _ in range(int(sys.argv[3])):
	    s.sendto(bytes(56), (sys.argv[1], int(sys.argv[2])))
	EOF
}

# traffic: send everything, write the context prom_check.py reads.
traffic()
{
	local fam cls tos count tx rx sent='{}' replies='{}' want='{}'

	for fam in 4 6; do
		for cls in pip:0xb8:$PINGS_PIP be:0x28:$((2 + fam)) lbe:0x20:$((fam - 1)); do
			IFS=: read -r cls tos count <<<"$cls"
			read -r tx rx < <(ping_run $fam "$tos" "$count")
			sent=$(jq -c --arg c $cls --arg f ipv$fam --argjson n "$tx" \
				'.[$c][$f] = $n' <<<"$sent")
			replies=$(jq -c --arg c $cls --arg f ipv$fam --argjson n "$rx" \
				'.[$c][$f] = $n' <<<"$replies")
			want=$(jq -c --arg c $cls --arg f ipv$fam --argjson n "$count" \
				'.[$c][$f] = $n' <<<"$want")
		done
	done
	send_6in4 && send_udp || return 1
	jq -n --arg r1 "$R_IF1" --arg r2 "$R_IF2" --arg t "$TMP" --arg top "$TOP" \
		--argjson sent "$sent" --argjson replies "$replies" --argjson count "$want" \
		--argjson tun $TUN --argjson udp $UDP '{
		r1: $r1, r2: $r2, sent: $sent, replies: $replies, count: $count,
		tun: $tun, udp: $udp, rule_capacity: 1024,
		frame: {ipv4: 98, ipv6: 118, ipv6in4: 118},
		files: {r1_before: "\($t)/r1_before", r1_after: "\($t)/r1_after",
			r2_before: "\($t)/r2_before", r2_after: "\($t)/r2_after",
			stats_json: "\($t)/stats_after.json",
			r1_stats_json: "\($t)/r1_stats_after.json",
			r1_stats_txt: "\($t)/r1_stats_after.txt", rules_json: "\($t)/rules.json",
			all: "\($t)/all", scrape: "\($t)/scrape",
			doc: "\($top)/Documentation/metrics.rst",
			dashboard: "\($top)/Documentation/grafana/qosctl.json",
			dash_rules: "\($t)/dashboard-rules.yml"}
	}' >"$TMP/ctx.json"
}

# check NAME: run one check of prom_check.py, record its verdict.
check()
{
	local msg

	msg=$("$PY" "$HERE/prom_check.py" "$1" "$TMP/ctx.json" 2>&1)
	check_err $? "$msg"
}

# promtool_check metrics|rules FILE...: promtool check on each FILE.
# Without promtool: status 2, which log_promtool turns into a skip on a
# developer's machine; in CI, where scripts/install-deps.sh installs it, a
# failure.
promtool_check()
{
	local what=$1 f out

	shift
	if ! command -v promtool >/dev/null; then
		[ "${CI:-}" = true ] && check_err 1 "promtool is not installed (scripts/install-deps.sh)"
		return 2
	fi
	for f in "$@"; do
		if [ "$what" = metrics ]; then
			out=$(promtool check metrics <"$f" 2>&1)
		else
			out=$(promtool check rules "$f" 2>&1)
		fi
		check_err $? "promtool check $what $(basename "$f"): $out"
	done
}

# log_promtool NAME STATUS: log_test, or a skip if promtool_check returned
# 2 and nothing else failed.
log_promtool()
{
	if [ "$2" = 2 ] && [ "$RET" = 0 ]; then
		log_test_skip "$1" "promtool is not installed (scripts/install-deps.sh)"
	else
		log_test "$1"
	fi
}

fetch()
{
	in_ns "$R" "$PY" -c '
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=5)
    sys.stdout.write(r.read().decode())
    print(r.status, r.headers["Content-Type"], file=sys.stderr)
except urllib.error.HTTPError as e:
    print(e.code, file=sys.stderr)
    sys.exit(2)
' "$1"
}

setup
quiesce
check_err $? "r's counters did not settle within 10 s"
scrape before
check_err $? "qosctl stats failed"
traffic
check_err $? "sending failed"
quiesce
check_err $? "r's counters did not settle within 10 s after the traffic"
scrape after
check_err $? "qosctl stats failed"
qosctl_ns "$R" stats --prometheus >"$TMP/all"
check_err $? "qosctl stats --prometheus (every device) failed"
qosctl_ns "$R" rule list dev "$R_IF1" -j >"$TMP/rules.json"
check_err $? "qosctl rule list failed"
log_setup "traffic h1 -> h2 through both devices, scrapes before and after"

promtool_metrics()
{
	promtool_check metrics "$TMP/r1_after" "$TMP/r2_after" "$TMP/all"
	log_promtool "stats --prometheus: promtool check metrics" $?
}

metrics_doc()
{
	check doc
	log_test "families, types and labels are those of Documentation/metrics.rst"
}

ping_colours()
{
	check ping
	log_test "ping: every request sent, replies == policer's green + yellow"
}

counters_r1()
{
	check r1
	log_test "$R_IF1: class counters moved by exactly the packets and bytes sent"
}

counters_r2()
{
	check r2
	log_test "$R_IF2: class counters moved by exactly the packets and bytes sent"
}

policers()
{
	check policers
	log_test "policers: colours sum to policed packets, red dropped, yellow remarked"
}

qdisc_sums()
{
	check qdisc-r1
	check qdisc-r2
	log_test "qdisc: classes sent their egress packets, root == their sum, no drop"
}

rule_series()
{
	check rules
	log_test "rules: h1udp's hits exact, 256 named rules exported, unnamed not"
}

json_match()
{
	check json
	log_test "stats --prometheus matches stats -j"
}

all_devices()
{
	grep -q "device=\"$R_IF1\"" "$TMP/all" && grep -q "device=\"$R_IF2\"" "$TMP/all"
	check_err $? "a device is missing from the all-devices output"
	log_test "stats --prometheus without dev covers every device"
}

exporter()
{
	local port url i

	port=$((20000 + RANDOM % 20000))
	spawn_ns "$R" exporter6 "$QOSCTL" exporter --listen "[::1]:$port"
	spawn_ns "$R" exporter4 "$QOSCTL" exporter --listen "127.0.0.1:$((port + 1))"
	for url in "http://[::1]:$port/metrics" "http://127.0.0.1:$((port + 1))/metrics"; do
		for ((i = 0; i < 50; i++)); do
			fetch "$url" >"$TMP/scrape" 2>"$TMP/ctype" && break
			sleep 0.1
		done
		check_err $? "fetching $url failed"
		grep -q "^200 text/plain; version=0.0.4" "$TMP/ctype"
		check_err $? "status and content type: $(cat "$TMP/ctype")"
		check same
		promtool_check metrics "$TMP/scrape"
		log_promtool "exporter serves the same series on $url" $?
	done

	fetch "http://[::1]:$port/nonexistent" >/dev/null 2>"$TMP/code"
	[ "$(cat "$TMP/code")" = 404 ]
	check_err $? "off /metrics: $(cat "$TMP/code")"
	fetch "http://[::1]:$port/" >"$TMP/index" 2>"$TMP/code"
	grep -q '^200 text/html' "$TMP/code" && grep -q 'href="/metrics"' "$TMP/index"
	check_err $? "/: $(cat "$TMP/code")"
	log_test "exporter answers / with a link to /metrics and 404 elsewhere"
}

dashboard()
{
	jq -e '.panels | length > 0' "$TOP/Documentation/grafana/qosctl.json" >/dev/null
	check_err $? "Documentation/grafana/qosctl.json is not a dashboard in valid JSON"
	check dashboard
	promtool_check rules "$TMP/dashboard-rules.yml"
	log_promtool "Grafana dashboard: valid JSON, queries parse, metrics and labels exist" $?
}

ALL_TESTS="promtool_metrics metrics_doc ping_colours counters_r1 counters_r2 policers qdisc_sums
	   rule_series json_match all_devices exporter dashboard"
tests_run
exit $EXIT_STATUS
