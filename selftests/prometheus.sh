#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `qosctl stats --prometheus` and `qosctl exporter` produce text that the
# Prometheus project's own parser (python3-prometheus-client) accepts,
# with the class counters labelled dev, direction, class, family and
# values that match `stats -j`. The exporter answers on an IPv6 and an
# IPv4 address, and 404 off /metrics.
#
#   h1 ---- r ($R_IF1, $R_IF2: pip-20pct; exporter on [::1] and 127.0.0.1) ---- h2

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ping
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

topo_h1_r_h2 || exit $ksft_fail
# The pins outlive the namespace: remove what was applied.
tmp=$(mktemp -d)
defer rm -rf "$tmp"
for dev in "$R_IF1" "$R_IF2"; do
	qosctl_ns "$R" apply pip-20pct dev "$dev" rate 100mbit || exit $ksft_fail
done
in_ns "$H1" ping -4 -q -c 5 -i 0.05 -Q 0xb8 "$H2_V4" >/dev/null
in_ns "$H1" ping -6 -q -c 7 -i 0.05 -Q 0xb8 "$H2_V6" >/dev/null

# check FILE DEV: parse FILE, compare pip egress counters of DEV with
# stats -j, print what is wrong.
check()
{
	"$PY" - "$1" "$2" "$tmp/stats.json" <<'EOT'
import json, sys
from prometheus_client.parser import text_string_to_metric_families

text = open(sys.argv[1]).read()
dev = sys.argv[2]
stats = json.load(open(sys.argv[3]))
fams = {f.name: f for f in text_string_to_metric_families(text)}
bad = []
for name in ("qosctl_class_packets", "qosctl_class_bytes", "qosctl_qdisc_drops",
             "qosctl_qdisc_backlog_bytes", "qosctl_info"):
    if name not in fams:
        bad.append(f"family {name} missing")
pk = fams.get("qosctl_class_packets")
if pk:
    if pk.type != "counter":
        bad.append(f"qosctl_class_packets is a {pk.type}")
    for s in pk.samples:
        if set(s.labels) != {"device", "direction", "class", "family"}:
            bad.append(f"labels {sorted(s.labels)}")
            break
    pip = next(c for c in stats["classes"] if c["name"] == "pip")
    for fam in ("ipv4", "ipv6"):
        got = [s.value for s in pk.samples if s.labels == {"device": dev, "direction": "egress",
               "class": "pip", "family": fam}]
        want = pip["egress"][fam]["packets"]
        if got != [want]:
            bad.append(f"pip egress {fam}: {got} != {want}")
        if want == 0:
            bad.append(f"pip egress {fam}: no packets counted")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOT
}

qosctl_ns "$R" stats dev "$R_IF2" -j >"$tmp/stats.json"
qosctl_ns "$R" stats dev "$R_IF2" --prometheus >"$tmp/one"
check_err $? "stats --prometheus failed"
msg=$(check "$tmp/one" "$R_IF2")
check_err $? "$msg"
log_test "stats --prometheus parses and matches stats -j"

qosctl_ns "$R" stats --prometheus >"$tmp/all"
msg=$(check "$tmp/all" "$R_IF2")
check_err $? "$msg"
grep -q "device=\"$R_IF1\"" "$tmp/all"
check_err $? "$R_IF1 missing from the all-interfaces output"
log_test "stats --prometheus without dev covers every interface"

port=$((20000 + RANDOM % 20000))
# nsenter execs the exporter, so $! is the exporter itself (bg_ns would
# give the PID of a subshell, and kill would leave the exporter running).
nsenter --net="/run/netns/$R" -- "$QOSCTL" exporter --listen "[::1]:$port" 2>/dev/null &
defer kill $!
nsenter --net="/run/netns/$R" -- "$QOSCTL" exporter --listen "127.0.0.1:$((port + 1))" 2>/dev/null &
defer kill $!
sleep 0.5
fetch()
{
	in_ns "$R" "$PY" -c '
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=5)
    sys.stdout.write(r.read().decode())
    print(r.headers["Content-Type"], file=sys.stderr)
except urllib.error.HTTPError as e:
    print(e.code, file=sys.stderr)
    sys.exit(2)
' "$1"
}
for url in "http://[::1]:$port/metrics" "http://127.0.0.1:$((port + 1))/metrics"; do
	qosctl_ns "$R" stats dev "$R_IF2" -j >"$tmp/stats.json"
	fetch "$url" >"$tmp/scrape" 2>"$tmp/ctype"
	check_err $? "fetching $url failed"
	grep -q "^text/plain; version=0.0.4" "$tmp/ctype"
	check_err $? "content type $(cat "$tmp/ctype")"
	msg=$(check "$tmp/scrape" "$R_IF2")
	check_err $? "$msg"
	log_test "exporter serves parseable /metrics on $url"
done
fetch "http://[::1]:$port/nonexistent" >/dev/null 2>"$tmp/code"
[ "$(cat "$tmp/code")" = 404 ]
check_err $? "off /metrics: $(cat "$tmp/code")"
log_test "exporter answers 404 off /metrics"
exit $EXIT_STATUS
