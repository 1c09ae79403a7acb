#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Helpers shared by the benchmarks (scripts/bench/) and the experiments
# (scripts/experiments/): statistics over repeated runs, CSV output, and
# what the running qosctl build supports. Namespace handling, cleanup and
# qosctl_ns come from selftests/lib.sh.

BENCH_TOP=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../..
# shellcheck source=../../selftests/lib.sh
. "$BENCH_TOP/selftests/lib.sh"
QOSCTL=${QOSCTL:-$BENCH_TOP/.output/qosctl}

# median: the median of the numbers on stdin (mean of the middle two for
# an even count); empty if there are none.
median()
{
	sort -g | awk '{ v[NR] = $1 }
		END { if (NR) printf "%.6g\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# percentile P: the P-th percentile (nearest rank) of the numbers on stdin.
percentile()
{
	sort -g | awk -v p="$1" '{ v[NR] = $1 }
		END { if (NR) { r = int(p / 100 * NR); if (r < p / 100 * NR) r++; if (r < 1) r = 1
			printf "%.6g\n", v[r] } }'
}

# ratio A B: A / B with three decimals, "-" if either is missing or B is 0.
ratio()
{
	awk -v a="${1:-}" -v b="${2:-}" 'BEGIN {
		if (a == "" || b == "" || a == "-" || b == "-" || b + 0 == 0) print "-"
		else printf "%.3f\n", a / b }'
}

now_ns()
{
	date +%s%N
}

# csv_open FILE HEADER: start FILE with its header line.
csv_open()
{
	mkdir -p "$(dirname "$1")"
	echo "$2" > "$1"
}

# print_csv FILE: a CSV as an aligned table.
print_csv()
{
	awk -F, '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
		   if (NF > nf) nf = NF }
		END { for (r = 1; r <= NR; r++) { for (i = 1; i <= nf; i++)
			printf "%-*s%s", w[i], c[r, i], i < nf ? "  " : "\n" } }' "$1"
}

# Does this qosctl build have `qosctl rule` (classifier branch)?
qosctl_has_rules()
{
	"$QOSCTL" help 2>/dev/null | grep -q '^ *qosctl rule '
}

# qosctl_accepts PROFILE: does the running qosctl accept every key of
# PROFILE? Prints qosctl's complaint on stderr when it does not.
qosctl_accepts()
{
	local out

	out=$("$QOSCTL" validate "$1" rate 1gbit 2>&1) && return 0
	echo "$out" >&2
	return 1
}

# profile_known NAME: does qosctl find profile NAME (a shipped profile, or
# one in its profile directories)?
profile_known()
{
	"$QOSCTL" validate "$1" >/dev/null 2>&1
}

# profile_scaled SRC DST PIP_PCT BE_PCT: a copy of the three-class profile
# SRC with the PIP share (rate = ceil) and the BE guarantee changed. Used to
# build an equivalent of a shipped profile this tree does not have yet.
profile_scaled()
{
	awk -v pip="$3" -v be="$4" '
		/^\[class / { cls = $2; sub(/\]/, "", cls) }
		cls == "pip" && /^(rate|ceil) *=/ { sub(/=.*/, "= " pip "%") }
		cls == "be" && /^rate *=/ { sub(/=.*/, "= " be "%") }
		{ print }' "$1" > "$2"
}

# profile_with_keys SRC DST CLASS "key = value"...: a copy of SRC with the
# lines added at the top of section [class CLASS].
profile_with_keys()
{
	local src=$1 dst=$2 cls=$3

	shift 3
	awk -v cls="$cls" -v add="$(printf '%s\n' "$@")" '
		{ print }
		$0 == "[class " cls "]" { printf "%s\n", add }' "$src" > "$dst"
}

# link_counter NS DEV DIR FIELD: one counter of DEV (stats64.DIR.FIELD).
link_counter()
{
	ip -n "$1" -j -s link show dev "$2" | jq ".[0].stats64.$3.$4"
}

# htb_class_packets NS DEV CLASSID: packets sent by one HTB class.
htb_class_packets()
{
	tc -n "$1" -s class show dev "$2" classid "$3" |
		awk '/Sent/ { print $4; exit }'
}

# tree_cpu_ticks PID: user + system CPU time, in clock ticks, of PID and
# its descendants (a tick landing in a softirq the process ran is charged
# to it too).
tree_cpu_ticks()
{
	local sum c

	sum=$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null)
	sum=${sum:-0}
	for c in $(pgrep -P "$1"); do
		sum=$((sum + $(tree_cpu_ticks "$c")))
	done
	echo "$sum"
}

machine_summary()
{
	local cpu

	cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
	echo "$(nproc) CPU ($cpu), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
}
