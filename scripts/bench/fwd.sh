#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Forwarding packet rate through a router namespace, the same HTB tree on
# its egress, classified by: nothing, qosctl, expert nftables, u32.
#
#   h1 (trafgen, 1 process)        r                          h2
#   $H1_IF ------------------ $R_IF1   $R_IF2 ------------------ $H2_IF
#   10.1.1.1                  ingress:  egress: HTB tree        rx_packets
#   2001:db8:1::1             qosctl    (qosctl | nft           counted here
#                                        | u32 | none | hook)
#   UDP, DSCP EF, flow label 0x12345, to 10.1.2.99 / 2001:db8:2::99, which r
#   resolves to a MAC h2 does not have: h2 counts each frame and drops it
#   at once (PACKET_OTHERHOST), so no work after the counter.
#
# The tree is the one `qosctl apply PROFILE ... rate BENCH_LINK` builds,
# copied class by class with tc for the other methods, at a rate that never
# shapes. The test traffic is PIP. "rules" is the number of 3-tuple rules
# per family (v4: src . dst; v6: src . dst . flow label): N - 1 that do not
# match the traffic and the one that does, last; 0 means DSCP table only.
# Every method falls back to the DSCP table after its rules.
#
# Usage: fwd.sh OUTDIR     writes OUTDIR/fwd-raw.csv, fwd.csv, fwd-ratios.csv,
#                          fwd-police.csv, fwd-family.csv
# Knobs (environment): BENCH_DURATION seconds per measurement (2),
# BENCH_REPEAT rounds (3), BENCH_RULES ("0 1 100 10000"), BENCH_SIZES frame
# bytes without FCS ("64 1514"), BENCH_METHODS, BENCH_POLICE_RULES rule
# counts for the policed variants ("0 10000"), BENCH_LINK (100gbit),
# BENCH_HOOK_OBJ the empty program of the "hook" method (make bench
# builds it).

set -u
. "$(dirname "$(readlink -f "$0")")/lib.sh"

OUT=${1:?usage: fwd.sh OUTDIR}
DURATION=${BENCH_DURATION:-2}
REPEAT=${BENCH_REPEAT:-3}
RULES=${BENCH_RULES:-0 1 100 10000}
SIZES=${BENCH_SIZES:-64 1514}
METHODS=${BENCH_METHODS:-none hook qosctl nft u32 qosctl+police nft+police u32+police}
POLICE_RULES=${BENCH_POLICE_RULES:-0 10000}
LINK=${BENCH_LINK:-100gbit}
PROFILE=${BENCH_PROFILE:-pip-20pct}
PIP_CLASSID=1:12
LBE_CLASSID=1:14
# PIP is policed at its 20% share of the link, which the test traffic never
# reaches: what is measured is the cost of the token bucket, not drops.
POLICE_BPS=$(( ${LINK%gbit} * 1000000000 / 5 ))
DST4=10.1.2.99
DST6=2001:db8:2::99
FLOWLABEL=0x12345

require_root
require_cmd trafgen nft tc jq
[ -x "$QOSCTL" ] || { echo "SKIP: $QOSCTL not built"; exit $ksft_skip; }

tmp=$(mktemp -d)
defer rm -rf "$tmp"
topo_h1_r_h2 || exit 1
bogus=02:00:00:00:00:99
ip -n "$R" neigh replace $DST4 lladdr $bogus dev "$R_IF2" nud permanent
ip -n "$R" -6 neigh replace $DST6 lladdr $bogus dev "$R_IF2" nud permanent

# trafgen configurations, one per family and frame size.
write_trafgen()
{
	local rmac h1mac fam size

	rmac=$(ip -n "$R" -j link show dev "$R_IF1" | jq -r '.[0].address')
	h1mac=$(ip -n "$H1" -j link show dev "$H1_IF" | jq -r '.[0].address')
	for size in $SIZES; do
		echo "{ eth(da=$rmac, sa=$h1mac)," \
			"ipv4(saddr=$H1_V4, daddr=$DST4, tos=0xb8, ttl=64)," \
			"udp(sp=4000, dp=5001), fill(0x41, $((size - 42))) }" > "$tmp/ipv4-$size.cfg"
		echo "{ eth(da=$rmac, sa=$h1mac)," \
			"ipv6(saddr=$H1_V6, daddr=$DST6, tc=0xb8, fl=$FLOWLABEL, hl=64)," \
			"udp(sp=4000, dp=5001), fill(0x41, $((size - 62))) }" > "$tmp/ipv6-$size.cfg"
	done
}

# The tree qosctl builds, as a tc batch with @DEV@ for the device: applied
# once on a scratch veth, read back, removed.
capture_tree()
{
	local a b

	a=$(ifname_unique bta) b=$(ifname_unique btb)
	ip -n "$R" link add "$a" type veth peer name "$b" || return 1
	ip -n "$R" link set "$a" up
	# apply's summary line on stdout is not part of the batch.
	if ! qosctl_ns "$R" apply "$PROFILE" dev "$a" rate "$LINK" >/dev/null; then
		ip -n "$R" link del "$a"
		return 1
	fi
	tc -n "$R" -j qdisc show dev "$a" | jq -r '.[] | select(.root) |
		"qdisc add dev @DEV@ root handle \(.handle) htb default \(.options.default | ltrimstr("0x"))"'
	tc -n "$R" -d class show dev "$a" | awk '$2 == "htb" {
		where = ""; opts = ""
		for (i = 4; i <= NF; i++) {
			if ($i == "root") where = "root"
			else if ($i == "parent") where = "parent " $(i + 1)
			else if ($i ~ /^(prio|quantum|rate|ceil)$/) opts = opts " " $i " " $(i + 1)
			else if ($i ~ /^c?burst$/) { v = $(i + 1); sub(/\/.*/, "", v); opts = opts " " $i " " v }
		}
		# tc prints no quantum for inner classes; HTB ignores it there,
		# but warns if it is left to r2q at these rates.
		if (opts !~ /quantum/) opts = opts " quantum 200000"
		print "class add dev @DEV@ " where " classid " $3 " htb" opts }'
	tc -n "$R" -j qdisc show dev "$a" | jq -r '.[] | select(.kind == "pfifo" or .kind == "bfifo") |
		"qdisc add dev @DEV@ parent \(.parent) handle \(.handle) \(.kind) limit \(.options.limit)"'
	qosctl_ns "$R" remove dev "$a"
	ip -n "$R" link del "$a"
}

tree_build()
{
	sed "s/@DEV@/$R_IF2/" "$tmp/tree.batch" | tc -n "$R" -batch -
}

# Nothing but the tree: everything goes to the default class (BE).
setup_none()
{
	tree_build
}

# An empty tc program at qosctl's two hooks: the price of the hooks alone.
setup_hook()
{
	local obj=${BENCH_HOOK_OBJ:-$BENCH_TOP/.output/bench/hook_ref.bpf.o}

	if [ ! -f "$obj" ]; then
		SKIP_REASON="$obj not built (make bench builds it)"
		return $ksft_skip
	fi
	tree_build &&
		tc -n "$R" qdisc add dev "$R_IF1" clsact &&
		tc -n "$R" filter add dev "$R_IF1" ingress bpf direct-action obj "$obj" sec tc &&
		tc -n "$R" qdisc add dev "$R_IF2" clsact &&
		tc -n "$R" filter add dev "$R_IF2" egress bpf direct-action obj "$obj" sec tc
}

# qosctl on both router interfaces, as an operator would; the rules, when
# there are any, as [rule] sections of the profile applied to the interface
# the traffic enters.
setup_qosctl()
{
	local n=$1 profile=$2 in=$2

	if [ "$n" -gt 0 ]; then
		if ! qosctl_has_rules; then
			SKIP_REASON="rules not supported by this qosctl build"
			return $ksft_skip
		fi
		in=$tmp/rules-$n
		profile_with_rules "$profile" "$in" "$n" "$H1_V4" $DST4 "$H1_V6" $DST6 \
			$FLOWLABEL pip || return 1
	fi
	qosctl_ns "$R" apply "$in" dev "$R_IF1" rate "$LINK" &&
		qosctl_ns "$R" apply "$2" dev "$R_IF2" rate "$LINK"
}

# The profile's classes and DSCP table without its policers, for the
# classification-only methods; the +police variant adds one on PIP with
# the rate and burst nftables and u32 get.
write_profiles()
{
	local src=$PROFILE

	[ -f "$src" ] || src=$BENCH_TOP/tc-profiles/$PROFILE
	grep -v '^[[:space:]]*police-' "$src" > "$tmp/plain" || return 1
	profile_with_keys "$tmp/plain" "$tmp/police" pip \
		"police-rate = ${POLICE_BPS}bit" "police-burst = 2500000"
}

setup_qosctl_police()
{
	if ! qosctl_accepts "$tmp/police" 2>"$tmp/why"; then
		SKIP_REASON="policing not supported by this qosctl build ($(head -1 "$tmp/why"))"
		return $ksft_skip
	fi
	setup_qosctl "$1" "$tmp/police"
}

# Expert nftables: maps, so the rule count costs one hash lookup per
# family (the "last" rule has no meaning in a hash), the DSCP table as a
# map, and the policer as a limit on the PIP class.
setup_nft()
{
	local n=$1 police=$2 i

	tree_build || return 1
	{
		echo "table inet qosbench {"
		if [ "$n" -gt 0 ]; then
			echo "map rules4 { typeof ip saddr . ip daddr : meta priority; elements = {"
			for ((i = 1; i < n; i++)); do
				echo "10.200.$((i >> 8)).$((i & 255)) . $DST4 : $LBE_CLASSID,"
			done
			echo "$H1_V4 . $DST4 : $PIP_CLASSID } }"
			echo "map rules6 { typeof ip6 saddr . ip6 daddr . ip6 flowlabel : meta priority; elements = {"
			for ((i = 1; i < n; i++)); do
				echo "$H1_V6 . $DST6 . $i : $LBE_CLASSID,"
			done
			echo "$H1_V6 . $DST6 . $FLOWLABEL : $PIP_CLASSID } }"
		fi
		echo "chain post { type filter hook postrouting priority 0; policy accept;"
		printf 'oifname "%s" jump classify\n}\n' "$R_IF2"
		echo "chain classify {"
		if [ "$n" -gt 0 ]; then
			echo "meta priority set ip saddr . ip daddr map @rules4 goto police"
			echo "meta priority set ip6 saddr . ip6 daddr . ip6 flowlabel map @rules6 goto police"
		fi
		# Anonymous maps: nft 1.0.6 mis-sizes the key of a named
		# "typeof ip6 dscp" map and never matches.
		for f in ip ip6; do
			echo "meta priority set $f dscp map { ef : $PIP_CLASSID, 47 : $PIP_CLASSID," \
				"cs5 : $PIP_CLASSID, cs1 : $LBE_CLASSID } goto police"
		done
		printf '}\n'
		echo "chain police {"
		[ "$police" = 1 ] &&
			echo "meta priority $PIP_CLASSID limit rate over $((POLICE_BPS / 8000000)) mbytes/second burst 2500000 bytes drop"
		printf '}\n}\n'
	} > "$tmp/rules.nft"
	in_ns "$R" nft -f "$tmp/rules.nft"
}

# u32 on the HTB root: a linear list per protocol, the matching rule
# last, then the DSCP matches. Policing needs act_police.
setup_u32()
{
	local n=$1 police=$2 i act=

	if [ "$police" = 1 ]; then
		if ! u32_police_available; then
			SKIP_REASON="act_police is not in this kernel"
			return $ksft_skip
		fi
		act="action police rate ${POLICE_BPS}bit burst 2500000 drop"
	fi
	tree_build || return 1
	{
		for ((i = 1; i < n; i++)); do
			echo "filter add dev $R_IF2 parent 1: protocol ip prio 1 u32" \
				"match ip src 10.200.$((i >> 8)).$((i & 255))/32 match ip dst $DST4/32 flowid $LBE_CLASSID"
			echo "filter add dev $R_IF2 parent 1: protocol ipv6 prio 2 u32" \
				"match ip6 src $H1_V6/128 match ip6 dst $DST6/128" \
				"match u32 $i 0x000fffff at 0 flowid $LBE_CLASSID"
		done
		if [ "$n" -gt 0 ]; then
			echo "filter add dev $R_IF2 parent 1: protocol ip prio 1 u32" \
				"match ip src $H1_V4/32 match ip dst $DST4/32 flowid $PIP_CLASSID $act"
			echo "filter add dev $R_IF2 parent 1: protocol ipv6 prio 2 u32" \
				"match ip6 src $H1_V6/128 match ip6 dst $DST6/128" \
				"match u32 $FLOWLABEL 0x000fffff at 0 flowid $PIP_CLASSID $act"
		fi
		for d in 0xb8 0xbc 0xa0; do
			echo "filter add dev $R_IF2 parent 1: protocol ip prio 3 u32" \
				"match ip dsfield $d 0xfc flowid $PIP_CLASSID $act"
			echo "filter add dev $R_IF2 parent 1: protocol ipv6 prio 4 u32" \
				"match ip6 priority $d 0xfc flowid $PIP_CLASSID $act"
		done
		echo "filter add dev $R_IF2 parent 1: protocol ip prio 3 u32 match ip dsfield 0x20 0xfc flowid $LBE_CLASSID"
		echo "filter add dev $R_IF2 parent 1: protocol ipv6 prio 4 u32 match ip6 priority 0x20 0xfc flowid $LBE_CLASSID"
	} > "$tmp/u32.batch"
	tc -n "$R" -batch "$tmp/u32.batch"
}

u32_police_available()
{
	local ok=1

	tc -n "$R" qdisc add dev "$R_IF1" root handle 77: htb 2>/dev/null || return 1
	tc -n "$R" filter add dev "$R_IF1" parent 77: protocol ip prio 1 u32 \
		match u32 0 0 action police rate 1mbit burst 10k drop 2>/dev/null && ok=0
	tc -n "$R" qdisc del dev "$R_IF1" root
	return $ok
}

teardown()
{
	local d

	for d in "$R_IF1" "$R_IF2"; do
		qosctl_ns "$R" remove dev "$d" >/dev/null 2>&1
		tc -n "$R" qdisc del dev "$d" root 2>/dev/null
		tc -n "$R" qdisc del dev "$d" clsact 2>/dev/null
	done
	in_ns "$R" nft delete table inet qosbench 2>/dev/null
	return 0
}

# setup METHOD N: 0 ready, ksft_skip with SKIP_REASON set, else failed.
setup()
{
	SKIP_REASON=
	case $1 in
	none)		setup_none ;;
	hook)		setup_hook ;;
	qosctl)		setup_qosctl "$2" "$tmp/plain" ;;
	qosctl+police)	setup_qosctl_police "$2" ;;
	nft)		setup_nft "$2" 0 ;;
	nft+police)	setup_nft "$2" 1 ;;
	u32)		setup_u32 "$2" 0 ;;
	u32+police)	setup_u32 "$2" 1 ;;
	*)		echo "fwd: unknown method $1" >&2; return 1 ;;
	esac
}

# measure FAMILY SIZE: prints "pps pip_share pps_per_cpu": the rate
# received at h2 over DURATION seconds while trafgen sends as fast as it
# can, the share of it the router queued in the PIP class, and packets
# per CPU-second of the sending process. On veth the whole path (h1's
# transmit, r's forwarding, h2's receive) runs in softirq on the sender's
# CPU and is charged to it, so the last figure is the inverse of the
# per-packet cost whatever share of the CPU the scheduler gave the
# sender: on a shared machine it is the steadier of the two. "-" when
# the process tree could not be read.
measure()
{
	local fam=$1 size=$2 pid rx0 rx1 pip0 pip1 t0 t1 c0 c1

	nsenter --net="/run/netns/$H1" -- timeout "$(awk -v d="$DURATION" 'BEGIN { print d + 1.5 }')" \
		trafgen -i "$tmp/$fam-$size.cfg" -o "$H1_IF" -P 1 -q -C >/dev/null 2>&1 &
	pid=$!
	sleep 0.5
	rx0=$(link_counter "$H2" "$H2_IF" rx packets)
	pip0=$(htb_class_packets "$R" "$R_IF2" $PIP_CLASSID)
	c0=$(tree_cpu_ticks $pid)
	t0=$(now_ns)
	sleep "$DURATION"
	rx1=$(link_counter "$H2" "$H2_IF" rx packets)
	t1=$(now_ns)
	c1=$(tree_cpu_ticks $pid)
	pip1=$(htb_class_packets "$R" "$R_IF2" $PIP_CLASSID)
	wait $pid
	awk -v r="$((rx1 - rx0))" -v p="$((pip1 - pip0))" -v ns="$((t1 - t0))" \
		-v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%d %.3f %s\n", r * 1e9 / ns, r ? p / r : 0, (c > 0 ? int(r * hz / c) : "-") }'
}

write_trafgen
write_profiles || exit 1
defer teardown
capture_tree > "$tmp/tree.batch" || { echo "fwd: qosctl apply failed" >&2; exit 1; }

raw=$OUT/fwd-raw.csv
csv_open "$raw" "round,method,rules,family,size,pps,pip_share,pps_per_cpu"
declare -A skipped
for ((round = 1; round <= REPEAT; round++)); do
	# A fresh order every round, so a drift in the machine does not favour
	# the methods measured first.
	for m in $(shuf -e $METHODS); do
		case $m in
		none|hook) counts=- ;;
		*+police) counts=$POLICE_RULES ;;
		*)	counts=$RULES ;;
		esac
		for n in $counts; do
			[ -n "${skipped[$m/$n]:-}" ] && continue
			setup "$m" "${n/-/0}"
			rc=$?
			if [ $rc -eq $ksft_skip ]; then
				skipped[$m/$n]=1
				echo "fwd: $m, $n rules: skipped: $SKIP_REASON" >&2
				teardown
				continue
			elif [ $rc -ne 0 ]; then
				echo "fwd: $m, $n rules: setup failed" >&2
				teardown
				exit 1
			fi
			for fam in ipv4 ipv6; do
				for size in $SIZES; do
					read -r pps share ppc < <(measure $fam "$size")
					echo "$round,$m,$n,$fam,$size,$pps,$share,$ppc" >> "$raw"
					# Anything but "none" must put the PIP traffic in PIP.
					if [ "$m" != none ] && [ "$m" != hook ] && awk -v s="$share" 'BEGIN { exit !(s < 0.9) }'; then
						echo "fwd: $m $n $fam $size: only $share of the packets in PIP" >&2
					fi
				done
			done
			teardown
		done
	done
	echo "fwd: round $round/$REPEAT done" >&2
done

# Medians per cell, then ratios from medians of this same run, for both
# metrics: the rate, and packets per CPU-second of the sender.
sum=$OUT/fwd.csv
csv_open "$sum" "method,rules,family,size,median_pps,median_pps_per_cpu,runs"
awk -F, 'NR > 1 { print $2 "," $3 "," $4 "," $5 }' "$raw" | sort -u -t, -k1,1 -k2,2n -k3,3 -k4,4n |
while IFS=, read -r m n fam size; do
	cell() { awk -F, -v m="$m" -v n="$n" -v f="$fam" -v s="$size" -v c="$1" \
		'$2 == m && $3 == n && $4 == f && $5 == s && $c != "-" { print $c }' "$raw"; }
	echo "$m,$n,$fam,$size,$(cell 6 | median),$(cell 8 | median),$(cell 6 | wc -l)" >> "$sum"
done

# get METHOD RULES FAMILY SIZE COLUMN (5: pps, 6: pps per CPU-second)
get()
{
	awk -F, -v m="$1" -v n="$2" -v f="$3" -v s="$4" -v c="$5" \
		'$1 == m && $2 == n && $3 == f && $4 == s { print $c }' "$sum"
}

rat=$OUT/fwd-ratios.csv
csv_open "$rat" "metric,family,size,rules,qosctl_vs_nft,qosctl_vs_u32,qosctl_vs_none,qosctl_vs_hook,hook_vs_none,nft_vs_none,u32_vs_none"
pol=$OUT/fwd-police.csv
csv_open "$pol" "metric,family,size,rules,qosctl_vs_nft,qosctl_vs_u32,qosctl_cost,nft_cost,u32_cost"
famcsv=$OUT/fwd-family.csv
csv_open "$famcsv" "metric,method,rules,size,v6_over_v4,kernel_v6_over_v4,relative"
for col in 5 6; do
	metric=$([ $col = 5 ] && echo pps || echo pps_per_cpu)
	for fam in ipv4 ipv6; do
		for size in $SIZES; do
			none=$(get none - $fam "$size" $col)
			hook=$(get hook - $fam "$size" $col)
			for n in $RULES; do
				q=$(get qosctl "$n" $fam "$size" $col)
				f=$(get nft "$n" $fam "$size" $col)
				u=$(get u32 "$n" $fam "$size" $col)
				echo "$metric,$fam,$size,$n,$(ratio "$q" "$f"),$(ratio "$q" "$u")," \
					"$(ratio "$q" "$none"),$(ratio "$q" "$hook"),$(ratio "$hook" "$none")," \
					"$(ratio "$f" "$none"),$(ratio "$u" "$none")" |
					tr -d ' ' >> "$rat"
			done
			# Policed against policed, and each against its own
			# unpoliced run (the price of the token bucket).
			for n in $POLICE_RULES; do
				q=$(get qosctl+police "$n" $fam "$size" $col)
				f=$(get nft+police "$n" $fam "$size" $col)
				u=$(get u32+police "$n" $fam "$size" $col)
				echo "$metric,$fam,$size,$n,$(ratio "$q" "$f"),$(ratio "$q" "$u")," \
					"$(ratio "$q" "$(get qosctl "$n" $fam "$size" $col)")," \
					"$(ratio "$f" "$(get nft "$n" $fam "$size" $col)")," \
					"$(ratio "$u" "$(get u32 "$n" $fam "$size" $col)")" | tr -d ' ' >> "$pol"
			done
		done
	done
	for size in $SIZES; do
		k=$(ratio "$(get none - ipv6 "$size" $col)" "$(get none - ipv4 "$size" $col)")
		awk -F, 'NR > 1 { print $1 "," $2 }' "$sum" | sort -u | while IFS=, read -r m n; do
			r=$(ratio "$(get "$m" "$n" ipv6 "$size" $col)" "$(get "$m" "$n" ipv4 "$size" $col)")
			echo "$metric,$m,$n,$size,$r,$k,$(ratio "$r" "$k")" >> "$famcsv"
		done
	done
done
