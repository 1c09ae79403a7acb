#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# qosctl balance on a multi-queue tree: how long after a TCP flow starts
# its queue's tree has the link (convergence), and what the loop costs
# (CPU, time per period), at each period of BENCH_MQ_PERIODS.
#
#   h1 (iperf3 -c, one TCP flow)     r                                h2
#   $H1_IF --------------- $R_IF1   $R_IF2 (2 TX queues) ========= $H2_IF
#                                   pip-20pct rate 100mbit queues 2
#                                   qosctl balance dev $R_IF2 period P
#
# Each round: the link idle for 1 s (the balancer back to an even split),
# then a flow starts; the time from its start until the largest queue's
# link class (read back from the kernel, `tc class show`, as fast as tc
# runs: ~10-30 ms here) holds >= 85% of the link. A flow's own start
# (connect, slow start) is inside that time. The CPU is the balancer's
# own (getrusage, its summary at SIGTERM) over its whole run.
#
# Usage: mq_balance.sh OUTDIR     writes OUTDIR/mq-balance-raw.csv and
# OUTDIR/mq-balance.csv. Knobs: BENCH_REPEAT rounds (5), BENCH_MQ_PERIODS
# ("100 20").

set -u
. "$(dirname "$(readlink -f "$0")")/lib.sh"

OUT=${1:?usage: mq_balance.sh OUTDIR}
REPEAT=${BENCH_REPEAT:-5}
PERIODS=${BENCH_MQ_PERIODS:-100 20}
LINK=100000000

require_root
require_cmd iperf3 tc jq ss
[ -x "$QOSCTL" ] || { echo "SKIP: $QOSCTL not built"; exit $ksft_skip; }

TOPO_TXQ=2 topo_h1_r_h2 || exit 1
tmp_setup
qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit queues 2 >/dev/null || exit 1

# maxq: the largest queue's link class rate, bit/s, as tc prints it.
maxq()
{
	tc_class_rates "$R" "$R_IF2" | awk '$1 ~ /:1$/ && $3 > m { m = $3 } END { printf "%d\n", m }'
}

# converge: ms from a flow's start until one queue has >= 85% of the link.
converge()
{
	local t0 t1 port=5201 srv cli

	in_ns "$H2" iperf3 -s -1 -p $port >/dev/null 2>&1 &
	srv=$!
	wait_listen "$H2" t $port || return 1
	t0=$(now_ns)
	in_ns "$H1" iperf3 -c "$H2_V4" -p $port -t 3 >/dev/null 2>&1 &
	cli=$!
	t1=
	while [ $(($(now_ns) - t0)) -lt 3000000000 ]; do
		if [ "$(maxq)" -ge $((LINK * 85 / 100)) ]; then
			t1=$(now_ns)
			break
		fi
	done
	wait $cli $srv
	[ -n "$t1" ] && echo $(((t1 - t0) / 1000000)) || echo NA
}

mkdir -p "$OUT"
echo "mq-balance: $(machine_summary)" | tee "$OUT/mq-balance-machine.txt"
raw=$OUT/mq-balance-raw.csv
csv_open "$raw" "period_ms,round,converge_ms"
sum=$OUT/mq-balance.csv
csv_open "$sum" "period_ms,converge_ms_median,min,max,cpu_pct,step_mean_us,step_max_us,periods"
for p in $PERIODS; do
	nsenter --net="/run/netns/$R" -- "$QOSCTL" balance dev "$R_IF2" period "$p" -j \
		> "$TMP/bal-$p.json" 2>&1 &
	bal=$!
	t0=$(now_ns)
	for ((round = 1; round <= REPEAT; round++)); do
		sleep 1
		echo "$p,$round,$(converge)" >> "$raw"
	done
	kill -TERM $bal
	wait $bal
	wall=$(($(now_ns) - t0))
	c=$(awk -F, -v p="$p" 'NR > 1 && $1 == p && $3 != "NA" { print $3 }' "$raw" | sort -n)
	jq -r --argjson wall "$wall" --arg med "$(echo "$c" | median)" \
		--arg min "$(echo "$c" | head -1)" --arg max "$(echo "$c" | tail -1)" \
		'"\(.period_ms),\($med),\($min),\($max),\(.cpu_ns * 100 / $wall * 100 | round / 100),\(.step_mean_ns / 1000 | round),\(.step_max_ns / 1000 | round),\(.periods)"' \
		"$TMP/bal-$p.json" >> "$sum"
done
echo
echo "== qosctl balance: convergence after a flow starts, and the loop's cost ($REPEAT rounds)"
print_csv "$sum"
echo "mq-balance: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
