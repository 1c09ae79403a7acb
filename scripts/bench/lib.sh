#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Helpers shared by the benchmarks (scripts/bench/) and the experiments
# (scripts/experiments/): statistics over repeated runs, CSV output, and
# what the running qosctl build supports. Namespace handling, cleanup and
# qosctl_ns come from selftests/lib.sh.

BENCH_TOP=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../..
# What an operator gets: tcx where the kernel has it (the selftests'
# lib.sh would otherwise keep qosctl on clsact); QOSCTL_ATTACH=clsact
# measures the clsact path.
export QOSCTL_ATTACH=${QOSCTL_ATTACH:-auto}
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
	"$QOSCTL" help rule >/dev/null 2>&1
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

# profile_with_rules SRC DST N SRC4 DST4 SRC6 DST6 LABEL CLASS: a copy of
# SRC with N [rule] sections per family: N - 1 that the test traffic does
# not match (IPv4: sources 10.200.x.y; IPv6: flow labels 1..N-1), sending
# to lbe, then the one it matches (SRC4 . DST4; SRC6 . DST6 . LABEL),
# sending to CLASS. This is how an operator loads a large rule set: one
# apply, not N `qosctl rule add` processes.
profile_with_rules()
{
	cp "$1" "$2" &&
	awk -v n="$3" -v s4="$4" -v d4="$5" -v s6="$6" -v d6="$7" -v fl="$8" -v cls="$9" '
		BEGIN {
			for (i = 1; i < n; i++) {
				printf "[rule n4-%d]\nsrc = 10.200.%d.%d/32\ndst = %s/32\nclass = lbe\n",
					i, int(i / 256) % 256, i % 256, d4
				printf "[rule n6-%d]\nsrc = %s/128\ndst = %s/128\nflowlabel = %d\nclass = lbe\n",
					i, s6, d6, i
			}
			printf "[rule m4]\nsrc = %s/32\ndst = %s/32\nclass = %s\n", s4, d4, cls
			printf "[rule m6]\nsrc = %s/128\ndst = %s/128\nflowlabel = %s\nclass = %s\n",
				s6, d6, fl, cls
		}' >> "$2"
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
