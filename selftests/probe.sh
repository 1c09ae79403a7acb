#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# STAMP probes (qosctl probe send / probe reflect) through a router,
# IPv4 and IPv6 side by side.
#
#   h1                           r                             h2
#   $H1_IF ------------- $R_IF1       $R_IF2 ------------- $H2_IF
#   10.1.1.1/24           10.1.1.2     10.1.2.2              10.1.2.1/24
#   2001:db8:1::1/64      ::2          2001:db8:2::2         2001:db8:2::1/64
#                         (d, e: a     qosctl apply pip-20pct
#                         profile,     rate 100mbit
#                         rules)
#
#   probe send  ---- pip (EF 46), be (0), lbe (8) ---->  probe reflect :862
#   probe send  ---------------------------------------> stamp_reflector.py :8620
#   iperf3 -u   ---- 150 Mbit/s BE flood --------------> iperf3 -s
#
# a. Idle: loss exactly 0, every sequence number answered once, and the
#    DSCP the reflector received (CoS TLV, and its own per-DSCP count) is
#    the class's, per family.
# b. Interop: the Python reflector, written from the RFC apart from
#    qosctl's codec, answers every test packet (its reply's offsets are
#    checked by the sender, which drops a reply that does not carry back
#    its timestamp) and logs every sequence number with the class's DSCP.
# c. Under a BE flood through pip-20pct: PIP p99 below $PIP_P99_MS ms and
#    BE p99 above PIP's.
# d. A DSCP re-marked on the path (a rule with set-dscp on r's ingress
#    from h1) is reported by the sender as re-marked, with the new DSCP,
#    and the reply as sent back with it, not the class's (RP 1).
# e. A class reached by an IPv6 flow label rule is probed with that label:
#    the rule on r counts exactly its test packets.
# f. Wrong arguments: one line naming the word, exit 1.
# g. --continuous: after W windows of 20, /metrics says exactly 20 W sent,
#    0 lost, 20 W in the RTT histogram; an SLA met (IPv4) and one that
#    cannot be (IPv6) read 1 and 0; promtool check metrics accepts it,
#    and its families and types are those Documentation/metrics.rst lists.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

COUNT=200
INTERVAL=10ms
FLOOD_COUNT=300
FLOOD_RATE=150M
ATTEMPTS=3
LABEL=0x12345
if [ "$KSFT_MACHINE_SLOW" = yes ]; then
	PIP_P99_MS=5
else
	PIP_P99_MS=1
fi

require_root
require_cmd jq iperf3 python3 nsenter
require_qosctl
require_qdisc htb

HERE=$(dirname "$(readlink -f "$0")")
tmp_setup

RET=0
topo_h1_r_h2
check_err $? "topology setup failed"
qosctl_ns "$R" apply pip-20pct dev "$R_IF2" rate 100mbit
check_err $? "apply failed"
log_setup "topology h1 - r - h2, pip-20pct on r toward h2"

dst()
{
	[ "$1" = 4 ] && echo "$H2_V4" || echo "$H2_V6"
}

# send FAMILY OUT ARGS...: probe send from h1 to h2, JSON in OUT.
send()
{
	local fam=$1 out=$2

	shift 2
	in_ns "$H1" nice -n -20 "$QOSCTL" probe send "$(dst "$fam")" "$@" -j >"$out"
}

# stream JSON CLASS FILTER: FILTER applied to CLASS's stream.
stream()
{
	jq -r --arg c "$2" ".streams[] | select(.class == \$c) | $3" "$1"
}

declare -A DSCP=([pip]=46 [be]=0 [lbe]=8)

start_reflector()
{
	spawn_ns "$H2" refl "$QOSCTL" probe reflect -j
	wait_listen "$H2" u 862
}

test_idle()
{
	local fam cls f=$TMP/idle

	RET=0
	start_reflector
	check_err $? "probe reflect did not start: $(cat "$TMP/refl.log")"
	for fam in 4 6; do
		send $fam "$f$fam.json" interval $INTERVAL count $COUNT
		check_err $? "IPv$fam probe send failed"
		[ "$(jq -r '.family' "$f$fam.json")" = ipv$fam ]
		check_err $? "IPv$fam: family $(jq -r .family "$f$fam.json")"
		for cls in pip be lbe; do
			[ "$(stream "$f$fam.json" $cls '"\(.sent) \(.received) \(.lost) \(.duplicates) \(.rtt.samples)"')" = \
			  "$COUNT $COUNT 0 0 $COUNT" ]
			check_err $? "IPv$fam $cls: sent received lost duplicates samples: $(stream "$f$fam.json" $cls '"\(.sent) \(.received) \(.lost) \(.duplicates) \(.rtt.samples)"')"
			[ "$(stream "$f$fam.json" $cls '"\(.dscp) \(.reflector.dscp) \(.reflector.dscp_replies) \(.reflector.remarked) \(.reflector.cos_refused)"')" = \
			  "${DSCP[$cls]} ${DSCP[$cls]} $COUNT 0 0" ]
			check_err $? "IPv$fam $cls: dscp, reflector dscp, replies with it, re-marked, cos refused: $(stream "$f$fam.json" $cls '"\(.dscp) \(.reflector.dscp) \(.reflector.dscp_replies) \(.reflector.remarked) \(.reflector.cos_refused)"')"
			# r forwarded it once: the reflector saw TTL 63.
			[ "$(stream "$f$fam.json" $cls .reflector.ttl)" = 63 ]
			check_err $? "IPv$fam $cls: reflector TTL $(stream "$f$fam.json" $cls .reflector.ttl)"
			stream "$f$fam.json" $cls '.rtt | .min_ns > 0 and .min_ns <= .p50_ns and
				.p50_ns <= .p90_ns and .p90_ns <= .p99_ns and .p99_ns <= .max_ns' |
				grep -qx true
			check_err $? "IPv$fam $cls: RTT percentiles out of order: $(stream "$f$fam.json" $cls '.rtt | tojson')"
		done
		echo "INFO: IPv$fam idle RTT p50/p99 us:$(jq -r '.streams[] |
			" \(.class) \(.rtt.p50_ns / 1000 | floor)/\(.rtt.p99_ns / 1000 | floor)"' \
			"$f$fam.json" | tr -d '\n'), kernel timestamps tx $(stream "$f$fam.json" pip .tx_kernel_timestamps) rx $(stream "$f$fam.json" pip .rx_kernel_timestamps)"
	done
	stop_pid "$refl"
	# The reflector's own count, per family and DSCP received.
	for fam in 4 6; do
		jq -e --argjson n $COUNT --arg f ipv$fam '.[$f].packets == 3 * $n and
			.[$f].dscp == { "0": $n, "8": $n, "46": $n }' "$TMP/refl.log" >/dev/null
		check_err $? "reflector IPv$fam: $(jq -c --arg f ipv$fam '.[$f]' "$TMP/refl.log")"
	done
	log_test "idle, IPv4 and IPv6: loss 0, all answered once, reflector saw each class's DSCP"
}

test_interop()
{
	local fam cls ssid got f=$TMP/py

	RET=0
	spawn_ns "$H2" pyrefl python3 "$HERE/stamp_reflector.py" 8620 "$TMP/py.log"
	wait_listen "$H2" u 8620
	check_err $? "stamp_reflector.py did not start: $(cat "$TMP/pyrefl.log")"
	for fam in 4 6; do
		send $fam "$f$fam.json" port 8620 interval $INTERVAL count 50
		check_err $? "IPv$fam probe send to stamp_reflector.py failed"
		for cls in pip be lbe; do
			[ "$(stream "$f$fam.json" $cls '"\(.received) \(.lost) \(.reflector.dscp)"')" = "50 0 null" ]
			check_err $? "IPv$fam $cls: received lost reflector-dscp: $(stream "$f$fam.json" $cls '"\(.received) \(.lost) \(.reflector.dscp)"')"
			# Every sequence number once, with the class's DSCP.
			ssid=$(stream "$f$fam.json" $cls .ssid)
			got=$(awk -v f=$fam -v s="$ssid" '$1 == f && $2 == s { print $3, $4 }' "$TMP/py.log" |
			      sort -n | uniq -c | awk '{ print $1, $2, $3 }' | tr '\n' ,)
			[ "$got" = "$(seq 0 49 | awk -v d=${DSCP[$cls]} '{ print 1, $1, d }' | tr '\n' ,)" ]
			check_err $? "IPv$fam $cls: the Python reflector logged (count seq dscp): ${got:0:200}"
		done
	done
	stop_pid "$pyrefl"
	log_test "interop with a Python RFC 8762 reflector, IPv4 and IPv6"
}

# flood_once FAMILY: PIP and BE p99 (ns) under the flood in P99_PIP P99_BE.
flood_once()
{
	local fam=$1 flood

	spawn_ns "$H1" flood nice -n 19 iperf3 -"$fam" -u -b $FLOOD_RATE -t 30 -c "$(dst "$fam")"
	sleep 1.5
	send $fam "$TMP/flood$fam.json" class all interval $INTERVAL count $FLOOD_COUNT
	FLOOD_RC=$?
	kill -0 "$flood" 2>/dev/null || FLOOD_RC=1
	stop_pid "$flood"
	P99_PIP=$(stream "$TMP/flood$fam.json" pip .rtt.p99_ns)
	P99_BE=$(stream "$TMP/flood$fam.json" be .rtt.p99_ns)
}

test_flood()
{
	local fam attempt err bound=$((PIP_P99_MS * 1000000))

	start_reflector
	bg_ns "$H2" iperf_srv nice -n 19 iperf3 -s >"$TMP/iperf3-server.log" 2>&1
	wait_listen "$H2" t 5201
	for fam in 4 6; do
		RET=0
		for ((attempt = 1; attempt <= ATTEMPTS; attempt++)); do
			flood_once $fam
			echo "INFO: IPv$fam flood (try $attempt): p99 pip $P99_PIP ns, be $P99_BE ns, pip loss $(stream "$TMP/flood$fam.json" pip .lost)/$FLOOD_COUNT"
			err=
			[ $FLOOD_RC -eq 0 ] || err="probe send or the iperf3 flood failed"
			[ -z "$err" ] && [ "$(stream "$TMP/flood$fam.json" pip .lost)" = 0 ] ||
				err=${err:-"PIP lost $(stream "$TMP/flood$fam.json" pip .lost) test packets"}
			[ -z "$err" ] && [ "$P99_PIP" -lt $bound ] ||
				err=${err:-"PIP p99 $P99_PIP ns >= $bound ns"}
			[ -z "$err" ] && [ "$P99_BE" -gt "$P99_PIP" ] ||
				err=${err:-"BE p99 $P99_BE ns not above PIP's $P99_PIP ns"}
			[ -z "$err" ] && break
		done
		[ -z "$err" ]
		xfail_on_slow check_err $? "$err"
		log_test "IPv$fam under a $FLOOD_RATE BE flood: PIP p99 < $PIP_P99_MS ms, BE p99 > PIP p99"
	done
	stop_pid "$refl"
}

test_remark()
{
	local fam cls f=$TMP/remark

	RET=0
	start_reflector
	qosctl_ns "$R" apply pip-20pct dev "$R_IF1" rate 100mbit
	check_err $? "apply on $R_IF1 failed"
	qosctl_ns "$R" rule add dev "$R_IF1" name rm4 src $H1_V4/32 proto udp class be set-dscp af11 &&
		qosctl_ns "$R" rule add dev "$R_IF1" name rm6 src $H1_V6/128 proto udp class be \
			set-dscp af11
	check_err $? "rule add failed"
	for fam in 4 6; do
		send $fam "$f$fam.json" interval $INTERVAL count 20
		check_err $? "IPv$fam probe send failed"
		# The reflector did not send the replies back with the
		# class's DSCP (DSCP1), but with AF11, as they came: RP 1.
		for cls in pip be lbe; do
			[ "$(stream "$f$fam.json" $cls '"\(.received) \(.reflector.dscp) \(.reflector.remarked) \(.reflector.cos_refused)"')" = \
			  "20 10 20 20" ]
			check_err $? "IPv$fam $cls: received, reflector dscp, re-marked, cos refused: $(stream "$f$fam.json" $cls '"\(.received) \(.reflector.dscp) \(.reflector.remarked) \(.reflector.cos_refused)"')"
		done
	done
	grep -q 're-marked' <(in_ns "$H1" "$QOSCTL" probe send "$H2_V6" class pip count 2 interval 10ms)
	check_err $? "the table does not say re-marked"
	qosctl_ns "$R" remove dev "$R_IF1"
	check_err $? "remove on $R_IF1 failed"
	stop_pid "$refl"
	log_test "re-marking on r (set-dscp af11) reported by the sender, IPv4 and IPv6"
}

test_flowlabel()
{
	local hits

	RET=0
	start_reflector
	{
		cat "$HERE/../tc-profiles/pip-20pct"
		printf '\n[rule steer]\nflowlabel = %s\nclass = lbe\n' $LABEL
	} >"$TMP/fl-profile"
	qosctl_ns "$R" apply "$TMP/fl-profile" dev "$R_IF1" rate 100mbit
	check_err $? "apply of a flow label profile on $R_IF1 failed"
	send 6 "$TMP/fl.json" profile "$TMP/fl-profile" interval $INTERVAL count 30
	check_err $? "probe send failed"
	[ "$(stream "$TMP/fl.json" lbe '"\(.flowlabel) \(.received)"')" = "$((LABEL)) 30" ]
	check_err $? "lbe stream: flowlabel received: $(stream "$TMP/fl.json" lbe '"\(.flowlabel) \(.received)"')"
	[ "$(stream "$TMP/fl.json" pip .flowlabel)" = null ]
	check_err $? "pip stream has a flow label"
	hits=$(qosctl_ns "$R" rule list dev "$R_IF1" -j | jq -r '.[] | select(.name == "steer") | .packets')
	[ "$hits" = 30 ]
	check_err $? "rule steer matched $hits packets, expected 30"
	qosctl_ns "$R" remove dev "$R_IF1"
	stop_pid "$refl"
	log_test "IPv6 class reached by a flow label rule probed with that label"
}

# One wrong invocation per line, "=>", and the one line stderr must say.
test_errors()
{
	local line args want err pip20

	RET=0
	pip20=$("$QOSCTL" validate pip-20pct -j | jq -r .path)
	start_reflector
	while IFS= read -r line; do
		args=${line%% => *}
		want=${line#* => }
		eval "set -- $args"
		err=$(in_ns "$H2" "$QOSCTL" "$@" 2>&1 >/dev/null)
		[ $? -eq 1 ] && [ "$err" = "qosctl: $want" ]
		check_err $? "qosctl $args: $err"
	done <<EOF2
probe send => probe send: missing ADDRESS (the reflector's)
probe send 10.1.1 => probe send: '10.1.1': not an IPv4 or IPv6 address
probe send $H1_V4 clas pip => probe send: unexpected argument 'clas' (did you mean 'class'?)
probe send $H1_V4 class gold => probe send: class 'gold': not a class of $pip20 (or 'all')
probe send $H1_V4 interval 100us => probe send: interval '100us': expected a time from 1ms to 60s
probe send $H1_V4 count 100001 => probe send: count '100001': expected 1-100000
probe send $H1_V6 port 0 => probe send: port '0': expected 1-65535
probe send $H1_V6 profile nothing-like-it => probe send: profile 'nothing-like-it': no such profile (see 'qosctl list')
probe send $H1_V4 loss 1% => probe send: 'loss' needs 'sla CLASS'
probe send $H1_V4 sla gold delay-p99 1ms => probe send: sla 'gold': not a class probed
probe send $H1_V4 sla pip => probe send: sla pip: needs delay-p99 TIME or loss PERCENT
probe send $H1_V4 sla pip loss 5 => probe send: loss '5': expected a percentage, 0%-100%
probe send $H1_V4 sla pip delay-p99 2 => probe send: delay-p99 '2': expected a time (2ms, 500us)
probe send $H1_V4 --continuous => probe send: --continuous and --listen ADDRESS go together
probe send $H1_V4 --continuous --listen :9479 -j => probe send: --continuous serves its metrics, -j is for a single run
probe send $H1_V4 sla pip loss 1% dev nosuchdev0 => probe send: dev nosuchdev0: publishes the verdict of --continuous with sla CLASS
probe send $H1_V4 --continuous --listen 127.0.0.1:9479 dev nosuchdev0 => probe send: dev nosuchdev0: publishes the verdict of --continuous with sla CLASS
probe send $H1_V4 state x => probe send: state x: names where dev IFACE publishes; dev is missing
probe send $H1_V4 sla pip loss 1% --continuous --listen 127.0.0.1:9479 dev nosuchdev0 state a/b => probe send: state 'a/b': expected 1-63 of letters, digits, '.', '_', ':' or '-', not starting with '.'
probe send $H1_V4 sla pip loss 1% --continuous --listen 127.0.0.1:9479 dev nosuchdev0 => probe send: dev nosuchdev0: No such device
probe reflect listen 2001:db8::/64 => probe reflect: listen '2001:db8::/64': not an IPv4 or IPv6 address
probe reflect listen $H2_V6 => probe reflect: listen $H2_V6: Address already in use
probe reflect --dry-run => probe reflect: does not take --dry-run (see 'qosctl help probe reflect')
EOF2
	stop_pid "$refl"
	log_test "wrong arguments: one line naming the word, exit 1"
}

# metric FILE NAME CLASS: the value of NAME's series for CLASS.
metric()
{
	awk -v n="$2" -v c="class=\"$3\"" 'index($0, n "{") == 1 && index($0, c) { print $2 }' "$1"
}

test_continuous()
{
	local fam port m w cls sla slacls want n

	RET=0
	start_reflector
	for fam in 4 6; do
		port=947$fam m=$TMP/metrics$fam
		if [ $fam = 4 ]; then
			slacls=pip sla="sla pip delay-p99 ${PIP_P99_MS}ms loss 0%" want=1
		else
			slacls=be sla="sla be delay-p99 1us" want=0
		fi
		spawn_ns "$H1" cont$fam "$QOSCTL" probe send "$(dst $fam)" interval $INTERVAL count 20 \
			$sla --continuous --listen 127.0.0.1:$port
		# Three windows of 20 test packets every 10 ms: under a second.
		for ((n = 0; n < 50; n++)); do
			in_ns "$H1" curl -sf "http://127.0.0.1:$port/metrics" >"$m"
			w=$(awk '/^qosctl_probe_windows_total/ { print $2 }' "$m")
			[ "${w:-0}" -ge 3 ] && break
			sleep 0.2
		done
		eval stop_pid \$cont$fam
		[ "${w:-0}" -ge 3 ]
		check_err $? "IPv$fam: ${w:-no} windows after 10 s: $(cat "$TMP/cont$fam.log")"
		grep -q "^qosctl_probe_windows_total{target=\"$(dst $fam)\",family=\"ipv$fam\"} $w\$" "$m"
		check_err $? "IPv$fam: windows_total series: $(grep windows_total "$m")"
		for cls in pip be lbe; do
			[ "$(metric "$m" qosctl_probe_sent_total $cls)" = $((20 * w)) ] &&
				[ "$(metric "$m" qosctl_probe_lost_total $cls)" = 0 ] &&
				[ "$(metric "$m" qosctl_probe_remarked_total $cls)" = 0 ] &&
				[ "$(metric "$m" qosctl_probe_rtt_seconds_count $cls)" = $((20 * w)) ]
			check_err $? "IPv$fam $cls after $w windows: sent $(metric "$m" qosctl_probe_sent_total $cls), lost $(metric "$m" qosctl_probe_lost_total $cls), rtt count $(metric "$m" qosctl_probe_rtt_seconds_count $cls)"
			grep -q "^qosctl_probe_rtt_seconds_bucket{.*class=\"$cls\",le=\"+Inf\"} $((20 * w))\$" "$m"
			check_err $? "IPv$fam $cls: +Inf bucket is not every reply"
		done
		# One series, the SLA's class's.
		n=$(grep '^qosctl_probe_sla_met' "$m")
		[ "$(wc -l <<<"$n")" = 1 ] && [ "$(metric "$m" qosctl_probe_sla_met $slacls)" = $want ]
		check_err $? "IPv$fam '$sla': $n, expected $want for $slacls"
		# The families and types are those metrics.rst lists.
		diff <(awk '/^# TYPE/ { print $3, $4 }' "$m" | sort) \
			<(awk '/^``qosctl_probe_/ && $2 ~ /^(counter|gauge|histogram)$/ { gsub(/``/, "", $1); print $1, $2 }' \
			  "$HERE/../Documentation/metrics.rst" | sort) >"$TMP/famdiff"
		check_err $? "IPv$fam: families, /metrics < > metrics.rst: $(cat "$TMP/famdiff")"
		if command -v promtool >/dev/null; then
			promtool check metrics <"$m" >"$TMP/promtool" 2>&1
			check_err $? "IPv$fam: promtool: $(head -3 "$TMP/promtool")"
		fi
	done
	stop_pid "$refl"
	command -v promtool >/dev/null || echo "INFO: promtool not installed: format not checked"
	log_test "--continuous: counters, histogram, SLA met and not met, IPv4 and IPv6"
}

ALL_TESTS="test_errors test_idle test_interop test_continuous test_flood test_remark test_flowlabel"
tests_run

exit $EXIT_STATUS
