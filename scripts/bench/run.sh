#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make bench`: every benchmark, tables on stdout, CSV under OUTDIR.
#
#   1. classifier cost per packet (BPF_PROG_TEST_RUN): `make bench-classifier`
#      when the tree has it;
#   2. forwarding packet rate, qosctl against nftables, u32 and no
#      classifier (fwd.sh);
#   3. qosctl apply / re-apply / remove latency (apply-latency.sh).
#
# Default size: about 18 minutes on a 2-core machine. Longer runs:
# BENCH_REPEAT=9 BENCH_DURATION=5 BENCH_APPLY_RUNS=1000 make bench
#
# Usage: run.sh OUTDIR

set -u
here=$(dirname "$(readlink -f "$0")")
. "$here/lib.sh"

OUT=${1:?usage: run.sh OUTDIR}
mkdir -p "$OUT"
require_root

# table FILE TITLE
table()
{
	echo
	echo "== $2"
	print_csv "$1"
}

echo "machine: $(machine_summary)" | tee "$OUT/machine.txt"
lscpu >> "$OUT/machine.txt"
start=$(date +%s)

if make -C "$BENCH_TOP" -n bench-classifier >/dev/null 2>&1; then
	make -C "$BENCH_TOP" --no-print-directory bench-classifier
else
	echo "bench: classifier cost per packet: skipped (no bench-classifier target in this tree)"
fi

rc=0
"$here/fwd.sh" "$OUT" || rc=1
if [ $rc -eq 0 ]; then
	table "$OUT/fwd.csv" "forwarding: packets/s received at h2, and per CPU-second of the sender (medians of ${BENCH_REPEAT:-3} rounds)"
	table "$OUT/fwd-ratios.csv" "forwarding ratios (same run; pps_per_cpu is the steadier on a shared machine)"
	table "$OUT/fwd-police.csv" "policed against policed; *_cost is policed / unpoliced of the same method"
	table "$OUT/fwd-family.csv" "IPv6/IPv4 ratio against the kernel's own (method none)"
fi
"$here/apply-latency.sh" "$OUT" || rc=1
[ -f "$OUT/apply-latency.csv" ] && table "$OUT/apply-latency.csv" "qosctl apply latency"
[ -f "$OUT/apply-verifier.csv" ] &&
	table "$OUT/apply-verifier.csv" "programs loaded by a fresh apply: verified instructions, load time"

echo
echo "bench: $(($(date +%s) - start)) s; CSV in $OUT"
exit $rc
