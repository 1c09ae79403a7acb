#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make bench-latency`: PIP and BE latency under a BE flood with three
# schedulers on the router's egress, same testbed, same link rate, same run:
#
#   qosctl  pip-20pct (PIP strict priority at 20%, BE leaf auto = fq_codel
#           where the kernel has it);
#   cake    tc qdisc ... cake bandwidth LINK diffserv4 (EF -> Voice tin);
#   sqm     an HTB tree with fq_codel leaves classified by DSCP with u32
#           filters, after the idea of sqm-scripts' simple.qos / layered.qos
#           (OpenWrt sqm-scripts): EF 1:11 prio 1, BE 1:12, CS1 1:13.
#
#   h1 (scripts/experiments/lib.sh testbed)      r                     h2
#   iperf3 UDP BE at LAT_FLOOD% of the link -->  SYSTEM on egress  --> iperf3 -s
#   iperf3 TCP BE, one stream               -->  at LAT_LINK        --> iperf3 -s
#   iperf3 UDP EF at LAT_PIP% of the link   -->                     --> iperf3 -s
#   irtt EF and irtt BE, 10 ms              -->                     --> irtt server
#
# Needs sch_cake and fq_codel: the build machines' kernel has neither, so
# `make bench-latency` runs this in Debian's 6.12 kernel (scripts/vmrun.sh).
# Prints a table and writes OUTDIR/latency.csv (one line per family and
# system), OUTDIR/latency-ratios.csv (each system against CAKE of the same
# family: PIP against CAKE's Voice tin, BE against its best-effort tin),
# OUTDIR/latency.png, and per system and family the egress qdiscs' `tc -s`
# after the run (SYSTEM-FAMILY.txt) and irtt's raw output
# (SYSTEM-FAMILY-{pip,be}.irtt.json.gz).
#
# Usage: latency.sh OUTDIR
# Knobs: LAT_LINK (3mbit), LAT_DURATION seconds per point (10),
# LAT_FLOOD (120) and LAT_PIP (10) percent of the link, EXP_FAMILIES,
# LAT_SYSTEMS ("cake qosctl sqm").
#
# The default link is what a TCG guest carries: on the build machines (2
# cores shared with other work) a 6.12 guest delivered about 4 Mbit/s in
# total when offered the 10 Mbit/s version of this load, so there the
# guest's CPU, not the shaper, was the bottleneck. At 3 Mbit/s the shaper
# is; check it in cake-*.txt (backlog and drops in the tins).

set -u
EXP_LINK=${LAT_LINK:-3mbit}
EXP_DURATION=${LAT_DURATION:-10}
. "$(dirname "$(readlink -f "$0")")/../experiments/lib.sh"

FLOOD=${LAT_FLOOD:-120}
PIP=${LAT_PIP:-10}
SYSTEMS=${LAT_SYSTEMS:-cake qosctl sqm}

exp_init bench-latency "${1:?usage: latency.sh OUTDIR}"
topo_h1_r_h2 || exit 1
for q in cake fq_codel; do
	if ! tc -n "$R" qdisc add dev lo root $q 2>/dev/null; then
		echo "SKIP: sch_$q is not in kernel $(uname -r); make bench-latency runs this in a 6.12 VM"
		exit $ksft_skip
	fi
	tc -n "$R" qdisc del dev lo root
done
wire_packets
servers

# sqm_tree DEV: the HTB + fq_codel tree with u32 DSCP filters.
sqm_tree()
{
	local d=$1 r=$EXP_LINK_MBIT p

	tc -n "$R" qdisc add dev "$d" root handle 1: htb default 12 &&
	tc -n "$R" class add dev "$d" parent 1: classid 1:1 htb rate ${r}mbit ceil ${r}mbit &&
	tc -n "$R" class add dev "$d" parent 1:1 classid 1:11 htb \
		rate "$(awk -v r="$r" 'BEGIN { print r * 0.3 }')mbit" ceil ${r}mbit prio 1 &&
	tc -n "$R" class add dev "$d" parent 1:1 classid 1:12 htb \
		rate "$(awk -v r="$r" 'BEGIN { print r * 0.6 }')mbit" ceil ${r}mbit prio 2 &&
	tc -n "$R" class add dev "$d" parent 1:1 classid 1:13 htb \
		rate "$(awk -v r="$r" 'BEGIN { print r * 0.1 }')mbit" ceil ${r}mbit prio 3 || return 1
	for p in 11 12 13; do
		tc -n "$R" qdisc add dev "$d" parent 1:$p handle $p: fq_codel || return 1
	done
	tc -n "$R" filter add dev "$d" parent 1: protocol ip prio 1 u32 \
		match ip dsfield $TOS_PIP 0xfc flowid 1:11 &&
	tc -n "$R" filter add dev "$d" parent 1: protocol ipv6 prio 2 u32 \
		match ip6 priority $TOS_PIP 0xfc flowid 1:11 &&
	tc -n "$R" filter add dev "$d" parent 1: protocol ip prio 3 u32 \
		match ip dsfield $TOS_LBE 0xfc flowid 1:13 &&
	tc -n "$R" filter add dev "$d" parent 1: protocol ipv6 prio 4 u32 \
		match ip6 priority $TOS_LBE 0xfc flowid 1:13
}

# install SYSTEM / uninstall SYSTEM: the scheduler on r's egress (qosctl
# also on r's ingress, where it classifies).
install()
{
	case $1 in
	qosctl)	qosctl_ns "$R" apply pip-20pct dev "$R_IF1" rate "$EXP_LINK" &&
		qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate "$EXP_LINK" ;;
	cake)	tc -n "$R" qdisc add dev "$R_IF2" root cake bandwidth "$EXP_LINK" diffserv4 ;;
	sqm)	sqm_tree "$R_IF2" ;;
	esac
}

uninstall()
{
	case $1 in
	qosctl)	qosctl_ns "$R" remove dev "$R_IF2"
		qosctl_ns "$R" remove dev "$R_IF1" ;;
	*)	tc -n "$R" qdisc del dev "$R_IF2" root ;;
	esac
}

# f3 NUMBER: three decimals ("nan" stays).
f3()
{
	awk -v v="$1" 'BEGIN { if (v == "nan" || v == "") print "nan"; else printf "%.3f\n", v }'
}

csv=$EXP_OUT/latency.csv
csv_open "$csv" "family,system,pip_p50_ms,pip_p99_ms,be_p50_ms,be_p99_ms,pip_probe_loss_pct,be_probe_loss_pct,pip_mbit,be_udp_mbit,be_tcp_mbit"
echo "bench-latency: $EXP_LINK link, BE UDP at $FLOOD% + one TCP stream, EF UDP at $PIP%," \
	"${EXP_DURATION}s per point; $(machine_summary)"
for fam in $EXP_FAMILIES; do
	for sys in $SYSTEMS; do
		f=$EXP_TMP/$fam-$sys
		echo "bench-latency: $fam $sys" >&2
		install $sys || { echo "bench-latency: cannot install $sys" >&2; exit 1; }
		pids=
		udp_flow "$fam" 5202 "$(awk -v r="$EXP_LINK_MBIT" -v p="$FLOOD" 'BEGIN { print r * p / 100 }')" \
			$TOS_BE "$f-be.json"; pids+=" $FLOW_PID"
		tcp_flow "$fam" 5203 $TOS_BE 1 "$f-tcp.json"; pids+=" $FLOW_PID"
		udp_flow "$fam" 5201 "$(awk -v r="$EXP_LINK_MBIT" -v p="$PIP" 'BEGIN { print r * p / 100 }')" \
			$TOS_PIP "$f-pip.json"; pids+=" $FLOW_PID"
		rtt_probe "$fam" $TOS_PIP "$f-pip.irtt.json"; pids+=" $FLOW_PID"
		rtt_probe "$fam" $TOS_BE "$f-be.irtt.json"; pids+=" $FLOW_PID"
		wait $pids
		tc -n "$R" -s qdisc show dev "$R_IF2" > "$EXP_OUT/$sys-$fam.txt"
		gzip -c "$f-be.irtt.json" > "$EXP_OUT/$sys-$fam-be.irtt.json.gz"
		gzip -c "$f-pip.irtt.json" > "$EXP_OUT/$sys-$fam-pip.irtt.json.gz"
		[ $sys = qosctl ] && echo "bench-latency: qosctl's BE leaf:" \
			"$(tc -n "$R" qdisc show dev "$R_IF2" parent 1:13)" >&2
		uninstall $sys
		echo "$fam,$sys,$(rtt_pct "$f-pip.irtt.json" 50),$(rtt_pct "$f-pip.irtt.json" 99)," \
			"$(rtt_pct "$f-be.irtt.json" 50),$(rtt_pct "$f-be.irtt.json" 99)," \
			"$(rtt_stat "$f-pip.irtt.json" loss),$(rtt_stat "$f-be.irtt.json" loss)," \
			"$(f3 "$(udp_rx_mbit "$f-pip.json")"),$(f3 "$(udp_rx_mbit "$f-be.json")")," \
			"$(f3 "$(tcp_rx_mbit "$f-tcp.json")")" |
			tr -d ' ' >> "$csv"
		tail -1 "$csv"
	done
done
echo
print_csv "$csv"

# Against CAKE of the same family: below 1 is better for latency, above 1
# delivers more.
rat=$EXP_OUT/latency-ratios.csv
csv_open "$rat" "family,system,pip_p50_vs_cake,pip_p99_vs_cake,be_p50_vs_cake,be_p99_vs_cake,pip_mbit_vs_cake,be_mbit_vs_cake"
# col FAMILY SYSTEM COLUMN
col()
{
	awk -F, -v f="$1" -v s="$2" -v c="$3" '$1 == f && $2 == s { print $c }' "$csv" |
		sed 's/^nan$//'
}
for fam in $EXP_FAMILIES; do
	for sys in $SYSTEMS; do
		line="$fam,$sys"
		for c in 3 4 5 6 9; do
			line+=",$(ratio "$(col "$fam" "$sys" $c)" "$(col "$fam" cake $c)")"
		done
		be=$(awk -v u="$(col "$fam" "$sys" 10)" -v t="$(col "$fam" "$sys" 11)" 'BEGIN { print u + t }')
		be_cake=$(awk -v u="$(col "$fam" cake 10)" -v t="$(col "$fam" cake 11)" 'BEGIN { print u + t }')
		echo "$line,$(ratio "$be" "$be_cake")" >> "$rat"
	done
done
echo
print_csv "$rat"

png=$EXP_OUT/latency.png
{
	gp_begin "$png" "PIP (EF) and BE RTT under a BE flood, $EXP_LINK link: qosctl pip-20pct, CAKE diffserv4, sqm-style HTB + fq\\\\_codel"
	echo 'set style data histogram; set style histogram cluster gap 1; set style fill solid 0.6'
	echo 'set key top left; set ylabel "RTT (ms)"; set logscale y; set yrange [0.1:*]'
	for fam in $EXP_FAMILIES; do
		echo "set title \"$fam\""
		echo "plot \"< grep ^$fam, $csv\" using 3:xtic(2) title \"PIP p50\", '' using 4 title \"PIP p99\", \\"
		echo "     '' using 5 title \"BE p50\", '' using 6 title \"BE p99\""
	done
	echo "unset multiplot"
} | gnuplot 2>"$EXP_TMP/gnuplot.err" || cat "$EXP_TMP/gnuplot.err" >&2
plot_done "$png"
