#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Download shaping: what ARRIVES on r's interface toward h2 is shaped through
# the IFB qosctl creates for it, with the profile's classes, IPv4 and IPv6.
#
#   h1                           r                             h2
#   $H1_IF ------------- $R_IF1       $R_IF2 ------------- $H2_IF
#   10.1.1.1/24           10.1.1.2     10.1.2.2              10.1.2.1/24
#   2001:db8:1::1/64      ::2          2001:db8:2::2         2001:db8:2::1/64
#                                      qosctl apply pip-20pct
#                                      rate 1gbit ingress-rate 20mbit:
#                                      ingress BPF -> redirect -> qifb<ifindex>
#                                      (HTB at 20 Mbit/s) -> back into r
#
#   iperf3 -s  <---------- 12 x 5 Mbit/s BE UDP flood -------- iperf3 -u -P 12
#   irtt server <--------- PIP (DSCP 46) probes --------------- irtt client
#
# a. The rate delivered to h1 (its interface's received bytes over a
#    measured interval) is within 2% (5% slow) of the ingress rate, and
#    the IFB's BE class has a backlog at the end (the flood was above the
#    rate).
# b. PIP RTT p50 and p90 under the flood stay within 1 ms of idle. Under
#    KSFT_MACHINE_SLOW the check is on counters instead: the IFB's PIP class
#    dropped nothing and the probes lost nothing while BE had a backlog.
# c. The IFB's counters appear as direction ingress in stats -j and in
#    the Prometheus text, show prints the ingress rate.
# d. A re-apply keeps the IFB; a profile without ingress-rate, and remove,
#    delete it; so does remove --force when another program has taken
#    qosctl's egress slot (the ingress program's configuration names the
#    IFB).
# e. A device holding the IFB's name that qosctl did not create is refused
#    and left alone; a failed apply (QOSCTL_FAIL) and a killed one
#    (QOSCTL_FAULT, recovered by the next command) leave no IFB and the
#    interface exactly as it was.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

IN_RATE=20mbit
IN_BPS=20000000
FLOOD_RATE=5M		# per stream
FLOOD_STREAMS=12
MEASURE_S=4
PROBE_INTERVAL=10ms
PROBE_DURATION=4s
MIN_SAMPLES=300
ATTEMPTS=2
PIP_SLACK_MS=1
# The rate is measured from counters over a measured interval; an emulated
# machine (KSFT_MACHINE_SLOW) gets 5%, as net_linklayer.sh.
RATE_TOL=2
[ "$KSFT_MACHINE_SLOW" = yes ] && RATE_TOL=5

# pip_probe FAMILY TAG: irtt from h2 to h1 with DSCP 46, through the IFB.
pip_probe()
{
	local dst=$H1_V4

	[ "$1" = 6 ] && dst="[$H1_V6]"
	in_ns "$H2" nice -n -20 irtt client -Q -i $PROBE_INTERVAL -d $PROBE_DURATION \
		--dscp=0xb8 -o "$TMP/pip-$2.json" "$dst" >/dev/null 2>&1
}

# rx_rate SECONDS: "bit/s error" received by h1's interface over SECONDS,
# from its byte counter, each read stamped by the shell that reads it: one
# bash in h1's namespace (ip netns exec mounts h1's /sys), reading with
# builtins only, so nothing forks between a stamp and its read. The error
# is the time the reads took, as a share of the interval.
rx_rate()
{
	ip netns exec "$H1" bash -c '
		f=/sys/class/net/$1/statistics/rx_bytes
		a0=$EPOCHREALTIME; read -r n0 <"$f"; b0=$EPOCHREALTIME
		sleep "$2"
		a1=$EPOCHREALTIME; read -r n1 <"$f"; b1=$EPOCHREALTIME
		echo "$a0 $b0 $n0 $a1 $b1 $n1"' _ "$H1_IF" "$1" |
	awk '{ t = ($4 + $5) / 2 - ($1 + $2) / 2
	       printf "%.0f %.6f", ($6 - $3) * 8 / t, (($2 - $1) + ($5 - $4)) / 2 / t }'
}

# ifb_class JSON CLASS FIELD: a qdisc counter of CLASS's queue on the IFB.
ifb_class()
{
	jq -r --arg c "$2" --arg k "$3" \
		'.classes[] | select(.name == $c) | .ingress_qdisc[$k] // -1' <<<"$1"
}

# rate_ok BPS: within RATE_TOL% of the ingress rate.
rate_ok()
{
	awk -v b="$1" -v r=$IN_BPS -v t=$RATE_TOL \
		'BEGIN { exit !(b >= r * (1 - t / 100) && b <= r * (1 + t / 100)) }'
}

# rate_and_rtt FAMILY: idle PIP probes, then under the flood the delivered
# rate and the PIP probes side by side.
rate_and_rtt()
{
	local fam=$1 name dst=$H1_V4 attempt flood probe bps rerr before after err
	local n u50 u90 uloss l50 l90 lloss pip_drop be_backlog x

	name=$(fam_name "$fam")
	[ "$fam" = 6 ] && dst=$H1_V6
	for ((attempt = 1; attempt <= ATTEMPTS; attempt++)); do
		err=
		pip_probe "$fam" "u$fam" || err="irtt failed without load"
		before=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
		# Many sockets: a UDP sender is held back by its own send
		# buffer while its packets wait in the IFB (the skb keeps its
		# socket across veth), so one socket alone keeps too little
		# queued to ride out a stall of the sending process.
		spawn_ns "$H2" flood iperf3 -"$fam" -u -P $FLOOD_STREAMS -b $FLOOD_RATE -t 20 -c "$dst"
		sleep 1.5
		pip_probe "$fam" "l$fam" & probe=$!
		read -r bps rerr <<<"$(rx_rate $MEASURE_S)"
		after=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
		wait $probe || err=${err:-"irtt failed under load"}
		kill -0 "$flood" 2>/dev/null ||
			err=${err:-"the iperf3 flood ended early: $(tail -1 "$TMP/flood.log")"}
		stop_pid "$flood"

		# The stamps' error must stay well inside the tolerance.
		awk -v e="$rerr" 'BEGIN { exit !(e <= 0.002) }' ||
			err=${err:-"reading the counters took too long (error $rerr of the interval)"}
		read -r n u50 u90 uloss <<<"$(rtt_summary "$TMP/pip-u$fam.json" 0.9 || echo 0 -1 -1 100)"
		read -r x l50 l90 lloss <<<"$(rtt_summary "$TMP/pip-l$fam.json" 0.9 || echo 0 -1 -1 100)"
		pip_drop=$(( $(ifb_class "$after" pip drops) - $(ifb_class "$before" pip drops) ))
		be_backlog=$(ifb_class "$after" be backlog_packets)
		echo "INFO: $name try $attempt: delivered $bps bit/s over $MEASURE_S s;" \
		     "PIP p50/p90 idle $u50/$u90 ms ($n, $uloss%), flood $l50/$l90 ms ($x, $lloss%);" \
		     "IFB pip drops $pip_drop, be backlog $be_backlog packets"
		[ "$n" -ge $MIN_SAMPLES ] && [ "$x" -ge $MIN_SAMPLES ] ||
			err=${err:-"too few PIP samples ($n idle, $x under load)"}
		if [ "$KSFT_MACHINE_SLOW" != yes ]; then
			awk -v a="$u50" -v b="$l50" -v c="$u90" -v d="$l90" -v s=$PIP_SLACK_MS \
				'BEGIN { exit !(b <= a + s && d <= c + s) }' ||
				err=${err:-"PIP p50/p90 under the flood $l50/$l90 ms > idle $u50/$u90 ms + $PIP_SLACK_MS ms"}
		fi
		rate_ok "$bps" ||
			err=${err:-"delivered $bps bit/s, not within $RATE_TOL% of $IN_BPS"}
		[ "$be_backlog" -gt 0 ] ||
			err=${err:-"the IFB's BE class had no backlog: the flood did not exceed the rate"}
		[ -z "$err" ] && break
		[ $attempt -lt $ATTEMPTS ] && echo "INFO: $name try $attempt: $err"
	done

	RET=0
	rate_ok "$bps"
	check_err $? "delivered $bps bit/s, not within $RATE_TOL% of $IN_BPS"
	[ "$be_backlog" -gt 0 ]
	check_err $? "the IFB's BE class had no backlog: the flood did not exceed the rate"
	log_test "$name ${FLOOD_STREAMS}x$FLOOD_RATE flood: delivered rate within $RATE_TOL% of ingress-rate $IN_RATE"

	RET=0
	if [ "$KSFT_MACHINE_SLOW" = yes ]; then
		[ "$pip_drop" -eq 0 ] && [ "$lloss" = 0 ] && [ "$be_backlog" -gt 0 ]
		check_err $? "PIP dropped $pip_drop on the IFB, probes lost $lloss%, BE backlog $be_backlog"
		[ -z "$err" ]
		check_err $? "$err"
		log_test "$name PIP under the flood: no drop on the IFB, no probe lost (slow machine)"
	else
		[ -z "$err" ]
		check_err $? "$err"
		[ "$pip_drop" -eq 0 ]
		check_err $? "the IFB's PIP class dropped $pip_drop packets"
		log_test "$name PIP p50/p90 under the flood <= idle + $PIP_SLACK_MS ms"
	fi
}

ifb_name()
{
	echo "qifb$(ip -n "$R" -j link show dev "$R_IF2" | jq '.[0].ifindex')"
}

ifb_index()
{
	ip -n "$R" -j link show dev "$IFB" 2>/dev/null | jq -r '.[0].ifindex // empty'
}

# dev_state: everything of r's $R_IF2 an apply may change, and the IFB.
dev_state()
{
	tc -n "$R" -j qdisc show dev "$R_IF2"
	tc -n "$R" -j filter show dev "$R_IF2" ingress
	tc -n "$R" -j filter show dev "$R_IF2" egress
	ip -n "$R" -j link show type ifb | jq -c '[.[] | {ifname, ifindex}]'
}

outputs()
{
	local j p

	RET=0
	j=$(qosctl_ns "$R" stats dev "$R_IF2" -j)
	check_err $? "stats -j failed"
	[ "$(jq -r '.ingress_rate_bps' <<<"$j")" = $IN_BPS ]
	check_err $? "stats -j: ingress_rate_bps $(jq -r .ingress_rate_bps <<<"$j"), not $IN_BPS"
	[ "$(jq -r '.ingress_qdisc.sent_packets' <<<"$j")" -gt 0 ] &&
		[ "$(jq -r '[.classes[] | .ingress_qdisc.sent_packets] | add' <<<"$j")" -gt 0 ]
	check_err $? "stats -j: no ingress qdisc counters"
	qosctl_ns "$R" show dev "$R_IF2" | grep -q "^download shaping: ingress-rate $IN_RATE through $IFB$"
	check_err $? "show does not print the ingress rate and the IFB"
	p=$(qosctl_ns "$R" stats dev "$R_IF2" --prometheus)
	grep -q "^qosctl_qdisc_class_sent_bytes_total{.*direction=\"ingress\"" <<<"$p" &&
		grep -q "^qosctl_qdisc_class_sent_bytes_total{.*direction=\"egress\"" <<<"$p"
	check_err $? "the Prometheus text has no direction=\"ingress\" qdisc class series"
	log_test "ingress-rate and the IFB's counters in show, stats -j, Prometheus"
}

lifecycle()
{
	local idx out before

	RET=0
	idx=$(ifb_index)
	out=$(qosctl_ns "$R" apply pip-5pct dev "$R_IF2" rate 1gbit ingress-rate 30mbit 2>&1)
	check_err $? "re-apply: $out"
	[ "$(ifb_index)" = "$idx" ]
	check_err $? "re-apply: $IFB is ifindex $(ifb_index), was $idx"
	tc -n "$R" class show dev "$IFB" classid 1:1 | grep -q " rate 30Mbit ceil 30Mbit "
	check_err $? "re-apply: the IFB's link class is not at 30mbit"
	[[ "$out" == *"; downloads shaped at 30mbit through $IFB" ]]
	check_err $? "re-apply: the summary does not name the ingress rate and $IFB: $out"
	log_test "re-apply with another ingress-rate keeps $IFB, changes its tree"

	RET=0
	out=$(qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 1gbit 2>&1)
	check_err $? "apply without ingress-rate: $out"
	[ -z "$(ifb_index)" ]
	check_err $? "$IFB still exists"
	log_test "a profile without ingress-rate deletes $IFB"

	RET=0
	out=$(qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 1gbit ingress-rate $IN_RATE 2>&1)
	check_err $? "apply: $out"
	[ -n "$(ifb_index)" ]
	check_err $? "$IFB not created"
	out=$(qosctl_ns "$R" remove dev "$R_IF2" 2>&1)
	check_err $? "remove: $out"
	[ -z "$(ifb_index)" ]
	check_err $? "$IFB still exists after remove"
	[ "$(dev_state)" = "$STATE_CLEAN" ]
	check_err $? "remove did not leave the interface as it was before the first apply"
	log_test "remove deletes $IFB and leaves the interface as before"

	if ! hook_obj; then
		log_test_skip "remove --force deletes $IFB" "no tc object and no clang"
		return
	fi
	RET=0
	out=$(qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 1gbit ingress-rate $IN_RATE 2>&1)
	check_err $? "apply: $out"
	tc -n "$R" filter replace dev "$R_IF2" egress pref 81 handle 0x51 bpf da obj "$HOOK" sec tc
	check_err $? "replacing qosctl's egress program"
	out=$(qosctl_ns "$R" remove dev "$R_IF2" 2>&1)
	check_fail $? "remove of a broken slot succeeded: $out"
	out=$(qosctl_ns "$R" remove --force dev "$R_IF2" 2>&1)
	check_err $? "remove --force: $out"
	[ -z "$(ifb_index)" ]
	check_err $? "$IFB still exists after remove --force"
	[ "$(dev_state)" = "$STATE_CLEAN" ]
	check_err $? "remove --force did not leave the interface as it was before the first apply"
	log_test "remove --force of a broken slot deletes $IFB, the interface as before"
}

foreign()
{
	local idx out before

	RET=0
	ip -n "$R" link add "$IFB" type ifb
	idx=$(ifb_index)
	before=$(dev_state)
	out=$(qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 1gbit ingress-rate $IN_RATE 2>&1)
	[ $? -ne 0 ]
	check_err $? "apply over a foreign $IFB succeeded"
	grep -q "$IFB.*not created by qosctl" <<<"$out"
	check_err $? "unclear error: $out"
	[ "$(ifb_index)" = "$idx" ] && [ "$(dev_state)" = "$before" ]
	check_err $? "the foreign $IFB or the interface changed"
	ip -n "$R" link del "$IFB"
	log_test "a foreign $IFB is refused and left alone"
}

# faults PREV: QOSCTL_FAIL and QOSCTL_FAULT at the steps around the IFB,
# over no profile (PREV empty) or over a profile without ingress-rate.
faults()
{
	local prev=$1 step before out rc what=${1:-no profile}

	[ -n "$prev" ] && qosctl_ns "$R" apply $prev dev "$R_IF2" rate 1gbit >/dev/null
	before=$(dev_state)
	RET=0
	for step in tree ifb cfg attach prune; do
		out=$(QOSCTL_FAIL=$step qosctl_ns "$R" apply pip-5pct dev "$R_IF2" rate 1gbit \
			ingress-rate $IN_RATE 2>&1)
		[ $? -ne 0 ] && grep -q "injected failure at $step" <<<"$out"
		check_err $? "QOSCTL_FAIL=$step: $out"
		[ "$(dev_state)" = "$before" ]
		check_err $? "QOSCTL_FAIL=$step: the interface or the IFBs changed"
	done
	log_test "failed apply over $what: no IFB, the interface as it was"

	RET=0
	for step in ifb cfg attach prune commit; do
		QOSCTL_FAULT=$step qosctl_ns "$R" apply pip-5pct dev "$R_IF2" rate 1gbit \
			ingress-rate $IN_RATE >/dev/null 2>&1
		rc=$?
		[ $rc -eq 137 ]
		check_err $? "QOSCTL_FAULT=$step: apply exited $rc, not by SIGKILL"
		qosctl_ns "$R" show dev "$R_IF2" >/dev/null 2>&1
		[ "$(dev_state)" = "$before" ]
		check_err $? "QOSCTL_FAULT=$step: after the recovery the interface or the IFBs changed"
	done
	log_test "apply killed over $what: the next command leaves no IFB, the interface as it was"
	[ -n "$prev" ] && qosctl_ns "$R" remove dev "$R_IF2" >/dev/null
}

# have_ifb: can an IFB be created? Probed in a throw-away namespace.
rate_and_rtt_v4()
{
	rate_and_rtt 4
}

rate_and_rtt_v6()
{
	rate_and_rtt 6
}

faults_fresh()
{
	faults ""
}

faults_applied()
{
	faults pip-20pct
}

have_ifb()
{
	local ns=probe-$(mktemp -u XXXXXX) rc

	ip netns add "$ns" || return 1
	ip -n "$ns" link add qprobe type ifb 2>/dev/null
	rc=$?
	ip netns del "$ns"
	return $rc
}

require_root
require_cmd irtt iperf3 jq tc ip nsenter awk
require_qosctl
require_qdisc htb
have_ifb || { echo "SKIP: the kernel has no IFB device (CONFIG_IFB)"; exit $ksft_skip; }

tmp_setup

# pip-20pct with download shaping in the profile, and a BE queue deep
# enough (250 ms) that a flood sender stalled by a busy machine does not
# let the IFB run dry while the delivered rate is measured.
PROFILE=$TMP/pip-20pct-in.conf
sed "s/^\[profile\]$/[profile]\ningress-rate = $IN_RATE\nleaf-delay = 250ms/" \
	"$(dirname "$(readlink -f "$0")")/../tc-profiles/pip-20pct" >"$PROFILE"

RET=0
topo_h1_r_h2
check_err $? "topology setup failed"
bg_ns "$H1" irtt_srv nice -n -20 irtt server -b "$H1_V4,[$H1_V6]" >"$TMP/irtt.log" 2>&1
bg_ns "$H1" iperf_srv iperf3 -s >"$TMP/iperf3-server.log" 2>&1
wait_listen "$H1" u 2112 && wait_listen "$H1" t 5201
check_err $? "irtt or iperf3 server in h1 did not start"
log_setup "topology h1 - r - h2, irtt and iperf3 servers in h1"
IFB=$(ifb_name)
STATE_CLEAN=$(dev_state)

RET=0
out=$(qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 1gbit ingress-rate $IN_RATE --dry-run 2>&1)
check_err $? "dry-run: $out"
grep -q "^ip link add $IFB type ifb" <<<"$out" &&
	grep -q "^tc class replace dev $IFB parent 1: classid 1:1 htb rate ${IN_BPS}bit" <<<"$out"
check_err $? "dry-run does not print $IFB and its tree"
[ -z "$(ifb_index)" ]
check_err $? "dry-run created $IFB"
log_test "dry-run prints $IFB and its tree, creates nothing"

# Before Linux 6.4 an IFB drops what BPF redirects to it: qosctl refuses
# ingress-rate there, and changes nothing.
IFS=. read -r kmaj kmin _ <<<"$(uname -r)"
if [ "$kmaj" -lt 6 ] || { [ "$kmaj" -eq 6 ] && [ "$kmin" -lt 4 ]; }; then
	RET=0
	out=$(qosctl_ns "$R" apply "$PROFILE" dev "$R_IF2" rate 1gbit 2>&1)
	check_fail $? "apply with ingress-rate succeeded on $(uname -r)"
	grep -q "^qosctl: apply: ingress-rate: kernel $(uname -r) drops what BPF redirects to an IFB (fixed in Linux 6.4); download shaping needs 6.4 or later$" <<<"$out"
	check_err $? "not the refusal expected: $out"
	[ "$(dev_state)" = "$STATE_CLEAN" ] && [ -z "$(ifb_index)" ]
	check_err $? "a refused apply changed the interface or created $IFB"
	log_test "kernel $(uname -r) < 6.4: ingress-rate refused, nothing changed"
	[ $EXIT_STATUS -eq 0 ] || exit $ksft_fail
	echo "SKIP: the rest needs Linux 6.4 (bpf_redirect to an IFB)"
	exit $ksft_skip
fi

RET=0
out=$(qosctl_ns "$R" apply "$PROFILE" dev "$R_IF2" rate 1gbit 2>&1) &&
	ip -n "$R" -j link show dev "$IFB" | jq -e '.[0].flags | index("UP")' >/dev/null
check_err $? "apply, or $IFB missing or not up: $out"
log_setup "apply of a profile with ingress-rate = $IN_RATE creates $IFB, up"

ALL_TESTS="rate_and_rtt_v4 rate_and_rtt_v6 outputs lifecycle foreign faults_fresh faults_applied"
tests_run

exit $EXIT_STATUS
