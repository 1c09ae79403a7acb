#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The exporter keeps answering scrapes while a few addresses hold a
# thousand connections open to it, idle or trickling headers that never
# end (slowloris):
#
#   namespace $NS, lo only
#
#   conn_flood.py
#     1000 idle          127.0.0.2, .3 --+
#     40 slow-header     127.0.0.4, .5 --+--> :$port (dual-stack)  qosctl exporter
#   curl (scrapes)       127.0.0.1 ------+                         (1024 descriptors)
#   then conn_flood.py x2, 1000 idle + 100 slow from 275 addresses
#   (127.1.x.y, fd00:f10::x), scrapes from 127.0.0.1 and ::1
#
# The exporter runs with 1024 descriptors, the soft limit systemd gives a
# service. Checks, with the flood running:
#  - /metrics answers 200 with the Prometheus text (no profile is applied
#    in $NS, so the body is the HELP and TYPE lines) within 2 s;
#  - / answers an HTML page linking to /metrics, another path 404, a
#    POST 405;
#  - no flood address holds more than the per-address cap (8, see
#    Documentation/reliability.rst, "Exporter limits");
#  - idle connections are closed once the inactivity timeout (5 s) has
#    passed, and a scrape still answers within 2 s;
#  - the trickling ones, whose bytes reset that timeout, are closed by
#    the first connection that comes after the request deadline (10 s);
#  - a distributed flood, 1000 idle and 100 slow-header connections from
#    275 addresses (4 each, under the per-address cap; 138 IPv4 127.1.x.y,
#    137 IPv6 fd00:f10::x on lo), reopened as soon as the exporter closes
#    them: 20 scrapes, alternately from 127.0.0.1 and ::1, each given
#    5 s, are all answered (the exporter closes the oldest connection
#    without a request at its cap instead of leaving new ones in the
#    backlog); the log line gives their median and maximum latency;
#  - the exporter's descriptors stay within its cap of 256 and a few;
#  - with "allow 127.0.0.0/24,::1", 127.0.0.1 and ::1 are answered,
#    127.1.0.2 and an fd00:f10:: address are closed unanswered; a prefix
#    with host bits set is refused, naming it.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

IDLE=1000
SLOW=40
PER_IP_CAP=8
MAX_CONNS=256
TIMEOUT=5
DEADLINE=10
SCRAPE_MAX=2
SCRAPES=20

require_root
require_cmd python3 prlimit ss
require_qosctl

here=$(dirname "$(readlink -f "$0")")
tmp_setup
setup_ns NS || exit $ksft_fail
port=$((20000 + RANDOM % 20000))

# fetch METHOD PATH [MAX [HOST]]: "CODE SECONDS CONTENT-TYPE" of one
# request to HOST (127.0.0.1 by default, [::1] for IPv6), body in
# $TMP/body, headers in $TMP/headers; CODE 000 when nothing came back
# within MAX seconds (5 by default).
fetch()
{
	local max=${3:-5} host=${4:-127.0.0.1}

	if command -v curl >/dev/null 2>&1; then
		in_ns "$NS" curl -s -X "$1" "http://$host:$port$2" \
			$([ "$1" = POST ] && echo -d x) --max-time "$max" \
			-o "$TMP/body" -D "$TMP/headers" \
			-w '%{http_code} %{time_total} %{content_type}\n'
		return
	fi
	in_ns "$NS" python3 - "$1" "$port" "$2" "$TMP" "$max" "$host" <<'EOT'
import http.client, sys, time

method, port, path, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
t0 = time.monotonic()
try:
    c = http.client.HTTPConnection(sys.argv[6].strip("[]"), port, timeout=float(sys.argv[5]))
    c.request(method, path, body=b"x" if method == "POST" else None)
    r = c.getresponse()
    body = r.read()
except OSError:
    print(f"000 {time.monotonic() - t0:.3f} -")
    sys.exit(0)
open(f"{tmp}/body", "wb").write(body)
open(f"{tmp}/headers", "w").write(str(r.headers))
print(f"{r.status} {time.monotonic() - t0:.3f} {r.getheader('Content-Type', '-')}")
EOT
}

# scrape NAME: /metrics within SCRAPE_MAX seconds, with its Prometheus
# content type and body.
scrape()
{
	local code secs ctype

	read -r code secs ctype < <(fetch GET /metrics)
	[ "$code" = 200 ]
	check_err $? "/metrics answered ${code:-nothing} after ${secs}s"
	[[ "$ctype" == "text/plain; version=0.0.4"* ]]
	check_err $? "content type '$ctype'"
	grep -q '^# TYPE qosctl_' "$TMP/body"
	check_err $? "no qosctl_ family in the body"
	log_test "$1: /metrics answers 200, Prometheus text"
	awk -v s="$secs" -v max=$SCRAPE_MAX 'BEGIN { exit !(s < max) }'
	xfail_on_slow check_err $? "/metrics took ${secs}s, more than ${SCRAPE_MAX}s"
	log_test "$1: /metrics within ${SCRAPE_MAX}s (${secs}s)"
}

# open_from SRC: established connections the exporter holds from SRC.
open_from()
{
	in_ns "$NS" ss -Htn state established "( sport = :$port and dst $1 )" | wc -l
}

# wait_ready VAR: wait up to 20 s for the flood started as VAR to have
# tried every connect; print its "ready" line.
wait_ready()
{
	local i

	for ((i = 0; i < 200; i++)); do
		grep -q '^ready' "$TMP/$1.log" 2>/dev/null && break
		kill -0 "${!1}" 2>/dev/null || break
		sleep 0.1
	done
	grep '^ready' "$TMP/$1.log" || cat "$TMP/$1.log"
}

# The addresses of the distributed flood and the allow-list.
ip -n "$NS" -6 addr add ::1/128 dev lo 2>/dev/null
v4=() v6=()
for ((i = 1; i <= 275; i++)); do
	if ((i <= 138)); then
		v4+=(127.1.$((i / 250)).$((i % 250 + 1)))
	else
		v6+=(fd00:f10::$i)
	fi
done
printf 'addr add %s/128 dev lo nodad\n' "${v6[@]}" | ip -n "$NS" -batch -

# addresses [FIRST [N]]: N of the array named by $1 from FIRST, joined by commas
addresses()
{
	local -n a=$1

	local IFS=,
	echo "${a[*]:$2:$3}"
}

# nsenter execs prlimit, which execs the exporter: the spawned PID is the
# exporter's.
spawn_ns "$NS" EXPORTER prlimit --nofile=1024 "$QOSCTL" exporter --listen ":$port"
wait_listen "$NS" t $port
check_err $? "exporter not listening on :$port: $(cat "$TMP/EXPORTER.log")"
log_setup "exporter listens on :$port"

no_flood()
{
	scrape "no flood"
}

# One flood from four addresses: served meanwhile, capped, timed out.
flood()
{
	local ready flood_start code secs ctype src n idle slow

	spawn_ns "$NS" FLOOD python3 "$here/conn_flood.py" \
		127.0.0.1 $port $IDLE 127.0.0.2,127.0.0.3 $SLOW 127.0.0.4,127.0.0.5
	ready=$(wait_ready FLOOD)
	[ "$ready" = "ready idle=$IDLE slow=$SLOW failed=0" ]
	check_err $? "conn_flood.py: $ready"
	log_test "$IDLE idle and $SLOW slow-header connections opened"
	[ $EXIT_STATUS -eq 0 ] || exit $ksft_fail
	flood_start=$(date +%s.%N)

	scrape "flood"

	read -r code secs ctype < <(fetch GET /)
	[ "$code" = 200 ] && [ "$ctype" = "text/html; charset=utf-8" ]
	check_err $? "/: ${code:-nothing}, '$ctype'"
	grep -q 'href="/metrics"' "$TMP/body"
	check_err $? "/ does not link to /metrics: $(head -c 200 "$TMP/body")"
	log_test "flood: / answers an HTML page linking to /metrics"

	read -r code secs ctype < <(fetch GET /nonexistent)
	[ "$code" = 404 ]
	check_err $? "/nonexistent: ${code:-nothing}"
	log_test "flood: /nonexistent answers 404"

	read -r code secs ctype < <(fetch POST /metrics)
	[ "$code" = 405 ]
	check_err $? "POST /metrics: ${code:-nothing}"
	grep -qi '^Allow: GET, HEAD' "$TMP/headers"
	check_err $? "405 without 'Allow: GET, HEAD'"
	log_test "flood: POST answers 405"

	for src in 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5; do
		n=$(open_from $src)
		[ "$n" -le $PER_IP_CAP ]
		check_err $? "$src holds $n connections"
	done
	log_test "flood: no address holds more than $PER_IP_CAP connections"

	# Trickled headers keep a connection active, so only the idle ones time
	# out; the slow ones stay, within their addresses' cap.
	sleep "$(awk -v t0="$flood_start" -v now="$(date +%s.%N)" -v t=$TIMEOUT \
		'BEGIN { d = t0 + t + 2 - now; print (d > 0 ? d : 0) }')"
	read -r _ idle slow < <(grep '^open' "$TMP/FLOOD.log" | tail -1)
	[ "$idle" = idle=0 ]
	check_err $? "after $((TIMEOUT + 2))s, open: $idle $slow"
	log_test "idle connections closed after the ${TIMEOUT}s timeout ($slow left)"
	scrape "flood, after the timeout"

	# A flood spread over more addresses than the global cap has room for at
	# 8 each, and so under the per-address cap: 275 addresses, 4 connections
	# each, 1000 idle and 100 trickling headers, half from 127.1.x.y and
	# half from fd00:f10::x. The exporter closes the connections that waited
	# longest without a request to make room for new ones, so scrapes from
	# 127.0.0.1 and ::1 are answered while the flood holds its sockets open
	# (reconnecting as soon as one is closed).
	# The trickling ones have no complete request DEADLINE after they were
	# accepted: the next connection (this scrape) closes them.
	sleep "$(awk -v t0="$flood_start" -v now="$(date +%s.%N)" -v t=$DEADLINE \
		'BEGIN { d = t0 + t + 1 - now; print (d > 0 ? d : 0) }')"
	scrape "flood, after the deadline"
	sleep 1.5
	read -r _ idle slow < <(grep '^open' "$TMP/FLOOD.log" | tail -1)
	[ "$slow" = slow=0 ]
	check_err $? "after $((DEADLINE + 1))s and a scrape, open: $idle $slow"
	log_test "slow-header connections closed at the ${DEADLINE}s deadline"
	stop_pid "$FLOOD"
}

distributed_flood()
{
	local ready4 ready6 ok times i host code secs ctype lat fds

	# 125 addresses x 4 idle and 13 x 4 slow over IPv4, 125 x 4 and 12 x 4
	# over IPv6: 1000 idle, 100 slow.
	spawn_ns "$NS" FLOOD4 python3 "$here/conn_flood.py" 127.0.0.1 $port \
		500 "$(addresses v4 0 125)" 52 "$(addresses v4 125 13)" reconnect
	spawn_ns "$NS" FLOOD6 python3 "$here/conn_flood.py" ::1 $port \
		500 "$(addresses v6 0 125)" 48 "$(addresses v6 125 12)" reconnect
	ready4=$(wait_ready FLOOD4)
	ready6=$(wait_ready FLOOD6)
	[ "$ready4" = "ready idle=500 slow=52 failed=0" ] && [ "$ready6" = "ready idle=500 slow=48 failed=0" ]
	check_err $? "conn_flood.py: IPv4 $ready4, IPv6 $ready6"
	log_test "distributed flood: 1000 idle and 100 slow-header connections from 275 addresses"

	# Twenty scrapes, alternately over IPv4 and IPv6, each given 5 s; all
	# must be answered. The latency is printed, not checked.
	ok=0
	times=()
	for ((i = 0; i < SCRAPES; i++)); do
		host=127.0.0.1
		((i % 2)) && host=[::1]
		read -r code secs ctype < <(fetch GET /metrics 5 "$host")
		[ "$code" = 200 ] && grep -q '^# TYPE qosctl_' "$TMP/body" && ok=$((ok + 1))
		times+=("$secs")
	done
	lat=$(printf '%s\n' "${times[@]}" | sort -n |
		awk '{ t[NR] = $1 } END { printf "median %.3fs, max %.3fs", t[int((NR + 1) / 2)], t[NR] }')
	[ $ok -eq $SCRAPES ]
	check_err $? "$ok of $SCRAPES scrapes answered ($lat)"
	log_test "distributed flood: $ok/$SCRAPES scrapes answered over IPv4 and IPv6 ($lat)"
	fds=$(ls "/proc/$EXPORTER/fd" | wc -l)
	[ "$fds" -le $((MAX_CONNS + 16)) ]
	check_err $? "the exporter has $fds descriptors open"
	log_test "distributed flood: the exporter holds $fds descriptors, its cap of $MAX_CONNS and a few"
	stop_pid "$FLOOD4"
	stop_pid "$FLOOD6"
}

# answered_from SRC HOST: "answered" when a GET from SRC to HOST:$port
# gets a reply, "closed" when the connection is closed without one.
answered_from()
{
	in_ns "$NS" python3 - "$1" "$2" "$port2" <<'EOT'
import socket, sys

src, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
s.settimeout(5)
s.bind((src, 0))
try:
    s.connect((host, port))
    s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    print("answered" if s.recv(64).startswith(b"HTTP/1.") else "closed")
except OSError:
    print("closed")
EOT
}

allow_list()
{
	local c src host want got out

	# The allow-list: only the scrapers' prefixes are served, over both
	# families, IPv4 clients of the dual-stack socket included.
	port2=$((port + 1))
	spawn_ns "$NS" EXPORTER2 "$QOSCTL" exporter --listen ":$port2" allow 127.0.0.0/24,::1
	wait_listen "$NS" t $port2
	check_err $? "exporter with allow not listening on :$port2: $(cat "$TMP/EXPORTER2.log")"
	for c in "127.0.0.1 127.0.0.1 answered" "::1 ::1 answered" \
		 "127.1.0.2 127.0.0.1 closed" "${v6[0]} ::1 closed"; do
		read -r src host want <<<"$c"
		got=$(answered_from "$src" "$host")
		[ "$got" = "$want" ]
		check_err $? "from $src to $host: $got, not $want"
	done
	log_test "allow 127.0.0.0/24,::1: 127.0.0.1 and ::1 answered, 127.1.0.2 and ${v6[0]} closed"
	out=$(qosctl_ns "$NS" exporter --listen ":$port2" allow 10.0.0.1/8 2>&1)
	[ $? -ne 0 ] && [[ "$out" == *"allow: '10.0.0.1/8' is not an IPv4 or IPv6 prefix"* ]]
	check_err $? "allow 10.0.0.1/8: '$out'"
	log_test "allow with host bits set: refused, naming the prefix"
}

still_running()
{
	kill -0 "$EXPORTER" 2>/dev/null
	check_err $? "exporter died: $(tail -5 "$TMP/EXPORTER.log")"
	log_test "exporter still running"
}

ALL_TESTS="no_flood flood distributed_flood allow_list still_running"
tests_run
exit $EXIT_STATUS
