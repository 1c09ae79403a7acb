#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# How long `qosctl apply` takes, fresh and as a re-apply, and `remove`.
#
#   ns A:  $A_IF <--veth--> $B_IF
#          qosctl apply/remove on $A_IF
#
# fresh:   apply on an interface with the kernel's default qdisc, then an
#          untimed remove;
# reapply: apply on an interface that has the profile already, the link
#          rate alternating between two values so every run changes the
#          tree and the configuration map;
# remove:  the remove that follows each fresh apply;
# agent:   the re-apply as the domain agent makes it, in a process that
#          stays up (.output/bench/bench_apply: device opened, profile
#          applied, device closed, timed inside the process), the rate
#          alternating as for reapply.
# A rate is meta, which the programs never read: reapply and agent change
# the tree and flip no configuration (design.rst, "The configuration,
# switched whole"). reapply-dp and agent-dp change what the programs read
# too: the profile alternates with a copy of it whose DSCP 10 is mapped to
# the class of DSCP 8 (BENCH_PROFILE must map DSCP 8 with "dscp = 8"), so
# every run flips the configuration (design.rst, "Two slots"). agent-dp
# applies back to back, so each waits for the grace period the flip
# before it started; agent-dp-gap leaves 50 ms between two, untimed.
# Times are wall clock around the whole command, process start and nsenter
# included, as an operator or a configuration tool sees them.
#
# The same three again with BENCH_APPLY_RULES [rule] sections per family in
# the profile (IPv4 src . dst, IPv6 src . dst . flow label): "-rules" ops,
# a fifth of the runs. The re-apply keeps every rule, as re-applying an
# unchanged rule set after a rate change does.
#
# The same three again with BENCH_PROFILE_ONE_HOOK, a profile with no
# policer and no rule, which runs the egress program alone: "-1hook" ops,
# a fifth of the runs.
#
# Then each program's verification: a fifth of the runs of fresh applies
# with -v, of each profile, the instructions the verifier processed
# (bpf_prog_info.verified_insns) and the program's load time as qosctl
# logs them.
#
# Usage: apply-latency.sh OUTDIR   writes apply-latency-raw.csv, apply-latency.csv,
#                                  apply-verifier-raw.csv, apply-verifier.csv
# Knobs: BENCH_APPLY_RUNS (100), BENCH_PROFILE (pip-20pct),
# BENCH_PROFILE_ONE_HOOK (pip-5pct), BENCH_APPLY_RULES (10000; 0 skips the
# "-rules" ops)

set -u
. "$(dirname "$(readlink -f "$0")")/lib.sh"

OUT=${1:?usage: apply-latency.sh OUTDIR}
RUNS=${BENCH_APPLY_RUNS:-100}
PROFILE=${BENCH_PROFILE:-pip-20pct}
NRULES=${BENCH_APPLY_RULES:-10000}
ONE_HOOK=${BENCH_PROFILE_ONE_HOOK:-pip-5pct}

require_root
[ -x "$QOSCTL" ] || { echo "SKIP: $QOSCTL not built"; exit $ksft_skip; }

setup_ns A || exit 1
A_IF=$(ifname_unique ala) B_IF=$(ifname_unique alb)
ip -n "$A" link add "$A_IF" type veth peer name "$B_IF" || exit 1
ip -n "$A" link set "$A_IF" up
ip -n "$A" link set "$B_IF" up
defer qosctl_ns "$A" remove dev "$A_IF"

# timed CMD...: run CMD, print its wall-clock time in microseconds; fail
# the benchmark if the command fails.
timed()
{
	local t0 t1

	t0=$(now_ns)
	"$@" >/dev/null || { echo "apply-latency: failed: $*" >&2; exit 1; }
	t1=$(now_ns)
	echo $(((t1 - t0) / 1000))
}

# series SUFFIX PROFILE RUNS: fresh + remove, then re-apply, RUNS each.
series()
{
	local sfx=$1 prof=$2 runs=$3 i rate

	for ((i = 1; i <= runs; i++)); do
		echo "fresh$sfx,$i,$(timed qosctl_ns "$A" apply "$prof" dev "$A_IF" rate 1gbit)" >> "$raw"
		echo "remove$sfx,$i,$(timed qosctl_ns "$A" remove dev "$A_IF")" >> "$raw"
	done
	qosctl_ns "$A" apply "$prof" dev "$A_IF" rate 1gbit >/dev/null || exit 1
	for ((i = 1; i <= runs; i++)); do
		rate=$((i % 2 ? 2 : 1))gbit
		echo "reapply$sfx,$i,$(timed qosctl_ns "$A" apply "$prof" dev "$A_IF" rate $rate)" >> "$raw"
	done
	qosctl_ns "$A" remove dev "$A_IF" >/dev/null
}

raw=$OUT/apply-latency-raw.csv
csv_open "$raw" "op,run,usec"
ops="fresh reapply remove"
series "" "$PROFILE" "$RUNS"
if [ "$NRULES" -gt 0 ]; then
	tmp=$(mktemp -d)
	defer rm -rf "$tmp"
	src=$PROFILE
	[ -f "$src" ] || src=$BENCH_TOP/tc-profiles/$PROFILE
	profile_with_rules "$src" "$tmp/rules" "$NRULES" 192.0.2.1 198.51.100.1 \
		2001:db8:1::1 2001:db8:2::1 0x12345 pip || exit 1
	series -rules "$tmp/rules" $(((RUNS + 4) / 5))
	ops="$ops fresh-rules reapply-rules remove-rules"
fi

series -1hook "$ONE_HOOK" $(((RUNS + 4) / 5))
ops="$ops fresh-1hook reapply-1hook remove-1hook"

# The data-path change: PROFILE and DP_PROFILE in turn, the rate kept.
src=$PROFILE
[ -f "$src" ] || src=$BENCH_TOP/tc-profiles/$PROFILE
DP_PROFILE=$(mktemp)
defer rm -f "$DP_PROFILE"
sed 's/^dscp = 8$/dscp = 8, 10/' "$src" >"$DP_PROFILE"
if cmp -s "$src" "$DP_PROFILE"; then
	echo "apply-latency: $PROFILE has no 'dscp = 8' line: no reapply-dp/agent-dp" >&2
	DP_PROFILE=
else
	qosctl_ns "$A" apply "$src" dev "$A_IF" rate 1gbit >/dev/null || exit 1
	for ((i = 1; i <= RUNS; i++)); do
		p=$src
		[ $((i % 2)) -eq 1 ] && p=$DP_PROFILE
		echo "reapply-dp,$i,$(timed qosctl_ns "$A" apply "$p" dev "$A_IF" rate 1gbit)" >> "$raw"
	done
	qosctl_ns "$A" remove dev "$A_IF" >/dev/null
	ops="$ops reapply-dp"
fi

BENCH_APPLY=${BENCH_APPLY:-$BENCH_TOP/.output/bench/bench_apply}
if [ -x "$BENCH_APPLY" ]; then
	src=$PROFILE
	[ -f "$src" ] || src=$BENCH_TOP/tc-profiles/$PROFILE
	qosctl_ns "$A" apply "$src" dev "$A_IF" rate 1gbit >/dev/null || exit 1
	in_ns "$A" "$BENCH_APPLY" "$A_IF" "$src" 1gbit 2gbit "$RUNS" | sed 's/^/agent,/' >> "$raw"
	ops="$ops agent"
	if [ -n "$DP_PROFILE" ]; then
		in_ns "$A" "$BENCH_APPLY" "$A_IF" "$src" 1gbit 1gbit "$RUNS" "$DP_PROFILE" |
			sed 's/^/agent-dp,/' >> "$raw"
		ops="$ops agent-dp"
		# The same with 50 ms between two applies, untimed: changes
		# as an agent meets them, a grace period apart or more.
		in_ns "$A" env BENCH_APPLY_GAP_MS=50 "$BENCH_APPLY" "$A_IF" "$src" 1gbit 1gbit \
			"$RUNS" "$DP_PROFILE" | sed 's/^/agent-dp-gap,/' >> "$raw"
		ops="$ops agent-dp-gap"
	fi
	qosctl_ns "$A" remove dev "$A_IF" >/dev/null
fi

# verified PROFILE RUNS: fresh applies with -v, one line per program
# loaded: profile,run,program,verified_insns,load_ms.
verified()
{
	local i

	for ((i = 1; i <= $2; i++)); do
		qosctl_ns "$A" -v apply "$1" dev "$A_IF" rate 1gbit 2>&1 >/dev/null |
			sed -n "s/^loaded \([a-z_]*\): \([0-9]*\) instructions verified, \([0-9.]*\) ms$/$(basename "$1"),$i,\1,\2,\3/p"
		qosctl_ns "$A" remove dev "$A_IF" >/dev/null
	done
}

vraw=$OUT/apply-verifier-raw.csv
csv_open "$vraw" "profile,run,program,verified_insns,load_ms"
verified "$PROFILE" $(((RUNS + 4) / 5)) >> "$vraw"
verified "$ONE_HOOK" $(((RUNS + 4) / 5)) >> "$vraw"
vsum=$OUT/apply-verifier.csv
csv_open "$vsum" "profile,program,loads,verified_insns,median_load_ms"
for pp in $(awk -F, 'NR > 1 { print $1 "," $3 }' "$vraw" | sort -u); do
	v=$(awk -F, -v p="${pp%,*}" -v g="${pp#*,}" '$1 == p && $3 == g' "$vraw")
	echo "$pp,$(echo "$v" | wc -l),$(echo "$v" | cut -d, -f4 | sort -u | paste -sd/)," 		"$(echo "$v" | cut -d, -f5 | median)" | tr -d ' ' >> "$vsum"
done

sum=$OUT/apply-latency.csv
csv_open "$sum" "op,runs,median_ms,p90_ms,p99_ms"
for op in $ops; do
	v=$(awk -F, -v op=$op '$1 == op { print $3 / 1000 }' "$raw")
	echo "$op,$(echo "$v" | wc -l),$(echo "$v" | median),$(echo "$v" | percentile 90)," \
		"$(echo "$v" | percentile 99)" | tr -d ' ' >> "$sum"
done
