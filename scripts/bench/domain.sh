#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The domain on etcd, measured (Documentation/domain.rst, "Measured"). Not
# a test: it prints figures, and fails only when something does not run.
#
#   admission  `qosctl domain reserve add` over a 3-hop path (r1 - r2 - r3),
#              wall clock around the command (process start included), with
#              1 and with 3 etcd members: p50, p99;
#   applied    from the moment `domain reserve add` returns to the moment r1's
#              agent publishes a status whose applied_revision covers the
#              reservation's key (etcdctl watch on the status key, each line
#              stamped as it arrives): p50, p99. The add returns a little
#              after etcd committed (its process exits), so this can be
#              below zero; from_start: from the start of the add instead,
#              its admission included. The status put and its watch are in
#              both.
#   scale      BENCH_DOMAIN_ROUTERS routers in a star (hub r0, spokes r1..),
#              each spoke with an uplink and a LAN (veth pairs within its namespace), an agent on
#              every spoke (the hub's many interfaces are declared but run no
#              agent: its applies would measure the verifier); then
#              BENCH_DOMAIN_RESV reservations spoke to spoke, one after the
#              other: admissions per second, etcd's database size, the
#              agents' CPU time (utime + stime from /proc) and the time until
#              every edge has installed its last one; the database's
#              size before and after a compaction and defragmentation.
#
#   management bridge in M: etcd members E1..E3 (.11-.13), routers (.1-.N)
#
# Usage: domain.sh OUTDIR   writes domain-admission.csv, domain-applied.csv (and -raw.txt),
#                           domain-scale.csv, domain-scale-errors.txt (refusals)
# Knobs: BENCH_DOMAIN_ADDS (200), BENCH_DOMAIN_APPLIED (100),
#        BENCH_DOMAIN_ROUTERS (50), BENCH_DOMAIN_RESV (10000)

set -u
. "$(dirname "$(readlink -f "$0")")/lib.sh"
. "$BENCH_TOP/selftests/domain_lib.sh"
require_root
require_cmd etcd etcdctl jq nsenter python3

OUT=${1:?usage: domain.sh OUTDIR}
ADDS=${BENCH_DOMAIN_ADDS:-200}
APPLIED=${BENCH_DOMAIN_APPLIED:-100}
ROUTERS=${BENCH_DOMAIN_ROUTERS:-50}
RESV=${BENCH_DOMAIN_RESV:-10000}
mkdir -p "$OUT"
TMP=$(mktemp -d)
defer rm -rf "$TMP"
SFX=$(mktemp -u XXXXXX | tr 'A-Z' 'a-z')

setup_ns M E1 E2 E3 || exit 1
ETCD_NS=("" "$E1" "$E2" "$E3")
defer domain_stop
mgmt_bridge

for i in 1 2 3; do
	mgmt "${ETCD_NS[i]}" 10.254.1.$i
done

# A 3-router line; r1's interfaces exist (dummies in R1) for its agent.
line_domain()
{
	domain_json_line "a1-$SFX" "a2-$SFX" "a3-$SFX" "lan uplink w e uplink lan" \
		"10gbit 10gbit 10gbit 10gbit 10gbit 10gbit" "" "10.1.0.0/16" "10.3.0.0/16"
}

# --- admission latency, 1 and 3 members ---------------------------------------
: >"$OUT/domain-scale-errors.txt"
csv_open "$OUT/domain-admission.csv" "members,adds,p50_ms,p99_ms,max_ms"
line_domain >"$TMP/line.json"
for members in 1 3; do
	etcd_cluster_start $members --quota-backend-bytes 4294967296 --max-txn-ops 10000 || { echo "etcd ($members) did not start"; exit 1; }
	dom load "$TMP/line.json" >/dev/null || exit 1
	: >"$TMP/adm"
	for ((k = 0; k < ADDS; k++)); do
		t0=$(now_ns)
		dom reserve add src 10.1.$((k / 250)).$((k % 250 + 1)) dst 10.3.0.0/16 \
			rate 64kbit burst 200 id b$k >/dev/null || exit 1
		echo $((($(now_ns) - t0) / 1000)) >>"$TMP/adm"
	done
	p50=$(median <"$TMP/adm")
	p99=$(percentile 99 <"$TMP/adm")
	max=$(sort -g "$TMP/adm" | tail -1)
	echo "$members,$ADDS,$(ratio "$p50" 1000),$(ratio "$p99" 1000),$(ratio "$max" 1000)" \
		>>"$OUT/domain-admission.csv"
	etcd_cluster_stop
done
print_csv "$OUT/domain-admission.csv"

# ends NS: a router's two interfaces, lan and uplink, each a veth whose peer
# stays in NS (the kernel here has no dummy device).
ends()
{
	local d

	for d in lan uplink; do
		ip -n "$1" link add "$d" type veth peer name "${d}p" &&
			ip -n "$1" link set "$d" up && ip -n "$1" link set "${d}p" up || return 1
	done
}

# --- desired to applied on a router -------------------------------------------
setup_ns R1 || exit 1
defer_state "$R1"
defer rm -f "/var/lib/qosctl/agent-a1-$SFX.json"
mgmt "$R1" 10.254.0.1
ends "$R1"
etcd_cluster_start 1 --quota-backend-bytes 4294967296 --max-txn-ops 10000 || exit 1
dom load "$TMP/line.json" >/dev/null || exit 1
bg_ns "$R1" AGENT env QOSCTL_ETCD="$QOSCTL_ETCD" "$QOSCTL" agent --router "a1-$SFX"
for ((i = 0; i < 300; i++)); do
	ectl get --print-value-only "/qosctl/status/a1-$SFX" |
		jq -se 'length == 1 and (.[0] | .applied_revision == .desired_revision and
		       .error == "" and (.ifaces | length) == 2 and all(.ifaces[]; .applied))' \
		>/dev/null 2>&1 && break
	sleep 0.2
done
# Every status put, stamped as it arrives.
# etcdctl is the background job (its PID killed at the end); the stamping
# python ends with its output.
nsenter --net="/run/netns/$M" -- env ETCDCTL_API=3 etcdctl --endpoints "$QOSCTL_ETCD" \
	watch "/qosctl/status/a1-$SFX" > >(python3 -u -c '
import sys, time
for line in sys.stdin:
    if line.startswith("{"):
        print(time.time_ns(), line, end="", flush=True)' >"$TMP/status.log") &
WATCH=$!
defer kill "$WATCH"
# The watch sees only what comes after it started: reservations not
# counted until it has stamped a status.
for ((k = 0; k < 100; k++)); do
	dom reserve add src 10.1.201.$((k % 250 + 1)) dst 10.3.0.0/16 rate 64kbit burst 200 \
		id w$k >/dev/null || exit 1
	sleep 0.3
	[ -s "$TMP/status.log" ] && break
done
csv_open "$OUT/domain-applied.csv" "samples,p50_ms,p99_ms,max_ms,from_start_p50_ms,from_start_p99_ms"
: >"$TMP/acks"
for ((k = 0; k < APPLIED; k++)); do
	t0=$(date +%s%N)
	dom reserve add src 10.1.200.$((k % 250 + 1)) dst 10.3.0.0/16 proto udp dport $((5000 + k)) \
		rate 64kbit burst 200 id d$k >/dev/null || exit 1
	t=$(date +%s%N)
	rev=$(ectl get "/qosctl/router/a1-$SFX/resv/d$k" -w json | jq -r '.kvs[0].mod_revision')
	echo "$t $rev $t0" >>"$TMP/acks"
	sleep 0.2
done
sleep 1
python3 - "$TMP/acks" "$TMP/status.log" >"$TMP/applied" <<'EOF'
import json, sys
acks = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
st = []
for l in open(sys.argv[2]):
    t, doc = l.split(" ", 1)
    st.append((int(t), json.loads(doc)["applied_revision"]))
for t, rev, t0 in acks:
    seen = [ts for ts, ap in st if int(ap) >= rev]
    if seen:
        print((min(seen) - t) / 1e6, (min(seen) - t0) / 1e6)
EOF
cp "$TMP/applied" "$OUT/domain-applied-raw.txt"
n=$(wc -l <"$TMP/applied")
cut -d' ' -f1 "$TMP/applied" >"$TMP/a1"
cut -d' ' -f2 "$TMP/applied" >"$TMP/a2"
echo "$n,$(median <"$TMP/a1"),$(percentile 99 <"$TMP/a1"),$(sort -g "$TMP/a1" | tail -1),$(median <"$TMP/a2"),$(percentile 99 <"$TMP/a2")" \
	>>"$OUT/domain-applied.csv"
print_csv "$OUT/domain-applied.csv"
kill "$WATCH" "$AGENT"
etcd_cluster_stop

# --- scale: a star of routers, many reservations --------------------------------
# Router 0 is the hub, 1..N-1 spokes; spoke i's LAN is 10.(i/250).(i%250).0/24.
etcd_cluster_start 1 --quota-backend-bytes 4294967296 --max-txn-ops 10000 || exit 1
star()
{
	local i sp

	printf '{"routers": ['
	for ((i = 0; i < ROUTERS; i++)); do
		printf '%s"s%d-%s"' "$([ $i -gt 0 ] && echo ,)" $i "$SFX"
	done
	printf '], "interfaces": ['
	for ((i = 1; i < ROUTERS; i++)); do
		sp="s$i-$SFX"
		printf '%s{"router": "s0-%s", "dev": "p%d", "rate": "10gbit", "profile": "pip-20pct", "peer": "%s"},' \
			"$([ $i -gt 1 ] && echo)" "$SFX" $i "$sp"
		printf '{"router": "%s", "dev": "uplink", "rate": "10gbit", "profile": "pip-20pct", "peer": "s0-%s"},' \
			"$sp" "$SFX"
		printf '{"router": "%s", "dev": "lan", "rate": "10gbit", "profile": "pip-20pct"}' "$sp"
		[ $i -lt $((ROUTERS - 1)) ] && printf ','
	done
	printf '], "prefixes": ['
	for ((i = 1; i < ROUTERS; i++)); do
		printf '{"prefix": "10.%d.%d.0/24", "router": "s%d-%s", "dev": "lan"}' \
			$((i / 250)) $((i % 250)) $i "$SFX"
		[ $i -lt $((ROUTERS - 1)) ] && printf ','
	done
	printf ']}\n'
}
star >"$TMP/star.json"
dom load "$TMP/star.json" >/dev/null || exit 1
declare -a SPOKE SPID
for ((i = 1; i < ROUTERS; i++)); do
	name=S$i
	setup_ns "$name" || exit 1
	SPOKE[i]=${!name}
	defer_state "${SPOKE[i]}"
	defer rm -f "/var/lib/qosctl/agent-s$i-$SFX.json"
	mgmt "${SPOKE[i]}" 10.254.$((2 + i / 250)).$((i % 250 + 1))
	ends "${SPOKE[i]}"
done
t0=$(now_ns)
for ((i = 1; i < ROUTERS; i++)); do
	bg_ns "${SPOKE[i]}" SPID[$i] env QOSCTL_ETCD="$QOSCTL_ETCD" "$QOSCTL" agent \
		--router "s$i-$SFX"
done
# cpu: the agents' CPU time so far, in seconds.
cpu()
{
	local i s=0 t

	for ((i = 1; i < ROUTERS; i++)); do
		t=$(awk '{ print $14 + $15 }' "/proc/${SPID[i]}/stat" 2>/dev/null || echo 0)
		s=$((s + t))
	done
	echo "$s $(getconf CLK_TCK)" | awk '{ printf "%.2f\n", $1 / $2 }'
}
alive()
{
	ectl get --prefix /qosctl/status/ --print-value-only |
		jq -s '[.[] | select(.error == "" and (.ifaces | length) == 2 and all(.ifaces[]; .applied))] | length'
}
for ((k = 0; k < 3000; k++)); do
	[ "$(alive)" -ge $((ROUTERS - 1)) ] && break
	sleep 1
done
up_s=$(( ($(now_ns) - t0) / 1000000000 ))
cpu0=$(cpu)
t0=$(now_ns)
for ((k = 0; k < RESV; k++)); do
	a=$((k % (ROUTERS - 1) + 1))
	b=$(((k / (ROUTERS - 1) + a) % (ROUTERS - 1) + 1))
	[ $a -eq $b ] && b=$((b % (ROUTERS - 1) + 1))
	dom reserve add src 10.$((a / 250)).$((a % 250)).$((k % 250 + 1)) \
		dst 10.$((b / 250)).$((b % 250)).0/24 proto udp dport $((1024 + k % 60000)) \
		rate 64kbit burst 200 id z$k >/dev/null 2>>"$OUT/domain-scale-errors.txt" ||
		echo "z$k" >>"$TMP/refused"
done
adm_s=$(python3 -c "print(($(now_ns) - $t0) / 1e9)")
# Until every spoke has installed what it is the edge of.
want=$((RESV - $(cat "$TMP/refused" 2>/dev/null | wc -l)))
for ((k = 0; k < 600; k++)); do
	have=$(ectl get --prefix /qosctl/status/ --print-value-only |
		jq -s '[.[].resv[]? | select(.installed)] | length')
	[ "$have" -ge "$want" ] && break
	sleep 1
done
inst_s=$(python3 -c "print(($(now_ns) - $t0) / 1e9)")
cpu1=$(cpu)
db=$(ectl endpoint status -w json | jq '.[0].Status.dbSize')
# Every admission rewrites the ledgers of its path: without compaction the
# history is most of the database. Compacted and defragmented, what is left.
rev=$(ectl endpoint status -w json | jq '.[0].Status.header.revision')
ectl compact "$rev" >/dev/null && ectl defrag >/dev/null
dbc=$(ectl endpoint status -w json | jq '.[0].Status.dbSize')
csv_open "$OUT/domain-scale.csv" \
	"routers,reservations,admitted,admissions_per_s,installed,all_installed_s,db_bytes,db_compacted_bytes,agents_cpu_s,agents_up_s"
echo "$ROUTERS,$RESV,$want,$(ratio "$want" "$adm_s"),$have,$inst_s,$db,$dbc,$(ratio "$(python3 -c "print($cpu1 - $cpu0)")" 1),$up_s" \
	>>"$OUT/domain-scale.csv"
print_csv "$OUT/domain-scale.csv"
etcd_cluster_stop
