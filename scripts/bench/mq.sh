#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# One HTB root against a tree per TX queue (queues 2): the packet rate two
# senders, each pinned to its own CPU, get through one device.
#
#   s: trafgen on CPU 0 (flow A) and CPU 1 (flow B)          d
#   $S_IF (veth, 2 TX queues) ============================ $D_IF
#   qosctl apply pip-20pct rate BENCH_MQ_LINK              rx_packets
#     queues 1: htb 1:        (one lock for both CPUs)     counted here
#     queues 2: mq 1: -> htb 100:, htb 200: (one each)
#
# 64-byte UDP frames, BE, to an address s resolves to a MAC d does not
# have: d counts each frame and drops it at once. The link rate (10gbit)
# is far above what two CPUs send, so the CPUs limit the rate, not the
# shaper. Flow A's source port is one the egress program puts on TX queue
# 0, flow B's one it puts on queue 1 (found first by sending one frame of
# each candidate port and reading the per-queue counters), so with two
# trees each CPU has a tree of its own. "none" is the device without a
# qdisc (veth's noqueue): no lock at all, the ceiling. "queues 2 + qosctl
# balance" runs the balancer beside the senders (it costs no packet
# anything; this shows it). One sender alone, without a qdisc and with the
# HTB root, gives the time the root adds per packet: the lock hold time
# of the model in performance.rst.
#
# Usage: mq.sh OUTDIR     writes OUTDIR/mq-raw.csv and OUTDIR/mq.csv
# Knobs (environment): BENCH_DURATION seconds per measurement (3),
# BENCH_REPEAT rounds (5), BENCH_MQ_LINK (10gbit).

set -u
. "$(dirname "$(readlink -f "$0")")/lib.sh"

OUT=${1:?usage: mq.sh OUTDIR}
DURATION=${BENCH_DURATION:-3}
REPEAT=${BENCH_REPEAT:-5}
LINK=${BENCH_MQ_LINK:-10gbit}
PROFILE=pip-20pct
DST4=10.9.0.99
BOGUS=02:00:00:00:00:99

require_root
require_cmd trafgen taskset tc jq
[ -x "$QOSCTL" ] || { echo "SKIP: $QOSCTL not built"; exit $ksft_skip; }
if [ "$(nproc)" -lt 2 ]; then
	echo "SKIP: needs 2 CPUs"
	exit $ksft_skip
fi

tmp=$(mktemp -d)
defer rm -rf "$tmp"
setup_ns S D || exit 1
defer_state "$S" "$D"
S_IF=$(ifname_unique mqs) D_IF=$(ifname_unique mqd)
ip -n "$S" link add "$S_IF" numtxqueues 2 numrxqueues 2 type veth peer name "$D_IF" \
	numtxqueues 2 numrxqueues 2 netns "$D" || exit 1
ip -n "$S" addr add 10.9.0.1/24 dev "$S_IF"
ip -n "$S" link set "$S_IF" up
ip -n "$D" link set "$D_IF" up
ip -n "$S" neigh replace $DST4 lladdr $BOGUS dev "$S_IF" nud permanent
smac=$(ip -n "$S" -j link show dev "$S_IF" | jq -r '.[0].address')

# flow PORT: a trafgen configuration of one 64-byte frame, source port PORT.
flow()
{
	echo "{ eth(da=$BOGUS, sa=$smac), ipv4(saddr=10.9.0.1, daddr=$DST4, ttl=64)," \
		"udp(sp=$1, dp=5001), fill(0x41, 22) }" > "$tmp/$1.cfg"
}

# Source ports whose flows the egress program puts on queue 0 and queue 1.
qosctl_ns "$S" apply $PROFILE dev "$S_IF" rate "$LINK" queues 2 || exit 1
declare -A port
for p in $(seq 4000 4063); do
	flow $p
	a=$(htb_class_packets "$S" "$S_IF" 100:13) b=$(htb_class_packets "$S" "$S_IF" 200:13)
	in_ns "$S" trafgen -i "$tmp/$p.cfg" -o "$S_IF" -P 1 -n 1 -q >/dev/null 2>&1
	if [ "$(htb_class_packets "$S" "$S_IF" 100:13)" -gt "$a" ]; then
		port[0]=${port[0]:-$p}
	elif [ "$(htb_class_packets "$S" "$S_IF" 200:13)" -gt "$b" ]; then
		port[1]=${port[1]:-$p}
	fi
	[ -n "${port[0]:-}" ] && [ -n "${port[1]:-}" ] && break
done
if [ -z "${port[0]:-}" ] || [ -z "${port[1]:-}" ]; then
	echo "mq: no source ports found for both queues (${port[0]:-none}, ${port[1]:-none})" >&2
	exit 1
fi
echo "mq: flow A sport ${port[0]} (queue 0, CPU 0), flow B sport ${port[1]} (queue 1, CPU 1)"

BAL=
setup()
{
	case $1 in
	none|none1)	qosctl_ns "$S" remove dev "$S_IF" >/dev/null 2>&1; true ;;
	q1|q1one)	qosctl_ns "$S" apply $PROFILE dev "$S_IF" rate "$LINK" queues 1 ;;
	q2)	qosctl_ns "$S" apply $PROFILE dev "$S_IF" rate "$LINK" queues 2 ;;
	q2b)	qosctl_ns "$S" apply $PROFILE dev "$S_IF" rate "$LINK" queues 2 &&
			{ nsenter --net="/run/netns/$S" -- "$QOSCTL" balance dev "$S_IF" \
				>/dev/null 2>&1 & BAL=$!; } ;;
	esac
}

teardown()
{
	[ -n "$BAL" ] && kill -TERM "$BAL" && wait "$BAL"
	BAL=
}

# measure CPUS: packets per second d receives while the senders on CPUS
# (0 1, or 0 alone) run, counted over a measured interval once they are
# under way.
measure()
{
	local c pids=() rx0 rx1 t0 t1

	for c in "$@"; do
		nsenter --net="/run/netns/$S" -- timeout "$((DURATION + 2))" \
			taskset -c $c trafgen -i "$tmp/${port[$c]}.cfg" -o "$S_IF" -P 1 -q \
			>/dev/null 2>&1 &
		pids+=($!)
	done
	sleep 0.7
	rx0=$(link_counter "$D" "$D_IF" rx packets)
	t0=$(now_ns)
	sleep "$DURATION"
	rx1=$(link_counter "$D" "$D_IF" rx packets)
	t1=$(now_ns)
	wait "${pids[@]}"
	awk -v r="$((rx1 - rx0))" -v ns="$((t1 - t0))" 'BEGIN { printf "%d\n", r * 1e9 / ns }'
}

mkdir -p "$OUT"
echo "mq: $(machine_summary)" | tee "$OUT/mq-machine.txt"
raw=$OUT/mq-raw.csv
csv_open "$raw" "round,tree,pps"
for ((round = 1; round <= REPEAT; round++)); do
	for m in $(shuf -e none q1 q2 q2b none1 q1one); do
		setup $m || { echo "mq: $m: apply failed" >&2; exit 1; }
		case $m in
		none1|q1one)	echo "$round,$m,$(measure 0)" >> "$raw" ;;
		*)		echo "$round,$m,$(measure 0 1)" >> "$raw" ;;
		esac
		teardown
	done
done
qosctl_ns "$S" remove dev "$S_IF" >/dev/null 2>&1

# rates TREE: the rates measured for TREE, lowest first.
rates()
{
	awk -F, -v m="$1" 'NR > 1 && $2 == m { print $3 }' "$raw" | sort -n
}

med()
{
	rates "$1" | median
}
csv_open "$OUT/mq.csv" "tree,pps,vs_queues_1,min,max"
for m in none q1 q2 q2b none1 q1one; do
	case $m in
	none)	name="none (noqueue)" ;;
	q1)	name="queues 1 (htb 1:)" ;;
	q2)	name="queues 2 (mq: 2 x htb)" ;;
	q2b)	name="queues 2 + qosctl balance" ;;
	none1)	name="one sender: none" ;;
	q1one)	name="one sender: queues 1" ;;
	esac
	printf '%s,%s,%s,%s,%s\n' "$name" "$(med $m)" "$(ratio "$(med $m)" "$(med q1)")" \
		"$(rates $m | head -1)" "$(rates $m | tail -1)" >> "$OUT/mq.csv"
done
echo
echo "== two senders on two CPUs, 64-byte frames (medians of $REPEAT rounds of ${DURATION} s)"
print_csv "$OUT/mq.csv"
# One sender: what the HTB root adds per packet, most of it under the root
# lock (enqueue and dequeue run under it; veth's transmit does not).
awk -v a="$(med none1)" -v b="$(med q1one)" 'BEGIN {
	if (a > 0 && b > 0)
		printf "one sender: %.0f ns per packet without a qdisc, %.0f with the HTB root: " \
		       "%.0f ns more, held under the root lock\n", 1e9 / a, 1e9 / b, 1e9 / b - 1e9 / a
}' | tee "$OUT/mq-lock.txt"
echo "mq: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
