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
#     40 slow-header     127.0.0.4, .5 --+--> 127.0.0.1:$port  qosctl exporter
#   curl (scrapes)       127.0.0.1 ------+                     (1024 descriptors)
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
#  - a second flood, 300 idle connections from 60 addresses (127.0.1.x),
#    5 each, under the per-address cap: the exporter holds 256 connections
#    (its global cap), the rest wait in the listen backlog, and a scrape
#    waits with them until the timeout frees slots.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

IDLE=1000
SLOW=40
PER_IP_CAP=8
MAX_CONNS=256
TIMEOUT=5
SCRAPE_MAX=2

require_root
require_cmd python3 prlimit ss
[ -x "$QOSCTL" ] || { echo "SKIP: $QOSCTL not built"; exit $ksft_skip; }

TMP=$(mktemp -d)
defer rm -rf "$TMP"
setup_ns NS || exit $ksft_fail
port=$((20000 + RANDOM % 20000))

# fetch METHOD PATH [MAX]: "CODE SECONDS CONTENT-TYPE" of one request
# from 127.0.0.1, body in $TMP/body, headers in $TMP/headers; CODE 000
# when nothing came back within MAX seconds (5 by default).
fetch()
{
	local max=${3:-5}

	if command -v curl >/dev/null 2>&1; then
		in_ns "$NS" curl -s -X "$1" "http://127.0.0.1:$port$2" \
			$([ "$1" = POST ] && echo -d x) --max-time "$max" \
			-o "$TMP/body" -D "$TMP/headers" \
			-w '%{http_code} %{time_total} %{content_type}\n'
		return
	fi
	in_ns "$NS" python3 - "$1" "$port" "$2" "$TMP" "$max" <<'EOT'
import http.client, sys, time

method, port, path, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
t0 = time.monotonic()
try:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=float(sys.argv[5]))
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

# nsenter execs prlimit, which execs the exporter: the spawned PID is the
# exporter's.
spawn_ns "$NS" EXPORTER prlimit --nofile=1024 "$QOSCTL" exporter --listen "127.0.0.1:$port"
wait_listen "$NS" t $port
check_err $? "exporter not listening on 127.0.0.1:$port: $(cat "$TMP/EXPORTER.log")"
log_test "exporter listens on 127.0.0.1:$port"
[ $EXIT_STATUS -eq 0 ] || exit $ksft_fail
scrape "no flood"

spawn_ns "$NS" FLOOD python3 "$(dirname "$(readlink -f "$0")")/conn_flood.py" \
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

# More addresses than the global cap has room for at 8 each: the cap,
# not the cap per address, is what holds. The slow connections of the
# first flood are still open and count towards it.
spawn_ns "$NS" FLOOD2 python3 "$(dirname "$(readlink -f "$0")")/conn_flood.py" \
	127.0.0.1 $port 300 "$(seq -s, -f 127.0.1.%g 1 60)" 0 127.0.1.1
ready=$(wait_ready FLOOD2)
flood2_start=$(date +%s.%N)
[ "$ready" = "ready idle=300 slow=0 failed=0" ]
check_err $? "conn_flood.py: $ready"
sleep 0.5
estab=$(in_ns "$NS" ss -Htn state established "( sport = :$port )" | wc -l)
queued=$(in_ns "$NS" ss -Hltn "( sport = :$port )" | awk '{ print $2 }')
[ $((estab - queued)) -eq $MAX_CONNS ]
check_err $? "$estab connections established, $queued of them in the backlog"
log_test "300 more from 60 addresses: $((estab - queued)) held, $queued in the backlog"

read -r code secs ctype < <(fetch GET /metrics $((TIMEOUT + 5)))
[ "$code" = 200 ]
check_err $? "/metrics answered ${code:-nothing} after ${secs}s"
log_test "global cap reached: /metrics answers 200"
# The scrape waits in the backlog until the idle connections held time
# out, TIMEOUT after they were accepted.
awk -v t0="$flood2_start" -v now="$(date +%s.%N)" -v t=$TIMEOUT \
	'BEGIN { exit !(now - t0 < t + 1) }'
xfail_on_slow check_err $? "/metrics answered after ${secs}s"
log_test "global cap reached: /metrics waits at most the ${TIMEOUT}s timeout (${secs}s)"

kill -0 "$EXPORTER" 2>/dev/null
check_err $? "exporter died: $(tail -5 "$TMP/EXPORTER.log")"
log_test "exporter still running"
exit $EXIT_STATUS
