#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# 100 re-applies (pip-20pct <-> pip-5pct) on a live interface under PIP
# pings of both families: no PIP packet lost, and nothing leaked. pip-5pct
# is given a policer on pip, so that both profiles run both programs,
# except in every tenth swap: pip-5pct as shipped runs the egress program
# alone, so the loop crosses 10 hook-set changes (20 under emulation: 2),
# each loading an ingress program, without paying that on every swap.
#
#   h1 ---------------- r ------------------ h2
#   $H1_IF     $R_IF1 (pip-20pct)  $R_IF2 (100 re-applies)   $H2_IF
#      ping -Q 0xb8 -i 0.005, v4 and v6, to h2 (replies enter $R_IF2),
#      from before the first re-apply until after the last
#
# Other engineers load BPF programs on this host at the same time, so the
# leak check does not count the host's programs and maps. It follows ours:
# every program id attached during the loop, except the two attached at the
# end, must be gone; the attached programs use the maps they used before
# the loop (counters carry over, and the configuration flips between the
# same two slots, once per change the programs read); qdiscs, classes and
# BPF links on the interface as before.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

LOOPS=100
# Under emulation a qosctl run costs seconds: 20 swaps still cross every
# step of a re-apply, each one under the pings.
[ "$KSFT_MACHINE_SLOW" = yes ] && LOOPS=20
# The pings run until the loop is over, however long that takes on this
# machine; this deadline only bounds a loop that hangs.
DEADLINE=600
[ "$KSFT_MACHINE_SLOW" = yes ] && DEADLINE=3600

require_root
require_cmd jq tc ping bpftool
require_qosctl

tmp_setup

topo_h1_r_h2 || exit $ksft_fail
DEV=$R_IF2

# progs: the ids of the programs at qosctl's filter on $DEV, both hooks.
progs()
{
	local d

	for d in ingress egress; do
		slot_prog "$R" "$DEV" $d | tr , '\n' | sed '/^$/d'
	done
}

# used_maps: the maps of those programs that hold state. A program's
# .rodata (constants such as qos_rule_row, frozen at load) is its own: a
# program loaded anew to join kept ones has a new one, freed with it.
used_maps()
{
	local p m

	for p in $(progs); do
		bpftool prog show id "$p" -j | jq '.map_ids[]'
	done | sort -nu | while read -r m; do
		bpftool map show id "$m" -j | jq -r 'select(.name | test("\\.rodata") | not) | .id'
	done | tr '\n' ' '
}

links()
{
	bpftool link show -j | jq --argjson ids "[$(progs | paste -sd,)]" \
		'[.[] | select(.prog_id as $p | $ids | index($p))] | length'
}

snapshot()
{
	echo "qdiscs $(tc -n "$R" qdisc show dev "$DEV" | wc -l)"
	echo "classes $(tc -n "$R" class show dev "$DEV" | wc -l)"
	echo "maps $(used_maps)"
	echo "links $(links)"
}

for dev in "$R_IF1" "$R_IF2"; do
	qosctl_ns "$R" apply pip-20pct dev "$dev" rate 100mbit || exit $ksft_fail
done
sed '/^\[class pip\]/a police-rate = 5%\npolice-burst = auto\npolice-exceed = drop' \
	"$(dirname "$(readlink -f "$0")")/../tc-profiles/pip-5pct" >"$TMP/pip-5pct-policed"
snapshot >"$TMP/before"
progs >"$TMP/seen"
GEN0=$(cfg_gen "$R" "$DEV")

# The loop under PIP pings; then what is left and what was freed.
reapply_loop()
{
	local p4 p6 i p out fam sent recv now try live want flips

	# nsenter execs ping, so $! is ping's PID, which SIGINT stops with its summary.
	nsenter --net="/run/netns/$H1" -- ping -4 -q -n -Q 0xb8 -i 0.005 -w $DEADLINE "$H2_V4" \
		>"$TMP/v4" 2>&1 &
	p4=$!
	nsenter --net="/run/netns/$H1" -- ping -6 -q -n -Q 0xb8 -i 0.005 -w $DEADLINE "$H2_V6" \
		>"$TMP/v6" 2>&1 &
	p6=$!
	defer kill $p4 $p6
	sleep 0.2

	for i in $(seq $LOOPS); do
		p=$TMP/pip-5pct-policed
		[ $((i % 10)) -eq 9 ] && p=pip-5pct
		[ $((i % 2)) -eq 0 ] && p=pip-20pct
		out=$(qosctl_ns "$R" apply $p dev "$DEV" rate 100mbit 2>&1)
		check_err $? "apply $i ($p): $out"
		progs >>"$TMP/seen"
	done
	sleep 0.2
	kill -0 $p4 2>/dev/null && kill -0 $p6 2>/dev/null
	check_err $? "a ping ended before the loop did"
	kill -INT $p4 $p6
	wait $p4 $p6
	log_test "$LOOPS re-applies under PIP traffic"

	# SIGINT may catch one request with its reply still on the way.
	for fam in v4 v6; do
		read -r sent recv < <(ping_summary "$TMP/$fam")
		[ "$sent" -gt 0 ] && [ $((sent - recv)) -le 1 ]
		check_err $? "$(cat "$TMP/$fam")"
		log_test "$fam: $recv/$sent PIP pings answered across $LOOPS re-applies"
	done

	snapshot >"$TMP/after"
	diff -u "$TMP/before" "$TMP/after" >"$TMP/diff"
	check_err $? "$(cat "$TMP/diff")"
	log_test "qdiscs, classes, map ids and BPF links as before the loop"

	# A replaced program is freed once its last reference goes, after an RCU
	# grace period: give it a moment rather than fail on timing.
	now=$(progs | sort -n | tr '\n' ' ')
	for try in $(seq 30); do
		live=""
		for p in $(sort -nu "$TMP/seen"); do
			[[ " $now" == *" $p "* ]] && continue
			bpftool prog show id "$p" >/dev/null 2>&1 && live="$live $p"
		done
		[ -z "$live" ] && break
		sleep 0.1
	done
	[ -z "$live" ]
	check_err $? "programs replaced during the loop still loaded:$live"
	log_test "$(sort -nu "$TMP/seen" | wc -l) programs attached in turn, all but the current 2 freed"

	# The programs read the class policer's index, not its rate: pip-20pct
	# and the policed pip-5pct read the same, the unpoliced pip-5pct
	# (i % 10 == 9) differs; a flip into it and one out of it.
	want=0
	for i in $(seq $LOOPS); do
		[ $((i % 10)) -eq 9 ] || [ $((i % 10)) -eq 0 ] && want=$((want + 1))
	done
	flips=$(($(cfg_gen "$R" "$DEV") - GEN0))
	[ "$flips" -eq $want ]
	check_err $? "$flips configuration flips, want $want"
	log_test "$flips configuration flips, one per change the programs read"
}

ALL_TESTS="reapply_loop"
tests_run
exit $EXIT_STATUS
