#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# qosctl at tcx (Linux 6.6+) beside another tool's tcx programs
# (Documentation/design.rst, "Attachment"):
#
#   h1 ---------- $R_IF1 [r] $R_IF2 ---------- h2
#                                 tcx egress: qos_egress, A, B
#      ping -Q 0xb8, v4 and v6, h1 -> h2
#
# A (tcx_count.bpf.o: counts and passes on) is attached at $R_IF2's tcx
# egress before qosctl applies pip-20pct there, B after. Then:
#
# a. qosctl is at tcx (show -j), first in the list by default (before A,
#    which was there first), show says so; EF pings are counted exactly in
#    pip at $R_IF2's egress, per family, and A and B count them too;
# b. a re-apply with a larger rule table replaces both programs in place
#    (new ids, the same places, the old ones gone), A and B intact;
# c. a re-apply that fails (QOSCTL_FAIL at load, attach, prune) leaves
#    qosctl's programs, ids and places as they were; one killed after
#    attach (QOSCTL_FAULT) is rolled back by the next command to a single
#    qosctl program per direction; A and B intact after each;
# d. the hook set: pip-5pct takes qosctl's ingress program away,
#    pip-20pct brings it back, at tcx;
# e. remove leaves no program of qosctl's at tcx and no clsact; A and B
#    stay and keep counting; a fresh apply that fails at attach leaves
#    nothing of qosctl's either;
# f. tcx-place last on $R_IF1 with A there: qosctl's ingress program after
#    A; kept by a re-apply without tcx-place; remove --force takes it off
#    and leaves A;
# g. a fresh apply attaches each program as soon as it is loaded: killed
#    right after the loads (QOSCTL_FAULT=load), both of qosctl's programs
#    are at tcx, first, and read configuration generation 0, so EF pings
#    pass on to A untouched, v4 and v6; the next command rolls back to A
#    and B alone, as does a fresh apply failing at load, rules or tree.
#
# Skipped where the kernel, bpftool or this qosctl's libbpf has no tcx.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
require_root
require_cmd ping jq bpftool nsenter
export QOSCTL_ATTACH=tcx

PINGS=20
OBJ=${TEST_OUTPUT:-$(dirname "$QOSCTL")/selftests}/tcx_count.bpf.o
[ -f "$OBJ" ] || { echo "SKIP: $OBJ not built (make)"; exit $ksft_skip; }
require_qdisc htb
topo_h1_r_h2 || { echo "FAIL: topology"; exit $ksft_fail; }
tmp_setup
PIN=/sys/fs/bpf/qosctl-test-tcx-$(basename "$R")
mkdir -p "$PIN" || { echo "SKIP: no bpffs at /sys/fs/bpf"; exit $ksft_skip; }
defer rm -rf "$PIN"

in_r()
{
	nsenter --net="/run/netns/$R" "$@"
}

# foreign NAME HOOK DEV: load tcx_count as NAME and attach it at HOOK
# (tcx_ingress, tcx_egress) of DEV, after what is there.
foreign()
{
	bpftool prog load "$OBJ" "$PIN/$1" type tc pinmaps "$PIN/$1-maps" &&
		in_r bpftool net attach "$2" pinned "$PIN/$1" dev "$3"
}

# prog_id NAME: the foreign program's id.
prog_id()
{
	bpftool prog show pinned "$PIN/$1" -j | jq -r .id
}

# count NAME: packets it counted.
count()
{
	bpftool map lookup pinned "$PIN/$1-maps/tcx_count_map" key 0 0 0 0 -j |
		jq -r '.formatted.value'
}

# list DEV DIR: the ids at tcx DIR of DEV, in order, space-separated.
list()
{
	in_r bpftool net show dev "$1" -j |
		jq -r --arg k "tcx/$2" '[.[0].tc[] | select(.kind == $k) | .prog_id] | join(" ")'
}

# prog_name ID: the name of program ID.
prog_name()
{
	bpftool prog show id "$1" -j | jq -r .name
}

# cfg_gen ID: the configuration generation program ID reads.
cfg_gen()
{
	local m

	for m in $(bpftool prog show id "$1" -j | jq -r '.map_ids[]'); do
		[ "$(bpftool map show id "$m" -j | jq -r .name)" = qos_cfg_gen ] || continue
		bpftool map lookup id "$m" key 0 0 0 0 -j | jq -r '.formatted.value'
		return
	done
	echo none
}

# pip_egress DEV FAMILY: packets counted in pip at DEV's egress.
pip_egress()
{
	qosctl_ns "$R" stats dev "$1" -j |
		jq -r --arg f "ipv$2" '.classes[] | select(.name == "pip") | .egress[$f].packets'
}

# ef_pings: $PINGS EF pings per family h1 -> h2, all answered; pip at
# $R_IF2's egress counts exactly those.
ef_pings()
{
	local fam dst before tx rx got

	for fam in 4 6; do
		dst=$H2_V4
		[ $fam = 6 ] && dst=$H2_V6
		before=$(pip_egress "$R_IF2" $fam)
		read -r tx rx < <(in_ns "$H1" ping -$fam -n -q -c $PINGS -i 0.01 -W 2 -Q 0xb8 \
			"$dst" | ping_summary)
		got=$(($(pip_egress "$R_IF2" $fam) - before))
		[ "$rx" -eq $PINGS ] && [ "$got" -eq $PINGS ] ||
			{ echo "IPv$fam: $rx of $tx answered, pip counted $got"; return 1; }
	done
}

if ! foreign A tcx_egress "$R_IF2" 2>"$TMP/err"; then
	echo "SKIP: no tcx here (kernel before 6.6 or bpftool before 7.3): $(cat "$TMP/err")"
	exit $ksft_skip
fi
qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit >/dev/null ||
	{ echo "FAIL: apply pip-20pct"; exit $ksft_fail; }
# Built with libbpf < 1.3 (the Makefile's probe): clsact is the path.
if ! grep -qs QOS_HAVE_LIBBPF_TCX "$(dirname "$QOSCTL")/qos_features.h"; then
	echo "SKIP: this qosctl was built without libbpf's tcx API (libbpf < 1.3)"
	exit $ksft_skip
fi
foreign B tcx_egress "$R_IF2" || { echo "FAIL: attach B after qosctl"; exit $ksft_fail; }
A=$(prog_id A) B=$(prog_id B)
sed -e '/^\[profile\]/a rules = 2048' "$(dirname "$QOSCTL")/../tc-profiles/pip-20pct" \
	>"$TMP/big"

# a. qosctl first, the others after it in the order they came.
place_first()
{
	local qi qe

	[ "$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -r .attach)" = tcx ]
	check_err $? "show -j: attach '$(qosctl_ns "$R" show dev "$R_IF2" -j | jq -r .attach)', not tcx"
	read -r qi qe < <(shown_progs "$R" "$R_IF2")
	[ "$(list "$R_IF2" egress)" = "$qe $A $B" ] && [ "$(list "$R_IF2" ingress)" = "$qi" ]
	check_err $? "tcx egress '$(list "$R_IF2" egress)', want '$qe $A $B'"
	qosctl_ns "$R" show dev "$R_IF2" | grep -q "(tcx, place first: ingress 1 of 1, egress 1 of 3)"
	check_err $? "show: '$(qosctl_ns "$R" show dev "$R_IF2" | grep programs)'"
	log_test "a. qosctl first at tcx egress, before A (attached earlier) and B"
}

# a. EF through qosctl and the others.
counted()
{
	local a0 b0 a1 b1

	a0=$(count A) b0=$(count B)
	ef_pings
	check_err $? "$(ef_pings 2>&1)"
	a1=$(count A) b1=$(count B)
	[ $((a1 - a0)) -ge $((2 * PINGS)) ] && [ $((b1 - b0)) -ge $((2 * PINGS)) ]
	check_err $? "A counted $((a1 - a0)), B $((b1 - b0)), want >= $((2 * PINGS)) each"
	log_test "a. EF counted exactly in pip, v4 and v6; A and B keep counting"
}

replace_in_place()
{
	# b. New programs, atomically in place.
	read -r qi qe < <(shown_progs "$R" "$R_IF2")
	qosctl_ns "$R" apply "$TMP/big" dev "$R_IF2" rate 100mbit >/dev/null
	check_err $? "apply big"
	read -r ni ne < <(shown_progs "$R" "$R_IF2")
	[ "$ne" != "$qe" ] && [ "$ni" != "$qi" ]
	check_err $? "programs kept ($ni $ne), not replaced"
	[ "$(list "$R_IF2" egress)" = "$ne $A $B" ] && [ "$(list "$R_IF2" ingress)" = "$ni" ]
	check_err $? "after replace: tcx egress '$(list "$R_IF2" egress)', want '$ne $A $B'"
	ef_pings
	check_err $? "after replace: $(ef_pings 2>&1)"
	log_test "b. re-apply with new programs: replaced in place, A and B intact"
}

failures_roll_back()
{
	# c. Failures roll back to what ran.
	read -r ni ne < <(shown_progs "$R" "$R_IF2")
	for step in load attach prune; do
		out=$(QOSCTL_FAIL=$step qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit 2>&1)
		[ $? -ne 0 ]
		check_err $? "QOSCTL_FAIL=$step: the apply succeeded"
		[ "$(shown_progs "$R" "$R_IF2")" = "$ni $ne" ] && [ "$(list "$R_IF2" egress)" = "$ne $A $B" ] &&
			[ "$(list "$R_IF2" ingress)" = "$ni" ]
		check_err $? "QOSCTL_FAIL=$step: '$(shown_progs "$R" "$R_IF2")' '$(list "$R_IF2" egress)'"
	done
	QOSCTL_FAULT=attach qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit >/dev/null 2>&1
	[ $? -eq 137 ]
	check_err $? "QOSCTL_FAULT=attach: not killed"
	read -r ki ke < <(shown_progs "$R" "$R_IF2")
	[ "$(list "$R_IF2" egress)" = "$ke $A $B" ] && [ "$(list "$R_IF2" ingress)" = "$ki" ]
	check_err $? "after the kill: '$ki $ke' '$(list "$R_IF2" egress)' '$(list "$R_IF2" ingress)'"
	ef_pings
	check_err $? "after the kill: $(ef_pings 2>&1)"
	log_test "c. failed and killed re-applies: one qosctl program per hook, A and B intact"
}

hook_set()
{
	# d. The hook set at tcx.
	qosctl_ns "$R" apply pip-5pct dev "$R_IF2" rate 100mbit >/dev/null
	check_err $? "apply pip-5pct"
	read -r pi pe < <(shown_progs "$R" "$R_IF2")
	[ "$pi" = - ] && [ -z "$(list "$R_IF2" ingress)" ] && [ "$(list "$R_IF2" egress)" = "$pe $A $B" ]
	check_err $? "pip-5pct: '$pi $pe' '$(list "$R_IF2" ingress)' '$(list "$R_IF2" egress)'"
	qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit >/dev/null
	check_err $? "apply pip-20pct again"
	read -r pi pe < <(shown_progs "$R" "$R_IF2")
	[ "$pi" != - ] && [ "$(list "$R_IF2" ingress)" = "$pi" ] &&
		[ "$(list "$R_IF2" egress)" = "$pe $A $B" ]
	check_err $? "pip-20pct: '$pi $pe' '$(list "$R_IF2" ingress)' '$(list "$R_IF2" egress)'"
	log_test "d. hook set 2 -> 1 -> 2 at tcx, A and B intact"
}

remove_keeps_others()
{
	# e. remove, and a fresh apply that fails.
	qosctl_ns "$R" remove dev "$R_IF2"
	check_err $? "remove"
	[ -z "$(list "$R_IF2" ingress)" ] && [ "$(list "$R_IF2" egress)" = "$A $B" ]
	check_err $? "after remove: '$(list "$R_IF2" ingress)' '$(list "$R_IF2" egress)'"
	[ "$(tc -n "$R" -j qdisc show dev "$R_IF2" | jq '[.[] | select(.kind == "clsact")] | length')" = 0 ]
	check_err $? "a clsact after remove"
	a0=$(count A)
	in_ns "$H1" ping -4 -n -q -c 5 -i 0.01 -W 2 "$H2_V4" >/dev/null
	[ $(($(count A) - a0)) -ge 5 ]
	check_err $? "A counted $(($(count A) - a0)) after remove, want >= 5"
	QOSCTL_FAIL=attach qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit >/dev/null 2>&1
	[ -z "$(list "$R_IF2" ingress)" ] && [ "$(list "$R_IF2" egress)" = "$A $B" ]
	check_err $? "after a failed fresh apply: '$(list "$R_IF2" ingress)' '$(list "$R_IF2" egress)'"
	log_test "e. remove and a failed fresh apply leave A and B alone"
}

place_last()
{
	# f. tcx-place last, kept, and remove --force.
	foreign C tcx_ingress "$R_IF1"
	check_err $? "attach C"
	C=$(prog_id C)
	qosctl_ns "$R" apply pip-20pct dev "$R_IF1" rate 100mbit tcx-place last >/dev/null
	check_err $? "apply tcx-place last"
	read -r li le < <(shown_progs "$R" "$R_IF1")
	[ "$(list "$R_IF1" ingress)" = "$C $li" ]
	check_err $? "tcx-place last: ingress '$(list "$R_IF1" ingress)', want '$C $li'"
	qosctl_ns "$R" apply "$TMP/big" dev "$R_IF1" rate 100mbit >/dev/null
	read -r li le < <(shown_progs "$R" "$R_IF1")
	[ "$(list "$R_IF1" ingress)" = "$C $li" ] &&
		[ "$(qosctl_ns "$R" show dev "$R_IF1" -j | jq -r .tcx_place)" = last ]
	check_err $? "re-apply: ingress '$(list "$R_IF1" ingress)', want '$C $li', place last"
	qosctl_ns "$R" remove dev "$R_IF1" --force
	check_err $? "remove --force"
	[ "$(list "$R_IF1" ingress)" = "$C" ] && [ -z "$(list "$R_IF1" egress)" ]
	check_err $? "after remove --force: '$(list "$R_IF1" ingress)' '$(list "$R_IF1" egress)'"
	log_test "f. tcx-place last after C, kept by a re-apply; remove --force leaves C"
}

attach_at_load()
{
	local gi ge a0 fam dst step

	# g. Killed after the loads: attached, unconfigured, passing on.
	QOSCTL_FAULT=load qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit >/dev/null 2>&1
	[ $? -eq 137 ]
	check_err $? "QOSCTL_FAULT=load: not killed"
	gi=$(list "$R_IF2" ingress)
	ge=$(list "$R_IF2" egress)
	ge=${ge%% *}
	[ -n "$gi" ] && [ "$(prog_name "$gi")" = qos_ingress ] &&
		[ "$(list "$R_IF2" egress)" = "$ge $A $B" ] && [ "$(prog_name "$ge")" = qos_egress ]
	check_err $? "after the loads: ingress '$gi', egress '$(list "$R_IF2" egress)'"
	[ "$(cfg_gen "$ge")" = 0 ] && [ "$(cfg_gen "$gi")" = 0 ]
	check_err $? "generation read: egress $(cfg_gen "$ge"), ingress $(cfg_gen "$gi"), want 0"
	for fam in 4 6; do
		dst=$H2_V4
		[ $fam = 6 ] && dst=$H2_V6
		a0=$(count A)
		read -r tx rx < <(in_ns "$H1" ping -$fam -n -q -c 5 -i 0.01 -W 2 -Q 0xb8 "$dst" |
				  ping_summary)
		[ "$rx" = 5 ] && [ $(($(count A) - a0)) -ge 5 ]
		check_err $? "IPv$fam unconfigured: $rx of $tx answered, A counted $(($(count A) - a0))"
	done
	qosctl_ns "$R" show dev "$R_IF2" >/dev/null 2>&1
	[ -z "$(list "$R_IF2" ingress)" ] && [ "$(list "$R_IF2" egress)" = "$A $B" ]
	check_err $? "rolled back: '$(list "$R_IF2" ingress)' '$(list "$R_IF2" egress)'"
	for step in load rules tree; do
		QOSCTL_FAIL=$step qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit \
			>/dev/null 2>&1
		[ $? -ne 0 ] && [ -z "$(list "$R_IF2" ingress)" ] &&
			[ "$(list "$R_IF2" egress)" = "$A $B" ]
		check_err $? "fresh, QOSCTL_FAIL=$step: '$(list "$R_IF2" ingress)' '$(list "$R_IF2" egress)'"
	done
	log_test "g. fresh: attached once loaded, unconfigured, passes on; killed or failed, rolled back"
}

ALL_TESTS="place_first counted replace_in_place failures_roll_back hook_set remove_keeps_others
	   attach_at_load place_last"
tests_run
exit $EXIT_STATUS
