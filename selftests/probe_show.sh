#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The SLA verdicts of continuous probes in `qosctl show` (text and -j), and
# the trust show puts in the files they are published in
# (Documentation/assurance.rst, "The verdict in qosctl show").
#
#   r                                              h2
#   $R_IF2 (pip-20pct, 100mbit) ------------------ $H2_IF  probe reflect :862
#   probe send --continuous dev $R_IF2:
#     met:  IPv4, sla pip delay-p99 $MET_P99 loss 0%
#     viol: IPv6, sla be delay-p99 1us (no round trip is that short)
#
# a. Both published: show -j has exactly the two, with their bounds,
#    loss 0, the p99 under the bound (met) or over it (violated), windows
#    >= 2; the text table has the same fields.
# b. The met probe killed (SIGKILL: its file stays): after more than 3 of
#    its windows it reads stale, not met; the violated one still violated.
# c. The violated probe stopped (SIGTERM): its file and directory are
#    gone, and so is its line.
# d. Planted files next to a valid copy of a probe's file: a symlink as the
#    file, a symlink as the probe's directory, a file owned by another
#    uid, a directory or a file writable by others, a FIFO: each refused
#    with a warning naming it, none shown; the valid copy is shown.
# (Wrong dev and state arguments are in probe.sh's table.)

source "$(dirname "$(readlink -f "$0")")/lib.sh"

if [ "$KSFT_MACHINE_SLOW" = yes ]; then
	MET_P99=200ms
else
	MET_P99=50ms
fi
MET_P99_NS=$(( ${MET_P99%ms} * 1000000 ))
STATE=/run/qosctl-probe

require_root
require_cmd jq nsenter
require_qosctl
require_qdisc htb

tmp_setup
# The probes' directories of this run, and nothing else under $STATE.
TAG=t$(mktemp -u XXXXXX)
defer "rm -rf $STATE/$TAG-*"

RET=0
topo_h1_r_h2
check_err $? "topology setup failed"
qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit
check_err $? "apply failed"
spawn_ns "$H2" refl "$QOSCTL" probe reflect
wait_listen "$H2" u 862
check_err $? "probe reflect did not start"

FILE=$(ns_cookie "$R")-$(ip -n "$R" -j link show dev "$R_IF2" | jq '.[0].ifindex').sla

show_j() { qosctl_ns "$R" show dev "$R_IF2" -j 2>"$TMP/show.err"; }
# sla PROBE FILTER: FILTER applied to PROBE's entry of show -j.
sla() { show_j | jq -r --arg p "$1" ".sla[] | select(.probe == \$p) | $2"; }

# wait_windows PROBE N: until PROBE has published N windows (10 s).
wait_windows()
{
	local i w

	for ((i = 0; i < 100; i++)); do
		w=$(sla "$1" .windows)
		[ "${w:-0}" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

test_published()
{
	local line

	RET=0
	show_j >"$TMP/s.json"
	check_err $? "show -j failed: $(cat "$TMP/show.err")"
	[ "$(jq -c '[.sla[].probe]' "$TMP/s.json")" = "[\"$TAG-met\",\"$TAG-viol\"]" ]
	check_err $? "show -j sla probes: $(jq -c '[.sla[].probe]' "$TMP/s.json")"
	jq -e --arg p "$TAG-met" --arg t "$H2_V4" --argjson b $MET_P99_NS '.sla[] |
		select(.probe == $p) | .target == $t and .family == "ipv4" and .class == "pip" and
		.delay_p99_bound_ns == $b and .loss_bound_pct == 0 and .loss_pct == 0 and
		.delay_p99_ns > 0 and .delay_p99_ns <= $b and .windows >= 2 and
		.verdict == "met"' "$TMP/s.json" >/dev/null
	check_err $? "met: $(jq -c --arg p "$TAG-met" '.sla[] | select(.probe == $p)' "$TMP/s.json")"
	jq -e --arg p "$TAG-viol" --arg t "$H2_V6" '.sla[] | select(.probe == $p) |
		.target == $t and .family == "ipv6" and .class == "be" and
		.delay_p99_bound_ns == 1000 and .loss_bound_pct == null and .loss_pct == 0 and
		.delay_p99_ns > 1000 and .windows >= 2 and .verdict == "violated"' \
		"$TMP/s.json" >/dev/null
	check_err $? "violated: $(jq -c --arg p "$TAG-viol" '.sla[] | select(.probe == $p)' "$TMP/s.json")"
	[ ! -s "$TMP/show.err" ]
	check_err $? "show -j warned: $(cat "$TMP/show.err")"

	qosctl_ns "$R" show dev "$R_IF2" >"$TMP/s.txt" 2>&1
	check_err $? "show failed"
	grep -q '^sla probe  *target  *family  *class  *rtt-p99 ms (bound)  *loss % (bound)  *windows  *age s  *verdict$' "$TMP/s.txt"
	check_err $? "no SLA header in show: $(cat "$TMP/s.txt")"
	line=$(grep "^$TAG-met " "$TMP/s.txt")
	[[ "$line" =~ ^$TAG-met\ +$H2_V4\ +ipv4\ +pip\ +[0-9]+\.[0-9]{3}\ \(${MET_P99%ms}\.000\)\ +0\.00\ \(0\.00\)\ +[0-9]+\ +[0-9]+\ met$ ]]
	check_err $? "show, met line: '$line'"
	line=$(grep "^$TAG-viol " "$TMP/s.txt")
	[[ "$line" =~ ^$TAG-viol\ +$H2_V6\ +ipv6\ +be\ +[0-9]+\.[0-9]{3}\ \(0\.001\)\ +0\.00\ \(-\)\ +[0-9]+\ +[0-9]+\ violated$ ]]
	check_err $? "show, violated line: '$line'"
	log_test "a met SLA (IPv4 pip) and a violated one (IPv6 be) in show and show -j"
}

test_stale()
{
	local wait_s

	RET=0
	cp "$STATE/$TAG-met/$FILE" "$TMP/met.sla"
	kill -KILL "$met"
	reap_pid "$met" 2>/dev/null
	# 3 windows of 20 x 10 ms plus the 1.01 s wait for replies.
	wait_s=$(jq -r '.window_ns * 3 / 1e9 + 0.5' "$TMP/met.sla")
	sleep "$wait_s"
	[ "$(sla "$TAG-met" .verdict)" = stale ]
	check_err $? "killed probe, after $wait_s s: $(sla "$TAG-met" 'tojson')"
	[ "$(sla "$TAG-met" '.age_ns > 3 * 1210000000')" = true ]
	check_err $? "stale age: $(sla "$TAG-met" .age_ns)"
	[ "$(sla "$TAG-viol" .verdict)" = violated ]
	check_err $? "the running probe: $(sla "$TAG-viol" 'tojson')"
	grep -q "^$TAG-met .* stale$" <(qosctl_ns "$R" show dev "$R_IF2")
	check_err $? "show does not say stale"
	log_test "a probe killed: stale after 3 of its windows, not met"
}

test_stopped()
{
	RET=0
	stop_pid "$viol"
	[ ! -e "$STATE/$TAG-viol" ]
	check_err $? "SIGTERM left $STATE/$TAG-viol: $(ls -la "$STATE/$TAG-viol" 2>&1)"
	[ "$(show_j | jq -c '[.sla[].probe]')" = "[\"$TAG-met\"]" ]
	check_err $? "after SIGTERM: $(show_j | jq -c '[.sla[].probe]')"
	log_test "a probe stopped: its file and directory gone, and its line"
}

# plant NAME: a probe directory NAME (0755, root's) for the planted files.
plant() { mkdir -m 0755 "$STATE/$TAG-$1"; }

test_refused()
{
	local want

	RET=0
	rm -rf "${STATE:?}/$TAG-met"
	plant ok && cp "$TMP/met.sla" "$STATE/$TAG-ok/$FILE"
	plant sym && ln -s "$TMP/met.sla" "$STATE/$TAG-sym/$FILE"
	ln -s "$STATE/$TAG-ok" "$STATE/$TAG-dirlink"
	plant foreign && cp "$TMP/met.sla" "$STATE/$TAG-foreign/$FILE" &&
		chown 12345 "$STATE/$TAG-foreign/$FILE"
	plant open && cp "$TMP/met.sla" "$STATE/$TAG-open/$FILE" && chmod 0777 "$STATE/$TAG-open"
	plant fifo && mkfifo "$STATE/$TAG-fifo/$FILE"
	plant gw && cp "$TMP/met.sla" "$STATE/$TAG-gw/$FILE" && chmod 0666 "$STATE/$TAG-gw/$FILE"
	check_err $? "planting failed"
	timeout 10 nsenter --net="/run/netns/$R" "$QOSCTL" show dev "$R_IF2" -j \
		>"$TMP/r.json" 2>"$TMP/r.err"
	check_err $? "show -j failed or hung: $(cat "$TMP/r.err")"
	[ "$(jq -c '[.sla[].probe]' "$TMP/r.json")" = "[\"$TAG-ok\"]" ]
	check_err $? "shown: $(jq -c '[.sla[].probe]' "$TMP/r.json")"
	sort "$TMP/r.err" | grep "$TAG" >"$TMP/r.err.sorted"
	want=$(sort <<EOF
qosctl: warning: $STATE/$TAG-dirlink: a symlink: refused
qosctl: warning: $STATE/$TAG-fifo/$FILE: not a regular file: refused
qosctl: warning: $STATE/$TAG-foreign/$FILE: owned by uid 12345, not 0: refused
qosctl: warning: $STATE/$TAG-gw/$FILE: mode 0666, writable by group or others: refused
qosctl: warning: $STATE/$TAG-open: mode 0777, writable by group or others: refused
qosctl: warning: $STATE/$TAG-sym/$FILE: a symlink: refused
EOF
)
	[ "$(cat "$TMP/r.err.sorted")" = "$want" ]
	check_err $? "warnings: $(diff <(echo "$want") "$TMP/r.err.sorted")"
	log_test "planted symlinks, foreign-owned, writable and FIFO files refused, a valid one shown"
}

# The probes of the tests, started once for all of them: the tests follow
# them through their life (published, killed, stopped, replaced by files
# planted), each test the next step. Run alone, a test takes the probes
# as setup leaves them.
spawn_ns "$R" met "$QOSCTL" probe send "$H2_V4" interval 10ms count 20 \
	sla pip delay-p99 $MET_P99 loss 0% --continuous --listen 127.0.0.1:9481 \
	dev "$R_IF2" state "$TAG-met"
spawn_ns "$R" viol "$QOSCTL" probe send "$H2_V6" interval 10ms count 20 \
	sla be delay-p99 1us --continuous --listen 127.0.0.1:9482 \
	dev "$R_IF2" state "$TAG-viol"
wait_windows "$TAG-met" 2
check_err $? "the met probe published no 2 windows: $(cat "$TMP/met.log")"
wait_windows "$TAG-viol" 2
check_err $? "the violated probe published no 2 windows: $(cat "$TMP/viol.log")"
log_setup "topology r - h2, pip-20pct on r toward h2, a reflector in h2, two probes"

ALL_TESTS="test_published test_stale test_stopped test_refused"
tests_run

exit $EXIT_STATUS
